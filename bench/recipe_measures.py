"""What bench_recipes.py measures of a finished run besides the probe: held-out MLM accuracy
through the export, two ways, and the run's own loss curve from train_log.jsonl.

Held-out rows are packed rows (layout 2: `[CLS] doc [SEP]` segments marked by doc_starts). Read
whole, a row is several documents in one sequence with positions running on across them: what a
model trained `--doc_attention across` saw, not what a model trained within documents saw (its
positions restart at each document and it never attended from one to the next). Read per
document, each segment is its own sequence from position 0: what the within-documents model
saw, and what fine-tuning and every later use give a model (one text a sequence). Both are
reported so that neither attention mode is judged on the other's input.
"""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import torch
from transformers import AutoModelForMaskedLM


def _rows(heldout: Path, max_rows: int):
    """The first max_rows held-out rows (their *test* files): ids, mask, doc_starts, positions,
    original ids."""
    keys = ("input_ids", "input_mask", "doc_starts", "masked_lm_positions", "masked_lm_ids")
    parts, n = [], 0
    for f in sorted(heldout.rglob("*_test_*.hdf5")):
        with h5py.File(f, "r") as fh:
            take = min(len(fh["input_ids"]), max_rows - n)
            parts.append([fh[k][:take] for k in keys])
        n += take
        if n >= max_rows:
            break
    return [np.concatenate([p[i] for p in parts]) for i in range(len(keys))]


def _segments(ids, mask, starts, pos, orig):
    """Each row cut at its doc_starts: (segment ids, its masked positions, their originals)."""
    for r in range(len(ids)):
        real = int(mask[r].sum())
        cuts = [int(c) for c in np.flatnonzero(starts[r][:real])] + [real]
        marked = pos[r] > 0
        for a, b in zip(cuts, cuts[1:]):
            here = marked & (pos[r] >= a) & (pos[r] < b)
            if here.any():
                yield ids[r][a:b], pos[r][here] - a, orig[r][here]


def _score(model, batch, mask_id: int) -> np.ndarray:
    """[right, total, right at [MASK] inputs, total at [MASK] inputs] over a batch of (ids,
    positions, originals), padded with 0."""
    width = max(len(s[0]) for s in batch)
    ids = torch.zeros(len(batch), width, dtype=torch.long)
    att = torch.zeros_like(ids)
    for i, (seq, _, _) in enumerate(batch):
        ids[i, :len(seq)] = torch.from_numpy(seq.astype(np.int64))
        att[i, :len(seq)] = 1
    with torch.no_grad():
        pred = model(input_ids=ids, attention_mask=att).logits.argmax(-1).numpy()
    counts = np.zeros(4, dtype=np.int64)
    for i, (seq, p, o) in enumerate(batch):
        hit, masked = pred[i][p] == o, seq[p] == mask_id
        counts += [hit.sum(), len(p), (hit & masked).sum(), masked.sum()]
    return counts


def mlm_accuracies(hf_dir: Path, heldout: Path, max_rows: int, mask_id: int) -> dict:
    """Accuracy at the static 15% masks of the held-out packed rows: "rows" read whole, "docs"
    each document alone, and "docs_mask" the latter at the 80% of them that show [MASK] (a
    model trained mask-only never learned to copy the 10% kept tokens, which a 2019 model
    scores on without reading the context)."""
    model = AutoModelForMaskedLM.from_pretrained(hf_dir).eval()
    ids, mask, starts, pos, orig = _rows(heldout, max_rows)
    whole = [(ids[r][:int(mask[r].sum())], pos[r][pos[r] > 0], orig[r][pos[r] > 0])
             for r in range(len(ids))]
    docs = sorted(_segments(ids, mask, starts, pos, orig), key=lambda s: len(s[0]))
    out = {}
    for name, items in (("rows", whole), ("docs", docs)):
        counts = sum(_score(model, items[s:s + 64], mask_id) for s in range(0, len(items), 64))
        out[name] = counts[0] / max(1, counts[1])
        if name == "docs":
            out["docs_mask"] = counts[2] / max(1, counts[3])
    return out


def loss_curve(run_dir: Path, points: int = 4) -> dict:
    """The run's train MLM loss at `points` evenly spaced logged steps (the mean of the logged
    values around each, so one noisy batch does not decide it), and its own last evaluation."""
    train, ev = [], {}
    for line in (run_dir / "train_log.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "mlm_loss" in rec and "eval_mlm_loss" not in rec:
            train.append((rec["step"], rec["mlm_loss"]))
        if "eval_mlm_acc" in rec:
            ev = rec
    curve = []
    for k in range(1, points + 1):
        at = round(k * len(train) / points) - 1
        if at < 0:
            continue
        near = [loss for _, loss in train[max(0, at - 1):at + 2]]
        curve.append((train[at][0], sum(near) / len(near)))
    return {"curve": curve, "eval_mlm_acc": ev.get("eval_mlm_acc"),
            "eval_mlm_loss": ev.get("eval_mlm_loss")}
