"""Fixtures of the pipeline tests: one real Dask cluster (a scheduler and two worker processes
on 127.0.0.1) shared by every test that runs stages on a cluster, and the sample's Wikipedia
formatted once for the tests that mix other corpora with it (copy it before writing)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.stages.download import download
from pipeline.stages.extract import extract
from pipeline.stages.format import format_corpus
from tests.helpers.dask_cluster import local_cluster


@pytest.fixture(scope="session")
def dask_cluster():
    """A distributed.LocalCluster: scheduler + 2 spawned worker processes under nannies."""
    with local_cluster(2) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def wiki(sample_dump, tmp_path_factory) -> Path:
    """DATA_DIR with the sample's formatted/ (download, extract, format); read-only: copy it."""
    data = tmp_path_factory.mktemp("wiki") / "data"
    download(data_dir=data, lang="hu", dump=sample_dump)
    extract(data_dir=data, lang="hu", workers=1)
    format_corpus(data_dir=data, lang="hu", workers=1)
    return data
