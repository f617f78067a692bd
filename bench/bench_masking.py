"""Dynamic masking's cost and statistics: loader throughput per rank (static masks, dynamic,
dynamic whole-word), the training step's time, and the masks drawn over 10k instances.

    .venv/bin/python bench/bench_masking.py                        # uk HDF5 of bench_probe, else synthetic
    .venv/bin/python bench/bench_masking.py --input_dir DATA/uk/hdf5_.../ --vocab_file DATA/uk/vocab
    .venv/bin/python bench/bench_masking.py --step_runs 3 --steps 40   # also the training step

Loader rows: bench_loader.py's measure (median of --runs; samples/s from the first batch on,
with the background threads; CPU us per sample of the whole process). Step rows: the trainer
(BERT 4 layers, hidden 128, batch 64, one thread, fp32 CPU) for --steps steps with --masking
static and dynamic, alternated, median samples/s of its log after the first 10 steps.
Statistics: the masks of 10,000 training instances at epoch 0: share of candidate tokens
masked, [MASK] / random / kept, and whole-word integrity (words left partly masked).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from bench_loader import make_data, one_run  # noqa: E402
from bench_probe import MODEL  # noqa: E402

from tests.helpers.synthetic_shards import write_vocab  # noqa: E402
from trainer.data import find_shards, read_shard  # noqa: E402
from trainer.data.masking import DynamicMasker  # noqa: E402
from trainer.data.vocabulary import encode_vocab  # noqa: E402
from vocab.kinds import load_vocab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROBE_DATA = Path("/tmp/w2b_probe/data/uk")


def default_input() -> tuple[Path | None, Path | None]:
    found = sorted(PROBE_DATA.glob("hdf5_*_seq_len_128_*_dupe_factor_1"))
    return (found[0], PROBE_DATA / "vocab") if found else (None, None)


def loader_table(files, spec, args) -> None:
    maskers = {"static": None,
               "dynamic": DynamicMasker(spec, files[0].max_pred, 42),
               "dynamic, whole words": DynamicMasker(spec, files[0].max_pred, 42, whole_word=True)}
    print(f"{'masking':>22} {'batch':>6} {'samples/s per rank':>19} {'CPU us/sample':>14}")
    for batch in map(int, args.batch_sizes.split(",")):
        for name, masker in maskers.items():
            runs = [one_run(files, batch, 1, seed, masker) for seed in range(args.runs)]
            print(f"{name:>22} {batch:>6} {statistics.median(r[0] for r in runs):>19,.0f} "
                  f"{statistics.median(r[2] for r in runs):>14.1f}")


def mask_statistics(files, spec, n=10_000) -> None:
    rows, offset = [], 0
    for f in files:
        take = min(f.num_samples, n - offset)
        if take <= 0:
            break
        rows.append((read_shard(f.path, np.arange(take)), offset))
        offset += take
    cont = np.array([t.startswith("##") for t in spec.tokens])
    for whole in (False, True):
        masker = DynamicMasker(spec, files[0].max_pred, 42, whole_word=whole)
        cand = chosen = n_mask = n_rand = n_keep = split = words = 0
        for arrays, base in rows:
            original = masker.restore(arrays, "x")
            real = arrays["input_mask"].astype(bool) & ~masker.special[original]
            out = masker.apply({k: v.copy() for k, v in arrays.items()}, 0,
                               base + np.arange(len(original)), "x")
            pos = out["masked_lm_positions"]
            valid = np.cumprod(pos != 0, axis=1).astype(bool)
            was, now = np.take_along_axis(original, pos, 1)[valid], np.take_along_axis(out["input_ids"], pos, 1)[valid]
            cand += real.sum()
            chosen += valid.sum()
            n_mask += (now == spec.mask_id).sum()
            n_keep += (now == was).sum()
            n_rand += ((now != was) & (now != spec.mask_id)).sum()
            masked = np.zeros_like(real)
            np.put_along_axis(masked, pos, valid, axis=1)
            masked[:, 0] = False
            # a word: a candidate that is not a ## piece after a candidate, and its ## pieces
            follows = np.zeros_like(real)
            follows[:, 1:] = real[:, :-1]
            inner = cont[original] & follows & real
            starts = real & ~inner
            word = np.cumsum(starts, axis=1)
            for r in range(len(original)):
                ids = word[r][real[r]]
                m = masked[r][real[r]]
                partial = np.unique(ids[m]) if m.any() else []
                words += len(partial)
                split += sum(not m[ids == w].all() for w in partial)
        print(f"{'whole words' if whole else 'tokens':>12}: {len(rows) and offset:,} instances, "
              f"{chosen / cand:.4f} of {cand:,} candidate tokens masked; [MASK] {n_mask / chosen:.4f}, "
              f"random {n_rand / chosen:.4f}, kept {n_keep / chosen:.4f}; "
              f"{split} of {words:,} masked words only partly masked")


def step_table(input_dir: Path, vocab: Path, args) -> None:
    tmp = Path(tempfile.mkdtemp())
    cfg = tmp / "bert.json"
    cfg.write_text(json.dumps(dict(MODEL, vocab_size=len(load_vocab(vocab).tokens))))
    rates = {"static": [], "dynamic": []}
    for i in range(args.step_runs):
        for masking in rates:
            out = tmp / f"{masking}_{i}"
            cmd = [sys.executable, "trainer/run_pretraining.py", "--model_config", cfg, "--input_dir",
                   input_dir, "--vocab_file", vocab, "--output_dir", out, "--device", "cpu",
                   "--train_batch_size", 64, "--max_steps", args.steps, "--log_every", 5,
                   "--checkpoint_every", 10 ** 6, "--masking", masking, "--no-tensorboard"]
            subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True, capture_output=True,
                           env={"OMP_NUM_THREADS": "1", "PYTHONUTF8": "1", "PATH": "/usr/bin:/bin"})
            log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
            rates[masking].append(statistics.median(r["samples_per_sec"] for r in log
                                                    if "loss" in r and r["step"] > 10))
    s, d = statistics.median(rates["static"]), statistics.median(rates["dynamic"])
    print(f"training step (BERT 4x128, batch 64, 1 thread, {args.steps} steps, median of "
          f"{args.step_runs}): static {s:.1f} samples/s, dynamic {d:.1f} samples/s "
          f"({(s / d - 1) * 100:+.1f}% step time); runs {rates}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input_dir", type=Path)
    ap.add_argument("--vocab_file", type=Path)
    ap.add_argument("--batch_sizes", default="32,256")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--step_runs", type=int, default=0, help="also time the training step")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    input_dir, vocab = (args.input_dir, args.vocab_file) if args.input_dir else default_input()
    with tempfile.TemporaryDirectory() as tmp:
        if input_dir is None:
            input_dir = make_data(Path(tmp) / "hdf5", 4, 25000, 128, 20)
            vocab = write_vocab(Path(tmp) / "vocab", 32000)
        vocab = vocab or encode_vocab(input_dir)
        spec = load_vocab(vocab)
        files = find_shards(input_dir).train
        print(f"{input_dir}: {len(files)} training shards, {sum(f.num_samples for f in files):,} "
              f"samples, seq {files[0].seq_len} / pred {files[0].max_pred}; vocab {spec.size:,}; "
              f"median of {args.runs} runs")
        loader_table(files, spec, args)
        mask_statistics(files, spec)
        if args.step_runs:
            step_table(input_dir, vocab, args)


if __name__ == "__main__":
    main()
