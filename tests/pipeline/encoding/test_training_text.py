"""The HDF5 contract's record of the text (hdf5_format.training_text): what `pipeline encode`
writes into its manifest for the trainer's count of passes, read back without opening a file,
and made from an older manifest's per-shard counts where it has no record."""
from __future__ import annotations

import json

import pytest

from pipeline.encoding.hdf5_format import TRAINING_TEXT, check_file, training_text
from pipeline.stages.encode import encode
from pipeline.stages.shard import shard
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_vocab


@pytest.fixture(scope="module")
def two_sources(tmp_path_factory):
    """DATA_DIR/xx: filtered/ of Wikipedia (60 documents) and a web source (30, weight 2),
    sharded, and a vocab of their words."""
    data = tmp_path_factory.mktemp("text")
    wiki, web = make_documents(60, seed=1), make_documents(30, seed=2)
    filtered = data / "xx" / "filtered"
    filtered.mkdir(parents=True)
    (filtered / "AA_wiki_00.txt").write_text(documents_text(wiki), encoding="utf-8")
    (filtered / "web__part_0000.txt").write_text(documents_text(web), encoding="utf-8")
    (filtered / "manifest.json").write_text('{"stage": "filter"}')
    shard(data_dir=data, lang="xx", workers=1, num_shards=3, test_fraction=0.05, min_test_sentences=0,
          weights={"web": 2.0})
    write_vocab(data / "vocab", vocab_tokens(documents_text(wiki + web)), lower_case=False)
    return data


@pytest.mark.parametrize("pack,dupe", [(False, 2), (True, 1)])
def test_encode_records_the_training_text_and_the_reader_reads_it(two_sources, pack, dupe):
    data = two_sources
    summary = encode(data_dir=data, lang="xx", workers=1, vocab=data / "vocab", max_seq=64, max_pred=10,
                     dupe_factor=dupe, pack=pack)
    folder = next(p for p in (data / "xx").glob("hdf5_*") if p.name.endswith("_packed") == pack)
    text = training_text(folder / "xxwiki")   # the files' folder: the manifest is the one above
    files = sorted((folder / "xxwiki").glob("*_training_*.hdf5"))
    assert text.rows == sum(check_file(f).num_samples for f in files) == summary["training_instances"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert text.tokens == sum(s["tokens"] for s in manifest["shards"] if "_training_" in s["shard"])
    assert text.dupe_factor == dupe
    shards = json.loads((data / "xx/sharded/manifest.json").read_text())["summary"]["sources"]
    share = shards["web"]["training_bytes"] / (shards["web"]["training_bytes"] + shards["wikipedia"]["training_bytes"])
    assert text.sources["web"] == (round(text.tokens * share), 2.0)
    assert text.sources["wikipedia"][1] == 1.0
    assert sum(t for t, _w in text.sources.values()) == pytest.approx(text.tokens, abs=1)
    # an encode written before the record: the same, from its per-shard counts
    del manifest[TRAINING_TEXT]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert training_text(folder) == text


def test_no_manifest_is_none(tmp_path):
    assert training_text(tmp_path) is None
