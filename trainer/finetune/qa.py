"""Extractive question answering: contexts cut into overlapping windows (document stride),
answers as start/end pieces, and n-best span decoding back to context text.

Usage:
    feats = qa_features(tokenizer, examples, max_length=384, doc_stride=128, train=True)
    answers = decode_answers(feats, examples, start_logits, end_logits, version_2=False)

Training windows that do not contain the answer point at [CLS] (SQuAD v2's "no answer", and the
usual treatment of answer-less windows of v1.1 too), as BERT's and Hugging Face's run_qa do.
Decoding scores every start/end pair among the n best of each window (end not before start,
at most max_answer_length pieces, inside the context), keeps the best over all windows of a
question, and for v2.0 answers "" when the [CLS] score beats the best span.
"""
from __future__ import annotations

import numpy as np

from trainer.finetune.features import Features


def qa_features(tokenizer, examples, *, max_length: int, doc_stride: int, train: bool,
                max_question_pieces: int = 64) -> Features:
    """One row per window of (question, context); rows of training carry start/end positions.
    Questions are cut to `max_question_pieces` pieces (counted in `truncated`)."""
    questions = []
    truncated = 0
    for e in examples:
        q = e.question.lstrip()
        ids = tokenizer(q, add_special_tokens=False)["input_ids"]
        if len(ids) > max_question_pieces:
            truncated += 1
            q = tokenizer.decode(ids[:max_question_pieces])
        questions.append(q)
    stride = min(doc_stride, max_length // 2)
    enc = tokenizer(questions, [e.context for e in examples], truncation="only_second",
                    max_length=max_length, stride=stride, return_overflowing_tokens=True,
                    return_offsets_mapping=True, return_attention_mask=False)
    feats = Features(rows=[], truncated=truncated)
    per_example = np.bincount(enc["overflow_to_sample_mapping"], minlength=len(examples))
    feats.windows = int((per_example > 1).sum())
    segments = enc.get("token_type_ids")   # none from a tokenizer of a model without segments
    for r, ex_i in enumerate(enc["overflow_to_sample_mapping"]):
        seq_ids = enc.sequence_ids(r)
        offsets = [o if s == 1 else None for o, s in zip(enc["offset_mapping"][r], seq_ids)]
        row = {"input_ids": enc["input_ids"][r],
               **({"token_type_ids": segments[r]} if segments is not None else {})}
        if train:
            row["start_positions"], row["end_positions"] = _answer_pieces(examples[ex_i], offsets)
        feats.rows.append(row)
        feats.row_source.append(int(ex_i))
        feats.offsets.append(offsets)
    return feats


def _answer_pieces(example, offsets) -> tuple[int, int]:
    """(start, end) piece of the first answer inside this window, else (0, 0): [CLS]."""
    if not example.answers:
        return 0, 0
    text, start_char = example.answers[0]
    end_char = start_char + len(text)
    ctx = [i for i, o in enumerate(offsets) if o is not None]
    if not ctx or offsets[ctx[0]][0] > start_char or offsets[ctx[-1]][1] < end_char:
        return 0, 0
    start = next(i for i in ctx if offsets[i][1] > start_char)
    end = next(i for i in reversed(ctx) if offsets[i][0] < end_char)
    return start, max(start, end)


def decode_answers(feats: Features, examples, start_logits, end_logits, *, version_2: bool,
                   n_best: int = 20, max_answer_length: int = 30) -> dict[str, str]:
    """The predicted answer text per example id ("" = no answer, v2.0 only)."""
    best: dict[int, tuple[float, str]] = {}
    null: dict[int, float] = {}
    for r, ex_i in enumerate(feats.row_source):
        starts, ends = np.asarray(start_logits[r]), np.asarray(end_logits[r])
        offsets = feats.offsets[r]
        null[ex_i] = min(null.get(ex_i, np.inf), float(starts[0] + ends[0]))
        top_s = np.argsort(starts)[::-1][:n_best]
        top_e = np.argsort(ends)[::-1][:n_best]
        context = examples[ex_i].context
        for s in top_s:
            if s >= len(offsets) or offsets[s] is None:
                continue
            for e in top_e:
                if e >= len(offsets) or offsets[e] is None or e < s or e - s + 1 > max_answer_length:
                    continue
                score = float(starts[s] + ends[e])
                if ex_i not in best or score > best[ex_i][0]:
                    best[ex_i] = (score, context[offsets[s][0]:offsets[e][1]])
    answers = {}
    for i, ex in enumerate(examples):
        score, text = best.get(i, (-np.inf, ""))
        if version_2 and null.get(i, -np.inf) > score:
            text = ""
        answers[ex.id] = text
    return answers
