"""The pipeline on a real Dask cluster (a scheduler and two worker processes on 127.0.0.1):
every output of every stage is byte-identical to a local run with one worker; a multistream
dump is extracted to the same bytes on the cluster; and a worker killed with SIGKILL in the
middle of a stage costs only its task: Dask runs it again and the output is the same."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.executor import use_scheduler
from pipeline.stages.download import download
from pipeline.stages.encode import encode
from pipeline.stages.extract import extract
from pipeline.stages.filter import filter_documents
from pipeline.stages.format import format_corpus
from pipeline.stages.shard import shard
from pipeline.stages.split import split
from pipeline.stages.vocab import build_vocab
from tests.helpers.dask_cluster import kill_busy_worker
from tests.helpers.multistream_dump import make_multistream, repeated_dump

# The same run as arguments of the CLI and of the Python functions: small tasks, so that every
# stage has several and both workers get some.
STAGES = [
    ("extract", ["--task-mb", "0.02"], extract, {"task_mb": 0.02}),
    ("format", [], format_corpus, {}),
    ("split", [], split, {}),
    ("filter", [], filter_documents, {}),
    ("shard", ["--num-shards", "4", "--test-fraction", "0.1"], shard, {"num_shards": 4, "test_fraction": 0.1}),
    ("vocab", ["--vocab-size", "600"], build_vocab, {"vocab_size": 600}),
    ("encode", ["--max-seq", "64", "--max-pred", "10"], encode, {"max_seq": 64, "max_pred": 10}),
]


def every_output(root: Path) -> dict[str, bytes]:
    """Every file the stages wrote, except those that record seconds (manifests, reports)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("manifest.json", "report.html", "vocab_report.json")}


def test_every_output_is_the_same_bytes_on_the_cluster(sample_dump, tmp_path, dask_cluster):
    data = tmp_path / "data"
    download(data_dir=data, lang="hu", dump=sample_dump)
    for _name, _args, func, kwargs in STAGES:
        func(data_dir=data, lang="hu", workers=1, **kwargs)
    local = every_output(data / "hu")

    data.rename(tmp_path / "local")
    top = ["--data-dir", str(data), "--scheduler", dask_cluster.scheduler_address, "-q"]
    assert CliRunner().invoke(cli, [*top, "download", "--dump", str(sample_dump)]).exit_code == 0
    for name, args, _func, _kwargs in STAGES:
        res = CliRunner().invoke(cli, [*top, name, *args])
        assert res.exit_code == 0, f"{name}: {res.output}"
    cluster = every_output(data / "hu")
    assert sorted(local) == sorted(cluster) and any(k.endswith(".hdf5") for k in local)
    assert [k for k in local if local[k] != cluster[k]] == []


def test_multistream_extract_on_the_cluster_is_the_local_bytes(sample_dump, tmp_path, dask_cluster):
    dump, _index = make_multistream(sample_dump, tmp_path / "ms", pages_per_stream=4)
    extract(input=sample_dump, output=tmp_path / "single", workers=1, task_mb=0.02)
    extract(input=dump, output=tmp_path / "local", workers=1, task_mb=0.02)
    with use_scheduler(dask_cluster.scheduler_address):
        extract(input=dump, output=tmp_path / "cluster", workers=2, task_mb=0.02)
    local, cluster = every_output(tmp_path / "local"), every_output(tmp_path / "cluster")
    assert local == cluster and len(local) > 4
    # the same JSON lines in the same order as the single-stream form
    assert b"".join(local.values()) == b"".join(every_output(tmp_path / "single").values())


@pytest.fixture(scope="module")
def big_multistream(sample_dump, tmp_path_factory):
    """The sample's pages 6 times over (new ids and titles), as a multistream dump."""
    folder = tmp_path_factory.mktemp("ms")
    single = repeated_dump(sample_dump, folder / "single.xml.bz2", copies=6)
    return make_multistream(single, folder, pages_per_stream=10)[0]


def test_a_worker_killed_mid_stage_costs_only_its_task(big_multistream, tmp_path, dask_cluster):
    dump = big_multistream
    extract(input=dump, output=tmp_path / "clean", workers=1, task_mb=0.03)
    killed: list[int] = []
    with use_scheduler(dask_cluster.scheduler_address) as ex:
        done = tmp_path / "killed" / ".stage" / "done"

        def killer():   # once a few tasks are done, kill a worker that is running one
            while not (done.is_dir() and len(list(done.iterdir())) >= 3):
                threading.Event().wait(0.005)
            killed.append(kill_busy_worker(ex.client))

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        summary = extract(input=dump, output=tmp_path / "killed", workers=2, task_mb=0.03)
        thread.join(timeout=30)
    assert killed, "no worker was killed"
    assert every_output(tmp_path / "killed") == every_output(tmp_path / "clean")
    assert summary["documents"] == extract(input=dump, output=tmp_path / "clean", workers=1,
                                           task_mb=0.03)["documents"]
    assert not list((tmp_path / "killed").rglob(".*.tmp"))
