"""`pipeline shard`: training and test shards of whole documents, balanced by size.

Two streaming passes over the filtered files, memory bounded whatever the number of documents:
1. per input file (in parallel, resumable): the size of each document, whether its hash holds it
   out and its copies, as arrays on disk (pipeline/text/shard_scan.py);
2. one ordered pass that writes every shard at once. A document is held out for test when a
   seeded hash of its text falls below --test-fraction (so the choice depends on the text and
   the seed only). Shards are balanced by size: largest document first into the smallest
   shard, planned from pass 1's arrays and sorted on disk a chunk at a time
   (pipeline/text/largest_first.py: the memory of 512K documents, about 30 MB, at any size).
   A document is never split; inside a shard documents keep the corpus order. The output is
   the same for any --workers.
   The held-out share has a floor: while the test documents hold fewer than
   --min-test-sentences sentences, the documents with the next-smallest hashes join them, up to
   MAX_TEST_SHARE of the documents (so a 40-article sample still trains on 36), or up to
   SMALL_TEST_SHARE where that share would leave the probe (`pipeline probe`) too few held-out
   sentences for a score and the larger one would not (pipeline/text/held_out.py). Evaluations on
   a few hundred sentences or instances mean little (the vocab report and the trainer say so).
   Every source of two documents or more holds out at least one (its smallest hash).

Writes DATA_DIR/LANG/sharded/{LANG}wiki_training_{i}.txt and {LANG}wiki_test_{i}.txt
(one sentence per line, a blank line between documents) and a manifest with the documents and
bytes per shard and per source (a document's source is in its file's name, core/sources.py).
`--weight NAME=W` repeats a source's training documents (W=2: twice, each copy placed as a
document of its own, so mostly in another shard) or samples them down (W=0.5: those whose
seeded hash falls in the lower half); held-out documents are never repeated or dropped, and
copies share their original's held-out choice, so no copy of a test document trains.

Usage:
    pipeline --lang hu shard                                # filtered/ -> sharded/
    pipeline --lang hu shard --num-shards 64 --test-fraction 0.02
    pipeline --lang hu shard --min-test-sentences 0     # exactly --test-fraction, no floor
    pipeline --lang hu shard --weight wikipedia=2 --weight web=0.5
    shard(data_dir="data", lang="hu", workers=2)            # from Python
"""
from __future__ import annotations

import bisect
import contextlib
import functools
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np

from common.atomic import atomic_open
from pipeline.core.errors import StageError
from pipeline.core.inputs import text_io
from pipeline.core.manifest import fingerprint_inputs
from pipeline.core.options import force_option
from pipeline.core.registry import validate_lang
from pipeline.core.report import progress
from pipeline.core.runner import StageRun, Task
from pipeline.core.sources import WIKIPEDIA, parse_weights, source_of
from pipeline.text.documents import doc_bytes as _doc_bytes
from pipeline.text.documents import read_documents
from pipeline.text.held_out import MAX_TEST_SHARE, SMALL_TEST_SHARE, floor_additions, test_share_cap
from pipeline.text.largest_first import LargestFirstPlan, plan_largest_first
from pipeline.text.shard_scan import read_scan, scan_file, smallest_until

log = logging.getLogger("pipeline")

MIN_AUTO_SHARDS = 16
AUTO_SHARD_BYTES = 128 * 1000 * 1000  # above 16 shards, about this much text per training shard
MIN_TEST_SENTENCES = 2500   # held-out floor: ~1,000 eval instances at seq 512 with dupe factor 5
# The floor adds documents in hash order (the choice depends on the text and the seed only).
# Pass 1 keeps (hash, index, sentences) only of the documents whose hash falls below this
# share; should they run out before the floor or the cap is reached (small corpora), the
# files are scanned again with a larger share.
CANDIDATE_SHARE = 2 * MAX_TEST_SHARE


