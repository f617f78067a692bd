"""extract: the shipped sample, the CLI, resume, determinism, and bad dumps."""
from __future__ import annotations

import bz2
import gzip
import json
import logging
import lzma
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages import extract as extract_mod
from pipeline.stages.extract import extract

ROOT = Path(__file__).resolve().parents[3]
NS = "http://www.mediawiki.org/xml/export-0.10/"


def xml_dump(pages, siteinfo=True, close=True) -> str:
    """A small export-0.10 dump; pages are (ns, title, text[, redirect])."""
    out = [f'<mediawiki xmlns="{NS}" version="0.10" xml:lang="hu">']
    if siteinfo:
        out.append("<siteinfo><sitename>Wikipédia</sitename><dbname>huwiki</dbname>"
                   "<base>https://hu.wikipedia.org/wiki/Kezd%C5%91lap</base><namespaces>"
                   '<namespace key="0" case="first-letter" />'
                   '<namespace key="10" case="first-letter">Sablon</namespace>'
                   '<namespace key="14" case="first-letter">Kategória</namespace>'
                   "</namespaces></siteinfo>")
    for i, page in enumerate(pages):
        ns, title, text = page[:3]
        redirect = '<redirect title="X" />' if len(page) > 3 and page[3] else ""
        out.append(f"<page><title>{title}</title><ns>{ns}</ns><id>{i + 1}</id>{redirect}"
                   f"<revision><id>{100 + i}</id><text xml:space=\"preserve\">{text}</text></revision></page>")
    if close:
        out.append("</mediawiki>")
    return "\n".join(out) + "\n"


ARTICLE = ("'''Alma''' a [[rózsafélék]] családjába tartozó gyümölcs. Íze édes, kb. öt centi.\n\n"
           "== Története ==\nŐsi növény, már a rómaiak is ismerték.")


def read_records(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(out.glob("*/wiki_*")) for line in f.open(encoding="utf-8")]


def tree_bytes(out: Path) -> dict:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("wiki_*"))}


# ---------------------------------------------------------------------------------------------
# The shipped sample


def test_sample_is_what_the_generator_writes(sample_dump, tmp_path):
    target = tmp_path / "s.xml.bz2"
    subprocess.run([sys.executable, str(ROOT / "data/sample/make_sample.py"), "--output", str(target)],
                   check=True, capture_output=True)
    assert target.read_bytes() == sample_dump.read_bytes()
    xml = bz2.decompress(sample_dump.read_bytes()).decode("utf-8")
    assert 100_000 < len(xml) < 400_000
    for needle in ("<siteinfo>", 'key="10" case="first-letter">Sablon<', "<title>Sablon:", "<title>Kategória:",
                   "<title>Wikipédia:", "<title>Fájl:", "<redirect", "egyértelműsítő", "{{", "&lt;ref",
                   "{|", "[[Kategória:", "Dr.", "kb.", "stb.", "2021. jan. 5-én"):
        assert needle in xml, needle
    for letter in "áéíóöőúüűÁÉÍÓÖŐÚÜŰ"[:12]:
        assert letter in xml, letter


def test_extract_sample(sample_dump, tmp_path):
    out = tmp_path / "ex"
    summary = extract(input=sample_dump, output=out, workers=1)
    records = read_records(out)
    assert summary["documents"] == len(records) == 41
    assert summary["dropped"]["other_namespace"] == 5 and summary["dropped"]["redirect"] == 1
    titles = [r["title"] for r in records]
    assert "Szeged" in titles and "Petőfi Sándor" in titles
    assert "Pest-Buda" not in titles and not any(":" in t for t in titles)
    assert all(set(r) == {"id", "revid", "url", "title", "text", "links"} for r in records)
    links = [(r["text"][s:e], target) for r in records for s, e, target in r["links"]]
    assert len(links) > 200 and all(label.strip() == label != "" and target for label, target in links)
    assert ("Tisza", "Tisza") in links   # [[Tisza]] in Szeged's lead
    assert records[0]["id"] == "1000" and records[0]["url"].endswith("?curid=1000")
    text = "\n".join(r["text"] for r in records)
    assert "{{" not in text and "[[" not in text and "<ref" not in text
    assert "## Története." in text  # headings kept, marked, for format to decide
    assert (out / "manifest.json").is_file() and not (out / ".stage").exists()


