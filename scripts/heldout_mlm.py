"""Did the model learn? Held-out masked-LM accuracy against the unigram baseline (recipes/heldout_mlm.py).

Usage:
    python scripts/heldout_mlm.py HF_DIR HDF5_DIR [--mask-share 0.15] [--max-rows 2000] [--device cuda]
    python -m recipes.heldout_mlm HF_DIR HDF5_DIR     # the same entry

A thin entry: the work is in the installed `recipes` package.
"""
import sys

from recipes.heldout_mlm import main

if __name__ == "__main__":
    sys.exit(main())
