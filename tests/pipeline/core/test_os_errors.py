"""core/os_errors.py: which OSErrors become one line, and that the rest keep their traceback."""
from __future__ import annotations

import errno
import os

import pytest

from common.os_errors import what_happened, what_to_do
from pipeline.core.errors import StageError
from pipeline.core.os_errors import REMEDY, describe, reported


@pytest.mark.parametrize("code, advice", [(errno.ENOSPC, "pipeline clean --keep"),
                                          (errno.EDQUOT, "quota"), (errno.EROFS, "read-write"),
                                          (errno.EACCES, "permissions"), (errno.EPERM, "permissions"),
                                          (errno.EIO, "check the disk"), (errno.ENOENT, "restore it")])
def test_a_data_path_fault_is_one_line_with_stage_task_file_and_advice(code, advice):
    with pytest.raises(StageError) as caught:
        with reported("vocab", task="t1"):
            raise OSError(code, os.strerror(code), "/data/hu/vocab/vocab.txt")
    line = str(caught.value)
    assert line.startswith("vocab (task t1): ") and "\n" not in line
    assert f"[{errno.errorcode[code]}] on /data/hu/vocab/vocab.txt" in line and advice in line


def test_the_line_takes_its_words_from_the_table_the_trainer_shares():
    line = describe(OSError(errno.EROFS, os.strerror(errno.EROFS), "/d/x.txt"), "encode", task="t")
    assert line == (f"encode (task t): {what_happened(errno.EROFS)} [EROFS] on /d/x.txt: "
                    f"{what_to_do(errno.EROFS, REMEDY)}; then rerun: finished work is kept")
    assert "--output (or --data-dir)" in line


def test_other_errors_keep_their_traceback():
    with pytest.raises(OSError) as caught:   # EINVAL: a bug of ours, not the user's disk
        with reported("vocab"):
            raise OSError(errno.EINVAL, "Invalid argument")
    assert caught.value.errno == errno.EINVAL
    with pytest.raises(KeyError):
        with reported("vocab"):
            raise KeyError("x")


def test_a_read_error_gets_the_name_of_the_open_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("x")
    try:
        with open(path) as _fh:   # the open file in the frame: what the line names
            raise OSError(errno.EIO, os.strerror(errno.EIO))
    except OSError as exc:
        assert f"on {path}:" in describe(exc, "split")
