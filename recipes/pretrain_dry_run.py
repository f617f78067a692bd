"""`make pretrain PRETRAIN_OPTS=--dry-run` (recipes/pretrain.py --dry-run): every command the run
would run, as it runs them, with what it plans: the corpus's tokens (encode's count, or before
the pipeline has run an estimate from the dump: recipes/corpus_estimate.py), the vocab, the
model's size, the tokens a step on a GPU (recipes/pretrain_plan.py), and each phase's
micro-batch, minutes and steps; for the device asked (a card that is not here too: --device cuda
--gpu-memory 80). Nothing is run or written.

    dry_run(args, "cuda", ranks=1, model=base_config, card_gib=80, vocab_size=None)
"""
from __future__ import annotations

import json
from pathlib import Path

from common.budget import BudgetError, parse_budget
from common.numbers import plural
from common.progress import duration
from pipeline.core.errors import StageError
from pipeline.encoding.hdf5_format import output_folder_name
from pipeline.stages.extract import resolve_dump
from recipes.commands import DemoError, say, shown
from recipes.corpus_estimate import CorpusEstimate, estimate_corpus, rounded
from recipes.demo_probe import MIN_TEST_SENTENCES, probe_command
from recipes.long_recipe import LONG, phase_list
from recipes.passes import passes_lines, planned_passes
from recipes.pretrain_commands import (
    PACKED,
    ROOT,
    RUN_MODEL,
    context_command,
    encode,
    export_command,
    fill_mask_command,
    forced,
    heldout_command,
    later_stages,
    pipeline,
    run_batch,
    train_command,
)
from recipes.pretrain_plan import corpus_tokens, planned_reads, step_lines, step_size, trained_tokens
from recipes.vocab_rule import MODEL_TYPE, body_parameters, suggest_vocab_size
from recipes.web_corpora import check, shard_weights, text_steps
from trainer.config.errors import ConfigError
from trainer.runtime.card import CardError
from vocab.kinds import load_tokenizer


def the_dump(a) -> Path | None:
    """--dump, else the dump a finished download stage holds, else None (not downloaded yet)."""
    if a.dump is not None:
        return a.dump
    try:
        return resolve_dump(a.data_dir, a.lang, None)[0]
    except StageError:
        return None


def model_line(model: dict, vocab: int | None) -> str:
    """'model: ModernBERT, 22 layers, hidden 768: about 89.4M parameters (86.3M in the layers,
    3.1M in the embeddings of 4,000 pieces)'."""
    hidden, body = model["hidden_size"], body_parameters(model)
    head = f"model: ModernBERT, {model['num_hidden_layers']} layers, hidden {hidden}: "
    if not vocab:
        return head + f"{body / 1e6:.1f}M parameters in the layers, + {hidden} a piece of the vocab"
    return (head + f"about {(body + vocab * hidden) / 1e6:.1f}M parameters ({body / 1e6:.1f}M in the "
            f"layers, {vocab * hidden / 1e6:.1f}M in the embeddings of {vocab:,} pieces)")


def vocab_guess(a, model: dict, estimate: CorpusEstimate | None) -> int | None:
    """The size the vocab rule would give the dump's estimated words, rounded to the model's 64."""
    if estimate is None:
        return None
    words = estimate.words
    size, _ = suggest_vocab_size(words.words, model["hidden_size"], body_parameters(model), words.least)
    return size


def phase_times(a, device: str, ranks: int, model: dict, seq_lens, tokens: int | None) -> tuple[list[str], str]:
    """(each phase's minutes and, on a GPU, its steps at the bench's pace; the closing line
    with the whole run's steps and tokens: its passes over each source, recipes/passes.py)."""
    try:
        budget_s = parse_budget(a.budget)
    except BudgetError as exc:
        raise DemoError(str(exc).replace("--train_budget", "--budget")) from None
    shares = [p.share for p in LONG[device]] if a.long else [1.0]
    if device != "cuda":
        return ([duration(s * budget_s) for s in shares],
                "steps: as many as the budget allows: the trainer times its first steps and fits "
                "the schedule to the budget")
    phases = trained_tokens(budget_s, seq_lens, shares, model, ranks)
    per = [f"{duration(s * budget_s)}, about {rounded(t / tokens):,} steps" for s, t in zip(shares, phases)]
    return per, (f"steps: about {rounded(sum(phases) / tokens):,} of {tokens:,} tokens in {a.budget}, "
                 f"{sum(phases) / 1e6:,.0f}M tokens at the bench's pace (bench_gpu_modern.py)")


