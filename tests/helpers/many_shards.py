"""Folders of many small HDF5 shards as `pipeline encode` writes them (its manifest beside them),
and a watch over the HDF5 files a process opens and reads, for the tests and the bench of the
trainer on many shards (issue 62).

    folder = encoded_folder(data, "xx", shards=200)        # DATA/xx/hdf5_.../ (xxwiki/*.hdf5)
    hand_made = without_manifest(folder, tmp / "copy")      # the same files, no manifest
    with HDF5Watch() as watch:
        ...                                                 # watch.opens, watch.most_open, watch.read
"""
from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import h5py

from pipeline.stages.encode import encode
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_shards, write_vocab


def encoded_folder(data: Path, lang: str, shards: int, seq_len: int = 64, max_pred: int = 10, seed: int = 0,
                   vocab: Path | None = None, workers: int = 1, pack: bool = False) -> Path:
    """`shards` training shards of two documents each (and two test shards) through the encode
    stage, one copy (--dupe-factor 1; `pack`: encode --pack): the hdf5_... folder. `vocab`: a
    vocab folder to use (its copy under DATA/LANG/vocab), else one made from the text."""
    docs = make_documents(2 * shards + 4, seed=seed, max_sents=8)
    write_shards(data / lang / "sharded", docs, lang=lang, n_train=shards, n_test=2)
    target = data / lang / "vocab"
    if vocab is not None:
        shutil.copytree(vocab, target, dirs_exist_ok=True)
    else:
        write_vocab(target, vocab_tokens(documents_text(docs)), lower_case=False)
    (target / "manifest.json").write_text(json.dumps({"stage": "vocab"}), encoding="utf-8")
    summary = encode(data_dir=data, lang=lang, workers=workers, max_seq=seq_len, max_pred=max_pred,
                     dupe_factor=1, pack=pack)
    return Path(summary["output"]).parent


def without_manifest(folder: Path, to: Path) -> Path:
    """A copy of an encode folder's files without its manifest (as hand-made files come)."""
    shutil.copytree(folder, to, ignore=shutil.ignore_patterns("manifest.json"))
    return to


def hdf5_fds(pid: int | str = "self") -> int:
    """The open file descriptors of process `pid` (this one by default) on *.hdf5 files (0 once
    it is gone)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    count = 0
    for fd in fds:
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").endswith(".hdf5")
        except OSError:
            continue
    return count


class HDF5Watch:
    """While on: `opens` (file name -> times h5py opened it), `most_open` (the most HDF5 files
    this process held open at once, counted at each opening from /proc/self/fd) and `read` (file
    name -> elements read from its datasets)."""

    def __init__(self):
        self.opens, self.read, self.most_open = Counter(), Counter(), 0

    def __enter__(self):
        self._init, self._getitem = h5py.File.__init__, h5py.Dataset.__getitem__
        watch = self

        def init(file, name, *args, **kwargs):
            watch._init(file, name, *args, **kwargs)
            if isinstance(name, (str, os.PathLike)):   # an opening (h5py also wraps open ids)
                watch.opens[Path(name).name] += 1
                watch.most_open = max(watch.most_open, hdf5_fds())

        def getitem(dataset, *args, **kwargs):
            out = watch._getitem(dataset, *args, **kwargs)
            watch.read[Path(dataset.file.filename).name] += getattr(out, "size", 1)
            return out

        h5py.File.__init__, h5py.Dataset.__getitem__ = init, getitem
        return self

    def __exit__(self, *exc):
        h5py.File.__init__, h5py.Dataset.__getitem__ = self._init, self._getitem
