"""One real Slurm cluster (slurmctld + slurmd on this machine) for every Slurm test of a
session: started on first use, stopped at the end."""
from __future__ import annotations

import pytest

from tests.helpers.slurm_cluster import local_slurm


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """The environment (SLURM_CONF) of sbatch, squeue and scancel for the local cluster."""
    with local_slurm(tmp_path_factory.mktemp("slurm")) as env:
        yield env


@pytest.fixture(scope="session")
def tiny_run_inputs(tmp_path_factory):
    """(input_dir, bert_config, vocab) for a tiny CPU pretraining job: the trainer tests' shards."""
    import json

    from tests.helpers.synthetic_shards import write_vocab
    from tests.trainer.conftest import VOCAB_SIZE, make_shard_dir

    root = tmp_path_factory.mktemp("pretrain_inputs")
    shards = make_shard_dir(root, sizes=(160, 96, 128), test_sizes=(64,))
    cfg = root / "bert_tiny_test.json"
    cfg.write_text(json.dumps({
        "vocab_size": VOCAB_SIZE, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,
        "type_vocab_size": 2, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}))
    write_vocab(root / "vocab", VOCAB_SIZE)
    return shards, cfg, root / "vocab" / "vocab.txt"
