"""`make demo`: the shipped Hungarian sample to a small evaluated ModernBERT (recipes/demo.py).

Usage:
    python scripts/demo.py                          # what `make demo` runs (data in data/demo/)
    python scripts/demo.py --only pipeline          # the data part only
    python -m recipes.demo --help                   # the same entry

A thin entry: the work is in the installed `recipes` package.
"""
import sys

from recipes.demo import main

if __name__ == "__main__":
    sys.exit(main())