class _ShardWriter:
    """Appends documents to its shards, documents separated by a blank line."""

    def __init__(self, stack: contextlib.ExitStack, paths: list[Path]):
        self.paths = paths
        self.files = [stack.enter_context(atomic_open(p, "wb")) for p in paths]
        self.sizes = [0] * len(paths)
        self.docs = [0] * len(paths)
        self.sentences = [0] * len(paths)
        self.sources = [Counter() for _ in paths]
        self.source_bytes = [Counter() for _ in paths]

    def add(self, i: int, data: bytes, n_sentences: int, source: str = WIKIPEDIA) -> None:
        fh = self.files[i]
        if self.docs[i]:
            fh.write(b"\n")
            self.sizes[i] += 1
        fh.write(data + b"\n")
        self.sizes[i] += len(data) + 1
        self.docs[i] += 1
        self.sentences[i] += n_sentences
        self.sources[i][source] += 1
        self.source_bytes[i][source] += len(data) + 1

    def table(self, split: str) -> list[dict]:
        return [{"file": p.name, "split": split, "documents": d, "sentences": s, "bytes": b,
                 "sources": dict(sorted(c.items())), "source_bytes": dict(sorted(sb.items()))}
                for p, d, s, b, c, sb in zip(self.paths, self.docs, self.sentences, self.sizes, self.sources,
                                             self.source_bytes)]


def shard(data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
          num_shards=None, test_fraction=0.01, min_test_sentences=MIN_TEST_SENTENCES,
          seed=12345, weights=None) -> dict:
    """Write balanced training and test shards of whole documents; return the summary dict.
    `weights` ({source: w}) repeats (w > 1) or samples down (w < 1) a source's training
    documents; the held-out ones are kept once."""
    lang = validate_lang(lang)
    _check_options(num_shards, test_fraction, min_test_sentences)
    io = text_io(data_dir, lang, "shard", input, output)
    files, out_dir = io.files, io.output
    weights = _check_weights(weights, files, io.source)
    options = {"lang": lang, "num_shards": num_shards, "test_fraction": test_fraction,
               "min_test_sentences": min_test_sentences, "seed": seed}
    if weights:   # only then: a run without weights keeps its earlier manifest valid
        options["weights"] = dict(sorted(weights.items()))
    run = StageRun("shard", out_dir, options, fingerprint_inputs([io.source]), force=force,
                   workers=workers, expected_bytes=io.input_bytes())
    if run.complete:
        return run.skip()

    floor = min_test_sentences if test_fraction > 0 else 0   # the held-out floor (0: none)
    scanned = _scan_documents(run, files, seed, test_fraction, weights, floor, io.source)
    _choose_held_out(run, files, scanned, seed, test_fraction, floor)
    plan = _plan_shards(run, scanned, num_shards, test_fraction)
    train_paths = [out_dir / f"{lang}wiki_training_{i}.txt" for i in range(plan.n_train_shards)]
    test_paths = [out_dir / f"{lang}wiki_test_{i}.txt" for i in range(plan.n_test_shards)]
    table = _write_shards(files, scanned, plan, train_paths, test_paths)
    summary = _summary(table, plan, scanned, [source_of(f.name) for f in files], weights, run.seconds())
    return run.finish(summary, outputs=train_paths + test_paths, extra={"shards": table})


def _check_options(num_shards, test_fraction: float, min_test_sentences: int) -> None:
    if num_shards is not None and num_shards < 1:
        raise StageError(f"--num-shards must be at least 1 (got {num_shards})")
    if not 0 <= test_fraction < 1:
        raise StageError(f"--test-fraction must be at least 0 and below 1, e.g. 0.01 (got {test_fraction})")
    if min_test_sentences < 0:
        raise StageError(f"--min-test-sentences must be at least 0 (got {min_test_sentences})")


