"""The same inputs in another data directory (another name, another depth; on another node it
would be another mount) give byte-identical outputs: shards, vocab (sentencepiece's model
records no path) and HDF5."""
from __future__ import annotations

import pytest

from pipeline.stages.download import download
from tests.pipeline.test_dask_pipeline import STAGES, every_output


@pytest.mark.slow
def test_every_output_is_the_same_bytes_in_another_data_dir(sample_dump, tmp_path):
    outputs = []
    for data in (tmp_path / "data", tmp_path / "elsewhere" / "a" / "much_longer_name"):
        download(data_dir=data, lang="hu", dump=sample_dump)
        for _name, _args, func, kwargs in STAGES:
            func(data_dir=data, lang="hu", workers=1, **kwargs)
        outputs.append(every_output(data / "hu"))
    first, second = outputs
    assert any(k.endswith("spm.model") for k in first) and any(k.endswith(".hdf5") for k in first)
    assert sorted(first) == sorted(second)
    assert [k for k in first if first[k] != second[k]] == []
