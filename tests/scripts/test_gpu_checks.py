"""scripts/gpu_checks.py on the CPU: BERT-tiny on synthetic phase-1 shards, every check but the
compiled curves (Inductor's CPU build: tests/trainer/models/test_compile.py covers --torch_compile)
and ZeRO-1 (the same loop as ZeRO-2 here, one torchrun and DeepSpeed start-up less;
tests/trainer/test_training_deepspeed.py trains with ZeRO-1 on the CPU)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.synthetic_shards import write_shard, write_vocab

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_checks_pass_on_the_cpu(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    pytest.importorskip("deepspeed")
    data = tmp_path / "data"
    write_vocab(data, 200)
    for i in range(2):
        write_shard(data / "hdf5_lower_case_0_seq_len_128_max_pred_20_x" / "xxwiki" /
                    f"xxwiki_training_{i}.hdf5", 40, 128, 20, 200, seed=i)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("WIKI2BERT_DS_SHM", "0")       # no C++ build of DeepSpeed's CPU op
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_checks.py"), "--device", "cpu", "--model", "tiny",
                          "--precision", "fp32", "--steps", "4", "--log-every", "1", "--batch", "8",
                          "--variants", "plain", "unpad", "--data", str(data),
                          "--zero-stages", "2", "--out-dir", str(out)],      # run by path, as a developer runs it
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    status = res.returncode
    table = (out / "checks.md").read_text()
    assert status == 0, table
    assert [line.split("|")[1].strip() for line in table.splitlines()] == [
        "plain run", "curve unpad vs plain", "resume at half way vs uninterrupted",
        "DeepSpeed ZeRO-2 bf16", "export loads in transformers"]
    assert "bitwise equal: True" in table                  # CPU runs are deterministic
    assert table in res.stdout                             # the rows as printed
