"""The joint vocabulary of several languages: its sample (sample.py: shares smoothed by an
exponent, exactly that many sentences of each language) and its report on the screen (report.py).
`pipeline joint-vocab` (pipeline/stages/joint_vocab.py) trains the kind on that sample.
"""
