"""FastWordPiece gives exactly the ids of the Hugging Face tokenizer (make_tokenizer) and of a
plain Python implementation of BERT's basic + WordPiece tokenizer, on mixed-script text."""
from __future__ import annotations

import unicodedata
from dataclasses import replace

import numpy as np
import pytest

from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_vocab
from vocab.core.bert_tokenizer import make_tokenizer
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.kinds import load_vocab

MIXED = [
    "Árvíztűrő tükörfúrógép, ÁRVÍZTŰRŐ! Őrült Ügynök: 1999-ben (kb. 3,5 m).",
    "Київ — столиця України; «Мова» і ҐРУНТ.",
    "Tiếng Việt có dấu: Người Việt Nam, thành phố Hồ Chí Minh.",
    "北京大学位于北京。東京は日本語で「とうきょう」。",
    "Ελληνικά: Η Αθήνα ΣΑΣ σας· naïve café Straße $100 ^caret^ `tick` ~tilde| a+b=c <x>",
    "tabs\tand\u00a0nbsp\u3000ideographic\u2003em space",
    "zero\u200bwidth soft\u00adhyphen control\x0cform\x1cfile feed\x85nel sep\u2028line",
    "digits 0123456789 ٣٤٥ ௧௨ and emoji 😀👍 and combining e\u0301 a\u0308",
    "x" * 101 + " " + "y" * 100 + " unknownwordƩ",
    "",
    "   ",
    "Trailing space and punctuation!!! ...",
]


# --- a plain reference: BERT's BasicTokenizer + WordpieceTokenizer, written out -----------------
# Same rules as google-research/bert's tokenization.py, with the case options separated as in
# Hugging Face (lower-casing does not imply stripping accents) and its definitions of control
# and whitespace characters.

def _is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs" or c in "\u2028\u2029"


def _is_control(c):
    return c not in "\t\n\r" and unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs")


def _is_punctuation(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def reference_tokenize(text, vocab, lower=False, strip=False, max_chars=100):
    out = []
    for c in text:
        if ord(c) in (0, 0xFFFD) or _is_control(c):
            continue
        out.append(" " if _is_whitespace(c) else f" {c} " if _is_cjk(ord(c)) else c)
    text = "".join(out)
    if lower:
        text = "".join(c.lower() if c != "İ" else "i̇" for c in text)   # per character
    if strip:
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    words = []
    for token in text.split(" "):
        cur = ""
        for c in token:
            if _is_punctuation(c):
                if cur:
                    words.append(cur)
                words.append(c)
                cur = ""
            else:
                cur += c
        if cur:
            words.append(cur)
    ids = []
    for w in words:
        if len(w) > max_chars:
            ids.append(vocab["[UNK]"])
            continue
        start, pieces = 0, []
        while start < len(w):
            end = len(w)
            while start < end:
                sub = ("##" if start else "") + w[start:end]
                if sub in vocab:
                    break
                end -= 1
            else:
                pieces = [vocab["[UNK]"]]
                break
            pieces.append(vocab[sub])
            start = end
        ids.extend(pieces)
    return ids


@pytest.fixture(scope="module")
def corpus_text():
    return documents_text(make_documents(150, seed=3)) + "\n".join(MIXED) + "\n"


@pytest.fixture(scope="module", params=[(False, False), (True, False), (True, True)],
                ids=["cased", "lower", "lower_strip"])
def spec(request, tmp_path_factory, corpus_text):
    lower, strip = request.param
    folder = tmp_path_factory.mktemp("vocab")
    tokens = vocab_tokens(corpus_text, lower_case=lower, drop_chars="Ʃʃ😀", strip_accents=strip)
    return load_vocab(write_vocab(folder, tokens, lower_case=lower, strip_accents=strip))


def _per_line(ids, counts):
    offsets = np.concatenate([[0], np.cumsum(counts)])
    return [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(counts))]


