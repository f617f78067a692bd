"""Model inputs for tagging and classification: words labelled by their first piece, long
sentences split into windows, long texts truncated with a count.

Usage:
    feats = tagging_features(tokenizer, sentences, label_ids, max_length=128)
    feats.rows[0]   # {"input_ids": [...], "token_type_ids": [...], "labels": [...]}
    # (classification: token_type_ids only where the tokenizer gives segment ids)
    word_tags = gather_word_predictions(feats, logits_per_row, id2label, sentences)
    feats = classification_features(tokenizer, examples, label_ids, max_length=128)

A sentence whose pieces do not fit in max_length - 2 is cut at word boundaries into windows
(no overlap: every word is predicted once, in the window that holds it); a single word longer
than a window keeps its first pieces (its label sits on the first one). Both are counted, and
the summary prints the counts: nothing is cut silently.
"""
from __future__ import annotations

from dataclasses import dataclass, field

IGNORE = -100   # label of pieces that are not a word's first piece (torch's CE ignore_index)


@dataclass
class Features:
    rows: list[dict]                                   # one model input per row
    row_source: list[int] = field(default_factory=list)  # the example (sentence) of each row
    word_of_piece: list[list[int]] = field(default_factory=list)  # per row: word index of each first piece, else -1
    windows: int = 0          # sentences split into more than one window
    truncated: int = 0        # words (tagging) or examples (classification) cut to fit
    no_piece_words: int = 0   # words the tokenizer turns into nothing (they are predicted "O")
    offsets: list = field(default_factory=list)   # QA: per row, the context chars of each piece


def _pieces_per_word(tokenizer, sentences) -> list[list[list[int]]]:
    """For each sentence, the piece ids of each word (one fast-tokenizer call for all)."""
    enc = tokenizer([s.words for s in sentences], is_split_into_words=True,
                    add_special_tokens=False, return_attention_mask=False,
                    return_token_type_ids=False)
    out = []
    for i, s in enumerate(sentences):
        per_word: list[list[int]] = [[] for _ in s.words]
        for piece, w in zip(enc["input_ids"][i], enc.word_ids(i)):
            if w is not None:
                per_word[w].append(piece)
        out.append(per_word)
    return out


def tagging_features(tokenizer, sentences, label_ids: dict[str, int], max_length: int) -> Features:
    """Rows of [CLS] pieces [SEP] with the first piece of each word labelled (IGNORE elsewhere;
    IGNORE too for a label never seen in training: it cannot be learned, only scored)."""
    budget = max_length - 2
    feats = Features(rows=[])
    for si, (s, per_word) in enumerate(zip(sentences, _pieces_per_word(tokenizer, sentences))):
        windows = []
        current: list[int] = []   # word indexes of the window being filled
        used = 0
        for w, pieces in enumerate(per_word):
            n = len(pieces)
            if n == 0:
                feats.no_piece_words += 1
            if n > budget:
                feats.truncated += 1
                n = budget
            if current and used + n > budget:
                windows.append(current)
                current, used = [], 0
            current.append(w)
            used += n
        windows.append(current)
        if len(windows) > 1:
            feats.windows += 1
        for words in windows:
            ids = [tokenizer.cls_token_id]
            labels = [IGNORE]
            word_of = [-1]
            for w in words:
                pieces = per_word[w][:budget]
                for k, piece in enumerate(pieces):
                    ids.append(piece)
                    labels.append(label_ids.get(s.tags[w], IGNORE) if k == 0 else IGNORE)
                    word_of.append(w if k == 0 else -1)
            ids.append(tokenizer.sep_token_id)
            labels.append(IGNORE)
            word_of.append(-1)
            feats.rows.append({"input_ids": ids, "token_type_ids": [0] * len(ids), "labels": labels})
            feats.row_source.append(si)
            feats.word_of_piece.append(word_of)
    return feats


def gather_word_predictions(feats: Features, row_predictions, id2label: dict[int, str],
                            sentences, default: str = "O") -> list[list[str]]:
    """Per sentence, one predicted tag per word (the argmax at its first piece); words with no
    piece get `default`."""
    tags = [[default] * len(s.words) for s in sentences]
    for row, src, word_of in zip(row_predictions, feats.row_source, feats.word_of_piece):
        for pos, w in enumerate(word_of):
            if w >= 0:
                tags[src][w] = id2label[int(row[pos])]
    return tags


def classification_features(tokenizer, examples, label_ids: dict[str, int],
                            max_length: int) -> Features:
    """Rows of one text or a pair; texts longer than max_length are cut (longest first) and
    counted. A label unseen in training gets IGNORE (scored, never learned)."""
    texts = [e.text for e in examples]
    pairs = [e.text_pair for e in examples]
    has_pairs = any(p is not None for p in pairs)
    args = (texts, [p or "" for p in pairs]) if has_pairs else (texts,)
    full = tokenizer(*args, truncation=False, return_attention_mask=False,
                     return_token_type_ids=False)
    long = [i for i, ids in enumerate(full["input_ids"]) if len(ids) > max_length]
    enc = tokenizer(*args, truncation="longest_first" if has_pairs else True,
                    max_length=max_length, return_attention_mask=False)
    feats = Features(rows=[], truncated=len(long))
    segments = enc.get("token_type_ids")   # a tokenizer of a model without segments gives none
    for i, e in enumerate(examples):
        feats.rows.append({"input_ids": enc["input_ids"][i],
                           **({"token_type_ids": segments[i]} if segments is not None else {}),
                           "labels": label_ids.get(e.label, IGNORE)})
        feats.row_source.append(i)
    return feats
