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
