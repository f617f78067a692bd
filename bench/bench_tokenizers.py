"""Encode speed with a transformers tokenizer against the project's fast WordPiece; prints a table.

Usage:
    .venv/bin/python bench/bench_tokenizers.py                 # uk, 3 runs
    .venv/bin/python bench/bench_tokenizers.py --lang vi --runs 5 --vocab-size 16000

Text: ../shared/data/{lang}wiki.xml.xz through the project's own stages (`pipeline run
--no-encode --vocab-size N`, cached in --work): the training shards and the WordPiece vocab.txt
of the vocab stage. The same shards are tokenised, as `pipeline encode` tokenises them
(Corpus.from_file with the stage's encoder, vocab/core/tokenizers_encoder.py), by:

  fast WordPiece    the project's FastWordPiece on vocab.txt (what encode uses for a vocab.txt)
  WordPiece json    the same vocab as a transformers tokenizer.json (the vocab.txt kind's save; no
                    vocab.txt beside it, so encode takes it with --tokenizer): tokenizers' Rust
                    WordPiece through encode_batch, word starts from its word ids
  byte-level BPE    `pipeline vocab --model-type bytelevel-bpe` of the same size, same sample
  Unigram 250k      a synthetic XLM-R-sized tokenizer (250,002 pieces: XLM-R's layout, <pad> 1;
                    pieces are the corpus's words and their pieces), for what a 250k vocab costs
                    in loading, memory and speed

Each row: load (spec + encoder, seconds), tokens/s and documents/s of the tokenisation (a fresh
encoder per run, all shards), pieces per word (tokens / BERT's words of the text, as the vocab
report counts words) and the full `pipeline encode` at 128/20 with one worker (wall seconds and
peak RSS of its process). Medians of --runs; the machine is shared, so the figures are noisy.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
PY = sys.executable

from pipeline.encoding.instances import Corpus  # noqa: E402
from vocab.kinds import load_tokenizer  # noqa: E402
from vocab.training.sample import read_sentences  # noqa: E402
from vocab.training.words import BertWords  # noqa: E402

# Peak RSS from /proc/self/status (VmHWM): ru_maxrss survives exec, so a child started by a big
# parent would report the parent's peak.
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pipeline.stages.encode import encode
args = json.loads(sys.argv[1])
summary = encode(**args)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"wall": time.perf_counter() - t0, "rss_mb": hwm / 1024, "instances": summary["instances"]}))
"""


def prepare(work: Path, lang: str, vocab_size: int) -> tuple[Path, Path]:
    """The shards and vocab folder of `lang` from the project's stages (cached)."""
    data = work / "data"
    if not (data / lang / "sharded" / "manifest.json").is_file():
        dump = SHARED / f"{lang}wiki.xml.xz"
        if not dump.is_file():
            print(f"bench_tokenizers: skipped, {dump} not found (this benchmark needs ../shared/data)")
            sys.exit(0)
        print(f"preparing {lang} shards and vocab with the project's stages (once) ...", flush=True)
        subprocess.run([str(ROOT / ".venv" / "bin" / "pipeline"), "--data-dir", str(data), "--lang", lang,
                        "-q", "run", "--dump", str(dump), "--no-encode", "--vocab-size", str(vocab_size)],
                       check=True, cwd=ROOT)
    return data / lang / "sharded", data / lang / "vocab"


def make_tokenizers(work: Path, data: Path, lang: str, vocab: Path, vocab_size: int) -> dict[str, Path]:
    from pipeline.stages.vocab import build_vocab

    wp_json = work / "wordpiece_json"
    if not (wp_json / "tokenizer.json").is_file():
        load_tokenizer(vocab).save(wp_json, model_max_length=512, tokenizer_json=True)
        (wp_json / "vocab.txt").unlink()
    bl = work / "bytelevel_bpe"
    build_vocab(data_dir=data, lang=lang, workers=1, vocab_size=vocab_size, model_type="bytelevel-bpe",
                output=bl)
    big = work / "unigram_250k"
    if not (big / "tokenizer.json").is_file():
        synthetic_unigram(data / lang / "sharded", big)
    return {"fast WordPiece": vocab, "WordPiece json": wp_json, "byte-level BPE": bl, "Unigram 250k": big}


