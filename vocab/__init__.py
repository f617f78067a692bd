"""Vocabulary: sentencepiece training, WordPiece conversion, quality report."""
