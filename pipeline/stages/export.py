"""`pipeline export`: the corpus out to other tools, as Parquet that Hugging Face `datasets` loads.

Usage:
    pipeline --lang uk export --format parquet        # -> DATA_DIR/uk/export/parquet/
    pipeline --lang uk export --format tokens         # -> DATA_DIR/uk/export/tokens/ (newest packed encode)
    pipeline --lang uk export --format tokens --input data/uk/hdf5_..._packed --output /tmp/tok
    export(data_dir="data", lang="uk", format="parquet", workers=2)   # from Python; the summary

`--format parquet`: one cleaned article a row (id, title, url, language, source, text,
sentences, split), the documents of the filtered corpus as shard placed them, each once. Their
articles are found again through the stages' outputs (pipeline/text/lineage.py): extracted/,
formatted/ (deduped/, ingested/ where dedup ran), sentences/, filtered/ and sharded/ under the
language's folder (or `--input DIR`, a folder holding them). A task is a run of consecutive
filtered files (about --file-mb of text) written to one Parquet file per split.

`--format tokens`: the rows of a packed encode (`encode --pack`; `--input` its hdf5_... folder,
default the newest finished one of the language), unmasked (pipeline/encoding/token_rows.py):
input_ids, attention_mask, special_tokens_mask, len, and doc_starts where the files have it
(packed layout 2); one Parquet file per HDF5 file, and the tokenizer beside them (tokenizer/,
what AutoTokenizer.from_pretrained loads).

Either way: `data/train-00000-of-0000N.parquet` (and test-...), zstd, row groups of a bounded
size written as they fill (memory stays flat), a dataset card README.md whose YAML header
`datasets` reads (pipeline/core/dataset_card.py), and manifest.json last. Tasks write under
.stage/ and the finished files are moved into data/ only at the end, so a reader never finds
half a dataset; the same bytes for any --workers.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import click
import numpy as np

from common.atomic import atomic_path, write_text_atomic
from pipeline.core.dataset_card import articles_card, config_name, dump_of, tokens_card, web_corpora
from pipeline.core.errors import StageError
from pipeline.core.inputs import flat_name, list_text_files
from pipeline.core.manifest import MANIFEST, file_sha256, fingerprint_inputs, read_manifest, require_stage_output
from pipeline.core.options import force_option
from pipeline.core.parquet import ParquetParts, require_pyarrow
from pipeline.core.registry import BY_NAME, lang_dir, stage_dir, validate_lang
from pipeline.core.runner import STATE_DIR, StageRun, Task
from pipeline.core.sources import SEP, WIKIPEDIA, source_of
from pipeline.encoding.hdf5_format import PACKED_SUFFIX, is_packed
from pipeline.encoding.token_rows import DOC_STARTS, has_doc_starts, token_blocks
from pipeline.text.documents import copies_of, doc_bytes, doc_hash, documents, read_utf8
from pipeline.text.lineage import FileChain, chain_documents
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer

FORMATS = ("parquet", "tokens")
FILE_MB = 128                 # filtered text per Parquet file of articles (one task)
GROUP_BYTES = 16 << 20        # bytes of a row group before it is written
GROUP_TOKENS = 1 << 22        # tokens of a row group of token rows
SPLITS = {"training": "train", "test": "test"}   # shard's split -> the dataset's split
TEXT_STAGES = ("extract", "format", "split", "filter", "shard")


def export(data_dir="data", lang="hu", workers=None, format="parquet", input=None, output=None,
           force=False, file_mb: float = FILE_MB) -> dict:
    """Export the corpus of `lang` (see the module doc); returns the summary."""
    lang = validate_lang(lang)
    if format not in FORMATS:
        raise StageError(f"--format {format!r} is not a format of export: use parquet (articles) or "
                         "tokens (token rows of a packed encode)")
    require_pyarrow()
    out = Path(output) if output is not None else stage_dir(data_dir, lang, "export") / format
    if format == "parquet":
        return _export_articles(data_dir, lang, workers, input, out, force, file_mb)
    return _export_tokens(data_dir, lang, workers, input, out, force)


# -- articles ------------------------------------------------------------------------------

def _article_schema():
    pa, _ = require_pyarrow()
    return pa.schema([("id", pa.string()), ("title", pa.string()), ("url", pa.string()),
                      ("language", pa.string()), ("source", pa.string()), ("text", pa.string()),
                      ("sentences", pa.list_(pa.string())), ("split", pa.string())])


def _text_folders(data_dir, lang: str, input) -> tuple[Path, dict[str, Path], dict[str, dict]]:
    """The language folder, its stage folders and their manifests (StageError: what to run)."""
    root = Path(input) if input is not None else lang_dir(data_dir, lang)
    folders, manifests = {}, {}
    for stage in TEXT_STAGES:
        folders[stage] = root / BY_NAME[stage].output
        manifests[stage] = require_stage_output(folders[stage], stage)
    for stage in ("dedup", "ingest"):
        folders[stage] = root / BY_NAME[stage].output
        manifests[stage] = read_manifest(folders[stage])
    download = read_manifest(root / BY_NAME["download"].output)
    if download:
        manifests["download"] = download
    return root, folders, manifests


def _chains(folders: dict[str, Path]) -> list[FileChain]:
    """One FileChain per filtered file (lineage.py's walk through the stages)."""
    extracted_root = folders["extract"]
    extracted = {flat_name(extracted_root, f, strip_suffixes=(".json", ".jsonl", ".txt")): f
                 for f in sorted(extracted_root.rglob("*")) if f.is_file() and f.name != MANIFEST
                 and not any(p.startswith(".") for p in f.relative_to(extracted_root).parts)}
    chains = []
    for f in list_text_files(folders["filter"]):
        name, source = f.name, source_of(f.name)
        deduped = SEP in name
        plain = name.split(SEP, 1)[1] if deduped and source == WIKIPEDIA else name
        wiki = source == WIKIPEDIA
        chains.append(FileChain(
            filtered=f, sentences=folders["split"] / name,
            paragraphs=(folders["dedup"] if deduped else folders["format"]) / name, source=source,
            formatted=folders["format"] / plain if deduped and wiki else None,
            extracted=extracted.get(plain) if wiki else None,
            ingested=folders["ingest"] / name if not wiki else None))
    return chains


def _test_hashes(folders: dict[str, Path], shard_manifest: dict, work: Path) -> Path:
    """The hashes of the documents of the test shards (few: held out), sorted, in a file."""
    hashes = []
    for row in shard_manifest.get("shards", []):
        if row.get("split") == "test":
            hashes += [doc_hash(doc_bytes(d), 0) for d in documents(read_utf8(folders["shard"] / row["file"]))]
    path = work / "test_hashes.npy"
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.unique(np.asarray(hashes, dtype=np.uint64)))
    return path