def test_matches_hugging_face_line_by_line(spec, corpus_text):
    hf = make_tokenizer(spec)
    lines = corpus_text.split("\n")
    want = [hf.encode(line, add_special_tokens=False).ids for line in lines]
    wp = FastWordPiece(spec)
    got = _per_line(*wp.encode_text(corpus_text))
    assert len(got) == len(lines)
    assert got == want
    assert wp.fallback_lines == 0
    wp.exact = True   # the plain-dict path gives the same
    assert _per_line(*wp.encode_text(corpus_text)) == want


def test_matches_plain_reference_on_mixed_script(spec):
    vocab = {t: i for i, t in enumerate(spec.tokens)}
    wp = FastWordPiece(spec)
    hf = make_tokenizer(spec)
    for line in MIXED:
        want = reference_tokenize(line, vocab, spec.lower_case, spec.strip_accents)
        assert wp.tokenize(line) == want, line
        assert hf.encode(line, add_special_tokens=False).ids == want, line


def test_mixed_script_text_is_really_covered(spec):
    """The mixed lines exercise what they claim: [UNK] for the dropped letter and long words,
    CJK characters one by one, accents kept unless stripping."""
    wp = FastWordPiece(spec)
    toks = [spec.tokens[i] for i in wp.tokenize(MIXED[3] + " " + MIXED[8])]
    assert toks.count("[UNK]") == 2            # the 101-character word and the Ʃ word
    assert "北" in toks and "京" in toks
    first = [spec.tokens[i] for i in wp.tokenize("Árvíztűrő")]
    assert "".join(t.removeprefix("##") for t in first) == (
        "arvizturo" if spec.strip_accents else "árvíztűrő" if spec.lower_case else "Árvíztűrő")


def test_lines_with_unusual_characters_fall_back_to_hugging_face(spec, corpus_text, monkeypatch):
    """A character the translate table cannot express sends its lines to the HF tokenizer."""
    wp = FastWordPiece(spec)
    real = wp._char_kind
    monkeypatch.setattr(wp, "_char_kind", lambda ch: "complex" if ch in "őк" else real(ch))
    hf = make_tokenizer(spec)
    lines = corpus_text.split("\n")
    got = _per_line(*wp.encode_text(corpus_text))
    assert got == [hf.encode(line, add_special_tokens=False).ids for line in lines]
    assert wp.fallback_lines > 0


def test_word_cache_carries_across_calls(spec, corpus_text):
    wp = FastWordPiece(spec)
    first = wp.encode_text(corpus_text)
    second = wp.encode_text(corpus_text)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])


def test_bare_vocab_means_cased(tmp_path, corpus_text):
    spec = load_vocab(write_vocab(tmp_path, vocab_tokens(corpus_text), lower_case=None))
    assert not spec.lower_case
    spec_lower = replace(spec, lower_case=True)
    assert FastWordPiece(spec).tokenize("Árvíztűrő") != FastWordPiece(spec_lower).tokenize("Árvíztűrő")


@pytest.mark.slow
def test_matches_hugging_face_on_raw_wikipedia_dumps(shared_data, tmp_path):
    """Raw wikitext of the real dumps (markup, entities, every script and symbol they hold)."""
    import lzma

    parts = []
    for name in ("ukwiki.xml.xz", "viwiki.xml.xz"):
        with lzma.open(shared_data / name, "rt", encoding="utf-8") as fh:
            parts.append(fh.read(400_000))
    text = "\n".join(parts)
    for lower, strip in [(False, False), (True, True)]:
        spec = load_vocab(write_vocab(tmp_path / f"v{lower}", vocab_tokens(text, lower, "", strip),
                                      lower_case=lower, strip_accents=strip))
        hf = make_tokenizer(spec)
        want = [hf.encode(line, add_special_tokens=False).ids for line in text.split("\n")]
        assert _per_line(*FastWordPiece(spec).encode_text(text)) == want
