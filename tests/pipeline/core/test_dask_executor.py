"""The Dask executor: the local executor's contract (ordered results, bounded jobs in flight,
finished jobs passed through, errors reaching the caller) on a real scheduler with two worker
processes; a job whose shipped function died with the only worker that held it is sent again; an
unreachable scheduler is one line within seconds; the local path never loads Dask."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.core.executor import LocalExecutor, Ready, make_executor, use_scheduler
from tests.helpers.dask_cluster import kill_busy_worker, local_cluster
from tests.pipeline.core.test_executor import fails_on_three
from tests.pipeline.core.test_executor import slow_square as square_and_pid


def test_results_come_back_in_order_from_both_workers(dask_cluster):
    with use_scheduler(dask_cluster.scheduler_address) as ex:
        assert make_executor(1) is ex   # inside the block every stage gets the cluster
        out = list(ex.map(square_and_pid, range(24)))
    assert [r for r, _ in out] == [x * x for x in range(24)]
    assert len({pid for _, pid in out}) == 2 and os.getpid() not in {pid for _, pid in out}
    assert isinstance(make_executor(1), LocalExecutor)


def test_a_stream_is_consumed_a_bounded_number_ahead(dask_cluster):
    pulled = []

    def jobs():
        for i in range(40):
            pulled.append(i)
            yield square_and_pid, i

    with use_scheduler(dask_cluster.scheduler_address) as ex:
        results = ex.run(jobs())
        next(results)
        assert len(pulled) <= 4 * ex.threads() + 2
        assert len(list(results)) == 39


def test_ready_jobs_pass_through_and_errors_reach_the_caller(dask_cluster):
    with use_scheduler(dask_cluster.scheduler_address) as ex:
        out = list(ex.run([(square_and_pid, 2), Ready("done"), (square_and_pid, 3)]))
        assert out[0][0] == 4 and out[1] == "done" and out[2][0] == 9
        with pytest.raises(ValueError, match="bad item 3"):
            list(ex.map(fails_on_three, range(6)))


def test_a_failed_job_in_a_batch_comes_after_the_results_before_it(dask_cluster):
    """Results are fetched several at a time; a failure still surfaces at its own place."""
    got = []
    with use_scheduler(dask_cluster.scheduler_address) as ex:
        assert ex._limit() // 2 > 1   # the failing job shares its batch with others
        with pytest.raises(ValueError, match="bad item 3"):
            for result in ex.map(fails_on_three, range(12)):
                got.append(result)
    assert got == [fails_on_three(i) for i in range(3)]


def sleepy_square(x):
    time.sleep(0.3)
    return x * x


def test_jobs_are_sent_again_when_the_only_copy_of_their_function_dies_with_a_worker():
    """A cluster of one worker: killing it mid-stage loses the shipped function with it, and Dask
    cancels every job that needed it (FutureCancelledError before the fix); the executor ships the
    function to the restarted worker and the jobs run there."""
    with local_cluster(1) as cluster, use_scheduler(cluster.scheduler_address) as ex:
        results = ex.map(sleepy_square, range(8))
        first = next(results)
        old = kill_busy_worker(ex.client)
        rest = list(results)
        assert old not in ex.client.run(os.getpid).values()   # the nanny started a new one
    assert [first, *rest] == [x * x for x in range(8)]


def kills_its_worker(x):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize(("workers", "allowed_failures", "says"), [
    (1, 3, "the Dask cluster lost a task 4 times"),      # each death takes the function along
    (2, 0, "a task killed each Dask worker that ran it"),   # Dask gives up on it: KilledWorker
])
def test_a_job_that_kills_every_worker_it_runs_on_is_one_line(workers, allowed_failures, says):
    import dask
    import distributed  # noqa: F401 - its config defaults load before the set below, not inside it

    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}), \
            local_cluster(workers) as cluster, use_scheduler(cluster.scheduler_address) as ex:
        with pytest.raises(StageError, match=r"workers died or left while running it.*rerun the stage") as err:
            list(ex.map(kills_its_worker, range(2)))
    assert says in str(err.value) and "kills_its_worker of 0" in str(err.value)
    assert "\n" not in str(err.value)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_one_line_within_seconds(sample_dump, tmp_path):
    started = time.monotonic()
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--scheduler",
                                   f"tcp://127.0.0.1:{_free_port()}", "download", "--dump", str(sample_dump)])
    assert time.monotonic() - started < 10
    assert res.exit_code == 1 and "Traceback" not in res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0], res.output
    assert not (tmp_path / "d").exists()   # checked before any stage wrote
    env = CliRunner(env={"WIKI2BERT_SCHEDULER": str(tmp_path / "sched.json")}).invoke(
        cli, ["--data-dir", str(tmp_path / "d"), "download", "--dump", str(sample_dump)])
    assert env.exit_code == 1 and "no such scheduler file" in env.output


def test_the_local_path_never_imports_dask(sample_dump, tmp_path):
    code = ("import sys\nfrom pipeline.cli import cli\n"
            f"cli(['--data-dir', {str(tmp_path)!r}, '--workers', '2', 'download', '--dump', {str(sample_dump)!r}],"
            " standalone_mode=False)\n"
            f"cli(['--data-dir', {str(tmp_path)!r}, '--workers', '2', 'extract', '--task-mb', '0.05'],"
            " standalone_mode=False)\n"
            "print('loaded:' + ','.join(m for m in ('dask', 'distributed') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "loaded:"
    assert (tmp_path / "hu" / "extracted" / "manifest.json").is_file()


def test_jobs_wait_for_workers_that_join_later():
    """A scheduler whose workers are still starting (a Slurm job in the queue): the stage waits."""
    import threading

    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        with use_scheduler(cluster.scheduler_address) as ex:
            threading.Timer(0.5, cluster.scale, args=(1,)).start()
            assert [r for r, _ in ex.map(square_and_pid, range(4))] == [0, 1, 4, 9]


def _worker_settings() -> tuple:
    import dask

    return (os.environ.get("MALLOC_TRIM_THRESHOLD_"), dask.config.get("distributed.worker.profile.enabled"))


def test_a_local_cluster_runs_without_the_memory_trim_and_the_profiler():
    """`--scheduler local`: its workers keep glibc's own trim threshold (Dask's 64 KiB one made
    numpy-heavy tasks fault their memory in again and again) and do not sample their tasks."""
    with use_scheduler("local", 1) as ex:
        assert [r for r, _ in ex.map(square_and_pid, range(3))] == [0, 1, 4]
        assert set(ex.client.run(_worker_settings).values()) == {(None, False)}


def test_the_shipped_worker_settings_are_the_local_clusters():
    """scripts/dask-workers.yaml (for workers started by hand) says what CLUSTER_CONFIG does."""
    from pathlib import Path

    import dask
    import yaml

    from pipeline.core.dask_executor import CLUSTER_CONFIG

    path = Path(__file__).resolve().parents[3] / "scripts" / "dask-workers.yaml"
    shipped = yaml.safe_load(path.read_text())
    with dask.config.set(shipped):
        for key, value in CLUSTER_CONFIG.items():
            assert dask.config.get(key) == value, key
