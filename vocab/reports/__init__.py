"""A vocabulary measured on held-out text (quality.py: the vocab report) and two tokenizers side
by side on the same words (compare.py: `pipeline vocab --compare`)."""
