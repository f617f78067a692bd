"""The vocab's full-alphabet rule on non-Latin scripts: every character of the input is in
vocab.txt as `c` and `##c`, and text in Cyrillic, Greek, Arabic, Devanagari, Thai, Hangul and
CJK comes back whole, without [UNK], from the pieces."""
import random

from pipeline.stages.vocab import build_vocab
from vocab.core.bert_tokenizer import make_tokenizer
from vocab.core.normalizer import CharNormalizer, alphabet_of
from vocab.kinds import load_vocab

WORDS = {
    "uk": "мова книга місто школа вчитель річка гора ліс поле їжак ґанок Єва щука Київ Львів",
    "el": "γλώσσα βιβλίο πόλη σχολείο δάσκαλος ποτάμι βουνό Αθήνα Θεσσαλονίκη",
    "ar": "اللغة كتاب مدينة مدرسة معلم نهر جبل القاهرة",
    "hi": "भाषा पुस्तक शहर विद्यालय शिक्षक नदी पहाड़ दिल्ली हिन्दी",
    "th": "ภาษา หนังสือ เมือง โรงเรียน ครู แม่น้ำ ภูเขา",
    "ko": "언어 책 도시 학교 선생님 강 산 서울",
    "zh": "语言 书 城市 学校 老师 河 山 北京",
}
# Letters too rare for sentencepiece's character coverage: only the alphabet rule keeps them.
RARE = ["Ѯорон", "Ϡαμπί", "ঌ"]


def sentences(n, seed=3):
    rng = random.Random(seed)
    pools = [w.split() for w in WORDS.values()]
    out = []
    for _ in range(n):
        pool = rng.choice(pools)
        out.append(" ".join(rng.choice(pool) for _ in range(rng.randint(4, 10))) + rng.choice([".", "!", "?"]))
    return out + [f"{w} {w}." for w in RARE]


def test_every_character_of_every_script_is_there_as_c_and_hash_c(tmp_path, corpus):
    sents = sentences(2500)
    corpus.write_corpus(tmp_path / "data" / "xx" / "filtered", sents)
    build_vocab(data_dir=tmp_path / "data", lang="xx", workers=1, vocab_size=1200)
    spec = load_vocab(tmp_path / "data" / "xx" / "vocab")
    tokens = set(spec.tokens)
    alphabet = alphabet_of(sents, CharNormalizer())
    assert len(alphabet) > 140          # the scripts are really there
    missing = sorted(c for c in alphabet if c not in tokens or "##" + c not in tokens)
    assert not missing
    tok = make_tokenizer(spec)
    for text in [" ".join(w.split()[:4]) for w in WORDS.values()] + RARE:
        enc = tok.encode(text, add_special_tokens=False)
        assert "[UNK]" not in enc.tokens, (text, enc.tokens)
        joined = "".join(t[2:] if t.startswith("##") else t for t in enc.tokens)
        assert joined == "".join(text.split()), (text, enc.tokens)
    assert tok.encode("Ѯ", add_special_tokens=False).tokens == ["Ѯ"]
    assert tok.encode("Ѯорон", add_special_tokens=False).tokens[0] == "Ѯ"
