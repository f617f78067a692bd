"""Reading the labelled files people have for fine-tuning; one import for all of them.

    from trainer.finetune.readers import (FinetuneDataError, read_tagging, read_classification,
                                          read_squad, check_labels, to_iob2, is_iob_tagging)

    sentences = read_tagging("train.conllu")                 # CoNLL-U (UPOS) or CoNLL columns
    examples = read_classification("train.csv", text_pair_column="hypothesis")
    squad = read_squad("train-v2.0.json")                      # answers located in the context
    unseen = check_labels((e.label for e in train), (e.label for e in dev), "dev.csv")

Every reader raises FinetuneDataError for a bad file; its str() is one line,
`PATH:LINE: what is wrong; what to do` (LINE left out when not about one line), meant to be
printed as is. The readers live in tagging.py (CoNLL, CoNLL-U, IOB), tables.py (CSV, TSV,
JSONL) and squad.py (SQuAD JSON); this module re-exports them so that callers need not know.
"""
from __future__ import annotations

from collections.abc import Iterable

from trainer.finetune.squad import QAExample, SquadData, read_squad
from trainer.finetune.tables import TextExample, read_classification
from trainer.finetune.tagging import (
    CONLLU_COLUMNS,
    TaggedSentence,
    check_iob_tags,
    is_iob_tagging,
    read_conll,
    read_conllu,
    read_tagging,
    require_entity_tags,
    to_iob2,
)
from trainer.finetune.textfiles import FinetuneDataError, PathLike

__all__ = [
    "CONLLU_COLUMNS", "FinetuneDataError", "QAExample", "SquadData", "TaggedSentence",
    "TextExample", "check_iob_tags", "check_labels", "is_iob_tagging", "read_classification",
    "read_conll", "read_conllu", "read_squad", "read_tagging", "require_entity_tags", "to_iob2",
]


def check_labels(train_labels: Iterable[str], other_labels: Iterable[str], path: PathLike,
                 what: str = "label") -> list[str]:
    """The sorted labels of `other_labels` (a dev or test file's) never seen in training.

    Never raises: the caller decides whether that is an error (classification: the model has
    no output for it) or a counted warning (tagging: those tokens are simply always wrong).
    `path` and `what` name the file and the kind of label for the caller's message, e.g.
    f"{path}: {what}s never seen in training: {', '.join(unseen)}"."""
    seen = set(train_labels)
    return sorted({label for label in other_labels if label not in seen})
