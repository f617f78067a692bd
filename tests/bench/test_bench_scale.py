"""bench/bench_scale.py's measuring parts: every task timed on any executor, and Dask's overhead
with the machine's drift factored out (the benchmark itself needs ../shared's dumps)."""
from __future__ import annotations

import pytest

from pipeline.core.executor import LocalExecutor, Ready
from tests.helpers.script_module import load_script

bench_scale = load_script("bench/bench_scale.py")


def spin(n: int) -> int:
    return sum(i * i for i in range(n))


@pytest.mark.parametrize("workers", [1, 2])
def test_traced_executor_times_every_task_it_runs_and_passes_ready_ones(tmp_path, workers):
    trace = str(tmp_path / "trace")
    ex = bench_scale.TracedExecutor(LocalExecutor(workers), trace)
    jobs = [(spin, 200_000), Ready("done earlier"), (spin, 10)]
    assert list(ex.run(iter(jobs))) == [spin(200_000), "done earlier", spin(10)]
    assert list(ex.map(spin, [5, 6])) == [spin(5), spin(6)]
    times = bench_scale.traced_tasks(trace)
    assert len(times) == 4 and all(t >= 0 for t in times)
    assert max(times) > 0.001          # the 200k-square sum is real work, measured
    assert len(ex.wrapped) == 1        # one wrapper for spin: Dask ships it once


def test_traced_tasks_of_no_trace_is_empty(tmp_path):
    assert bench_scale.traced_tasks(None) == [] and bench_scale.traced_tasks(str(tmp_path / "none")) == []


def run(seconds, task_cpu, client_cpu, worker_cpu):
    stages = bench_scale.STAGES
    return {"seconds": dict.fromkeys(stages, seconds / len(stages)),
            "task_cpu": dict.fromkeys(stages, task_cpu / len(stages)),
            "client_cpu": dict.fromkeys(stages, client_cpu / len(stages)),
            "worker_cpu": dict.fromkeys(stages, worker_cpu / len(stages))}


def test_overhead_factors_out_a_slower_machine():
    local = run(seconds=100, task_cpu=180, client_cpu=10, worker_cpu=190)
    # the same work with the machine 20% slower, and Dask adding 5% wall and 2% CPU on top
    dask = run(seconds=100 * 1.2 * 1.05, task_cpu=180 * 1.2, client_cpu=10 * 1.2 * 1.02, worker_cpu=190 * 1.2 * 1.02)
    o = bench_scale.overhead(dask, local)
    assert o["speed"] == pytest.approx(1.2)
    assert o["wall"] == pytest.approx(1.26) and o["wall_per_task"] == pytest.approx(1.05)
    assert o["cpu"] == pytest.approx(1.224) and o["cpu_per_task"] == pytest.approx(1.02)
    one = bench_scale.overhead(dask, local, ("extract",))
    assert one["wall_per_task"] == pytest.approx(1.05)
