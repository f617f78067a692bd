"""One command from a Wikipedia dump to an evaluated model: `make pretrain LANG=xx DUMP=path BUDGET=30m`.

Usage:
    python -m recipes.pretrain --lang uk --dump ../shared/data/ukwiki.xml.xz --budget 30m
    python -m recipes.pretrain --lang hu --dump data/sample/huwiki-sample.xml.bz2 --budget 1m
    python -m recipes.pretrain --lang uk --budget 2h --device cuda     # downloads the latest dump
    python scripts/pretrain.py ...    # the same (installed: wiki2bert-pretrain ...; make pretrain runs it)

What it runs, each printed before it runs (every step resumes or skips finished work):
  1. the pipeline to the filtered corpus (`pipeline download --dump`, extract, format, split, filter;
     with --corpora fineweb-2[=W],... (make's CORPORA) `pipeline ingest --corpus` and `dedup` after
     format, `shard --weight` below: recipes/web_corpora.py, checked before any stage);
  2. a vocab size from the corpus and the model (recipes/vocab_rule.py: the rule, in words);
  3. the rest of what `pipeline run` runs: `pipeline shard`, `pipeline vocab --vocab-size N`,
     `pipeline probe`, then `pipeline encode --pack --max-seq 128 --max-pred 40 --masked-lm-prob
     0.3 --dupe-factor 1`;
  4. the modern recipe under torchrun: ModernBERT (CPU: 4 x 256, trainer/configs/modernbert_small.json;
     GPU: ModernBERT-base), MLM only (--no_nsp), dynamic 30% masking (80/10/10), AdamW,
     warmup-stable-decay, `--train_budget BUDGET`, an eval every 200 steps (the model card's
     numbers); CPU: gloo, one thread a rank, 32 rows a rank a step; GPU: one rank a GPU, the
     trainer's CUDA defaults, the step in tokens (--tokens_per_step: the rule of
     recipes/pretrain_plan.py, from the budget, the corpus and the card), each phase's
     micro-batch the card's;
  5. export (`python -m trainer.export`), held-out masked-LM accuracy against the unigram
     baseline (recipes/heldout_mlm.py: every token of a seeded sample of --heldout-tokens 4,096
     held-out tokens masked once as [MASK], with its standard error; 0: every held-out row),
     fill-mask on held-out sentences: on the device the run trained on (--device), each closing
     step printing its seconds; a model still near word frequencies gets the budget that would
     take it past them at this run's pace (recipes/budget_advice.py);
  6. the probe (`python -m trainer.finetune --probe`, 3 seeds, against random init) where its
     test split can tell them apart (recipes/demo_probe.py), and `pipeline report --run
     --downstream`: DATA_DIR/LANG/report.html holds the corpus, the curves and the scores.
Into DATA_DIR/LANG (the pipeline), RUNS/LANG_modern (the run, hf/ its export, probe/,
heldout_mlm.json). A step that fails or is interrupted says the command that goes on from there
(`make pretrain ...` under make); --force redoes every step (a stage's earlier run with other
settings, e.g. another --vocab-size, is refused otherwise); --dump and --lang are checked first.
--dry-run prints every command with its settings, the phases, each phase's micro-batch and the
tokens a step, the passes over each source's text (recipes/passes.py), and runs and writes
nothing; `--device cuda --gpu-memory 80` plans for a card that is not here (recipes/pretrain_plan.py).

With --long (recipes/long_recipe.py) it also encodes the longer rows (CPU: 512 and 2,048 tokens;
GPU: 1,024 and 8,192) and trains through sequence-length phases ending on the longest rows, the
global RoPE θ raised for them, into RUNS/LANG_modern_long; step 5 adds the context evaluation
(`python -m trainer.evaluation`: the accuracy deep in long held-out articles with the whole
article around the mask against 512 tokens, the gain) to the closing lines. On a CPU with a
budget under 20 minutes (recipes/long_recipe.py's CPU_MIN_BUDGET, measured) it says in one line,
before the run and among the closing lines, that the model will stay near word frequencies;
without --long, under 15 minutes (recipes/budget_advice.py's), before the run.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from argparse import ArgumentDefaultsHelpFormatter
from pathlib import Path

from common.flags import HintingParser
from common.heldout_file import HELDOUT, LEARNED, read_heldout
from common.numbers import plural
from pipeline.core.runner import FORCE_HINT_ENV
from pipeline.encoding.hdf5_format import output_folder_name
from pipeline.text.language_settings import word_segmenter
from recipes.budget_advice import longer_budget_line, short_budget_warning
from recipes.commands import DemoError, StepFailed, font_cache_env, read_json, run_command, say, shown, timed
from recipes.continuation import continuation
from recipes.demo_probe import MIN_TEST_SENTENCES, probe_command, probe_needs, probe_runs, probe_summary
from recipes.fill_mask import fill_masks, hide_words  # light: torch and transformers when called
from recipes.heldout_mlm import (  # torch when called
    MAX_TOKENS,
    NothingHeldOut,
    heldout_accuracy,
    ratio_of,
    save_result,
    summary_line,
    trainer_eval_line,
    verdict_lines,
)
from recipes.long_recipe import LONG, write_phases
from recipes.passes import closing_lines
from recipes.pretrain_advice import (
    input_problem,
    long_budget_warning,
    probe_estimate,
    rerun_command,
    typed_command,
)
from recipes.pretrain_commands import (
    MODELS,
    PACKED,
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
from recipes.pretrain_dry_run import dry_run
from recipes.pretrain_plan import step_size
from recipes.vocab_rule import (
    MODEL_TYPE,
    body_parameters,
    corpus_words,
    embedding_warning,
    suggest_vocab_size,
)
from recipes.web_corpora import add_options, shard_weights, text_steps
from trainer.checkpoint import checkpoint_step, list_checkpoints
from trainer.export.card import add_heldout
from trainer.runtime.card import card_memory_gib  # torch when called, on CUDA
from vocab.kinds import MODEL_TYPES, load_tokenizer

ROOT = Path(__file__).resolve().parents[1]  # the repo root: the commands run there


def pick_device(asked: str) -> tuple[str, int]:
    """(device, ranks): CUDA with one rank a GPU, else CPU with up to 4 gloo ranks."""
    if asked in ("auto", "cuda"):
        import torch

        if torch.cuda.is_available():
            return "cuda", torch.cuda.device_count()
        if asked == "cuda":
            raise DemoError("--device cuda: no CUDA GPU is visible here (use --device cpu; to plan for a "
                            "card that is not here: --dry-run --gpu-memory GiB)")
    return "cpu", max(1, min(4, os.cpu_count() or 1))


def prepare_text(a) -> None:
    for cmd, step in text_steps(a):   # with --corpora: ingest and dedup after format
        run_command(cmd, step)


def choose_vocab(a, model: dict) -> int:
    hidden, body = model["hidden_size"], body_parameters(model)
    corpus = corpus_words(a.data_dir / a.lang / "filtered", a.lang, a.model_type)
    size, why = suggest_vocab_size(corpus.words, hidden, body, corpus.least)
    say(f"vocab: {why}: {size:,}" + (f" (--vocab-size {a.vocab_size} given)" if a.vocab_size else ""))
    chosen = a.vocab_size or size
    warning = embedding_warning(chosen, hidden, body)
    if warning:
        say(warning)
    return chosen


def train(a, device: str, ranks: int, model_file: Path, vocab: Path, hdf5: list[Path], out: Path) -> list[str]:
    """Train, resume, or continue the run in `out` to the budget (the run's total); the closing
    lines it adds ("continued from step N"), [] for a run trained or resumed as planned."""
    newest = (list_checkpoints(out) or [None])[-1]
    if a.force and newest is not None:   # its logs, checkpoints, export and probe; not the model
        say(f"--force: the earlier run in {out} is removed; training starts over")
        for old in out.iterdir():
            if old != model_file:
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        newest = None
    extend = continuation(a, out, newest)
    if extend is False:
        return []
    tokens, why = step_size(a, device, ranks, read_json(model_file) or {}, hdf5,
                            card_memory_gib(0) if device == "cuda" else None)
    if why:
        say(why)
    if a.long:   # the commands run in ROOT
        write_phases(out / "phases.json", LONG[device], [ROOT / h for h in hdf5], run_batch(a, device))
    cmd, env = train_command(a, device, ranks, model_file, vocab, hdf5, out, tokens)
    run_command(cmd + (["--extend"] if extend else []), "training", env=env)
    return [f"   continued from step {extend} (the last checkpoint before the decay of the earlier, shorter "
            f"run) to BUDGET={a.budget} in all"] if extend else []


def heldout_sentences(a, n: int = 3) -> list[str]:
    """n held-out sentences, each with one word hidden whole (recipes/fill_mask.py's [[word]])."""
    lines = (line for path in sorted((a.data_dir / a.lang / "sharded").glob("*_test_*.txt"))
             for line in path.read_text(encoding="utf-8").splitlines())
    return hide_words(lines, load_tokenizer(a.data_dir / a.lang / "vocab"), word_segmenter(a.lang), n)


def evaluate(a, device: str, out: Path, hf: Path, hdf5: list[Path], advice: list[str]) -> list[str]:
    """The closing steps on the device the run trained on, each saying its seconds; the closing
    lines: the verdict, the trainer's own eval named beside it, the budget that would get a model
    still near word frequencies past them (this run's pace), then `advice`."""
    newest = list_checkpoints(out)[-1]
    if not (hf / "config.json").is_file() or (hf / "model.safetensors").stat().st_mtime < \
            (newest / "model.pt").stat().st_mtime:
        with timed("export"):
            run_command(export_command(out, hf), "export")
    result = heldout_step(hf, hdf5[0], out, checkpoint_step(newest), device, a.heldout_tokens)
    long = [context(hf, hdf5[-1], device)] if a.long else []
    sentences = heldout_sentences(a)
    if sentences:
        with timed("fill-mask"):
            say(f"$ {shown(fill_mask_command(hf, sentences, device))}")
            for filled in fill_masks(hf, sentences, device=device):
                say("\n".join(filled.lines()))
    longer = longer_budget_line(out, a.argv) if result is not None and ratio_of(result) < LEARNED else ""
    named = trainer_eval_line(out) if result is not None else ""
    return (verdict_lines(result) + [line for line in (named, longer) if line] + advice + long
            + [f"   model: {hf} (trained to step {checkpoint_step(newest)})"])


def heldout_step(hf: Path, hdf5: Path, out: Path, step: int, device: str, max_tokens: int = MAX_TOKENS) -> dict | None:
    """Held-out accuracy against the unigram baseline (a seeded sample of `max_tokens` tokens; 0:
    every held-out row), saved for report.html and the card; None (one line said) where the corpus
    held nothing out. A rerun keeps the measure of the same export on the same rows."""
    known = read_heldout(out)
    if known.get("step") == step and known.get("model") == str(hf) and known.get("hdf5") == str(hdf5) \
            and known.get("max_tokens") == max_tokens \
            and (out / HELDOUT).stat().st_mtime >= (hf / "model.safetensors").stat().st_mtime:
        say(f"held-out accuracy of step {step}, measured before: {known['line']}")
        return known
    with timed("held-out accuracy"):
        say(f"$ {shown(heldout_command(hf, hdf5, device, max_tokens))}")
        try:
            result = heldout_accuracy(hf, hdf5, device=device, max_tokens=max_tokens)
        except NothingHeldOut as exc:
            say(f"held-out accuracy: not measured: {exc}")
            return None
        say(summary_line(result))
        save_result(result, out / HELDOUT, hf, hdf5, step=step)  # report.html
        add_heldout(hf / "README.md", out, step)   # and the card, written before it
    return result


def context(hf: Path, hdf5: Path, device: str = "cpu") -> str:
    """The context evaluation of a long model on the longest rows' held-out articles, one line."""
    from trainer.evaluation.cli import run
    from trainer.evaluation.context import context_line  # the last step's: torch when called

    with timed("context evaluation"):
        say(f"$ {shown(context_command(hf, hdf5, device))}")
        line = context_line(run(hf, hdf5, device=device))
        say(line)
    return f"== does it read the long context? {line}"


def report(a, out: Path, results: list[Path]) -> None:
    """`pipeline report --run`, timed; matplotlib's font list in a folder that persists
    (font_cache_env), so that only the first report scans the fonts."""
    env = font_cache_env(a.data_dir)
    with timed("pipeline report"):
        run_command(pipeline(a, "report", "--run", out, *[x for r in results for x in ("--downstream", r)]),
                    "pipeline report", env=env)


def probe(a, device: str, hf: Path, out: Path) -> list[Path]:
    """The probe where it can tell; the results.json files for the report."""
    summary = (read_json(a.data_dir / a.lang / "probe" / "manifest.json") or {}).get("summary") or {}
    test = summary.get("test_sentences", 0)
    took = probe_estimate(out.parent, summary.get("train_sentences", 0), device)
    if a.probe == "off" or (a.probe == "auto" and test < MIN_TEST_SENTENCES):
        say(f"probe: not run ({test} held-out sentences; it needs {MIN_TEST_SENTENCES} to tell a pretrained "
            f"model from a random one reliably: {probe_needs(a.data_dir / a.lang)}): --probe on runs it anyway"
            + (f", {took} here" if took else "") if a.probe == "auto" else "probe: off")
        return []
    if took:   # said before the minutes it costs (uk's 2.5 MB dump: 28 minutes on 2 loaded cores)
        say(f"probe: {test} held-out sentences: fine-tuning {probe_runs()} runs, {took} here (--probe off skips it)")
    with timed("probe"):
        run_command(probe_command(hf, a.data_dir / a.lang, out), "probe fine-tuning")
        say(probe_summary(out / "results.json"))
    return [out / "results.json"]


def main(argv=None) -> int:
    p = HintingParser(prog=typed_command(), description=__doc__.split("\n\n")[0],
                      formatter_class=ArgumentDefaultsHelpFormatter)
    p.add_argument("--lang", required=True, help="the wiki's language code (hu, uk, zh-min-nan, ...)")
    p.add_argument("--allow-unknown-lang", action="store_true",
                   help="take --lang as it is, for a wiki that is not on pipeline/text/wikipedias.txt "
                        "(`pipeline download --allow-unknown-lang`)")
    p.add_argument("--dump", type=Path, help="a local dump (.xml/.bz2/.xz/.gz); default: download the latest")
    p.add_argument("--budget", default="30m", help="training time: --train_budget (90s, 30m, 2h, 1d)")
    p.add_argument("--data-dir", type=Path, default=Path("data"), help="the pipeline's DATA_DIR")
    p.add_argument("--runs", type=Path, default=Path("runs"), help="the run goes to RUNS/LANG_modern")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: every visible CUDA GPU (one rank each), else the CPU (up to 4 ranks)")
    p.add_argument("--vocab-size", type=int, default=None, help="default: the rule's suggestion")
    p.add_argument("--model-type", choices=MODEL_TYPES, default=MODEL_TYPE,
                   help="the tokenizer `pipeline vocab` trains (bytelevel-bpe: RoBERTa's byte-level BPE)")
    p.add_argument("--model-config", type=Path, default=None,
                   help="a ModernBERT JSON (default: modernbert_small.json on CPU, _base on GPU)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="per rank (--train_batch_size); default 32 on CPU, on a GPU the card's micro-batch")
    p.add_argument("--tokens-per-step", type=int, default=None,
                   help="the trainer's --tokens_per_step; default on a GPU: the rule in docs/training.md "
                        "(A step in tokens), on CPU none (the batch in rows)")
    p.add_argument("--dry-run", action="store_true",
                   help="print every command with its phases, micro-batch and tokens a step; run nothing")
    p.add_argument("--gpu-memory", type=float, default=None, metavar="GiB",
                   help="with --dry-run --device cuda: plan for a card of this memory (present or not)")
    p.add_argument("--workers", type=int, default=None, help="pipeline worker processes")
    p.add_argument("--long", action="store_true",
                   help="long context: phases 128 -> 512 -> 2,048 tokens (GPU: -> 1,024 -> 8,192), "
                        "global RoPE θ raised for the last, into RUNS/LANG_modern_long")
    p.add_argument("--probe", choices=("auto", "on", "off"), default="auto",
                   help=f"auto: only with at least {MIN_TEST_SENTENCES} held-out probe sentences")
    add_options(p)   # --corpora, --corpus-root, --max-tokens (recipes/web_corpora.py)
    p.add_argument("--heldout-tokens", type=int, default=MAX_TOKENS, metavar="N",
                   help="the held-out accuracy on a seeded sample of N held-out tokens, with its standard "
                        "error (seconds on a CPU); 0: every held-out row (minutes on a CPU)")
    p.add_argument("--force", action="store_true",
                   help="redo every step from scratch: each pipeline stage with --force (where an "
                        "earlier run had other settings, e.g. another --vocab-size), the training "
                        "from step 0")
    argv = sys.argv[1:] if argv is None else [str(x) for x in argv]
    a = p.parse_args(argv)
    a.argv = argv   # the closing lines' commands say it again with another budget
    problem = input_problem(a) or ("--heldout-tokens must be 0 (every held-out row) or more"
                                   if a.heldout_tokens < 0 else None) or (
        "--gpu-memory plans for a card in a --dry-run with --device cuda; a run uses the card it has"
        if a.gpu_memory and not (a.dry_run and a.device == "cuda") else None)
    if problem:
        print(f"Error: {problem}", file=sys.stderr)
        return 1
    # the stages' refusal names this command with --force (pipeline/core/runner.py)
    previous_hint = os.environ.get(FORCE_HINT_ENV)
    os.environ[FORCE_HINT_ENV] = f"to redo it with these settings: {rerun_command(argv, force=True)}"
    try:
        device, ranks = ("cuda", 1) if a.dry_run and a.gpu_memory and a.device == "cuda" else pick_device(a.device)
        advice = [w for w in ([long_budget_warning(device, a.budget)] if a.long else []) if w]
        for line in advice:   # said before the minutes it costs, and again at the end
            say(line)
        if not a.long and (short := short_budget_warning(device, a.budget)):
            say(short)   # before the run; the closing lines give the budget this machine needs
        model_file = a.model_config or MODELS[device]
        model = read_json(model_file)
        if model is None:
            raise DemoError(f"--model-config {model_file} is missing or not JSON")
        if a.dry_run:
            filtered = (a.data_dir / a.lang / "filtered").is_dir()
            dry_run(a, device, ranks, model, (a.gpu_memory or card_memory_gib(0)) if device == "cuda" else None,
                    choose_vocab(a, model) if filtered else a.vocab_size)
            return 0
        say(f"== [1/5] the corpus: pipeline to filtered/ ({a.data_dir / a.lang})")
        prepare_text(a)
        say("== [2/5] vocab, shards, probe, packed rows")
        vocab_size = choose_vocab(a, model)
        kind = ["--model-type", a.model_type] if a.model_type != MODEL_TYPE else []
        for stage in later_stages():   # shard, vocab, probe: what `pipeline run` runs next
            extra = (["--vocab-size", vocab_size, *kind] if stage == "vocab" else
                     shard_weights(a) if stage == "shard" else [])   # --corpora's weights
            run_command(pipeline(a, stage, *extra, *forced(a)), f"pipeline {stage}")
        rows = ([(p.max_seq, p.max_pred) for p in LONG[device]] if a.long
                else [(PACKED["max_seq"], PACKED["max_pred"])])
        for max_seq, max_pred in rows:
            run_command(encode(a, max_seq, max_pred), "pipeline encode")
        lang_dir, out = a.data_dir / a.lang, a.runs / f"{a.lang}_modern{'_long' if a.long else ''}"
        spec = load_tokenizer(lang_dir / "vocab")   # its kind names the HDF5 folder (a suffix)
        vocab_lines = spec.size
        out.mkdir(parents=True, exist_ok=True)
        # the model asked for, its vocab_size fitted to vocab.txt; not model_config.json, which the
        # trainer writes there as it starts the model (and a resume is checked against)
        run_model = out / RUN_MODEL
        run_model.write_text(json.dumps({**model, "vocab_size": -(-vocab_lines // 64) * 64}, indent=1))
        hdf5 = [lang_dir / output_folder_name(spec.lower_case, max_seq, max_pred, PACKED["masked_lm_prob"],
                                              dupe_factor=PACKED["dupe_factor"], packed=True,
                                              tokenizer_suffix=spec.folder_suffix())
                for max_seq, max_pred in rows]
        lengths = " -> ".join(f"{max_seq:,}" for max_seq, _ in rows)
        say(f"== [3/5] training on {device} ({plural(ranks, 'rank')}), budget {a.budget}"
            + (f", phases of {lengths} tokens" if a.long else ""))
        continued = train(a, device, ranks, run_model, lang_dir / "vocab", hdf5, out)
        say("== [4/5] export, held-out accuracy, fill-mask")
        verdict = evaluate(a, device, out, out / "hf", hdf5, advice + continued)
        say("== [5/5] probe and report")
        results = probe(a, device, out / "hf", out / "probe")
        report(a, out, results)
    except DemoError as exc:
        more = (f"; once that is dealt with, `{rerun_command(argv)}` goes on where it stopped "
                "(finished steps are kept)" if isinstance(exc, StepFailed) else "")
        print(f"Error: {exc}{more}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"Interrupted: `{rerun_command(argv)}` goes on where it stopped (finished steps are "
              "skipped, training resumes from its last checkpoint)", file=sys.stderr)
        return 130
    finally:   # for this run's commands only, not for what the process does after main()
        if previous_hint is None:
            os.environ.pop(FORCE_HINT_ENV, None)
        else:
            os.environ[FORCE_HINT_ENV] = previous_hint
    say()
    for line in verdict + closing_lines(out) + [f"   report: {lang_dir / 'report.html'}"]:
        say(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
