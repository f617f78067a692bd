"""How `make pretrain` (recipes/pretrain.py) sizes its steps on a GPU; its dry run
(recipes/pretrain_dry_run.py) prints them, sized the same way.

    tokens, why = gpu_tokens_per_step(budget_s=180, seq_lens=[128], shares=[1.0], model=base,
                                      card_gib=80, ranks=1, corpus_tokens=1_000_000)
    lines = step_lines(device, ranks, model, seq_lens, batches, tokens, card_gib)

The rule on a GPU (docs/training.md: A step in tokens): the tokens a step are the largest power
of two that is at most
  - ModernBERT's recipe, MODERNBERT_TOKENS (its 4,608 x 1,024 = 4.7M tokens a step, to a power
    of two), where the budget allows;
  - the tokens the budget trains (bench_gpu_modern.py's tokens/s of ModernBERT-base on one H100
    at each phase's length, scaled by the model's weights a token and the ranks, over the
    phases' shares of the budget) over MIN_STEPS: the schedule needs a few hundred steps
    (warmup, the stable phase, the decay; the budget's re-plans);
  - the corpus's tokens (its encode's count; before the encode, in a dry run, estimated from the
    dump: recipes/corpus_estimate.py) over EPOCH_STEPS: an epoch of a small corpus is still
    several steps;
and at least one micro-batch of the card on every rank (less would leave the card idle), and a
multiple of one row a rank of every phase (trainer/config/step_size.py).
"""
from __future__ import annotations

from pathlib import Path

from common.budget import BudgetError, parse_budget
from common.encode_manifest import encode_manifest
from common.numbers import plural
from recipes.commands import DemoError
from recipes.long_recipe import LONG
from recipes.pretrain_commands import PACKED, ROOT
from trainer.config.step_size import row_unit, size_steps
from trainer.runtime.card import CardError, card_rows, micro_tokens, model_shape

MODERNBERT_TOKENS = 4_194_304     # ModernBERT's 4.7M tokens a step, to a power of two
MIN_STEPS = 300                   # the steps a budget should at least run
EPOCH_STEPS = 10                  # the steps an epoch of the corpus should at least take
# bench/README.md, bench_gpu_modern.py: ModernBERT-base, one H100, real tokens/s by row length
BENCH_TOKENS_PER_S = {128: 391_126, 1024: 336_897, 8192: 231_123}
BENCH_MODEL = {"hidden_size": 768, "num_hidden_layers": 22, "intermediate_size": 1152}


def body_weights(model: dict) -> int:
    """The weights a token meets in the encoder: what its training FLOPs grow with."""
    hidden, layers, inter, _ = model_shape(model)
    return layers * (4 * hidden * hidden + 3 * hidden * inter)


def tokens_per_s(seq_len: int, model: dict, ranks: int) -> float:
    """The bench's tokens/s at the nearest length measured, for this model and these ranks."""
    near = min(BENCH_TOKENS_PER_S, key=lambda n: abs(n - seq_len))
    return BENCH_TOKENS_PER_S[near] * body_weights(BENCH_MODEL) / max(1, body_weights(model)) * ranks


def pow2_floor(n: float) -> int:
    return 1 << (max(1, int(n)).bit_length() - 1)


def trained_tokens(budget_s: float, seq_lens, shares, model: dict, ranks: int) -> list[float]:
    """The tokens each phase trains in its share of the budget, at the bench's pace."""
    return [share * budget_s * tokens_per_s(n, model, ranks) for n, share in zip(seq_lens, shares)]


def planned_reads(a, device: str, ranks: int, model: dict) -> list[float] | None:
    """The tokens each phase of the run reads on a GPU (None on a CPU: its pace is timed first)."""
    if device != "cuda":
        return None
    phases = LONG[device] if a.long else None
    return trained_tokens(parse_budget(a.budget), [p.max_seq for p in phases] if phases else [PACKED["max_seq"]],
                          [p.share for p in phases] if phases else [1.0], model, ranks)


