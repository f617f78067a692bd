"""`pipeline export --format parquet` on the shipped sample: one cleaned article a row with the
id, title and url of its page, its sentences exactly a document of the shards and its split as
shard chose it; loads with `datasets` (also streamed); the stage contract (the same bytes for any
--workers and on Dask, rerun skipped, changed corpus refused); one-line errors; own corpora."""
from __future__ import annotations

import builtins
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.export import export
from pipeline.stages.shard import shard
from tests.helpers.export_corpus import build_corpus, shard_documents

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("data")
    build_corpus(data)
    return data


@pytest.fixture(scope="module")
def exported(corpus) -> Path:
    export(data_dir=corpus, lang="hu", workers=1, format="parquet")
    return corpus / "hu" / "export" / "parquet"


def data_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


def extracted_pages(corpus: Path) -> dict[str, str]:
    pages = {}
    for f in (corpus / "hu" / "extracted").rglob("wiki_*"):
        for line in f.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            pages[rec["id"]] = rec["title"]
    return pages


def test_rows_are_the_shards_documents_with_their_articles(corpus, exported):
    ds = datasets.load_dataset("parquet", data_dir=str(exported))
    assert set(ds) == {"train", "test"}
    assert ds["train"].column_names == ["id", "title", "url", "language", "source", "text", "sentences", "split"]
    shards = shard_documents(corpus / "hu" / "sharded")
    pages = extracted_pages(corpus)
    for name, split in (("train", "training"), ("test", "test")):
        rows = ds[name]
        assert Counter(tuple(r) for r in rows["sentences"]) == Counter(shards[split])
        assert set(rows["split"]) == {split} and set(rows["language"]) == {"hu"}
        assert set(rows["source"]) == {"wikipedia"}
        for r in rows:
            assert pages[r["id"]] == r["title"]
            assert r["url"] == "https://hu.wikipedia.org/wiki/" + r["title"].replace(" ", "_") or "%" in r["url"]
            # the text is the sentences with their paragraphs and separators kept
            assert " ".join(r["text"].split()) == " ".join(" ".join(r["sentences"]).split())
    assert any("\n\n" in t for t in ds["train"]["text"])
    assert len(set(ds["train"]["id"]) | set(ds["test"]["id"])) == len(ds["train"]) + len(ds["test"])