def dry_run(a, device: str, ranks: int, model: dict, card_gib: float | None, vocab_size) -> None:
    """--dry-run: every command this run would run, with the training's phases, micro-batch and
    tokens a step on `device` (a `card_gib` GiB card on CUDA); nothing is run or written."""
    lang_dir = a.data_dir / a.lang
    card = f", one {card_gib:g} GiB card" if card_gib else ""
    say(f"== dry run: what this command runs on {device} ({plural(ranks, 'rank')}{card}), budget {a.budget}; "
        "nothing is run or written")
    for cmd, _step in text_steps(a):   # with --corpora: ingest and dedup after format
        say(f"$ {shown(cmd)}")
    rows = [(p.max_seq, p.max_pred) for p in LONG[device]] if a.long else [(PACKED["max_seq"], PACKED["max_pred"])]
    spec = load_tokenizer(lang_dir / "vocab") if (lang_dir / "vocab").is_dir() else None
    hdf5 = [lang_dir / output_folder_name(spec.lower_case if spec else False, n, pred, PACKED["masked_lm_prob"],
                                          dupe_factor=PACKED["dupe_factor"], packed=True,
                                          tokenizer_suffix=spec.folder_suffix() if spec else "")
            for n, pred in rows]
    counted = corpus_tokens(ROOT / hdf5[0])
    dump = the_dump(a) if not counted else None
    estimate = estimate_corpus(dump, a.lang, a.model_type) if dump is not None else None
    if counted:
        say(f"corpus: {counted:,} tokens (encode's count)")
    elif estimate is not None:
        say(estimate.line())
    vocab = ["--vocab-size", vocab_size or "N"]
    guess = None if vocab_size else vocab_guess(a, model, estimate)
    if not vocab_size:
        say("vocab: N below is the rule's size (recipes/vocab_rule.py) once the corpus is filtered"
            + (f"; about {guess:,} from the dump's words" if guess else ""))
    vocab += ["--model-type", a.model_type] if a.model_type != MODEL_TYPE else []
    for stage in later_stages():
        extra = vocab if stage == "vocab" else shard_weights(a) if stage == "shard" else []
        say(f"$ {shown(pipeline(a, stage, *extra, *forced(a)))}")
    for n, pred in rows:
        say(f"$ {shown(encode(a, n, pred))}")
    pieces = (spec.size if spec else None) or vocab_size or guess
    if pieces:   # the run fits the model's vocab_size to vocab.txt, a multiple of 64
        model = {**model, "vocab_size": -(-pieces // 64) * 64}
    say(model_line(model, pieces))
    out = a.runs / f"{a.lang}_modern{'_long' if a.long else ''}"
    corpus = counted or (rounded(estimate.tokens) if estimate else None)
    tokens, why = step_size(a, device, ranks, model, hdf5, card_gib, corpus)
    for line in [why] if why else []:
        say(line)
    batch = run_batch(a, device)
    listed = phase_list(LONG[device], [ROOT / h for h in hdf5], batch) if a.long else None
    batches = [p.get("train_batch_size") for p in listed] if listed else [batch]
    seq_lens = [n for n, _ in rows]
    try:
        lines = step_lines(device, ranks, model, seq_lens, batches, tokens, card_gib)
    except (CardError, ConfigError) as exc:   # --tokens-per-step that the rows do not divide
        raise DemoError(str(exc).replace("--tokens_per_step", "--tokens-per-step")) from None
    times, total = phase_times(a, device, ranks, model, seq_lens, tokens)
    for line, time in zip(lines, times):
        say(f"step: {line}; {time}")
    say(total)
    for line in passes_lines(a, *planned_passes(a, planned_reads(a, device, ranks, model), hdf5, check(a), tokens)):
        say(line)   # how often it reads each source's text (recipes/passes.py)
    if listed:
        say(f"phases ({out / 'phases.json'}): {json.dumps(listed)}")
    train, _ = train_command(a, device, ranks, out / RUN_MODEL, lang_dir / "vocab", hdf5, out, tokens)
    hf = out / "hf"
    for cmd in (train, export_command(out, hf), heldout_command(hf, hdf5[0], device, a.heldout_tokens),
                *([context_command(hf, hdf5[-1], device)] if a.long else [])):
        say(f"$ {shown(cmd)}")
    fill = shown(fill_mask_command(hf, ["SENTENCES"], device))
    say(f"$ {fill.replace('SENTENCES', '<3 held-out sentences, a word hidden in each>')}")
    if a.probe != "off":
        say(f"$ {shown(probe_command(hf, lang_dir, out / 'probe'))}"
            + (f"  (only with {MIN_TEST_SENTENCES}+ held-out probe sentences)" if a.probe == "auto" else ""))
    say(f"$ {shown(pipeline(a, 'report', '--run', out))}")
