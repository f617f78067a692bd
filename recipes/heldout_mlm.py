"""Did the model learn? Held-out masked-LM accuracy against the unigram baseline.

Usage:
    python scripts/heldout_mlm.py HF_DIR HDF5_DIR [--max-tokens 4096] [--mask-share 0.15] [--device cuda]
    python scripts/heldout_mlm.py HF_DIR HDF5_DIR --max-tokens 0 [--max-rows 2000]   # every held-out row

HF_DIR is an export (`python -m trainer.export`), BERT or ModernBERT; HDF5_DIR an encode
output folder (its *training* and *test* files, pairs or packed rows). Every real token of the
held-out rows read is predicted once, masked as [MASK]: each row is scored in
ceil(1 / mask-share) copies, each with a different --mask-share of its tokens replaced by
[MASK] (a seeded partition, so the figure is the same on every run). The rows read are a
seeded sample of the *test* files' rows, drawn until they hold --max-tokens tokens (4,096:
seconds on a CPU, where every held-out row of a 2.5 MB dump took a minute or two, issue 60),
or, with --max-tokens 0, the first --max-rows of them. The accuracy comes with its standard
error over the rows read (the rows are the sample: a row's tokens are not independent). The
baseline is the accuracy of always guessing the most frequent token of the *training* rows
(counted over the first UNIGRAM_TOKENS of them), on the same positions: what a model that
learned only word frequencies scores. A model that learned from the text's context beats it;
one still at the unigram stage ties it. On --device cuda (what `make pretrain` passes when it
trained on a GPU) the model runs there under bf16 autocast.

This is not the accuracy of the trainer's eval line: that one scores the test rows' static
masks, a tenth of which show the token itself (common/heldout_file.py names both).

Prints one line, e.g.
    held-out MLM accuracy 0.214 ± 0.009, every token masked once as [MASK], on 4,102 tokens
    (33 of 188 held-out rows, a seeded sample), unigram baseline 0.061 (',' every time): 3.5x
    (± 0.2) the baseline
Needs torch, h5py and transformers.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from common.heldout_file import EVERY_TOKEN, STATIC_MASKS, verdict, write_heldout
from common.numbers import ratio_error

SEED = 12345
MAX_TOKENS = 4096          # the sample's tokens (0: every row, up to max_rows); see the docstring
UNIGRAM_TOKENS = 5_000_000  # training tokens counted for the baseline: its most frequent token is settled long before


class NothingHeldOut(ValueError):
    """The encode folder has no test rows (a corpus too small to hold text out) or no training
    rows for the baseline: nothing to measure, which is not a fault of the model."""


def _restored(f, rows=None):
    """(input_ids with the static masks undone, input_mask) of an open HDF5 file: all its rows,
    or the ascending indices `rows`."""
    import numpy as np

    take = slice(None) if rows is None else rows
    ids = f["input_ids"][take].astype(np.int64)
    pos = f["masked_lm_positions"][take].astype(np.int64)
    orig = f["masked_lm_ids"][take].astype(np.int64)
    r, c = np.nonzero(pos > 0)
    ids[r, pos[r, c]] = orig[r, c]
    return ids, f["input_mask"][take].astype(bool)


def _files(hdf5_dir: Path, kind: str) -> list[Path]:
    return sorted(p for p in Path(hdf5_dir).rglob(f"*_{kind}_*.hdf5") if p.is_file())


def unigram_counts(hdf5_dir: Path, special: list[int], vocab_size: int, max_tokens: int = UNIGRAM_TOKENS):
    """Token counts over the real, non-special tokens of the training rows (whole files, until
    `max_tokens` are counted: each shard is a seeded draw of the corpus's documents)."""
    import h5py
    import numpy as np

    counts = np.zeros(vocab_size, dtype=np.int64)
    for path in _files(hdf5_dir, "training"):
        with h5py.File(path, "r") as f:
            ids, real = _restored(f)
        counts += np.bincount(ids[real], minlength=vocab_size)[:vocab_size]
        if counts.sum() >= max_tokens:
            break
    counts[special] = 0
    return counts


def heldout_rows(files: list[Path], special, max_tokens: int, max_rows: int):
    """(rows, maskable, rows held out): the held-out rows to score, restored, in file order, and
    which of their tokens are maskable (real, not special). With `max_tokens`, a seeded sample of
    all the test files' rows, drawn until it holds that many tokens (all of them where they hold
    fewer); without, the first `max_rows`."""
    import h5py
    import numpy as np

    sizes = []
    for path in files:
        with h5py.File(path, "r") as f:
            sizes.append(len(f["input_ids"]))
    starts, total = np.cumsum([0] + sizes), sum(sizes)
    order = np.random.default_rng(SEED).permutation(total) if max_tokens else np.arange(min(total, max_rows))
    chosen, tokens, at = [], 0, 0
    while at < len(order) and (tokens < max_tokens if max_tokens else True):
        take = order[at:at + 64]   # rows a read; taken in the draw's order, so the cap cuts at random
        at += len(take)
        read = {}
        for i, path in enumerate(files):
            mine = np.sort(take[(take >= starts[i]) & (take < starts[i + 1])])
            if len(mine):
                with h5py.File(path, "r") as f:
                    ids, real = _restored(f, (mine - starts[i]).tolist())
                read.update((int(g), (ids[j], real[j] & ~np.isin(ids[j], special))) for j, g in enumerate(mine))
        for g in take.tolist():
            if max_tokens and tokens >= max_tokens:
                break
            chosen.append((g, *read[g]))
            tokens += int(read[g][1].sum())
    chosen.sort(key=lambda c: c[0])   # file order: the masks' seeded partition follows it
    return [c[1] for c in chosen], [c[2] for c in chosen], total


def standard_error(right, total) -> float:
    """The standard error of sum(right) / sum(total) over rows (a ratio estimator: the rows are
    the sample, their tokens clustered in them); 0 for fewer than two rows."""
    import numpy as np

    right, total = np.asarray(right, dtype=float), np.asarray(total, dtype=float)
    n = len(right)
    if n < 2 or not total.sum():
        return 0.0
    share = right.sum() / total.sum()
    return float(math.sqrt(n / (n - 1) * ((right - share * total) ** 2).sum()) / total.sum())


def heldout_accuracy(model_dir: Path, hdf5_dir: Path, mask_share: float = 0.15,
                     max_rows: int = 2000, batch_size: int = 32, device: str = "cpu",
                     max_tokens: int = MAX_TOKENS) -> dict:
    """{"accuracy", "standard_error", "tokens", "rows", "rows_held_out", "unigram_accuracy",
    "unigram_token", "ratio", "ratio_standard_error", "max_tokens"} (see the docstring), the
    model on `device`."""
    import numpy as np  # the heavy libraries, for the measurement only: the script's --help and the demo's
    import torch  # other steps stay light
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

    rows, reals, held_out = heldout_rows(_files(hdf5_dir, "test"), special, max_tokens, max_rows)
    groups = max(1, math.ceil(1 / mask_share))
    rng = np.random.default_rng(SEED)
    copies = []   # (row index, masked positions): each real token in exactly one copy
    for i, maskable in enumerate(reals):
        where = np.flatnonzero(maskable)
        where = where[rng.permutation(len(where))]
        copies += [(i, np.sort(part)) for part in np.array_split(where, groups) if len(part)]
    per_row = np.zeros((len(rows), 3), dtype=np.int64)   # right, baseline right, tokens
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
            for j, (i, p) in enumerate(chunk):
                guess = logits[j, torch.from_numpy(p).to(run_on)].argmax(-1).cpu().numpy()
                per_row[i] += (int((guess == truth[j]).sum()), int((truth[j] == top).sum()), len(p))
    right, base, total = per_row.sum(0).tolist()
    return {"accuracy": right / max(1, total), "standard_error": standard_error(per_row[:, 0], per_row[:, 2]),
            "tokens": total, "rows": len(rows), "rows_held_out": held_out,
            "unigram_accuracy": base / max(1, total),
            "unigram_token": tokenizer.convert_ids_to_tokens(top),
            "ratio": right / base if base else float("inf"),
            "ratio_standard_error": standard_error(per_row[:, 0], per_row[:, 1]) if base else 0.0,
            "max_tokens": max_tokens}


def save_result(r: dict, path: Path, model_dir: Path, hdf5_dir: Path, step: int | None = None) -> None:
    """The measure as JSON beside the run (`make pretrain`: RUN/heldout_mlm.json, the format of
    common/heldout_file.py), where `pipeline report --run RUN` shows it and the model card of the
    export of checkpoint `step` says it."""
    write_heldout(path, r, model_dir, hdf5_dir, summary_line(r), step)


def ratio_of(r: dict) -> float:
    return r["accuracy"] / r["unigram_accuracy"] if r["unigram_accuracy"] else float("inf")


def rows_read(r: dict) -> str:
    """'33 of 188 held-out rows, a seeded sample', '2,000 of 5,120 held-out rows, the first' or '188 rows'."""
    held_out = r.get("rows_held_out", r["rows"])
    how = "a seeded sample" if r.get("max_tokens") else "the first"
    return f"{r['rows']:,} of {held_out:,} held-out rows, {how}" if r["rows"] < held_out else f"{r['rows']:,} rows"


def summary_line(r: dict) -> str:
    se = f" ± {r['standard_error']:.3f}" if "standard_error" in r else ""
    return (f"held-out MLM accuracy {r['accuracy']:.3f}{se}, {EVERY_TOKEN}, on {r['tokens']:,} tokens "
            f"({rows_read(r)}), unigram baseline {r['unigram_accuracy']:.3f} "
            f"('{r['unigram_token']}' every time): {ratio_of(r):.1f}x{ratio_error(r)} the baseline")


def verdict_lines(r: dict | None, articles: int | None = None) -> list[str]:
    """The demo's closing lines: did the model learn, in one number against the baseline (r None:
    nothing was held out to measure on)."""
    if r is None:
        return ["== did it learn? Not measured: the corpus held no text out (too small for a test "
                "shard); a larger dump, or `pipeline shard --min-test-sentences`, holds some out."]
    held_out = f"{articles} held-out articles" if articles else "held-out text"
    sample = f" ({rows_read(r)})" if r.get("rows", 0) < r.get("rows_held_out", 0) else ""
    se = f" ± {100 * r['standard_error']:.1f}%" if "standard_error" in r else ""
    return [f"== did it learn? On {r['tokens']:,} tokens of {held_out} it never trained on{sample}, "
            f"{EVERY_TOKEN}, the model guesses {100 * r['accuracy']:.1f}%{se} right;",
            f"   always guessing the most frequent token ('{r['unigram_token']}') gets "
            f"{100 * r['unigram_accuracy']:.1f}%: {ratio_of(r):.1f}x that{ratio_error(r)}: {verdict(ratio_of(r))}."]


def trainer_eval_line(run_dir: Path) -> str:
    """The closing line that names the trainer's own held-out accuracy (its last eval record in
    train_log.jsonl) for what it measures, beside the one above; "" without an eval."""
    import json

    log, last = Path(run_dir) / "train_log.jsonl", None
    for line in (log.read_text(encoding="utf-8").splitlines() if log.is_file() else []):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "eval_mlm_acc" in record:
            last = record
    if last is None:
        return ""
    return (f"   (the trainer's eval at step {last['step']} said acc {last['eval_mlm_acc']:.3f}: {STATIC_MASKS}, "
            "where a kept token can be copied; the figure above is at [MASK] alone)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python scripts/heldout_mlm.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("model_dir", type=Path, help="an exported Hugging Face folder")
    p.add_argument("hdf5_dir", type=Path, help="an encode output folder (training + test files)")
    p.add_argument("--max-tokens", type=int, default=MAX_TOKENS,
                   help=f"held-out tokens scored, a seeded sample of rows (default {MAX_TOKENS:,}); "
                        "0: every held-out row up to --max-rows (minutes on a CPU)")
    p.add_argument("--mask-share", type=float, default=0.15,
                   help="share of a row's tokens masked in each copy (default 0.15)")
    p.add_argument("--max-rows", type=int, default=2000,
                   help="with --max-tokens 0: the held-out rows read (default 2000)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the model runs")
    a = p.parse_args(argv)
    problem = ("--mask-share must be between 0 and 1, e.g. 0.15" if not 0 < a.mask_share < 1 else
               "--max-tokens must be 0 (every held-out row) or more, e.g. 4096" if a.max_tokens < 0 else
               f"{a.model_dir} holds no exported model (no config.json): run `python -m trainer.export` first"
               if not (a.model_dir / "config.json").is_file() else None)
    if problem:
        print(f"Error: {problem}", file=sys.stderr)
        return 1
    try:
        result = heldout_accuracy(a.model_dir, a.hdf5_dir, a.mask_share, a.max_rows, device=a.device,
                                  max_tokens=a.max_tokens)
    except (ValueError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(summary_line(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
