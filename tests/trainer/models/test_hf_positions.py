"""The positions a transformers model takes, asked of the family registry (trainer/models:
hf_max_positions) by fine-tuning (trainer/finetune/source.py: max_positions)."""
import pytest
from transformers import (
    BertConfig,
    CamembertConfig,
    DistilBertConfig,
    ElectraConfig,
    RobertaConfig,
    XLMRobertaConfig,
    XLMRobertaXLConfig,
)

from trainer.finetune.source import max_positions
from trainer.models import hf_max_positions


@pytest.mark.parametrize("config, expected", [
    (BertConfig(max_position_embeddings=512), 512),
    (DistilBertConfig(max_position_embeddings=256), 256),
    (RobertaConfig(max_position_embeddings=514, pad_token_id=1), 512),
    (XLMRobertaConfig(max_position_embeddings=514, pad_token_id=1), 512),
    (RobertaConfig(max_position_embeddings=130, pad_token_id=0), 129),
    # no family of ours, RoBERTa's rule all the same
    (CamembertConfig(max_position_embeddings=514, pad_token_id=1), 512),
    (XLMRobertaXLConfig(max_position_embeddings=514, pad_token_id=1), 512),
    # neither: the table as it is
    (ElectraConfig(max_position_embeddings=512, pad_token_id=0), 512),
])
def test_the_rows_a_model_takes_follow_its_familys_rule(config, expected):
    assert hf_max_positions(config) == expected


def test_fine_tuning_reads_them_from_the_folder(tmp_path):
    RobertaConfig(max_position_embeddings=258, pad_token_id=1).save_pretrained(tmp_path)
    assert max_positions(tmp_path) == 256
