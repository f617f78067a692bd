"""The whole pipeline on Wikipedia plus a second source, on the local pool and on Dask: the
same bytes? How long, and what each source kept?

Usage:
    .venv/bin/python bench/bench_mix.py                          # ../shared/data/ukwiki.xml.xz
    .venv/bin/python bench/bench_mix.py --dump ../shared/data/viwiki.xml.xz --lang vi

The second source ("web", JSONL compressed with zstd) is written from the dump's own formatted
articles (tests/helpers/web_corpus.py): 40 exact copies, 40 near copies (5% of the words
changed, two paragraphs swapped), 300 new documents of sentences from different articles.
Then `pipeline --workers 2 run --dump DUMP --source web=... --weight web=2 --vocab-size 8000
--encode 128/20` twice in fresh data folders: the local process pool, and `--scheduler local`
(a Dask LocalCluster of 2 worker processes). Every output file but the manifests, report.html
and the vocab report (they record seconds) is compared byte for byte.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.web_corpus import planted_corpus, sample_documents, write_corpus  # noqa: E402

SKIP = ("manifest.json", "report.html", "vocab_report.json")


def every_output(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in SKIP}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", type=Path, default=ROOT.parent / "shared/data/ukwiki.xml.xz")
    ap.add_argument("--lang", default="uk")
    args = ap.parse_args()
    if not args.dump.is_file():
        raise SystemExit(f"skipped: {args.dump} is not there (give --dump)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        docs = sample_documents(tmp / "prep", args.dump)
        web = write_corpus(tmp / "web.jsonl.zst",
                           [d for _k, d in planted_corpus(docs, seed=0, copies=40, near=40, new=300)],
                           "jsonl.zst")
        print(f"`{' '.join(['python', 'bench/bench_mix.py', *sys.argv[1:]])}`\n")
        print("| executor | wall s | CPU s (processes waited for) |")
        print("|---|---:|---:|")
        for mode in ("local", "dask"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.time()
            dask = ["--scheduler", "local"] if mode == "dask" else []
            subprocess.run([sys.executable, "-m", "pipeline", "--data-dir", str(tmp / mode), "--lang",
                            args.lang, "--workers", "2", *dask, "-q", "run", "--dump", str(args.dump),
                            "--source", f"web={web}", "--weight", "web=2", "--vocab-size", "8000",
                            "--encode", "128/20"],
                           check=True, cwd=ROOT, stderr=subprocess.DEVNULL)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            print(f"| {mode} | {time.time() - started:.1f} | {cpu:.1f} |")
        local, dask = every_output(tmp / "local" / args.lang), every_output(tmp / "dask" / args.lang)
        differ = sorted(k for k in set(local) | set(dask) if local.get(k) != dask.get(k))
        print(f"\n{len(local)} output files; differing: {', '.join(differ) or 'none'}\n")
        lang_dir = tmp / "local" / args.lang
        dedup = json.loads((lang_dir / "deduped/manifest.json").read_text())["summary"]["per_source"]
        shard = json.loads((lang_dir / "sharded/manifest.json").read_text())["summary"]["sources"]
        encode = json.loads(next(lang_dir.glob("hdf5_*/manifest.json")).read_text())["sources"]
        print("| source | read | exact | near | kept by dedup | weight | training docs | test docs "
              "| encoded training docs |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, d in dedup.items():
            s = shard.get(name, {})
            print(f"| {name} | {d['documents']} | {d['exact']} | {d['near']} | {d['kept']} | "
                  f"{s.get('weight')} | {s.get('training_documents')} | {s.get('test_documents')} | "
                  f"{encode.get(name, {}).get('training_documents')} |")


if __name__ == "__main__":
    main()
