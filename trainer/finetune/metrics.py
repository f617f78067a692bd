"""The metrics the field reports for fine-tuned BERTs, computed the way the field computes them.

    entity_scores(gold_tags, pred_tags)     # NER: seqeval strict IOB2 entity P/R/F1 (0..1)
    token_accuracy(gold_tags, pred_tags)    # POS: tag accuracy (0..1)
    classification_scores(gold, pred)       # {"accuracy", "macro_f1"} (0..1)
    squad_scores(predictions, gold_answers, normalizer=default_normalizer(lang))
                                            # QA: {"exact_match", "f1"} in percent, like SQuAD's
    METRIC_NAMES[task]                      # the headline metric of "ner", "pos", "classify", "qa"

QA answers are compared after normalisation: "squad" is the official SQuAD v1.1/v2.0 one
(English: lower case, no punctuation, no a/an/the); "language-neutral" is MLQA's idea for other
languages (no article list, Unicode punctuation removed, and characters of scripts written
without spaces - Chinese, Japanese, Thai, ... - scored one by one, so that a partly right
Chinese answer gets partial F1 instead of 0). seqeval is imported only by entity_scores
(pip install 'wiki2bert[finetune]').
"""
from __future__ import annotations

import bisect
import re
import string
import unicodedata
import warnings
from collections import Counter

from trainer.finetune.task_table import TASKS

METRIC_NAMES = {name: task.metric for name, task in TASKS.items()}   # the table's (task_table.py)
NORMALIZERS = ("squad", "language-neutral")

_ENTITY_TAG = re.compile(r"^[BIES]-.+$")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCT = frozenset(string.punctuation)
# Scripts written without spaces between words: each character is one F1 token (MLQA scores
# Chinese this way). Inclusive code-point ranges, sorted.
_NO_SPACE_RANGES = (
    (0x0E00, 0x0E7F),    # Thai
    (0x0E80, 0x0EFF),    # Lao
    (0x0F00, 0x0FFF),    # Tibetan
    (0x1000, 0x109F),    # Myanmar
    (0x1780, 0x17FF),    # Khmer
    (0x19E0, 0x19FF),    # Khmer symbols
    (0x2E80, 0x2FDF),    # CJK and Kangxi radicals
    (0x3005, 0x3007),    # 々 〆 〇
    (0x3040, 0x30FF),    # Hiragana, Katakana
    (0x31F0, 0x31FF),    # Katakana phonetic extensions
    (0x3400, 0x4DBF),    # CJK extension A
    (0x4E00, 0x9FFF),    # CJK unified ideographs
    (0xA9E0, 0xA9FF),    # Myanmar extended-B
    (0xAA60, 0xAA7F),    # Myanmar extended-A
    (0xF900, 0xFAFF),    # CJK compatibility ideographs
    (0xFF66, 0xFF9F),    # halfwidth Katakana
    (0x20000, 0x3134F),  # CJK extensions B-G, compatibility supplement
)
_RANGE_STARTS = [start for start, _ in _NO_SPACE_RANGES]


def _check_pairs(gold: list, pred: list, what: str) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"{what}: {len(gold)} gold items but {len(pred)} predictions; they "
                         "must be paired one to one")


def _check_sentences(gold: list[list[str]], pred: list[list[str]], what: str) -> None:
    _check_pairs(gold, pred, what)
    for i, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise ValueError(f"{what}: sentence {i} has {len(g)} gold tags but {len(p)} "
                             "predicted; predict one tag per word")


def entity_scores(gold: list[list[str]], pred: list[list[str]]) -> dict:
    """{"f1", "precision", "recall"} (fractions 0..1) of whole entities, seqeval's strict mode
    (as CoNLL's conlleval, but an entity must be well formed): in IOB2 an entity starts with
    B-, so a predicted I-X after O or after another type is no entity at all, where seqeval's
    default (lenient) mode would count it. Gold must be IOB2 (convert IOB1 files with
    readers.to_iob2); tags with E-/S- prefixes are scored as IOBES. No entity in gold and
    predictions gives 0.0, silently."""
    _check_sentences(gold, pred, "entity_scores")
    for tags in (*gold, *pred):
        for tag in tags:
            if tag != "O" and not _ENTITY_TAG.match(tag):
                raise ValueError(f"entity_scores: tag {tag!r} is neither O nor B-/I-/E-/S-TYPE; "
                                 "entity F1 needs IOB tags (use token_accuracy for others)")
    try:
        from seqeval.metrics import f1_score, precision_score, recall_score
        from seqeval.scheme import IOB2, IOBES
    except ImportError:
        raise ImportError("entity F1 needs seqeval: pip install 'wiki2bert[finetune]'") from None
    iobes = any(tag[:2] in ("E-", "S-") for tags in (*gold, *pred) for tag in tags)
    options = dict(mode="strict", scheme=IOBES if iobes else IOB2, zero_division=0)
    with warnings.catch_warnings():
        # zero_division=0 already means "0.0 when undefined"; no warning per evaluation
        warnings.simplefilter("ignore")
        return {"f1": float(f1_score(gold, pred, **options)),
                "precision": float(precision_score(gold, pred, **options)),
                "recall": float(recall_score(gold, pred, **options))}


