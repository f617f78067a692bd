"""torchrun, with Ctrl-C as the trainer's one line instead of torchrun's own traceback.

Usage (the same arguments as torchrun):
    python -m trainer.launch --standalone --nproc_per_node=2 trainer/run_pretraining.py ...

`torchrun` itself is fine to use; on Ctrl-C its agent prints "Received 2 death signal", a line
per worker it stops, and the traceback of its SignalException, after the trainer's rank 0 has
said how to resume. This launcher runs torchrun's own `main` in-process and leaves those out:
the user sees the trainer's line, and the exit status is 130 (interrupted). Any other failure
(a rank's error, torchrun's summary naming the root cause) is torchrun's, unchanged. The demo and
`make pretrain` launch training through it.
"""
from __future__ import annotations

import logging
import signal
import sys

# torchrun's agent announces stopping the workers at WARNING; after Ctrl-C that is noise
_STOPPING = ("death signal", "closing signal")


class _QuietStop(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not any(s in record.getMessage() for s in _STOPPING)


def main(argv=None) -> int:
    from torch.distributed.elastic.multiprocessing.api import SignalException
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
