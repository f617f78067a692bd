"""What an encoded HDF5 file holds, as text and figures: decoded instances and masking statistics.

`pipeline inspect` prints them and `pipeline report` shows them; both read the file through
the HDF5 contract (pipeline/encoding/hdf5_format.py).

Usage:
    with h5py.File(path, "r") as f:
        a, b = render(f["input_ids"][0], f["input_mask"][0], f["masked_lm_positions"][0],
                      f["masked_lm_ids"][0], spec)       # "[CLS] Buda ##pest [MASK→is] [SEP]", ...
        segments = render_segments(f["input_ids"][0], f["input_mask"][0], ..., f["doc_starts"][0])
        st = statistics(f, spec, max_rows=50_000)        # masked share, 80/10/10, lengths, ...
"""
from __future__ import annotations

import numpy as np

from .context import THRESHOLDS, add_counts, segment_tokens

READ_ROWS = 8192


def render(ids, mask, masked_pos, masked_ids, spec) -> tuple[str, str]:
    """The A and B sides of one instance as text: masked positions as [MASK→orig], random
    replacements as {new→orig}, kept ones as <orig>."""
    out = _shown_tokens(ids, mask, masked_pos, masked_ids, spec)
    sep_token = spec.tokens[spec.sep_id]    # [SEP], or a tokenizer's own (</s>)
    sep = out.index(sep_token) if sep_token in out else len(out) - 1
    return " ".join(out[:sep + 1]), " ".join(out[sep + 1:])


def render_segments(ids, mask, masked_pos, masked_ids, spec, doc_starts) -> list[str]:
    """A packed row of layout 2 as its segments (one document's tokens each, split where
    doc_starts marks them), each shown as render shows tokens."""
    out = _shown_tokens(ids, mask, masked_pos, masked_ids, spec)
    cuts = [int(c) for c in np.flatnonzero(np.asarray(doc_starts)[:len(out)])] + [len(out)]
    if not cuts or cuts[0] != 0:
        cuts.insert(0, 0)
    return [" ".join(out[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]


def _shown_tokens(ids, mask, masked_pos, masked_ids, spec) -> list[str]:
    tokens = spec.tokens
    length = int(mask.sum())
    labels = {int(p): int(o) for p, o in zip(masked_pos, masked_ids) if p > 0}
    out = []
    for pos in range(length):
        t = tokens[int(ids[pos])]
        if pos in labels:
            orig = tokens[labels[pos]]
            if ids[pos] == spec.mask_id:
                t = f"[MASK→{orig}]"
            elif ids[pos] == labels[pos]:
                t = f"<{orig}>"
            else:
                t = f"{{{t}→{orig}}}"
        out.append(t)
    return out


def statistics(f, spec, max_rows: int | None = None) -> dict:
    """Counts over the first `max_rows` instances of an open HDF5 file (all when None): masked
    tokens and how they split into [MASK] / random / kept, random-next labels, lengths (and
    their histogram, `lengths`: instances per length 0..L), the share of real (non-pad) token
    slots `real_share`, invalid masked positions; where the file has doc_starts (packed layout
    2), `segments` and `context_tokens` (context.segment_tokens: the real tokens in segments
    of at least 512, 2,048, 8,192 tokens)."""
    n, L = f["input_ids"].shape
    n = n if max_rows is None else min(n, max_rows)
    special = np.array([spec.cls_id, spec.sep_id], dtype=np.int64)
    tot = {"instances": n, "tokens": 0, "masked": 0, "as_mask": 0, "kept": 0, "random": 0,
           "random_next": 0, "shorter": 0, "half": 0, "bad_positions": 0, "length_sum": 0}
    lengths = np.zeros(L + 1, dtype=np.int64)
    with_starts = "doc_starts" in f
    if with_starts:
        tot["segments"], tot["context_tokens"] = 0, {str(t): 0 for t in THRESHOLDS}
    for s in range(0, n, READ_ROWS):
        e = min(n, s + READ_ROWS)
        ids = f["input_ids"][s:e]
        mask = f["input_mask"][s:e]
        pos = f["masked_lm_positions"][s:e].astype(np.int64)
        orig = f["masked_lm_ids"][s:e]
        nsp = f["next_sentence_labels"][s:e]
        length = mask.sum(axis=1).astype(np.int64)
        lengths += np.bincount(length, minlength=L + 1)[:L + 1]
        valid = pos > 0
        count = valid.sum(axis=1)
        at = np.take_along_axis(ids, pos, axis=1)
        # non-special tokens: length - 3 for a pair, more for a packed row (a [SEP] per document)
        tot["tokens"] += int(((mask != 0) & ~np.isin(ids, special)).sum())
        tot["masked"] += int(count.sum())
        tot["as_mask"] += int(((at == spec.mask_id) & valid).sum())
        tot["kept"] += int(((at == orig) & valid).sum())
        tot["random_next"] += int(nsp.sum())
        tot["length_sum"] += int(length.sum())
        tot["shorter"] += int((length < L).sum())
        tot["half"] += int((length < L // 2).sum())
        # positions: a prefix of nonzero entries, ascending, inside the sequence, not special
        prefix_ok = (np.arange(pos.shape[1])[None, :] < count[:, None]) == valid
        ascending = np.where(valid[:, 1:], np.diff(pos, axis=1) > 0, True).all(axis=1)
        inside = np.where(valid, pos < length[:, None], True).all(axis=1)
        not_special = ~(valid & np.isin(orig, special)).any(axis=1)   # [CLS]/[SEP] never masked
        tot["bad_positions"] += int((~(prefix_ok.all(axis=1) & ascending & inside & not_special)).sum())
        if with_starts:
            starts = f["doc_starts"][s:e]
            tot["segments"] += int(((starts != 0) & (mask != 0)).sum())
            counts = segment_tokens(starts, mask)
            del counts["real"]
            add_counts(tot["context_tokens"], counts)
    tot["random"] = tot["masked"] - tot["as_mask"] - tot["kept"]
    tot["lengths"] = lengths.tolist()
    tot["real_share"] = tot["length_sum"] / (n * L) if n else None   # real (non-pad) slots
    return tot
