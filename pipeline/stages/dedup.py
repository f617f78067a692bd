"""`pipeline dedup`: every source of the corpus together, exact and near-duplicate copies removed.

Reads Wikipedia's formatted/ (when finished; `--no-wikipedia` leaves it out) and ingested/
(when finished) and writes DATA_DIR/LANG/deduped/SOURCE__FILE.txt in the same format, which
split reads instead of formatted/ once it exists.

The keep rule: Wikipedia first, then the sources in the order they were given to ingest, inside
a source file and document order; a document is removed when an earlier kept one has the same
normalised text (`exact`), or shares a band of their MinHash signatures (word 3-grams,
datasketch; MinHashLSH's bands for --threshold) and has an estimated Jaccard similarity of at
least --threshold (`near`); a paragraph of --min-paragraph-chars or more that an earlier kept
document holds is removed, and a document left without such a paragraph goes (`paragraphs`).
So Wikipedia's copy wins over a web mirror, and the first-named source's copy over a later one's.

Four steps, each resumable (a marker a task, files renamed into place), memory bounded by
--memory-mb and a file, never by the corpus:
1. hash, a task a file: each document's signature, the keys of its bands, the hash of its text
   and of its long paragraphs, on disk (pipeline/text/dedup_fingerprints.py);
2. buckets, a task a range of keys: those rows of every file sorted together; equal texts,
   signatures and paragraphs, and candidates checked on their signatures, become records of
   "what may be a copy of what" (pipeline/text/dedup_buckets.py);
3. decide, one ordered pass in this process: the keep rule over the records, a few bits a
   document (pipeline/text/dedup_sweep.py);
4. write, a task a file: the kept documents.
The held-out test documents are chosen after this (by shard), so no near-copy of a test
document stays in training.

Usage:
    pipeline --lang hu dedup                       # formatted/ + ingested/ -> deduped/
    pipeline --lang hu dedup --threshold 0.8 --no-wikipedia --memory-mb 1000
    dedup(data_dir="data", lang="hu", workers=2)   # from Python; the summary
"""
from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import click
import numpy as np

from common.atomic import atomic_open
from pipeline.core.errors import StageError
from pipeline.core.inputs import list_text_files, resolve_output
from pipeline.core.jobs import default_workers
from pipeline.core.manifest import fingerprint_inputs, read_manifest
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir
from pipeline.core.runner import StageRun, Task
from pipeline.core.sources import WIKIPEDIA, plain, source_file_name, source_of
from pipeline.text.dedup_buckets import bucket_task, more_path, plan, records_path
from pipeline.text.dedup_fingerprints import fingerprint_file, outputs
from pipeline.text.dedup_sweep import KEEP, REASONS, sweep_files
from pipeline.text.documents import read_documents
from pipeline.text.near_dups import NUM_PERM, lsh_bands

THRESHOLD = 0.5
MIN_PARAGRAPH_CHARS = 40    # shorter paragraphs ("References", a date) repeat without being copies
MEMORY_MB = 128             # what one bucket task may hold of its sorted rows: a worker peaks near 100 MB more


