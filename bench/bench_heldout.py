"""What make pretrain's held-out measure costs (recipes/heldout_mlm.py): a seeded sample of
--max-tokens held-out tokens against every held-out row, on one export and its encode folder.

    .venv/bin/python bench/bench_heldout.py          # make pretrain's uk run: runs/uk_modern/hf, data/uk/hdf5_*_packed
    .venv/bin/python bench/bench_heldout.py --model M --hdf5 H --caps 4096,2048,0 --runs 5 --device cpu

Without --model it reads the run of `make pretrain LANG=uk DUMP=../shared/data/ukwiki.xml.xz
BUDGET=5m` in this checkout, and skips itself (one line) where there is none.

Each cap (0: every held-out row, up to 2,000) is measured --runs times, alternating with the
others, in this process; the seconds are heldout_accuracy's whole call (the model's load, the
unigram counts over the training rows, the scoring), what make pretrain's `held-out accuracy: N s`
line times. The table: rows and tokens scored, the accuracy with its standard error over the
rows, the ratio to the unigram baseline with its error, and the median seconds (every run's in
brackets). The figures are the same on every run (seeded); the seconds are not.

`--static` adds the other accuracy of the same held-out rows, the trainer's eval's: the masks
the encode stored (80% [MASK], 10% a random token, 10% the token itself) scored through the
export, all of them and by input, so that the two figures can be told apart (issue 60).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recipes.heldout_mlm import _files, heldout_accuracy  # noqa: E402


def static_masks(model_dir: Path, hdf5: Path) -> dict:
    """{input kind: (right, masks)} of the test rows' stored masks, scored through the export."""
    import h5py
    import numpy as np
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForMaskedLM.from_pretrained(str(model_dir)).eval()
    counts = {k: [0, 0] for k in ("all", "[MASK]", "random", "kept")}
    for path in _files(hdf5, "test"):
        with h5py.File(path, "r") as f:
            ids, real = f["input_ids"][:].astype(np.int64), f["input_mask"][:].astype(np.int64)
            pos, orig = f["masked_lm_positions"][:].astype(np.int64), f["masked_lm_ids"][:].astype(np.int64)
        for b in range(0, len(ids), 32):
            with torch.inference_mode():
                guess = model(input_ids=torch.from_numpy(ids[b:b + 32]),
                              attention_mask=torch.from_numpy(real[b:b + 32])).logits.argmax(-1).numpy()
            for j in range(len(guess)):
                p, o = pos[b + j][pos[b + j] > 0], orig[b + j][pos[b + j] > 0]
                shown, right = ids[b + j][p], guess[j][p] == o
                for kind, at in (("all", shown >= 0), ("[MASK]", shown == tokenizer.mask_token_id),
                                 ("kept", shown == o), ("random", (shown != o) & (shown != tokenizer.mask_token_id))):
                    counts[kind][0] += int(right[at].sum())
                    counts[kind][1] += int(at.sum())
    return counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=ROOT / "runs" / "uk_modern" / "hf",
                   help="an export (python -m trainer.export)")
    p.add_argument("--hdf5", type=Path, default=None,
                   help="its encode folder (default: data/uk's packed 128-token folder)")
    p.add_argument("--caps", default="4096,0", help="--max-tokens values, comma-separated (0: every row)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--device", default="cpu")
    p.add_argument("--static", action="store_true", help="also the trainer's eval's static masks, by input")
    a = p.parse_args(argv)
    hdf5 = a.hdf5 or next(iter(sorted((ROOT / "data" / "uk").glob("hdf5_*_seq_len_128_*_packed"))), None)
    if not (a.model / "config.json").is_file() or hdf5 is None:
        print(f"bench_heldout: skipped: no export at {a.model} or no encode folder: run make pretrain LANG=uk "
              "DUMP=../shared/data/ukwiki.xml.xz BUDGET=5m first, or give --model and --hdf5")
        return 0
    caps = [int(c) for c in a.caps.split(",")]
    seconds, results = {c: [] for c in caps}, {}
    for _ in range(a.runs):
        for cap in caps:
            t0 = time.perf_counter()
            results[cap] = heldout_accuracy(a.model, hdf5, device=a.device, max_tokens=cap)
            seconds[cap].append(time.perf_counter() - t0)
    print(f"$ {' '.join(sys.argv)}")
    print("| --max-tokens | rows (of held out) | tokens | accuracy ± SE | x unigram ± SE | median s (runs) |")
    print("|---|---|---|---|---|---|")
    for cap in caps:
        r = results[cap]
        runs = ", ".join(f"{s:.1f}" for s in seconds[cap])
        print(f"| {cap or 'every row'} | {r['rows']:,} ({r['rows_held_out']:,}) | {r['tokens']:,} | "
              f"{r['accuracy']:.3f} ± {r['standard_error']:.3f} | {r['ratio']:.2f} ± {r['ratio_standard_error']:.2f} | "
              f"{statistics.median(seconds[cap]):.1f} ({runs}) |")
    if a.static:
        print("\n| the test rows' static masks, input | masks | accuracy |\n|---|---|---|")
        for kind, (right, n) in static_masks(a.model, hdf5).items():
            print(f"| {kind} | {n:,} | {right / max(1, n):.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
