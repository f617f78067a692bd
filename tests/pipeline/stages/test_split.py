"""`pipeline split`: Hungarian with quntoken, other languages with the rules; the stage contract."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages import split as splitting
from pipeline.stages.split import split

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "formatted_hu"


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """DATA_DIR with hu/formatted/ holding the fixture files and a format manifest."""
    shutil.copytree(FIXTURES, tmp_path / "data" / "hu" / "formatted")
    return tmp_path / "data"


def read_outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.txt"))}


# -- the stage ---------------------------------------------------------------------------------

def test_split_stage_writes_sentences_per_line_and_documents_per_blank_line(data_dir):
    summary = split(data_dir=data_dir, lang="hu", workers=1)
    out = data_dir / "hu" / "sentences"
    assert (out / "manifest.json").is_file()
    assert sorted(read_outputs(out)) == ["AA_wiki_00.txt", "AA_wiki_01.txt"]
    text = (out / "AA_wiki_00.txt").read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n") and "\n\n\n" not in text
    docs = text.split("\n\n")
    assert len(docs) == 4 and summary["documents"] == 8
    assert docs[0].split("\n")[:3] == [
        "Budapest", "Budapest Magyarország fővárosa, egyben legnépesebb települése.",
        "Dr. Kovács János szerint a város területe kb. 525 négyzetkilométer, lakossága pedig mintegy 1,7 millió fő."]
    assert ("A középkorban Buda lett a királyi székhely, amit a török hódoltság idején, 1541. aug. 29-én foglaltak el."
            in docs[0].split("\n"))
    assert "\ufffd" not in text


def test_cli_rerun_is_idempotent_and_changed_options_need_force(data_dir):
    runner = CliRunner()
    args = ["--data-dir", str(data_dir), "--lang", "hu", "--workers", "1", "split"]
    assert runner.invoke(cli, args).exit_code == 0
    out = data_dir / "hu" / "sentences"
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    res = runner.invoke(cli, args)  # the CLI logs to its stderr, which CliRunner captures
    assert res.exit_code == 0 and "already done, nothing rewritten" in res.output
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before

    res = runner.invoke(cli, args + ["--splitter", "rules"])
    assert res.exit_code == 1 and "--force" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = runner.invoke(cli, args + ["--splitter", "rules", "--force"])
    assert res.exit_code == 0, res.output
    assert '"splitter": "rules"' in (out / "manifest.json").read_text()


def test_an_interrupted_run_resumes_to_the_same_bytes(data_dir, tmp_path, monkeypatch):
    clean = tmp_path / "clean"
    split(data_dir=data_dir, lang="hu", workers=1, output=clean)
    calls = []
    real = splitting.split_text

    def dies_on_second_file(*a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(splitting, "split_text", dies_on_second_file)
    with pytest.raises(KeyboardInterrupt):
        split(data_dir=data_dir, lang="hu", workers=1)
    out = data_dir / "hu" / "sentences"
    assert not (out / "manifest.json").exists()
    first = (out / "AA_wiki_00.txt").stat().st_mtime_ns
    monkeypatch.setattr(splitting, "split_text", real)
    split(data_dir=data_dir, lang="hu", workers=1)
    assert (out / "AA_wiki_00.txt").stat().st_mtime_ns == first  # finished task not redone
    assert read_outputs(out) == read_outputs(clean)


@pytest.mark.parametrize("lang,splitter", [("hu", "quntoken"), ("uk", "rules")])
def test_workers_1_and_2_give_identical_bytes(tmp_path, lang, splitter):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        shutil.copy(FIXTURES / f"AA_wiki_0{i % 2}.txt", src / f"AB_wiki_0{i}.txt")
    one = split(lang=lang, workers=1, input=src, output=tmp_path / "w1", splitter=splitter)
    two = split(lang=lang, workers=2, input=src, output=tmp_path / "w2", splitter=splitter)
    assert read_outputs(tmp_path / "w1") == read_outputs(tmp_path / "w2")
    assert one["sentences"] == two["sentences"] > 0


def test_non_utf8_input_gives_one_clear_line(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "bad.txt").write_bytes("Árvíztűrő tükörfúrógép.\n".encode("iso8859-2"))
    res = CliRunner().invoke(cli, ["--lang", "uk", "--workers", "1", "split", "--input", str(src),
                                   "--output", str(tmp_path / "out")])
    assert res.exit_code == 1
    assert "not UTF-8" in res.output and "bad.txt" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out" / "bad.txt").exists()


def test_missing_upstream_output_says_what_to_run(tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "uk", "split"])
    assert res.exit_code == 1 and "pipeline format" in res.output


def test_empty_input_file_gives_empty_output(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "empty.txt").write_text("\n\n", encoding="utf-8")
    summary = split(lang="vi", workers=1, input=src, output=tmp_path / "out")
    assert summary["documents"] == 0 and (tmp_path / "out" / "empty.txt").read_bytes() == b""


# -- memory: a task reads its file a piece of whole documents at a time -------------------------

@pytest.mark.parametrize("lang,splitter", [("hu", "quntoken"), ("uk", "rules")])
def test_a_file_split_in_pieces_gives_the_bytes_of_the_whole_file(tmp_path, monkeypatch, lang, splitter):
    text = "\ufeff" + "\n\n".join(p.read_text(encoding="utf-8").strip("\n") for p in sorted(FIXTURES.glob("*.txt")))
    src = tmp_path / "in.txt"
    src.write_bytes((text.replace("\n", "\r\n", 40) + "\n \n\n").encode("utf-8"))   # BOM, CRLF, blank tail
    whole, docs, sents = splitting.split_text(text.lstrip("\ufeff").replace("\r\n", "\n") + "\n \n\n", lang,
                                              splitter)
    monkeypatch.setattr(splitting, "PIECE_CHARS", 300)                  # many pieces
    info = splitting.split_file((src, tmp_path / "out.txt"), lang, splitter)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == whole
    assert (info["documents"], info["sentences"], info["output_bytes"]) == (docs, sents, len(whole.encode()))
    assert docs > 3


def test_splitting_a_large_file_takes_the_memory_of_a_piece_not_of_the_file(tmp_path):
    """A web part is 64 MB; its task used to hold it whole, several times over (~10x its size)."""
    para = (FIXTURES / "AA_wiki_00.txt").read_text(encoding="utf-8").strip("\n")
    src = tmp_path / "big.txt"
    with open(src, "w", encoding="utf-8") as fh:
        while fh.tell() < 48_000_000:
            fh.write(para + "\n\n")
    code = ("import resource, sys; from pathlib import Path; from pipeline.stages import split as s; "
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            f"s.split_file((Path({str(src)!r}), Path({str(tmp_path / 'out.txt')!r})), 'uk', 'rules'); "
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1e3)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    grown_mb = float(res.stdout.split()[-1])
    assert grown_mb < 150, f"split of a 48 MB file grew by {grown_mb:.0f} MB"
    assert (tmp_path / "out.txt").stat().st_size > 45_000_000
