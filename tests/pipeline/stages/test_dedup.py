"""dedup: exact and near copies across Wikipedia and ingested sources (Wikipedia wins, then the
order of the sources), per-source counts and examples, the same bytes for any workers and on a
real Dask cluster; `pipeline run --source` with and without a dump, weights and per-source
counts in the shard and encode manifests."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages.dedup import dedup
from pipeline.stages.ingest import ingest
from pipeline.stages.split import split
from pipeline.text.documents import documents, read_utf8
from tests.helpers.kill_at_rename import KILL_AT_NTH_RENAME
from tests.helpers.web_corpus import planted_corpus, write_corpus

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def corpora(wiki, tmp_path_factory) -> tuple[dict, list]:
    """web: 6 exact and 6 near copies of Wikipedia articles, 20 new documents; mirror: copies
    of web's new documents (a later source) and 5 new ones."""
    docs = [d for f in sorted((wiki / "hu/formatted").glob("*.txt")) for d in documents(read_utf8(f))]
    web = planted_corpus(docs, seed=0)
    more = planted_corpus(docs, seed=1, copies=0, near=0, new=5)
    folder = tmp_path_factory.mktemp("corpora")
    write_corpus(folder / "web.jsonl.gz", [d for _k, d in web], "jsonl.gz")
    mirror = [d for k, d in web if k == "new"] + [d for _k, d in more]
    write_corpus(folder / "mirror.txt.zst", mirror, "text.zst")
    return {"web": str(folder / "web.jsonl.gz"), "mirror": str(folder / "mirror.txt.zst")}, web


def with_wiki(wiki: Path, dest: Path) -> Path:
    shutil.copytree(wiki, dest)
    return dest


def test_copies_go_wikipedia_wins_then_source_order(wiki, corpora, tmp_path):
    sources, _web = corpora
    data = with_wiki(wiki, tmp_path / "data")
    ingest(data_dir=data, lang="hu", workers=1, sources=sources)
    summary = dedup(data_dir=data, lang="hu", workers=1)
    per = summary["per_source"]
    assert per["wikipedia"]["kept"] == per["wikipedia"]["documents"] == 40
    assert per["web"]["exact"] == 6 and per["web"]["near"] == 6      # every planted copy found
    assert per["web"]["kept"] == 20                                 # no distinct document lost
    assert per["mirror"]["exact"] == 20 and per["mirror"]["kept"] == 5
    assert per["mirror"]["removed_share"] == pytest.approx(0.8)
    manifest = json.loads((data / "hu/deduped/manifest.json").read_text())
    kinds = {(e["reason"], e["removed_source"], e["kept_source"]) for e in manifest["examples"]}
    assert {("exact", "web", "wikipedia"), ("near", "web", "wikipedia"), ("exact", "mirror", "web")} <= kinds
    names = sorted(p.name for p in (data / "hu/deduped").glob("*.txt"))
    assert names[0].startswith("mirror__") and names[-1].startswith("wikipedia__")
    # split reads the deduplicated mix once there is one, file names (sources) kept
    split(data_dir=data, lang="hu", workers=1)
    assert sorted(p.name for p in (data / "hu/sentences").glob("*.txt")) == names


def test_same_bytes_for_any_workers_and_on_a_dask_cluster(wiki, corpora, tmp_path, dask_cluster):
    sources, _web = corpora
    local = with_wiki(wiki, tmp_path / "local")
    ingest(data_dir=local, lang="hu", workers=1, sources=sources, part_mb=0.01)
    dedup(data_dir=local, lang="hu", workers=1)
    cluster = with_wiki(wiki, tmp_path / "cluster")
    top = ["--data-dir", str(cluster), "--scheduler", dask_cluster.scheduler_address, "-q"]
    args = [a for name, path in sources.items() for a in ("--source", f"{name}={path}")]
    for cmd in (["ingest", *args, "--part-mb", "0.01"], ["dedup"]):
        res = CliRunner().invoke(cli, [*top, *cmd])
        assert res.exit_code == 0, res.output
    for stage in ("ingested", "deduped"):
        a = {p.name: p.read_bytes() for p in (local / "hu" / stage).glob("*.txt")}
        b = {p.name: p.read_bytes() for p in (cluster / "hu" / stage).glob("*.txt")}
        assert a == b and len(a) > 3


