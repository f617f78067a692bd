"""The error the trainer's set-up and loop raise for a user's mistake, and how it is shown.

`run_pretraining.main()` prints it as one `Error: ...` line and exits with status 1; the
modules' own errors (ConfigError, DataError, CheckpointError, VocabError) are turned into it.
Under torchrun every rank usually fails alike: only rank 0 prints the line, and every rank
writes it to the error file torchrun gives it (TORCHELASTIC_ERROR_FILE), so that torchrun's
closing summary ("Root Cause ... traceback: Error: ...") shows the message instead of
"To enable traceback see ...". torchrun still prints its own traceback (ChildFailedError)
above that summary.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from common.os_errors import os_error_message

ERROR_FILE_ENV = "TORCHELASTIC_ERROR_FILE"
# Under torchrun, ranks other than 0 wait this long before they report: a mistake in the flags
# or the data fails every rank alike, so rank 0 finishes first, its message is the one printed
# and torchrun's "root cause", and torchrun stops the others. An error of one rank alone is
# still reported by that rank after the wait.
OTHER_RANKS_WAIT_S = 2.0


class TrainError(ValueError):
    """A user-facing problem found while setting up or running training."""


def show_error(message: str) -> None:
    """`Error: message` on stderr once (rank 0, or a process outside torchrun), and in this
    rank's torchrun error file when torchrun set one."""
    line = "Error: " + re.sub(r"\s*\n\s*", " ", message.strip())   # one line, whatever it quotes
    rank = os.environ.get("RANK", "0")
    path = os.environ.get(ERROR_FILE_ENV)
    if rank != "0" and path:
        time.sleep(OTHER_RANKS_WAIT_S)
    if rank == "0":
        print(line, file=sys.stderr, flush=True)
    if path:
        # torchrun's own layout (what its @record writes): the summary prints py_callstack
        record = {"message": {"message": line, "extraInfo": {
            "py_callstack": line, "timestamp": str(int(time.time()))}}}
        try:
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(record, fh)
        except OSError:
            pass   # rank 0's line is still on stderr


def os_fault_line(exc: OSError, args) -> str:
    """The one line for an OSError of the run: a shard under --input_dir or an output file."""

    file = Path(str(exc.filename or "")).resolve()
    folders = args.input_dir.values() if isinstance(args.input_dir, dict) else [args.input_dir]
    reading = any(d and file.is_relative_to(Path(d).resolve()) for d in folders)
    return os_error_message(exc, where="--input_dir" if reading else "--output_dir",
                            also="" if reading else ", or lower --keep_checkpoints",
                            then="; then rerun with --resume_from_checkpoint")


PEER_LOST = ("another rank of the run ended first; its own error is in torchrun's summary below "
             "(the failed rank's line): fix that, then rerun with --resume_from_checkpoint")


def peer_lost(exc: RuntimeError) -> bool:
    """A collective failed because another rank ended (that rank reports the cause)."""
    import torch.distributed as dist

    # gloo's lost peer is a plain RuntimeError: "[...pair.cc:553] Connection closed by peer"
    lost = isinstance(exc, dist.DistError) or "Connection closed by peer" in str(exc)
    return lost and int(os.environ.get("WORLD_SIZE", "1")) > 1
