"""ingest: text, JSONL and Parquet corpora (plain or .gz/.bz2/.xz/.zst) into formatted text;
cleaning, names, resume, determinism, and bad input as one Error line with nothing written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.ingest import ingest
from pipeline.text.documents import documents, read_utf8
from tests.helpers.kill_at_rename import KILL_AT_NTH_RENAME
from tests.helpers.web_corpus import write_corpus

ROOT = Path(__file__).resolve().parents[3]

DOCS = [["Első bekezdés az első dokumentumban.", "Második  bekezdés\tide."],
        ["Egy másik dokumentum egyetlen bekezdéssel."],
        ["Cafe\u0301 e\x07s o\u0308sszetett \u00a0szo\u0308veg."]]   # NFD, a control character
CLEAN = [["Első bekezdés az első dokumentumban.", "Második bekezdés ide."],
         ["Egy másik dokumentum egyetlen bekezdéssel."],
         [unicodedata.normalize("NFC", "Cafe\u0301 es o\u0308sszetett szo\u0308veg.")]]


def ingested_docs(folder: Path, source: str) -> list[list[str]]:
    return [d for f in sorted(folder.glob(f"{source}__*.txt")) for d in documents(read_utf8(f))]


@pytest.mark.parametrize("kind", ["text", "text.gz", "text.bz2", "text.xz", "text.zst", "jsonl",
                                  "jsonl.xz", "parquet"])
def test_every_format_gives_the_same_clean_documents(tmp_path, kind):
    suffix = {"text": ".txt", "jsonl": ".jsonl", "parquet": ".parquet"}[kind.split(".")[0]]
    comp = "." + kind.split(".")[1] if "." in kind else ""
    src = write_corpus(tmp_path / f"in/part-01{suffix}{comp}", DOCS, kind)
    summary = ingest(data_dir=tmp_path / "d", lang="hu", workers=1, sources={"web": str(src)})
    out = tmp_path / "d/hu/ingested"
    assert ingested_docs(out, "web") == CLEAN
    assert [f.name for f in out.glob("*.txt")] == ["web__part-01_0000.txt"]
    assert summary["per_source"]["web"]["documents"] == 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["summary"]["sources"] == ["web"]


def test_doc_per_line_field_folders_globs_parts_and_source_order(tmp_path):
    lines = write_corpus(tmp_path / "books/a.txt", DOCS, "lines")
    write_corpus(tmp_path / "news/x/1.jsonl.gz", DOCS[:2], "jsonl.gz", field="content")
    write_corpus(tmp_path / "news/y/2.jsonl", DOCS[2:], "jsonl", field="content")
    many = [[f"Dokumentum {i} szövege, elég hosszú ahhoz, hogy a részek betelljenek."]
            for i in range(300)]
    write_corpus(tmp_path / "big/b.txt", many, "text")
    summary = ingest(data_dir=tmp_path / "d", lang="hu", workers=2, doc_per_line=True,
                     text_field="content", part_mb=0.005,
                     sources={"news": str(tmp_path / "news"), "books": str(lines),
                              "big": str(tmp_path / "big/*.txt")})
    out = tmp_path / "d/hu/ingested"
    assert ingested_docs(out, "books") == [[" ".join(d)] for d in CLEAN]   # one paragraph each
    assert ingested_docs(out, "news") == CLEAN
    big_parts = sorted(out.glob("big__b_*.txt"))
    assert len(big_parts) > 2 and all(p.stat().st_size < 6000 for p in big_parts)
    assert len(ingested_docs(out, "big")) == 300
    assert summary["sources"] == ["news", "books", "big"]


def test_resume_skip_and_the_same_bytes_for_any_workers(tmp_path):
    src = write_corpus(tmp_path / "w.jsonl", DOCS * 50, "jsonl")
    srcs = {"web": str(src), "more": str(write_corpus(tmp_path / "m.txt.xz", DOCS, "text.xz"))}
    one = ingest(data_dir=tmp_path / "a", lang="hu", workers=1, sources=srcs, part_mb=0.001)
    ingest(data_dir=tmp_path / "b", lang="hu", workers=2, sources=srcs, part_mb=0.001)
    a, b = tmp_path / "a/hu/ingested", tmp_path / "b/hu/ingested"
    files = {p.name: p.read_bytes() for p in a.glob("*.txt")}
    assert files == {p.name: p.read_bytes() for p in b.glob("*.txt")} and len(files) > 3
    again = ingest(data_dir=tmp_path / "a", lang="hu", workers=1, sources=srcs, part_mb=0.001)
    assert again == {k: v for k, v in one.items() if k != "seconds"} | {"seconds": one["seconds"]}
    with pytest.raises(StageError, match="other settings"):
        ingest(data_dir=tmp_path / "a", lang="hu", workers=1, sources=srcs, part_mb=0.002)


def test_invalid_utf8_lines_are_counted_and_reported(tmp_path, caplog):
    src = tmp_path / "w.txt"
    src.write_bytes("Jó szöveg itt.\n\nMásik jó.\n".encode() + b"rossz \xff\xfe sor\n"
                    + b"Harmadik.\n")
    summary = ingest(data_dir=tmp_path / "d", lang="hu", workers=1, sources={"web": str(src)})
    assert summary["per_source"]["web"]["invalid_utf8_lines"] == 1
    assert ingested_docs(tmp_path / "d/hu/ingested", "web") == [["Jó szöveg itt."],
                                                                 ["Másik jó.", "Harmadik."]]
    assert "1 invalid utf8 lines" in caplog.text


def _cli_error(tmp_path, *args) -> str:
    data = tmp_path / f"d{len(list(tmp_path.glob('d*')))}"   # each case in a fresh data folder
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "-q", "ingest", *args])
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    out = data / "hu/ingested"
    assert not (out / "manifest.json").exists() and not list(out.glob("*.txt"))
    return lines[0]


def test_bad_input_is_one_error_line_and_nothing_written(tmp_path):
    good = str(write_corpus(tmp_path / "g.jsonl", DOCS, "jsonl"))
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)) * 100)
    assert "is binary" in _cli_error(tmp_path, "--source", f"web={binary}")
    assert "no field 'body'" in _cli_error(tmp_path, "--source", f"web={good}", "--text-field", "body")
    pq = str(write_corpus(tmp_path / "p.parquet", DOCS, "parquet"))
    assert "no column 'body'" in _cli_error(tmp_path, "--source", f"web={pq}", "--text-field", "body")
    assert "not a Parquet file" in _cli_error(tmp_path, "--source", f"web={good}", "--format", "parquet")
    (tmp_path / "empty.txt").write_bytes(b"")
    assert "is empty" in _cli_error(tmp_path, "--source", f"web={tmp_path / 'empty.txt'}")
    (tmp_path / "blank.txt").write_text("\n\n  \n")
    assert "no documents" in _cli_error(tmp_path, "--source", f"web={good}",
                                        "--source", f"b={tmp_path / 'blank.txt'}")
    assert "given twice" in _cli_error(tmp_path, "--source", f"web={good}", "--source", f"web={pq}")
    assert "reserved" in _cli_error(tmp_path, "--source", f"wikipedia={good}")
    assert "no files there" in _cli_error(tmp_path, "--source", f"web={tmp_path / 'nope'}/*.txt")
    notutf = tmp_path / "latin2.txt"
    notutf.write_bytes("Árvíztűrő tükörfúrógép\n".encode("iso8859_2") * 50)
    assert "not UTF-8 text" in _cli_error(tmp_path, "--source", f"web={notutf}")
    numbered = [[f"{i} {p} {i * 7919 % 10007}" for p in d] for i in range(3000) for d in DOCS]
    for kind in ("text.gz", "text.zst"):   # cut after the first 64 KB that ingest checks first
        cut = write_corpus(tmp_path / f"cut.{kind.replace('text', 'txt')}", numbered, kind)
        cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
        assert "cut short" in _cli_error(tmp_path, "--source", f"web={cut}")
    notzst = tmp_path / "plain.txt.zst"
    notzst.write_text("not compressed\n")
    assert "cannot be decompressed" in _cli_error(tmp_path, "--source", f"web={notzst}")


@pytest.mark.faults   # the kill -9 cell of docs/reliability.md's matrix
def test_killed_mid_stage_then_rerun_gives_the_same_bytes(tmp_path):
    folder = tmp_path / "in"
    for i in range(3):
        write_corpus(folder / f"f{i}.jsonl", DOCS * (i + 1), "jsonl")
    sources = {"web": str(folder)}
    ingest(data_dir=tmp_path / "clean", lang="hu", workers=1, sources=sources)
    # renames: run.json, then (part, marker) per file: die at the second file's part
    cmd = [sys.executable, "-c", KILL_AT_NTH_RENAME, "4", "--data-dir", str(tmp_path / "d"),
           "--workers", "1", "ingest", "--source", f"web={folder}"]
    res = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=60)
    out = tmp_path / "d/hu/ingested"
    assert res.returncode == -9, res.stderr
    assert not (out / "manifest.json").exists() and list(out.glob(".*.tmp"))
    ingest(data_dir=tmp_path / "d", lang="hu", workers=1, sources=sources)
    clean = tmp_path / "clean/hu/ingested"
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.suffix == ".txt"} == {
        p.name: p.read_bytes() for p in clean.iterdir() if p.is_file() and p.suffix == ".txt"}
    assert not list(out.glob(".*.tmp"))
