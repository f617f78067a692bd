"""Benchmark of the filter's language check: langdetect's own Detector (what
pipeline/text/language_id.py called before) against language_id's exact re-implementation.

For each language, the first --docs documents of a `sentences/` folder, each joined as the
filter joins it (only its first 600 characters count), go through both in fresh processes,
--runs times. The table gives medians of CPU milliseconds per document (after start-up),
the start-up CPU seconds the check adds to a process (langdetect: loading its 55 JSON
profiles; language_id: importing numpy and itself, and loading its disk cache of the profiles,
or building it where absent), and whether every probability came out identical.

The sentences come from --sentences LANG=FOLDER, else from ../shared/data/{uk,vi}wiki.xml.xz
through the project's download/extract/format/split stages (in a temporary data directory).

Usage:
    .venv/bin/python bench/bench_language_id.py [--runs 5] [--docs 300] [--sentences uk=DIR ...]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = [sys.executable, "-m", "pipeline", "-q"]
ENV = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}


def child(impl: str, lang: str, folder: str, n_docs: int) -> None:
    """Child mode: start-up and per-document CPU time of one implementation, as a JSON line.
    Start-up is what the check adds to a process: for langdetect, loading its 55 JSON profiles
    (as the old prepare() did); for language_id, importing it (and numpy) and prepare()."""
    sys.path.insert(0, str(ROOT))
    if impl == "langdetect":
        from pipeline.text import language_id

        def prob(text: str, codes: tuple[str, ...], max_chars: int = 600) -> float | None:
            probs = language_id.langdetect_probabilities(text[:max_chars], max_chars)
            return None if probs is None else sum(p for lang, p in probs if lang in codes)
        started = time.process_time()
        prob("start-up", ("en",))
    else:
        started = time.process_time()
        from pipeline.text import language_id

        language_id.prepare()
        prob = language_id.language_prob
    startup = time.process_time() - started
    from pipeline.text.documents import documents, read_utf8

    texts = []
    for path in sorted(Path(folder).glob("*.txt")):
        texts += [" ".join(doc) for doc in documents(read_utf8(path))]
    texts = texts[:n_docs]
    started = time.process_time()
    probs = [prob(text, (lang,)) for text in texts]
    per_doc_ms = (time.process_time() - started) / max(len(texts), 1) * 1000
    print(json.dumps({"startup": startup, "ms": per_doc_ms, "docs": len(texts), "probs": probs}))


def run_child(impl: str, lang: str, folder: Path, n_docs: int, cache: Path) -> dict:
    env = {**ENV, "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run([sys.executable, __file__, "--child", impl, lang, str(folder), str(n_docs)],
                         env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{impl} on {folder} failed:\n{out.stderr}")
    return json.loads(out.stdout.splitlines()[-1])


def make_sentences(dump: Path, lang: str, data_dir: Path) -> Path:
    for stage in (["download", "--dump", str(dump)], ["extract"], ["format"], ["split"]):
        subprocess.run(PIPELINE + ["--data-dir", str(data_dir), "--lang", lang, "--workers", "2"] + stage,
                       cwd=ROOT, env=ENV, check=True, stdout=subprocess.DEVNULL)
    return data_dir / lang / "sentences"


def bench(lang: str, folder: Path, runs: int, n_docs: int, work: Path) -> list[dict]:
    """Rows for one language: langdetect; language_id without, then with its disk cache."""
    results = {"langdetect": [], "language_id, no cache": [], "language_id, cached": []}
    for r in range(runs):
        cache = work / f"cache_{lang}_{r}"          # empty: the first run builds the cache
        results["langdetect"].append(run_child("langdetect", lang, folder, n_docs, cache))
        results["language_id, no cache"].append(run_child("language_id", lang, folder, n_docs, cache))
        results["language_id, cached"].append(run_child("language_id", lang, folder, n_docs, cache))
    reference = results["langdetect"][0]["probs"]
    base_ms = statistics.median(r["ms"] for r in results["langdetect"])
    rows = []
    for impl, res in results.items():
        ms = statistics.median(r["ms"] for r in res)
        rows.append({"lang": lang, "impl": impl, "docs": res[0]["docs"], "ms": ms,
                     "range": f"{min(r['ms'] for r in res):.2f}-{max(r['ms'] for r in res):.2f}",
                     "startup": statistics.median(r["startup"] for r in res), "speedup": base_ms / ms,
                     "same": all(r["probs"] == reference for r in res)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--sentences", action="append", default=[], metavar="LANG=FOLDER")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        impl, lang, folder, n_docs = args.child
        return child(impl, lang, folder, int(n_docs))
    work = Path(tempfile.mkdtemp(prefix="bench_language_id_"))
    rows = []
    try:
        folders = dict(item.split("=", 1) for item in args.sentences)
        for lang in folders or ("uk", "vi"):
            folder = Path(folders[lang]) if lang in folders else None
            if folder is None:
                dump = args.data / f"{lang}wiki.xml.xz"
                if not dump.is_file():
                    print(f"skipping {lang}: {dump} not found")
                    continue
                folder = make_sentences(dump, lang, work / "data")
            rows += bench(lang, folder, args.runs, args.docs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nmedians of {args.runs} runs, a fresh process each; CPU time (user+sys of the process); "
          "start-up = profiles loaded (langdetect) or import + prepare() (language_id); "
          "same = every probability identical to langdetect's")
    head = (f"{'lang':4} {'implementation':22} {'docs':>5} {'ms/doc':>7} {'range':>11} "
            f"{'speed-up':>8} {'start-up s':>10} {'same':>4}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['lang']:4} {r['impl']:22} {r['docs']:>5} {r['ms']:7.3f} {r['range']:>11} "
              f"{r['speedup']:7.1f}x {r['startup']:10.3f} {'yes' if r['same'] else 'NO':>4}")


if __name__ == "__main__":
    main()
