"""A new vocabulary on an existing model (trainer/models/vocab_transfer.py): tokens compared across
tokenizer styles by their text and word start, special tokens by role; shared rows kept bit for
bit, a new token's row the mean of its old pieces' rows, tied tensors kept one; and end to end,
an XLM-R (Unigram, pad 1) adapted to a WordPiece vocabulary (pad 0) keeps its shared rows, moves
its position rows with the padding id, trains, and exports with the trainer's logits."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.pretrained_models import save_model, tokenizer_folder, write_tokenized_shards
from tests.trainer.models.test_families import assert_same_logits, init_args, trainer_model
from tests.trainer.models.test_loading import built
from trainer.models.vocab_transfer import plan_transfer, transfer_rows
from trainer.run_pretraining import main
from vocab.kinds.bytelevel import ByteLevelBPE
from vocab.kinds.fast import TokenizerSpec
from vocab.kinds.wordpiece import VocabSpec

pytestmark = pytest.mark.usefixtures("one_thread")
transformers = pytest.importorskip("transformers")


def test_tokens_compare_by_text_and_word_start_across_styles(tmp_path):
    """Each kind spells its pieces its own way (vocab/kinds: piece_key)."""
    wordpiece = VocabSpec(vocab_file=tmp_path / "vocab.txt", tokens=())
    unigram = TokenizerSpec(folder=tmp_path, tokens=(), special_tokens=frozenset(), role_tokens={},
                            start_marker="\u2581", piece_model="unigram")
    bytelevel = ByteLevelBPE(folder=tmp_path, tokens=(), special_tokens=frozenset(), role_tokens={},
                             start_marker="\u0120")
    starts = {wordpiece.piece_key("x"), unigram.piece_key("\u2581x"), bytelevel.piece_key("\u0120x")}
    inside = {wordpiece.piece_key("##x"), unigram.piece_key("x"), bytelevel.piece_key("x")}
    assert starts == {(b"x", True)} and inside == {(b"x", False)}
    # byte-level pieces stand for bytes: "Ã©" is é, "Ġ" the space before a word
    assert bytelevel.piece_key("\u0120\u00c3\u00a9t\u00c3\u00a9") == ("été".encode(), True)
    assert bytelevel.piece_key("\u00c3\u00a9") == ("é".encode(), False)


@pytest.fixture
def specs(tmp_path):
    """(old: a WordPiece vocab.txt, new: a Unigram tokenizer folder in XLM-R's layout)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from vocab.kinds import load_tokenizer

    old = tmp_path / "old"
    old.mkdir()
    (old / "vocab.txt").write_text("\n".join(["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                              "a", "b", "c", "ab", "##c", "##b", "xyz"]) + "\n")
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "\u2581ab", "\u2581abc", "c", "\u2581q", "\u2581abcb", "<mask>"]
    tok = Tokenizer(models.Unigram([(p, -1.0) for p in pieces], unk_id=3))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                            unk_token="<unk>", cls_token="<s>", sep_token="</s>",
                            mask_token="<mask>").save_pretrained(tmp_path / "new")
    return load_tokenizer(old), load_tokenizer(tmp_path / "new")


def test_shared_rows_are_kept_bit_for_bit_and_new_ones_are_their_pieces_mean(specs):
    old, new = specs
    plan = plan_transfer(old, new)
    o, n = old.id_of, new.id_of
    assert sorted(plan.kept) == sorted([(n("<s>"), o("[CLS]")), (n("<pad>"), o("[PAD]")), (n("</s>"), o("[SEP]")),
                                        (n("<unk>"), o("[UNK]")), (n("<mask>"), o("[MASK]")),
                                        (n("\u2581ab"), o("ab")), (n("c"), o("##c"))])
    assert dict(plan.pieces) == {n("\u2581abc"): [o("ab"), o("##c")],
                                 n("\u2581abcb"): [o("ab"), o("##c"), o("##b")]}
    assert plan.unmatched == [n("\u2581q")]
    assert "7 rows kept" in plan.summary() and "2 initialised as the mean" in plan.summary()

    g = torch.Generator().manual_seed(0)
    emb = torch.randn(old.size, 8, generator=g)
    bias = torch.randn(old.size, generator=g)
    state = {"emb": emb, "decoder": emb, "bias": bias, "other": torch.ones(3)}
    out = transfer_rows(state, ("emb", "decoder", "bias"), plan, seed=1)
    assert out["emb"].shape == (new.size, 8) and out["bias"].shape == (new.size,)
    assert out["decoder"] is out["emb"] and out["other"] is state["other"]
    for j, i in plan.kept:
        assert torch.equal(out["emb"][j], emb[i]) and torch.equal(out["bias"][j], bias[i])
    for j, ps in plan.pieces:
        torch.testing.assert_close(out["emb"][j], emb[ps].mean(0))
        torch.testing.assert_close(out["bias"][j], bias[ps].mean())
    q = n("\u2581q")
    assert torch.isfinite(out["emb"][q]).all() and out["emb"][q].abs().sum() > 0
    torch.testing.assert_close(out["bias"][q], bias.mean())


def test_random_new_rows_keep_the_shared_ones(specs):
    """--new_token_init random (the ablation): shared rows kept, every other token random."""
    old, new = specs
    mean, rand = plan_transfer(old, new), plan_transfer(old, new, pieces=False)
    assert rand.kept == mean.kept and rand.pieces == []
    assert sorted(rand.unmatched) == sorted([j for j, _ in mean.pieces] + mean.unmatched)
    assert "--new_token_init random" in rand.summary()


def test_an_xlmr_adapted_to_a_wordpiece_vocabulary(tmp_path, caplog):
    from vocab.kinds import load_tokenizer

    root = tmp_path / "tok"
    old_tok, new_tok = tokenizer_folder(root, "unigram"), tokenizer_folder(root, "wordpiece", vocab_size=500)
    model_dir = save_model(tmp_path / "model", "XLMRobertaForMaskedLM", old_tok)
    data = write_tokenized_shards(tmp_path / "data", new_tok)
    with caplog.at_level("INFO", logger="trainer"):
        _, _, start, model = built(init_args(data, model_dir, tmp_path / "o", vocab_file=new_tok))
    old, new = load_tokenizer(old_tok), load_tokenizer(new_tok)
    assert start.model_config.vocab_size == new.size and start.model_config.pad_token_id == new.pad_id == 0
    adapted = [r.getMessage() for r in caplog.records if r.getMessage().startswith("vocabulary adapted")]
    assert len(adapted) == 1 and "rows kept" in adapted[0], adapted

    from safetensors.torch import load_file

    source, ours = load_file(model_dir / "model.safetensors"), model.state_dict()
    plan = plan_transfer(old, new)
    assert len(plan.kept) > 50 and len(plan.pieces) > 50   # trained on the same text: much is shared
    for name in ("roberta.embeddings.word_embeddings.weight", "lm_head.bias"):
        for j, i in plan.kept:
            assert torch.equal(ours[name][j], source[name][i]), (name, new.tokens[j])
        for j, ps in plan.pieces[:20]:
            torch.testing.assert_close(ours[name][j], source[name][ps].mean(0))
    assert ours["lm_head.decoder.weight"].data_ptr() == ours["roberta.embeddings.word_embeddings.weight"].data_ptr()
    pos = "roberta.embeddings.position_embeddings.weight"   # the k-th token's row: pad + 1 + k
    assert torch.equal(ours[pos][1:39], source[pos][2:40])

    run = tmp_path / "run"
    assert main(init_args(data, model_dir, run, vocab_file=new_tok, max_steps=2, checkpoint_every=2)) == 0
    hp = json.loads((run / "hparams.json").read_text())
    assert hp["vocab_file"] == str(new_tok) and hp["model_type"] == "xlm-roberta"

    from trainer.export import main as export_main

    hf_dir = tmp_path / "hf"
    assert export_main(["--checkpoint_dir", str(run), "--output", str(hf_dir)]) == 0
    hf = transformers.AutoModelForMaskedLM.from_pretrained(hf_dir).eval()
    assert type(hf).__name__ == "XLMRobertaForMaskedLM" and hf.config.vocab_size == new.size
    assert_same_logits(trainer_model(run, 2), hf, new_tok)
