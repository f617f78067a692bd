"""trainer/run_pretraining.py, but the process SIGKILLs itself at its $KILL_AT_RENAME-th
checkpoint rename (a `.tmp_ckpt_*` folder renamed to `ckpt_*`, trainer/checkpoint/save.py):
just before it ($KILL_WHEN=before: that checkpoint stays a temporary folder, as when the kill
lands while it is written) or just after it ($KILL_WHEN=after: the checkpoint is complete and
nothing after it runs, as when the kill lands between a phase's last step and the next phase's
first). A kill from outside the training step, at a moment the step count alone cannot name."""
from __future__ import annotations

import os
import pathlib
import signal
import sys

from trainer.checkpoint.layout import TMP_PREFIX
from trainer.run_pretraining import main


def kill_at_rename(n: int, when: str) -> None:
    real, count = pathlib.Path.rename, [0]

    def rename(self, target):
        if not self.name.startswith(TMP_PREFIX + "ckpt_"):
            return real(self, target)
        count[0] += 1
        if count[0] == n and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        out = real(self, target)
        if count[0] == n:
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    pathlib.Path.rename = rename


if __name__ == "__main__":
    kill_at_rename(int(os.environ["KILL_AT_RENAME"]), os.environ.get("KILL_WHEN", "after"))
    sys.exit(main())
