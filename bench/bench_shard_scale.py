"""`pipeline shard` at millions of documents: wall time and peak memory as the number of
documents grows, to show whether the stage's own memory grows with the corpus (issue 62).

Usage:
    .venv/bin/python bench/bench_shard_scale.py                         # 0.2M and 1M documents, 3 runs each
    .venv/bin/python bench/bench_shard_scale.py --docs 1000000 4000000 10000000 --runs 1
    .venv/bin/python bench/bench_shard_scale.py --docs 1000000 --code /work/main     # another checkout's code
    .venv/bin/python bench/bench_shard_scale.py --docs 1000000 --weights web=2       # a source repeated
    .venv/bin/python bench/bench_shard_scale.py --docs 1000000 --label "before the bounded planner" --clean

Input: files in the filter stage's format (one sentence a line, a blank line between
documents), written once a size into WORK/docs-N/ (WORK: /tmp/w2b_shard_scale; kept until
--clean), seeded: documents of 3-12 sentences of 4-12 words drawn by Zipf's law from a dump's
30,000 most frequent words (--words-from, default the ukwiki dump of ../shared/data, else the
shipped Hungarian sample), the first capitalised, a full stop at the end; about 700 bytes a
document. At most 50,000 documents a file (about 35 MB; filter writes at most 64 MB), two files
at least, of two sources as filter names them: three files in ten `web__cc_NNNNN.txt` (source
web: the second, fifth, eighth), the others `AA_wiki_NNNNN.txt` (Wikipedia), so the per-source
paths run. The files are generated with numpy (whole tokens gathered as bytes, no Python loop a
word), one process a file: 10 million documents in about two minutes on 2 cores.

Each run is `pipeline --lang uk --workers W -q shard --input WORK/docs-N --output WORK/out-N
[--weight ...]` in a fresh process of --code's checkout, its output removed first (and after
the run, unless --keep-output: the disk). Measured (bench/process_tree.py): wall seconds, the
peak RSS of the largest process (its own high-water mark, VmHWM: the stage's own process, which
plans the shards) and of all processes (sampled every 0.2 s: a shorter peak may be missed, so
the sum can read below the largest process's own peak), documents a second, and the peak
RSS growth a document between consecutive sizes (largest process). The stage's summary
(manifest.json) must count every input document, per source. Medians over --runs; a markdown
table, each row also appended to WORK/results.jsonl; the 1-minute load at the start and end.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from process_tree import load, sampled  # noqa: E402

SHARED_DUMP = ROOT.parent / "shared" / "data" / "ukwiki.xml.xz"
SAMPLE_DUMP = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
VOCAB = 30_000
DOCS_A_FILE = 50_000
CHUNK = 10_000            # documents generated at a time (the gather's index: ~60 MB)
SENTENCES = (3, 12)       # a document's sentences, both ends included
WORDS = (4, 12)           # a sentence's words
WEB_FILES = (1, 4, 7)     # the files (index % 10) of the web source


def vocabulary(work: Path, words_from: Path | None) -> list[str]:
    """The dump's most frequent words (cached in WORK/words.txt: every size draws from the same)."""
    cached = work / "words.txt"
    if not cached.is_file():
        from synthetic_web import dump_words

        dump = words_from or (SHARED_DUMP if SHARED_DUMP.is_file() else SAMPLE_DUMP)
        words = dump_words(dump, work / "words-extract")[:VOCAB]
        shutil.rmtree(work / "words-extract", ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        cached.with_suffix(".tmp").write_text("\n".join(words) + "\n", encoding="utf-8")
        cached.with_suffix(".tmp").replace(cached)
    return cached.read_text(encoding="utf-8").split()


def file_name(index: int) -> str:
    """The file's name as filter writes it: its source travels in the name (core/sources.py)."""
    web = index % 10 in WEB_FILES
    return f"web__cc_{index:05d}.txt" if web else f"AA_wiki_{index:05d}.txt"


class Tokens:
    """Every token's bytes in one array: a word in mid-sentence ("word "), at a sentence's end
    ("word.\\n"), at its start ("Word "), and the blank line after a document."""

    def __init__(self, words: list[str]):
        forms = ([f"{w} " for w in words] + [f"{w}.\n" for w in words]
                 + [f"{w[:1].upper()}{w[1:]} " for w in words] + ["\n"])
        encoded = [f.encode() for f in forms]
        self.size = len(words)
        self.lengths = np.array([len(b) for b in encoded], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)[:-1]])
        self.flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        weights = 1.0 / np.arange(1, self.size + 1)
        self.cdf = np.cumsum(weights) / weights.sum()

    def documents(self, rnd: np.random.Generator, n: int) -> bytes:
        """`n` documents as text, drawn from `rnd`."""
        sentences = rnd.integers(SENTENCES[0], SENTENCES[1] + 1, n)
        words = rnd.integers(WORDS[0], WORDS[1] + 1, int(sentences.sum()))
        ids = np.minimum(np.searchsorted(self.cdf, rnd.random(int(words.sum()))), self.size - 1)
        ends = np.cumsum(words) - 1
        ids[ends] += self.size                    # "word.\n"
        ids[ends - words + 1] += 2 * self.size    # "Word " (a sentence has 4 words or more)
        tokens = np.insert(ids, ends[np.cumsum(sentences) - 1] + 1, 3 * self.size)   # a blank line
        lengths = self.lengths[tokens]
        shift = self.offsets[tokens] - (np.cumsum(lengths) - lengths)
        return self.flat[np.repeat(shift, lengths) + np.arange(int(lengths.sum()))].tobytes()


