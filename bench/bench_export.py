"""What `pipeline export` costs beside the pipeline that made the corpus: seconds and peak RSS of
`export --format parquet` and `--format tokens`, each in a fresh process, against the seconds of
the pipeline's stages on the same dump.

The pipeline here is extract, format, split, filter, shard, vocab (16k) and one packed encode
(128 tokens, dupe factor 1: what --format tokens reads), on --workers; fewer stages than
bench_scale.py's full run (which adds encode 128/20 and 512/80), so the share export takes of it
is an upper bound. Dumps: the truncated uk and vi dumps of ../shared/data as they are, and
bench/scale_dumps.py's dumps of N MB (`--sizes`; filter with --keep-repeats there, as
bench_scale.py runs it, since those dumps repeat their pages).

`--tile FILE` measures instead what one token-export task holds against the size of its file: the
packed HDF5 FILE's rows repeated 64 to 512 times into one file each, exported by one task in a
fresh process (rows, row groups, file MB, peak RSS).

Usage:
    .venv/bin/python bench/bench_export.py                                 # uk and vi of ../shared/data
    nice -n 10 .venv/bin/python bench/bench_export.py --sizes 1024 2048 --langs uk --work /tmp/w2b_export
    .venv/bin/python bench/bench_export.py --tile data/hu/hdf5_..._packed/huwiki/huwiki_training_0.hdf5
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
STAGES = ("extract", "format", "split", "filter", "shard", "vocab", "encode --pack")


def child_pipeline(spec: dict) -> dict:
    """The pipeline's stages on the dump; seconds per stage."""
    from pipeline.stages.download import download
    from pipeline.stages.encode import encode
    from pipeline.stages.extract import extract
    from pipeline.stages.filter import filter_documents
    from pipeline.stages.format import format_corpus
    from pipeline.stages.shard import shard
    from pipeline.stages.split import split
    from pipeline.stages.vocab import build_vocab

    common = {"data_dir": spec["data"], "lang": spec["lang"], "workers": spec["workers"]}
    calls = {
        "extract": lambda: extract(**common),
        "format": lambda: format_corpus(**common),
        "split": lambda: split(**common),
        "filter": lambda: filter_documents(**common, drop_repeats=not spec["scaled"]),
        "shard": lambda: shard(**common),
        "vocab": lambda: build_vocab(**common, vocab_size=16000),
        "encode --pack": lambda: encode(**common, max_seq=128, max_pred=40, masked_lm_prob=0.3,
                                        dupe_factor=1, pack=True),
    }
    download(data_dir=spec["data"], lang=spec["lang"], dump=spec["dump"])
    seconds, summaries = {}, {}
    for name in STAGES:
        t = time.perf_counter()
        summaries[name] = calls[name]()
        seconds[name] = time.perf_counter() - t
    return {"seconds": seconds, "xml_mb": summaries["extract"]["xml_bytes"] / 1e6,
            "text_mb": summaries["filter"]["output_bytes"] / 1e6}


