"""The tokenization layer, and how a vocabulary is made for a language, in rooms by job (each
imports only the rooms above it in this list):

- core/: what every room shares: BERT's vocab.txt layout and the errors (layout), the
  normaliser one character at a time, the word segmenters for scripts without spaces, the fast
  WordPiece and BERT's Hugging Face tokenizer, word starts, reading a tokenizer.json, the Rust
  tokenizer's encoder, pieces laid over words, the fingerprint.
- training/: the tools a vocabulary is trained with: the seeded sample and its words,
  sentencepiece, the conversion to WordPiece, the byte-level BPE trainer, a build's settings.
- kinds/: the tokenizer kinds, one interface (base.py) and one registry (__init__.py): how each
  kind is found, loaded, trained, saved, fingerprinted, how it splits words and spells pieces.
- reports/: a vocabulary measured on held-out text (quality), two side by side (compare).
- joint/: the joint vocabulary of several languages: its sample and its report.
"""
