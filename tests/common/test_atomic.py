"""common/atomic.py: the bytes each writer gets, the file's mode, and that a failed write
leaves neither a temporary nor a changed target."""
from __future__ import annotations

import errno
import json
import os
import stat

import pytest

from common import atomic
from common.atomic import atomic_open, atomic_path, remove_stale_temporaries, write_json_atomic, write_text_atomic

OBJ = {"b": "Árvíztűrő", "a": [1, 2.5, None], "c": {"z": True, "y": "x"}}


def temporaries(folder):
    return sorted(folder.rglob(".*.tmp"))


def test_write_json_atomic_writes_the_bytes_every_caller_wrote_before(tmp_path):
    """Indent 2, sorted keys, non-ASCII as it is, one newline at the end: the bytes of the
    pipeline's manifests and of the trainer's hparams.json and results.json."""
    path = tmp_path / "new" / "folder" / "hparams.json"   # the folder is created
    write_json_atomic(path, OBJ)
    assert path.read_bytes() == (
        '{\n  "a": [\n    1,\n    2.5,\n    null\n  ],\n  "b": "Árvíztűrő",\n'
        '  "c": {\n    "y": "x",\n    "z": true\n  }\n}\n').encode()
    write_json_atomic(path, OBJ, sort_keys=False, indent=None)
    assert path.read_text(encoding="utf-8") == json.dumps(OBJ, ensure_ascii=False) + "\n"
    assert not temporaries(tmp_path)


def test_the_file_mode_comes_from_the_umask(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_UMASK", 0o027)   # read once, at import
    write_json_atomic(tmp_path / "a.json", {})
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o640


def test_write_text_atomic_calls_the_writer_on_a_temporary(tmp_path):
    path = tmp_path / "predictions.txt"
    write_text_atomic(path, lambda fh: fh.write("szó\n"))
    assert path.read_bytes() == "szó\n".encode()


@pytest.mark.parametrize("write", [
    lambda p: write_text_atomic(p, lambda fh: (fh.write("half"), 1 / 0)),
    lambda p: write_json_atomic(p, {"not json": object()}),
])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, write):
    path = tmp_path / "results.json"
    path.write_text("old\n")
    with pytest.raises((ZeroDivisionError, TypeError)):
        write(path)
    assert path.read_text() == "old\n"
    assert not temporaries(tmp_path)


def test_a_failed_write_of_a_new_file_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_open(tmp_path / "out.bin", "wb") as fh:
        fh.write(b"x" * 1000)
        raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []


def test_an_os_error_without_a_file_name_names_the_target(tmp_path):
    target = tmp_path / "shard.hdf5"
    with pytest.raises(OSError) as caught, atomic_path(target):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))   # as a failed write(2)
    assert caught.value.filename == str(target)
    assert not temporaries(tmp_path)


def test_remove_stale_temporaries_takes_only_temporaries(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("a.txt", ".a.txt.x1y2.tmp", "sub/.b.json.z.tmp", "sub/b.json"):
        (tmp_path / name).write_text("x")
    remove_stale_temporaries(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) \
        == ["a.txt", "sub/b.json"]
    remove_stale_temporaries(tmp_path / "missing")   # no folder: nothing to do
