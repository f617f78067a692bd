"""A tokenizer's fingerprint: what decides the ids, not how a file spells it.

    fp = fingerprint(tokens, roles, encode, extra)   # hex sha256

Two tokenizers that give the same ids get the same fingerprint, whether the vocabulary is a
vocab.txt or a tokenizer.json, and whoever saved it (transformers writes `strip_accents: null`
where another writer put `false`: the same behaviour). So the fingerprint hashes the
vocabulary (every piece in id order), the special tokens' ids by role, and the ids the
tokenizer gives for a fixed probe text in many scripts, with case, accents, digits and
punctuation: a change of normaliser, pre-tokenizer or model changes those ids.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

# Several scripts and the things normalisers and pre-tokenizers treat differently.
PROBE = (
    "Árvíztűrő tükörfúrógép, ÁRVÍZTŰRŐ 1848-ban.",
    "Київ — столиця України; ЇЖАК їжак’s.",
    "Hà Nội là thủ đô của Việt Nam (1010).",
    "東京は日本の首都です。北京是中国的首都。",
    "กรุงเทพมหานคร เป็นเมืองหลวง",
    "القاهرة عاصمة مصر، ومدينة كبيرة.",
    "हिन्दी विकिपीडिया  ½ ﬁ Ⅻ ①",
    "naïve café coöperate Straße İstanbul ǅ",
    "e-mail: user@example.org http://x.y/z?q=1 #tag $3.50 100%",
    "  leading and   multiple spaces\tand\ttabs ",
)


def fingerprint(tokens: Sequence[str], roles: dict, encode: Callable[[list[str]], list[list[int]]],
                extra: dict | None = None) -> str:
    """sha256 (hex) of the pieces, the special tokens' ids by role, the probe's ids and `extra`
    (what the ids also depend on but the probe cannot show, e.g. MeCab words)."""
    h = hashlib.sha256()
    h.update(json.dumps(list(tokens), ensure_ascii=False).encode())
    h.update(json.dumps({k: roles[k] for k in sorted(roles)}, sort_keys=True).encode())
    h.update(json.dumps(encode(list(PROBE))).encode())
    h.update(json.dumps(extra or {}, sort_keys=True).encode())
    return h.hexdigest()
