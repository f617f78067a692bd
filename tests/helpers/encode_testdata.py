"""Test data for the encode tests: a synthetic multi-script corpus, shards in the shard stage's
format, and a hand-made WordPiece vocab.txt (BERT's special-token layout)."""
from __future__ import annotations

import json
import random
from pathlib import Path

# Ordinary words in several scripts, with accents; some become whole vocab entries, the rest
# are split into pieces.
WORDS = (
    "árvíztűrő tükörfúrógép öröm ének idő úr üveg fű szőlő alma körte ház kert város ország "
    "nyelv könyv iskola tanár diák szép nagy kicsi jó rossz gyors lassú víz tűz föld levegő "
    "Київ мова книга місто школа вчитель річка гора ліс поле "
    "Việt Nam tiếng người thành phố sông núi "
    "Αθήνα γλώσσα βιβλίο "
    "Straße Zürich naïve café"
).split()
CJK = "北京大学中文日本語東京"
PUNCT = [".", ",", "!", "?", ";", ":", "(", ")", "«", "»", "—", "-", "'", "$", "%"]


def make_documents(n_docs: int, seed: int = 0, max_sents: int = 30) -> list[list[str]]:
    """Documents of sentences: words of several scripts, digits, CJK, punctuation."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        n = rng.choice([1, 2, 3, 5, 8, 12, 20, max_sents])
        sents = []
        for _ in range(n):
            words = []
            for _ in range(rng.randint(3, 25)):
                r = rng.random()
                if r < 0.8:
                    words.append(rng.choice(WORDS))
                elif r < 0.88:
                    words.append(str(rng.randint(0, 3000)))
                elif r < 0.94:
                    words.append("".join(rng.choice(CJK) for _ in range(rng.randint(1, 3))))
                else:
                    words.append(rng.choice(WORDS) + rng.choice(PUNCT))
            s = " ".join(words)
            sents.append(s[0].upper() + s[1:] + rng.choice([".", "!", "?", " (1999)."]))
        docs.append(sents)
    return docs


def documents_text(docs: list[list[str]]) -> str:
    return "\n\n".join("\n".join(d) for d in docs) + "\n"


def write_shards(folder: Path, docs: list[list[str]], lang: str = "xx", n_train: int = 2,
                 n_test: int = 1, manifest: bool = True) -> Path:
    """Shards named and laid out like the shard stage's output (manifest written last)."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"{lang}wiki_training_{i}.txt" for i in range(n_train)] + \
            [f"{lang}wiki_test_{i}.txt" for i in range(n_test)]
    for k, name in enumerate(names):
        part = docs[k::len(names)]
        (folder / name).write_text(documents_text(part), encoding="utf-8")
    if manifest:
        (folder / "manifest.json").write_text(json.dumps({"stage": "shard", "outputs": names}),
                                              encoding="utf-8")
    return folder


def vocab_tokens(text: str, lower_case: bool = False, drop_chars: str = "",
                 strip_accents: bool = False) -> list[str]:
    """Specials where Google's vocabs have them, then whole words, some pieces, every character.

    Characters in `drop_chars` get no entry, so words containing them become [UNK].
    """
    from vocab.core.bert_tokenizer import make_pre_tokenizer

    split = make_pre_tokenizer(lower_case=lower_case, strip_accents=strip_accents)
    words = sorted(set(split(text)))
    tokens = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    seen = set(tokens)

    def add(t):
        if t not in seen:
            seen.add(t)
            tokens.append(t)

    rng = random.Random(1)
    for w in words:
        if set(w) & set(drop_chars):
            continue
        if rng.random() < 0.5:
            add(w)
        elif len(w) > 3:
            add(w[:3])
            add("##" + w[3:])
    for c in sorted(set("".join(words))):
        if c not in drop_chars:
            add(c)
            add("##" + c)
    return tokens


def write_vocab(folder: Path, tokens: list[str], lower_case: bool | None = None,
                strip_accents: bool = False) -> Path:
    """vocab.txt, plus tokenizer_config.json with the case setting unless lower_case is None."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    if lower_case is not None:
        from vocab.core.layout import bert_tokenizer_config

        (folder / "tokenizer_config.json").write_text(
            json.dumps(bert_tokenizer_config(lower_case, strip_accents)), encoding="utf-8")
    return folder
