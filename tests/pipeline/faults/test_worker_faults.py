"""A full disk met by a stage's workers, not by the CLI's process: the local pool's forked
workers and a Dask cluster's worker processes. Their OSError travels back to the client; the
user sees the same one line as in one process (stage, task, file, what to do), no traceback,
and nothing complete is left; the rerun on the grown disk gives the clean bytes.
"""
from __future__ import annotations

import pytest

from tests.pipeline.faults.conftest import run_faulted
from tests.pipeline.faults.test_stage_faults import (
    assert_nothing_complete,
    assert_one_line,
    assert_rerun_is_clean,
    cell_args,
)

pytestmark = pytest.mark.faults


@pytest.mark.parametrize("where", ["pool", "dask"])
def test_full_disk_in_a_worker_is_one_line(clean_data, small_disk, request, where):
    out_base = small_disk.path / "out"
    args = cell_args(clean_data, "format", out_base)
    args[args.index("--workers") + 1] = "2"
    if where == "dask":
        cluster = request.getfixturevalue("dask_cluster")
        args = ["--scheduler", cluster.scheduler_address, *args]
    # the disk fills as run.json lands: every task's write in the workers meets ENOSPC
    res = run_faulted(f"fill:{small_disk.path}/other-writer", 1, args)
    line = assert_one_line(res, "format (task ", "[ENOSPC]", str(out_base), "pipeline clean --keep")
    if where == "dask":
        assert "on the Dask worker on" in line
    assert_nothing_complete("format", out_base)
    # the failing task removed its temporary; a task stopped in the other worker when the
    # stage ended may leave its own (as kill -9 does), which no stage takes for complete and
    # the rerun removes (assert_rerun_is_clean checks that none is left)
    small_disk.remount("size=96m")
    assert_rerun_is_clean(clean_data, "format", out_base)
