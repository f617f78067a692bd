"""`pipeline dedup`: every source of the corpus together, exact and near-duplicate copies removed.

Reads Wikipedia's formatted/ (when finished; `--no-wikipedia` leaves it out) and ingested/
(when finished) and writes DATA_DIR/LANG/deduped/SOURCE__FILE.txt in the same format, which
split reads instead of formatted/ once it exists. Three passes:
1. per file, in parallel and resumable: each document's hash of its normalised words, its
   MinHash signature (word 3-grams, datasketch) and the hashes of its paragraphs
   (pipeline/text/near_dups.py), kept in the stage's work folder;
2. one ordered pass in keep order deciding what stays. The keep rule: Wikipedia first, then
   the sources in the order they were given to ingest, inside a source file and document
   order; a document is removed when an earlier kept one has the same normalised text
   (`exact`), or an estimated Jaccard similarity of at least --threshold on the LSH's
   candidates (`near`); a paragraph of --min-paragraph-chars or more that an earlier kept
   document holds is removed, and a document left without such a paragraph goes
   (`paragraphs`). So Wikipedia's copy wins over a web mirror, and the first-named source's
   copy over a later one's;
3. per file, in parallel: the kept documents written.
The held-out test documents are chosen after this (by shard), so no near-copy of a test
document stays in training. Memory of pass 2 grows with the documents kept (their signature,
512 bytes, and the LSH's band keys), not with their text.

Usage:
    pipeline --lang hu dedup                       # formatted/ + ingested/ -> deduped/
    pipeline --lang hu dedup --threshold 0.8 --no-wikipedia
    dedup(data_dir="data", lang="hu", workers=2)   # from Python; the summary
"""
from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import click
import numpy as np

from common.atomic import atomic_open, atomic_path
from pipeline.core.errors import StageError
from pipeline.core.inputs import list_text_files, resolve_output
from pipeline.core.manifest import fingerprint_inputs, read_manifest
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir
from pipeline.core.runner import StageRun, Task
from pipeline.core.sources import WIKIPEDIA, plain, source_file_name, source_of
from pipeline.text.documents import documents, format_documents, read_utf8
from pipeline.text.near_dups import (
    NUM_PERM,
    estimated_jaccard,
    lean,
    make_lsh,
    normalised_words,
    signature,
    text_hash,
)

THRESHOLD = 0.5
MIN_PARAGRAPH_CHARS = 40    # shorter paragraphs ("References", a date) repeat without being copies
EXAMPLES = 3                # removed pairs per reason and source kept for the report
KEEP, EXACT, NEAR, PARAGRAPHS = 0, 1, 2, 3
REASONS = {EXACT: "exact", NEAR: "near", PARAGRAPHS: "paragraphs"}


def fingerprint_file(job: tuple[Path, Path], num_perm: int, min_chars: int) -> dict:
    """Pass 1 for one file: doc hashes, signatures, paragraph hashes into an .npz."""
    src, npz = job
    doc_h, sigs, para_h, para_start = [], [], [], [0]
    for doc in documents(read_utf8(src)):
        words_per_para = [normalised_words(p) for p in doc]
        words = [w for ws in words_per_para for w in ws]
        doc_h.append(text_hash(words))
        sigs.append(signature(words, num_perm))
        para_h.extend(text_hash(ws) if sum(map(len, ws)) + len(ws) > min_chars else 0
                      for ws in words_per_para)
        para_start.append(len(para_h))
    with atomic_path(npz) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, doc=np.asarray(doc_h, dtype=np.uint64), para=np.asarray(para_h, dtype=np.uint64),
                     start=np.asarray(para_start, dtype=np.int64),
                     sig=np.asarray(sigs, dtype=np.uint32).reshape(len(sigs), num_perm))
    return {"documents": len(doc_h)}


