"""Several languages in one run (--input_dir LANG=DIR --sampling_alpha ...): a run killed after a
checkpoint and resumed gives the uninterrupted run's losses (1 process, and 2 gloo ranks under
torchrun), the evaluation of each language in train_log.jsonl, the languages in hparams.json and
the model card, and every bad input as one `Error:` line."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.language_shards import language_argv, language_dirs, write_encode_manifest
from tests.helpers.synthetic_shards import write_shard, write_vocab
from tests.helpers.trainer_cli import ROOT, assert_same_run, base_args, env, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
SIZES = {"hr": (96, 64), "sr": (40,)}


@pytest.fixture(scope="module")
def langs(tmp_path_factory, tiny_vocab):
    return language_dirs(tmp_path_factory.mktemp("langs"), SIZES, tiny_vocab)


def argv(folders, cfg, out, **kw):
    return language_argv(folders, base_args("X", cfg, out, **kw))


def compare_languages(straight, parts):
    """assert_same_run's check, for each language's evaluation too."""
    for x, y in zip(read_log(straight), read_log(parts)):
        for key in (k for k in x if "/" in k):
            assert x[key] == pytest.approx(y[key], abs=1e-5), (x["step"], key)


def test_a_resumed_run_of_languages_gives_the_uninterrupted_runs_losses(langs, tiny_bert_config,
                                                                         tiny_vocab, tmp_path):
    from trainer.export.card import model_card
    from trainer.models import get_family
    from trainer.models.bert_network import BertConfig
    from vocab.kinds import load_vocab

    kw = dict(gradient_accumulation_steps=2, eval_every=3, max_steps=8, checkpoint_every=3,
              sampling_alpha="0.7,0.3", masking="dynamic", vocab=tiny_vocab)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(argv(langs, tiny_bert_config, straight, **kw)) == 0
    assert main(argv(langs, tiny_bert_config, parts, steps_this_run=4, **kw)) == 0
    # killed after its step-3 checkpoint: step 4 logged, its checkpoint half-written
    (parts / "checkpoints" / "ckpt_00000004").rename(parts / "checkpoints" / ".tmp_ckpt_00000004")
    assert main(argv(langs, tiny_bert_config, parts, resume_from_checkpoint=True, **kw)) == 0
    assert_same_run(straight, parts, 8)
    compare_languages(straight, parts)

    # train_log.jsonl: each language's evaluation beside the overall one (their mean)
    evals = [r for r in read_log(straight) if "eval_loss" in r]
    assert [r["step"] for r in evals] == [3, 6, 8]
    for r in evals:
        for key in ("eval_mlm_loss", "eval_mlm_acc", "eval_nsp_loss", "eval_nsp_acc", "eval_loss",
                    "eval_instances"):
            assert f"{key}/hr" in r and f"{key}/sr" in r, key
        assert r["eval_mlm_loss"] == pytest.approx((r["eval_mlm_loss/hr"] + r["eval_mlm_loss/sr"]) / 2)
        assert r["eval_instances"] == r["eval_instances/hr"] + r["eval_instances/sr"] == 64
    train = [r for r in read_log(straight) if "loss" in r]
    assert all({"epoch", "epoch/hr", "epoch/sr"} <= set(r) for r in train)
    # hparams.json: the folders, each language's samples and its sampling share per phase
    hp = json.loads((straight / "hparams.json").read_text())
    assert hp["input_dir"] == langs and hp["sampling_alpha"] == "0.7,0.3"
    assert hp["sampling_schedule"] == [{"alpha": 0.7, "start_step": 0}, {"alpha": 0.3, "start_step": 4}]
    hr, sr = hp["languages"]["hr"], hp["languages"]["sr"]
    assert (hr["train_samples"], sr["train_samples"], hr["train_files"]) == (160, 40, 2)
    assert hr["sample_share"] == 0.8 and sr["sampling_shares"][0] < sr["sampling_shares"][1]
    assert sr["sampling_shares"][1] == pytest.approx(0.2 ** 0.3 / (0.2 ** 0.3 + 0.8 ** 0.3), abs=2e-5)
    # the model card lists the languages, their shares and their last evaluation
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64)
    card = model_card(straight, straight / "checkpoints" / "ckpt_00000008", config,
                      load_vocab(tiny_vocab.parent), 1, get_family("bert"))
    assert card.startswith("---\nlanguage:\n- hr\n- sr\n") and "## Languages" in card
    for fact in ("| `hr` |", "| `sr` |", "160 (80.0%)", "40 (20.0%)", "--sampling_alpha 0.7,0.3",
                 f"{sr['sampling_shares'][0]:.1%} | {sr['sampling_shares'][1]:.1%}",
                 f"MLM loss {evals[-1]['eval_mlm_loss/sr']:.4f}", "https://sr.wikipedia.org"):
        assert fact in card, fact


@pytest.mark.slow
def test_two_gloo_ranks_resume_a_run_of_languages_exactly(langs, tiny_bert_config, tmp_path):
    def torchrun(out, **extra):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               str(ROOT / "trainer" / "run_pretraining.py"), *argv(langs, tiny_bert_config, out, **kw, **extra)]
        res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]

    kw = dict(max_steps=12, log_every=2, checkpoint_every=4, gradient_accumulation_steps=2,
              eval_every=6, sampling_alpha="0.7@0,0.3@0.5")
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    torchrun(straight)
    torchrun(parts, steps_this_run=6)
    (parts / "checkpoints" / "ckpt_00000006").rename(parts / "checkpoints" / ".tmp_ckpt_00000006")
    torchrun(parts, resume_from_checkpoint=True)
    assert_same_run(straight, parts, 12)
    compare_languages(straight, parts)
    assert "eval_mlm_loss/sr" in read_log(straight)[-1]


# ---- bad input: one `Error:` line each -------------------------------------------------------

def one_error_line(capsys, args, match):
    assert main(args) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("Error")]
    assert len(err) == 1, err
    assert match in err[0], err[0]


def test_bad_languages_are_one_line_each(langs, tiny_bert_config, tiny_vocab, tmp_path, capsys):
    out = tmp_path / "o"

    def bad(folders, match, **kw):
        one_error_line(capsys, argv(folders, tiny_bert_config, out, **kw), match)
        assert not out.exists()

    hr = {"hr": langs["hr"]}
    # a language given twice; not a code
    one_error_line(capsys, argv(langs, tiny_bert_config, out) + ["--input_dir", f"hr={langs['sr']}"],
                   "language hr is given twice")
    bad({**hr, "s1": langs["sr"]}, "'s1' is not a language code")
    # a language whose corpus is empty
    (tmp_path / "bs").mkdir()
    bad({**hr, "bs": str(tmp_path / "bs")}, "the bs corpus is empty")
    # encoded with another vocabulary than the other languages
    other = write_vocab(tmp_path / "other_vocab", 200)   # as many tokens, other pieces
    other.write_text(other.read_text().replace("w1\n", "x1\n"))
    mk = language_dirs(tmp_path / "mk", {"mk": (40,)}, other)
    bad({**hr, **mk}, f"--input_dir mk={mk['mk']} was encoded with the tokenizer")
    bad({**hr, **mk}, "encode every language with the same (joint) vocabulary")
    # every language encoded alike, but not with --vocab_file
    bad(langs, "--vocab_file", vocab=other)
    bad(langs, "is not the tokenizer --input_dir hr=", vocab=other)
    # another sequence length
    long = language_dirs(tmp_path / "long", {"sl": (40,)}, tiny_vocab, seq_len=48)
    bad({**hr, **long}, "different (seq_len, max_pred): hr (32, 5), sl (48, 5)")
    # --sampling_alpha with one folder; a schedule that cannot be read
    one_error_line(capsys, base_args(langs["hr"], tiny_bert_config, out, sampling_alpha="0.5"),
                   "--sampling_alpha applies to several languages")
    bad(langs, "exponent 'fast' is not a number", sampling_alpha="fast")


def test_a_resume_with_another_schedule_or_other_languages_is_one_line(langs, tiny_bert_config,
                                                                        tmp_path, capsys):
    out = tmp_path / "o"
    kw = dict(max_steps=4, checkpoint_every=2, steps_this_run=2, sampling_alpha="0.5")
    assert main(argv(langs, tiny_bert_config, out, **kw)) == 0
    capsys.readouterr()
    one_error_line(capsys, argv(langs, tiny_bert_config, out, resume_from_checkpoint=True,
                                **{**kw, "sampling_alpha": "0.3"}), "--sampling_alpha schedule changed")
    one_error_line(capsys, argv({"hr": langs["hr"]}, tiny_bert_config, out, resume_from_checkpoint=True,
                                **kw), "the languages, their data or the seed changed")
    one_error_line(capsys, base_args(langs["hr"], tiny_bert_config, out, resume_from_checkpoint=True,
                                     max_steps=4, checkpoint_every=2),
                   "trained on several languages (hr, sr)")


def test_a_manifest_with_the_fingerprint_of_the_run_is_accepted(tmp_path, tiny_vocab):
    """The helper writes what encode writes: trainer/data/vocabulary.py reads its fingerprint."""
    from trainer.data.vocabulary import data_tokenizer
    from vocab.kinds import load_vocab

    write_shard(tmp_path / "xxwiki" / "xxwiki_training_0.hdf5", 4, 8, 2, 200)
    write_encode_manifest(tmp_path, tiny_vocab)
    assert data_tokenizer(tmp_path).fingerprint == load_vocab(tiny_vocab.parent).fingerprint
