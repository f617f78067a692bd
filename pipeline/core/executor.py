"""Where a stage's tasks run: one choice for the whole pipeline, never code in a stage.

The runner hands the executor a stream of jobs (a function and its argument: paths, byte
ranges, settings) and gets their results back in the order it gave them, whatever the number
of workers, so whatever is written or merged in that order is the same for any --workers.

`LocalExecutor` (the default, nothing to start) runs jobs inline for one worker, else in a
forked process pool with at most 2 × workers jobs in flight: a stream of jobs (a dump's pages)
never piles up in memory, and a finished job's result is handed back as soon as the jobs
before it are. A `Ready(value)` job is not run: its value passes through in its place (a task
finished by an earlier run). A pool job's result travels pickled by the C pickler (_Pickled):
the pool's own (dill's) is pure Python, about 20 times the CPU on a large result (the vocab
scan's sample keys: about 160 of its 419 CPU seconds at 5 GB went there).

`use_scheduler(address)` (the CLI's `--scheduler`, or WIKI2BERT_SCHEDULER) makes every
make_executor() inside it a Dask executor (pipeline/core/dask_executor.py, which imports Dask only then)
with the same contract; the stages' global steps stay in this process. While a Dask client
lives no local pool is forked (its threads would not survive a fork).

Usage:
    ex = make_executor(workers=2)
    for result in ex.map(func, items): ...                  # ordered, like map()
    for result in ex.run(jobs): ...                         # jobs: (func, arg) or Ready(value)
    with use_scheduler("local", workers=2): extract(...)    # the same on a Dask LocalCluster
"""
from __future__ import annotations

import collections
import contextlib
import pickle
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .dask_executor import DaskExecutor  # Dask itself is imported only when a cluster starts
from .jobs import Job, Ready, default_workers  # noqa: F401  (the executor's contract, named here too)
from .os_errors import name_the_file

# Pool.terminate() joins the pool's threads, and one of them can wait forever on a queue lock
# that a worker held when terminate() killed it (CPython's Pool; seen once in ~60 full-disk
# runs under load): it gets this long, then the stage goes on and the pool's daemon threads and
# the killed workers are left to the process's exit.
TERMINATE_WAIT_S = 10.0


class LocalExecutor:
    """Jobs on this machine: inline, or a forked process pool (see the module docstring)."""

    def __init__(self, workers: int | None = None):
        self.workers = default_workers(workers)

    def map(self, func: Callable[[Any], Any], items: Iterable) -> Iterator:
        """func(item) for each item, in order."""
        size = len(items) if isinstance(items, Sequence) else None
        return self.run(((func, item) for item in items), size_hint=size)

    def run(self, jobs: Iterable[Job], size_hint: int | None = None) -> Iterator:
        """The results of `jobs`, in order (see the module docstring)."""
        workers = self.workers if size_hint is None else min(self.workers, max(1, size_hint))
        if workers == 1:
            for job in jobs:
                yield job.value if isinstance(job, Ready) else job[0](job[1])
            return
        import multiprocess  # dill pickling: closures and partials reach the workers

        # Ctrl-C reaches every process of the terminal's group: the workers leave it to this
        # one, which stops them (no traceback from each worker; cli.py prints one line)
        pool = multiprocess.get_context("fork").Pool(workers, initializer=_ignore_sigint)
        pending: collections.deque = collections.deque()
        try:
            for job in jobs:
                pending.append(job if isinstance(job, Ready) else pool.apply_async(_call, job))
                while len(pending) > 2 * workers:
                    yield _result(pending.popleft())
            while pending:
                yield _result(pending.popleft())
        except BaseException:  # an error, or the consumer stopped early: stop the workers now
            _terminate(pool)
            raise
        pool.close()
        pool.join()


def _terminate(pool) -> None:
    """pool.terminate(), waited for at most TERMINATE_WAIT_S (see there)."""
    stopper = threading.Thread(target=pool.terminate, name="pool-terminate", daemon=True)
    stopper.start()
    stopper.join(TERMINATE_WAIT_S)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Pickled:
    """A job's result as the C pickler wrote it in the worker: the pool's dill pickler then
    carries one bytes object, which costs it nothing, instead of walking the result in Python."""

    def __init__(self, data: bytes):
        self.data = data


def _call(func: Callable[[Any], Any], arg: Any) -> Any:
    """Runs in a pool worker: the job, its result pickled (_Pickled; as it is when only dill can
    pickle it); a full disk or an I/O error there gets its file's name before it travels to the
    parent (which prints it as one line, pipeline/core/os_errors.py)."""
    try:
        result = func(arg)
    except OSError as exc:
        name_the_file(exc)
        raise
    try:
        return _Pickled(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:   # a lambda, a local class: dill carries it
        return result


def _result(handle) -> Any:
    if isinstance(handle, Ready):
        return handle.value
    value = handle.get()
    # bytes this run's own forked worker pickled, over the pool's private pipe (which the pool
    # itself unpickles as well): never a file or anything another user could hand in
    return pickle.loads(value.data) if isinstance(value, _Pickled) else value


_cluster = None   # the DaskExecutor of the innermost use_scheduler(), if any


@contextlib.contextmanager
def use_scheduler(address: str, workers: int | None = None) -> Iterator:
    """Within the block, every stage's tasks run on the Dask cluster at `address` (a scheduler
    address or scheduler file; 'local' starts a LocalCluster of `workers` processes). Connects
    at once, so an unreachable scheduler is a StageError before any stage writes."""
    global _cluster
    executor = DaskExecutor.start(address, workers)
    outer, _cluster = _cluster, executor
    try:
        yield executor
    finally:
        _cluster = outer
        executor.close()


def make_executor(workers: int | None = None):
    """The executor every stage uses: the local process pool, or the cluster of use_scheduler()."""
    return _cluster if _cluster is not None else LocalExecutor(workers)
