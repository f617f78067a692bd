"""How much of a corpus `pipeline shard` holds out for test: the floor's caps and the order in
which documents join the held-out ones (their seeded hash: the choice depends on the text and the
seed only).

    share = test_share_cap(sentences, floor)          # MAX_TEST_SHARE, or SMALL_TEST_SHARE for the probe
    added, ran_out = floor_additions(test_documents, test_sentences, candidates, min_sentences, max_docs)
"""
from __future__ import annotations

MAX_TEST_SHARE = 0.1        # the floor never holds out more than this share of the documents,
SMALL_TEST_SHARE = 0.25     # nor than this where the probe needs it: PROBE_HELD_OUT held-out sentences
# give the probe 500 test and 500 dev sentences (pipeline/stages/probe.py's floors): 57% of uk's
# held-out sentences had a mention it could use, 85% of vi's (bench/README.md, issue 60). uk's
# 2.5 MB dump (18,048 sentences) held out 696 at 10%, and its probe, 197 test sentences, was skipped.
PROBE_HELD_OUT = 2000


def test_share_cap(sentences: int, floor: int) -> float:
    """The most of the documents the floor may hold out: MAX_TEST_SHARE, or SMALL_TEST_SHARE for
    a corpus of `sentences` where the first share holds fewer than the probe needs (PROBE_HELD_OUT,
    or the floor where lower) and the second that many (a smaller corpus, the shipped sample,
    keeps its training text: no share would give it a probe)."""
    need = min(floor, PROBE_HELD_OUT)
    return SMALL_TEST_SHARE if MAX_TEST_SHARE * sentences < need <= SMALL_TEST_SHARE * sentences else MAX_TEST_SHARE


def floor_additions(test_documents: int, test_sentences: int, candidates: list[tuple[int, int, int]],
                    min_sentences: int, max_docs: int) -> tuple[list[int], bool]:
    """The candidates (hash, document, sentences), none held out yet, that join the
    `test_documents` held-out documents of `test_sentences` sentences, in hash order, while these
    hold fewer than `min_sentences` sentences and fewer than `max_docs` documents; and True if
    the candidates ran out first."""
    added, sentences, count = [], test_sentences, test_documents
    for _h, g, n in sorted(candidates):
        if sentences >= min_sentences or count >= max_docs:
            return added, False
        added.append(g)
        sentences += n
        count += 1
    return added, sentences < min_sentences and count < max_docs
