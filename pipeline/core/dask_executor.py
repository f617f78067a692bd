"""Stage tasks on a Dask distributed cluster: the executor `pipeline --scheduler ADDRESS` picks.

Imported only when a scheduler is asked for (pipeline/core/executor.py), so the local path never
loads Dask. The contract is the local executor's: results come back in the order the jobs were
given, a bounded number of jobs are in flight (4 × the cluster's worker threads, sent and
fetched in batches), and a `Ready` job passes through without being sent. What travels in the
task graph is the job's function (sent once per stage, to every worker) and its argument (paths,
byte ranges, settings), never bulk text. A task that a lost worker was running is rerun by Dask
elsewhere; tasks write under temporary names unique per attempt (common/atomic.py), so a
rerun cannot collide with what the lost attempt left. A worker lost while it held the only copy of
the shipped function (a cluster of one, or a worker that joined after the function was sent) takes
that copy with it, and Dask cancels every task that needed it: those jobs are shipped and sent
again, a few times at most.

Usage:
    ex = DaskExecutor.start("local", workers=2)     # a LocalCluster of 2 worker processes
    ex = DaskExecutor.start("tcp://10.0.0.5:8786")  # or a scheduler file: sched.json
    for result in ex.run(jobs): ...
    ex.close()
"""
from __future__ import annotations

import collections
import gc
import itertools
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any

from .errors import StageError
from .jobs import Ready
from .os_errors import is_data_error, name_the_file

CONNECT_TIMEOUT_S = 10  # Dask waits 30 s by default, retrying noisily
# Dask's defaults suit interactive work; ours is long pure-Python tasks. The workers' sampling
# profiler (every 10 ms) takes the GIL from the task thread: it cost 20-30% more CPU for the
# same extract tasks here. The ticks and monitors only wake the event loops less often.
# A LocalCluster gets these; for other workers docs/cluster.md gives the environment variables.
# Dask's nannies also start their workers with MALLOC_TRIM_THRESHOLD_=65536, handing freed
# memory back to the OS at once: numpy-heavy tasks then fault their pages in again and again
# (encode took 1.7x the CPU of the local pool here, filter 1.2x). None unsets it: glibc's
# own adaptive threshold, as in the local pool.
CLUSTER_CONFIG = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.tick.interval": "1s",
}
PROBE_TIMEOUT_S = 3
LIMIT_REFRESH_S = 5
LOST_RESENDS = 3   # a job cancelled by the cluster (its function's copies lost) is sent again
WORKERS_DIED = ("workers died or left while running it; a worker's memory limit or the machine's "
                "memory is the usual cause (the worker logs say); rerun the stage to go on")
DASK_LOGGERS = ("distributed", "tornado")
log = logging.getLogger("pipeline")