def articles_task(job: dict) -> dict:
    """One task: the documents of a run of filtered files, a Parquet file per split."""
    test = np.load(job["test_hashes"])
    weights, seed = job["weights"], job["seed"]
    counts = {"training": 0, "test": 0, "dropped_by_weight": 0, "text_bytes": 0, "sentences": 0}
    schema = _article_schema()
    with ParquetParts(job["outputs"]["training"], schema, GROUP_BYTES) as train, \
            ParquetParts(job["outputs"]["test"], schema, GROUP_BYTES) as held_out:
        for chain in job["chains"]:
            weight = weights.get(chain.source, 1.0)
            for doc in chain_documents(chain, job["lang"]):
                data = doc_bytes(doc.sentences)
                h = np.uint64(doc_hash(data, 0))
                at = np.searchsorted(test, h)
                split = "test" if at < len(test) and test[at] == h else "training"
                if split == "training" and weight != 1.0 and copies_of(data, seed, weight) == 0:
                    counts["dropped_by_weight"] += 1
                    continue
                row = {"id": doc.id, "title": doc.title, "url": doc.url, "language": job["lang"],
                       "source": doc.source, "text": doc.text, "sentences": doc.sentences, "split": split}
                (held_out if split == "test" else train).add(row, nbytes=2 * len(data))
                counts[split] += 1
                counts["text_bytes"] += len(doc.text.encode("utf-8"))
                counts["sentences"] += len(doc.sentences)
    return counts