def _write_file(job: tuple) -> tuple[str, int, int]:
    """One file of the corpus (a pure function of the seed and its index); (name, documents, bytes)."""
    folder, seed, index, documents, words = job
    tokens, rnd = Tokens(words), np.random.default_rng([seed, index])
    path, size = folder / file_name(index), 0
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        for start in range(0, documents, CHUNK):
            size += fh.write(tokens.documents(rnd, min(CHUNK, documents - start)))
    tmp.replace(path)
    return path.name, documents, size


def generated(work: Path, documents: int, seed: int, workers: int, words_from: Path | None) -> tuple[Path, dict]:
    """WORK/docs-N (written once) and its counts: {"documents", "bytes", "sources": {name: n}}."""
    folder = work / f"docs-{documents}"
    counts_file = folder / "counts.json"
    if not counts_file.is_file():
        started = time.time()
        words = vocabulary(work, words_from)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        files = max(2, -(-documents // DOCS_A_FILE))
        jobs = [(folder, seed, i, documents // files + (i < documents % files), words) for i in range(files)]
        if workers == 1:
            written = [_write_file(job) for job in jobs]
        else:
            with multiprocessing.get_context("spawn").Pool(workers) as pool:
                written = pool.map(_write_file, jobs, chunksize=1)
        sources: dict[str, int] = {}
        for name, n, _size in written:
            source = "web" if name.startswith("web__") else "wikipedia"
            sources[source] = sources.get(source, 0) + n
        counts = {"documents": documents, "bytes": sum(w[2] for w in written), "files": len(written),
                  "sources": sources}
        counts_file.write_text(json.dumps(counts))   # last: a size interrupted before it is written again
        print(f"({documents:,} documents, {counts['bytes'] / 1e9:.2f} GB in {len(written)} files, written in "
              f"{time.time() - started:.0f} s)", flush=True)
    return folder, json.loads(counts_file.read_text())


def measured(cmd: list[str], code: Path) -> dict:
    """Run `cmd` with `code` first on the path; its wall seconds and peak RSS MB (largest, all)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.time()
    proc = subprocess.Popen(cmd, env=env, cwd=code, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)   # the working folder: `-m pipeline` finds the checkout asked for
    samples, largest = sampled(proc)
    output = proc.stdout.read()
    if proc.returncode:
        raise SystemExit(f"Error: shard failed (exit {proc.returncode}); its output:\n{output[-3000:]}")
    return {"wall": time.time() - started, "largest": largest, "sum": max(s[2] for s in samples)}


def checked(out: Path, counts: dict, weights: dict[str, float]) -> dict:
    """The stage's summary, once it counts every input document (per source) and its shards exist."""
    summary = json.loads((out / "manifest.json").read_text())["summary"]
    per_source = {s: v["documents"] for s, v in summary["sources"].items()}
    problems = []
    if summary["documents"] != counts["documents"] or per_source != counts["sources"]:
        problems.append(f"documents {summary['documents']:,} {per_source} != input's {counts['documents']:,} "
                        f"{counts['sources']}")
    for source, v in summary["sources"].items():
        if not weights.get(source) and v["training_documents"] + v["test_documents"] != v["documents"]:
            problems.append(f"{source}: {v['training_documents']} training + {v['test_documents']} test "
                            f"!= {v['documents']} documents")
    shards = summary["training_shards"] + summary["test_shards"]
    if len(list(out.glob("*wiki_*.txt"))) != shards:
        problems.append(f"{shards} shards in the summary, not in {out}")
    if problems:
        raise SystemExit(f"Error: shard's output in {out} does not match its input: {'; '.join(problems)}")
    return summary


def parse_weights(values: list[str]) -> dict[str, float]:
    try:
        return {name: float(w) for name, w in (v.split("=", 1) for v in values)}
    except ValueError:
        raise SystemExit(f"Error: --weights {' '.join(values)} is not NAME=W ...; e.g. --weights web=2") from None


def row(documents: int, counts: dict, runs: list[dict], label: str, loads: list[str], previous: dict | None) -> dict:
    """The medians of one size's runs, with the peak growth a document since the previous size."""
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "largest", "sum")}
    growth = None
    if previous and documents != previous["documents"]:
        growth = (med["largest"] - previous["largest"]) * 1e6 / (documents - previous["documents"])
    return {**med, "label": label, "documents": documents, "text_gb": counts["bytes"] / 1e9,
            "walls": [round(r["wall"], 1) for r in runs], "docs_per_s": documents / med["wall"],
            "bytes_per_doc_growth": growth, "load": "; ".join(loads)}


def table_line(r: dict) -> str:
    growth = "" if r["bytes_per_doc_growth"] is None else f"{r['bytes_per_doc_growth']:.0f}"
    walls = ", ".join(f"{w:.0f}" for w in r["walls"])
    return (f"| {r['label']} | {r['documents']:,} | {r['text_gb']:.2f} | {r['wall']:.0f} ({walls}) "
            f"| {r['docs_per_s']:,.0f} | {r['largest']:.0f} | {r['sum']:.0f} | {growth} | {r['load']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[200_000, 1_000_000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--weights", nargs="*", default=[], metavar="NAME=W", help="shard's --weight, e.g. web=2")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose pipeline runs shard")
    ap.add_argument("--label", default=None, help="the rows' label [default: --code's folder name]")
    ap.add_argument("--words-from", type=Path, default=None, help="the dump whose words make the text")
    ap.add_argument("--work", type=Path, default=Path("/tmp/w2b_shard_scale"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-output", action="store_true", help="keep each size's last shard output")
    ap.add_argument("--clean", action="store_true", help="remove each size's input after its runs")
    args = ap.parse_args()
    code, work = args.code.resolve(), args.work.resolve()
    if not (code / "pipeline" / "stages" / "shard.py").is_file():
        raise SystemExit(f"Error: --code {args.code} holds no pipeline/stages/shard.py; give a checkout's root")
    if min(args.docs) < 1 or args.runs < 1:
        raise SystemExit("Error: --docs and --runs must be at least 1")
    weights = parse_weights(args.weights)
    label = args.label or code.name
    print(f"`{shlex.join(['python', 'bench/bench_shard_scale.py', *sys.argv[1:]])}`; code: {code}; "
          f"{datetime.date.today().isoformat()}\n")
    print("| code | documents | text GB | wall s (median) | documents/s | peak RSS largest process MB "
          "| peak RSS all processes MB | growth bytes/document (largest) | load 1-min at start → end |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|", flush=True)
    previous = None
    for documents in sorted(args.docs):
        folder, counts = generated(work, documents, args.seed, args.workers, args.words_from)
        out = work / f"out-{documents}"
        runs, loads = [], []
        for _ in range(args.runs):
            shutil.rmtree(out, ignore_errors=True)
            before = load()
            cmd = [sys.executable, "-m", "pipeline", "--lang", "uk", "--workers", str(args.workers), "-q", "shard",
                   "--input", str(folder), "--output", str(out), *[f"--weight={w}" for w in args.weights]]
            runs.append(measured(cmd, code))
            loads.append(f"{before} → {load()}")
            summary = checked(out, counts, weights)
            if not args.keep_output:
                shutil.rmtree(out)
        result = row(documents, counts, runs, label, loads, previous)
        print(table_line(result), flush=True)
        with open(work / "results.jsonl", "a") as fh:
            fh.write(json.dumps({**result, "date": datetime.datetime.now().isoformat(timespec="seconds"),
                                 "code": str(code), "workers": args.workers, "weights": weights,
                                 "summary": {k: summary[k] for k in ("documents", "training_documents",
                                                                     "test_documents", "training_shards",
                                                                     "test_shards")}}) + "\n")
        previous = result
        if args.clean:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
