"""One shard into one HDF5 file of packed rows (`encode --pack`, layout 2), and what its rows
say about context: the encode stage's packed task and its part of the summary.

Usage:
    info = write_packed_file(shard, out_file, encoder, spec, task_seed, max_seq=8192,
                             max_pred=1229, masked_lm_prob=0.15, dupe_factor=1,
                             whole_word_masking=False, attrs={}, spill_dir=run.work_dir)
    summary.update(packed_summary(infos, max_seq))    # deciles, context shares (context.py)
    extra = {"article_token_bins": merged_bins(infos)}

The shard's ids are spilled to `spill_dir` and memory-mapped (spill.py), the rows are
computed a batch at a time from the plan (packing.py) and each batch is written as whole
HDF5 chunks (writer.py); so the memory is a batch of rows and a few numbers per document,
whatever the shard's size, and the file is the same bytes for any --workers. The context
figures are counted on the same batches: no second pass.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from common.atomic import atomic_path

from .context import (
    add_counts,
    deciles,
    length_bins,
    merge_bins,
    segment_tokens,
    shares,
    tokens_in_long_articles,
)
from .hdf5_format import PACKED_ATTR, PACKED_LAYOUT
from .masking import Masker
from .packing import pack_batch, plan_packed
from .spill import spilled_corpus
from .writer import InstanceFileWriter, batch_rows


class EmptyShard(ValueError):
    """The shard holds no sentence (the stage says so in one line)."""


def write_packed_file(shard: Path, out_file: Path, encoder, spec, task_seed: int, *,
                      max_seq: int, max_pred: int, masked_lm_prob: float, dupe_factor: int,
                      whole_word_masking: bool, attrs: dict, spill_dir: Path) -> dict:
    """Encode one shard's packed rows into `out_file` (atomically); returns its counts."""
    with spilled_corpus(shard, encoder, spill_dir) as corpus:
        if corpus.n_docs == 0:
            raise EmptyShard(shard)
        plan = plan_packed(corpus, max_seq=max_seq, dupe_factor=dupe_factor, seed=task_seed)
        masker = Masker(spec, max_seq=max_seq, max_pred=max_pred, masked_lm_prob=masked_lm_prob,
                        whole_word=whole_word_masking)
        rng = np.random.default_rng([task_seed & 0xFFFFFFFF, task_seed >> 32, 2])
        masked = 0
        context: dict = {}
        optional = ("doc_starts",) + (("word_starts",) if corpus.starts_file is not None else ())
        with atomic_path(out_file) as tmp:
            with InstanceFileWriter(tmp, len(plan), max_seq, max_pred, optional=optional,
                                    attrs={PACKED_ATTR: PACKED_LAYOUT, **attrs}) as writer:
                for rows in plan.batches(batch_rows(max_seq)):
                    arrays = pack_batch(corpus, plan, rows, masker, rng)
                    masked += int(np.count_nonzero(arrays["masked_lm_positions"]))
                    add_counts(context, segment_tokens(arrays["doc_starts"], arrays["input_mask"]))
                    writer.write(arrays)
        lengths = np.diff(corpus.doc_token_bounds)
        return {
            "shard": shard.name, "file": out_file.name, "instances": len(plan),
            "documents": corpus.n_docs, "sentences": corpus.n_sentences,
            "tokens": corpus.n_tokens, "text_bytes": shard.stat().st_size,
            "random_next": 0, "masked": masked, "real_tokens": context.pop("real"),
            "context_tokens": context, "long_article_tokens": tokens_in_long_articles(lengths),
            "article_max": int(lengths.max()), "article_token_bins": length_bins(lengths),
        }


def packed_summary(infos: list[dict], max_seq: int) -> dict:
    """The summary's packed figures over all shards: the real-token share of the rows, the
    articles' token-length deciles (and longest), the share of the tokens in articles of at
    least each of context.THRESHOLDS tokens, and the share of the rows' tokens whose segment
    is at least that long."""
    instances = sum(i["instances"] for i in infos)
    real = sum(i["real_tokens"] for i in infos)
    tokens = sum(i["tokens"] for i in infos)
    in_rows, in_articles = {}, {}
    for i in infos:
        add_counts(in_rows, i.get("context_tokens") or {})
        add_counts(in_articles, i.get("long_article_tokens") or {})
    return {"packed": True, "packed_layout": PACKED_LAYOUT,
            "real_token_share": round(real / max(1, instances * max_seq), 4),
            "article_tokens": {**deciles(merged_bins(infos)),
                               "max": max((i["article_max"] for i in infos), default=0)},
            "tokens_in_articles_of": shares(in_articles, tokens),
            "tokens_with_context": shares(in_rows, real)}


def merged_bins(infos: list[dict]) -> dict[str, int]:
    """The article-length histogram of all shards (context.length_bins)."""
    return merge_bins(i.get("article_token_bins") or {} for i in infos)