def _groups(chains: list[FileChain], file_mb: float) -> list[list[FileChain]]:
    """Consecutive chains, about `file_mb` of filtered text each (sizes only: any --workers)."""
    groups, size, limit = [[]], 0, file_mb * 1e6
    for chain in chains:
        if groups[-1] and size + chain.filtered.stat().st_size > limit:
            groups.append([])
            size = 0
        groups[-1].append(chain)
        size += chain.filtered.stat().st_size
    return groups


def _export_articles(data_dir, lang, workers, input, out: Path, force: bool, file_mb: float) -> dict:
    if file_mb <= 0:
        raise StageError(f"--file-mb must be above 0 (got {file_mb})")
    root, folders, manifests = _text_folders(data_dir, lang, input)
    shard_opts = manifests["shard"].get("options", {})
    watched = [folders[s] for s in (*TEXT_STAGES, "dedup", "ingest") if manifests.get(s)]
    run = StageRun("export", out, {"format": "parquet", "lang": lang, "file_mb": file_mb},
                   fingerprint_inputs(watched), force=force, workers=workers,
                   expected_bytes=manifests["filter"]["summary"].get("output_bytes", 0))
    if run.complete:
        return run.skip()
    work = run.work_dir
    groups = _groups(_chains(folders), file_mb)
    base = {"lang": lang, "test_hashes": str(_test_hashes(folders, manifests["shard"], work)),
            "weights": shard_opts.get("weights") or {}, "seed": shard_opts.get("seed", 0)}
    tasks = []
    for k, group in enumerate(groups):
        paths = {s: work / f"{s}-{k:05d}.parquet" for s in SPLITS}
        tasks.append(Task(f"part_{k:05d}", {**base, "chains": group, "outputs": paths},
                          outputs=tuple(paths.values())))
    totals = {"training": 0, "test": 0, "dropped_by_weight": 0, "text_bytes": 0, "sentences": 0}
    for _task, info in run.run_tasks(tasks, articles_task, desc="export", unit="part"):
        for k in totals:
            totals[k] += info[k]
    if not totals["training"] + totals["test"]:
        raise StageError(f"{folders['filter']} holds no document to export: check the filter stage")
    files = _publish(run, [{s: t.arg["outputs"][s] for s in SPLITS} for t in tasks])
    summary = {"documents": totals["training"] + totals["test"], "training_documents": totals["training"],
               "test_documents": totals["test"], "dropped_by_weight": totals["dropped_by_weight"],
               "sentences": totals["sentences"], "text_bytes": totals["text_bytes"],
               "files": len(files), "seconds": run.seconds()}
    sums, config = _named_config(lang, dump_of(manifests)[1], files)
    card = articles_card(lang, summary, manifests, splits=_splits_of(files), config=config)
    write_text_atomic(out / "README.md", lambda fh: fh.write(card))
    return run.finish(summary, outputs=[*files, out / "README.md"], checksums=sums)


# -- tokens --------------------------------------------------------------------------------

def newest_packed_encode(data_dir, lang: str) -> Path:
    """The finished packed encode of `lang` written last (its manifest's time)."""
    folder = lang_dir(data_dir, lang)
    found = [p for p in folder.glob("hdf5_*") if p.is_dir() and (p / MANIFEST).is_file()
             and ((read_manifest(p).get("options") or {}).get("pack") or p.name.endswith(PACKED_SUFFIX))]
    if not found:
        raise StageError(f"{folder} holds no finished packed encode (hdf5_..._packed): run "
                         f"`pipeline --lang {lang} encode --pack` first, or pass --input an encode folder")
    return max(found, key=lambda p: ((p / MANIFEST).stat().st_mtime_ns, p.name))