def child_export(spec: dict) -> dict:
    """One export format; its seconds and peak RSS (this process, and its pool's workers)."""
    from pipeline.stages.export import export

    t = time.perf_counter()
    summary = export(data_dir=spec["data"], lang=spec["lang"], workers=spec["workers"], format=spec["format"])
    seconds = time.perf_counter() - t
    out = Path(spec["data"]) / spec["lang"] / "export" / spec["format"]
    return {"seconds": seconds, "summary": summary,
            "output_mb": sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6,
            "rss_main": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_worker": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def child_tile(spec: dict) -> dict:
    """One token-export task on one file; its rows, row groups and peak RSS."""
    import pyarrow.parquet as pq

    from pipeline.encoding.hdf5_format import check_file
    from pipeline.encoding.token_rows import has_doc_starts
    from pipeline.stages.export import tokens_task

    out = Path(spec["file"]).with_suffix(".parquet")
    res = tokens_task({"file": spec["file"], "output": out, "seq_len": check_file(spec["file"]).seq_len,
                       "special_ids": [0, 1, 2, 3, 4], "doc_starts": has_doc_starts(Path(spec["file"])),
                       "split": "training"})
    groups = pq.ParquetFile(out).num_row_groups
    out.unlink()
    return {"rows": res["rows"], "groups": groups,
            "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def tile_table(source: Path, work: Path, times=(1, 64, 128, 256, 512)) -> None:
    """The token export's peak RSS against its file's size (see the module doc)."""
    import h5py
    import numpy as np

    print("| copies | rows | row groups | file MB | peak RSS MB |\n|---|---|---|---|---|")
    for n in times:
        path = work / f"tile_x{n}.hdf5"
        with h5py.File(source) as src, h5py.File(path, "w") as dst:
            dst.attrs.update(dict(src.attrs))
            for key in src:
                dst.create_dataset(key, data=np.concatenate([src[key][()]] * n))
        res = in_child("tile", {"file": str(path)})
        print(f"| {n} | {res['rows']:,} | {res['groups']} | {path.stat().st_size / 1e6:,.0f} | {res['rss']:,.0f} |",
              flush=True)
        path.unlink()


def in_child(kind: str, spec: dict) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child", kind, json.dumps(spec)],
                         capture_output=True, text=True, cwd=ROOT)
    if res.returncode:
        raise SystemExit(f"Error: {kind} {spec} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def dumps(args) -> list[tuple[str, str, Path, bool]]:
    """(lang, label, dump, scaled) of the runs asked."""
    out = []
    for lang in args.langs:
        if args.sizes:
            from scale_dumps import build

            out += [(lang, f"{mb} MB", build(args.work, lang, mb), True) for mb in args.sizes]
        else:
            out.append((lang, "shared", ROOT.parent / "shared" / "data" / f"{lang}wiki.xml.xz", False))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--langs", nargs="+", default=["uk", "vi"], choices=["uk", "vi"])
    ap.add_argument("--sizes", type=int, nargs="*", default=[],
                    help="MB of XML (scale_dumps.py); none: the shared dumps")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "wiki2bert_bench_export")
    ap.add_argument("--tile", type=Path, help="a packed HDF5 file: the token export's memory against file size")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, spec = args.child[0], json.loads(args.child[1])
        child = {"pipeline": child_pipeline, "export": child_export, "tile": child_tile}[kind]
        print(json.dumps(child(spec)))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    if args.tile:
        tile_table(args.tile, args.work)
        return
    print("| lang | dump | XML MB | text MB | pipeline s | format | export s | share | rows | output MB "
          "| peak RSS main MB | peak RSS worker MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lang, label, dump, scaled in dumps(args):
        data = args.work / f"data_{lang}_{label.replace(' ', '')}"
        shutil.rmtree(data, ignore_errors=True)
        spec = {"data": str(data), "lang": lang, "workers": args.workers, "dump": str(dump), "scaled": scaled}
        pipe = in_child("pipeline", spec)
        total = sum(pipe["seconds"].values())
        for fmt in ("parquet", "tokens"):
            res = in_child("export", {**spec, "format": fmt})
            rows = res["summary"].get("documents", res["summary"].get("rows"))
            print(f"| {lang} | {label} | {pipe['xml_mb']:,.0f} | {pipe['text_mb']:,.0f} | {total:,.1f} | {fmt} "
                  f"| {res['seconds']:,.1f} | {res['seconds'] / total:.1%} | {rows:,} | {res['output_mb']:,.1f} "
                  f"| {res['rss_main']:,.0f} | {res['rss_worker']:,.0f} |", flush=True)
        print(f"<!-- {lang} {label} stages: {json.dumps({k: round(v, 1) for k, v in pipe['seconds'].items()})} -->",
              flush=True)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
