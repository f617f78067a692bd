"""A joint vocab of two languages in two scripts against each language's own: what sharing
costs each language at several sampling exponents; prints a table.

Usage:
    .venv/bin/python bench/bench_joint_vocab.py                 # uk + vi, joint 16k, own 8k, α 1.0 0.7 0.3
    .venv/bin/python bench/bench_joint_vocab.py --alphas 1.0 0.5 0.0 --joint-size 32000 --own-size 16000

Text: ../shared/data/{uk,vi}wiki.xml.xz through the project's own stages, as a user runs them:
`pipeline --lang uk,vi run --dump uk=... --dump vi=... --vocab-size J --own-vocab-size O
--sampling-alpha A --no-encode` (each language's stages up to its own vocab of O entries, the
joint vocab of J at the first α, probes, reports; cached in --work), then `pipeline --lang uk,vi
joint-vocab --sampling-alpha A --output ...` for the other exponents. The figures are the joint
vocab stage's own report (joint_report.json): on each language's held-out sentences (its test
shards), pieces per word, words kept whole and [UNK] words with the joint vocab and with the
language's own vocab. A second own vocab of the joint vocab's size (`pipeline vocab
--vocab-size J --output`) is measured on the same sentences for reference: what the language
would get with all J pieces to itself.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
PIPELINE = str(ROOT / ".venv" / "bin" / "pipeline")

from vocab.reports.quality import evaluate_vocab  # noqa: E402
from vocab.training.sample import pick_eval_sentences  # noqa: E402


def sh(*args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([PIPELINE, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--langs", nargs="+", default=["uk", "vi"])
    ap.add_argument("--alphas", nargs="+", type=float, default=[1.0, 0.7, 0.3])
    ap.add_argument("--joint-size", type=int, default=16000)
    ap.add_argument("--own-size", type=int, default=8000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/wiki2bert_bench_joint_vocab"))
    ap.add_argument("--runs", type=int, default=1, help="ignored: the vocabs are deterministic (run_all)")
    args = ap.parse_args()
    missing = [lang for lang in args.langs if not (SHARED / f"{lang}wiki.xml.xz").is_file()]
    if missing:
        print(f"bench_joint_vocab: skipped, {SHARED}/{missing[0]}wiki.xml.xz not found "
              "(this benchmark needs ../shared/data)")
        return
    data = args.work / "data"
    top = ["-q", "--data-dir", str(data), "--lang", ",".join(args.langs), "--workers", str(args.workers)]
    dumps = [x for lang in args.langs for x in ("--dump", f"{lang}={SHARED / f'{lang}wiki.xml.xz'}")]
    seconds = {}
    first = args.alphas[0]
    t = sh(*top, "run", *dumps, "--vocab-size", str(args.joint_size), "--own-vocab-size",
           str(args.own_size), "--sampling-alpha", str(first), "--no-encode")
    print(f"run (every stage of {' and '.join(args.langs)}, own vocabs, joint vocab at α {first:g}): {t:.0f} s")
    folders = {first: data / "multi" / "+".join(sorted(args.langs)) / "vocab"}
    for alpha in args.alphas[1:]:
        folders[alpha] = args.work / f"joint_{args.joint_size}_alpha_{alpha:g}"
        seconds[alpha] = sh(*top, "joint-vocab", "--vocab-size", str(args.joint_size),
                            "--sampling-alpha", str(alpha), "--output", str(folders[alpha]))
    same_size = {}
    for lang in args.langs:
        own = args.work / f"own_{lang}_{args.joint_size}"
        sh("-q", "--data-dir", str(data), "--lang", lang, "--workers", str(args.workers), "vocab",
           "--vocab-size", str(args.joint_size), "--output", str(own))
        tests = sorted((data / lang / "sharded").glob("*_test_*.txt"))
        same_size[lang] = evaluate_vocab(own, pick_eval_sentences(tests, 12345))

    reports = {a: json.loads((f / "joint_report.json").read_text(encoding="utf-8")) for a, f in folders.items()}
    any_rep = reports[first]
    print("\nheld-out sentences (test shards): "
          + ", ".join(f"{lang} {f['eval_sentences']:,}" for lang, f in any_rep["languages"].items())
          + "; text: " + ", ".join(f"{lang} {f['sentences']:,} sentences" for lang, f in any_rep["languages"].items()))
    head = (f"{'vocab':<25}{'lang':<6}{'text':>7}{'sample':>8}{'pieces/word':>13}{'words whole':>13}"
            f"{'[UNK] words':>13}")
    print(head)
    print("-" * len(head))
    for lang in args.langs:
        own = any_rep["languages"][lang]["own"]
        print(f"{'own ' + format(own['vocab_size'], ','):<25}{lang:<6}{'':>7}{'':>8}"
              f"{own['subwords_per_word']:>13.3f}{100 * own['whole_word_share']:>12.1f}%"
              f"{100 * own['unk_word_share']:>12.3f}%")
    for lang in args.langs:
        rep = same_size[lang]
        print(f"{'own ' + format(rep['vocab_size'], ',') + ' (reference)':<25}{lang:<6}{'':>7}{'':>8}"
              f"{rep['subwords_per_word']:>13.3f}{100 * rep['whole_word_share']:>12.1f}%"
              f"{100 * rep['unk_word_share']:>12.3f}%")
    for alpha, rep in reports.items():
        for lang, f in rep["languages"].items():
            j = f["joint"]
            print(f"{'joint ' + format(rep['vocab_size'], ',') + f' α {alpha:g}':<25}{lang:<6}"
                  f"{100 * f['text_share']:>6.1f}%{100 * f['sample_share']:>7.1f}%"
                  f"{j['subwords_per_word']:>13.3f}{100 * j['whole_word_share']:>12.1f}%"
                  f"{100 * j['unk_word_share']:>12.3f}%")
    for alpha, s in seconds.items():
        print(f"joint-vocab at α {alpha:g}: {s:.0f} s")


if __name__ == "__main__":
    main()