def test_cli_rerun_is_idempotent_and_force_needed_for_changes(sample_dump, tmp_path):
    runner = CliRunner()
    args = ["--data-dir", str(tmp_path), "--workers", "1", "extract", "--input", str(sample_dump)]
    res = runner.invoke(cli, args)
    assert res.exit_code == 0, res.output
    out_file = tmp_path / "hu" / "extracted" / "AA" / "wiki_00"
    before = (out_file.stat().st_mtime_ns, (out_file.parent.parent / "manifest.json").read_bytes())
    res = runner.invoke(cli, args)
    assert res.exit_code == 0 and "already done" in res.output
    assert (out_file.stat().st_mtime_ns, (out_file.parent.parent / "manifest.json").read_bytes()) == before
    res = runner.invoke(cli, args + ["--task-mb", "0.05"])
    assert res.exit_code == 1 and "--force" in res.output and "Traceback" not in res.output
    res = runner.invoke(cli, args + ["--task-mb", "0.05", "--force"])
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "hu" / "extracted").glob("AA/wiki_*"))) > 1


def test_reads_the_download_stage(sample_dump, tmp_path):
    from pipeline.stages.download import download
    download(data_dir=tmp_path, lang="hu", dump=sample_dump)
    summary = extract(data_dir=tmp_path, lang="hu", workers=1)
    assert summary["documents"] == 41
    assert (tmp_path / "hu" / "extracted" / "AA" / "wiki_00").is_file()


def test_without_download_says_what_to_run(tmp_path):
    with pytest.raises(StageError, match="pipeline download"):
        extract(data_dir=tmp_path, lang="hu", workers=1)