def test_card_and_streaming(corpus, exported):
    card = (exported / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "license: \"cc-by-sa-4.0\"" in card and "huwiki-sample" in card
    # issue 60: the sample's name has no date: the newest revision in it, as the model card says it
    newest = json.loads((corpus / "hu" / "extracted" / "manifest.json").read_text())["summary"]["newest_revision"]
    assert f"`huwiki-sample.xml.bz2`, dated {newest[:10]}, its newest revision." in card
    assert "Kept:" in card and "Filtered:" in card
    by_card = datasets.load_dataset(str(exported))            # the YAML header's configs
    assert by_card["train"].num_rows > by_card["test"].num_rows > 0
    stream = datasets.load_dataset(str(exported), split="train", streaming=True)
    first = next(iter(stream))
    assert first["id"] == by_card["train"][0]["id"] and first["sentences"]


def own_rows(folder: Path) -> dict[str, list[str]]:
    """The ids of each split as the folder's own Parquet files hold them (read without datasets)."""
    import pyarrow.parquet as pq
    return {split: [i for f in sorted((folder / "data").glob(f"{split}-*.parquet"))
                    for i in pq.read_table(f, columns=["id"]).column("id").to_pylist()]
            for split in ("train", "test")}


def test_two_exports_in_folders_of_one_name_load_their_own_rows(corpus, exported, tmp_path):
    """`datasets` caches `load_dataset(FOLDER)` by the folder's name and the card's config: two
    corpora exported to folders both named `parquet` each load their own rows in one cache (the
    second loaded the first one's rows when every card's config was "default")."""
    other = tmp_path / "other"
    shutil.copytree(corpus, other, ignore=shutil.ignore_patterns("export", "hdf5_*"))
    shard(data_dir=other, lang="hu", workers=1, num_shards=2, seed=7, test_fraction=0.2, force=True)
    export(data_dir=other, lang="hu", workers=1, format="parquet")
    second = other / "hu" / "export" / "parquet"
    assert second.name == exported.name
    mine, theirs = own_rows(exported), own_rows(second)
    assert mine != theirs                          # two corpora, or the test shows nothing
    for folder, rows in ((exported, mine), (second, theirs), (exported, mine)):
        ds = datasets.load_dataset(str(folder))
        assert {s: ds[s]["id"] for s in ds} == rows, folder
    names = [datasets.get_dataset_config_names(str(f)) for f in (exported, second)]
    assert names[0] != names[1] and all(n[0].startswith("huwiki-") for n in names)


def test_same_bytes_for_any_workers_and_on_dask(corpus, exported, tmp_path, dask_cluster):
    one = export(data_dir=corpus, lang="hu", workers=1, format="parquet", output=tmp_path / "one",
                 file_mb=0.02)
    two = export(data_dir=corpus, lang="hu", workers=2, format="parquet", output=tmp_path / "two",
                 file_mb=0.02)
    assert one["files"] > 2 and data_bytes(tmp_path / "one") == data_bytes(tmp_path / "two")
    res = CliRunner().invoke(cli, ["--data-dir", str(corpus), "--lang", "hu", "--scheduler",
                                   dask_cluster.scheduler_address, "-q", "export", "--file-mb", "0.02",
                                   "--output", str(tmp_path / "dask")])
    assert res.exit_code == 0, res.output
    assert data_bytes(tmp_path / "dask") == data_bytes(tmp_path / "one")
    assert two["documents"] == one["documents"]
    rows = datasets.load_dataset("parquet", data_dir=str(tmp_path / "two"))
    assert rows["train"]["id"] == datasets.load_dataset("parquet", data_dir=str(exported))["train"]["id"]


def run_cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def error_line(res) -> str:
    assert res.exit_code != 0 and "Traceback" not in res.output, res.output
    lines = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, res.output
    return lines[0]


def test_bad_input_is_one_line_and_leaves_no_dataset(corpus, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(corpus / "hu" / "extracted", data / "hu" / "extracted")
    line = error_line(run_cli("--data-dir", data, "--lang", "hu", "export"))
    assert "pipeline format" in line
    assert not (data / "hu" / "export" / "parquet" / "data").exists()
    line = error_line(run_cli("--data-dir", data, "--lang", "hu", "export", "--format", "csv"))
    assert "csv" in line and "parquet" in line
    with pytest.raises(StageError, match="tokens"):
        export(data_dir=data, lang="hu", format="csv")


def test_a_changed_corpus_is_refused_until_force(corpus, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(corpus, data)
    assert run_cli("--data-dir", data, "--lang", "hu", "-q", "export").exit_code == 0
    res = run_cli("--data-dir", data, "--lang", "hu", "export")
    assert res.exit_code == 0 and "already done" in res.output
    manifest = data / "hu" / "filtered" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"seconds"', '"seconds_"'))   # filter rerun
    line = error_line(run_cli("--data-dir", data, "--lang", "hu", "export"))
    assert "input changed" in line and "--force" in line
    assert (data / "hu" / "export" / "parquet" / "README.md").is_file()   # the old one stays whole
    assert run_cli("--data-dir", data, "--lang", "hu", "-q", "export", "--force").exit_code == 0


def test_without_pyarrow_one_line_names_the_extra(corpus, monkeypatch):
    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.split(".")[0] == "pyarrow":
            raise ImportError("No module named 'pyarrow'", name="pyarrow")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(StageError) as exc:
        export(data_dir=corpus, lang="hu", workers=1)
    assert "pip install 'wiki2bert[export]'" in str(exc.value) and "\n" not in str(exc.value)


def test_own_corpora_carry_their_source(corpus, tmp_path):
    from pipeline.stages.dedup import dedup
    from pipeline.stages.filter import filter_documents
    from pipeline.stages.ingest import ingest
    from pipeline.stages.shard import shard
    from pipeline.stages.split import split

    data = tmp_path / "data"
    shutil.copytree(corpus, data)
    web = Path(__file__).resolve().parents[2] / "fixtures" / "formatted_hu" / "AA_wiki_00.txt"
    ingest(data_dir=data, lang="hu", workers=1, sources={"web": str(web)})
    dedup(data_dir=data, lang="hu", workers=1)
    split(data_dir=data, lang="hu", workers=1, force=True)
    filter_documents(data_dir=data, lang="hu", workers=1, force=True)
    shard(data_dir=data, lang="hu", workers=1, num_shards=3, force=True)
    export(data_dir=data, lang="hu", workers=1, force=True)
    ds = datasets.load_dataset("parquet", data_dir=str(data / "hu" / "export" / "parquet"))
    rows = [r for split in ds.values() for r in split]
    shards = shard_documents(data / "hu" / "sharded")
    assert Counter(tuple(r["sentences"]) for r in rows) == Counter(shards["training"] + shards["test"])
    web_rows = [r for r in rows if r["source"] == "web"]
    assert web_rows and all(r["id"].startswith("web:") and r["title"] is None for r in web_rows)
    assert any(r["source"] == "wikipedia" and r["title"] for r in rows)


def test_a_web_corpus_licence_and_provenance_go_into_the_card(corpus, tmp_path):
    from pipeline.stages.dedup import dedup
    from pipeline.stages.filter import filter_documents
    from pipeline.stages.ingest import ingest
    from pipeline.stages.shard import shard
    from pipeline.stages.split import split
    from pipeline.text.documents import documents, read_utf8
    from tests.helpers.hub_corpus import fineweb2_repo

    data = tmp_path / "data"
    shutil.copytree(corpus, data)
    web = Path(__file__).resolve().parents[2] / "fixtures" / "formatted_hu" / "AA_wiki_00.txt"
    repo = fineweb2_repo(tmp_path / "fineweb-2", {"hun_Latn": list(documents(read_utf8(web)))}, files=2)
    ingest(data_dir=data, lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo})
    dedup(data_dir=data, lang="hu", workers=1)
    split(data_dir=data, lang="hu", workers=1, force=True)
    filter_documents(data_dir=data, lang="hu", workers=1, force=True)
    shard(data_dir=data, lang="hu", workers=1, num_shards=3, force=True)
    export(data_dir=data, lang="hu", workers=1, force=True)
    card = (data / "hu/export/parquet/README.md").read_text(encoding="utf-8")
    from huggingface_hub import DatasetCard
    assert DatasetCard.load(data / "hu/export/parquet/README.md").data.license == ["cc-by-sa-4.0", "odc-by"]
    assert ("- Web corpus `fineweb-2`: FineWeb-2 (HuggingFaceFW/fineweb-2 at `local copy`, its `hun_Latn` "
            "part, 2 files, https://huggingface.co/datasets/HuggingFaceFW/fineweb-2), under ODC-By 1.0") in card
    # the token rows' card names the web corpus and its licence too (its text is in the rows)
    from pipeline.stages.encode import encode
    from pipeline.stages.vocab import build_vocab
    build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=800, force=True)
    encode(data_dir=data, lang="hu", workers=1, max_seq=64, max_pred=10, dupe_factor=1, pack=True, force=True)
    export(data_dir=data, lang="hu", workers=1, format="tokens", force=True)
    tokens = data / "hu/export/tokens/README.md"
    assert DatasetCard.load(tokens).data.license == ["cc-by-sa-4.0", "odc-by"]
    assert "- Web corpus `fineweb-2`: FineWeb-2 (HuggingFaceFW/fineweb-2" in tokens.read_text(encoding="utf-8")
