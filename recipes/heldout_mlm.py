"""Did the model learn? Held-out masked-LM accuracy against the unigram baseline.

Usage:
    python scripts/heldout_mlm.py HF_DIR HDF5_DIR [--mask-share 0.15] [--max-rows 2000] [--device cuda]

HF_DIR is an export (`python -m trainer.export`), BERT or ModernBERT; HDF5_DIR an encode
output folder (its *training* and *test* files, pairs or packed rows). Every real token of the
held-out rows (the *test* files, up to --max-rows) is predicted once: each row is scored in
ceil(1 / mask-share) copies, each with a different --mask-share of its tokens replaced by
[MASK] (a seeded partition, so the figure is the same on every run). The baseline is the
accuracy of always guessing the most frequent token of the *training* rows, on the same
positions: what a model that learned only word frequencies scores. A model that learned from
the text's context beats it; one still at the unigram stage ties it. On --device cuda (what
`make pretrain` passes when it trained on a GPU) the model runs there under bf16 autocast.

Prints one line, e.g.
    held-out MLM accuracy 0.214 on 2,143 tokens (18 rows), unigram baseline 0.061 (',' every
    time): 3.5x the baseline
Needs torch, h5py and transformers.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from common.heldout_file import write_heldout

SEED = 12345


class NothingHeldOut(ValueError):
    """The encode folder has no test rows (a corpus too small to hold text out) or no training
    rows for the baseline: nothing to measure, which is not a fault of the model."""


def _restored(f, rows: int | None = None):
    """(input_ids with the static masks undone, input_mask) of an open HDF5 file."""
    import numpy as np

    n = len(f["input_ids"]) if rows is None else min(rows, len(f["input_ids"]))
    ids = f["input_ids"][:n].astype(np.int64)
    pos = f["masked_lm_positions"][:n].astype(np.int64)
    orig = f["masked_lm_ids"][:n].astype(np.int64)
    r, c = np.nonzero(pos > 0)
    ids[r, pos[r, c]] = orig[r, c]
    return ids, f["input_mask"][:n].astype(bool)


def _files(hdf5_dir: Path, kind: str) -> list[Path]:
    return sorted(p for p in Path(hdf5_dir).rglob(f"*_{kind}_*.hdf5") if p.is_file())


def unigram_counts(hdf5_dir: Path, special: list[int], vocab_size: int):
    """Token counts over the real, non-special tokens of the training rows."""
    import h5py
    import numpy as np

    counts = np.zeros(vocab_size, dtype=np.int64)
    for path in _files(hdf5_dir, "training"):
        with h5py.File(path, "r") as f:
            ids, real = _restored(f)
        counts += np.bincount(ids[real], minlength=vocab_size)[:vocab_size]
    counts[special] = 0
    return counts


def heldout_accuracy(model_dir: Path, hdf5_dir: Path, mask_share: float = 0.15,
                     max_rows: int = 2000, batch_size: int = 32, device: str = "cpu") -> dict:
    """{"accuracy", "tokens", "rows", "unigram_accuracy", "unigram_token"} (see the docstring),
    the model on `device`."""
    import h5py  # the heavy libraries, for the measurement only: the script's --help and the demo's
    import numpy as np  # other steps stay light
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from recipes.fill_mask import quiet_transformers, torch_device

    run_on = torch_device(device)
    quiet_transformers()
    if not _files(hdf5_dir, "test"):
        raise NothingHeldOut(f"{hdf5_dir} has no *_test_*.hdf5 files: nothing held out to measure on")
    if not _files(hdf5_dir, "training"):
        raise NothingHeldOut(f"{hdf5_dir} has no *_training_*.hdf5 files for the unigram baseline")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForMaskedLM.from_pretrained(str(model_dir)).eval().to(run_on)
    # on a GPU in bf16 (its tensor cores); on the CPU in fp32, as before
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=run_on.type == "cuda")
    special = sorted(set(tokenizer.all_special_ids))
    counts = unigram_counts(hdf5_dir, special, model.config.vocab_size)
    top = int(counts.argmax())

    rows, reals = [], []
    for path in _files(hdf5_dir, "test"):
        with h5py.File(path, "r") as f:
            ids, real = _restored(f, max_rows - len(rows))
        rows.extend(ids)
        reals.extend(real & ~np.isin(ids, special))
        if len(rows) >= max_rows:
            break
    groups = max(1, math.ceil(1 / mask_share))
    rng = np.random.default_rng(SEED)
    copies = []   # (row index, masked positions): each real token in exactly one copy
    for i, maskable in enumerate(reals):
        where = np.flatnonzero(maskable)
        where = where[rng.permutation(len(where))]
        copies += [(i, np.sort(part)) for part in np.array_split(where, groups) if len(part)]
    right = base = total = 0
    with torch.inference_mode(), autocast:
        for b in range(0, len(copies), batch_size):
            chunk = copies[b:b + batch_size]
            ids = np.stack([rows[i] for i, _ in chunk])
            attention = np.stack([rows[i] != tokenizer.pad_token_id for i, _ in chunk])
            truth = [ids[j, p].copy() for j, (_, p) in enumerate(chunk)]
            for j, (_, p) in enumerate(chunk):
                ids[j, p] = tokenizer.mask_token_id
            logits = model(input_ids=torch.from_numpy(ids).to(run_on),
                           attention_mask=torch.from_numpy(attention.astype(np.int64)).to(run_on)).logits
            for j, (_, p) in enumerate(chunk):
                guess = logits[j, torch.from_numpy(p).to(run_on)].argmax(-1).cpu().numpy()
                right += int((guess == truth[j]).sum())
                base += int((truth[j] == top).sum())
                total += len(p)
    return {"accuracy": right / max(1, total), "tokens": total, "rows": len(rows),
            "unigram_accuracy": base / max(1, total),
            "unigram_token": tokenizer.convert_ids_to_tokens(top)}


def save_result(r: dict, path: Path, model_dir: Path, hdf5_dir: Path, step: int | None = None) -> None:
    """The measure as JSON beside the run (`make pretrain`: RUN/heldout_mlm.json, the format of
    common/heldout_file.py), where `pipeline report --run RUN` shows it and the model card of the
    export of checkpoint `step` says it."""
    write_heldout(path, r, model_dir, hdf5_dir, summary_line(r), step)


def summary_line(r: dict) -> str:
    ratio = r["accuracy"] / r["unigram_accuracy"] if r["unigram_accuracy"] else float("inf")
    return (f"held-out MLM accuracy {r['accuracy']:.3f} on {r['tokens']:,} tokens "
            f"({r['rows']:,} rows), unigram baseline {r['unigram_accuracy']:.3f} "
            f"('{r['unigram_token']}' every time): {ratio:.1f}x the baseline")


def verdict_lines(r: dict | None, articles: int | None = None) -> list[str]:
    """The demo's closing lines: did the model learn, in one number against the baseline (r None:
    nothing was held out to measure on)."""
    if r is None:
        return ["== did it learn? Not measured: the corpus held no text out (too small for a test "
                "shard); a larger dump, or `pipeline shard --min-test-sentences`, holds some out."]
    ratio = r["accuracy"] / r["unigram_accuracy"] if r["unigram_accuracy"] else float("inf")
    verdict = ("it learned: it reads the context, not only how often words occur" if ratio >= 2
               else "it learned little beyond word frequencies: train longer" if ratio > 1.2
               else "it has not learned more than word frequencies yet: train longer")
    held_out = f"{articles} held-out articles" if articles else "held-out text"
    return [f"== did it learn? On {r['tokens']:,} tokens of {held_out} it never trained on, the "
            f"model guesses {100 * r['accuracy']:.1f}% of the masked tokens right;",
            f"   always guessing the most frequent token ('{r['unigram_token']}') gets "
            f"{100 * r['unigram_accuracy']:.1f}%: {ratio:.1f}x that: {verdict}."]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python scripts/heldout_mlm.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("model_dir", type=Path, help="an exported Hugging Face folder")
    p.add_argument("hdf5_dir", type=Path, help="an encode output folder (training + test files)")
    p.add_argument("--mask-share", type=float, default=0.15,
                   help="share of a row's tokens masked in each copy (default 0.15)")
    p.add_argument("--max-rows", type=int, default=2000, help="held-out rows read (default 2000)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the model runs")
    a = p.parse_args(argv)
    if not 0 < a.mask_share < 1:
        p.error("--mask-share must be between 0 and 1")
    if not (a.model_dir / "config.json").is_file():
        print(f"Error: {a.model_dir} holds no exported model (no config.json): run "
              "`python -m trainer.export` first", file=sys.stderr)
        return 1
    try:
        result = heldout_accuracy(a.model_dir, a.hdf5_dir, a.mask_share, a.max_rows, device=a.device)
    except (ValueError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(summary_line(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
