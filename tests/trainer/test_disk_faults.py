"""The faults the operating system brings to a training run (docs/reliability.md): a disk too
small from the start, a disk filled by another writer before or in the middle of a checkpoint
(also under torchrun with two ranks), a read-only output, an unreadable input shard, a kill -9
in the middle of a checkpoint. Each ends in one `Error:` line and no traceback, keeps the
newest complete checkpoint and leaves no half-written one; after the fault is fixed, a resume
gives the losses of an undisturbed run.

The faults are real: a small tmpfs mounted by the test (root, as in CI: a full disk is the
kernel's ENOSPC, a read-only one `mount -o remount,ro`'s EROFS), Debian's libfiu (`fiu-run`)
for an I/O error on read, which chmod cannot make for root. Only the moment another writer
fills the disk is chosen by tests/trainer/disk_filled_run_pretraining.py."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.tmpfs import Tmpfs
from tests.helpers.trainer_cli import ROOT, SCRIPT, assert_same_run, base_args, env
from trainer.run_pretraining import main

pytestmark = [pytest.mark.faults, pytest.mark.usefixtures("one_thread")]
FILLING_ENTRY = Path(__file__).with_name("disk_filled_run_pretraining.py")
KILLING_ENTRY = Path(__file__).with_name("rank_killed_run_pretraining.py")
RUN = dict(max_steps=8, checkpoint_every=4, keep_checkpoints=1, eval_every=0)


@pytest.fixture
def disk(tmp_path):
    mounted = []

    def make(size: str) -> Tmpfs:
        mounted.append(Tmpfs(tmp_path / f"disk{len(mounted)}", size))
        return mounted[-1]

    yield make
    for d in mounted:
        d.unmount()


@pytest.fixture(scope="module")
def straight(tiny_shards, tiny_bert_config, tmp_path_factory):
    """The undisturbed run the resumed ones must equal."""
    out = tmp_path_factory.mktemp("straight") / "run"
    assert main(base_args(tiny_shards, tiny_bert_config, out, **RUN)) == 0
    return out


def run(argv, entry=SCRIPT, launcher=(sys.executable,), **extra_env):
    """The trainer in a child process (so that a traceback would show): (status, output)."""
    res = subprocess.run([*launcher, str(entry), *argv], env=env(**extra_env),
                         capture_output=True, text=True, timeout=300)
    return res.returncode, res.stdout + res.stderr


def one_error(status: int, output: str, *words: str) -> str:
    """The run failed with exactly one `Error:` line holding `words`, and no traceback."""
    assert status != 0, output[-3000:]
    errors = [ln for ln in output.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert all(w in errors[0] for w in words), errors[0]
    return errors[0]


def checkpoints(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "checkpoints").iterdir())


def test_a_disk_too_small_for_the_checkpoints_is_refused_before_training(
        disk, tiny_shards, tiny_bert_config):
    small = disk("1m")
    out = small.path / "run"
    status, output = run(base_args(tiny_shards, tiny_bert_config, out, **RUN))
    line = one_error(status, output, f"the disk of {out} has", "too little for 2 more checkpoints",
                     "--keep_checkpoints 1", "lower --keep_checkpoints")
    assert "step 1 " not in output and not (out / "checkpoints").exists(), line


@pytest.mark.parametrize("when", ["check", "write"])
def test_a_disk_filled_by_another_writer_keeps_the_last_checkpoint_and_resumes_exactly(
        disk, tiny_shards, tiny_bert_config, straight, when):
    """The disk holds the run's needs at start; before the step-8 checkpoint another writer
    takes all but 64 KiB. Found by the check before the checkpoint ("check"), or by the kernel
    in the middle of writing model.pt ("write": torch's serializer error, named disk full).
    ckpt 4 stays, nothing half-written; the disk grown, the resume equals the straight run."""
    small = disk("3m")
    out = small.path / "run"
    argv = base_args(tiny_shards, tiny_bert_config, out, **RUN)
    status, output = run(argv, FILLING_ENTRY, FILL_AT_STEP="8", FILL_WHEN=when)
    words = (("stopped at step 8 before writing its checkpoint",) if when == "check" else
             ("checkpoint ckpt_00000008 not written", "model.pt: the disk is full", "free space there"))
    one_error(status, output, *words, "ckpt_00000004 is kept", "--resume_from_checkpoint")
    assert checkpoints(out) == ["ckpt_00000004"]           # no .tmp_ckpt_* left behind
    small.remount("size=8m")
    assert main(argv + ["--resume_from_checkpoint"]) == 0
    assert_same_run(straight, out, 8)


@pytest.mark.parametrize("when", ["write", "step"])
def test_a_full_disk_under_torchrun_is_one_line_for_the_run(disk, tiny_shards, tiny_bert_config,
                                                            when):
    """Two gloo ranks. "write": the disk fills in the middle of the step-8 checkpoint; every
    rank learns it, rank 0 says it once. "step": it fills at step 2, and rank 0's log write
    fails between checkpoints; rank 1, whose all-reduce loses its peer, stays quiet. No rank
    prints a traceback (torchrun's own ChildFailedError summary stays, as in
    test_user_messages.py, and quotes the line)."""
    small = disk("3m")
    out = small.path / "run"
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    kw = dict(RUN, max_steps=60, checkpoint_every=60) if when == "step" else RUN
    status, output = run(base_args(tiny_shards, tiny_bert_config, out, **kw), FILLING_ENTRY,
                         launcher, FILL_AT_STEP="8" if when == "write" else "2", FILL_WHEN=when,
                         FILL_LEAVE="65536" if when == "write" else "0")
    assert status != 0
    ours = [ln for ln in output.splitlines() if ln.startswith("Error: ")]
    assert len(ours) == 1 and "the disk is full" in ours[0], output[-3000:]
    assert ("model.pt" if when == "write" else "train_log.jsonl: ") in ours[0], ours[0]
    # the only traceback is torchrun's (ChildFailedError), whose summary quotes our line
    assert output.count("Traceback") == output.count("ChildFailedError:") <= 1, output[-4000:]
    assert f"traceback : {ours[0]}" in output, output[-3000:]
    assert not any(p.name.startswith(".tmp") for p in (out / "checkpoints").glob("*"))
    if when == "write":
        assert checkpoints(out) == ["ckpt_00000004"]


def test_a_fault_of_rank_1_alone_is_its_line_and_rank_0_says_where_to_look(
        tiny_shards, tiny_bert_config, tmp_path):
    """Rank 1 alone fails (an I/O error on its shard, raised where the read would fail): its
    line reaches torchrun's summary; rank 0, whose all-reduce loses its peer, prints one line
    pointing there instead of gloo's traceback."""
    shard = next(Path(tiny_shards).rglob("*.hdf5"))
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    status, output = run(base_args(tiny_shards, tiny_bert_config, tmp_path / "run", **RUN),
                         KILLING_ENTRY, launcher, KILL_RANK="1", KILL_AT_STEP="3", KILL_HOW="eio",
                         EIO_FILE=str(shard))
    assert status != 0
    assert output.count("Traceback") == output.count("ChildFailedError:") <= 1, output[-4000:]
    assert f"traceback : Error: cannot use {shard}: input/output error" in output, \
        output[-3000:]
    ours = [ln for ln in output.splitlines() if ln.startswith("Error: ")]
    assert all("another rank of the run ended first" in ln for ln in ours), output[-3000:]


def test_a_read_only_output_is_one_line_and_the_run_resumes_once_writable(
        disk, tiny_shards, tiny_bert_config, straight):
    small = disk("8m")
    out = small.path / "run"
    argv = base_args(tiny_shards, tiny_bert_config, out, steps_this_run=4, **RUN)
    assert main(argv) == 0
    small.remount("ro")
    resume = base_args(tiny_shards, tiny_bert_config, out, resume_from_checkpoint=True, **RUN)
    status, output = run(resume)
    one_error(status, output, "the filesystem is read-only", "remount it read-write")
    assert checkpoints(out) == ["ckpt_00000004"]
    small.remount("rw")
    assert main(resume) == 0
    assert_same_run(straight, out, 8)


def test_an_unreadable_input_shard_is_one_line(tiny_shards, tiny_bert_config, tmp_path):
    """libfiu makes every pread(2) fail with EIO (h5py reads with pread; Python's imports do
    not): the shard is named, and the fix is the disk's, not the data's."""
    fiu_run = shutil.which("fiu-run")
    if fiu_run is None:
        pytest.skip("fiu-run (Debian fiu-utils; .ci/run installs it) is missing: no I/O error "
                    "on read can be made for root, whom chmod does not stop")
    status, output = run(base_args(tiny_shards, tiny_bert_config, tmp_path / "run", **RUN),
                         launcher=[fiu_run, "-x", "-c", "enable name=posix/io/rw/pread,failinfo=5",
                                   sys.executable])
    one_error(status, output, "xxwiki_t", ".hdf5: input/output error", "check the disk")


def test_kill_9_in_the_middle_of_a_checkpoint_resumes_with_the_same_losses(
        tiny_shards, tiny_bert_config, tmp_path, straight):
    """SIGKILL while model.pt of the step-8 checkpoint is half written: ckpt 4 stays the
    newest complete one, the half-written .tmp_ckpt_00000008 is passed over and replaced."""
    out = tmp_path / "run"
    argv = base_args(tiny_shards, tiny_bert_config, out, **RUN)
    kill = ("import os, signal, sys, torch\n"
            "real = torch.save\n"
            "def save(obj, f, *a, **k):\n"
            "    if str(f).endswith('.tmp_ckpt_00000008/model.pt'):\n"
            "        open(f, 'wb').write(b'PK' * 1000)\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "    return real(obj, f, *a, **k)\n"
            "torch.save = save\n"
            "from trainer.run_pretraining import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    res = subprocess.run([sys.executable, "-c", kill, *argv], env=env(), cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == -signal.SIGKILL, res.stderr[-3000:]
    assert checkpoints(out) == [".tmp_ckpt_00000008", "ckpt_00000004"]
    assert main(argv + ["--resume_from_checkpoint"]) == 0
    assert checkpoints(out) == ["ckpt_00000008"]
    assert_same_run(straight, out, 8)


def test_torch_and_safetensors_on_a_full_disk_read_as_disk_full(disk):
    """Neither raises an OSError on a full disk (torch: `enforce fail at inline_container.cc`,
    safetensors: its own error): as_os_error names them ENOSPC with the file."""
    import errno

    import torch
    from safetensors.torch import save_file

    from common.os_errors import as_os_error

    full = disk("64k")
    for name, save in (("a.pt", lambda p: torch.save({"w": torch.zeros(40000)}, p)),
                       ("a.safetensors", lambda p: save_file({"w": torch.zeros(40000)}, str(p)))):
        path = full.path / name
        with pytest.raises(Exception) as caught:
            save(path)
        assert not isinstance(caught.value, OSError)
        fault = as_os_error(caught.value, path)
        assert isinstance(fault, OSError) and fault.errno == errno.ENOSPC, caught.value
        assert fault.filename == str(path)
        path.unlink(missing_ok=True)


def test_export_onto_a_small_or_read_only_disk_is_one_line_and_writes_nothing(
        disk, straight, tiny_vocab, capsys):
    from trainer.export import main as export

    small = disk("64k")
    argv = ["--checkpoint_dir", str(straight), "--output", str(small.path / "hf"),
            "--vocab_file", str(tiny_vocab)]
    capsys.readouterr()
    assert export(argv) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "too little for the exported model" in line and "--output on a larger disk" in line
    assert list(small.path.iterdir()) == []
    small.remount("size=4m,ro")
    assert export(argv) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "the filesystem is read-only" in line and "--output" in line, line
    assert list(small.path.iterdir()) == []
    small.remount("rw")
    assert export(argv) == 0 and (small.path / "hf" / "model.safetensors").is_file()


def test_finetuning_onto_a_full_disk_is_refused_before_training(disk, tmp_path, capsys):
    from tests.helpers.finetune_data import make_model_dir, tagged_sentences, write_conll
    from tests.trainer.disk_filled_run_pretraining import fill
    from trainer.finetune.__main__ import main as finetune

    make_model_dir(tmp_path)
    write_conll(tmp_path / "train.conll", tagged_sentences(40, 1))
    write_conll(tmp_path / "dev.conll", tagged_sentences(20, 2))
    full = disk("256k")
    fill(full.path, 16 << 10)
    out = full.path / "ner"
    capsys.readouterr()
    assert finetune(["--model", str(tmp_path / "hf"), "--task", "ner", "--train_file",
                     str(tmp_path / "train.conll"), "--validation_file", str(tmp_path / "dev.conll"),
                     "--output_dir", str(out), "--epochs", "1", "--seeds", "1,2"]) == 1
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("Error")]
    assert "too little for the predictions and results" in line, line
    assert not out.exists()
