"""The local executor: results in order for any number of workers, a bounded number of jobs in
flight, finished jobs passed through, and the workers stopped on an error."""
from __future__ import annotations

import os
import time

import pytest

from pipeline.core.executor import LocalExecutor, Ready, default_workers


def slow_square(x):
    time.sleep(0.02 * (x % 3))   # later jobs may finish first
    return x * x, os.getpid()


def fails_on_three(x):
    if x == 3:
        raise ValueError("bad item 3")
    return x


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_order(workers):
    out = list(LocalExecutor(workers).map(slow_square, range(12)))
    assert [r for r, _ in out] == [x * x for x in range(12)]
    pids = {pid for _, pid in out}
    assert (pids == {os.getpid()}) == (workers == 1)


def test_a_stream_is_consumed_a_bounded_number_ahead():
    pulled = []

    def jobs():
        for i in range(20):
            pulled.append(i)
            yield slow_square, i

    results = LocalExecutor(2).run(jobs())
    next(results)
    assert len(pulled) <= 2 * 2 + 2   # at most 2 x workers in flight beyond the one handed back
    assert len(list(results)) == 19


@pytest.mark.parametrize("workers", [1, 2])
def test_ready_jobs_pass_through_in_their_place(workers):
    jobs = [(slow_square, 2), Ready("done"), (slow_square, 3)]
    out = list(LocalExecutor(workers).run(jobs))
    assert out[0][0] == 4 and out[1] == "done" and out[2][0] == 9


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_in_a_job_reaches_the_caller(workers):
    with pytest.raises(ValueError, match="bad item 3"):
        list(LocalExecutor(workers).map(fails_on_three, range(6)))


def test_default_workers_is_every_usable_core():
    assert default_workers(None) >= 1 and default_workers(3) == 3


def hold_the_result_lock_or_return(x):
    """Job 0 returns; job 1 takes the pool's result-queue write lock and keeps it, as a worker
    that terminate() kills in the middle of sending its result leaves it held."""
    if x == 0:
        return x
    import gc

    import multiprocess.pool

    (pool,) = [o for o in gc.get_objects() if isinstance(o, multiprocess.pool.Pool)]  # the fork's copy
    pool._outqueue._wlock.acquire()
    time.sleep(600)


def test_stopping_the_workers_never_waits_on_a_lock_a_killed_worker_held(monkeypatch):
    """The full-disk fault test hung once under load in Pool.terminate(): its task handler waited
    forever for the result queue's lock, held by a worker that terminate() had killed. The
    consumer stops early here while a worker holds that lock: the stop takes the bounded wait."""
    import threading

    import pipeline.core.executor as executor

    monkeypatch.setattr(executor, "TERMINATE_WAIT_S", 2.0)
    results = LocalExecutor(2).run([(hold_the_result_lock_or_return, 0), (hold_the_result_lock_or_return, 1)])
    assert next(results) == 0
    time.sleep(1.0)                       # the other worker has taken the lock by now
    closer = threading.Thread(target=results.close, daemon=True)
    started = time.monotonic()
    closer.start()
    closer.join(60)
    assert not closer.is_alive(), "stopping the pool hung"
    assert time.monotonic() - started < 30
