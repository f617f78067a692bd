"""download → filter on small dumps written here, modelled on real wikitext of ja, bn, el and uk
(the template and link forms are the real ones): visible text stays, holes do not appear,
non-prose goes, sentences split where a reader would, long prose articles are never rejected."""
from __future__ import annotations

from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.text.quality import measure_corpus
from tests.helpers.wiki_dump import write_bz2_dump

JA_PARAGRAPH = ("北海道は日本の北部に位置する地域であり、{{仮リンク|札幌市|en|Sapporo}}を中心とする。"
                "JR北海道とNHKの放送局があり、[[:en:Hokkaido|北海道]]の交通を支えている。"
                "パンソリ（唱劇ともいう。一種の歌劇）が生まれた{{要出典}}。"
                "小説「{{仮リンク|雪国の夜|en|Snow Night}}」の中で、"
                "連邦会議（{{lang-en|Federal Council}}）が描かれた。")
BN_PARAGRAPH = ("এটি বাংলাদেশের একটি বড় শহর। শহরটি নদীর তীরে অবস্থিত। এখানে অনেক মানুষ বাস করে। "
                "শহরে অনেক বিদ্যালয় আছে। শহরের প্রধান এলাকাগুলো হলো:")
EL_PARAGRAPH = ("Η Αθήνα είναι η πρωτεύουσα της Ελλάδας· έχει μακρά ιστορία (βλ. σελ. 12 του βιβλίου). "
                "Ο πληθυσμός της ξεπερνά τα τρία εκατομμύρια{{sfn|Smith|2001}}. Τι άλλο ξέρουμε για αυτήν; "
                "Η πόλη έχει πολλά [[:en:Museum|μουσεία]].")
UK_PARAGRAPH = ("Київ — столиця України ({{lang-en|Kyiv}}), розташований на Дніпрі. "
                "Роман «{{нп|Сновиди||en|The Sleepwalkers}}» згадано в [[Star Wars: Episode I|Епізоді I]]. "
                "Площа міста {{convert|839|km2}}.")

NON_PROSE = [
    "{{Navbox|list1=[[Січень]] • [[Лютий]]}}",
    "Ιανουάριος · Φεβρουάριος · Μάρτιος · Απρίλιος · Μάιος",
    "** 御徒町駅 - 上野駅 - 秋葉原駅",
    '{"version": 2, "width": 330, "height": 200}',
    "* [[Список]] пунктів",
]


def write_dump(path, lang: str, paragraph: str, n_pages: int = 12) -> None:
    pages = []
    for i in range(n_pages):
        varied = f"{i}{'' if lang == 'ja' else ' '}{paragraph}"
        pages.append((f"T{i}", "\n\n".join([varied] * 6 + NON_PROSE + [f"{varied}[1]", "[[Category:X]]"])))
    write_bz2_dump(path, lang, pages)


def run_text_stages(tmp_path, lang, paragraph):
    dump = tmp_path / f"{lang}wiki.xml.bz2"
    write_dump(dump, lang, paragraph)
    data = tmp_path / "data"
    for stage in (["download", "--dump", str(dump)], ["extract"], ["format"], ["split"],
                  ["filter", "--keep-repeats", "--no-language-check"]):
        res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", lang, "--workers", "1", *stage])
        assert res.exit_code == 0, res.output
    root = data / lang
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((root / "filtered").glob("*.txt")))
    return root, text


def common_checks(root, text):
    quality = measure_corpus(root)["measures"]
    for key in ("markup", "bullet", "json", "navbox", "footnote", "empty_bracket"):
        assert quality[key] == 0, (key, measure_corpus(root)["examples"][key])
    assert quality["long_articles_lost"] == 0
    for hole in ("()", "（）", "「」", "« »", "“”"):
        assert hole not in text


def test_japanese(tmp_path):
    root, text = run_text_stages(tmp_path, "ja", JA_PARAGRAPH)
    common_checks(root, text)
    assert "札幌市" in text and "雪国の夜" in text and "Federal Council" in text
    assert "パンソリ（唱劇ともいう。一種の歌劇）が生まれた。\n" in text  # not split inside （）
    assert text.count("\n\n") + 1 == 12  # all 12 articles kept: JR and NHK are not shouting


def test_bengali_lead_in_keeps_the_sentences_before_it(tmp_path):
    root, text = run_text_stages(tmp_path, "bn", BN_PARAGRAPH)
    common_checks(root, text)
    assert "শহরটি নদীর তীরে অবস্থিত।" in text and "এলাকাগুলো হলো" not in text


def test_greek(tmp_path):
    root, text = run_text_stages(tmp_path, "el", EL_PARAGRAPH)
    common_checks(root, text)
    assert "Ελλάδας· έχει" in text                            # ano teleia is not a navbox
    assert "(βλ. σελ. 12 του βιβλίου)." in text              # no split in brackets
    assert "Τι άλλο ξέρουμε για αυτήν;\n" in text            # Greek question mark ends it


def test_ukrainian(tmp_path):
    root, text = run_text_stages(tmp_path, "uk", UK_PARAGRAPH)
    common_checks(root, text)
    assert "(Kyiv)" in text and "«Сновиди»" in text and "Епізоді I" in text and "839 km²" in text
