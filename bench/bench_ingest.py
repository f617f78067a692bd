"""Ingest speed and memory: input MB per CPU-second for text, JSONL and Parquet, and peak
memory as the input grows (it should stay flat: ingest streams).

Usage:
    .venv/bin/python bench/bench_ingest.py                      # 1, 16, 128 MB; 3 runs of the small
    .venv/bin/python bench/bench_ingest.py --sizes 1 16 --runs 1
    .venv/bin/python bench/bench_ingest.py --sizes 16 128 --formats parquet --web   # --corpus's cost

Input: the sample dump's formatted paragraphs repeated (each document numbered, so no two are
equal) to each size, written as text (.txt), JSONL and Parquet (snappy, a row group per 1,000
documents, as Hugging Face datasets write it; its input MB is the compressed file). Each run
is `pipeline --workers 1 ingest` in a fresh process: CPU seconds (user + system) and peak RSS
(ru_maxrss) of that process. Medians over --runs for sizes up to 16 MB,
one run above.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.web_corpus import sample_documents  # noqa: E402

FORMATS = {"text": ".txt", "jsonl": ".jsonl", "parquet": ".parquet"}
ROW_GROUP = 1000   # rows per Parquet row group, as Hugging Face datasets' to_parquet writes them


def write_input(docs: list[list[str]], fmt: str, path: Path, mb: float) -> tuple[int, int]:
    """Repeat `docs` (numbered) into `path` until it holds about `mb` MB of text; (its size,
    the bytes of text in it)."""
    import json

    target, size, i = int(mb * 1_000_000), 0, 0
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        writer, batch = None, []
        while size < target:
            text = f"{i}. " + "\n".join(docs[i % len(docs)])
            batch.append(text)
            size += len(text.encode())
            i += 1
            if len(batch) == ROW_GROUP or size >= target:
                table = pa.table({"text": batch})
                writer = writer or pq.ParquetWriter(path, table.schema)
                writer.write_table(table)
                batch = []
        writer.close()
        return path.stat().st_size, size
    with open(path, "w", encoding="utf-8") as fh:
        while size < target:
            text = f"{i}. " + "\n".join(docs[i % len(docs)])
            line = json.dumps({"text": text}, ensure_ascii=False) + "\n" if fmt == "jsonl" else text + "\n\n"
            fh.write(line)
            size += len(line.encode())
            i += 1
    return path.stat().st_size, size


_CHILD = """
import json, resource, sys
from pipeline.cli import cli
try:
    cli(sys.argv[1:], prog_name="pipeline")
except SystemExit as exc:
    assert not exc.code, exc.code
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps([r.ru_utime + r.ru_stime, r.ru_maxrss / 1024]))
"""


def one_run(src: Path, data: Path, web: bool = False) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of `pipeline ingest` on `src` in a fresh process; `web`: as
    FineWeb-2's Hungarian part read through --corpus-root (each document's token estimate and
    metadata written beside the parts)."""
    import json

    how = ["--source", f"web={src}"]
    if web:
        repo = src.parent / "fineweb-2"
        shutil.rmtree(repo, ignore_errors=True)
        (repo / "data/hun_Latn/train").mkdir(parents=True)
        shutil.copy(src, repo / "data/hun_Latn/train/000_00000.parquet")
        how = ["--corpus", "fineweb-2", "--corpus-root", str(repo)]
    out = subprocess.run([sys.executable, "-c", _CHILD, "--data-dir", str(data), "-q", "--workers",
                          "1", "ingest", *how, "--force"],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    cpu, rss = json.loads(out.strip().splitlines()[-1])
    return cpu, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1, 16, 128], help="input MB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--formats", nargs="+", default=list(FORMATS), choices=list(FORMATS))
    ap.add_argument("--web", action="store_true",
                    help="Parquet also as a named corpus (ingest --corpus fineweb-2 --corpus-root)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        docs = sample_documents(tmp / "sample", ROOT / "data/sample/huwiki-sample.xml.bz2")
        print(f"`{' '.join(['python', 'bench/bench_ingest.py', *sys.argv[1:]])}`\n")
        print("| format | input MB | text MB | input MB per CPU-second | peak RSS MB | runs |")
        print("|---|---:|---:|---:|---:|---:|")
        for fmt in args.formats:
            for mb in sorted(args.sizes):
                src = tmp / f"in{FORMATS[fmt]}"
                size, text = write_input(docs, fmt, src, mb)
                runs = args.runs if mb <= 16 else 1
                for web in (False, True) if args.web and fmt == "parquet" else (False,):
                    results = [one_run(src, tmp / "data", web) for _ in range(runs)]
                    cpu = statistics.median(r[0] for r in results)
                    rss = max(r[1] for r in results)
                    name = "parquet as --corpus fineweb-2" if web else fmt
                    print(f"| {name} | {size / 1e6:.1f} | {text / 1e6:.1f} | {size / 1e6 / cpu:.1f} | "
                          f"{rss:.0f} | {runs} |",
                          flush=True)
                src.unlink()


if __name__ == "__main__":
    main()
