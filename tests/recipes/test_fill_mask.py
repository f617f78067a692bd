"""Fill-mask with an exported model: predictions only, without transformers' load report or
progress bars; BERT and ModernBERT exports alike, several sentences in one call (issue 38: a
ModernBERT export was loaded as BertForPreTraining, 64 missing weights and noise)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from recipes.fill_mask import masked_ids
from tests.helpers.modern_run_dir import make_modern_run_dir
from tests.helpers.trainer_run_dir import make_run_dir
from trainer.export import main as export_main

ROOT = Path(__file__).resolve().parents[2]


def exported(tmp_path: Path, make) -> Path:
    make(tmp_path / "run")
    assert export_main(["--checkpoint_dir", str(tmp_path / "run"), "--output", str(tmp_path / "hf")]) == 0
    return tmp_path / "hf"


def fill(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRANSFORMERS_", "HF_HUB_DISABLE"))}
    return subprocess.run([sys.executable, "-m", "recipes.fill_mask", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bert", "modernbert"])
def test_fill_mask_prints_predictions_and_nothing_else(tmp_path, family):
    pytest.importorskip("transformers")
    hf = exported(tmp_path, make_run_dir if family == "bert" else make_modern_run_dir)
    res = fill(hf, "Budapest [MASK] tükör.", "[MASK] Hà Nội [MASK] !")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "Budapest [MASK] tükör." and lines[1].startswith("    [MASK] = ")
    assert lines[2] == "[MASK] Hà Nội [MASK] !" and lines[4].startswith("    [MASK] #2 = ")
    assert len(lines) == 5
    assert res.stderr.strip() == ""          # no LOAD REPORT, no missing weights, no bar


@pytest.mark.slow
def test_a_sentence_without_mask_and_a_folder_without_model_are_one_line(tmp_path):
    pytest.importorskip("transformers")
    res = fill(tmp_path, "no mask here")
    assert res.returncode == 1 and res.stderr.startswith("Error: ") and "Traceback" not in res.stderr
    hf = exported(tmp_path, make_modern_run_dir)
    res = fill(hf, "Budapest [MASK].", "no mask here")
    assert res.returncode == 1 and "'no mask here' has no [MASK] and no [[word]]" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bert", "modernbert"])
def test_a_word_in_double_brackets_is_hidden_whole_and_its_pieces_ranked(tmp_path, family):
    """Issue 46: one [MASK] for a word of several pieces left the model guessing punctuation and
    nobody said what the answer was. "tükörfúrógép" is three pieces: three masks, three ranks."""
    pytest.importorskip("transformers")
    hf = exported(tmp_path, make_run_dir if family == "bert" else make_modern_run_dir)
    res = fill(hf, "Budapest [[tükörfúrógép]], Hà Nội.", "[[Budapest]] Hà Nội")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "Budapest [MASK][MASK][MASK], Hà Nội."
    assert [line.split(" = ")[0] for line in lines[1:4]] == [f"    [MASK] #{n}" for n in (1, 2, 3)]
    assert [line.split("| ")[1].split(" ranks")[0] for line in lines[1:4]] == ["'tükör'", "'##fúró'", "'##gép'"]
    assert all(re.search(r"ranks \d+ of 122$", line) for line in lines[1:4])
    assert lines[4] == "[MASK] Hà Nội" and re.search(r"^    \[MASK\] = .*\| 'Budapest' ranks \d+ of 122$", lines[5])
    assert len(lines) == 6


def thai_wordpiece():
    """A fast WordPiece tokenizer where "ขึ้นในปี" ("rose in the year") is one BERT word of
    pieces ขึ้น ##ใ ##น ##ป ##ี, and with a [MASK] after ขึ้น its last word starts with ป."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ขึ้น", "##ใ", "##น", "##ป", "##ี", "ป", "ใ"]
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, mask_token="[MASK]", unk_token="[UNK]",
                                                cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]")


def test_a_hidden_word_without_spaces_masks_its_own_pieces_not_its_neighbours():
    """Thai `make pretrain` hid [[ใน]] as four masks: in "ขึ้น[MASK]ปี" the year word splits as
    ป ##ี, not ##ป ##ี, so the old diff of the two sentences took ##ป as part of the word. The
    word's pieces are the ones that cover its characters, as training's whole-word masking hides."""
    tok = thai_wordpiece()
    shown, ids, at, pieces = masked_ids(tok, lambda text: text, "ขึ้น[[ใน]]ปี")
    assert tok.convert_ids_to_tokens(pieces) == ["##ใ", "##น"]
    assert shown == "ขึ้น[MASK][MASK]ปี" and at == [2, 3]
    assert tok.convert_ids_to_tokens(ids) == ["[CLS]", "ขึ้น", "[MASK]", "[MASK]", "##ป", "##ี", "[SEP]"]
    # a text split before the tokenizer sees it (MeCab words) has no offsets into the sentence:
    # there the pieces are still where the sentence with the word and with one [MASK] differ
    shown, _ids, _at, pieces = masked_ids(tok, lambda text: text.replace("ขึ้น", "ขึ้น "), "ขึ้น[[ใน]]ปี")
    assert tok.convert_ids_to_tokens(pieces) == ["ใ", "##น", "##ป"] and shown == "ขึ้น[MASK][MASK][MASK]ปี"


@pytest.mark.slow
def test_fill_mask_runs_on_the_device_asked(tmp_path):
    """--device cuda: the predictions from the card (make pretrain's after a GPU run); where no
    GPU is visible, one Error line."""
    import torch

    pytest.importorskip("transformers")
    hf = exported(tmp_path, make_modern_run_dir)
    res = fill(hf, "Budapest [MASK] tükör.", "--device", "cuda")
    if torch.cuda.is_available():
        assert res.returncode == 0 and res.stdout.splitlines()[1].startswith("    [MASK] = "), res.stderr
    else:
        assert res.returncode == 1
        assert res.stderr.strip().splitlines() == [
            "Error: --device cuda: no CUDA GPU is visible here (use --device cpu)"]
    cpu = fill(hf, "Budapest [MASK] tükör.", "--device", "cpu")
    assert cpu.returncode == 0 and cpu.stdout.splitlines()[1].startswith("    [MASK] = ")
