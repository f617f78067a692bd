"""The commands scripts/goldens.py runs: the pipeline's for each language and tokenizer kind, then
the trainer's for each model family on that data (see goldens.py's docstring)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
ZH = ROOT / "tests" / "fixtures" / "unspaced" / "zh.txt"
JA_TRAIN_BYTES = 1_500_000
JA_TEST_BYTES = 150_000
ENCODE = ["--max-seq", "128", "--max-pred", "20"]


def _sentences(folder: Path) -> list[str]:
    return [line.strip() for p in sorted(folder.glob("*.txt"))
            for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def unigram_tokenizer(filtered: Path, out: Path, vocab_size: int = 2000) -> None:
    """An XLM-R-like Unigram tokenizer (the tests' builder) trained on the language's filtered
    sentences, built once (the `tokenizers` trainer need not give the same pieces twice): it is
    an input."""
    if (out / "tokenizer.json").is_file():
        return
    from tests.helpers.hf_tokenizers import unigram_tokenizer as build

    out.mkdir(parents=True, exist_ok=True)
    build(out, _sentences(filtered), vocab_size=vocab_size)


def japanese_inputs(ja_text: Path, inputs: Path) -> Path:
    """inputs/ja/{train,test}.txt: whole documents of ja_text, about 1.5 MB and 150 kB."""
    folder = inputs / "ja"
    if (folder / "test.txt").is_file():
        return folder
    docs = ja_text.read_text(encoding="utf-8").split("\n\n")
    parts, size, i = {"train": [], "test": []}, 0, 0
    for part, limit in (("train", JA_TRAIN_BYTES), ("test", JA_TEST_BYTES)):
        size = 0
        while i < len(docs) and size < limit:
            parts[part].append(docs[i].strip("\n"))
            size += len(docs[i].encode())
            i += 1
    folder.mkdir(parents=True, exist_ok=True)
    for part, texts in parts.items():
        (folder / f"{part}.txt").write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    return folder


def _shards(src_train: Path, src_test: Path, lang: str, out: Path, n: int = 2) -> None:
    """The shard stage's layout from a training and a test text: n training shards of whole documents."""
    out.mkdir(parents=True, exist_ok=True)
    docs = [d for d in src_train.read_text(encoding="utf-8").split("\n\n") if d.strip()]
    for i in range(n):
        (out / f"{lang}wiki_training_{i}.txt").write_text("\n\n".join(d.strip("\n") for d in docs[i::n]) + "\n",
                                                          encoding="utf-8")
    shutil.copyfile(src_test, out / f"{lang}wiki_test_0.txt")


def language_jobs(data: Path, inputs: Path, lang: str, dump: Path, vocab_size: int, shards: int | None):
    """A language from its dump: the text stages once, then each tokenizer kind's vocab and encodes."""
    d = data / lang
    g = ["--lang", lang]
    yield (f"{lang}-run", [*g, "run", "--dump", dump, "--vocab-size", vocab_size, "--no-encode",
                           *(["--num-shards", shards] if shards else [])], [d / "vocab"])
    yield f"{lang}-wp", [*g, "encode", *ENCODE, "--dupe-factor", "2", "--output", d / "wp"], [d / "wp"]
    yield f"{lang}-wp-pack", [*g, "encode", *ENCODE, "--pack", "--dupe-factor", "1", "--output", d / "wp_pack"], \
        [d / "wp_pack"]
    yield f"{lang}-wp-wwm", [*g, "encode", "--max-seq", "64", "--max-pred", "10", "--dupe-factor", "1",
                             "--whole-word-masking", "--output", d / "wp_wwm"], [d / "wp_wwm"]
    yield f"{lang}-spm-unigram", [*g, "vocab", "--model-type", "unigram", "--vocab-size", vocab_size,
                                  "--output", d / "vocab_unigram"], [d / "vocab_unigram"]
    yield f"{lang}-bbpe-vocab", [*g, "vocab", "--model-type", "bytelevel-bpe", "--vocab-size", 3000,
                                 "--output", d / "vocab_bbpe"], [d / "vocab_bbpe"]
    yield f"{lang}-bbpe", [*g, "encode", *ENCODE, "--dupe-factor", "2", "--vocab", d / "vocab_bbpe",
                           "--output", d / "bbpe"], [d / "bbpe"]
    yield f"{lang}-bbpe-pack", [*g, "encode", *ENCODE, "--pack", "--dupe-factor", "1", "--vocab",
                                d / "vocab_bbpe", "--output", d / "bbpe_pack"], [d / "bbpe_pack"]
    uni = inputs / f"unigram_{lang}"
    yield f"{lang}-unigram-input", lambda: unigram_tokenizer(d / "filtered", uni), []
    yield f"{lang}-unigram", [*g, "encode", *ENCODE, "--dupe-factor", "2", "--tokenizer", uni,
                              "--output", d / "uni"], [d / "uni"]
    yield f"{lang}-unigram-pack", [*g, "encode", *ENCODE, "--pack", "--dupe-factor", "1", "--tokenizer", uni,
                                   "--output", d / "uni_pack"], [d / "uni_pack"]
    yield f"{lang}-compare", [*g, "vocab", "--compare", uni], [d / "vocab"]


def pipeline_jobs(data: Path, inputs: Path, shared: Path | None, ja_text: Path | None):
    """(name, the pipeline's argv after its global options, or a function; folders to hash)."""
    yield from language_jobs(data, inputs, "hu", SAMPLE, 3000, None)
    if shared is not None:
        yield from language_jobs(data, inputs, "uk", shared / "ukwiki.xml.xz", 8000, 4)
        yield from language_jobs(data, inputs, "vi", shared / "viwiki.xml.xz", 8000, 4)
        multi = data / "multi"
        yield "uk+vi-joint", ["--lang", "uk,vi", "joint-vocab", "--vocab-size", 8000, "--output",
                              multi / "joint"], [multi / "joint"]
        yield "uk+vi-joint-bbpe", ["--lang", "uk,vi", "joint-vocab", "--vocab-size", 3000, "--model-type",
                                   "bytelevel-bpe", "--output", multi / "joint_bbpe"], [multi / "joint_bbpe"]
        yield "uk-joint", ["--lang", "uk", "encode", *ENCODE, "--dupe-factor", "1", "--vocab", multi / "joint",
                           "--output", data / "uk" / "joint"], [data / "uk" / "joint"]
    if ja_text is not None:
        ja = data / "ja"
        src = inputs / "ja"
        yield "ja-input", lambda: (japanese_inputs(ja_text, inputs),
                                   _shards(src / "train.txt", src / "test.txt", "ja", ja / "shards")), []
        g = ["--lang", "ja"]
        yield "ja-mecab-vocab", [*g, "vocab", "--input", src / "train.txt", "--eval", src / "test.txt",
                                 "--vocab-size", 4000], [ja / "vocab"]
        for name, extra in (("mecab", ["--dupe-factor", "2", "--whole-word-masking"]),
                            ("mecab-pack", ["--pack", "--dupe-factor", "1"])):
            yield f"ja-{name}", [*g, "encode", "--input", ja / "shards", *ENCODE, *extra, "--output", ja / name], \
                [ja / name]
        yield "ja-char-vocab", [*g, "vocab", "--input", src / "train.txt", "--eval", src / "test.txt",
                                "--vocab-size", 4000, "--word-segmenter", "none", "--output", ja / "vocab_char"], \
            [ja / "vocab_char"]
        yield "ja-char", [*g, "encode", "--input", ja / "shards", *ENCODE, "--dupe-factor", "1",
                          "--whole-word-masking", "--vocab", ja / "vocab_char", "--output", ja / "char"], [ja / "char"]
        yield "ja-bbpe-vocab", [*g, "vocab", "--input", src / "train.txt", "--eval", src / "test.txt",
                                "--vocab-size", 3000, "--model-type", "bytelevel-bpe", "--word-segmenter", "none",
                                "--output", ja / "vocab_bbpe"], [ja / "vocab_bbpe"]
        yield "ja-bbpe-pack", [*g, "encode", "--input", ja / "shards", *ENCODE, "--pack", "--dupe-factor", "1",
                               "--vocab", ja / "vocab_bbpe", "--output", ja / "bbpe_pack"], [ja / "bbpe_pack"]
    zh = data / "zh"
    yield "zh-input", lambda: _shards(ZH, ZH, "zh", zh / "shards", n=1), []
    yield "zh-vocab", ["--lang", "zh", "vocab", "--input", ZH, "--vocab-size", 1200], [zh / "vocab"]
    yield "zh-jieba", ["--lang", "zh", "encode", "--input", zh / "shards", "--max-seq", "64", "--max-pred", "10",
                       "--dupe-factor", "2", "--whole-word-masking", "--output", zh / "wwm"], [zh / "wwm"]


def _hdf5(folder: Path) -> Path:
    found = sorted(folder.glob("hdf5_*"))
    assert len(found) == 1, (folder, found)
    return found[0]


def _model(runs: Path, name: str, keys: dict) -> Path:
    path = runs / f"{name}.json"
    path.write_text(json.dumps(keys), encoding="utf-8")
    return path


def trainer_jobs(data: Path, runs: Path, inputs: Path):
    """(run name, run_pretraining.py's argv without --output_dir, export's extra argv)."""
    bert = {"vocab_size": 4096, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": 64, "max_position_embeddings": 128, "type_vocab_size": 2}
    modern = {"vocab_size": 4096, "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 2,
              "intermediate_size": 48, "max_position_embeddings": 128, "global_attn_every_n_layers": 3,
              "local_attention": 16}
    roberta = {**bert, "max_position_embeddings": 130, "type_vocab_size": 1}
    distil = {"vocab_size": 4096, "dim": 32, "n_layers": 2, "n_heads": 2, "hidden_dim": 64,
              "max_position_embeddings": 128}
    common = ["--train_batch_size", "8", "--max_steps", "6", "--log_every", "1", "--eval_every", "6",
              "--checkpoint_every", "3", "--seed", "3", "--device", "cpu", "--no-tensorboard",
              "--warmup_proportion", "0.1"]
    hu, ja = data / "hu", data / "ja"
    mlm = ["--no_nsp", "--optimizer", "adamw", "--learning_rate", "1e-3"]
    jobs = [
        ("bert-hu-wp", ["--model_config", _model(runs, "bert", bert), "--input_dir", _hdf5(hu / "wp"),
                        "--vocab_file", hu / "vocab", "--optimizer", "lamb", "--learning_rate", "1e-2",
                        "--gradient_accumulation_steps", "2"]),
        ("modernbert-hu-pack", ["--model_type", "modernbert", "--model_config", _model(runs, "modern", modern),
                                "--input_dir", _hdf5(hu / "wp_pack"), "--vocab_file", hu / "vocab", *mlm,
                                "--masking", "dynamic", "--whole_word_masking",
                                "--lr_schedule", "wsd"]),
        ("roberta-hu-bbpe", ["--model_type", "roberta", "--model_config", _model(runs, "roberta", roberta),
                             "--input_dir", _hdf5(hu / "bbpe_pack"), "--vocab_file", hu / "vocab_bbpe", *mlm,
                             "--masking", "dynamic"]),
        ("xlmr-hu-unigram", ["--model_type", "xlm-roberta", "--model_config", _model(runs, "xlmr", roberta),
                             "--input_dir", _hdf5(hu / "uni_pack"), "--vocab_file", inputs / "unigram_hu",
                             *mlm]),
        ("bert-adapt-to-bbpe", ["--init_from", runs / "bert-hu-wp_hf", "--input_dir", _hdf5(hu / "bbpe_pack"),
                                "--vocab_file", hu / "vocab_bbpe", *mlm]),
    ]
    if (ja / "mecab-pack").is_dir():
        jobs += [
            ("distilbert-ja-mecab", ["--model_type", "distilbert", "--model_config", _model(runs, "distil", distil),
                                     "--input_dir", _hdf5(ja / "mecab-pack"), "--vocab_file", ja / "vocab", *mlm,
                                     "--masking", "dynamic", "--whole_word_masking"]),
            ("xlmr-adapt-to-mecab", ["--init_from", runs / "xlmr-hu-unigram_hf", "--input_dir",
                                     _hdf5(ja / "mecab-pack"), "--vocab_file", ja / "vocab", *mlm]),
        ]
    for name, argv in jobs:
        yield name, [*argv, *common], []
