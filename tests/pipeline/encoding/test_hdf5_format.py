"""The HDF5 contract: the file check every reader uses, NVIDIA's label rule, the folder name,
the `packed` attribute and the maskable tokens of a row."""
from __future__ import annotations

import h5py
import numpy as np
import pytest

from pipeline.encoding.hdf5_format import (
    DATASETS,
    OPTIONAL_DATASETS,
    PACKED_ATTR,
    PACKED_LAYOUT,
    PACKED_SUFFIX,
    FileShape,
    HDF5FormatError,
    check_file,
    is_packed,
    maskable_tokens,
    masked_lm_labels,
    output_folder_name,
    packed_layout,
)

FOLDER = "hdf5_lower_case_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5"


def write(path, n=4, L=16, P=3, skip=(), attrs=None, optional=(), **override):
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as f:
        f.attrs.update(attrs or {})
        keys = {**DATASETS, **{k: OPTIONAL_DATASETS[k] for k in optional}}
        for key, (dtype, width) in keys.items():
            if key in skip:
                continue
            shape = (n,) if width is None else (n, L if width == "L" else P)
            f[key] = override.get(key, np.zeros(shape, dtype=dtype))
    return path


def test_a_file_of_the_contract_passes_and_tells_its_shape(tmp_path):
    assert check_file(write(tmp_path / "a.hdf5", n=5, L=32, P=4)) == FileShape(5, 32, 4)
    # other writers' integer widths are accepted
    wide = {k: np.zeros((3, 8) if w else (3,), dtype=np.int64) for k, (_, w) in DATASETS.items()}
    assert check_file(write(tmp_path / "b.hdf5", n=3, L=8, P=8, **wide)).num_samples == 3


@pytest.mark.parametrize("kind,message", [
    ("text", "not a readable HDF5 file"),
    ("missing", "lacks masked_lm_ids"),
    ("float", "expected an integer array of rank 2"),
    ("rank", "expected an integer array of rank 1"),
    ("shapes", "inconsistent shapes"),
])
def test_files_off_the_contract_are_refused_with_the_reason(tmp_path, kind, message):
    path = tmp_path / "x.hdf5"
    if kind == "text":
        path.write_text("hello")
    elif kind == "missing":
        write(path, skip=("masked_lm_ids",))
    elif kind == "float":
        write(path, input_ids=np.zeros((4, 16), dtype=np.float32))
    elif kind == "rank":
        write(path, next_sentence_labels=np.zeros((4, 2), dtype=np.int8))
    else:
        write(path, segment_ids=np.zeros((4, 15), dtype=np.int8))
    with pytest.raises(HDF5FormatError, match=message) as err:
        check_file(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_labels_stop_at_the_first_zero_position():
    positions = np.array([[1, 4, 7, 0], [2, 0, 5, 0], [0, 0, 0, 0]])
    ids = np.array([[11, 14, 17, 0], [12, 99, 15, 0], [5, 5, 5, 5]])
    assert masked_lm_labels(positions, ids).tolist() == [
        [11, 14, 17, -1], [12, -1, -1, -1], [-1, -1, -1, -1]]


def test_folder_name_carries_every_data_option():
    assert output_folder_name(False, 128, 20, 0.15, 12345, 5) == FOLDER
    assert output_folder_name(False, 128, 20) == FOLDER     # encode's defaults, from one place
    assert output_folder_name(True, 512, 80, 0.15, 1, 10, whole_word=True, strip_accents=True) == (
        "hdf5_lower_case_1_seq_len_512_max_pred_80_masked_lm_prob_0.15_random_seed_1_dupe_factor_10"
        "_wwm_strip_accents")
    assert output_folder_name(False, 128, 20, 0.15, 1, 5, short_seq_prob=0.2).endswith("_short_seq_prob_0.2")


def test_a_file_says_whether_it_is_packed_wherever_it_lies(tmp_path):
    """The attribute first: a packed file copied into a folder of another name stays packed,
    and a file marked 0 is not packed even inside a `_packed` folder."""
    assert is_packed(write(tmp_path / "renamed" / "a_training_0.hdf5", attrs={PACKED_ATTR: 1}))
    assert not is_packed(write(tmp_path / f"x{PACKED_SUFFIX}" / "b.hdf5", attrs={PACKED_ATTR: 0}))


def test_a_file_without_the_attribute_is_judged_by_its_folder(tmp_path):
    """Files written before the attribute existed: packed inside a `*_packed` folder only."""
    old = write(tmp_path / f"{FOLDER}{PACKED_SUFFIX}" / "huwiki" / "huwiki_training_0.hdf5")
    assert is_packed(old) and is_packed(old.parent) and is_packed(old.parent.parent)
    pairs = write(tmp_path / FOLDER / "huwiki" / "huwiki_training_0.hdf5")
    assert not is_packed(pairs) and not is_packed(pairs.parent) and not is_packed(tmp_path)
    unreadable = old.with_name("not_hdf5.hdf5")
    unreadable.write_text("text")   # no attribute to read: the folder decides
    assert is_packed(unreadable)


def test_packed_layout_2_needs_doc_starts_of_the_rows_shape(tmp_path):
    assert PACKED_LAYOUT == 2
    new = write(tmp_path / "new.hdf5", n=3, L=16, attrs={PACKED_ATTR: 2}, optional=("doc_starts",))
    assert check_file(new) == FileShape(3, 16, 3, 2, ("doc_starts",)) and packed_layout(new) == 2 and is_packed(new)
    lacking = write(tmp_path / "lacking.hdf5", attrs={PACKED_ATTR: 2})
    with pytest.raises(HDF5FormatError, match="packed layout 2 .* needs a doc_starts dataset") as err:
        check_file(lacking)
    assert str(lacking) in str(err.value) and "pipeline encode --pack" in str(err.value)
    assert "\n" not in str(err.value)
    for bad in (np.zeros((4, 15), np.int8), np.zeros((3, 16), np.int8)):   # not [N, L]
        path = write(tmp_path / "bad.hdf5", attrs={PACKED_ATTR: 2}, optional=("doc_starts",), doc_starts=bad)
        with pytest.raises(HDF5FormatError, match="inconsistent shapes"):
            check_file(path)
    path = write(tmp_path / "float.hdf5", attrs={PACKED_ATTR: 2}, optional=("doc_starts",),
                 doc_starts=np.zeros((4, 16), np.float32))
    with pytest.raises(HDF5FormatError, match="doc_starts is float32"):
        check_file(path)


def test_files_of_the_layout_before_keep_working(tmp_path):
    """Layout 1 (attribute 1, or none in a `_packed` folder) and pairs pass without doc_starts."""
    marked = write(tmp_path / "renamed" / "a_training_0.hdf5", attrs={PACKED_ATTR: 1})
    older = write(tmp_path / f"{FOLDER}{PACKED_SUFFIX}" / "huwiki" / "huwiki_training_0.hdf5")
    pairs = write(tmp_path / FOLDER / "huwiki" / "huwiki_training_0.hdf5")
    flagged = write(tmp_path / "flag.hdf5", attrs={PACKED_ATTR: True})
    for path, layout in ((marked, 1), (older, 1), (pairs, 0), (flagged, 1)):
        assert check_file(path).num_samples == 4
        assert packed_layout(path) == layout and is_packed(path) == bool(layout)
    assert packed_layout(older.parent.parent) == 1 and packed_layout(tmp_path) == 0


def test_maskable_tokens_of_a_full_row():
    assert maskable_tokens(128, packed=False) == 125   # all but [CLS] A [SEP] B [SEP]'s specials
    assert maskable_tokens(128, packed=True) == 127    # all but [CLS]