def token_accuracy(gold: list[list[str]], pred: list[list[str]]) -> float:
    """The fraction of tokens whose predicted tag is the gold one (POS tagging's metric)."""
    _check_sentences(gold, pred, "token_accuracy")
    total = sum(len(g) for g in gold)
    right = sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))
    return right / total if total else 0.0


def classification_scores(gold: list[str], pred: list[str]) -> dict:
    """{"accuracy", "macro_f1"} (0..1). Macro F1 averages the per-label F1 over the labels
    that occur in gold or predictions (sklearn's f1_score(average="macro") on those labels):
    a label predicted but never gold counts with F1 0."""
    _check_pairs(gold, pred, "classification_scores")
    if not gold:
        return {"accuracy": 0.0, "macro_f1": 0.0}
    tp: Counter[str] = Counter()
    n_pred: Counter[str] = Counter(pred)
    n_gold: Counter[str] = Counter(gold)
    for g, p in zip(gold, pred):
        tp[g] += g == p
    f1s = []
    for label in set(gold) | set(pred):
        precision = tp[label] / n_pred[label] if n_pred[label] else 0.0
        recall = tp[label] / n_gold[label] if n_gold[label] else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return {"accuracy": sum(tp.values()) / len(gold), "macro_f1": sum(f1s) / len(f1s)}


def _is_punctuation(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def normalize_answer(s: str, normalizer: str = "squad") -> str:
    """The text an answer is compared by. "squad": the official SQuAD script's (lower case,
    string.punctuation removed, English articles a/an/the removed, whitespace collapsed).
    "language-neutral": as MLQA for other languages, without a language's article list:
    NFC (Vietnamese comes both composed and decomposed), case folded, every Unicode
    punctuation character (and ASCII's, like MLQA) removed, whitespace collapsed."""
    if normalizer == "squad":
        text = "".join(ch for ch in s.lower() if ch not in _ASCII_PUNCT)
        return " ".join(_ARTICLES.sub(" ", text).split())
    if normalizer == "language-neutral":
        text = unicodedata.normalize("NFC", s).casefold()
        return " ".join("".join(ch for ch in text if not _is_punctuation(ch)).split())
    raise ValueError(f"unknown answer normalizer {normalizer!r}; use one of "
                     f"{', '.join(NORMALIZERS)}")


def _no_space_script(ch: str) -> bool:
    cp = ord(ch)
    i = bisect.bisect_right(_RANGE_STARTS, cp) - 1
    return i >= 0 and cp <= _NO_SPACE_RANGES[i][1]


def answer_tokens(s: str, normalizer: str = "squad") -> list[str]:
    """The tokens F1 counts: the normalised text split on whitespace; with "language-neutral",
    each character of a script written without spaces is its own token (a combining mark,
    e.g. a Thai vowel sign, stays with the character before it)."""
    text = normalize_answer(s, normalizer)
    if normalizer == "squad":
        return text.split()
    tokens: list[str] = []
    word = ""
    last_was_char_token = False
    for ch in text:
        if ch.isspace():
            if word:
                tokens.append(word)
            word, last_was_char_token = "", False
        elif last_was_char_token and unicodedata.category(ch).startswith("M"):
            tokens[-1] += ch
        elif _no_space_script(ch):
            if word:
                tokens.append(word)
            tokens.append(ch)
            word, last_was_char_token = "", True
        else:
            word += ch
            last_was_char_token = False
    if word:
        tokens.append(word)
    return tokens


def _f1(prediction: list[str], gold: list[str]) -> float:
    if not prediction or not gold:
        # SQuAD v2: an empty answer is right only against an empty answer
        return float(prediction == gold)
    same = sum((Counter(prediction) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions: dict[str, str], gold_answers: dict[str, list[str]],
                 normalizer: str = "squad") -> dict:
    """{"exact_match", "f1"} in percent (0..100), as the official SQuAD v2.0 script: per
    question the best score over its gold answers, averaged over the questions of
    `gold_answers`. A question with no gold answer (unanswerable) scores 1 only for an empty
    prediction; a question missing from `predictions` counts as answered "" (predictions for
    unknown ids are ignored)."""
    if normalizer not in NORMALIZERS:
        raise ValueError(f"unknown answer normalizer {normalizer!r}; use one of "
                         f"{', '.join(NORMALIZERS)}")
    if not gold_answers:
        return {"exact_match": 0.0, "f1": 0.0}
    exact = f1 = 0.0
    for qid, answers in gold_answers.items():
        prediction = predictions.get(qid, "")
        # as the v2 script: gold answers that normalise to nothing count as "no answer"
        golds = [a for a in answers if normalize_answer(a, normalizer)] or [""]
        pred_norm = normalize_answer(prediction, normalizer)
        pred_tokens = answer_tokens(prediction, normalizer)
        exact += max(float(normalize_answer(a, normalizer) == pred_norm) for a in golds)
        f1 += max(_f1(pred_tokens, answer_tokens(a, normalizer)) for a in golds)
    n = len(gold_answers)
    return {"exact_match": 100.0 * exact / n, "f1": 100.0 * f1 / n}


def default_normalizer(lang: str | None) -> str:
    """"squad" for English only, else "language-neutral": the English article list is wrong for
    every other language ("a" is the Hungarian article too), and the models this project makes
    are for other languages, so an unknown language is not taken to be English."""
    if lang is None:
        return "language-neutral"
    return "squad" if re.split(r"[-_]", lang.strip().lower())[0] == "en" else "language-neutral"
