"""`make pretrain` / recipes/pretrain.py: one command from a dump to an evaluated model, end to
end on the shipped sample with a tiny budget; the rerun skips the training; the vocab rule."""
from __future__ import annotations

import json
import os
import re
from collections import Counter

import pytest

import recipes.pretrain as script
from common.heldout_file import HELDOUT
from common.make_vars import VIA_MAKE_ENV
from pipeline.core.runner import FORCE_HINT_ENV
from recipes.commands import StepFailed, font_cache_env
from recipes.vocab_rule import body_parameters, embedding_warning, suggest_vocab_size
from tests.helpers.pretrain_cli import pretrain


@pytest.mark.slow
def test_from_the_sample_dump_to_an_evaluated_model_then_a_rerun_trains_nothing(sample_dump, tmp_path):
    args = ["--lang", "hu", "--dump", sample_dump, "--budget", "15s", "--device", "cpu",
            "--data-dir", tmp_path / "data", "--runs", tmp_path / "runs", "--workers", "1"]
    res = pretrain(*args)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    out = res.stdout
    assert "vocab: 2,643 distinct words, 572 seen 5+ times -> at most 1,000 pieces" in out
    assert "encode --pack --max-seq 128 --max-pred 40 --masked-lm-prob 0.3 --dupe-factor 1" in out
    for flag in ("--model_type modernbert", "--no_nsp", "--masking dynamic", "--train_budget 15s",
                 "--eval_every 200", "--lr_schedule wsd", "--optimizer adamw"):
        assert flag in out, flag
    assert "held-out MLM accuracy" in out and "[MASK]" in out and "' ranks " in out   # a word hidden whole, its rank
    assert "probe: not run (15 held-out sentences" in out and "--probe on runs it anyway, about" in out
    assert "a corpus of about 11,000 filtered sentences holds that many out (14x this one's 801)" in out
    # the closing steps on the run's device, each with its seconds
    assert "scripts/heldout_mlm.py" in out and out.count("--device cpu") >= 2
    for step in ("export", "held-out accuracy", "fill-mask", "pipeline report"):
        assert re.search(rf"^   {step}: \d+\.\d s$", out, re.M), step
    closing = out.strip().splitlines()[-7:]
    assert closing[0].startswith("== did it learn? On ") and "every token masked once as [MASK]" in closing[0]
    # issue 60: the trainer's own eval named beside it; 15 s leave the model at word frequencies: the
    # budget that would get it past them at this run's pace, as a command
    assert closing[2].startswith("   (the trainer's eval at step ") and "static masks" in closing[2]
    assert closing[3].startswith("   train longer: about 400 steps") and " --budget " in closing[3]
    budget = re.search(r"so --budget (\d+m|[\d.]+h) trains about 400: `", closing[3]).group(1)
    assert f"--budget {budget}`" in closing[3] and "--budget 15s" not in closing[3]
    assert closing[-2].startswith("   passes: the run read its text ")   # a CPU: no warning
    run = tmp_path / "runs" / "hu_modern"
    card = (run / "hf" / "README.md").read_text(encoding="utf-8")
    assert "ModernBertForMaskedLM" in card and "none logged" not in card
    assert json.loads((run / "hf" / "config.json").read_text())["vocab_size"] == 1024
    page = (tmp_path / "data" / "hu" / "report.html").read_text(encoding="utf-8")
    assert str(run) in page.split('<section id="training"')[1]

    # the dry run prints the commands exactly as the run ran them (issue 60: --device was missing)
    dry = pretrain(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr[-3000:]
    planned = [line for line in dry.stdout.splitlines() if line.startswith("$ ")]
    fill = f"$ python scripts/fill_mask.py {tmp_path / 'runs' / 'hu_modern' / 'hf'} "
    for ran in (line for line in out.splitlines() if line.startswith("$ ")):
        if ran.startswith(fill):   # the sentences are the run's own
            assert ran.endswith(" --device cpu") and \
                fill + "<3 held-out sentences, a word hidden in each> --device cpu" in planned
        else:
            assert ran in planned, ran

    again = pretrain(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "training: already finished" in again.stdout and "trainer.launch" not in again.stdout
    assert "a larger BUDGET continues it from its last checkpoint before the decay" in again.stdout
    assert "$ python -m trainer.export" not in again.stdout
    assert "held-out accuracy of step " in again.stdout and "measured before" in again.stdout

    # train longer: BUDGET is the total; the run goes on from its checkpoint before the decay
    first = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    end = max(r["step"] for r in first)
    longer = pretrain(*[("30s" if x == "15s" else x) for x in args])
    assert longer.returncode == 0, (longer.stdout[-3000:], longer.stderr[-3000:])
    start = int(re.search(r"continues from step (\d+), before its decay, to BUDGET=30s in all", longer.stdout)[1])
    assert 0 < start <= end and "--extend" in longer.stdout   # end: a run that never decayed
    assert f"   continued from step {start} (the last checkpoint before the decay" in longer.stdout
    log = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    assert max(r["step"] for r in log) > end   # more steps
    # the records up to the continuation are the first run's (the losses of such a continuation are
    # those of a run planned for the total from the start: tests/trainer/start/test_extension.py)
    shared = [r for r in first if r["step"] <= start]
    assert shared and shared == [r for r in log if r["step"] <= start and "extended_from_step" not in r]
    assert any("extended_from_step" in r for r in log)
    less = pretrain(*[("10s" if x == "15s" else x) for x in args])
    assert less.returncode == 0 and "BUDGET=10s is less (BUDGET is the run's total time)" in less.stdout


def test_bad_input_is_one_line(tmp_path):
    res = pretrain("--lang", "hu", "--dump", tmp_path / "nope.xml.bz2")
    assert res.returncode == 1 and res.stderr.strip().splitlines() == [
        f"Error: --dump {tmp_path / 'nope.xml.bz2'} does not exist"]


def test_the_vocab_rule_takes_the_smaller_of_the_corpus_and_the_model_bounds():
    small = {"hidden_size": 128, "num_hidden_layers": 3, "intermediate_size": 256}
    body = body_parameters(small)
    words = Counter({f"w{i}": 10 for i in range(9000)} | {f"r{i}": 1 for i in range(43000)})
    size, why = suggest_vocab_size(words, 128, body)
    assert "52,000 distinct words, 9,000 seen 5+ times" in why
    assert size == 3000 and "at most 3,000 for embeddings under half" in why   # the model decides
    # the case: 32k pieces on a tiny model are most of its parameters
    assert "embeddings (89%)" in embedding_warning(32000, 128, 510_000)
    assert embedding_warning(size, 128, body) is None
    big = {"hidden_size": 768, "num_hidden_layers": 22, "intermediate_size": 1152}
    assert suggest_vocab_size(words, 768, body_parameters(big))[0] == 10000   # the corpus decides


@pytest.mark.slow
def test_long_trains_through_phases_and_prints_the_context_evaluation(sample_dump, tmp_path):
    args = ["--lang", "hu", "--dump", sample_dump, "--budget", "20s", "--device", "cpu", "--long",
            "--data-dir", tmp_path / "data", "--runs", tmp_path / "runs", "--workers", "1", "--probe", "off"]
    res = pretrain(*args)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    out = res.stdout
    for seq, pred in ((128, 40), (512, 160), (2048, 640)):
        assert f"encode --pack --max-seq {seq} --max-pred {pred} --masked-lm-prob 0.3" in out
    assert "phases of 128 -> 512 -> 2,048 tokens" in out and "--phases" in out
    assert "$ python -m trainer.evaluation --model" in out
    # the sample's articles are under 1,024 tokens: the closing line says there is nothing to score
    assert out.strip().splitlines()[-4].startswith("== does it read the long context? context evaluation")
    run = tmp_path / "runs" / "hu_modern_long"
    assert [p["train_batch_size"] for p in json.loads((run / "phases.json").read_text())] == [32, 8, 2]
    starts = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    assert [r["seq_len"] for r in starts if "phase_start" in r] == [128, 512, 2048]
    config = json.loads((run / "hf" / "config.json").read_text())
    assert config["max_position_embeddings"] == 2048
    assert config["rope_parameters"]["full_attention"]["rope_theta"] == 160000.0


def test_the_long_closing_line_holds_the_context_gain(monkeypatch, tmp_path):
    import recipes.pretrain as pretrain_script
    import trainer.evaluation.cli

    seen = {}

    def fake_run(model, input_dir, device="cpu"):
        seen.update(model=model, input_dir=input_dir, device=device)
        return {"eval_context_tokens": 1234, "eval_context_segments": 5, "eval_context_acc_long": 0.31,
                "eval_context_acc_512": 0.25, "eval_context_acc_128": 0.2, "eval_context_gain": 0.06,
                "eval_context_long_width": 2048}

    monkeypatch.setattr(trainer.evaluation.cli, "run", fake_run)
    line = pretrain_script.context(tmp_path / "hf", tmp_path / "rows2048", "cuda")
    assert seen == {"model": tmp_path / "hf", "input_dir": tmp_path / "rows2048", "device": "cuda"}
    assert line.startswith("== does it read the long context? context evaluation on 1,234 masked tokens")
    assert line.endswith("0.2000 with 128: context gain +0.0600")
    monkeypatch.setattr(trainer.evaluation.cli, "run", lambda *a, **k: {})
    assert "no held-out segment of 1,024+ tokens" in pretrain_script.context(tmp_path, tmp_path)


def test_a_misspelled_flag_names_the_one_meant():
    res = pretrain("--lang", "hu", "--bugdet", "10m")
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        "Error: unrecognized arguments: --bugdet 10m; did you mean --budget? (see python -m "
        "recipes.pretrain --help)"]   # the command as it was started (issue 60: not scripts/pretrain.py)


def test_a_wrong_lang_is_one_line_with_no_rerun_advice(sample_dump):
    res = pretrain("--lang", "uk", "--dump", sample_dump)
    assert res.returncode == 1 and res.stderr.strip().splitlines() == [
        f"Error: --lang uk does not match the dump: {sample_dump} is the dump of huwiki (the "
        "<dbname> of its <siteinfo>), not ukwiki: use --lang hu"]
    assert res.stdout == ""   # refused before any step


@pytest.fixture
def stubbed(monkeypatch, tmp_path, sample_dump):
    """scripts/pretrain.py's main with its commands recorded, not run (a vocab.txt in place)."""
    calls = []
    vocab = tmp_path / "data" / "hu" / "vocab"
    vocab.mkdir(parents=True)
    (vocab / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n")
    monkeypatch.setattr(script, "run_command", lambda cmd, step, env=None: calls.append([str(c) for c in cmd]))
    monkeypatch.setattr(script, "choose_vocab", lambda a, model: 1000)
    monkeypatch.setattr(script, "train", lambda *args: [])
    monkeypatch.setattr(script, "evaluate", lambda *args: [])
    monkeypatch.setattr(script, "probe", lambda *args: [])
    monkeypatch.setenv(VIA_MAKE_ENV, "1")
    monkeypatch.delenv(FORCE_HINT_ENV, raising=False)
    args = ["--lang", "hu", "--data-dir", tmp_path / "data", "--budget", "30m", "--dump", sample_dump,
            "--runs", tmp_path / "runs", "--device", "cpu", "--vocab-size", "1000"]
    return calls, args


def test_force_reaches_every_stage_and_the_refusal_names_make_pretrains_way(stubbed, sample_dump, tmp_path,
                                                                           monkeypatch):
    calls, args = stubbed
    hints = []   # the environment each command gets

    def run_command(cmd, step, env=None):
        calls.append([str(c) for c in cmd])
        hints.append(os.environ.get(FORCE_HINT_ENV))

    monkeypatch.setattr(script, "run_command", run_command)
    assert script.main(args) == 0
    assert not any("--force" in c for c in calls)
    assert FORCE_HINT_ENV not in os.environ   # set for the run's commands only
    assert len(set(hints)) == 1
    hint = hints[0]   # what a stage says where an earlier run had other settings
    assert hint == (f"to redo it with these settings: make pretrain LANG=hu DUMP={sample_dump} "
                    f"DATA_DIR={tmp_path / 'data'} PRETRAIN_OPTS='--runs {tmp_path / 'runs'} --device cpu "
                    "--vocab-size 1000 --force'")
    calls.clear()
    assert script.main(args + ["--force"]) == 0
    stages = [c[c.index("--lang") + 2] for c in calls if "pipeline" in c[:3]]
    assert stages == ["download", "extract", "format", "split", "filter", "shard", "vocab", "probe",
                      "encode", "report"]
    assert all("--force" in c for c in calls if "report" not in c)


def test_a_failed_step_names_make_pretrain_to_go_on(stubbed, monkeypatch, capsys):
    calls, args = stubbed

    def fail(*a):
        raise StepFailed("training", 1)

    monkeypatch.setattr(script, "train", fail)
    assert script.main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error: training stopped (exit status 1): see the "
                                               "messages above; once that is dealt with, `make pretrain LANG=hu")
    assert "goes on where it stopped" in err[0] and "make demo" not in err[0]

    def interrupt(*a):
        raise KeyboardInterrupt

    monkeypatch.setattr(script, "train", interrupt)
    assert script.main(args) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Interrupted: `make pretrain LANG=hu")


def test_long_encodes_the_recipes_rows_and_trains_them_into_their_own_run(stubbed, monkeypatch, tmp_path):
    calls, args = stubbed
    trained = {}
    monkeypatch.setattr(script, "train", lambda a, device, ranks, model, vocab, hdf5, out:
                        trained.update(long=a.long, hdf5=hdf5, out=out) or [])
    assert script.main(args + ["--long"]) == 0
    encodes = [c[c.index("--max-seq") + 1:c.index("--max-seq") + 4:2] for c in calls if "encode" in c]
    assert encodes == [["128", "40"], ["512", "160"], ["2048", "640"]]
    assert trained["long"] and trained["out"] == tmp_path / "runs" / "hu_modern_long"
    assert ["seq_len_128_", "seq_len_512_", "seq_len_2048_"] == [
        next(part for part in ("seq_len_128_", "seq_len_512_", "seq_len_2048_") if part in h.name)
        for h in trained["hdf5"]]


def test_the_reports_font_list_persists(tmp_path, monkeypatch):
    """matplotlib's own cache folder where it can write there (it persists: no scan after the
    first report); DATA_DIR/.matplotlib where it cannot (else a scan into a temporary folder for
    every report); MPLCONFIGDIR as the user set it."""
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert font_cache_env(tmp_path / "data") == {}
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("XDG_CACHE_HOME", str(locked))
    if not os.access(locked, os.W_OK):   # root writes anywhere: nothing to fall back from
        assert font_cache_env(tmp_path / "data") == {"MPLCONFIGDIR": str(tmp_path / "data" / ".matplotlib")}
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mine"))
    assert font_cache_env(tmp_path / "data") == {}


def test_long_on_a_cpu_with_a_short_budget_is_warned_before_and_after(stubbed, monkeypatch, capsys):
    """Issue 52: --long on a CPU with BUDGET=5m spent most of its steps on long rows and learned
    little (1.1x the unigram baseline); the budget it needs was measured (scripts/long_recipe.py)."""
    from recipes.long_recipe import CPU_MIN_BUDGET
    from recipes.pretrain_advice import long_budget_warning

    calls, args = stubbed
    closing = {}
    monkeypatch.setattr(script, "evaluate", lambda *a: closing.setdefault("advice", a[-1]) and ["== did it learn?"])
    short = [*args[:args.index("--budget")], "--budget", "5m", *args[args.index("--budget") + 2:], "--long"]
    assert script.main(short) == 0
    out = capsys.readouterr().out.splitlines()
    warning = long_budget_warning("cpu", "5m")
    assert warning.startswith(f"warning: --long on a CPU with BUDGET=5m: below {CPU_MIN_BUDGET} ")
    assert warning.endswith(f"leave --long out, or give BUDGET={CPU_MIN_BUDGET} or more")
    assert "1.1x the unigram baseline at 5m" in warning   # what was measured, in the line
    assert out[0] == warning and closing["advice"] == [warning] and out.count(warning) == 1
    assert out.index(warning) < next(i for i, line in enumerate(out) if line.startswith("== [1/5]"))
    closing.clear()
    assert script.main(args + ["--long"]) == 0 and closing["advice"] == []   # 30m: enough
    assert not any(line.startswith("warning: --long") for line in capsys.readouterr().out.splitlines())
    assert long_budget_warning("cuda", "5m") == "" and long_budget_warning("cpu", "5 minutes") == ""


def test_a_short_budget_on_a_cpu_is_said_before_the_first_step(stubbed, capsys):
    """Issue 60: BUDGET=5m learned nothing and said so only at the end; now one line before the
    run says what was measured and the budget to give. Not for 30m, not with --long (its own line)."""
    from recipes.budget_advice import short_budget_warning

    calls, args = stubbed
    short = [*args[:args.index("--budget")], "--budget", "5m", *args[args.index("--budget") + 2:]]
    assert script.main(short) == 0
    out = capsys.readouterr().out.splitlines()
    warning = short_budget_warning("cpu", "5m")
    assert warning.startswith("warning: BUDGET=5m on a CPU: the model needs about 400 steps")
    assert "5.0x at 15m" in warning and warning.count("BUDGET=15m or more") == 1
    assert out.index(warning) < next(i for i, line in enumerate(out) if line.startswith("== [1/5]"))
    assert script.main(args) == 0
    assert not any(w.startswith("warning: BUDGET") for w in capsys.readouterr().out.splitlines())


def test_a_corpus_that_held_nothing_out_skips_the_heldout_step_in_one_line(tmp_path, capsys):
    """A corpus too small for a test shard: the held-out step said so and went on (it ended
    make pretrain in heldout_accuracy's ValueError traceback before)."""
    hdf5 = tmp_path / "hdf5" / "huwiki"
    hdf5.mkdir(parents=True)
    (hdf5 / "huwiki_training_0.hdf5").write_bytes(b"")
    out = tmp_path / "run"
    out.mkdir()
    assert script.heldout_step(tmp_path / "hf", hdf5.parent, out, 12, "cpu") is None
    said = [line for line in capsys.readouterr().out.splitlines() if "not measured" in line]
    assert said == [f"held-out accuracy: not measured: {hdf5.parent} has no *_test_*.hdf5 files: "
                    "nothing held out to measure on"]
    assert not (out / HELDOUT).exists()
    verdict = script.verdict_lines(None)
    assert len(verdict) == 1 and verdict[0].startswith("== did it learn? Not measured")


def test_a_rerun_keeps_the_heldout_measure_of_the_same_export(tmp_path, monkeypatch, capsys):
    measured, carded = [], []
    result = {"accuracy": 0.2, "tokens": 100, "rows": 3, "unigram_accuracy": 0.05, "unigram_token": ","}
    monkeypatch.setattr(script, "heldout_accuracy", lambda hf, hdf5, device, max_tokens:
                        measured.append(1) or {**result, "max_tokens": max_tokens})
    monkeypatch.setattr(script, "add_heldout", lambda *a: carded.append(a))
    hf, hdf5, out = tmp_path / "hf", tmp_path / "hdf5", tmp_path / "run"
    for d in (hf, hdf5, out):
        d.mkdir()
    (hf / "model.safetensors").write_bytes(b"")
    first = script.heldout_step(hf, hdf5, out, 40, "cpu")
    again = script.heldout_step(hf, hdf5, out, 40, "cpu")
    assert len(measured) == 1 and len(carded) == 1
    assert {k: again[k] for k in first} == first
    assert "held-out accuracy of step 40, measured before: held-out MLM accuracy 0.200" in capsys.readouterr().out
    script.heldout_step(hf, hdf5, out, 60, "cpu")   # another checkpoint: measured again
    os.utime(hf / "model.safetensors", (4e9, 4e9))   # the same step exported again
    script.heldout_step(hf, hdf5, out, 60, "cpu")
    assert len(measured) == 3
    script.heldout_step(hf, hdf5, out, 60, "cpu", max_tokens=0)   # issue 60: the full measure asked
    assert len(measured) == 4 and "--max-tokens 0 --device cpu" in capsys.readouterr().out


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_make_pretrain_masks_30_percent_with_berts_80_10_10(device, tmp_path):
    """Issue 56: mask-only masking left a small model at word frequencies (bench/README.md:
    bench_recipes.py); the trainer reads make pretrain's command as 30% masks, 80% [MASK], 10%
    random, 10% kept."""
    from types import SimpleNamespace

    from recipes.pretrain_commands import train_command
    from trainer.config.flags import build_parser

    a = SimpleNamespace(batch_size=None, long=False, budget="30m")
    cmd, _ = train_command(a, device, 1, tmp_path / "m.json", tmp_path / "vocab", [tmp_path / "h"],
                           tmp_path / "out", None)
    words = [str(w) for w in cmd]
    args = build_parser().parse_args(words[words.index("trainer/run_pretraining.py") + 1:])
    assert (args.masking, args.mlm_probability) == ("dynamic", 0.3)
    assert (args.mask_replace_prob, args.random_replace_prob) == (0.8, 0.1)


def test_a_probe_that_runs_says_its_minutes_first(tmp_path, monkeypatch, capsys):
    """Issue 60: uk's 2.5 MB dump now holds out enough for the probe (794 test sentences), and its
    fine-tuning took 28 minutes on 2 loaded cores after a 5-minute budget: said before it runs."""
    from types import SimpleNamespace

    lang, run = tmp_path / "data" / "uk", tmp_path / "runs" / "uk_modern"
    (lang / "probe").mkdir(parents=True)
    (lang / "probe" / "manifest.json").write_text(json.dumps({"summary": {"train_sentences": 9479,
                                                                          "test_sentences": 794}}))
    run.mkdir(parents=True)
    (run / "train_log.jsonl").write_text(json.dumps({"step": 80, "loss": 7.6, "samples_per_sec": 20.0}) + "\n")
    ran = []

    def fine_tune(cmd, step, env=None):   # what trainer.finetune leaves: its results.json
        ran.append(cmd)
        (run / "probe").mkdir(exist_ok=True)
        (run / "probe" / "results.json").write_text(json.dumps({
            "metric": "entity_f1", "evaluated_on": "test", "seeds": [1, 2, 3], "data": {"examples": {"test": 794}},
            "pretrained": {"mean": 0.249, "sd": 0.003}, "random_init": {"mean": 0.247, "sd": 0.006}}))

    monkeypatch.setattr(script, "run_command", fine_tune)
    a = SimpleNamespace(data_dir=tmp_path / "data", lang="uk", probe="auto")
    assert script.probe(a, "cpu", run / "hf", run / "probe") == [run / "probe" / "results.json"]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "probe: 794 held-out sentences: fine-tuning 6 runs, about 30 minutes here (--probe off skips it)"
    assert len(ran) == 1 and out[-2].startswith("probe entity_f1 on 794 test sentences, 3 seeds")
