"""Share of real (non-pad) tokens per row: NVIDIA's sentence pairs against packed rows
(`pipeline encode --pack`), at seq 128 and 512; prints a table.

Usage:
    .venv/bin/python bench/bench_packing.py [--data /tmp/w2b_probe/data] [--langs uk vi]
        [--work /tmp/w2b_bench_packing]

Input: DATA/LANG/sharded and DATA/LANG/vocab as `pipeline run` leaves them (bench/bench_probe.py
makes them from ../shared/data/{uk,vi}wiki.xml.xz). Each setting is encoded into --work (the
data folder is not touched) with --dupe-factor 1: pairs at 128/20 and 512/80 (BERT's 15%), packed
rows at 128/40 and 512/160 (30%, the modern recipe). Reported per language and setting: rows,
real tokens / (rows x seq), the share of rows that are full, and the masked share of the
non-special tokens. The encode's own time is beside it (one worker).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETTINGS = [("pairs", 128, 20, 0.15), ("pairs", 512, 80, 0.15),
            ("packed", 128, 40, 0.3), ("packed", 512, 160, 0.3)]


def measure(folder: Path) -> dict:
    import h5py
    import numpy as np

    rows = real = full = masked = 0
    seq = 0
    for f in sorted(folder.rglob("*.hdf5")):
        with h5py.File(f, "r") as fh:
            m = fh["input_mask"][:]
            seq = m.shape[1]
            rows += len(m)
            real += int(m.sum())
            full += int((m.sum(1) == seq).sum())
            masked += int(np.count_nonzero(fh["masked_lm_positions"][:]))
    return {"rows": rows, "real_share": real / max(1, rows * seq), "full_rows": full / max(1, rows),
            "masked_per_row": masked / max(1, rows)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path("/tmp/w2b_probe/data"))
    p.add_argument("--langs", nargs="+", default=["uk", "vi"])
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_bench_packing"))
    p.add_argument("--runs", type=int, default=1, help="ignored: the counts are exact "
                   "(bench/run_all.py passes --runs)")
    args = p.parse_args(argv)
    from pipeline.stages.encode import encode

    missing = [lang for lang in args.langs if not (args.data / lang / "sharded").is_dir()]
    if missing:
        print(f"skipped: {args.data / missing[0] / 'sharded'} is not present (run bench/bench_probe.py)")
        return 0
    print("| lang | kind | seq / max pred | rows | real tokens | full rows | masked per row | encode s |")
    print("|---|---|---|---|---|---|---|---|")
    for lang in args.langs:
        for kind, seq, pred, prob in SETTINGS:
            out = args.work / lang / f"{kind}_{seq}"
            shutil.rmtree(out, ignore_errors=True)
            t0 = time.perf_counter()
            summary = encode(data_dir=args.data, lang=lang, workers=1, output=out, max_seq=seq,
                             max_pred=pred, masked_lm_prob=prob, dupe_factor=1,
                             pack=kind == "packed")
            dt = time.perf_counter() - t0
            m = measure(Path(summary["output"]))
            print(f"| {lang} | {kind} | {seq} / {pred} | {m['rows']:,} | {100 * m['real_share']:.1f}% | "
                  f"{100 * m['full_rows']:.1f}% | {m['masked_per_row']:.1f} | {dt:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
