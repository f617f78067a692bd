"""format: clean paragraphs from extracted articles; layout, cleanup, resume, determinism."""
from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages import format as formatting_mod
from pipeline.stages.extract import extract
from pipeline.stages.format import format_corpus

MARKUP = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|<[a-z]+[ >/]|^\{\||^\|-|^\|\}|&[a-z]+;|formula_\d", re.M)


@pytest.fixture(scope="module")
def extracted(sample_dump, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("extracted")
    extract(input=sample_dump, output=out, workers=1, task_mb=0.03)
    return out


def write_jsonl(path: Path, articles) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for i, (title, text) in enumerate(articles):
            fh.write(json.dumps({"id": str(i), "revid": "1", "url": "u", "title": title, "text": text},
                                ensure_ascii=False) + "\n")


def test_sample_layout_and_cleanliness(extracted, tmp_path):
    out = tmp_path / "fo"
    summary = format_corpus(input=extracted, output=out, workers=1)
    files = sorted(out.glob("*.txt"))
    assert [f.name for f in files][:2] == ["AA_wiki_00.txt", "AA_wiki_01.txt"]
    assert summary["files"] == len(files) >= 3
    docs = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert text.endswith("\n") and not text.endswith("\n\n") and not text.startswith("\n")
        assert "\n\n\n" not in text  # exactly one blank line between documents
        assert not MARKUP.search(text), MARKUP.search(text)
        assert text == unicodedata.normalize("NFC", text)
        for doc in text.split("\n\n"):
            assert doc.strip()
            docs += 1
        lines = text.splitlines()
        assert "Története" not in lines and "Története." not in lines  # headings dropped
        assert "Nevezetességek:" not in lines  # a list's lead-in without its list
    assert docs == summary["documents"] == 40  # the disambiguation page has nothing left
    assert summary["dropped"]["empty_articles"] == 1
    all_text = "".join(f.read_text(encoding="utf-8") for f in files)
    assert "Árvíztűrő tükörfúrógép" in all_text and "Dr. Kovács Pál" in all_text
    assert "2021. jan. 5-én" in all_text and "Szeged Magyarország harmadik" in all_text


def test_cli_rerun_says_already_done(extracted, tmp_path):
    runner = CliRunner()
    args = ["--data-dir", str(tmp_path), "--workers", "1", "format", "--input", str(extracted)]
    assert runner.invoke(cli, args).exit_code == 0
    target = tmp_path / "hu" / "formatted" / "AA_wiki_00.txt"
    mtime = target.stat().st_mtime_ns
    res = runner.invoke(cli, args)
    assert res.exit_code == 0 and "already done" in res.output
    assert target.stat().st_mtime_ns == mtime


def test_reads_the_extract_stage_and_forces_on_new_input(sample_dump, tmp_path):
    extract(data_dir=tmp_path, lang="hu", workers=1, input=sample_dump)
    assert format_corpus(data_dir=tmp_path, lang="hu", workers=1)["documents"] == 40
    extract(data_dir=tmp_path, lang="hu", workers=1, input=sample_dump, task_mb=0.05, force=True)
    with pytest.raises(StageError, match="--force"):  # its input changed
        format_corpus(data_dir=tmp_path, lang="hu", workers=1)
    assert format_corpus(data_dir=tmp_path, lang="hu", workers=1, force=True)["documents"] == 40


def test_without_extract_says_what_to_run(tmp_path):
    with pytest.raises(StageError, match="pipeline extract"):
        format_corpus(data_dir=tmp_path, lang="hu", workers=1)


@pytest.mark.slow
def test_workers_1_and_2_write_the_same_bytes(extracted, tmp_path):
    format_corpus(input=extracted, output=tmp_path / "a", workers=1)
    format_corpus(input=extracted, output=tmp_path / "b", workers=2)
    a = {p.name: p.read_bytes() for p in (tmp_path / "a").glob("*.txt")}
    b = {p.name: p.read_bytes() for p in (tmp_path / "b").glob("*.txt")}
    assert a == b and len(a) >= 3


def test_resume_after_a_crash_gives_the_same_bytes(extracted, tmp_path, monkeypatch):
    format_corpus(input=extracted, output=tmp_path / "clean", workers=1)
    real = formatting_mod.format_file
    calls = []

    def dying(job):
        calls.append(job)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(formatting_mod, "format_file", dying)
    crashed = tmp_path / "crashed"
    with pytest.raises(KeyboardInterrupt):
        format_corpus(input=extracted, output=crashed, workers=1)
    assert not (crashed / "manifest.json").exists()
    first = crashed / "AA_wiki_00.txt"
    mtime = first.stat().st_mtime_ns
    monkeypatch.setattr(formatting_mod, "format_file", real)
    format_corpus(input=extracted, output=crashed, workers=1)
    assert first.stat().st_mtime_ns == mtime
    clean = {p.name: p.read_bytes() for p in (tmp_path / "clean").glob("*.txt")}
    assert clean == {p.name: p.read_bytes() for p in crashed.glob("*.txt")}


def test_doc_format_input_and_empty_articles(tmp_path):
    src = tmp_path / "in" / "AB"
    src.mkdir(parents=True)
    (src / "wiki_07").write_text(
        '<doc id="1" url="u" title="Alma">\nAlma\n\nAz alma gyümölcs.\n</doc>\n'
        '<doc id="2" url="u" title="Üres">\nÜres\n\n{| class="wikitable"\n|-\n</doc>\n', encoding="utf-8")
    summary = format_corpus(input=tmp_path / "in", output=tmp_path / "out", workers=1)
    assert (tmp_path / "out" / "AB_wiki_07.txt").read_text(encoding="utf-8") == "Az alma gyümölcs.\n"
    assert summary["documents"] == 1 and summary["dropped"]["empty_articles"] == 1


def test_nfc_and_markup_leftovers(tmp_path):
    nfd = unicodedata.normalize("NFD", "Árvíztűrő tükörfúrógép")
    write_jsonl(tmp_path / "in" / "AA" / "wiki_00", [
        ("A", f"{nfd} itt.\n## Szakasz.\n{{{{lang|de|Donau}}}} A [[Duna|folyó]] hossza () kb. 2850 km.<ref>x</ref>"),
        ("B", "## Csak címsor.\n|-\n{| class=x"),
    ])
    format_corpus(input=tmp_path / "in", output=tmp_path / "out", workers=1)
    text = (tmp_path / "out" / "AA_wiki_00.txt").read_text(encoding="utf-8")
    assert text == "Árvíztűrő tükörfúrógép itt.\nA folyó hossza kb. 2850 km.\n"


@pytest.mark.parametrize("content,message", [
    (b"\xff\xfe not utf-8 \xc3\x28\n", "not UTF-8"),
    (b"just some words\n", "neither wikiextractor JSON"),
    (b'{"id": "1", "title": "x"}\n', "not a wikiextractor JSON record"),
])
def test_bad_input_is_one_clear_line(tmp_path, content, message):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "wiki_00").write_bytes(content)
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "format", "--input", str(tmp_path / "in"),
                                   "--output", str(tmp_path / "out")])
    assert res.exit_code == 1 and message in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_empty_input_folder(tmp_path):
    (tmp_path / "in").mkdir()
    with pytest.raises(StageError, match="holds no extracted files"):
        format_corpus(input=tmp_path / "in", output=tmp_path / "out", workers=1)


def test_lang_that_is_a_path_writes_nothing(tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--lang", "../x", "format"])
    assert res.exit_code == 2 and not (tmp_path / "d").exists()
