"""The rules that the pipeline, the tokenization layer and the trainer all need, written once:
atomic writes (common/atomic.py) and the operating system's faults in words (common/os_errors.py);
figures the console, report.html and the model card all write (common/numbers.py: the context
gain with its sign, the held-out accuracy against the unigram baseline); a time budget read the
same by the trainer and `make pretrain` (common/budget.py); the held-out measure's file, written by
`make pretrain` (recipes) and read by the report and the model card (common/heldout_file.py).

`common` imports nothing of the project; pipeline, vocab and trainer may import it.
"""