class Decider:
    """Pass 2: the keep rule over documents met in keep order (see the module docstring)."""

    def __init__(self, threshold: float, num_perm: int):
        self.threshold = threshold
        self.lsh = make_lsh(threshold, num_perm)
        self.seen_docs: dict[int, tuple[int, int]] = {}
        self.seen_paras: set[int] = set()
        self.sigs: list[np.ndarray] = []
        self.where: list[tuple[int, int]] = []   # kept key -> (file, document)
        self.examples: list[dict] = []

    def file(self, fi: int, data, source: str = "") -> tuple[np.ndarray, np.ndarray]:
        """(reason per document, paragraph removed?) for file `fi` of `source`."""
        self.source = source
        doc_h, para_h, start, sigs = data["doc"], data["para"], data["start"], data["sig"]
        reasons = np.zeros(len(doc_h), dtype=np.uint8)
        para_drop = np.zeros(len(para_h), dtype=bool)
        for d in range(len(doc_h)):
            h, sig = int(doc_h[d]), sigs[d]
            if h and h in self.seen_docs:
                reasons[d] = EXACT
                self._example(EXACT, (fi, d), self.seen_docs[h], 1.0)
                continue
            match = self._near(sig)
            if match is not None:
                reasons[d] = NEAR
                self._example(NEAR, (fi, d), self.where[match[1]], match[0])
                continue
            paras = para_h[start[d]:start[d + 1]].tolist()
            dropped = [bool(p) and p in self.seen_paras for p in paras]
            if any(dropped) and all(drop or not p for drop, p in zip(dropped, paras)):
                reasons[d] = PARAGRAPHS
                continue
            para_drop[start[d]:start[d + 1]] = dropped
            self.seen_paras.update(p for p in paras if p)
            if h:
                self.seen_docs[h] = (fi, d)
            self.lsh.insert(len(self.sigs), lean(sig))
            self.sigs.append(sig)
            self.where.append((fi, d))
        return reasons, para_drop

    def _near(self, sig: np.ndarray) -> tuple[float, int] | None:
        """(similarity, key) of the most similar kept document at or above the threshold."""
        best = None
        for key in self.lsh.query(lean(sig)):
            j = estimated_jaccard(sig, self.sigs[key])
            if j >= self.threshold and (best is None or (-j, key) < (-best[0], best[1])):
                best = (j, key)
        return best

    def _example(self, reason: int, removed: tuple[int, int], kept: tuple[int, int], j: float) -> None:
        key = (REASONS[reason], self.source)
        if sum((e["reason"], e["source"]) == key for e in self.examples) < EXAMPLES:
            self.examples.append({"reason": key[0], "source": key[1], "similarity": round(j, 3),
                                  "removed": removed, "kept": kept})


def write_file(job: tuple[Path, Path, Path]) -> dict:
    """Pass 3 for one file: its kept documents (without removed paragraphs) into `dst`."""
    src, decisions, dst = job
    with np.load(decisions) as data:
        reasons, para_drop = data["reasons"], data["para_drop"]
    kept, p = [], 0
    paragraphs_removed = 0
    for d, doc in enumerate(documents(read_utf8(src))):
        drop = para_drop[p:p + len(doc)]
        p += len(doc)
        if reasons[d] == KEEP:
            kept.append([line for line, gone in zip(doc, drop) if not gone])
            paragraphs_removed += int(drop.sum())
    if kept:
        with atomic_open(dst) as fh:
            fh.write(format_documents(kept))
    return {"kept": len(kept), "paragraphs_removed": paragraphs_removed, "written": bool(kept)}


def dedup_inputs(data_dir, lang: str, wikipedia: bool | None) -> list[tuple[str, Path]]:
    """(source, file) in keep order: Wikipedia's formatted files, then ingest's by source order."""
    formatted, ingested = stage_dir(data_dir, lang, "format"), stage_dir(data_dir, lang, "ingest")
    files: list[tuple[str, Path]] = []
    if wikipedia is None:
        wikipedia = read_manifest(formatted) is not None
    if wikipedia:
        if read_manifest(formatted) is None:
            raise StageError(f"{formatted} holds no finished format output: run `pipeline format` "
                             "first, or leave Wikipedia out with --no-wikipedia")
        files += [(WIKIPEDIA, f) for f in list_text_files(formatted)]
    manifest = read_manifest(ingested)
    if manifest is not None:
        order = {name: i for i, name in enumerate(manifest["summary"]["sources"])}
        ing = sorted(list_text_files(ingested),
                     key=lambda f: (order.get(source_of(f.name), len(order)), f.name))
        files += [(source_of(f.name), f) for f in ing]
    if not files:
        raise StageError(f"nothing to deduplicate: neither {formatted} nor {ingested} holds a "
                         "finished stage: run `pipeline format` or `pipeline ingest --source ...` first")
    return files


