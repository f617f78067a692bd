"""The tokenization layer, and how a vocabulary is made for a language.

Tokenization (what every stage and the trainer use): spec (vocab.txt, its case setting,
BERT's special tokens; load_tokenizer_spec for any vocabulary), hf_tokenizer (a transformers
fast tokenizer folder behind the same surface; tokenizer_json reads its JSON), encoders (text to
ids as encode does, for either; encode_words), normalizer (BERT's normaliser one character at
a time, the character classes), tokenizer (the Hugging Face tokenizer of a vocab), fast_wordpiece (the same ids for
whole shards, several times faster), segmenters (MeCab, jieba, PyThaiNLP for scripts without
spaces), japanese (a vocab on MeCab words, as transformers' BertJapaneseTokenizer), word_starts
(segmenter words over BERT's tokens, for whole-word masking and word counts).

Making a vocab (chained by `pipeline vocab`, pipeline/stages/vocab.py): sample (seeded
sample, held-out slice, BERT's word split), train (deterministic sentencepiece on word
counts), convert (sentencepiece -> vocab.txt with BERT's specials and the full alphabet),
report (quality on held-out sentences), settings (one build's checked settings); bytelevel (a
RoBERTa-style byte-level BPE tokenizer.json instead), compare (two tokenizers on the same words).
"""
