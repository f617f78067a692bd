"""Does the model read the long context? The masked tokens deep inside long held-out articles,
scored with the whole article around them and with only 512 or 128 tokens around them.

    res = evaluate_context(module, test_shards, env, forward, long_width=2048, batch_tokens=16384,
                           unpad=True, max_samples=200)   # {} when the rows hold no long segment
    res["eval_context_gain"]     # accuracy with the whole segment - accuracy with 512 around the mask
    line = context_line(res)

The held-out rows are the first `max_samples` of the test files (as the evaluation reads them,
each rank its part); their segments of at least 2 x 512 tokens (trainer/data/context_views.py)
are scored in three views of the same masked tokens: *long*, each segment its own row of up to
`long_width` tokens (the model's length: the whole row's segment, as the trainer evaluates it
within documents; a learned table shorter than the segment cuts it into windows of its length),
and *512* and *128*, the segment cut into consecutive windows of 511 and 127 tokens, each its own
row after a [CLS]. The records (train_log.jsonl, the card, the report) hold each view's accuracy
and loss, the number of scored tokens and segments, and `eval_context_gain`. A model that reads
its context gains; one trained on 128-token rows, or whose attention cannot reach that far,
does not (bench/README.md, bench_long_context.py).
"""
from __future__ import annotations

import torch

from common.numbers import signed
from trainer.data.context_views import MIN_SEGMENT, SHORT_VIEWS, long_segments, view_batches, view_rows
from trainer.data.loader import heldout_rows
from trainer.data.shards import DOC_STARTS
from trainer.evaluation.heldout import evaluate

VIEWS = ("long",) + tuple(str(w) for w in reversed(SHORT_VIEWS))   # long, 512, 128
PREFIX = "eval_context_"


def has_long_segments(seq_len: int) -> bool:
    """Whether rows of `seq_len` tokens can hold a segment long enough to be scored."""
    return seq_len >= MIN_SEGMENT


def evaluate_context(module, test_shards, env, forward, long_width: int, batch_tokens: int, unpad: bool,
                     max_samples: int | None = None) -> dict:
    """The context evaluation (see the module doc) of `module` run by `forward(module, batch)`,
    summed over ranks; {} when no rank found a long segment with masked tokens."""
    segments = [s for arrays in heldout_rows(test_shards, env.rank, env.world_size, max_samples, (DOC_STARTS,))
                if DOC_STARTS in arrays for s in long_segments(arrays)]
    widths = {"long": long_width, **{str(w): w for w in SHORT_VIEWS}}
    # per view: [right, loss sum, tokens]; then the segments
    acc = torch.zeros(len(VIEWS) * 3 + 1, dtype=torch.float64)
    acc[-1] = len(segments)
    was_training = module.training
    module.eval()
    with torch.no_grad():
        for v, view in enumerate(VIEWS):
            for batch in view_batches(view_rows(segments, widths[view]), batch_tokens, unpad):
                batch = {k: val.to(env.device) for k, val in batch.items()}
                out = forward(module, batch)
                m = out.mlm_labels.numel()
                acc[3 * v:3 * v + 3] += torch.tensor([
                    (out.mlm_logits.argmax(-1) == out.mlm_labels).sum().item(), out.mlm_loss.item() * m, m],
                    dtype=torch.float64)
    module.train(was_training)
    acc = env.all_reduce_sum(acc.to(env.device)).cpu()
    tokens = int(acc[2].item())
    if not tokens:
        return {}
    res = {f"{PREFIX}tokens": tokens, f"{PREFIX}segments": int(acc[-1].item())}
    for v, view in enumerate(VIEWS):
        res[f"{PREFIX}acc_{view}"] = acc[3 * v].item() / tokens
        res[f"{PREFIX}loss_{view}"] = acc[3 * v + 1].item() / tokens
    res[f"{PREFIX}gain"] = res[f"{PREFIX}acc_long"] - res[f"{PREFIX}acc_512"]
    res[f"{PREFIX}long_width"] = long_width
    return res


def phase_context(module, phase, config, env, forward) -> dict:
    """The context evaluation of a run's phase (trainer/loop.py): its held-out rows, at most
    --eval_max_samples, in batches of the phase's evaluation, the long view the whole segment
    (the model's positions cover the phase's rows); {} where the rows are too short."""
    if not has_long_segments(phase.seq_len):
        return {}
    return evaluate_context(module, phase.shards.test, env, forward, phase.seq_len,
                            batch_tokens=phase.eval_batch_size * phase.seq_len,
                            unpad=config.unpadded_rows, max_samples=config.eval_max_samples)


def phase_evaluation(module, phase, config, env, forward) -> dict:
    """A phase's held-out evaluation (trainer/loop.py): MLM loss and accuracy on its test rows in
    its batches (unless --eval_batch_size says otherwise), and on long rows the context evaluation."""
    ev = evaluate(module, phase.shards.test, config, env, forward, batch_size=phase.eval_batch_size)
    ev.update(phase_context(module, phase, config, env, forward))
    return ev


def context_line(res: dict) -> str:
    """The evaluation in one line (the log, recipes/pretrain.py, python -m trainer.evaluation)."""
    if not res:
        return (f"context evaluation: no held-out segment of {MIN_SEGMENT:,}+ tokens with masked tokens "
                "(the held-out articles are shorter than that, or their rows are: encode them at "
                "--max-seq 2048 or more)")
    p = PREFIX
    return (f"context evaluation on {res[p + 'tokens']:,} masked tokens in {res[p + 'segments']:,} held-out "
            f"segments of {MIN_SEGMENT:,}+ tokens: accuracy {res[p + 'acc_long']:.4f} with the whole "
            f"segment (up to {res[p + 'long_width']:,} tokens), {res[p + 'acc_512']:.4f} with 512 tokens "
            f"around the mask, {res[p + 'acc_128']:.4f} with 128: context gain {signed(res[p + 'gain'], digits=4)}")
