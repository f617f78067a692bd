"""The context evaluation's rows (trainer/data/context_views.py): the long segments of packed rows
and their masks, and every view scoring each masked token exactly once, at its own id, with
no more of the segment around it than the view's width."""
from __future__ import annotations

import numpy as np

from tests.helpers.packed_rows import mask_rows, pack_documents
from tests.helpers.synthetic_shards import CLS, FIRST_PIECE
from trainer.data.context_views import long_segments, view_batches, view_rows


def arrays(lengths, seq_len, seed=0):
    rng = np.random.default_rng(seed)
    docs = [list(rng.integers(FIRST_PIECE, 200, size=n)) for n in lengths]
    return mask_rows(pack_documents(docs, seq_len), max_pred=seq_len // 5, seed=seed, rate=0.15)


def test_only_segments_of_1024_tokens_or_more_with_their_masks():
    a = arrays([300, 1500, 900, 5000], 2048)
    segs = long_segments(a)
    # row 0: [CLS] 300 [SEP], [CLS] 1500 [SEP], [CLS] 243 of 900; row 1: [CLS] 657 [SEP], [CLS] 1388 of 5000
    lengths = [len(s.ids) for s in segs]
    assert lengths[:2] == [1502, 1389] and all(n >= 1024 for n in lengths)
    for s in segs:
        assert s.ids[0] == CLS and (s.positions >= 1).all() and (np.diff(s.positions) > 0).all()
    first = segs[0]
    row = a["input_ids"][0]
    pos = a["masked_lm_positions"][0]
    inside = pos[(pos > 302) & (pos < 302 + 1502)]
    assert (first.positions == inside - 302).all()
    assert (first.labels == a["masked_lm_ids"][0][np.isin(pos, inside)]).all()
    assert (first.ids == row[302:302 + 1502]).all()
    assert long_segments(a, min_len=6000) == []


def test_each_view_scores_every_masked_token_once_with_the_widths_context():
    segs = long_segments(arrays([3000, 1100, 2046], 2048, seed=1))
    everything = {(i, int(p)): int(lab) for i, s in enumerate(segs) for p, lab in zip(s.positions, s.labels)}
    for width in (128, 512, 2048):
        rows = view_rows(segs, width)
        seen = []
        for row in rows:
            assert len(row.ids) <= width and row.ids[0] == CLS
            assert (row.positions >= 1).all() and (row.positions < len(row.ids)).all()
            # the row is a run of one segment: find it, and the masked tokens' original places
            for i, s in enumerate(segs):
                body = row.ids[1:]
                starts = [j for j in range(1, len(s.ids) - len(body) + 1)
                          if (s.ids[j:j + len(body)] == body).all()]
                if starts:
                    seen += [(i, starts[0] + int(p) - 1, int(lab)) for p, lab in zip(row.positions, row.labels)]
                    break
            else:
                raise AssertionError("a row that is no run of a segment")
        assert sorted(seen) == sorted((i, p, lab) for (i, p), lab in everything.items())
        if width == 2048:
            assert len(rows) == len(segs)   # each segment whole
        else:
            assert all(len(r.ids) == width for r in rows)   # the last windows moved back, full


def test_batches_hold_the_rows_in_the_trainers_layout():
    segs = long_segments(arrays([3000, 1100], 2048, seed=2))
    rows = view_rows(segs, 128)
    batches = list(view_batches(rows, tokens=128 * 5, unpad=True))
    assert sum(b["input_ids"].shape[0] for b in batches) == len(rows)
    assert all(b["input_ids"].numel() <= 128 * 5 for b in batches)
    b = batches[0]
    assert b["unpadded"].segments == b["input_ids"].shape[0]   # one segment a row
    labels = b["masked_lm_labels"]
    assert int((labels >= 0).sum()) == sum(len(r.positions) for r in rows[:b["input_ids"].shape[0]])
