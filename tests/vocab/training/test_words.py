"""BERT's word split for the sample's word counts: the same words as BERT's pre-tokenizer."""
import random
from collections import Counter

import pytest

from vocab.core.bert_tokenizer import make_pre_tokenizer
from vocab.core.normalizer import CharNormalizer
from vocab.training.words import BertWords, _word_pattern, bert_words, count_words


def test_words_are_split_like_bert():
    counts = count_words(["Árvíz-tűrő (tükör)fúrógép, 中文 ok.", "ok"])
    assert counts == Counter({"Árvíz": 1, "-": 1, "tűrő": 1, "(": 1, "tükör": 1, ")": 1,
                              "fúrógép": 1, ",": 1, "中": 1, "文": 1, "ok": 2, ".": 1})
    lower = count_words(["Árvíz ÉS Űr"], lower_case=True)
    assert set(lower) == {"árvíz", "és", "űr"}
    stripped = count_words(["Árvíz ÉS Űr"], lower_case=True, strip_accents=True)
    assert set(stripped) == {"arviz", "es", "ur"}


def test_a_segmenter_that_cuts_the_sample_cuts_bert_words():
    assert BertWords.of(False, False, "jieba").cut_at is None        # Chinese: a token per character anyway
    assert BertWords.of(False, False, "pythainlp").cut_at == "pythainlp"


@pytest.mark.parametrize("lower,strip", [(False, False), (True, False), (True, True), (False, True)])
def test_fast_word_split_equals_bert_pre_tokenizer(lower, strip):
    rng = random.Random(0)
    # random code points of every plane in use (new-Unicode punctuation, controls, CJK, ...)
    noise = "".join(chr(c) for c in (rng.randrange(1, 0x30000) for _ in range(20000))
                    if not 0xD800 <= c < 0xE000)
    text = ("ΟΔΟΣ İstanbul e\u0301 ﬁ ｆｕｌｌ 中文字 \u200b\u00ad x\x00y\ufffd ¿Qué? «ok» — "
            "‘a’ “b” ₴5 №3 ½ ① 🙂 Ǆ ß \u2581 \x1c\x85a\u3000b Árvíz-TŰRŐ, tükör.\n" + noise)
    expected = make_pre_tokenizer(lower, strip)(text)
    norm = CharNormalizer(lower, strip)
    assert bert_words(text, norm) == expected
    normalized = norm.text(text)  # the regex fallback gives the same words
    assert _word_pattern(set(normalized)).findall(normalized) == expected