def synthetic_unigram(shards: Path, folder: Path, size: int = 250_002) -> None:
    """An XLM-R-shaped Unigram tokenizer (<s> <pad> </s> <unk>, pieces, <mask> last) whose pieces
    are the corpus's frequent words ("▁word") and their substrings, scored by frequency."""
    import math
    from collections import Counter

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    words = Counter()
    for p in sorted(shards.glob("*.txt")):
        for s in read_sentences(p):
            words.update(s.split())
    pieces = Counter()
    for w, n in words.items():
        pieces["\u2581" + w] += n
        for i in range(len(w)):
            for j in range(i + 1, min(len(w), i + 8) + 1):
                pieces[w[i:j]] += n
    chars = {c for w in words for c in w} | {"\u2581"}
    chosen = [p for p, _ in pieces.most_common(size - 5 - len(chars)) if p not in chars]
    total = sum(pieces.values())
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    vocab += [(c, math.log(max(pieces[c], 1) / total) - 10) for c in sorted(chars)]
    vocab += [(p, math.log(pieces[p] / total)) for p in chosen]
    vocab = vocab[:size - 1]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Metaspace(prepend_scheme="always")])
    tok.decoder = decoders.Metaspace(prepend_scheme="always")
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
        "cls_token": "<s>", "sep_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>",
        "mask_token": "<mask>"}), encoding="utf-8")


def tokenise_once(folder: Path, shards: list[Path]) -> dict:
    t0 = time.perf_counter()
    spec = load_tokenizer(folder)
    enc = spec.make_encoder(None)   # a new one: its load time is measured
    loaded = time.perf_counter() - t0
    t1 = time.perf_counter()
    tokens = docs = 0
    for s in shards:
        c = Corpus.from_file(s, enc)
        tokens += len(c.tokens)
        docs += c.n_docs
    return {"load": loaded, "seconds": time.perf_counter() - t1, "tokens": tokens, "docs": docs,
            "size": spec.size}


def encode_once(folder: Path, shard_dir: Path, work: Path, is_vocab_txt: bool) -> dict:
    out = Path(tempfile.mkdtemp(dir=work, prefix="out_"))
    args = dict(data_dir=str(work), lang="bench", workers=1, input=str(shard_dir), output=str(out),
                max_seq=128, max_pred=20, dupe_factor=1, force=True,
                **({"vocab": str(folder)} if is_vocab_txt else {"tokenizer": str(folder)}))
    try:
        res = subprocess.run([PY, "-c", CHILD, json.dumps(args)], cwd=ROOT, check=True,
                             capture_output=True, text=True)
        return json.loads(res.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lang", default="uk")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "wiki2bert_bench_tokenizers")
    opts = ap.parse_args()
    opts.work.mkdir(parents=True, exist_ok=True)
    shard_dir, vocab = prepare(opts.work, opts.lang, opts.vocab_size)
    data = shard_dir.parent.parent
    folders = make_tokenizers(opts.work, data, opts.lang, vocab, opts.vocab_size)
    train = sorted(shard_dir.glob("*_training_*.txt"))
    train_dir = opts.work / "train_shards"
    shutil.rmtree(train_dir, ignore_errors=True)
    train_dir.mkdir()
    for s in train:
        (train_dir / s.name).symlink_to(s)
    mb = sum(s.stat().st_size for s in train) / 1e6
    words = sum(sum(BertWords().count(read_sentences(s)).values()) for s in train)
    print(f"{opts.lang}: {len(train)} training shards, {mb:.2f} MB, {words:,} words (BERT's split); "
          f"medians of {opts.runs} runs\n")
    head = (f"{'tokenizer':<15} {'pieces':>7} {'load s':>7} {'tokens/s':>10} {'docs/s':>8} "
            f"{'pieces/word':>11} {'encode s':>8} {'peak RSS MB':>11}")
    print(head)
    print("-" * len(head))
    for name, folder in folders.items():
        runs = [tokenise_once(folder, train) for _ in range(opts.runs)]
        full = [encode_once(folder, train_dir, opts.work, name == "fast WordPiece") for _ in range(opts.runs)]
        sec = statistics.median(r["seconds"] for r in runs)
        r0 = runs[0]
        print(f"{name:<15} {r0['size']:>7,} {statistics.median(r['load'] for r in runs):>7.2f} "
              f"{r0['tokens'] / sec:>10,.0f} {r0['docs'] / sec:>8,.0f} {r0['tokens'] / words:>11.3f} "
              f"{statistics.median(r['wall'] for r in full):>8.2f} {max(r['rss_mb'] for r in full):>11.0f}",
              flush=True)


if __name__ == "__main__":
    main()