@pytest.mark.slow
def test_workers_1_and_2_write_the_same_bytes(sample_dump, tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    extract(input=sample_dump, output=a, workers=1, task_mb=0.02)
    extract(input=sample_dump, output=b, workers=2, task_mb=0.02)
    files = tree_bytes(a)
    assert len(files) >= 5
    assert files == tree_bytes(b)
    assert (json.loads((a / "manifest.json").read_text())["outputs"]
            == json.loads((b / "manifest.json").read_text())["outputs"])


def test_resume_after_a_crash_gives_the_same_bytes(sample_dump, tmp_path, monkeypatch):
    clean = tmp_path / "clean"
    extract(input=sample_dump, output=clean, workers=1, task_mb=0.02)

    crashed = tmp_path / "crashed"
    real = extract_mod.extract_pages
    calls = []

    def dying(job):
        calls.append(job[0])
        if len(calls) == 3:
            raise KeyboardInterrupt  # the process dies mid-stage
        return real(job)

    monkeypatch.setattr(extract_mod, "extract_pages", dying)
    with pytest.raises(KeyboardInterrupt):
        extract(input=sample_dump, output=crashed, workers=1, task_mb=0.02)
    assert not (crashed / "manifest.json").exists()
    done = sorted((crashed / ".stage" / "done").iterdir())
    assert len(done) == 2
    # the page batches waiting for the workers are JSON lines: reading them runs no code
    spills = sorted((crashed / ".stage" / "work").glob("pages_*"))
    assert spills and all(p.suffix == ".jsonl" for p in spills)
    assert all(len(json.loads(line)) == 4 for line in spills[0].read_text(encoding="utf-8").splitlines())
    first = crashed / "AA" / "wiki_00"
    mtime = first.stat().st_mtime_ns

    monkeypatch.setattr(extract_mod, "extract_pages", real)
    extract(input=sample_dump, output=crashed, workers=1, task_mb=0.02)
    assert first.stat().st_mtime_ns == mtime  # finished tasks are not redone
    assert tree_bytes(crashed) == tree_bytes(clean)
    assert json.loads((crashed / "manifest.json").read_text())["summary"]["documents"] == 41


# ---------------------------------------------------------------------------------------------
# Compressions and bad dumps


@pytest.mark.parametrize("suffix,compress", [
    (".xml", lambda b: b), (".xml.bz2", bz2.compress), (".xml.xz", lzma.compress),
    (".xml.gz", lambda b: gzip.compress(b, mtime=0)),
])
def test_every_compression(tmp_path, suffix, compress):
    data = xml_dump([(0, "Alma", ARTICLE), (10, "Sablon:Infobox", "{{{1}}}"), (0, "Körte", ARTICLE, True)]).encode()
    dump = tmp_path / f"d{suffix}"
    dump.write_bytes(compress(data))
    out = tmp_path / "out"
    summary = extract(input=dump, output=out, workers=1)
    assert summary["documents"] == 1
    assert summary["dropped"] == {"other_namespace": 1, "redirect": 1, "empty": 0}
    rec = read_records(out)[0]
    assert rec["title"] == "Alma" and rec["id"] == "1"
    assert rec["text"].startswith("Alma a rózsafélék családjába tartozó gyümölcs.")


def test_truncated_dump_keeps_complete_pages_with_one_warning(tmp_path, caplog):
    full = xml_dump([(0, f"Cikk {i}", ARTICLE) for i in range(5)])
    cut = full[: full.index("<title>Cikk 4</title>") + 40]  # ends mid-page
    dump = tmp_path / "cut.xml.bz2"
    dump.write_bytes(bz2.compress(cut.encode()))
    with caplog.at_level(logging.WARNING, logger="pipeline"):
        summary = extract(input=dump, output=tmp_path / "out", workers=1)
    assert summary["documents"] == 4 and summary["truncated"] is True
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "truncated" in warnings[0].getMessage()


def test_cut_compressed_stream_keeps_complete_pages(tmp_path, caplog):
    import random
    rng = random.Random(0)

    def words(n):
        return " ".join("".join(rng.choice("aábcdeéfghiíjklmnoóöőprstuúüűvz") for _ in range(6)) for _ in range(n))
    pages = [(0, f"Cikk {i}", ARTICLE + "\n\n" + words(1500)) for i in range(60)]
    data = bz2.compress(xml_dump(pages).encode(), compresslevel=1)
    dump = tmp_path / "cut.xml.bz2"
    dump.write_bytes(data[: len(data) * 2 // 3])  # a download that stopped
    with caplog.at_level(logging.WARNING, logger="pipeline"):
        summary = extract(input=dump, output=tmp_path / "out", workers=1)
    assert 0 < summary["documents"] < 60 and summary["truncated"] is True
    assert sum(r.levelno == logging.WARNING for r in caplog.records) == 1


def test_missing_siteinfo_still_extracts(tmp_path):
    dump = tmp_path / "d.xml"
    dump.write_text(xml_dump([(0, "Alma", ARTICLE)], siteinfo=False), encoding="utf-8")
    assert extract(input=dump, output=tmp_path / "out", workers=1)["documents"] == 1


def test_zero_articles_is_an_error(tmp_path):
    dump = tmp_path / "d.xml"
    dump.write_text(xml_dump([(10, "Sablon:A", "x"), (0, "B", "#ÁTIRÁNYÍTÁS [[C]]", True)]), encoding="utf-8")
    with pytest.raises(StageError, match="no articles"):
        extract(input=dump, output=tmp_path / "out", workers=1)
    assert not (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.parametrize("name,content,message", [
    ("empty.xml.bz2", b"", "is empty"),
    ("notxml.xml", "Ez csak egy szöveg, nem XML.\n".encode(), "not a MediaWiki XML dump"),
    ("html.xml", b"<html><body>404</body></html>", "not a MediaWiki XML dump"),
    ("garbage.xml.bz2", b"BZh91AY&SY" + bytes(range(256)) * 4, "corrupt"),
    ("garbage.xml.xz", b"\xfd7zXZ\x00" + b"\x00" * 100, "corrupt"),
])
def test_bad_dumps_give_one_clear_line(tmp_path, name, content, message):
    dump = tmp_path / name
    dump.write_bytes(content)
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "extract", "--input", str(dump)])
    assert res.exit_code == 1
    assert message in res.output and "Traceback" not in res.output
    assert res.output.strip().startswith("Error:") and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "d" / "hu" / "extracted" / "manifest.json").exists()


def test_non_utf8_bytes_are_a_clear_error(tmp_path):
    data = xml_dump([(0, "Alma", ARTICLE), (0, "Körte", ARTICLE)]).encode()
    data = data.replace("Körte".encode(), b"K\xf6rte")  # Latin-1 byte in a UTF-8 dump
    dump = tmp_path / "latin.xml.bz2"
    dump.write_bytes(bz2.compress(data))
    with pytest.raises(StageError, match="not well-formed XML"):
        extract(input=dump, output=tmp_path / "out", workers=1)


def test_garbage_in_the_middle_of_a_bz2_stream(tmp_path):
    data = bytearray(bz2.compress(xml_dump([(0, f"C{i}", ARTICLE * 50) for i in range(40)]).encode()))
    mid = len(data) // 2
    data[mid:mid + 64] = bytes(64)
    dump = tmp_path / "bad.xml.bz2"
    dump.write_bytes(bytes(data))
    with pytest.raises(StageError, match="corrupt|not well-formed"):
        extract(input=dump, output=tmp_path / "out", workers=1)


def test_lang_that_is_a_path_writes_nothing(sample_dump, tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--lang", "../x", "extract",
                                   "--input", str(sample_dump)])
    assert res.exit_code == 2 and "--lang" in res.output
    assert not (tmp_path / "d").exists() and not (tmp_path / "x").exists()


