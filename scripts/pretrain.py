"""`make pretrain`: one command from a Wikipedia dump to an evaluated model (recipes/pretrain.py).

Usage:
    python scripts/pretrain.py --lang uk --dump ../shared/data/ukwiki.xml.xz --budget 30m
    python scripts/pretrain.py --lang hu --dump data/sample/huwiki-sample.xml.bz2 --budget 1m
    python -m recipes.pretrain --help         # the same entry; installed: wiki2bert-pretrain --help

A thin entry: the work is in the installed `recipes` package.
"""
import sys

from recipes.pretrain import main

if __name__ == "__main__":
    sys.exit(main())
