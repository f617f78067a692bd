"""How good is the token estimate that sizes web slices (--max-tokens) and counts passes before
encode (pipeline/corpora/tokens.py), and what does it cost: the estimate of each corpus's
training shards against the tokens encode's WordPiece vocab really gives them, and the
estimate's speed.

Usage:
    .venv/bin/python bench/bench_web_tokens.py                       # the sample, uk and vi
    .venv/bin/python bench/bench_web_tokens.py --dumps hu=data/sample/huwiki-sample.xml.bz2 --runs 5

Each dump goes through `pipeline run --encode 128/20 --dupe-factor 1` (vocab of --vocab-size)
in a temporary data dir; the shards' documents are estimated with estimate_tokens and compared
with the tokens encode's manifest counts for the same shards (special tokens left out on both
sides). The speed is MB of shard text per second of estimate_tokens, the median of --runs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.corpora.tokens import TOKENS_PER_WORD, estimate_tokens  # noqa: E402
from pipeline.text.documents import documents, read_utf8  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
DEFAULT = {"hu": ROOT / "data/sample/huwiki-sample.xml.bz2", "uk": SHARED / "ukwiki.xml.xz",
           "vi": SHARED / "viwiki.xml.xz"}


def measure(lang: str, dump: Path, vocab_size: int, runs: int, work: Path) -> dict:
    data = work / lang
    subprocess.run([sys.executable, "-m", "pipeline", "-q", "--data-dir", str(data), "--lang", lang, "run",
                    "--dump", str(dump), "--encode", "128/20", "--dupe-factor", "1",
                    "--vocab-size", str(vocab_size)], check=True, cwd=ROOT)
    encode = next(p for p in data.glob(f"{lang}/hdf5_*") if (p / "manifest.json").is_file())
    manifest = json.loads((encode / "manifest.json").read_text())
    real = manifest["summary"]["tokens"]
    texts = ["\n".join(doc) for f in sorted((data / lang / "sharded").glob("*.txt"))
             for doc in documents(read_utf8(f))]
    estimated = sum(estimate_tokens(t) for t in texts)
    words = sum(len(t.split()) for t in texts)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    speeds = []
    for _ in range(runs):
        start = time.perf_counter()
        for t in texts:
            estimate_tokens(t)
        speeds.append(mb / (time.perf_counter() - start))
    return {"lang": lang, "documents": len(texts), "mb": mb, "words": words, "real": real,
            "estimated": estimated, "per_word": real / words, "error": estimated / real - 1,
            "speed": statistics.median(speeds), "runs": runs}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dumps", nargs="*", metavar="LANG=PATH",
                    help="dumps to measure [default: the sample, and uk, vi where ../shared has them]")
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", metavar="DIR", help="keep the data dirs there (a rerun reuses them)")
    args = ap.parse_args(argv)
    dumps = dict(d.split("=", 1) for d in args.dumps) if args.dumps else {
        k: v for k, v in DEFAULT.items() if Path(v).is_file()}
    with tempfile.TemporaryDirectory(prefix="bench-web-tokens-") as tmp:
        work = Path(args.keep or tmp)   # --keep: a rerun finds the finished stages and skips them
        rows = [measure(lang, Path(path), args.vocab_size, args.runs, work) for lang, path in dumps.items()]
    print(f"TOKENS_PER_WORD = {TOKENS_PER_WORD}; vocab {args.vocab_size:,}\n")
    print("| lang | documents | text MB | words | encode's tokens | tokens a word | estimated | error | "
          "estimate MB/s (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['lang']} | {r['documents']:,} | {r['mb']:.1f} | {r['words']:,} | {r['real']:,} | "
              f"{r['per_word']:.2f} | {r['estimated']:,} | {r['error']:+.1%} | {r['speed']:.0f} ({r['runs']} runs) |")


if __name__ == "__main__":
    main()
