"""Benchmark of the vocab stage on the real (truncated) ukwiki and viwiki dumps.

Usage:
    .venv/bin/python bench/bench_vocab.py [--langs uk vi] [--vocab-size 16000] [--runs 3]
        [--model-type bpe] [--data-dir /tmp/wiki2bert-bench-vocab] [--workers N]

Runs the project's corpus stages (extract -> format -> split -> filter -> shard, skipped when
already done) on ../shared/data/{lang}wiki.xml.xz, then the vocab stage `--runs` times
(each into a fresh folder), and prints a table: [UNK] share of tokens and of words on held-out sentences (the
shard stage's test shards, kept out of the vocab's training sample), subwords per word, words
kept whole, and the median training / stage time. The target: at most 0.05% [UNK] tokens.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CORPUS_STAGES = ["extract", "format", "split", "filter", "shard"]
UNK_TARGET = 0.0005


def pipeline(data_dir: Path, lang: str, workers: int, *args: str) -> None:
    cmd = [sys.executable, "-m", "pipeline", "-q", "--data-dir", str(data_dir), "--lang", lang,
           "--workers", str(workers), *args]
    subprocess.run(cmd, check=True, cwd=ROOT)


def missing_stages() -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pipeline", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    commands = out.split("Commands:", 1)[-1].split()
    return [s for s in CORPUS_STAGES + ["vocab"] if s not in commands]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--langs", nargs="+", default=["uk", "vi"])
    ap.add_argument("--vocab-size", type=int, default=16000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--model-type", default="bpe", choices=["bpe", "unigram"])
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/wiki2bert-bench-vocab"))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    missing = missing_stages()
    if missing:
        print(f"bench_vocab: the pipeline lacks the stage(s) {', '.join(missing)}: "
              "the figures must come from the real corpus stages; finish them first")
        return 1
    sys.path.insert(0, str(ROOT))
    from pipeline.stages.vocab import build_vocab

    rows = []
    for lang in args.langs:
        dump = SHARED / f"{lang}wiki.xml.xz"
        if not dump.is_file():
            print(f"bench_vocab: {dump} not found (../shared/data absent): skipping {lang}")
            continue
        pipeline(args.data_dir, lang, args.workers, "extract", "--input", str(dump))
        for stage in CORPUS_STAGES[1:]:
            pipeline(args.data_dir, lang, args.workers, stage)
        train_s, scan_s, stage_s, vocabs = [], [], [], set()
        for i in range(args.runs):
            out = args.data_dir / lang / f"vocab_bench_{i}"
            shutil.rmtree(out, ignore_errors=True)  # a finished run would be skipped, not timed
            t = time.time()
            s = build_vocab(data_dir=args.data_dir, lang=lang, workers=args.workers, output=out,
                            vocab_size=args.vocab_size, model_type=args.model_type)
            stage_s.append(time.time() - t)
            train_s.append(s["train_seconds"])
            scan_s.append(json.loads((out / "vocab_report.json").read_text())["scan_seconds"])
            vocabs.add((out / "vocab.txt").read_bytes())
        rep = json.loads((out / "vocab_report.json").read_text(encoding="utf-8"))
        rows.append((lang, rep, statistics.median(scan_s), statistics.median(train_s),
                     statistics.median(stage_s), len(vocabs) == 1))
        # The test shards of a truncated dump are a few documents; also score the vocab on a
        # seeded 2% of all filtered sentences held out from training (--input: no test shards).
        out = args.data_dir / lang / "vocab_bench_slice"
        shutil.rmtree(out, ignore_errors=True)
        t = time.time()
        s = build_vocab(data_dir=args.data_dir, lang=lang, workers=args.workers, output=out,
                        vocab_size=args.vocab_size, model_type=args.model_type,
                        input=args.data_dir / lang / "filtered")
        rep = json.loads((out / "vocab_report.json").read_text(encoding="utf-8"))
        rows.append((f"{lang}*", rep, rep["scan_seconds"], s["train_seconds"], time.time() - t, True))

    print(f"\nvocab stage, {args.model_type}, --vocab-size {args.vocab_size}, "
          f"--workers {args.workers}, median of {args.runs} runs")
    head = ("lang", "sentences", "sample", "held-out", "vocab", "[UNK] tok", "[UNK] word",
            "sub/word", "whole", "scan s", "train s", "stage s", "same", f"<= {UNK_TARGET:.2%}")
    fmt = "{:<5} {:>9} {:>8} {:>8} {:>6} {:>9} {:>10} {:>8} {:>7} {:>6} {:>7} {:>7} {:>5} {:>8}"
    print(fmt.format(*head))
    for lang, rep, sc, tr, st, same in rows:
        print(fmt.format(
            lang, f"{rep['input']['sentences']:,}", f"{rep['input']['sample_sentences']:,}",
            f"{rep['sentences']:,}", f"{rep['vocab_size']:,}",
            f"{rep['unk_token_share']:.4%}", f"{rep['unk_word_share']:.4%}",
            f"{rep['subwords_per_word']:.3f}", f"{rep['whole_word_share']:.1%}",
            f"{sc:.2f}", f"{tr:.2f}", f"{st:.2f}", "yes" if same else "NO",
            "yes" if rep["unk_token_share"] <= UNK_TARGET else "NO"))
    print("(* = one run scored on a seeded 2% of the filtered sentences, held out from training)")
    for lang, rep, *_ in rows:
        print(f"{lang}: held-out = {rep['eval_source']}; [UNK] words: {' '.join(rep['unk_examples'][:10]) or '-'}")
    # Exit 2 when a figure misses the target; no data (../shared/data absent) is not a failure.
    return 0 if all(r[1]["unk_token_share"] <= UNK_TARGET for r in rows) else 2


if __name__ == "__main__":
    sys.exit(main())
