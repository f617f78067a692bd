"""Fixtures of the pipeline tests: one real Dask cluster (a scheduler and two worker processes
on 127.0.0.1) shared by every test that runs stages on a cluster."""
from __future__ import annotations

import pytest

from tests.helpers.dask_cluster import local_cluster


@pytest.fixture(scope="session")
def dask_cluster():
    """A distributed.LocalCluster: scheduler + 2 spawned worker processes under nannies."""
    with local_cluster(2) as cluster:
        yield cluster
