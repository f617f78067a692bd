"""The trainer on a folder of hundreds of small shards (issue 62): its start and a resume open
only the files the loader reads (what each file holds comes from encode's manifest), never more
than a few at once, and read no dataset of a file they do not train on; hand-made files without
a manifest are opened once each, for their metadata; the language mixture likewise on several
folders; a resume gives the batches of an uninterrupted run; what the manifest says of a file is
what the file says."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests.helpers.many_shards import HDF5Watch, encoded_folder, without_manifest
from tests.helpers.synthetic_shards import write_shard
from tests.helpers.trainer_cli import base_args, read_log
from trainer.data import DataError, find_shards, inspect_shard, read_shard
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
SHARDS = 200
RUN = dict(train_batch_size=16, max_steps=6, checkpoint_every=3, eval_every=100, optimizer="adamw",
           learning_rate=1e-3)
MOST_OPEN = 3   # the loader's reading thread, an evaluation, the start's one look at a file


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """(DATA, the encode folder of SHARDS training shards, its vocab folder)."""
    data = tmp_path_factory.mktemp("many")
    folder = encoded_folder(data, "xx", SHARDS)
    return data, folder, data / "xx" / "vocab"


def model_config(tmp_path, vocab) -> str:
    size = len((vocab / "vocab.txt").read_text(encoding="utf-8").splitlines())
    path = tmp_path / "bert.json"
    path.write_text(f'{{"vocab_size": {size}, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, '
                    '"intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2}')
    return str(path)


def watched_run(argv) -> HDF5Watch:
    with HDF5Watch() as watch:
        assert main(argv) == 0
    return watch


def training(counter) -> dict:
    return {name: n for name, n in counter.items() if "_training_" in name}


def losses(out, steps) -> list:
    return [r["loss"] for r in read_log(out) if r.get("step") in steps and "loss" in r]


def assert_opened_only_what_it_read(watch: HDF5Watch, at_most: int, folders: int = 1):
    """Every training file opened was one the loader read (the start looked at one more a
    folder at most: the data's tokenizer), few of them, and never more than MOST_OPEN files at
    once."""
    opened, read = training(watch.opens), training(watch.read)
    assert len(set(opened) - set(read)) <= folders, sorted(set(opened) - set(read))[:5]
    assert 0 < len(read) <= at_most, len(read)
    assert watch.most_open <= MOST_OPEN, watch.most_open


def test_start_and_resume_open_only_the_files_they_read(many, tmp_path):
    data, folder, vocab = many
    cfg = model_config(tmp_path, vocab)
    whole = tmp_path / "whole"
    assert main(base_args(folder, cfg, whole, vocab=vocab, **RUN)) == 0
    out = tmp_path / "resumed"
    first = watched_run(base_args(folder, cfg, out, vocab=vocab, steps_this_run=3, **RUN))
    resumed = watched_run(base_args(folder, cfg, out, vocab=vocab, resume_from_checkpoint=True, **RUN))
    # 3 steps of 16 rows and the loader's batches ahead, from files of a few rows each
    for watch in (first, resumed):
        assert_opened_only_what_it_read(watch, at_most=SHARDS // 4)
    assert losses(out, {4, 5, 6}) == losses(whole, {4, 5, 6})   # the same batches after the resume


def test_hand_made_shards_are_opened_once_each_for_their_metadata(many, tmp_path):
    """Without encode's manifest each file is looked at once (check_file: its metadata, no
    dataset), one at a time; only the files the loader reaches are read."""
    data, folder, vocab = many
    copy = without_manifest(folder, tmp_path / "copy")
    watch = watched_run(base_args(copy, model_config(tmp_path, vocab), tmp_path / "run", vocab=vocab,
                                  **{**RUN, "max_steps": 3}))
    opened, read = training(watch.opens), training(watch.read)
    twice = {name for name, n in opened.items() if n > 1 and name not in read}
    assert len(opened) == SHARDS and twice <= {"xxwiki_training_0.hdf5"}, twice   # the first: its tokenizer
    assert 0 < len(read) <= SHARDS // 4 and watch.most_open <= MOST_OPEN


def test_the_language_mixture_on_several_folders_opens_only_what_it_reads(many, tmp_path):
    data, folder, vocab = many
    other = encoded_folder(data, "yy", SHARDS // 2, seed=1, vocab=vocab)
    argv = base_args(None, model_config(tmp_path, vocab), tmp_path / "mix", vocab=vocab,
                     **{**RUN, "max_steps": 3}) + ["--input_dir", f"xx={folder}", "--input_dir", f"yy={other}"]
    watch = watched_run(argv)
    assert_opened_only_what_it_read(watch, at_most=SHARDS // 4, folders=2)
    assert {name[:2] for name in training(watch.read)} == {"xx", "yy"}


def test_a_file_changed_since_encode_is_looked_at_again(tmp_path):
    """The manifest is trusted for a file encode wrote (its size, not modified after the
    manifest); a file written later is read from itself (files of a few rows all have one size);
    a copy that keeps the times keeps the index; a file with fewer rows than the run found is
    one line when read."""
    folder = encoded_folder(tmp_path / "data", "xx", 12)
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)   # the files' times kept
    changed = sorted(copy.rglob("*_training_*.hdf5"))[0]
    with HDF5Watch() as watch:
        assert sum(s.num_samples for s in find_shards(copy).train) > 12
    assert not watch.opens
    write_shard(changed, 3, 64, 10, 200, seed=5)
    found = {s.path.name: s.num_samples for s in find_shards(copy).train}
    assert found[changed.name] == 3 and len(found) == 12
    with pytest.raises(DataError, match="holds 3 rows, fewer than listed.*encode it again"):
        read_shard(changed, np.arange(5))


@pytest.mark.parametrize("pack", [False, True])
def test_the_manifest_says_what_the_files_say(tmp_path, pack):
    """Each file's shape and layout from encode's manifest, without opening it, are those the file
    itself gives (check_file), for sentence pairs and packed rows (layout 2, doc_starts)."""
    folder = encoded_folder(tmp_path / "data", "xx", 6, pack=pack)
    with HDF5Watch() as watch:
        found = find_shards(folder)
        assert find_shards(folder / "xxwiki") == found   # the language's subfolder: the manifest above it
    assert not watch.opens
    assert found.train + found.test == [inspect_shard(s.path) for s in found.train + found.test]
    assert found.packed == pack and found.doc_starts == pack


def test_a_listed_file_that_is_gone_is_one_line(tmp_path):
    """A file the manifest lists that is now a dangling link: DataError naming it, no traceback."""
    folder = encoded_folder(tmp_path / "data", "xx", 4)
    gone = sorted(folder.rglob("*_training_1.hdf5"))[0]
    gone.unlink()
    gone.symlink_to(tmp_path / "elsewhere.hdf5")
    with pytest.raises(DataError, match="xxwiki_training_1.hdf5"):
        find_shards(folder)
