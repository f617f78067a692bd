"""common/os_errors.py: one table of what happened and what to do, in the words of each half
(the pipeline's and the trainer's flags), and the checks around it."""
from __future__ import annotations

import errno
import os

import pytest

from common import os_errors
from common.os_errors import (
    DISK_FAULTS,
    FAULTS,
    DiskSpaceError,
    Remedy,
    as_os_error,
    check_free_space,
    fault_errno,
    human,
    is_os_fault,
    os_error_message,
    what_happened,
    what_to_do,
)

PIPELINE = Remedy(where="--output (or --data-dir)", free=" (`pipeline clean --keep ...`)",
                  remake=" or rerun the stage that writes it")
TRAINER = Remedy(where="--output_dir", also=", or lower --keep_checkpoints")


@pytest.mark.parametrize("code", sorted(FAULTS))
def test_one_table_gives_each_half_its_own_words(code):
    """The same fault in both halves: the same words for what happened, each half's own flags."""
    pipeline, trainer = what_to_do(code, PIPELINE), what_to_do(code, TRAINER)
    assert "{" not in pipeline + trainer   # every placeholder filled
    assert "--output_dir" not in pipeline and "pipeline clean" not in trainer
    if code in (errno.ENOSPC, errno.EDQUOT):
        assert "pipeline clean --keep" in pipeline and "--output (or --data-dir)" in pipeline
        assert trainer.endswith(", or lower --keep_checkpoints") and "--output_dir" in trainer
    message = os_error_message(OSError(code, os.strerror(code), "/run/x.pt"), also=TRAINER.also)
    assert message == f"cannot use /run/x.pt: {what_happened(code)}; {trainer}"


def test_the_trainer_lines_its_tests_read_are_unchanged():
    full = OSError(errno.ENOSPC, "No space left on device", "/out/model.pt")
    assert os_error_message(full, also=", or lower --keep_checkpoints") == (
        "cannot use /out/model.pt: the disk is full; free space there or put --output_dir on a "
        "larger disk, or lower --keep_checkpoints")
    ro = os_error_message(OSError(errno.EROFS, "", "/out"), where="--output", then="; then rerun")
    assert ro == ("cannot use /out: the filesystem is read-only; remount it read-write or choose "
                  "--output on a writable disk; then rerun")
    eio = os_error_message(OSError(errno.EIO, "Input/output error"), "/in/a.hdf5", where="--input_dir")
    assert eio.startswith("cannot use /in/a.hdf5: input/output error (a failing disk")


def test_an_errno_outside_the_table_keeps_the_systems_words():
    exc = OSError(errno.EINVAL, "Invalid argument", "/x")
    assert os_error_message(exc, where="--input_dir") == "cannot use /x: Invalid argument; check --input_dir"
    assert fault_errno(exc) is None and not is_os_fault(exc)


def test_which_errors_are_faults():
    assert fault_errno(OSError("Can't write data (file write failed: ..., errno = 28, ...)")) == errno.ENOSPC
    assert fault_errno(ValueError("errno = 28")) is None
    assert fault_errno(OSError(errno.ENOENT, "No such file")) == errno.ENOENT
    # a missing file is in the table (the pipeline's line) but is no fault of the disk
    assert errno.ENOENT not in DISK_FAULTS and not is_os_fault(OSError(errno.ENOENT, "x"))
    assert all(is_os_fault(OSError(c, "x")) for c in DISK_FAULTS)


def test_as_os_error_reads_torch_and_safetensors_failures(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    safetensors = as_os_error(RuntimeError("Error while serializing: IoError(... (os error 28))"), path)
    assert isinstance(safetensors, OSError) and safetensors.errno == errno.ENOSPC
    assert safetensors.filename == str(path)
    torch_failure = RuntimeError("[enforce fail at inline_container.cc:603] . unexpected pos 64")
    monkeypatch.setattr(os_errors, "free_bytes", lambda folder: 0)
    assert as_os_error(torch_failure, path).errno == errno.ENOSPC
    monkeypatch.setattr(os_errors, "free_bytes", lambda folder: 1 << 40)
    assert as_os_error(torch_failure, path).errno == errno.EIO
    other = KeyError("x")
    assert as_os_error(other, path) is other
    named = as_os_error(OSError(errno.EIO, "Input/output error"), path)
    assert named.filename == str(path) and named.errno == errno.EIO


def test_check_free_space(tmp_path, monkeypatch):
    monkeypatch.setattr(os_errors, "free_bytes", lambda folder: 3 * 1024 ** 2)
    check_free_space(tmp_path, 1024, "a checkpoint")
    with pytest.raises(DiskSpaceError) as caught:
        check_free_space(tmp_path, 5 * 1024 ** 3, "the exported model", where="--output")
    assert str(caught.value) == (f"the disk of {tmp_path} has 3.0 MiB free, too little for the "
                                 "exported model (5.0 GiB): free space there or put --output on a "
                                 "larger disk")


def test_human_and_free_bytes(tmp_path):
    assert [human(n) for n in (512, 1536, 3 * 1024 ** 4)] == ["512 B", "1.5 KiB", "3.0 TiB"]
    assert os_errors.free_bytes(tmp_path / "not" / "yet") > 0   # its nearest existing parent
