"""Japanese vocab on MeCab words against one token per kanji (mBERT's split), at one size.

Usage:
    python bench/bench_unspaced.py --debs DEBS_DIR            # the corpus of bench/unspaced_corpus.py
    python bench/bench_unspaced.py --train ja_train.txt --test ja_test.txt --vocab-size 16000

There is no Japanese Wikipedia here; `--debs` takes a folder with the .deb files of
manpages-ja, gimp-help-ja, libreoffice-help-ja and debian-reference-ja (`apt-get download`)
and builds real (technical) Japanese text from them. Without --debs or --train/--test the
script says so and skips.

For each of `--word-segmenter mecab` and `none` it trains `pipeline vocab` on --train (one
sentence a line) and measures on --test: subwords per MeCab word and the share of MeCab words
kept whole (a character vocab's tokens grouped by MeCab words, vocab/core/word_starts.py), [UNK]
share, pieces that cross a MeCab word boundary, and whether transformers' AutoTokenizer on the
vocab folder gives the same ids as encode's tokenizer on every test sentence. Then speed, in
input MB per CPU-second (median of --runs): MeCab alone, encode's tokenizer with MeCab
(MecabWordPiece) and without (FastWordPiece on the character vocab), and the whole encode
stage (seq 128, dupe factor 5, one worker) on the test text with each vocab.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.unspaced_corpus import build as build_corpus  # noqa: E402
from pipeline.stages.encode import encode  # noqa: E402
from pipeline.stages.vocab import build_vocab  # noqa: E402
from vocab.core.fast_wordpiece import FastWordPiece  # noqa: E402
from vocab.core.segmenters import load_segmenter  # noqa: E402
from vocab.kinds import load_vocab  # noqa: E402
from vocab.kinds.mecab import MecabWordPiece, mecab_words  # noqa: E402
from vocab.reports.quality import evaluate_vocab  # noqa: E402


def crossing_pieces(spec, sentences) -> int:
    """Tokens of the BERT tokenizer of `spec` that span more than one MeCab word."""
    from vocab.core.bert_tokenizer import make_tokenizer

    tok, seg = make_tokenizer(spec), load_segmenter("mecab")
    n = 0
    for s, enc in zip(sentences, tok.encode_batch(sentences, add_special_tokens=False)):
        bounds = {b for a, b in seg.spans(s)} | {a for a, b in seg.spans(s)}
        n += sum(1 for a, b in enc.offsets if any(a < x < b for x in bounds))
    return n


def hf_mismatches(folder: Path, spec, sentences) -> int:
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(folder))
    ours = spec.encoder().tokenize
    return sum(hf(s, add_special_tokens=False)["input_ids"] != ours(s) for s in sentences)


def cpu_mb_per_s(fn, text: str, runs: int, size: int | None = None) -> float:
    times = []
    for i in range(runs):
        t = time.process_time()
        fn(text if size is None else i)
        times.append(time.process_time() - t)
    return (size or len(text.encode("utf-8"))) / 1e6 / statistics.median(times)


def encode_stage(work: Path, test: Path, seg: str, vocab_size: int):
    """encode(run) on the test text as one shard with the `seg` vocab, in this process."""
    shards = work / "shards"
    shards.mkdir(parents=True, exist_ok=True)
    (shards / "jawiki_training_0.txt").write_bytes(test.read_bytes())

    def run(i):
        encode(data_dir=work, lang="ja", workers=1, input=shards, output=work / f"enc_{seg}_{i}",
               vocab=work / f"vocab_{seg}_{vocab_size}", max_seq=128, max_pred=20, force=True)
    return run


@click.command()
@click.option("--train", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("--test", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("--debs", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Folder of the Japanese documentation .deb files (see the module doc).")
@click.option("--vocab-size", type=int, default=16000, show_default=True)
@click.option("--runs", type=int, default=3, show_default=True)
@click.option("--work", type=click.Path(path_type=Path), default=Path("/tmp/bench_unspaced"))
def main(train, test, debs, vocab_size, runs, work):
    if debs is not None:
        train, test = build_corpus(debs, work / "corpus")
    if train is None or test is None:
        print("bench_unspaced: skipped, no Japanese text: give --debs DIR (apt-get download "
              "manpages-ja gimp-help-ja libreoffice-help-ja debian-reference-ja) or --train/--test")
        return
    print(f"train: {train} ({train.stat().st_size / 1e6:.1f} MB), test: {test}")
    test_sents = [s.strip() for s in test.read_text(encoding="utf-8").splitlines() if s.strip()]
    rows = {}
    for seg in ("mecab", "none"):
        out = work / f"vocab_{seg}_{vocab_size}"
        t = time.time()
        build_vocab(data_dir=work, lang="ja", workers=2, input=train, output=out,
                    vocab_size=vocab_size, eval_path=test, word_segmenter=seg)
        spec = load_vocab(out)
        rep = evaluate_vocab(out, test_sents, segmenter=None if seg == "mecab" else "mecab")
        rows[seg] = {
            "vocab": spec.size, "build_s": round(time.time() - t, 1),
            "subwords_per_mecab_word": round(rep["subwords_per_word"], 3),
            "mecab_words_whole": round(rep["whole_word_share"], 4),
            "unk_token_share": rep["unk_token_share"],
            "crossing_pieces": 0 if seg == "mecab" else crossing_pieces(spec, test_sents),
            "hf_mismatches": hf_mismatches(out, spec, test_sents),
            "mecab_words": rep["words"],
        }
    text = "\n".join(test_sents)
    mecab = MecabWordPiece(load_vocab(work / f"vocab_mecab_{vocab_size}"))
    chars = FastWordPiece(load_vocab(work / f"vocab_none_{vocab_size}"))
    speed = {
        "MeCab words alone": cpu_mb_per_s(lambda x: [mecab_words(s) for s in x.split("\n")], text, runs),
        "encode tokenizer, MeCab vocab": cpu_mb_per_s(mecab.encode_text, text, runs),
        "encode tokenizer, character vocab": cpu_mb_per_s(chars.encode_text, text, runs),
    }
    for seg, name in (("mecab", "MeCab vocab"), ("none", "character vocab")):
        speed[f"encode stage (128/20, dupe 5), {name}"] = cpu_mb_per_s(
            encode_stage(work, test, seg, vocab_size), "", runs, size=test.stat().st_size)
    print(f"held-out: {len(test_sents):,} sentences, {len(text.encode()) / 1e6:.2f} MB, "
          f"{rows['mecab']['mecab_words']:,} MeCab words")
    keys = ["vocab", "subwords_per_mecab_word", "mecab_words_whole", "unk_token_share",
            "crossing_pieces", "hf_mismatches", "build_s"]
    print("| vocab on | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for seg, r in rows.items():
        name = "MeCab words" if seg == "mecab" else "one token per kanji"
        print(f"| {name} | " + " | ".join(
            f"{r[k]:.5%}" if k == "unk_token_share" else str(r[k]) for k in keys) + " |")
    print("\n| tokenizer | input MB per CPU-second |\n|---|---|")
    for k, v in speed.items():
        print(f"| {k} | {v:.2f} |")
    (work / "results.json").write_text(json.dumps({"rows": rows, "speed": speed}, indent=1))


if __name__ == "__main__":
    main()
