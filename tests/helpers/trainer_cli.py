"""Running the trainer from tests: its argv from keyword options (plain or --deepspeed), its
log, a subprocess environment, a run that must stop on one `Error:` line."""
from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "trainer" / "run_pretraining.py"
ZERO1 = ROOT / "trainer" / "configs" / "ds_zero1.json"
BOTH_WAYS = ("tensorboard", "torch_compile", "unpad", "budget_replan")  # flags with a --no- form


def base_args(shards, cfg, out, vocab=None, **kw):
    """run_pretraining.py's argv: a tiny fp32 CPU run of 8 steps unless `kw` says otherwise."""
    opts = {"bert_config": cfg, "input_dir": shards, "output_dir": out, "train_batch_size": 8,
            "max_steps": 8, "log_every": 1, "checkpoint_every": 4, "learning_rate": 1e-2,
            "warmup_proportion": 0.1, "seed": 3, "device": "cpu", "tensorboard": False, **kw}
    if vocab:
        opts["vocab_file"] = vocab
    argv = []
    for k, v in opts.items():
        if k in BOTH_WAYS and v is not None:
            argv.append(f"--{k}" if v else f"--no-{k}")
        elif v is True:
            argv.append(f"--{k}")
        elif v is not False and v is not None:
            argv += [f"--{k}", str(v)]
    return argv


def read_log(out):
    return [json.loads(line) for line in (Path(out) / "train_log.jsonl").read_text().splitlines()]


def one_error(capsys, argv, *expected, out=None, alone=False) -> str:
    """run_pretraining's main(argv) returns 1 with exactly one `Error: ` line on stderr, holding
    each of `expected`; nothing was written at `out` when given; with `alone`, stderr holds
    nothing else. The line, for further checks."""
    from trainer.run_pretraining import main

    capsys.readouterr()
    assert main(list(map(str, argv))) == 1
    said = capsys.readouterr().err
    err = [line for line in said.splitlines() if line.startswith("Error:")]
    assert len(err) == 1 and err[0].startswith("Error: "), said
    if alone:
        assert said.strip().splitlines() == err, said
    if out is not None:
        assert not Path(out).exists(), err   # nothing written
    for words in expected:
        assert words in err[0], err[0]
    return err[0]


def env(**extra):
    """The environment of a trainer subprocess: one intra-op thread, the repo importable."""
    e = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), **extra)
    e.pop("WIKI2BERT_TRACEBACK", None)
    return e


def deepspeed_args(shards, cfg, out, **kw):
    """run_pretraining.py's argv for a tiny --deepspeed run (ZeRO-1, bf16) of 4 steps."""
    opts = {"bert_config": cfg, "input_dir": shards, "output_dir": out, "train_batch_size": 4,
            "max_steps": 4, "log_every": 1, "checkpoint_every": 2, "learning_rate": 1e-2,
            "seed": 5, "device": "cpu", "deepspeed_config": ZERO1, **kw}
    out = ["--deepspeed", "--no-tensorboard"]
    for k, v in opts.items():
        out += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    return out


def assert_same_run(straight, parts, last_step):
    """The same logged losses, lr and eval losses, and the same final weights (a budget's
    clock at the end and an --extend record are left out: they are time and plans, not training)."""
    import torch

    a, b = ([r for r in read_log(run) if "budget_spent_s" not in r and "extended_from_step" not in r]
            for run in (straight, parts))
    assert [r["step"] for r in a] == [r["step"] for r in b]
    for x, y in zip(a, b):
        for key in ("loss", "mlm_loss", "nsp_loss", "lr", "eval_loss"):
            if key in x:
                assert abs(x[key] - y[key]) <= 1e-5, (x["step"], key, x[key], y[key])
    name = f"ckpt_{last_step:08d}"
    wa = torch.load(straight / "checkpoints" / name / "model.pt", weights_only=True)
    wb = torch.load(parts / "checkpoints" / name / "model.pt", weights_only=True)
    assert all(torch.allclose(wa[k], wb[k], atol=1e-6) for k in wa)