def dedup(data_dir="data", lang="hu", workers=None, output=None, force=False, wikipedia=None,
          threshold=THRESHOLD, num_perm=NUM_PERM, min_paragraph_chars=MIN_PARAGRAPH_CHARS) -> dict:
    """Deduplicate every source together into deduped/; return the summary dict."""
    if not 0 < threshold <= 1:
        raise StageError(f"--threshold is a Jaccard similarity above 0 and at most 1 (got {threshold})")
    inputs = dedup_inputs(data_dir, lang, wikipedia)
    out = resolve_output(data_dir, lang, "dedup", output)
    options = {"threshold": threshold, "num_perm": num_perm, "min_paragraph_chars": min_paragraph_chars,
               "sources": sorted({s for s, _ in inputs})}
    run = StageRun("dedup", out, options, fingerprint_inputs(sorted({f.parent for _, f in inputs})),
                   force=force, workers=workers, expected_bytes=sum(f.stat().st_size for _, f in inputs))
    if run.complete:
        return run.skip()
    names = [source_file_name(s, f.name) for s, f in inputs]
    work = run.work_dir
    tasks = [Task(f"hash_{n}", (f, work / f"{n}.npz"), outputs=(work / f"{n}.npz",))
             for n, (_s, f) in zip(names, inputs)]
    hasher = functools.partial(fingerprint_file, num_perm=num_perm, min_chars=min_paragraph_chars)
    counts: dict[str, Counter] = {}
    hashed = run.run_tasks(tasks, hasher, desc="dedup: hash", unit="file")
    for (s, _f), (_t, info) in zip(inputs, hashed):
        counts.setdefault(s, Counter())["documents"] += info["documents"]

    decider = Decider(threshold, num_perm)
    for fi, ((s, _f), task) in enumerate(zip(inputs, tasks)):
        with np.load(task.outputs[0]) as data:
            reasons, para_drop = decider.file(fi, data, s)
        for code, reason in REASONS.items():
            counts[s][reason] += int((reasons == code).sum())
        with atomic_path(work / f"{names[fi]}.decisions.npz") as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, reasons=reasons, para_drop=para_drop)
    del decider.lsh, decider.sigs

    writes = [Task(f"write_{n}", (f, work / f"{n}.decisions.npz", out / n), outputs=(out / n,))
              for n, (_s, f) in zip(names, inputs)]
    outputs = []
    written = run.run_tasks(writes, write_file, desc="dedup: write", unit="file")
    for (s, _f), (task, info) in zip(inputs, written):
        counts[s]["kept"] += info["kept"]
        counts[s]["paragraphs_removed"] += info["paragraphs_removed"]
        if info["written"]:
            outputs.append(task.outputs[0])
    per_source = plain(counts)
    for c in per_source.values():
        c["removed_share"] = round(1 - c["kept"] / c["documents"], 4) if c["documents"] else 0.0
    total = sum(c["documents"] for c in per_source.values())
    kept = sum(c["kept"] for c in per_source.values())
    if not kept:
        raise StageError("dedup kept no document: check the inputs (are they all empty?)")
    summary = {"documents": total, "kept": kept, "removed": total - kept,
               **{r: sum(c[r] for c in per_source.values()) for r in REASONS.values()},
               "files": len(outputs), "per_source": per_source, "seconds": run.seconds()}
    examples = example_texts(decider.examples, inputs)
    return run.finish(summary, outputs, extra={"examples": examples,
                                               "keep_rule": "wikipedia, then sources in ingest order"})


def example_texts(examples: list[dict], inputs: list[tuple[str, Path]], chars: int = 300) -> list[dict]:
    """The removed pairs with the start of both texts (each file read once)."""
    wanted: dict[int, set[int]] = {}
    for e in examples:
        for fi, d in (e["removed"], e["kept"]):
            wanted.setdefault(fi, set()).add(d)
    texts = {}
    for fi, docs in wanted.items():
        for d, doc in enumerate(documents(read_utf8(inputs[fi][1]))):
            if d in docs:
                texts[(fi, d)] = " ".join(doc)[:chars]
    return [{"reason": e["reason"], "similarity": e["similarity"],
             "removed_source": inputs[e["removed"][0]][0], "removed": texts[tuple(e["removed"])],
             "kept_source": inputs[e["kept"][0]][0], "kept": texts[tuple(e["kept"])]}
            for e in examples]


@click.command("dedup")
@click.option("--threshold", type=click.FloatRange(0, 1, min_open=True), default=THRESHOLD,
              show_default=True, help="Estimated Jaccard similarity (word 3-grams) at which a "
                                      "document counts as a near-copy of a kept one.")
@click.option("--num-perm", type=click.IntRange(min=16), default=NUM_PERM, show_default=True,
              help="MinHash permutations (more: a finer similarity estimate, slower).")
@click.option("--min-paragraph-chars", type=click.IntRange(min=1), default=MIN_PARAGRAPH_CHARS,
              show_default=True, help="Paragraphs at least this long are removed when repeated.")
@click.option("--wikipedia/--no-wikipedia", default=None,
              help="Include formatted/ [default: when format has finished].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/deduped].")
@force_option
@click.pass_obj
def command(g, threshold, num_perm, min_paragraph_chars, wikipedia, output, force):
    """Remove exact and near-duplicate documents across Wikipedia and the ingested sources.

    Keep rule: Wikipedia first, then the sources in the order ingest was given them.
    Writes deduped/SOURCE__FILE.txt; split reads it instead of formatted/.
    """
    dedup(**g.kwargs(), output=output, force=force, wikipedia=wikipedia, threshold=threshold,
          num_perm=num_perm, min_paragraph_chars=min_paragraph_chars)
