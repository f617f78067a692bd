"""A small synthetic Hungarian corpus laid out like the filter stage's output (one sentence a
line, a blank line between documents, a manifest), for the vocab tests."""
from __future__ import annotations

import json
import random
from pathlib import Path

# Every Hungarian accented letter, lower and upper case, in ordinary words.
WORDS = (
    "árvíztűrő tükörfúrógép öröm ének idő úr üveg fű szőlő alma körte ház kert város ország "
    "nyelv könyv iskola tanár diák szép nagy kicsi jó rossz gyors lassú víz tűz föld levegő "
    "hegy völgy folyó tenger erdő mező virág fa madár hal kutya macska ló tehén év óra út "
    "művész zenész költő írás olvasás történet egyetem kórház múzeum színház könyvtár"
).split()
NAMES = "Árpád Éva Ízisz Ócsa Ödön Őrség Úrkút Ürmös Űrállomás Budapest Duna Tisza Balaton".split()
# A letter so rare that sentencepiece's character coverage leaves it out.
RARE_WORD = "Ʃámuel"


def make_sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS if rng.random() < 0.85 else NAMES) for _ in range(rng.randint(4, 12))]
        if rng.random() < 0.3:
            words.insert(rng.randint(1, len(words) - 1), f"{rng.randint(1, 2024)}-ben,")
        s = " ".join(words)
        out.append(s[0].upper() + s[1:] + rng.choice([".", "!", "?", " (1999)."]))
    return out


def write_corpus(folder: Path, sentences: list[str], files: int = 3, doc_len: int = 5,
                 manifest: bool = True) -> Path:
    """Write `sentences` as the filter stage would: files of documents, manifest last."""
    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-len(sentences) // files)
    for i in range(files):
        part = sentences[i * per_file:(i + 1) * per_file]
        docs = [part[j:j + doc_len] for j in range(0, len(part), doc_len)]
        (folder / f"AA_wiki_{i:02d}.txt").write_text(
            "\n\n".join("\n".join(d) for d in docs) + "\n", encoding="utf-8")
    if manifest:
        (folder / "manifest.json").write_text(json.dumps({"stage": "filter"}), encoding="utf-8")
    return folder


# Ukrainian words (Cyrillic, with і ї є ґ) for corpora in a second script (the joint vocab tests).
UK_WORDS = (
    "місто країна мова книга школа вчитель учень гарний великий малий добрий вода вогонь земля "
    "повітря гора долина річка море ліс поле квітка дерево птах риба собака кіт кінь рік година "
    "дорога художник музикант поет письмо читання історія університет лікарня музей театр "
    "бібліотека їжак єдність ґанок Київ Львів Дніпро Харків Одеса"
).split()


def make_sentences_from(words: list[str], n: int, seed: int = 0, end: str = ".") -> list[str]:
    """`n` sentences of 4-12 of `words` (a second language or script for the joint vocab tests)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = " ".join(rng.choice(words) for _ in range(rng.randint(4, 12)))
        out.append(s[0].upper() + s[1:] + end)
    return out