def write_file(job: tuple[Path, Path, Path]) -> dict:
    """Step 4 for one file: its kept documents (without removed paragraphs) into `dst`, a
    document at a time."""
    src, decisions, dst = job
    with np.load(decisions) as data:
        reasons, para_drop = data["reasons"], data["para_drop"]
    kept = int((reasons == KEEP).sum())
    paragraphs_removed = int(para_drop.sum())   # only a kept document's paragraphs are marked
    if kept:
        with atomic_open(dst) as fh:
            p, sep = 0, ""
            for d, doc in enumerate(read_documents(src)):
                drop = para_drop[p:p + len(doc)]
                p += len(doc)
                if reasons[d] == KEEP:
                    fh.write(sep + "\n".join(line for line, gone in zip(doc, drop) if not gone))
                    sep = "\n\n"
            fh.write("\n")
    return {"kept": kept, "paragraphs_removed": paragraphs_removed, "written": bool(kept)}


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
          threshold=THRESHOLD, num_perm=NUM_PERM, min_paragraph_chars=MIN_PARAGRAPH_CHARS,
          memory_mb=MEMORY_MB) -> dict:
    """Deduplicate every source together into deduped/; return the summary dict."""
    if not 0 < threshold <= 1:
        raise StageError(f"--threshold is a Jaccard similarity above 0 and at most 1 (got {threshold})")
    if not memory_mb > 0:
        raise StageError(f"--memory-mb must be above 0 (got {memory_mb})")
    inputs = dedup_inputs(data_dir, lang, wikipedia)
    out = resolve_output(data_dir, lang, "dedup", output)
    options = {"threshold": threshold, "num_perm": num_perm, "min_paragraph_chars": min_paragraph_chars,
               "sources": sorted({s for s, _ in inputs})}
    input_bytes = sum(f.stat().st_size for _, f in inputs)
    # datasketch is imported here, before the stage writes anything: a disk failing later names a file of ours
    bands, rows = lsh_bands(threshold, num_perm)
    # the output (at most the input) and the work folder's fingerprints (about the input's size)
    run = StageRun("dedup", out, options, fingerprint_inputs(sorted({f.parent for _, f in inputs})),
                   force=force, workers=workers, expected_bytes=2 * input_bytes)
    if run.complete:
        return run.skip()
    names = [source_file_name(s, f.name) for s, f in inputs]
    stems = [str(run.work_dir / n) for n in names]
    hasher = functools.partial(fingerprint_file, num_perm=num_perm, min_chars=min_paragraph_chars,
                               bands=bands, rows=rows)
    tasks = [Task(f"hash_{n}", (f, stem), outputs=outputs(stem)) for n, (_s, f), stem in zip(names, inputs, stems)]
    counts: dict[str, Counter] = {}
    sizes = []
    for (s, _f), (_t, info) in zip(inputs, run.run_tasks(tasks, hasher, desc="dedup: hash", unit="file")):
        counts.setdefault(s, Counter())["documents"] += info["documents"]
        sizes.append((info["documents"], info["paragraphs"]))
    doc_offsets, para_offsets = (np.concatenate([[0], np.cumsum(c, dtype=np.int64)]) for c in zip(*sizes))

    cuts, row_ranges = plan(stems, int(memory_mb * 1e6), default_workers(workers))
    bucket_stems = [str(run.work_dir / f"bucket_{lo:04d}_{hi:04d}") for lo, hi in zip(cuts, cuts[1:])]
    scan = functools.partial(bucket_task, stems=stems, doc_offsets=doc_offsets, para_offsets=para_offsets,
                             threshold=threshold, num_perm=num_perm, rows=rows)
    buckets = [Task(f"bucket_{lo}_{hi}", (row_ranges[:, :, k:k + 2], b), outputs=(records_path(b), more_path(b)))
               for k, (lo, hi, b) in enumerate(zip(cuts, cuts[1:], bucket_stems))]
    for _ in run.run_tasks(buckets, scan, desc="dedup: buckets", unit="bucket"):
        pass

    decisions = [run.work_dir / f"{n}.decisions.npz" for n in names]
    decided = run.once("decide", lambda: sweep_files(
        [(s, stem, d) for (s, _f), stem, d in zip(inputs, stems, decisions)], doc_offsets, para_offsets,
        bucket_stems, threshold, num_perm, rows))
    for (s, _f), file_counts in zip(inputs, decided["counts"]):
        counts[s].update(file_counts)

    writes = [Task(f"write_{n}", (f, d, out / n), outputs=(out / n,))
              for n, (_s, f), d in zip(names, inputs, decisions)]
    outputs_written = []
    for (s, _f), (task, info) in zip(inputs, run.run_tasks(writes, write_file, desc="dedup: write", unit="file")):
        counts[s]["kept"] += info["kept"]
        counts[s]["paragraphs_removed"] += info["paragraphs_removed"]
        if info["written"]:
            outputs_written.append(task.outputs[0])
    per_source = plain(counts)
    for c in per_source.values():
        c["removed_share"] = round(1 - c["kept"] / c["documents"], 4) if c["documents"] else 0.0
    total = sum(c["documents"] for c in per_source.values())
    kept = sum(c["kept"] for c in per_source.values())
    if not kept:
        raise StageError("dedup kept no document: check the inputs (are they all empty?)")
    summary = {"documents": total, "kept": kept, "removed": total - kept,
               **{r: sum(c[r] for c in per_source.values()) for r in REASONS.values()},
               "files": len(outputs_written), "per_source": per_source, "seconds": run.seconds()}
    examples = [{**e, "removed": local(e["removed"], doc_offsets), "kept": local(e["kept"], doc_offsets)}
                for e in decided["examples"]]
    return run.finish(summary, outputs_written,
                      extra={"examples": example_texts(examples, inputs),
                             "keep_rule": "wikipedia, then sources in ingest order"})


def local(number: int, doc_offsets: np.ndarray) -> tuple[int, int]:
    """(file, document) of a global document number."""
    fi = int(np.searchsorted(doc_offsets, number, side="right")) - 1
    return fi, int(number - doc_offsets[fi])


def example_texts(examples: list[dict], inputs: list[tuple[str, Path]], chars: int = 300) -> list[dict]:
    """The removed pairs with the start of both texts (each file read once)."""
    wanted: dict[int, set[int]] = {}
    for e in examples:
        for fi, d in (e["removed"], e["kept"]):
            wanted.setdefault(fi, set()).add(d)
    texts = {}
    for fi, docs in wanted.items():
        for d, doc in enumerate(read_documents(inputs[fi][1])):
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
@click.option("--memory-mb", type=click.FloatRange(min=0, min_open=True), default=MEMORY_MB, show_default=True,
              help="Memory one worker may hold for a bucket of hashes (more buckets when the corpus "
                   "is larger; the result is the same).")
@click.option("--wikipedia/--no-wikipedia", default=None,
              help="Include formatted/ [default: when format has finished].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/deduped].")
@force_option
@click.pass_obj
def command(g, threshold, num_perm, min_paragraph_chars, memory_mb, wikipedia, output, force):
    """Remove exact and near-duplicate documents across Wikipedia and the ingested sources.

    Keep rule: Wikipedia first, then the sources in the order ingest was given them.
    Writes deduped/SOURCE__FILE.txt; split reads it instead of formatted/.
    """
    dedup(**g.kwargs(), output=output, force=force, wikipedia=wikipedia, threshold=threshold,
          num_perm=num_perm, min_paragraph_chars=min_paragraph_chars, memory_mb=memory_mb)
