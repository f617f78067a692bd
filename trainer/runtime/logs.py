"""Run records in output_dir: train_log.jsonl, TensorBoard events, the code's git hash + diff.

    log = MetricsLogger(output_dir, enabled=env.is_main)
    log.log(step, {"loss": 2.3, "lr": 1e-4}); log.close()
    write_git_info(output_dir)   # -> {"commit": ..., "dirty": ...}, git_diff.patch when dirty
"""
from __future__ import annotations

import json
import logging
import math
import subprocess
from pathlib import Path

from common.atomic import write_text_atomic
from common.os_errors import as_os_error

log = logging.getLogger("trainer")

TRAIN_LOG = "train_log.jsonl"
REPO_ROOT = Path(__file__).resolve().parents[2]


def setup_logging(is_main: bool) -> None:
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


class MetricsLogger:
    """One JSON line per logged step (rank 0 only) and the same scalars in TensorBoard."""

    def __init__(self, output_dir: str | Path, enabled: bool = True, tensorboard: bool = True):
        self.enabled = enabled
        self.path = Path(output_dir) / TRAIN_LOG
        self.writer = None
        if enabled and tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
                self.writer = SummaryWriter(log_dir=str(Path(output_dir) / "tensorboard"))
            except ImportError:
                log.warning("tensorboard is not installed: no TensorBoard events (pip install tensorboard)")

    def truncate_after(self, step: int) -> None:
        """On resume: drop lines the interrupted run logged after the checkpoint's step."""
        if not (self.enabled and self.path.is_file()):
            return
        lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [ln for ln in lines if ln.strip() and json.loads(ln).get("step", 0) <= step]
        if len(kept) != len(lines):
            write_text_atomic(self.path, lambda fh: fh.writelines(kept))

    def log(self, step: int, metrics: dict, prefix: str = "train") -> None:
        if not self.enabled:
            return
        record = {"step": step, **{k: v for k, v in metrics.items()}}
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        except OSError as exc:   # a full disk fails the flush at close, which names no file

            raise as_os_error(exc, self.path) from None
        if self.writer is not None:
            for k, v in metrics.items():
                if isinstance(v, (int, float)) and math.isfinite(v):
                    self.writer.add_scalar(f"{prefix}/{k}", v, step)
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _git(*cmd: str) -> str | None:
    try:
        res = subprocess.run(["git", *cmd], cwd=REPO_ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout if res.returncode == 0 else None


def write_git_info(output_dir: str | Path, patch: str = "git_diff.patch") -> dict:
    """The code's commit, untracked files, and `git diff HEAD` in `patch` when the tree has
    changes (the DeepSpeed BERT tutorial's advice: know exactly what code made a model)."""
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return {}
    diff = _git("diff", "HEAD") or ""
    untracked = (_git("ls-files", "--others", "--exclude-standard") or "").split()
    info = {"commit": commit.strip(), "dirty": bool(diff or untracked), "untracked": untracked}
    if diff:
        write_text_atomic(Path(output_dir) / patch, lambda fh: fh.write(diff))
    return info
