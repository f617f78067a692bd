"""Vocabulary: sentencepiece training, WordPiece conversion, quality report.

Modules: bert_tokenizer (vocab.txt + case setting -> the tokenizer every stage uses),
alphabet (every character BERT can see), sample (seeded sample, held-out slice, BERT's word
split), train (deterministic sentencepiece on word counts), convert (spm -> vocab.txt with
BERT's specials and the full alphabet), report (quality on held-out sentences). The stage that
chains them is pipeline/vocab_stage.py (`pipeline vocab`).
"""
