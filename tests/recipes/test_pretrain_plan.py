"""`make pretrain` on a GPU sizes its step in tokens by a rule of the budget, the corpus and the
card (recipes/pretrain_plan.py), and `--dry-run` prints every command with its phases,
micro-batch and tokens a step, for a card that is not here too, without running or writing
anything."""
from __future__ import annotations

import json
import re

import pytest

from recipes.pretrain_plan import MODERNBERT_TOKENS, gpu_tokens_per_step, step_lines
from tests.helpers.pretrain_cli import pretrain
from tests.helpers.trainer_cli import ROOT

BASE = json.loads((ROOT / "trainer" / "configs" / "modernbert_base.json").read_text())


@pytest.mark.parametrize("budget_s, lengths, shares, ranks, corpus, tokens", [
    (180, [128], [1.0], 1, None, 131_072),              # 70M tokens in 3 minutes / 300 steps
    (180, [128], [1.0], 1, 700_000, 65_536),            # a small corpus, but not under the card's micro-batch
    (180, [128, 1024, 8192], [0.6, 0.25, 0.15], 1, None, 131_072),
    (1800, [128], [1.0], 1, None, 2_097_152),
    (86_400, [128], [1.0], 8, 10 ** 10, MODERNBERT_TOKENS),   # a day on 8 GPUs: ModernBERT's size
    (60, [128], [1.0], 8, None, 524_288),               # at least one micro-batch on every rank
])
def test_the_tokens_a_step_on_a_gpu(budget_s, lengths, shares, ranks, corpus, tokens):
    got, why = gpu_tokens_per_step(budget_s, lengths, shares, BASE, 80, ranks, corpus)
    assert got == tokens, why
    head, *bounds = why.splitlines()
    assert head.startswith(f"tokens a step: {tokens:,} (")
    assert bounds[0].endswith("  ModernBERT's recipe") and "  the budget: " in bounds[1]
    assert ("the corpus's bound is left out" in why) == (corpus is None)
    if corpus:   # one bound a line, the figures aligned (issue 60: one 300-character line)
        assert bounds[2].endswith(f"  the corpus: {corpus:,} tokens (counted by encode) / 10 steps")
        assert len({re.match(r" +[\d,]+  ", line).end() for line in bounds}) == 1


def test_the_line_says_which_bound_decided():
    _, why = gpu_tokens_per_step(1800, [128], [1.0], BASE, 80, 1, None)
    assert why.startswith("tokens a step: 2,097,152 (the least bound below, 2,346,756, to a power of two)")
    _, why = gpu_tokens_per_step(180, [128], [1.0], BASE, 80, 1, 300_000, "estimated from the dump")
    assert why.startswith("tokens a step: 65,536 (one micro-batch of the 80 GiB card on 1 rank, 65,536: more "
                          "than the least bound below, 30,000)")
    assert "  the corpus: 300,000 tokens (estimated from the dump) / 10 steps" in why


def test_each_phase_line_as_the_trainer_sizes_it():
    assert step_lines("cuda", 1, BASE, [128, 8192], [None, None], 131_072, 80) == [
        "phase 1 of 2 (128-token rows): micro-batch 512 rows x 2 accumulation = 131,072 tokens a step",
        "phase 2 of 2 (8,192-token rows): micro-batch 8 rows x 2 accumulation = 131,072 tokens a step"]
    assert step_lines("cpu", 2, BASE, [128], [32], None, None) == [
        "phase 1 (128-token rows): micro-batch 32 rows x 1 accumulation x 2 ranks = 8,192 tokens a step"]


