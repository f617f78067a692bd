"""torchrun, with Ctrl-C as the trainer's one line instead of torchrun's own traceback.

Usage (the same arguments as torchrun):
    python -m trainer.launch --standalone --nproc_per_node=2 trainer/run_pretraining.py ...

`torchrun` itself is fine to use; on Ctrl-C its agent prints "Received 2 death signal", a line
per worker it stops, and the traceback of its SignalException, after the trainer's rank 0 has
said how to resume. This launcher runs torchrun's own `main` in-process and leaves those out:
the user sees the trainer's line, and the exit status is 130 (interrupted). A mistake the
trainer reported in one `Error: ...` line (a flag, --init_from that is not a model, the data:
trainer/errors.py writes it to torchrun's error file too) stays that one line: torchrun's
traceback and summary after it are left out, and the exit status is the rank's. Any other
failure (a rank's crash, torchrun's summary naming the root cause) is torchrun's, unchanged. The
demo and `make pretrain` launch training through it.
"""
from __future__ import annotations

import json
import logging
import signal
import sys

# torchrun's agent announces stopping the workers at WARNING; after Ctrl-C that is noise. So
# are its lines about a failed worker: the rank said why, or the summary below says it again.
_STOPPING = ("death signal", "closing signal", "no error file defined for parent",
             "failed (exitcode:")


class _QuietStop(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not any(s in record.getMessage() for s in _STOPPING)


def reported_error(exc) -> tuple[int, str] | None:
    """(exit status, the rank's `Error: ...` line) when the failed rank reported a mistake of
    the user's (trainer/errors.py's show_error wrote its error file), else None."""
    try:
        rank, failure = exc.get_first_failure()
        with open(failure.error_file, encoding="utf-8") as fh:
            line = json.load(fh)["message"]["message"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (isinstance(line, str) and line.startswith("Error: ")):
        return None
    return failure.exitcode or 1, ("" if rank == 0 else line)   # rank 0 printed it already


def main(argv=None) -> int:
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import main as torchrun

    quiet = _QuietStop()   # on the handlers: a filter on a logger misses its children's records
    for name in ("", "torch", "torch.distributed"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(quiet)
    try:
        torchrun(argv)
    except SignalException as exc:
        if exc.sigval in (signal.SIGINT, signal.SIGTERM):
            return 130   # the ranks said it (rank 0: how to resume)
        raise
    except KeyboardInterrupt:
        return 130
    except ChildFailedError as exc:
        reported = reported_error(exc)
        if reported is None:
            raise
        status, line = reported
        if line:
            print(line, file=sys.stderr, flush=True)
        return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