def test_a_page_wikiextractor_fails_on_is_counted_not_fatal(tmp_path, monkeypatch):
    from wikiextractor import extract as wx

    real = wx.clean   # what Extractor.clean_text and the link-keeping path both call

    def flaky(extractor, text, *a, **kw):
        if extractor.title == "Körte":
            raise RecursionError("pathological page")
        return real(extractor, text, *a, **kw)

    monkeypatch.setattr(wx, "clean", flaky)
    dump = tmp_path / "d.xml"
    dump.write_text(xml_dump([(0, "Alma", ARTICLE), (0, "Körte", ARTICLE)]), encoding="utf-8")
    summary = extract(input=dump, output=tmp_path / "out", workers=1)
    assert summary["documents"] == 1 and summary["dropped"]["wikiextractor_error"] == 1


@pytest.mark.slow
@pytest.mark.faults   # the kill -9 cell of docs/reliability.md's matrix
def test_kill_9_mid_stage_then_rerun_gives_the_same_bytes(tmp_path):
    import os
    import random
    import signal
    import time

    rng = random.Random(1)

    def word():
        return "".join(rng.choice("aábcdeéfghiíjklmnoóöőprstuúüűvz") for _ in range(rng.randint(2, 9)))
    pages = [(0, f"Cikk {i}", ARTICLE + "\n\n" + " ".join(word() for _ in range(1500))) for i in range(60)]
    dump = tmp_path / "big.xml.bz2"
    dump.write_bytes(bz2.compress(xml_dump(pages).encode(), compresslevel=1))
    clean = tmp_path / "clean"
    extract(input=dump, output=clean, workers=1, task_mb=0.04)

    killed = tmp_path / "killed"
    cmd = [sys.executable, "-m", "pipeline", "--workers", "2", "extract", "--input", str(dump),
           "--output", str(killed), "--task-mb", "0.04"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    done = killed / ".stage" / "done"
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if done.is_dir() and len(list(done.iterdir())) >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the stage and its workers, mid-way
    proc.wait()
    assert not (killed / "manifest.json").exists(), "finished before the kill: make the dump bigger"
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert tree_bytes(killed) == tree_bytes(clean)
    assert not list(killed.rglob(".*.tmp"))


def _mid_stream_bad_dumps(tmp_path):
    latin = xml_dump([(0, "Alma", ARTICLE), (0, "Körte", ARTICLE)]).encode().replace("Körte".encode(), b"K\xf6rte")
    garbled = bytearray(bz2.compress(xml_dump([(0, f"C{i}", ARTICLE * 50) for i in range(40)]).encode()))
    garbled[len(garbled) // 2:len(garbled) // 2 + 64] = bytes(64)
    (tmp_path / "latin.xml.bz2").write_bytes(bz2.compress(latin))
    (tmp_path / "garbled.xml.bz2").write_bytes(bytes(garbled))
    return {"latin.xml.bz2": "not well-formed XML", "garbled.xml.bz2": "corrupt|not well-formed"}


@pytest.mark.parametrize("name", ["latin.xml.bz2", "garbled.xml.bz2"])
def test_errors_found_mid_dump_are_one_line_of_their_own_via_the_cli(tmp_path, name):
    """Non-UTF-8 bytes or garbage past the dump's start: the progress bar is cleared first, so
    the error is a line of its own (not glued to the bar), and nothing is finished."""
    import re

    message = _mid_stream_bad_dumps(tmp_path)[name]
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--workers", "1", "extract",
                                   "--input", str(tmp_path / name)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    error_lines = [line for line in re.split(r"[\r\n]", res.output) if "Error:" in line]
    assert len(error_lines) == 1 and error_lines[0].startswith("Error: ")
    assert re.search(message, error_lines[0])
    assert not (tmp_path / "d" / "hu" / "extracted" / "manifest.json").exists()


def test_the_newest_revision_is_recorded_for_the_dumps_date(tmp_path):
    """Issue 52: a dump renamed xxwiki.xml.xz has no date in its name (the model card said
    `date unknown`); its revisions' timestamps say when it was made."""
    xml = xml_dump([(0, "Alma", ARTICLE), (0, "Körte", ARTICLE), (0, "Szilva", ARTICLE)])
    stamps = iter(["2023-04-30T10:00:00Z", "2023-05-01T12:08:16Z", "2021-01-02T03:04:05Z"])
    xml = re.sub(r"<revision><id>(\d+)</id>",
                 lambda m: f"<revision><id>{m.group(1)}</id><timestamp>{next(stamps)}</timestamp>", xml)
    dump = tmp_path / "xxwiki.xml.xz"
    dump.write_bytes(lzma.compress(xml.encode()))
    assert extract(input=dump, output=tmp_path / "out", workers=1)["newest_revision"] == "2023-05-01T12:08:16Z"
    plain = tmp_path / "plain.xml"   # a dump without timestamps: no guess
    plain.write_text(xml_dump([(0, "Alma", ARTICLE)]), encoding="utf-8")
    assert "newest_revision" not in extract(input=plain, output=tmp_path / "out2", workers=1)