def test_the_dry_run_plans_a_card_that_is_not_here_and_writes_nothing(sample_dump, tmp_path):
    args = ["--lang", "hu", "--dump", sample_dump, "--budget", "3m", "--data-dir", tmp_path / "data",
            "--runs", tmp_path / "runs", "--long", "--dry-run", "--device", "cuda", "--gpu-memory", "80"]
    res = pretrain(*args)
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert out[0].startswith("== dry run: what this command runs on cuda (1 rank, one 80 GiB card), budget 3m")
    commands = [line for line in out if line.startswith("$ ")]
    stages = [c.split(" --lang hu ")[1].split()[0] for c in commands if "-m pipeline" in c]
    assert stages == ["download", "extract", "format", "split", "filter", "shard", "vocab", "probe",
                      "encode", "encode", "encode", "report"]
    # the corpus is estimated from the dump: its bound (~2,000) leaves one micro-batch of the card
    assert next(x for x in out if x.startswith("corpus: ")).startswith("corpus: about 20,000 tokens, estimated from")
    steps = [line for line in out if line.startswith("step: phase ")]
    assert steps[0].startswith("step: phase 1 of 3 (128-token rows): micro-batch 512 rows x 1 accumulation = "
                               "65,536 tokens a step; 1 min 48 s, about ")
    assert steps[2].startswith("step: phase 3 of 3 (8,192-token rows): micro-batch 8 rows x 1 accumulation = "
                               "65,536 tokens a step; 27 s, about ")
    assert re.fullmatch(r"steps: about [\d,]+ of 65,536 tokens in 3m, \d+M tokens at the bench's pace "
                        r"\(bench_gpu_modern.py\)", next(x for x in out if x.startswith("steps: ")))
    # the passes over each source's text (recipes/passes.py), past 4 with the warning
    assert next(x for x in out if x.startswith("passes: the plan reads, at the bench pace, its training text "))
    assert next(x for x in out if x.startswith("warning: the plan reads its text "))
    model = next(x for x in out if x.startswith("model: "))
    assert re.fullmatch(r"model: ModernBERT, 22 layers, hidden 768: about 111\.\dM parameters \(110\.3M in the "
                        r"layers, 0\.8M in the embeddings of 1,000 pieces\)", model)
    train = next(c for c in commands if "run_pretraining.py" in c)
    assert "--tokens_per_step 65536" in train and "--train_batch_size" not in train and "--phases" in train
    phases = json.loads(next(line for line in out if line.startswith("phases (")).split("): ", 1)[1])
    assert [p["share"] for p in phases] == [0.6, 0.25, 0.15] and all("train_batch_size" not in p for p in phases)
    for step in ("trainer.export", "heldout_mlm.py", "-m trainer.evaluation ", "fill_mask.py", "trainer.finetune"):
        assert any(step in c for c in commands), step
    for step in ("heldout_mlm.py", "-m trainer.evaluation ", "fill_mask.py"):   # as the run runs them
        assert next(c for c in commands if step in c).endswith(" --device cuda"), step
    assert not (tmp_path / "data").exists() and not (tmp_path / "runs").exists()


def test_the_dry_run_on_cpu_keeps_the_batch_in_rows(sample_dump, tmp_path):
    res = pretrain("--lang", "hu", "--dump", sample_dump, "--data-dir", tmp_path / "data", "--runs",
                   tmp_path / "runs", "--device", "cpu", "--dry-run")
    assert res.returncode == 0, res.stderr
    train = next(line for line in res.stdout.splitlines() if "run_pretraining.py" in line)
    assert "--train_batch_size 32" in train and "--tokens_per_step" not in train and "--device cpu" in train
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("extra, said", [
    (["--gpu-memory", "80"], "Error: --gpu-memory plans for a card in a --dry-run with --device cuda"),
    (["--dry-run", "--device", "cuda", "--gpu-memory", "2", "--long"],
     "Error: --device cuda: a micro-batch of one 8,192-token row does not fit a card of 2 GiB"),
    (["--dry-run", "--device", "cuda", "--gpu-memory", "80", "--tokens-per-step", "100000"],
     "Error: --tokens-per-step 100,000 is not a multiple of a row a rank (128-token rows on 1 rank: 128 tokens): "
     "give 99,968 or 100,096"),
])
def test_a_plan_that_cannot_be_made_is_one_line(sample_dump, tmp_path, extra, said):
    res = pretrain("--lang", "hu", "--dump", sample_dump, "--data-dir", tmp_path / "data", *extra)
    assert res.returncode == 1 and res.stderr.strip().splitlines()[-1].startswith(said), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "data").exists()


def test_before_and_after_the_corpus_exists_the_gpu_plan_is_the_same(sample_dump, tmp_path):
    """Issue 60: before the corpus was encoded the GPU dry run planned 4,194,304 tokens a step
    (its bound left out), after the CPU run encoded it 65,536: now the dump is estimated first."""
    from tests.helpers.pretrain_corpus import encoded_tokens

    args = ["--lang", "hu", "--dump", sample_dump, "--budget", "30m", "--data-dir", tmp_path / "data",
            "--runs", tmp_path / "runs", "--dry-run", "--device", "cuda", "--gpu-memory", "80"]
    before = pretrain(*args)
    assert before.returncode == 0, before.stderr
    assert "estimated from the dump" in before.stdout and not (tmp_path / "data").exists()
    counted = encoded_tokens(sample_dump, "hu", tmp_path / "data")
    after = pretrain(*args)
    assert f"corpus: {counted:,} tokens (encode's count)" in after.stdout

    def planned(out: str) -> str:
        return next(line for line in out.splitlines() if "run_pretraining.py" in line).split("--tokens_per_step ")[1]

    assert planned(before.stdout).split()[0] == planned(after.stdout).split()[0] == "65536"
