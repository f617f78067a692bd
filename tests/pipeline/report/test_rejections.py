"""Section `rejections`: a long learned alphabet (Japanese: thousands of characters) shows its
first characters and how many more there are; the whole of it waits in a collapsed <details>."""
from __future__ import annotations

import json
import re

from pipeline.report.inputs import ReportInputs
from pipeline.report.rejections import ALPHABET_SHOWN, rejections_section


def section_with_alphabet(tmp_path, alphabet: str, lang: str) -> str:
    folder = tmp_path / "filtered"
    folder.mkdir()
    (folder / "rejections.json").write_text(json.dumps(
        {"documents": 10, "kept": 10, "rejected": 0, "reasons": {}, "alphabet": alphabet,
         "alphabet_source": "learned"}, ensure_ascii=False), encoding="utf-8")
    data = ReportInputs(tmp_path)
    data.manifests = {"filter": {"summary": {"documents": 10, "kept": 10}}}
    return rejections_section(data, lang).html()


def test_a_long_learned_alphabet_is_folded(tmp_path):
    kana = "".join(chr(c) for c in range(0x3041, 0x3097))                 # 86 hiragana
    kanji = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 2914))          # 2,914 CJK ideographs
    alphabet = "<&" + kana + kanji                                         # 3,002 characters
    html = section_with_alphabet(tmp_path, alphabet, "ja")
    shown, folded = html.split("<details>")
    assert shown.count(kanji[100]) == 1 and kanji[300] not in shown      # ~200 characters shown
    assert f"{alphabet[2:ALPHABET_SHOWN]}</span> … and 2,802 more (3,002 in all)</p>" in shown
    assert shown.count("&lt;&amp;") == 1                                   # escaped
    assert re.fullmatch(r'<summary>The whole alphabet \(3,002 characters\)</summary>'
                        r'<p class="sample" lang="ja">&lt;&amp;[^<]{3000}</p></details>\s*</section>', folded)
    assert kana + kanji in folded and "<details open" not in html         # all of it, collapsed


def test_a_short_alphabet_is_shown_whole(tmp_path):
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzÁÉÍÓÖÚÜáéíóöúüŐőŰű"
    html = section_with_alphabet(tmp_path, alphabet, "hu")
    assert f'Alphabet (learned): <span lang="hu">{alphabet}</span></p>' in html
    assert "<details" not in html and "more (" not in html
