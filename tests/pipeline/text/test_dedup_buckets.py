"""dedup's second step: key ranges joined into tasks that fit the memory setting, and what a
task records: the first holder of each text, signature and paragraph, and the band candidates
checked on their signatures."""
from __future__ import annotations

import random

import numpy as np

from pipeline.text import dedup_buckets
from pipeline.text.dedup_buckets import PARAGRAPH, SAME, SIMILAR, bucket_task, plan, records_path
from pipeline.text.dedup_fingerprints import TABLES, fingerprint_file, read_rows
from pipeline.text.documents import format_documents
from tests.helpers.dedup_reference import changed, random_words


def fingerprinted(tmp_path, files: list[list[list[str]]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    stems, sizes = [], []
    for i, docs in enumerate(files):
        src = tmp_path / f"f{i}.txt"
        src.write_text(format_documents(docs), encoding="utf-8")
        stems.append(str(tmp_path / f"f{i}"))
        sizes.append(tuple(fingerprint_file((src, stems[-1]), num_perm=128, min_chars=40, bands=25, rows=5).values()))
    doc_offsets, para_offsets = (np.concatenate([[0], np.cumsum(c)]) for c in zip(*sizes))
    return stems, doc_offsets, para_offsets


def test_a_task_records_first_holders_and_checked_candidates(tmp_path):
    rnd = random.Random(2)
    a = [" ".join(random_words(rnd, 30)), " ".join(random_words(rnd, 30))]
    other = [" ".join(random_words(rnd, 60))]
    files = [[a, other], [list(a), changed(a, rnd, 0.03), [a[1]]]]   # docs 0, 1 | 2, 3, 4
    stems, doc_offsets, para_offsets = fingerprinted(tmp_path, files)
    cuts, ranges = plan(stems, 10 ** 9, 1)
    out = str(tmp_path / "bucket")
    info = bucket_task((ranges[:, :, 0:2], out), stems, doc_offsets, para_offsets, 0.5, 128, 5)
    records = read_rows(records_path(out), 0, info["records"])
    got = {(int(r["doc"]), int(r["kind"]), int(r["a"]), int(r["b"])) for r in records}
    assert (2, SAME, 0, 0) in got                            # an exact copy: its signature's and text's first
    assert (3, SIMILAR, 0, 0) in got                         # a near copy of doc 0 (not of 2: a's class)
    assert not [g for g in got if g[0] == 3 and g[1] == SIMILAR and g[2] != 0]
    paragraphs = {(g[0], g[2], g[3]) for g in got if g[1] == PARAGRAPH}
    assert paragraphs == {(2, 3, 0), (2, 4, 1), (4, 7, 1)}   # (doc, paragraph, its first holder)
    assert not [g for g in got if g[0] in (0, 1)]            # nothing earlier is like the first two


def test_many_buckets_are_planned_within_the_memory(tmp_path):
    rnd = random.Random(3)
    files = [[[" ".join(random_words(rnd, 40))] for _ in range(300)] for _ in range(4)]
    stems, _docs, _paras = fingerprinted(tmp_path, files)
    sizes = [dtype.itemsize for dtype in TABLES.values()]
    for memory, tasks in ((10 ** 9, 1), (100_000, None)):
        cuts, ranges = plan(stems, memory, min_tasks=1)
        assert cuts[0] == 0 and cuts[-1] == 1024 and (tasks is None or len(cuts) - 1 == tasks)
        held = dedup_buckets.MEMORY_FACTOR * sum((ranges[:, t, 1:] - ranges[:, t, :-1]).sum(0) * s
                                                 for t, s in enumerate(sizes))
        assert ranges.shape == (len(stems), 3, len(cuts)) and int(held.sum()) > 0
        if tasks is None:
            assert len(cuts) > 10 and np.all(held <= memory * 1.2)   # a slice may tip it over
