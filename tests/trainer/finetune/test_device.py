"""Fine-tuning's --device, by the pretrainer's one rule (trainer/runtime/distributed.py)."""
import pytest
import torch

from trainer.finetune.loop import pick_device
from trainer.finetune.textfiles import FinetuneDataError
from trainer.runtime.distributed import resolve_device


def test_the_device_is_the_pretrainers():
    assert pick_device(None) == torch.device(resolve_device(None))
    assert pick_device("") == torch.device(resolve_device(None))
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device("cuda:1") == torch.device("cuda:1")   # a card named: as it is


@pytest.mark.skipif(torch.cuda.is_available(), reason="the machine has CUDA")
def test_cuda_without_a_card_is_one_line():
    with pytest.raises(FinetuneDataError, match="--device cuda but no CUDA device"):
        pick_device("cuda")
