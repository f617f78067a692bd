"""A small finished corpus for the export tests: the shipped sample dump through every stage up
to a packed encode (dupe factor 1), several extracted files and shards, one worker.

Usage:
    build_corpus(data_dir)                     # DATA_DIR/hu/... up to hdf5_..._packed
    shard_documents(data_dir / "hu/sharded")   # {"training": [doc, ...], "test": [...]}, docs as tuples
"""
from __future__ import annotations

from pathlib import Path

from pipeline.stages.download import download
from pipeline.stages.encode import encode
from pipeline.stages.extract import extract
from pipeline.stages.filter import filter_documents
from pipeline.stages.format import format_corpus
from pipeline.stages.shard import shard
from pipeline.stages.split import split
from pipeline.stages.vocab import build_vocab
from pipeline.text.documents import documents, read_utf8

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "huwiki-sample.xml.bz2"
SEQ = 64


def build_corpus(data: Path, pack: bool = True) -> Path:
    """The stages on the sample into `data`; returns the packed encode's folder."""
    download(data_dir=data, lang="hu", dump=SAMPLE)
    extract(data_dir=data, lang="hu", workers=1, task_mb=0.03)
    format_corpus(data_dir=data, lang="hu", workers=1)
    split(data_dir=data, lang="hu", workers=1)
    filter_documents(data_dir=data, lang="hu", workers=1)
    shard(data_dir=data, lang="hu", workers=1, num_shards=3)
    build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=800)
    summary = encode(data_dir=data, lang="hu", workers=1, max_seq=SEQ, max_pred=10, dupe_factor=1, pack=pack)
    return Path(summary["output"]).parent


def shard_documents(sharded: Path) -> dict[str, list[tuple[str, ...]]]:
    """The documents of the shards per split, each a tuple of its sentences."""
    out: dict[str, list] = {"training": [], "test": []}
    for f in sorted(sharded.glob("*.txt")):
        split = "test" if "_test_" in f.name else "training"
        out[split] += [tuple(d) for d in documents(read_utf8(f))]
    return out
