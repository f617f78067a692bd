"""A masked-LM-only trainer output dir as trainer/runtime/logs.py writes it (train_log.jsonl
without nsp_loss, one eval at the end, hparams.json), for the report's tests."""
from __future__ import annotations

import json
from pathlib import Path


def write_mlm_run(run: Path, steps: int, eval_instances: int, **hparams) -> Path:
    run.mkdir(parents=True)
    lines = [{"step": s, "loss": 8 - s / 10, "mlm_loss": 8 - s / 10, "lr": 1e-3, "grad_norm": 1.0,
              "samples_per_sec": 50.0, "epoch": 0} for s in range(1, steps + 1)]
    lines.append({"step": steps, "eval_mlm_loss": 7.0, "eval_mlm_acc": 0.12, "eval_loss": 7.0,
                  "eval_instances": eval_instances})
    (run / "train_log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (run / "hparams.json").write_text(json.dumps({"phase": 1, "max_steps": steps, **hparams}))
    return run
