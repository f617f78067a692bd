"""Held-out evaluation: masked-LM loss and accuracy on the *test* shards (and next-sentence loss
and accuracy where the model trains that head), summed over ranks.

    ev = evaluate(module, shards.test, config, env, forward)   # {"eval_mlm_loss": ..., ...}
    warning = eval_size_warning(ev["eval_instances"], shards.test, config.eval_max_samples)

The test shards keep their static masks whatever --masking says: every evaluation of a run, and
of runs to be compared, scores the same masked tokens. Their inputs are 80% [MASK], 10% a random
token and 10% the token itself, which a model learns to copy: the accuracy counts all three, and
the log line says so (common/heldout_file.py's STATIC_MASKS), beside make pretrain's held-out
accuracy at [MASK] alone.
"""
from __future__ import annotations

import torch

from common.heldout_file import STATIC_MASKS
from common.numbers import signed
from pipeline.encoding.hdf5_format import MIN_EVAL_INSTANCES, few_eval_instances
from trainer.data.loader import eval_batches


def evaluate(module, test_shards, config, env, forward, batch_size: int | None = None) -> dict:
    """`forward(module, batch)` runs the model as training does (autocast); see the module doc.
    `batch_size`: a phase's (default --eval_batch_size)."""
    module.eval()
    # [mlm loss sum, mlm correct, mlm count, nsp loss sum, nsp correct, nsp count, instances]
    acc = torch.zeros(7, dtype=torch.float64)
    with torch.no_grad():
        for batch in eval_batches(test_shards, batch_size or config.eval_batch_size, env.rank, env.world_size,
                                  config.eval_max_samples, unpad=config.unpadded_rows,
                                  within=config.doc_attention == "within"):
            batch = {k: v.to(env.device) for k, v in batch.items()}
            out = forward(module, batch)
            m, b = out.mlm_labels.numel(), batch["input_ids"].shape[0]
            acc[:3] += torch.tensor([out.mlm_loss.item() * m,
                                     (out.mlm_logits.argmax(-1) == out.mlm_labels).sum().item(), m],
                                    dtype=torch.float64)
            acc[6] += b
            if out.nsp_logits is not None:
                acc[3:6] += torch.tensor([
                    (out.nsp_loss.item() if out.nsp_loss is not None else 0.0) * b,
                    (out.nsp_logits.argmax(-1) == batch["next_sentence_labels"]).sum().item(), b,
                ], dtype=torch.float64)
    module.train()
    acc = env.all_reduce_sum(acc.to(env.device)).cpu()
    mlm_n = max(acc[2].item(), 1)
    res = {"eval_mlm_loss": acc[0].item() / mlm_n, "eval_mlm_acc": acc[1].item() / mlm_n}
    if acc[5].item() > 0:   # a next-sentence head that was trained
        res.update(eval_nsp_loss=acc[3].item() / acc[5].item(), eval_nsp_acc=acc[4].item() / acc[5].item())
    res["eval_instances"] = int(acc[6].item())
    res["eval_loss"] = res["eval_mlm_loss"] + res.get("eval_nsp_loss", 0.0)
    return res


def eval_size_warning(n: int, test_shards, max_samples: int | None) -> str | None:
    """One line when the eval's `n` instances are too few to mean much, with the fix."""
    available = sum(s.num_samples for s in test_shards)
    if max_samples is not None and max_samples < min(available, MIN_EVAL_INSTANCES):
        return (f"eval on only {n:,} instances: raise --eval_max_samples {max_samples} "
                f"(the test shards hold {available:,})")
    return few_eval_instances(n)


def evaluate_languages(module, languages, config, env, forward) -> dict:
    """Each language's held-out shards evaluated apart (at most --eval_max_samples each): its
    figures under `KEY/code` (eval_mlm_loss/hr ...), and as the overall figures the mean over the
    languages that have test shards, each language counting alike; eval_instances is their sum."""
    per = {lang.code: evaluate(module, lang.shards.test, config, env, forward)
           for lang in languages if lang.shards.test}
    res = {}
    for key in ("eval_mlm_loss", "eval_mlm_acc", "eval_nsp_loss", "eval_nsp_acc"):
        if per and all(key in ev for ev in per.values()):
            res[key] = sum(ev[key] for ev in per.values()) / len(per)
    res["eval_instances"] = sum(ev["eval_instances"] for ev in per.values())
    res["eval_loss"] = res["eval_mlm_loss"] + res.get("eval_nsp_loss", 0.0)
    for code, ev in per.items():
        res.update({f"{key}/{code}": value for key, value in ev.items()})
    return res


def eval_line(step: int, ev: dict, codes=()) -> str:
    """The log line of an evaluation; with languages, each one's MLM loss and accuracy after."""
    nsp = (f" nsp {ev['eval_nsp_loss']:.4f} (acc {ev['eval_nsp_acc']:.3f})"
           if "eval_nsp_loss" in ev else "")
    line = (f"step {step} eval on {ev['eval_instances']} instances: mlm {ev['eval_mlm_loss']:.4f} "
            f"(acc {ev['eval_mlm_acc']:.3f} {STATIC_MASKS}){nsp}")
    if "eval_context_gain" in ev:   # trainer/evaluation/context.py
        line += (f"; context gain {signed(ev['eval_context_gain'], digits=4)} (accuracy "
                 f"{ev['eval_context_acc_long']:.3f} with the whole segment, "
                 f"{ev['eval_context_acc_512']:.3f} with 512 tokens, "
                 f"{ev['eval_context_acc_128']:.3f} with 128, on {ev['eval_context_tokens']:,} tokens)")
    codes = [c for c in codes if f"eval_mlm_loss/{c}" in ev]
    if codes:
        line += f"; the mean of {len(codes)} languages: " + ", ".join(
            f"{c} {ev[f'eval_mlm_loss/{c}']:.4f} ({ev[f'eval_mlm_acc/{c}']:.3f})" for c in codes)
    return line


def eval_size_warnings(ev: dict, languages, test_shards, max_samples: int) -> list[str]:
    """eval_size_warning for each language's test shards (prefixed "code: "), else the phase's."""
    tests = [(f"{lang.code}: ", ev[f"eval_instances/{lang.code}"], lang.shards.test)
             for lang in languages if f"eval_instances/{lang.code}" in ev]
    return [where + w for where, n, shards in tests or [("", ev["eval_instances"], test_shards)]
            if (w := eval_size_warning(n, shards, max_samples))]
