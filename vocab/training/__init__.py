"""The tools a vocabulary is trained with (the kinds in vocab/kinds/ decide which): the seeded
sample and its words, sentencepiece, the conversion to WordPiece, byte-level BPE, the settings."""