def quiet_dask_logs() -> None:
    """Dask's own loggers say only errors: connection retries and worker restarts are not the
    user's business (a task a lost worker ran is rerun; a real failure still reaches us)."""
    for name in DASK_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def _probe(address: str) -> None:
    """A refused or unroutable TCP address fails here at once (Dask itself retries until its
    timeout); other protocols are left to Dask."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    protocol, location = parse_address(address)
    if protocol == "tcp":
        host, port = parse_host_port(location, default_port=8786)
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()


def _call(func: Callable[[Any], Any], arg: Any, cwd: str) -> Any:
    """Runs on a worker: the job, with relative paths meaning what they mean on the client
    (the data directory must be at the same path on every machine)."""
    if os.getcwd() != cwd:
        try:
            os.chdir(cwd)
        except OSError:
            raise StageError(f"the client's working directory {cwd} does not exist on the worker "
                             f"on {socket.gethostname()}: the data must be at the same path on "
                             "every machine (docs/cluster.md)") from None
    try:
        return func(arg)
    except OSError as exc:
        if is_data_error(exc):   # a full disk is that machine's: the client's line says which

            exc.where = f"(on the Dask worker on {socket.gethostname()})"
            name_the_file(exc)
        raise


class DaskExecutor:
    """Jobs as tasks of a Dask cluster; see the module docstring."""

    def __init__(self, client, cluster=None):
        self.client = client
        self.cluster = cluster   # the LocalCluster we started, closed with us
        self._asked, self._cached_limit = -LIMIT_REFRESH_S, 2

    @classmethod
    def start(cls, address: str, workers: int | None = None) -> DaskExecutor:
        """Connect to the scheduler at `address` (or a scheduler file; 'local': start a
        LocalCluster of `workers` processes). StageError in one line, within seconds, when no
        scheduler answers."""
        import dask
        from distributed import Client, LocalCluster

        quiet_dask_logs()   # after the import: importing distributed sets its own levels

        if address == "local":
            # Worker processes (spawned, one thread each): the stages' work is pure Python.
            # A nanny started earlier in this process (Dask's defaults) leaves its 64 KiB trim in
            # os.environ, which spawned workers would inherit whatever the config says.
            if os.environ.get("MALLOC_TRIM_THRESHOLD_") == "65536":
                del os.environ["MALLOC_TRIM_THRESHOLD_"]
            with dask.config.set(CLUSTER_CONFIG):   # the nannies hand it to their workers
                cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                       processes=True, host="127.0.0.1", dashboard_address=":0",
                                       silence_logs=logging.CRITICAL)   # a failed task is ours to report
                return cls(Client(cluster, set_as_default=False), cluster)
        kwargs = {"scheduler_file": address} if address.endswith(".json") else {"address": address}
        if "scheduler_file" in kwargs and not Path(address).is_file():
            raise StageError(f"--scheduler {address}: no such scheduler file; start the scheduler "
                             "with `dask scheduler --scheduler-file FILE` first, or give its address")
        reason = None
        try:
            if "address" in kwargs:
                _probe(address)
            with dask.config.set(CLUSTER_CONFIG):
                client = Client(**kwargs, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except Exception as exc:  # noqa: BLE001 - whatever answered there, it is no scheduler of ours
            reason = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
            if not isinstance(exc, (OSError, TimeoutError)):
                reason = f"what answers there is no Dask scheduler: {reason}"
        if reason is not None:
            # The half-made client closes now, while its event loop runs (at exit it waits 20 s).
            gc.collect()
            raise StageError(
                f"cannot reach the Dask scheduler at {address} ({reason}): start it "
                "(`dask scheduler`, docs/cluster.md) or check the address; without --scheduler "
                "the stages run on this machine")
        return cls(client)

    def threads(self) -> int:
        """Worker threads of the cluster now (at least 1, so that a cluster still starting gets
        work queued)."""
        return max(1, sum(self.client.nthreads().values()))

    def _limit(self) -> int:
        """Jobs in flight: 4 x the cluster's threads (sent in batches of half: a worker always
        has one queued), asked again at most every few seconds (workers join and leave)."""
        now = time.monotonic()
        if now - self._asked > LIMIT_REFRESH_S:
            self._asked, self._cached_limit = now, 4 * self.threads()
        return self._cached_limit

    def _ship(self, func):
        """The function as data every worker holds (sent once; a lost worker costs no copy)."""
        if not self.client.nthreads():   # a cluster still starting (jobs queued by Slurm)
            log.info("waiting for Dask workers to join the scheduler ...")
            self.client.wait_for_workers(1)
        return self.client.scatter(func, broadcast=True, hash=False)

    def map(self, func: Callable[[Any], Any], items: Iterable) -> Iterator:
        """func(item) for each item, in order."""
        size = len(items) if isinstance(items, Sequence) else None
        return self.run(((func, item) for item in items), size_hint=size)

    def run(self, jobs: Iterable, size_hint: int | None = None) -> Iterator:
        """The results of `jobs`, in order: (func, arg) run on the cluster, Ready passes. Jobs
        go out and results come back in batches of half the in-flight limit: one message to the
        scheduler and one fetch per batch (the client and scheduler spent about 7 ms of CPU per
        task one at a time, under 3 ms in batches of 4)."""
        cwd = os.getcwd()
        # id(func) -> (func, its shipped copy); holding func keeps its id from being reused
        shipped: dict[int, tuple[Any, Any]] = {}
        sent: dict[Any, tuple] = {}   # future key -> its (func, arg), to send it again
        pending: collections.deque = collections.deque()
        head: list = []     # the batch whose results are being handed back
        jobs = iter(jobs)
        more = True
        self._asked = -LIMIT_REFRESH_S
        try:
            while more or pending:
                limit = self._limit()
                if more and len(pending) <= limit // 2:
                    batch = list(itertools.islice(jobs, limit - len(pending)))
                    more = len(batch) == limit - len(pending)
                    pending.extend(self._submit(batch, shipped, sent, cwd))
                if pending and isinstance(pending[0], Ready):
                    yield pending.popleft().value
                elif pending:
                    head = [pending.popleft()]
                    while pending and len(head) < max(1, limit // 2) and not isinstance(pending[0], Ready):
                        head.append(pending.popleft())
                    yield from self._gather(head, shipped, sent, cwd)
                    head = []
        finally:   # an error, or the consumer stopped early: nothing of ours keeps running
            self.client.cancel(head + [f for f in pending if not isinstance(f, Ready)])
            self.client.cancel([copy for _, copy in shipped.values()])

    def _submit(self, batch: list, shipped: dict, sent: dict, cwd: str) -> list:
        """`batch` in order: its Ready jobs as they are, the others as futures of one map."""
        todo = [job for job in batch if not isinstance(job, Ready)]
        for func, _ in todo:
            # not yet shipped, or its copies were lost with the workers that held them
            if id(func) not in shipped or shipped[id(func)][1].status != "finished":
                shipped[id(func)] = (func, self._ship(func))
        futures = self.client.map(_call, [shipped[id(func)][1] for func, _ in todo],
                                  [arg for _, arg in todo], [cwd] * len(todo), pure=False) if todo else []
        sent.update((future.key, job) for future, job in zip(futures, todo))
        futures = iter(futures)
        return [job if isinstance(job, Ready) else next(futures) for job in batch]

    def _gather(self, futures: list, shipped: dict, sent: dict, cwd: str) -> Iterable:
        """Their results, fetched together. When one failed: the results before it, then its
        error, as if they had been fetched one by one; a job the cluster cancelled (not us) is
        sent again."""
        try:
            results = self.client.gather(futures)
        except Exception:  # noqa: BLE001 - re-raised below, in job order
            return (self._result(future, shipped, sent, cwd) for future in futures)
        for future in futures:
            sent.pop(future.key, None)
        return results

    def _result(self, future, shipped: dict, sent: dict, cwd: str) -> Any:
        """The future's result; a job the cluster cancelled is shipped and sent again; one that
        killed every worker that ran it is one line."""
        from distributed import KilledWorker

        job, resends = sent.pop(future.key), 0
        while True:
            try:
                return future.result()
            except KilledWorker:
                raise StageError(f"a task killed each Dask worker that ran it ({_job_name(job)}): "
                                 f"{WORKERS_DIED}") from None
            except CancelledError as exc:   # distributed's FutureCancelledError (2024.7+) is one
                reason = getattr(exc, "reason", None) or "cancelled"
                if resends == LOST_RESENDS:
                    raise StageError(f"the Dask cluster lost a task {resends + 1} times "
                                     f"({_job_name(job)}; {reason}): {WORKERS_DIED}") from None
                log.debug("a task was cancelled by the cluster (%s); sending it again", reason)
                future, resends = self._submit([job], shipped, sent, cwd)[0], resends + 1
                sent.pop(future.key, None)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _job_name(job: tuple) -> str:
    """The job in a few words for an error line: its function and the start of its argument."""
    func, arg = job
    name = getattr(func, "__name__", None) or getattr(getattr(func, "func", None), "__name__", "job")
    return f"{name} of {str(arg)[:80]}"
