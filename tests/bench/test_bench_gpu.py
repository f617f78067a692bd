"""bench/bench_gpu.py on the CPU: BERT-tiny on synthetic shards of both phases, end to end; the
table's figures agree with each other; HF's batch is the same task as ours."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.helpers.bert_batches import varied_batch
from tests.helpers.script_module import load_script
from tests.helpers.synthetic_shards import write_shard, write_vocab

bench = load_script("bench/bench_gpu.py")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """encode's layout: one folder per phase (seq 128/20 and 512/80), and the vocab.txt."""
    root = tmp_path_factory.mktemp("gpu_bench")
    write_vocab(root, 200)
    for seq, pred in bench.PHASES.values():
        folder = root / f"hdf5_lower_case_0_seq_len_{seq}_max_pred_{pred}_masked_lm_prob_0.15" / "xxwiki"
        for i in range(2):
            write_shard(folder / f"xxwiki_training_{i}.hdf5", 12, seq, pred, 200, seed=i)
    return root


@pytest.fixture
def one_thread():
    """Tiny models run fastest on one thread (see tests/trainer/conftest.py)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def table_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| tiny")]


@pytest.mark.slow
def test_cpu_run_end_to_end(data, tmp_path, one_thread, capsys):
    out = tmp_path / "bench.md"
    variants = ["ours", "ours+unpad", "ours-pin", "hf"]
    # --accum 2: the accumulation path (the next micro-batch fetched before this one's backward)
    # at an eighth of the default 16 micro-batches per step
    assert bench.main(["--device", "cpu", "--tiny", "--data", str(data), "--precisions", "fp32",
                       "--variants", *variants, "--runs", "1", "--steps", "2", "--warmup", "1",
                       "--accum", "2", "--peak-tflops", "0.5", "--out", str(out)]) == 0
    text = out.read_text()
    assert text == capsys.readouterr().out               # the file holds what was printed
    rows = table_rows(text)
    settings = [r for r in rows if len(r) == 13]
    assert [(r[1], r[3]) for r in settings] == [(p, v) for p in "12" for v in variants]
    for r in settings:
        samples, tokens = (float(x.replace(",", "")) for x in r[5:7])
        tflops, mfu, padding = float(r[7]), float(r[8].rstrip("%")), float(r[9].rstrip("%"))
        seq = bench.PHASES[int(r[1])][0]
        assert samples > 0 and r[10] == "n/a"          # no GPU memory on the CPU
        # real tokens per sample = (1 - padding) x seq, within the table's rounding
        low = (tokens - 0.5) / (samples + 0.05)
        high = (tokens + 0.5) / (samples - 0.05)
        assert low <= (1 - (padding - 0.05) / 100) * seq and (1 - (padding + 0.05) / 100) * seq <= high
        # MFU = model TFLOP/s / peak
        assert mfu == pytest.approx(100 * tflops / 0.5, rel=1e-2, abs=0.06)  # 1-decimal rounding
        assert 0 <= float(r[11].rstrip("%")) < 100
    summary = [r for r in rows if len(r) == 10]
    assert [r[1] for r in summary] == ["1", "2"] and all(r[9].endswith("x") for r in summary)


def test_without_cuda_it_says_skipped(capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the default runs there")
    assert bench.main([]) == 0
    assert "skipped" in capsys.readouterr().out


def test_hf_batch_is_the_same_task_as_ours():
    """The anchor learns what ours learns: HF's labels [B, L] from our positions, and with our
    weights HF's loss is ours (eval mode: no dropout)."""
    from trainer.models.bert_network import BertConfig, BertForPreTraining

    b = varied_batch()
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    ours = BertForPreTraining(config).eval()
    hf = bench.hf_model(config).eval()
    hf.load_state_dict(ours.state_dict())
    hb = bench.hf_batch(b)
    kept = hb["labels"] != -100
    assert int(kept.sum()) == int((b["masked_lm_labels"] >= 0).sum())
    with torch.no_grad():
        torch.testing.assert_close(hf(**hb).loss, ours(**b).loss, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_compiled_variants_run(data, tmp_path, one_thread):
    """ours+compile and hf+compile (Inductor on the CPU: about a minute each when cold)."""
    out = tmp_path / "bench.md"
    assert bench.main(["--device", "cpu", "--tiny", "--data", str(data), "--precisions", "fp32",
                       "--phases", "1", "--variants", "ours+compile", "hf+compile", "--runs", "1",
                       "--steps", "1", "--warmup", "1", "--accum", "2", "--out", str(out)]) == 0
    settings = [r for r in table_rows(out.read_text()) if len(r) == 13]
    assert [r[3] for r in settings] == ["ours+compile", "hf+compile"]
    assert all(float(r[5]) > 0 for r in settings), settings
