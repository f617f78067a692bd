"""A real Dask cluster for tests: a scheduler and two worker processes (spawned, under
nannies) on 127.0.0.1, and a way to kill one of its workers with SIGKILL.

Usage:
    with local_cluster(2) as cluster:          # distributed.LocalCluster
        with use_scheduler(cluster.scheduler_address): ...
    kill_busy_worker(client)                   # kill -9 a worker that is running a task
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import time


@contextlib.contextmanager
def local_cluster(workers: int = 2):
    from distributed import LocalCluster

    from pipeline.core.dask_executor import quiet_dask_logs

    quiet_dask_logs()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=":0", silence_logs=logging.CRITICAL)
    try:
        yield cluster
    finally:
        cluster.close()


def worker_pids(client) -> dict[str, int]:
    """Worker address -> process id."""
    return client.run(os.getpid)


def kill_busy_worker(client, timeout: float = 60.0) -> int:
    """SIGKILL the process of a worker that is running a task now; returns its pid."""
    deadline = time.monotonic() + timeout
    pids = worker_pids(client)
    while time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if keys and w in pids]
        if busy:
            os.kill(pids[busy[0]], signal.SIGKILL)
            return pids[busy[0]]
        time.sleep(0.01)
    raise AssertionError("no worker became busy")
