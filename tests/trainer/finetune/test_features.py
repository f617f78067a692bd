"""Words labelled by their first piece, long sentences in windows (counted), QA spans found
again from their pieces."""
from __future__ import annotations

import pytest

from tests.helpers.finetune_data import make_model_dir
from trainer.finetune.features import IGNORE, gather_word_predictions, tagging_features
from trainer.finetune.qa import decode_answers, qa_features
from trainer.finetune.readers import QAExample, TaggedSentence
from trainer.finetune.source import load_tokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    root = tmp_path_factory.mktemp("tok")
    make_model_dir(root)
    return load_tokenizer(root / "hf", 128)


def test_first_piece_carries_the_label_and_long_sentences_become_windows(tokenizer):
    s = TaggedSentence(["w1", "w2", "w3", "w4", "w5"], ["B-X", "O", "B-X", "I-X", "O"], 1)
    ids = {"B-X": 0, "I-X": 1, "O": 2}
    feats = tagging_features(tokenizer, [s], ids, max_length=5)   # 3 pieces per window
    assert feats.windows == 1 and len(feats.rows) == 2
    first, second = feats.rows
    assert tokenizer.convert_ids_to_tokens(first["input_ids"]) == ["[CLS]", "w1", "w2", "w3", "[SEP]"]
    assert first["labels"] == [IGNORE, 0, 2, 0, IGNORE]
    assert second["labels"] == [IGNORE, 1, 2, IGNORE]
    # predictions go back to their words, each word once
    preds = [[9, 0, 2, 0, 9], [9, 1, 2, 9]]
    assert gather_word_predictions(feats, preds, {0: "B-X", 1: "I-X", 2: "O"}, [s]) == [s.tags]


def test_a_word_of_several_pieces_is_labelled_once(tokenizer):
    s = TaggedSentence(["w1,", "w2"], ["B-X", "O"], 1)          # "w1," -> w1 , (two pieces)
    feats = tagging_features(tokenizer, [s], {"B-X": 0, "O": 1}, max_length=16)
    assert feats.rows[0]["labels"] == [IGNORE, 0, IGNORE, 1, IGNORE]
    assert feats.windows == 0 and feats.truncated == 0


def test_qa_windows_point_at_the_answer_or_cls_and_decode_back(tokenizer):
    context = " ".join(f"w{i % 40}" for i in range(30)) + " w52 " + " ".join(["w3"] * 10)
    start = context.index("w52")
    ex = QAExample("q1", "w59 ?", context, [("w52", start)], False)
    feats = qa_features(tokenizer, [ex], max_length=24, doc_stride=8, train=True)
    assert feats.windows == 1 and len(feats.rows) > 1
    hits = [r for r in feats.rows if r["start_positions"]]
    assert hits and all(r["start_positions"] == r["end_positions"] for r in hits)
    row = hits[0]
    assert tokenizer.convert_ids_to_tokens([row["input_ids"][row["start_positions"]]]) == ["w52"]
    # logits that point at the answer piece in one window decode to the answer text
    starts = [[0.0] * len(r["input_ids"]) for r in feats.rows]
    ends = [[0.0] * len(r["input_ids"]) for r in feats.rows]
    i = feats.rows.index(row)
    starts[i][row["start_positions"]] = ends[i][row["end_positions"]] = 5.0
    assert decode_answers(feats, [ex], starts, ends, version_2=False) == {"q1": "w52"}
    # v2.0: a [CLS] score above every span means "no answer"
    for r in range(len(feats.rows)):
        starts[r][0] = ends[r][0] = 9.0
    assert decode_answers(feats, [ex], starts, ends, version_2=True) == {"q1": ""}
