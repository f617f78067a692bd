"""`pipeline filter`: reasons counted, langdetect handling, the learned alphabet, --invert,
every threshold an option, and the stage contract (the rules themselves: text/test_doc_rules.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages.filter import filter_documents
from pipeline.stages.split import split
from pipeline.text.doc_rules import FilterSettings
from pipeline.text.documents import documents

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "formatted_hu"


@pytest.fixture(scope="module")
def hu_sentences(tmp_path_factory) -> Path:
    """The fixture articles split into sentences (the filter's input), with a split manifest."""
    out = tmp_path_factory.mktemp("hu") / "sentences"
    split(lang="hu", workers=1, input=FIXTURES, output=out)
    return out


def test_stage_counts_reasons_and_keeps_real_articles(hu_sentences, tmp_path):
    summary = filter_documents(lang="hu", workers=1, input=hu_sentences, output=tmp_path / "f")
    rej = json.loads((tmp_path / "f" / "rejections.json").read_text())
    assert rej["reasons"] == summary["rejections"] == {"too_few_words": 2, "language": 1}
    assert summary["documents"] == 8 and summary["kept"] == 5 and rej["alphabet_source"] == "language file"
    kept = [d[0] for f in sorted((tmp_path / "f").glob("*.txt"))
            for d in documents(f.read_text(encoding="utf-8"))]
    assert kept == ["Budapest", "Tisza", "Japán kapcsolatok", "Balaton", "Szeged"]


def test_invert_writes_the_rejected_documents_elsewhere_with_reasons(hu_sentences, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(hu_sentences, data / "hu" / "sentences")
    filter_documents(data_dir=data, lang="hu", workers=1, invert=True)
    rejected = data / "hu" / "rejected"
    titles = [d[0] for f in sorted(rejected.glob("*.txt")) for d in documents(f.read_text(encoding="utf-8"))]
    assert titles == ["Évszámok listája", "Football in England", "Sablon maradvány"]
    reasons = [line.split("\t")[1] for f in sorted(rejected.glob("*.reasons.tsv"))
               for line in f.read_text(encoding="utf-8").splitlines()]
    assert reasons == ["too_few_words", "language", "too_few_words"]
    assert not (data / "hu" / "filtered").exists()


def test_language_unknown_to_langdetect_is_skipped_with_one_warning(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    doc = ["Հայաստանը պետություն է Հարավային Կովկասում։", "Մայրաքաղաքը Երևանն է, որը ամենամեծ քաղաքն է։",
           "Երկրի բնակչությունը մոտ երեք միլիոն մարդ է։"]
    (src / "a.txt").write_text("\n".join(doc) + "\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["--lang", "hy", "--workers", "1", "filter", "--input", str(src),
                                   "--output", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.output.splitlines() if "langdetect does not know" in line]
    assert len(warnings) == 1
    rej = json.loads((tmp_path / "out" / "rejections.json").read_text())
    assert rej["kept"] == 1 and rej["reasons"] == {}  # not thrown out as "Estonian"
    assert "Հ" in rej["alphabet"] and rej["alphabet_source"] == "learned"


def test_thresholds_are_options_and_changes_need_force(hu_sentences, tmp_path):
    runner = CliRunner()
    args = ["--lang", "hu", "--workers", "1", "filter", "--input", str(hu_sentences),
            "--output", str(tmp_path / "out"), "--no-language-check"]
    assert runner.invoke(cli, args).exit_code == 0
    res = runner.invoke(cli, args + ["--min-words", "1000"])
    assert res.exit_code == 1 and "min_words" in res.output and "--force" in res.output
    res = runner.invoke(cli, args + ["--min-words", "1000", "--force"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "out" / "rejections.json").read_text())["kept"] == 0
    assert "too_few_words 8" in res.output
    assert "--max-digit-ratio" in runner.invoke(cli, ["filter", "--help"]).output


def test_workers_1_and_2_give_identical_bytes(hu_sentences, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        shutil.copy(hu_sentences / f"AA_wiki_0{i % 2}.txt", src / f"AB_wiki_0{i}.txt")
    filter_documents(lang="hu", workers=1, input=src, output=tmp_path / "w1")
    filter_documents(lang="hu", workers=2, input=src, output=tmp_path / "w2")
    for name in ["AB_wiki_00.txt", "AB_wiki_01.txt", "AB_wiki_02.txt", "AB_wiki_03.txt", "rejections.json"]:
        assert (tmp_path / "w1" / name).read_bytes() == (tmp_path / "w2" / name).read_bytes()


def test_non_utf8_input_gives_one_clear_line(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "x.txt").write_bytes(b"Ok line.\n\xff\xfe broken\n")
    res = CliRunner().invoke(cli, ["--lang", "hu", "--workers", "1", "filter", "--input", str(src),
                                   "--output", str(tmp_path / "out")])
    assert res.exit_code == 1 and "not UTF-8" in res.output and "Traceback" not in res.output


def formatted_from_dump(dump: Path, out: Path, max_pages: int) -> Path:
    """The first `max_pages` pages of an .xml.xz dump, through wikiextractor, in the format
    stage's layout (paragraph per line, blank line between articles)."""
    import lzma
    import subprocess
    import sys
    import unicodedata

    xml = out.parent / "dump.xml"
    pages = 0
    with lzma.open(dump, "rt", encoding="utf-8") as src, open(xml, "w", encoding="utf-8") as dst:
        for line in src:
            dst.write(line)
            pages += "</page>" in line
            if pages >= max_pages:
                dst.write("</mediawiki>\n")
                break
    subprocess.run([sys.executable, "-m", "wikiextractor.WikiExtractor", "--processes", "1", "-q",
                    "-o", str(out.parent / "ext"), str(xml)], check=True, capture_output=True)
    out.mkdir()
    for f in sorted((out.parent / "ext").rglob("wiki_*")):
        docs, cur = [], None
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.startswith("<doc "):
                cur = []
            elif line.startswith("</doc>"):
                docs += ["\n".join(cur)] if cur else []
                cur = None
            elif cur is not None and line.strip():
                cur.append(unicodedata.normalize("NFC", line.strip()))
        (out / f"{f.parent.name}_{f.name}.txt").write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["uk", "vi"])
def test_defaults_keep_most_real_article_text(shared_data, tmp_path, lang):
    """On the real dumps: the generic defaults keep the large majority of article text."""
    fmt = formatted_from_dump(shared_data / f"{lang}wiki.xml.xz", tmp_path / "fmt", max_pages=150)
    split(lang=lang, workers=2, input=fmt, output=tmp_path / "s")
    summary = filter_documents(lang=lang, workers=2, input=tmp_path / "s", output=tmp_path / "f")
    assert summary["output_bytes"] >= 0.9 * summary["input_bytes"], summary
    assert summary["kept"] >= 0.6 * summary["documents"], summary


def test_every_threshold_is_a_cli_option_that_reaches_the_rules(hu_sentences, tmp_path):
    """No hidden constant: each FilterSettings threshold has its option, and the value given
    on the command line is the one the stage applies (recorded in rejections.json)."""
    from dataclasses import fields

    thresholds = [f.name for f in fields(FilterSettings) if f.name != "alphabet"]
    assert "min_cased_for_upper" in thresholds
    help_text = CliRunner().invoke(cli, ["filter", "--help"]).output
    for i, name in enumerate(thresholds):
        option = "--" + name.replace("_", "-")
        assert option in help_text, option
        value = "7" if isinstance(getattr(FilterSettings(), name), int) else "0.375"
        out = tmp_path / f"o{i}"
        res = CliRunner().invoke(cli, ["--lang", "hu", "--workers", "1", "filter", "--input",
                                       str(hu_sentences), "--output", str(out),
                                       "--no-language-check", option, value])
        assert res.exit_code == 0, res.output
        applied = json.loads((out / "rejections.json").read_text())["settings"][name]
        assert applied == (7 if value == "7" else 0.375), name


@pytest.mark.parametrize("option,value", [("--max-digit-ratio", "1.5"), ("--min-words", "-1"),
                                          ("--min-lang-prob", "2")])
def test_out_of_range_thresholds_are_refused(tmp_path, option, value):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "filter", option, value])
    assert res.exit_code == 2 and option in res.output and "Traceback" not in res.output


def test_a_crash_mid_stage_then_rerun_gives_the_same_bytes(hu_sentences, tmp_path, monkeypatch):
    from pipeline.stages import filter as filtering

    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        shutil.copy(hu_sentences / f"AA_wiki_0{i % 2}.txt", src / f"AB_wiki_0{i}.txt")
    filter_documents(lang="hu", workers=1, input=src, output=tmp_path / "clean", invert=True)
    real, calls = filtering.filter_file, []

    def crash_on_third(task, **kw):
        calls.append(task)
        if len(calls) == 3:
            raise KeyboardInterrupt  # as if killed after two files were finished
        return real(task, **kw)

    monkeypatch.setattr(filtering, "filter_file", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        filter_documents(lang="hu", workers=1, input=src, output=tmp_path / "resumed", invert=True)
    assert not (tmp_path / "resumed" / "manifest.json").exists()
    monkeypatch.setattr(filtering, "filter_file", real)
    filter_documents(lang="hu", workers=1, input=src, output=tmp_path / "resumed", invert=True)
    names = sorted(p.name for p in (tmp_path / "clean").iterdir() if p.is_file() and p.name != "manifest.json")
    assert names == sorted(p.name for p in (tmp_path / "resumed").iterdir()
                           if p.is_file() and p.name != "manifest.json")
    for name in names:
        assert (tmp_path / "clean" / name).read_bytes() == (tmp_path / "resumed" / name).read_bytes()


def test_summary_counts_the_sentences_written(hu_sentences, tmp_path):
    summary = filter_documents(lang="hu", workers=1, input=hu_sentences, output=tmp_path / "o")
    written = sum(len(d) for f in sorted((tmp_path / "o").glob("*.txt"))
                  for d in documents(f.read_text(encoding="utf-8")))
    assert summary["sentences"] == written > 0


def test_repeated_lines_go_after_their_first_copy_whatever_the_workers(tmp_path):
    """Boilerplate copied into many articles: the first copy (document order) stays."""
    from pipeline.stages.filter import filter_documents

    boiler = "Ця фраза повторюється у кожній статті про рік, слово в слово, без змін."
    src = tmp_path / "in"
    src.mkdir()
    for f in range(3):
        docs = []
        for d in range(4):
            docs.append("\n".join([f"Стаття {f}-{d} має власне перше речення про події року."] +
                                  [boiler] + [f"Її друге власне речення {f}-{d} розповідає більше."]))
        (src / f"f{f}.txt").write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    outs = {}
    for workers in (1, 2):
        out = tmp_path / f"out{workers}"
        summary = filter_documents(data_dir=tmp_path, lang="uk", workers=workers, input=src, output=out,
                                   language_check=False, min_words=3)
        outs[workers] = {p.name: p.read_bytes() for p in sorted(out.glob("*.txt"))}
        assert summary["repeated_lines"] == 11
    assert outs[1] == outs[2]
    text = "".join(b.decode() for b in outs[1].values())
    assert text.count(boiler) == 1 and text.index(boiler) < text.index("Стаття 0-1")
    kept = filter_documents(data_dir=tmp_path, lang="uk", workers=1, input=src, output=tmp_path / "keep",
                            language_check=False, min_words=3, drop_repeats=False)
    assert kept["repeated_lines"] == 0


def test_one_sentence_stubs_are_dropped_unless_asked(tmp_path):
    from pipeline.stages.filter import filter_documents

    src = tmp_path / "in.txt"
    src.write_text("Коротка стаття-заглушка з одним реченням про рік тисяча.\n\n"
                   "Довша стаття має два речення про місто над рікою.\nДруге речення теж про місто.\n",
                   encoding="utf-8")
    summary = filter_documents(data_dir=tmp_path, lang="uk", workers=1, input=src, output=tmp_path / "a",
                               language_check=False, min_words=3)
    assert summary["kept"] == 1 and summary["rejections"] == {"too_few_sentences": 1}
    summary = filter_documents(data_dir=tmp_path, lang="uk", workers=1, input=src, output=tmp_path / "b",
                               language_check=False, min_words=3, min_sentences=1)
    assert summary["kept"] == 2


def test_unbalanced_lines_go_when_asked_and_the_cli_switch_reaches_them(tmp_path):
    """A line broken at its source (a bracket that never closes) goes with --drop-unbalanced;
    list labels are no brackets; by default every line stays."""
    src = tmp_path / "in.txt"
    broken = "Зупинився у маєтку поміщика Григорія Тарновського) над рікою."
    labels = "Є два випадки: а) перший збіг звуків; б) другий збіг форм."
    src.write_text("\n".join(["Перше речення статті про місто над рікою.", broken, labels,
                              "Останнє речення (з дужками) про місто."]) + "\n", encoding="utf-8")
    summary = filter_documents(data_dir=tmp_path, lang="uk", workers=1, input=src, output=tmp_path / "a",
                               language_check=False, min_words=3)
    assert summary["unbalanced_lines"] == 0 and broken in (tmp_path / "a" / "in.txt").read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "uk", "filter", "--input", str(src),
                                      "--output", str(tmp_path / "b"), "--drop-unbalanced",
                                      "--no-language-check", "--min-words", "3"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "b" / "in.txt").read_text(encoding="utf-8")
    assert broken not in text and labels in text
    assert json.loads((tmp_path / "b" / "rejections.json").read_text())["unbalanced_lines"] == 1


# -- memory: a task reads, judges and writes a piece of its file at a time -----------------------

def one_big_file(hu_sentences: Path, folder: Path, copies: int) -> Path:
    """The fixture's sentence files as one file, `copies` times (the copies' lines are repeats)."""
    folder.mkdir()
    text = "\n\n".join(p.read_text(encoding="utf-8").strip("\n") for p in sorted(hu_sentences.glob("*.txt")))
    (folder / "big.txt").write_text("\ufeff" + "\n\n".join([text] * copies) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("invert", [False, True])
def test_a_file_filtered_in_pieces_gives_the_bytes_of_the_whole_file(hu_sentences, tmp_path, monkeypatch, invert):
    from pipeline.stages import filter as filtering
    from pipeline.text import documents as docs_module

    src = one_big_file(hu_sentences, tmp_path / "in", copies=3)
    outs = {}
    for chars in (10**9, 200):           # the whole file at once; a piece of a document or two
        monkeypatch.setattr(filtering, "PIECE_CHARS", chars)
        monkeypatch.setattr(docs_module, "PIECE_CHARS", chars)
        out = tmp_path / f"out{chars}"
        summary = filter_documents(data_dir=tmp_path, lang="hu", workers=1, input=src, output=out, invert=invert)
        outs[chars] = ({p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix in (".txt", ".tsv")},
                       {k: summary[k] for k in ("documents", "kept", "sentences", "repeated_lines", "rejections")})
    assert outs[200] == outs[10**9]
    assert outs[200][1]["documents"] == 24 and outs[200][1]["repeated_lines"] > 50


def test_filtering_a_large_file_takes_the_memory_of_a_piece_not_of_the_file(hu_sentences, tmp_path):
    """A web part is 64 MB; its task used to hold every document of it, many times over."""
    src = one_big_file(hu_sentences, tmp_path / "in", copies=1)
    text = (src / "big.txt").read_text(encoding="utf-8").lstrip("\ufeff")
    with open(src / "big.txt", "w", encoding="utf-8") as fh:
        for i in range(1_000_000):
            if fh.tell() > 40_000_000:
                break
            fh.write(text.replace("\n\n", f" {i}\n\n") + "\n")     # no line repeats another
    code = ("import resource; from pipeline.stages.filter import filter_documents; "
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            f"s = filter_documents(lang='hu', workers=1, input={str(src)!r}, output={str(tmp_path / 'out')!r}); "
            "print(s['kept'], (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1e3)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    kept, grown_mb = res.stdout.split()[-2:]
    assert int(kept) > 10_000
    assert float(grown_mb) < 200, f"filter of a 40 MB file grew by {float(grown_mb):.0f} MB"