@pytest.mark.slow
def test_run_without_a_dump_weights_and_per_source_counts(corpora, tmp_path):
    sources, _web = corpora
    args = ["--data-dir", str(tmp_path / "d"), "-q", "--workers", "2", "run", "--vocab-size", "400",
            "--encode", "64/10", "--source", f"web={sources['web']}",
            "--source", f"mirror={sources['mirror']}", "--weight", "mirror=3"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    hu = tmp_path / "d/hu"
    assert not (hu / "download").exists() and not (hu / "formatted").exists()   # nothing downloaded
    shard = json.loads((hu / "sharded/manifest.json").read_text())
    per = shard["summary"]["sources"]
    assert set(per) == {"web", "mirror"} and per["mirror"]["weight"] == 3.0
    train = {s: per[s]["documents"] - per[s]["test_documents"] for s in per}
    assert per["mirror"]["training_documents"] == 3 * train["mirror"]
    assert per["web"]["training_documents"] == train["web"]
    assert sum(sum(r["sources"].values()) for r in shard["shards"]) == (
        sum(p["training_documents"] + p["test_documents"] for p in per.values()))
    encode = json.loads(next(hu.glob("hdf5_*/manifest.json")).read_text())
    assert {s: c["training_documents"] for s, c in encode["sources"].items()} == {
        s: per[s]["training_documents"] for s in per}
    page = (hu / "report.html").read_text()
    assert "Sources: what came from where" in page and "[mirror] " in page   # a removed pair


def renames_of(run) -> list[str]:
    """The destinations of every atomic rename (os.replace) that `run()` makes, in order."""
    real, seen = os.replace, []

    def replace(a, b):
        seen.append(str(b))
        return real(a, b)

    os.replace = replace
    try:
        run()
    finally:
        os.replace = real
    return seen


@pytest.mark.faults   # the kill -9 cell of docs/reliability.md's matrix, at each of dedup's steps
@pytest.mark.parametrize("step, marker", [("hash", ".sig.npy"), ("buckets", ".records.npy"),
                                          ("decide", ".decisions.npz"), ("write", ".txt")])
def test_kill_9_at_each_step_then_rerun_resumes_to_the_same_bytes(wiki, corpora, tmp_path, step, marker):
    sources, _web = corpora
    data = with_wiki(wiki, tmp_path / "data")
    ingest(data_dir=data, lang="hu", workers=1, sources=sources, part_mb=0.01)
    args = ["--memory-mb", "0.1"]   # several buckets
    clean = renames_of(lambda: dedup(data_dir=data, lang="hu", workers=1, output=tmp_path / "clean", memory_mb=0.1))
    at = [i + 1 for i, path in enumerate(clean) if path.endswith(marker)]
    assert len(at) >= 3, (step, len(at))
    nth = at[len(at) // 2]   # mid-step: some of its tasks done, one renamed half-way
    out = tmp_path / "killed"
    cmd = [sys.executable, "-c", KILL_AT_NTH_RENAME, str(nth), "--data-dir", str(data), "--lang", "hu",
           "--workers", "1", "dedup", "--output", str(out), *args]
    res = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == -9, res.stderr[-3000:]
    assert not (out / "manifest.json").exists()
    again = renames_of(lambda: dedup(data_dir=data, lang="hu", workers=1, output=out, memory_mb=0.1))
    earlier = {"hash": [], "buckets": [".sig.npy"], "decide": [".sig.npy", ".records.npy"],
               "write": [".sig.npy", ".records.npy", ".decisions.npz"]}[step]
    assert not [p for p in again if p.endswith(tuple(earlier))], "finished steps were redone"
    assert len([p for p in again if p.endswith(marker)]) < len(at) or step == "decide"   # the sweep reruns whole
    txt = {p.name: p.read_bytes() for p in out.glob("*.txt")}
    assert txt == {p.name: p.read_bytes() for p in (tmp_path / "clean").glob("*.txt")} and len(txt) > 3
    assert not list(out.rglob(".*.tmp"))
