"""Fill-mask with an exported model, through Hugging Face transformers (recipes/fill_mask.py).

Usage:
    python scripts/fill_mask.py HF_DIR "Bartók Béla magyar [[zeneszerző]], zongoraművész." [--top_k 5]
    python -m recipes.fill_mask HF_DIR "Budapest Magyarország [MASK]."     # the same entry

A thin entry: the work is in the installed `recipes` package.
"""
import sys

from recipes.fill_mask import main

if __name__ == "__main__":
    sys.exit(main())