def gpu_tokens_per_step(budget_s: float, seq_lens, shares, model: dict, card_gib: float, ranks: int,
                        corpus_tokens: int | None = None, corpus_how: str = "counted by encode") -> tuple[int, str]:
    """(tokens a step, the rule's numbers: a line and one line a bound) for a GPU run; see the
    module docstring. `corpus_how`: where `corpus_tokens` comes from (an estimate says so)."""
    trained = sum(trained_tokens(budget_s, seq_lens, shares, model, ranks))
    bounds = [(MODERNBERT_TOKENS, "ModernBERT's recipe"),
              (trained / MIN_STEPS, f"the budget: {trained / 1e6:,.0f}M tokens at the bench's pace / "
                                    f"{MIN_STEPS} steps")]
    if corpus_tokens:
        bounds.append((corpus_tokens / EPOCH_STEPS,
                       f"the corpus: {corpus_tokens:,} tokens ({corpus_how}) / {EPOCH_STEPS} steps"))
    least = min(b for b, _ in bounds)
    floor = micro_tokens(card_gib, model) * ranks
    unit = row_unit(seq_lens, ranks)
    tokens = max(pow2_floor(least), floor, unit)
    tokens = max(unit, tokens // unit * unit)
    card = f"one micro-batch of the {card_gib:g} GiB card on {'each of ' if ranks > 1 else ''}{plural(ranks, 'rank')}"
    why = (f"the least bound below, {least:,.0f}, to a power of two" if tokens == pow2_floor(least) else
           f"{card}, {floor:,}: more than the least bound below, {least:,.0f}" if tokens == floor else
           f"one row a rank of every phase, {unit:,}")
    width = len(f"{max(b for b, _ in bounds):,.0f}")
    lines = [f"tokens a step: {tokens:,} ({why})"] + [f"   {b:>{width},.0f}  {w}" for b, w in bounds]
    if not corpus_tokens:
        lines.append("   (the corpus's bound is left out: there is no dump here to estimate it from)")
    return tokens, "\n".join(lines)


def step_lines(device: str, ranks: int, model: dict, seq_lens, batches, tokens: int | None,
               card_gib: float | None) -> list[str]:
    """One line a phase: its micro-batch, accumulation and tokens a step, as the trainer will
    size them (trainer/start/parts.py: size_steps_in_tokens) for `device`. `batches`: each phase's
    --train_batch_size, None where the card decides."""
    if tokens is None:   # the batch in rows (CPU): no accumulation
        return [f"phase {i + 1} ({n:,}-token rows): micro-batch {b} rows x 1 accumulation x {plural(ranks, 'rank')} "
                f"= {b * n * ranks:,} tokens a step" for i, (n, b) in enumerate(zip(seq_lens, batches))]
    caps = [b if b is not None else card_rows(card_gib, model, n) if device == "cuda" else 32
            for n, b in zip(seq_lens, batches)]
    sizes = size_steps(tokens, seq_lens, ranks, caps)
    return [z.line(i + 1, n, ranks, len(seq_lens)).replace("step size, ", "")
            for i, (n, z) in enumerate(zip(seq_lens, sizes))]


def corpus_tokens(hdf5: Path) -> int | None:
    """The tokens `pipeline encode` wrote into the folder (its manifest's count), None before."""
    return (encode_manifest(hdf5, "summary").get("summary") or {}).get("tokens")


def step_size(a, device: str, ranks: int, model: dict, hdf5: list[Path], card_gib: float | None,
              estimate: int | None = None):
    """(tokens a step or None, the lines saying why or None): --tokens-per-step, or on a GPU the
    rule (recipes/pretrain_plan.py) with the corpus's tokens as encode counted them, else
    `estimate` (recipes/corpus_estimate.py: a dry run before the encode); a CPU run keeps its
    batch in rows."""
    if a.tokens_per_step or device != "cuda":
        return a.tokens_per_step, None

    try:
        budget_s = parse_budget(a.budget)
    except BudgetError as exc:
        raise DemoError(str(exc).replace("--train_budget", "--budget")) from None
    lengths = [p.max_seq for p in LONG[device]] if a.long else [PACKED["max_seq"]]
    shares = [p.share for p in LONG[device]] if a.long else [1.0]
    try:   # the longest rows must fit the card at one row a micro-batch
        card_rows(card_gib, model, max(lengths))
    except CardError as exc:
        raise DemoError(f"--device cuda: {exc}") from None
    counted = corpus_tokens(ROOT / hdf5[0])
    how = "counted by encode" if counted else "estimated from the dump"
    return gpu_tokens_per_step(budget_s, lengths, shares, model, card_gib, ranks, counted or estimate, how)
