"""What every room of the tokenization layer shares (vocab/__init__.py): the vocab.txt layout and
errors, normaliser, segmenters, WordPiece, word starts, tokenizer.json reading, fingerprint."""