def tokens_task(job: dict) -> dict:
    """One task: one HDF5 file's rows, unmasked, into one Parquet file."""
    pa, _ = require_pyarrow()
    schema = _token_schema(job["doc_starts"])
    rows = max(1, GROUP_TOKENS // job["seq_len"])
    tokens = 0
    with ParquetParts(job["output"], schema) as out:
        for block in token_blocks(Path(job["file"]), job["special_ids"], rows=rows):
            offsets = pa.array(block["offsets"], type=pa.int32())
            cols = {k: pa.ListArray.from_arrays(offsets, pa.array(block[k])) for k in schema.names
                    if k != "len"}
            cols["len"] = pa.array(block["len"])
            out.write_table(pa.table(cols, schema=schema))
            tokens += int(block["len"].sum())
    return {"rows": out.rows, "tokens": tokens}


def _token_schema(doc_starts: bool):
    pa, _ = require_pyarrow()
    fields = [("input_ids", pa.list_(pa.int32())), ("attention_mask", pa.list_(pa.int8())),
              ("special_tokens_mask", pa.list_(pa.int8())), ("len", pa.int32())]
    return pa.schema(fields + ([(DOC_STARTS, pa.list_(pa.int8()))] if doc_starts else []))


def _encode_input(data_dir, lang: str, input) -> tuple[Path, dict, list[Path]]:
    root = Path(input) if input is not None else newest_packed_encode(data_dir, lang)
    if not (root / MANIFEST).is_file() and (root.parent / MANIFEST).is_file():
        root = root.parent     # its {lang}wiki/ folder was given
    manifest = require_stage_output(root, "encode")
    if manifest.get("stage") != "encode":
        raise StageError(f"{root} is not an encode folder (its manifest is {manifest.get('stage')!r}'s): "
                         "pass --input an hdf5_... folder")
    files = [root / o["path"] for o in manifest.get("outputs", []) if o["path"].endswith(".hdf5")]
    if not files or not all(f.is_file() for f in files):
        raise StageError(f"{root}: the encode's HDF5 files are missing: rerun `pipeline encode`")
    if not (manifest.get("options") or {}).get("pack") and not is_packed(files[0]):
        raise StageError(f"{root} holds sentence pairs, not packed rows: token rows come from "
                         f"`pipeline --lang {lang} encode --pack` (no next-sentence pairs)")
    return root, manifest, files


def _tokenizer_of(manifest: dict, root: Path):
    recorded = manifest.get("tokenizer") or {}
    try:
        spec = load_tokenizer(manifest["vocab"])
    except (VocabError, KeyError, OSError) as exc:
        raise StageError(f"{root}: the tokenizer its encode used cannot be read ({exc}): "
                         "rerun `pipeline encode`") from None
    if recorded.get("fingerprint") and spec.fingerprint != recorded["fingerprint"]:
        raise StageError(f"{root}: the vocabulary at {manifest['vocab']} changed since this encode: "
                         "rerun `pipeline encode --force` (with --pack), then export")
    return spec


def _export_tokens(data_dir, lang, workers, input, out: Path, force: bool) -> dict:
    root, manifest, files = _encode_input(data_dir, lang, input)
    spec = _tokenizer_of(manifest, root)
    run = StageRun("export", out, {"format": "tokens", "lang": lang, "encode": root.name},
                   fingerprint_inputs([root]), force=force, workers=workers,
                   expected_bytes=sum(f.stat().st_size for f in files))
    if run.complete:
        return run.skip()
    seq_len = manifest["options"]["max_seq"]
    special = sorted({i for i in (spec.cls_id, spec.sep_id, spec.pad_id, spec.mask_id, spec.unk_id)
                      if i is not None})
    doc_starts = has_doc_starts(files[0])
    tasks = []
    for f in files:
        split = "test" if "_test_" in f.name else "training"
        job = {"file": str(f), "output": run.work_dir / f"{split}-{f.stem}.parquet", "seq_len": seq_len,
               "special_ids": special, "doc_starts": doc_starts, "split": split}
        tasks.append(Task(f.name, job, outputs=(job["output"],)))
    rows = {"training": 0, "test": 0}
    tokens = 0
    for task, info in run.run_tasks(tasks, tokens_task, desc="export", unit="file"):
        rows[task.arg["split"]] += info["rows"]
        tokens += info["tokens"]
    parts = [{t.arg["split"]: t.arg["output"]} for t in sorted(tasks, key=lambda t: _shard_key(t.arg["file"]))]
    tok_dir = run.output / STATE_DIR / "publish" / "tokenizer"
    shutil.rmtree(tok_dir, ignore_errors=True)
    spec.save(tok_dir, model_max_length=seq_len, tokenizer_json=True)   # as its kind writes it
    files_out = _publish(run, parts, extra_dirs=("tokenizer",))
    summary = {"rows": rows["training"] + rows["test"], "training_rows": rows["training"],
               "test_rows": rows["test"], "tokens": tokens, "seq_len": seq_len,
               "doc_starts": doc_starts, "files": len(files_out), "encode": str(root),
               "seconds": run.seconds()}
    dump = {stage: read_manifest(stage_dir(data_dir, lang, stage)) or {} for stage in ("extract", "download", "ingest")}
    sums, config = _named_config(lang, dump_of(dump)[1], files_out)
    card = tokens_card(lang, summary, manifest, splits=_splits_of(files_out), config=config, web=web_corpora(dump))
    write_text_atomic(out / "README.md", lambda fh: fh.write(card))
    tok_files = sorted(p for p in (out / "tokenizer").iterdir() if p.is_file())
    return run.finish(summary, outputs=[*files_out, *tok_files, out / "README.md"], checksums=sums)


def _shard_key(path: str) -> tuple:
    stem = Path(path).stem
    tail = stem.rsplit("_", 1)
    return (stem.rsplit("_", 2)[0], int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else 0, stem)


# -- publishing ----------------------------------------------------------------------------

def _publish(run: StageRun, parts: list[dict[str, Path]], extra_dirs: tuple[str, ...] = ()) -> list[Path]:
    """Move the tasks' files (in task order) into data/ as SPLIT-0000K-of-0000N.parquet, through
    a folder under .stage/ renamed whole, with the `extra_dirs` already there; the final paths."""
    staged = run.output / STATE_DIR / "publish"
    shutil.rmtree(staged / "data", ignore_errors=True)
    (staged / "data").mkdir(parents=True)
    final = []
    for split, name in SPLITS.items():
        mine = [p[split] for p in parts if split in p and Path(p[split]).is_file()]
        for k, src in enumerate(mine):
            dst = f"{name}-{k:05d}-of-{len(mine):05d}.parquet"
            os.replace(src, staged / "data" / dst)
            final.append(run.output / "data" / dst)
    for folder in ("data", *extra_dirs):
        shutil.rmtree(run.output / folder, ignore_errors=True)
        os.replace(staged / folder, run.output / folder)
    return final


def _named_config(lang: str, date: str, files: list[Path]) -> tuple[dict[Path, str], str]:
    """The data files' sha256 (the manifest reuses them) and the card's config name, which
    carries a fingerprint of them: `datasets` caches `load_dataset(FOLDER)` by the folder's and
    the config's names, so every corpus needs a name of its own (pipeline/core/dataset_card.py)."""
    sums = {f: file_sha256(f) for f in files}
    digest = hashlib.sha256("".join(f"{f.name}:{sums[f]}\n" for f in sorted(files)).encode())
    return sums, config_name(lang, date, digest.hexdigest()[:10])


def _splits_of(files: list[Path]) -> list[str]:
    return [name for name in SPLITS.values() if any(f.name.startswith(name + "-") for f in files)]


@click.command("export")
@click.option("--format", "format_", type=click.Choice(FORMATS), default="parquet", show_default=True,
              help="parquet: one cleaned article a row; tokens: unmasked token rows of a packed encode.")
@click.option("--input", "input_", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="parquet: the language's folder of stage outputs [default: DATA_DIR/LANG]; tokens: "
                   "an encode --pack folder [default: the newest of the language].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/export/FORMAT].")
@click.option("--file-mb", type=click.FloatRange(min=0, min_open=True), default=FILE_MB,
              show_default=True, help="parquet: filtered text per Parquet file (one task).")
@force_option
@click.pass_obj
def command(g, format_, input_, output, file_mb, force):
    """Export the corpus as Parquet that Hugging Face datasets loads, with a dataset card.

    parquet: id, title, url, language, source, text, sentences, split. tokens: input_ids,
    attention_mask, special_tokens_mask, len (unmasked), the tokenizer beside them.
    """
    export(**g.kwargs(), format=format_, input=input_, output=output, force=force, file_mb=file_mb)
