"""The rules that the pipeline, the tokenization layer and the trainer all need, written once:
atomic writes (common/atomic.py) and the operating system's faults in words (common/os_errors.py).

`common` imports nothing of the project; pipeline, vocab and trainer may import it.
"""
