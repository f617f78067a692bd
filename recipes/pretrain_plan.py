"""How `make pretrain` (recipes/pretrain.py) sizes its steps on a GPU, and its dry run: every
command it would run, with its phases, micro-batch and tokens a step, for the device asked
(a card that is not here too: --device cuda --gpu-memory 80), nothing run, nothing written.

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
  - the corpus's tokens (its encode's count) over EPOCH_STEPS: an epoch of a small corpus is
    still several steps;
and at least one micro-batch of the card on every rank (less would leave the card idle), and a
multiple of one row a rank of every phase (trainer/config/step_size.py).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from common.budget import BudgetError, parse_budget
from common.encode_manifest import encode_manifest
from pipeline.encoding.hdf5_format import output_folder_name
from recipes.commands import DemoError, say, shown
from recipes.demo_probe import MIN_TEST_SENTENCES, probe_command
from recipes.long_recipe import LONG, phase_list
from recipes.passes import passes_lines, planned_passes
from recipes.pretrain_commands import PACKED, ROOT, encode, forced, later_stages, pipeline, run_batch, train_command
from recipes.vocab_rule import MODEL_TYPE
from recipes.web_corpora import check, shard_weights, text_steps
from trainer.config.errors import ConfigError
from trainer.config.step_size import row_unit, size_steps
from trainer.runtime.card import CardError, card_rows, micro_tokens, model_shape
from vocab.kinds import load_tokenizer

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
                        corpus_tokens: int | None = None) -> tuple[int, str]:
    """(tokens a step, the rule's numbers in one line) for a GPU run; see the module docstring."""
    trained = sum(trained_tokens(budget_s, seq_lens, shares, model, ranks))
    bounds = [(MODERNBERT_TOKENS, "ModernBERT's recipe"),
              (trained / MIN_STEPS, f"{trained / 1e6:,.0f}M tokens in the budget / {MIN_STEPS} steps")]
    if corpus_tokens:
        bounds.append((corpus_tokens / EPOCH_STEPS, f"the corpus's {corpus_tokens:,} tokens / {EPOCH_STEPS} steps"))
    top, which = min(bounds)
    floor = micro_tokens(card_gib, model) * ranks
    unit = row_unit(seq_lens, ranks)
    tokens = max(pow2_floor(top), floor, unit)
    tokens = max(unit, tokens // unit * unit)
    said = "; ".join(f"{b:,.0f} ({w})" for b, w in bounds)
    why = (f"tokens a step {tokens:,}: the largest power of two under the least of {said}, at least one "
           f"micro-batch of the {card_gib:g} GiB card on each of {ranks} rank(s) ({floor:,})"
           + ("" if corpus_tokens else "; the corpus is not encoded yet, so its bound is left out"))
    return tokens, why


def step_lines(device: str, ranks: int, model: dict, seq_lens, batches, tokens: int | None,
               card_gib: float | None) -> list[str]:
    """One line a phase: its micro-batch, accumulation and tokens a step, as the trainer will
    size them (trainer/start/parts.py: size_steps_in_tokens) for `device`. `batches`: each phase's
    --train_batch_size, None where the card decides."""
    if tokens is None:   # the batch in rows (CPU): no accumulation
        return [f"phase {i + 1} ({n:,}-token rows): micro-batch {b} rows x 1 accumulation x {ranks} rank(s) "
                f"= {b * n * ranks:,} tokens a step" for i, (n, b) in enumerate(zip(seq_lens, batches))]
    caps = [b if b is not None else card_rows(card_gib, model, n) if device == "cuda" else 32
            for n, b in zip(seq_lens, batches)]
    sizes = size_steps(tokens, seq_lens, ranks, caps)
    return [z.line(i + 1, n, ranks, len(seq_lens)).replace("step size, ", "")
            for i, (n, z) in enumerate(zip(seq_lens, sizes))]


def corpus_tokens(hdf5: Path) -> int | None:
    """The tokens `pipeline encode` wrote into the folder (its manifest's count), None before."""
    return (encode_manifest(hdf5, "summary").get("summary") or {}).get("tokens")


def step_size(a, device: str, ranks: int, model: dict, hdf5: list[Path], card_gib: float | None):
    """(tokens a step or None, the line saying why or None): --tokens-per-step, or on a GPU the
    rule (recipes/pretrain_plan.py); a CPU run keeps its batch in rows."""
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
    return gpu_tokens_per_step(budget_s, lengths, shares, model, card_gib, ranks,
                               corpus_tokens(ROOT / hdf5[0]))


def dry_run(a, device: str, ranks: int, model: dict, card_gib: float | None, vocab_size) -> None:
    """--dry-run: every command this run would run, with the training's phases, micro-batch and
    tokens a step on `device` (a `card_gib` GiB card on CUDA), and its passes over each source's
    text (recipes/passes.py); nothing is run or written."""
    lang_dir, card = a.data_dir / a.lang, f", a {card_gib:g} GiB card" if card_gib else ""
    say(f"== dry run: what this command runs on {device} ({ranks} rank(s){card}), budget {a.budget}; "
        "nothing is run or written")
    for cmd, _step in text_steps(a):   # with --corpora: ingest and dedup after format
        say(f"$ {shown(cmd)}")
    vocab = ["--vocab-size", vocab_size or "N"]
    if not vocab_size:
        say("vocab: N below is the rule's size (scripts/vocab_rule.py) once the corpus is filtered")
    vocab += ["--model-type", a.model_type] if a.model_type != MODEL_TYPE else []
    for stage in later_stages():
        extra = vocab if stage == "vocab" else shard_weights(a) if stage == "shard" else []
        say(f"$ {shown(pipeline(a, stage, *extra, *forced(a)))}")
    rows = [(p.max_seq, p.max_pred) for p in LONG[device]] if a.long else [(PACKED["max_seq"], PACKED["max_pred"])]
    for n, pred in rows:
        say(f"$ {shown(encode(a, n, pred))}")
    spec = load_tokenizer(lang_dir / "vocab") if (lang_dir / "vocab").is_dir() else None
    hdf5 = [lang_dir / output_folder_name(spec.lower_case if spec else False, n, pred, PACKED["masked_lm_prob"],
                                          dupe_factor=PACKED["dupe_factor"], packed=True,
                                          tokenizer_suffix=spec.folder_suffix() if spec else "")
            for n, pred in rows]
    out = a.runs / f"{a.lang}_modern{'_long' if a.long else ''}"
    tokens, why = step_size(a, device, ranks, model, hdf5, card_gib)
    for line in [why] if why else []:
        say(line)
    batch = run_batch(a, device)
    listed = phase_list(LONG[device], [ROOT / h for h in hdf5], batch) if a.long else None
    batches = [p.get("train_batch_size") for p in listed] if listed else [batch]
    try:
        lines = step_lines(device, ranks, model, [n for n, _ in rows], batches, tokens, card_gib)
    except (CardError, ConfigError) as exc:   # --tokens-per-step that the rows do not divide
        raise DemoError(str(exc).replace("--tokens_per_step", "--tokens-per-step")) from None
    for line in lines:
        say(f"step: {line}")
    for line in passes_lines(a, *planned_passes(a, planned_reads(a, device, ranks, model), hdf5, check(a), tokens)):
        say(line)   # how often it reads each source's text
    if listed:
        say(f"phases ({out / 'phases.json'}): {json.dumps(listed)}")
    train, _ = train_command(a, device, ranks, out / "recipe_model.json", lang_dir / "vocab", hdf5, out, tokens)
    hf = out / "hf"
    for cmd in (train, [sys.executable, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf],
                [sys.executable, "scripts/heldout_mlm.py", hf, hdf5[0]]):
        say(f"$ {shown(cmd)}")
    if a.long:
        say(f"$ python -m trainer.evaluation --model {hf} --input_dir {hdf5[-1]} --device {device}")
    say(f"$ python scripts/fill_mask.py {hf} <3 held-out sentences, a word hidden in each>")
    if a.probe != "off":
        say(f"$ {shown(probe_command(hf, lang_dir, out / 'probe'))}"
            + (f"  (only with {MIN_TEST_SENTENCES}+ held-out probe sentences)" if a.probe == "auto" else ""))
    say(f"$ {shown(pipeline(a, 'report', '--run', out))}")
