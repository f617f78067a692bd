"""Two fixed CPU training runs whose per-step losses are recorded in tests/trainer/golden/:
the contract that a refactor of the trainer changes nothing a user sees (the same losses,
within float rounding). One run per model family:

- `bert`: BERT, static masks of sentence pairs, MLM + NSP, LAMB, poly schedule, gradient
  accumulation, dropout on;
- `modernbert`: ModernBERT on packed rows, dynamic 30% mask-only masking, AdamW, wsd;
- `roberta`: RoBERTa on packed rows, dynamic masking, AdamW;
- `xlm-roberta`: XLM-R on the static masks of sentence pairs, MLM only, AdamW, linear schedule;
- `distilbert`: DistilBERT on packed rows, dynamic whole-word masking, AdamW.

    python -m tests.helpers.golden_runs --write    # record anew (only when a change is meant to
                                                   # change the losses: say why in the commit)
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from tests.helpers.synthetic_shards import CLS, FIRST_PIECE, MASK, SEP, write_shard, write_vocab
from tests.helpers.trainer_cli import base_args, read_log

GOLDEN = Path(__file__).resolve().parents[1] / "trainer" / "golden"
VOCAB = 200
KEYS = ("loss", "mlm_loss", "nsp_loss", "lr", "grad_norm", "eval_mlm_loss", "eval_mlm_acc",
        "eval_nsp_loss", "eval_nsp_acc", "eval_loss")

BERT_CONFIG = {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 2,
               "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,
               "type_vocab_size": 2, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
MODERN_CONFIG = {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 3,
                 "num_attention_heads": 2, "intermediate_size": 48, "max_position_embeddings": 64,
                 "global_attn_every_n_layers": 3, "local_attention": 16}
ROBERTA_CONFIG = {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 2,
                  "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,
                  "type_vocab_size": 1}
DISTIL_CONFIG = {"vocab_size": VOCAB, "dim": 32, "n_layers": 2, "n_heads": 2, "hidden_dim": 64,
                 "max_position_embeddings": 64}
MLM_ONLY = dict(no_nsp=True, optimizer="adamw", learning_rate=1e-3, max_steps=10, eval_every=5,
                checkpoint_every=5)

RUNS = {
    "bert": dict(config=BERT_CONFIG, packed=False, max_pred=5,
                 flags=dict(optimizer="lamb", learning_rate=1e-2, gradient_accumulation_steps=2,
                            max_steps=10, eval_every=5, checkpoint_every=5)),
    "modernbert": dict(config=MODERN_CONFIG, packed=True, max_pred=10,
                       flags=dict(model_type="modernbert", no_nsp=True, masking="dynamic",
                                  mlm_probability=0.3, mask_replace_prob=1.0,
                                  random_replace_prob=0.0, optimizer="adamw", learning_rate=1e-3,
                                  lr_schedule="wsd", max_steps=10, eval_every=5,
                                  checkpoint_every=5)),
    "roberta": dict(config=ROBERTA_CONFIG, packed=True, max_pred=10,
                    flags=dict(model_type="roberta", masking="dynamic", **MLM_ONLY)),
    "xlm-roberta": dict(config=ROBERTA_CONFIG, packed=False, max_pred=5,
                        flags=dict(model_type="xlm-roberta", lr_schedule="linear", **MLM_ONLY)),
    "distilbert": dict(config=DISTIL_CONFIG, packed=True, max_pred=10,
                       flags=dict(model_type="distilbert", masking="dynamic", whole_word_masking=True,
                                  **MLM_ONLY)),
}


def packed_samples(num_samples: int, seq_len: int, max_pred: int, seed: int) -> dict:
    """Rows as `encode --pack` writes them: [CLS] then counting sentences joined by [SEP],
    every slot real, segment 0, next-sentence label 0; 15% static masks."""
    rng = np.random.default_rng(seed)
    n_pieces = VOCAB - FIRST_PIECE
    ids = np.zeros((num_samples, seq_len), np.int32)
    pos = np.zeros((num_samples, max_pred), np.int32)
    mids = np.zeros((num_samples, max_pred), np.int32)
    for i in range(num_samples):
        row, start = [CLS], int(rng.integers(n_pieces))
        while len(row) < seq_len:
            n = int(rng.integers(4, 12))
            row += [FIRST_PIECE + (start + j) % n_pieces for j in range(n)] + [SEP]
            start = int(rng.integers(n_pieces))
        row = np.array(row[:seq_len])
        cand = np.array([j for j in range(seq_len) if row[j] not in (CLS, SEP)])
        k = min(max_pred, max(1, round(0.15 * len(cand))))
        chosen = np.sort(rng.choice(cand, k, replace=False))
        pos[i, :k], mids[i, :k] = chosen, row[chosen]
        row[chosen] = MASK
        ids[i] = row
    return {"input_ids": ids, "input_mask": np.ones_like(ids, np.int8),
            "segment_ids": np.zeros_like(ids, np.int8), "masked_lm_positions": pos,
            "masked_lm_ids": mids, "next_sentence_labels": np.zeros(num_samples, np.int8)}


def write_inputs(root: Path, name: str, seq_len: int = 32) -> tuple[Path, Path, Path]:
    """(HDF5 folder, model JSON, vocab.txt) of run `name` under `root`."""
    spec = RUNS[name]
    max_pred = spec["max_pred"]
    folder = root / (f"hdf5_lower_case_0_seq_len_{seq_len}_max_pred_{max_pred}"
                     + ("_packed" if spec["packed"] else ""))
    wiki = folder / "xxwiki"
    for split, sizes, base in (("training", (160, 96, 128), 0), ("test", (64,), 1000)):
        for i, n in enumerate(sizes):
            samples = (packed_samples(n, seq_len, max_pred, base + i) if spec["packed"] else None)
            write_shard(wiki / f"xxwiki_{split}_{i}.hdf5", n, seq_len, max_pred, VOCAB,
                        seed=base + i, samples=samples)
    cfg = root / f"{name}_config.json"
    cfg.write_text(json.dumps(spec["config"]), encoding="utf-8")
    vocab = write_vocab(root / "vocab", VOCAB)
    return folder, cfg, vocab


def run(name: str, root: Path) -> list[dict]:
    """Train run `name` in-process under `root`; the logged records, golden keys only."""
    import torch

    from trainer.run_pretraining import main

    shards, cfg, vocab = write_inputs(root, name)
    out = root / f"{name}_run"
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert main(base_args(shards, cfg, out, vocab=vocab, **RUNS[name]["flags"])) == 0
    finally:
        torch.set_num_threads(before)
    return [{"step": r["step"], **{k: r[k] for k in KEYS if k in r}} for r in read_log(out)]


def main(argv=None) -> int:
    import tempfile

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="record the golden files anew")
    a = p.parse_args(argv)
    for name in RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            records = run(name, Path(tmp))
        print(name, json.dumps(records[-1]))
        if a.write:
            GOLDEN.mkdir(parents=True, exist_ok=True)
            (GOLDEN / f"{name}.json").write_text(json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