def _check_weights(weights: dict | None, files: list[Path], source: Path) -> dict[str, float]:
    """The weights other than 1, each of a source that the input holds."""
    weights = {k: float(v) for k, v in (weights or {}).items() if float(v) != 1.0}
    file_sources = {source_of(f.name) for f in files}
    if unknown := sorted(set(weights) - file_sources):
        raise StageError(f"--weight for {', '.join(unknown)}: no such source in {source} "
                         f"(sources: {', '.join(sorted(file_sources))})")
    return weights


@dataclass
class _Scanned:
    """Pass 1: each input file's record and arrays (never its text), and the held-out choice."""

    infos: list[dict]     # per file: documents, sentences, held-out by hash, the smallest hash
    sidecars: list[Path]  # per file: its documents' sizes, hash-held-out flags, copies (shard_scan.py)
    starts: list[int]     # the corpus index of each file's first document
    candidates: list      # the floor's candidates (hash, corpus index, sentences), smallest first
    total: int            # documents
    extra: dict[int, list[int]] = field(default_factory=dict)   # per file: held out beyond the hash

    def arrays(self, f: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """File f's document sizes, held-out flags (by hash and beyond) and training copies."""
        sizes, held, copies = read_scan(self.sidecars[f])
        if f in self.extra:
            held = held.copy()
            held[self.extra[f]] = True
        return sizes, held, np.ones(len(sizes), np.int32) if copies is None else copies

    def add_held_out(self, g: int) -> None:
        f = bisect.bisect_right(self.starts, g) - 1
        self.extra.setdefault(f, []).append(g - self.starts[f])


def _scan_file_task(job: tuple[Path, Path | None], **settings) -> dict:
    return scan_file(*job, **settings)


def _scan_documents(run: StageRun, files: list[Path], seed: int, test_fraction: float,
                    weights: dict, floor: int, source: Path) -> _Scanned:
    """Pass 1, a resumable task per file; the floor's candidates merged as the files come in
    (never more than the floor could take)."""
    scan = functools.partial(_scan_file_task, seed=seed, test_fraction=test_fraction,
                             candidate_fraction=max(test_fraction, CANDIDATE_SHARE) if floor else 0.0,
                             floor=floor, weights=weights)
    sidecars = [run.work_dir / f"scan_{i:05d}.npz" for i in range(len(files))]
    tasks = [Task(f"scan_{f.name}", (f, s), outputs=(s,)) for f, s in zip(files, sidecars)]
    infos, starts, candidates, total = [], [], [], 0
    for _task, info in run.run_tasks(tasks, scan, desc="shard: scan", unit="file"):
        candidates = smallest_until(candidates + [(h, total + i, n) for h, i, n in info.pop("candidates")], floor)
        infos.append(info)
        starts.append(total)
        total += info["documents"]
    if total == 0:
        raise StageError(f"{source} holds no documents: check the filter stage's output (--input)")
    return _Scanned(infos, sidecars, starts, candidates, total)


def _choose_held_out(run: StageRun, files: list[Path], scanned: _Scanned, seed: int,
                     test_fraction: float, floor: int) -> None:
    """Beyond the hashes below --test-fraction: the next-smallest up to `floor` sentences
    (test_share_cap's share of the documents at most); at least one of every source when any is
    asked for."""
    infos, starts, total = scanned.infos, scanned.starts, scanned.total
    tested = sum(i["test_documents"] for i in infos), sum(i["test_sentences"] for i in infos)
    share = max(test_fraction, CANDIDATE_SHARE)
    cap = int(test_share_cap(sum(info["sentences"] for info in infos), floor) * total)
    candidates = scanned.candidates
    while floor:
        added, ran_out = floor_additions(*tested, candidates, floor, cap)
        if not ran_out or share >= 1:
            for g in added:
                scanned.add_held_out(g)
            break
        share = min(1.0, share * 4)   # a small corpus: scan again with more candidates
        rescan = functools.partial(_scan_file_task, seed=seed, test_fraction=test_fraction,
                                   candidate_fraction=share, floor=floor)
        candidates = smallest_until([(h, start + i, n) for start, again in zip(starts, run.map(
            rescan, [(f, None) for f in files])) for h, i, n in again["candidates"]], floor)
    if test_fraction > 0:
        _hold_out_each_source(files, scanned)
    if not scanned.extra and not tested[0] and test_fraction > 0 and total >= 2:
        # Hold out the document with the smallest hash, so that a test shard exists.
        f = min((i for i in range(len(infos)) if infos[i]["documents"]), key=lambda i: infos[i]["min_hash"])
        scanned.add_held_out(starts[f] + infos[f]["min_index"])


def _hold_out_each_source(files: list[Path], scanned: _Scanned) -> None:
    """At least one held-out document from every source of two documents or more (a small web
    slice beside a large Wikipedia can draw none by hash): its document with the smallest hash."""
    by_source: dict[str, list[int]] = {}
    for i, path in enumerate(files):
        if scanned.infos[i]["documents"]:
            by_source.setdefault(source_of(path.name), []).append(i)
    for source_files in by_source.values():
        if (sum(scanned.infos[i]["documents"] for i in source_files) < 2
                or any(scanned.infos[i]["test_documents"] or i in scanned.extra for i in source_files)):
            continue
        f = min(source_files, key=lambda i: scanned.infos[i]["min_hash"])
        scanned.add_held_out(scanned.starts[f] + scanned.infos[f]["min_index"])


@dataclass(frozen=True)
class _Plan:
    """Where every document goes, on disk (pipeline/text/largest_first.py). A training unit is
    one copy of a training document, in corpus order; a test unit a held-out document."""

    train: LargestFirstPlan
    test: LargestFirstPlan | None
    n_train_shards: int
    n_test_shards: int


def _plan_shards(run: StageRun, scanned: _Scanned, num_shards, test_fraction: float) -> _Plan:
    """How many shards of each kind; every document (or copy) largest first into the smallest."""
    files = range(len(scanned.infos))

    def units(test: bool):
        for f in files:
            sizes, held, copies = scanned.arrays(f)
            yield sizes[held] if test else np.repeat(sizes[~held], copies[~held])

    n_train = n_test = train_bytes = 0
    for f in files:
        sizes, held, copies = scanned.arrays(f)
        n_test += int(held.sum())
        n_train += int(copies[~held].sum())
        train_bytes += int((sizes[~held] * copies[~held]).sum())
    if n_train == 0:
        raise StageError(f"--test-fraction {test_fraction} or --weight 0 leaves no training "
                         "document: use a smaller fraction or a weight above 0")
    wanted = num_shards or max(MIN_AUTO_SHARDS, math.ceil(train_bytes / AUTO_SHARD_BYTES))
    n_train_shards = min(wanted, n_train)
    if n_train_shards < wanted and num_shards:
        log.warning("shard: only %d training documents, so %d training shards instead of %d",
                    n_train, n_train_shards, wanted)
    share = max(test_fraction, n_test / scanned.total)
    n_test_shards = min(n_test, max(1, round(n_train_shards * share))) if n_test else 0
    test = plan_largest_first(lambda: units(True), n_test_shards, run.work_dir / "plan_test") if n_test else None
    train = plan_largest_first(lambda: units(False), n_train_shards, run.work_dir / "plan_training")
    return _Plan(train, test, n_train_shards, n_test_shards)


def _write_shards(files: list[Path], scanned: _Scanned, plan: _Plan, train_paths: list[Path],
                  test_paths: list[Path]) -> list[dict]:
    """Pass 2: one ordered pass writes every shard at once; returns the table of shards."""
    train_shards = plan.train.shards()
    test_shards = plan.test.shards() if plan.test else iter(())
    with contextlib.ExitStack() as stack:
        train = _ShardWriter(stack, train_paths)
        test = _ShardWriter(stack, test_paths) if test_paths else None
        for f, path in enumerate(progress(files, desc="shard: write", unit="file", disable=len(files) <= 1)):
            source = source_of(path.name)
            _sizes, held, copies = scanned.arrays(f)
            held, copies = held.tolist(), copies.tolist()
            for di, doc in enumerate(read_documents(path)):
                if held[di]:
                    test.add(next(test_shards), _doc_bytes(doc), len(doc), source)
                    continue
                for _ in range(copies[di]):
                    train.add(next(train_shards), _doc_bytes(doc), len(doc), source)
    return train.table("training") + (test.table("test") if test else [])


def _summary(table: list[dict], plan: _Plan, scanned: _Scanned, file_sources: list[str],
             weights: dict, seconds: float) -> dict:
    """The stage's summary: documents and shards, sentences, bytes, and the counts per source."""
    per_source = {s: {"documents": 0, "training_documents": 0, "test_documents": 0, "training_bytes": 0,
                      "test_bytes": 0, "weight": weights.get(s, 1.0)} for s in dict.fromkeys(file_sources)}
    for s, info in zip(file_sources, scanned.infos):
        n = info["documents"]
        per_source[s]["documents"] += n
    for row in table:
        for s, n in row["sources"].items():
            per_source[s][f"{row['split']}_documents"] += n
            per_source[s][f"{row['split']}_bytes"] += row["source_bytes"][s]
    train_bytes = [r["bytes"] for r in table if r["split"] == "training"]
    return {
        "documents": scanned.total, "training_documents": plan.train.units,
        "test_documents": plan.test.units if plan.test else 0,
        "training_shards": plan.n_train_shards, "test_shards": plan.n_test_shards,
        "sentences": sum(r["sentences"] for r in table),
        "test_sentences": sum(r["sentences"] for r in table if r["split"] == "test"),
        "output_bytes": sum(r["bytes"] for r in table),
        "largest_shard_bytes": max(train_bytes), "smallest_shard_bytes": min(train_bytes),
        "sources": per_source, "seconds": seconds,
    }


@click.command("shard")
@click.option("--input", "input_", type=click.Path(exists=True, path_type=Path), default=None,
              help="Filtered sentence files: a .txt file or a folder [default: DATA_DIR/LANG/filtered].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/sharded].")
@click.option("--num-shards", type=click.IntRange(min=1), default=None,
              help=f"Training shards [default: {MIN_AUTO_SHARDS}, or one per ~128 MB of text if more; "
                   "never more than the training documents].")
@click.option("--test-fraction", type=click.FloatRange(0, 1, max_open=True), default=0.01,
              show_default=True, help="Share of documents held out for the test shards (0: none).")
@click.option("--min-test-sentences", type=click.IntRange(min=0), default=MIN_TEST_SENTENCES,
              show_default=True,
              help=f"Hold out more documents until the test shards have this many sentences, "
                   f"up to {MAX_TEST_SHARE:.0%} of the documents ({SMALL_TEST_SHARE:.0%} where the probe "
                   "needs it: see the docs) (0: exactly --test-fraction).")
@click.option("--seed", type=int, default=12345, show_default=True,
              help="Seed of the document hash that picks the held-out documents.")
@click.option("--weight", "weights", multiple=True, metavar="NAME=W",
              help="Weight of a source's training documents (2: each twice, 0.5: about half; "
                   "Wikipedia's name is 'wikipedia') [default: 1].")
@force_option
@click.pass_obj
def command(g, input_, output, num_shards, test_fraction, min_test_sentences, seed, weights, force):
    """Cut the filtered documents into balanced training and test shards.

    Writes LANGwiki_training_I.txt and LANGwiki_test_I.txt: whole documents, largest first
    into the smallest shard; held-out documents chosen by a seeded hash of their text.
    """
    shard(**g.kwargs(), input=input_, output=output, force=force, num_shards=num_shards,
          test_fraction=test_fraction, min_test_sentences=min_test_sentences, seed=seed,
          weights=parse_weights(weights))
