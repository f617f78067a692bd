"""`pipeline joint-vocab`: one vocabulary for several languages, their shares smoothed by an
exponent, with the price each language pays for sharing it.

Usage:
    pipeline --lang hr,sr,bs joint-vocab                      # -> DATA_DIR/multi/bs+hr+sr/vocab
    pipeline --lang uk,vi joint-vocab --vocab-size 16000 --sampling-alpha 0.7
    pipeline --lang uk,vi joint-vocab --model-type bytelevel-bpe --output /tmp/uk_vi_bpe
    pipeline --lang hr encode --vocab data/multi/bs+hr+sr/vocab    # each language's encode

    build_joint_vocab(data_dir="data", langs=("hr", "sr", "bs"), workers=2, vocab_size=32000,
                      sampling_alpha=0.3)                     # the API

Reads each language's finished DATA_DIR/LANG/filtered/ (and its test shards, the held-out text
of the report, when the shard stage has finished). Steps, each a resumable task: (1) the joint
sample (vocab/joint/sample.py): a language's share of the sample ∝ (its share of the sentences)^α,
normalised, exactly, each language's words cut by its own segmenter (ja MeCab, th PyThaiNLP),
its held-out sentences kept out; (2) sentencepiece on the sample's word counts, or a byte-level
BPE on its sentences (--model-type bytelevel-bpe); (3) conversion to a WordPiece vocab.txt with
every character of every language as `c` and `##c`; (4) the report: per language, its share of
the text and of the sample, and pieces per word, words kept whole and [UNK] on its held-out
sentences with the joint vocab and with its own vocab (DATA_DIR/LANG/vocab, the vocab stage's:
`pipeline run` trains it at the joint vocab's size unless --own-vocab-size says otherwise).

Writes DATA_DIR/multi/{codes sorted, joined by '+'}/vocab/ (or --output): vocab.txt,
tokenizer_config.json, spm.model, spm.vocab (tokenizer.json, special_tokens_map.json for a
byte-level BPE), joint_report.json, manifest.json (options.languages, options.sampling_alpha:
what encode records when it encodes with this vocab). The same bytes for any --workers.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import click

from common.atomic import write_json_atomic
from pipeline.core.errors import StageError
from pipeline.core.inputs import list_text_files
from pipeline.core.manifest import fingerprint_inputs, read_manifest
from pipeline.core.options import force_option
from pipeline.core.registry import joint_dir, stage_dir
from pipeline.core.runner import StageRun
from pipeline.text.language_settings import word_segmenter as language_segmenter
from vocab.core.layout import (
    NUM_SPECIALS,
    SPECIAL_TOKENS_MAP,
    TOKENIZER_CONFIG,
    TOKENIZER_JSON,
    VOCAB_TXT,
    TrainingError,
)
from vocab.core.segmenters import SegmenterError, load_segmenter
from vocab.joint.report import format_joint_table
from vocab.joint.sample import LanguageText, draw_joint_sample, joint_eval_sentences
from vocab.kinds import MODEL_TYPES, load_tokenizer, training_kind
from vocab.kinds.base import TrainingJob
from vocab.kinds.wordpiece import SPM_MODEL, SPM_VOCAB
from vocab.reports.quality import MIN_EVAL_SENTENCES, evaluate_vocab, too_small_message
from vocab.training.sample import SampleError, pick_eval_sentences
from vocab.training.settings import check_options

log = logging.getLogger("pipeline")

REPORT = "joint_report.json"
DEFAULT_ALPHA = 0.3
DEFAULT_INPUT_SENTENCES = 1_000_000


def _segmenter(lang: str) -> str | None:
    """The language's word segmenter (ja mecab, zh jieba, th pythainlp), loaded once here so
    that a missing package is one line before any work."""
    name = language_segmenter(lang, None)
    if name is not None:
        try:
            load_segmenter(name)
        except SegmenterError as exc:
            raise StageError(f"{lang}: {exc}") from None
    return name


def _language_text(data_dir, lang: str, seed: int) -> LanguageText:
    """A language's filtered sentences and held-out text (its test shards, when there are)."""
    filtered = stage_dir(data_dir, lang, "filter")
    if read_manifest(filtered) is None:
        raise StageError(f"{lang}: {filtered} holds no finished filter output: run its stages first "
                         f"(pipeline --lang {lang} run --dump DUMP --no-encode), or leave {lang} out "
                         "of --lang")
    try:
        files = [p for p in list_text_files(filtered) if p.parent == filtered]
    except StageError as exc:
        raise StageError(f"{lang}: {exc}") from None
    sharded = stage_dir(data_dir, lang, "shard")
    tests = sorted(p for p in sharded.glob("*_test_*.txt") if not p.name.startswith(".")) \
        if read_manifest(sharded) is not None else []
    return LanguageText(lang, tuple(files), tuple(pick_eval_sentences(tests, seed)) if tests else (),
                        _segmenter(lang))


def build_joint_vocab(data_dir="data", langs=("hr", "sr"), workers=None, output=None, force=False,
                      vocab_size=32000, sampling_alpha=DEFAULT_ALPHA, model_type="bpe",
                      input_sentence_size=DEFAULT_INPUT_SENTENCES, character_coverage=0.9999,
                      seed=12345, lower_case=False, strip_accents=False) -> dict:
    """Train the joint vocab of `langs` (see the module doc); return the summary dict."""
    langs = tuple(sorted(langs))
    if len(langs) < 2:
        raise StageError(f"--lang {','.join(langs)}: a joint vocab is for several languages (e.g. "
                         "--lang hr,sr,bs); for one language use `pipeline vocab`")
    if not 0 <= sampling_alpha <= 1:
        raise StageError(f"--sampling-alpha {sampling_alpha} must be in [0, 1]: 1 keeps the text's "
                         "proportions, 0 gives every language the same share (XLM-R: 0.3)")
    try:   # a joint vocab's words are BERT's, cut at each language's words: never MeCab's own
        kind = training_kind(model_type, None)
        kind.check_training(vocab_size, None, strip_accents, None)
        check_options(vocab_size, input_sentence_size, character_coverage, None)
    except TrainingError as exc:
        raise StageError(str(exc)) from None
    texts = [_language_text(data_dir, lang, seed) for lang in langs]
    out = Path(output) if output is not None else joint_dir(data_dir, langs) / "vocab"
    options = {"languages": list(langs), "sampling_alpha": sampling_alpha, "vocab_size": vocab_size,
               "model_type": model_type, "input_sentence_size": input_sentence_size,
               "character_coverage": character_coverage, "seed": seed,
               "lower_case": bool(lower_case), "strip_accents": bool(strip_accents),
               "word_segmenters": {t.lang: t.segmenter for t in texts if t.segmenter}}
    if not kind.uses_character_coverage:   # every byte is a piece: no character coverage
        del options["character_coverage"]
    fp = fingerprint_inputs([stage_dir(data_dir, lang, "filter") for lang in langs])
    run = StageRun("joint-vocab", out, options, fp, force=force, workers=workers)
    if run.complete:
        return run.skip()

    scan = _scan_step(run, texts, seed, input_sentence_size, sampling_alpha, lower_case,
                      strip_accents, kind.keeps_sample_text)
    job = TrainingJob(run.work_dir, out, vocab_size, model_type, lower_case, strip_accents,
                      character_coverage, seed, steps=run)
    try:
        size = kind.train(job)[0]["vocab_size"]
    except TrainingError as exc:
        raise StageError(str(exc)) from None
    if size < vocab_size:
        log.warning("joint-vocab: warning: %s pieces, fewer than --vocab-size %s: the languages have "
                    "too little text for that many", f"{size:,}", f"{vocab_size:,}")
    _report_step(run, out, data_dir, texts, scan, options)
    outputs = [out / n for n in (SPM_MODEL, SPM_VOCAB, VOCAB_TXT, TOKENIZER_JSON, TOKENIZER_CONFIG,
                                 SPECIAL_TOKENS_MAP, REPORT) if (out / n).is_file()]
    summary = {"vocab_size": size, "languages": "+".join(langs), "sampling_alpha": sampling_alpha,
               "sample_sentences": scan["sample_sentences"],
               "sample_shares": ", ".join(f"{lang} {100 * f['sample_share']:.1f}%"
                                          for lang, f in scan["languages"].items()),
               "output": str(out)}
    return run.finish(summary, outputs=outputs)


def _scan_step(run: StageRun, texts, seed, size, alpha, lower_case, strip_accents, keep_text) -> dict:
    """Task 1: the joint sample (vocab/joint/sample.py); returns its record."""
    if not run.task_done("scan"):
        t0 = time.time()
        try:
            info = draw_joint_sample(run.map, texts, run.work_dir, seed=seed, sample_size=size,
                                     alpha=alpha, lower_case=lower_case,
                                     strip_accents=strip_accents, keep_text=keep_text)
        except (SampleError, SegmenterError) as exc:
            raise StageError(str(exc)) from None
        empty = [lang for lang, f in info["languages"].items() if not f["sentences"]]
        if empty:
            raise StageError(f"{', '.join(empty)}: no sentence in the filter stage's output: "
                             "check that language's run (pipeline --lang XX report shows where its "
                             "text went), or leave it out of --lang")
        info["seconds"] = round(time.time() - t0, 3)
        run.mark_done("scan", info)
    return run.task_info("scan")


def _measure(folder: Path, sentences, source: str, segmenter) -> dict:
    rep = evaluate_vocab(folder, sentences, source=source, segmenter=segmenter)
    return {k: rep[k] for k in ("vocab_size", "subwords_per_word", "whole_word_share",
                                "unk_token_share", "unk_word_share", "words", "unk_examples")}


def _own_vocab(data_dir, lang: str) -> tuple[Path | None, str | None]:
    """The language's own vocab (the vocab stage's, finished) and the words its report counts."""
    folder = stage_dir(data_dir, lang, "vocab")
    m = read_manifest(folder)
    if m is None or not ((folder / VOCAB_TXT).is_file() or (folder / TOKENIZER_JSON).is_file()):
        return None, None
    return folder, (m.get("options") or {}).get("word_segmenter")


def _report_step(run: StageRun, out: Path, data_dir, texts, scan: dict, options: dict) -> dict:
    """Step 4: per language, the joint vocab against its own on its held-out sentences."""
    languages, small = {}, []
    for t in texts:
        sentences = joint_eval_sentences(run.work_dir, t.lang)
        source = "test shards" if t.eval_sentences else "2% of its sentences held out"
        own_dir, own_words = _own_vocab(data_dir, t.lang)
        try:
            joint = _measure(out, sentences, source, t.segmenter)
            own = _measure(own_dir, sentences, source, own_words) if own_dir else None
        except SegmenterError as exc:
            raise StageError(f"joint-vocab report: {t.lang}: {exc}") from None
        if own_dir is None:
            log.warning("joint-vocab: warning: %s has no finished own vocab (%s) to compare with: "
                        "run `pipeline --lang %s vocab --vocab-size %s`", t.lang,
                        stage_dir(data_dir, t.lang, "vocab"), t.lang, options["vocab_size"])
        if too_small_message(len(sentences)):
            small.append(f"{t.lang} {len(sentences):,}")
        languages[t.lang] = {**scan["languages"][t.lang], "eval_source": source,
                             "joint": joint, "own": own and {"folder": str(own_dir.resolve()), **own}}
    rep = {"settings": options, "vocab_size": _size(out), "languages": languages,
           "input": {k: v for k, v in scan.items() if k not in ("languages", "seconds")},
           "scan_seconds": scan["seconds"]}
    write_json_atomic(out / REPORT, rep)
    if small:
        log.warning("joint-vocab: warning: held-out sentences (%s) under %s are too few for the "
                    "figures to mean much: hold out more text with `pipeline --lang LANG shard "
                    "--min-test-sentences N --force`", ", ".join(small), f"{MIN_EVAL_SENTENCES:,}")
    log.info("joint-vocab: each language's held-out sentences, joint vocab against its own\n%s",
             format_joint_table(rep))
    return rep


def _size(out: Path) -> int:
    return load_tokenizer(out).size


@click.command("joint-vocab")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/multi/{the codes sorted, joined by '+'}/vocab].")
@click.option("--vocab-size", type=click.IntRange(min=NUM_SPECIALS + 100), default=32000,
              show_default=True, help="Lines of vocab.txt, special tokens included.")
@click.option("--sampling-alpha", type=click.FloatRange(0, 1), default=DEFAULT_ALPHA,
              show_default=True, help="A language's share of the sample ∝ (its share of the "
              "text)^ALPHA: 1 keeps the proportions, 0 gives every language the same share.")
@click.option("--model-type", type=click.Choice(MODEL_TYPES), default="bpe", show_default=True,
              help="sentencepiece's bpe or unigram (-> WordPiece vocab.txt), or bytelevel-bpe.")
@click.option("--input-sentence-size", type=click.IntRange(min=1), default=DEFAULT_INPUT_SENTENCES,
              show_default=True, help="Sentences in the seeded sample, all languages together.")
@click.option("--character-coverage", type=click.FloatRange(0, 1, min_open=True), default=0.9999,
              show_default=True, help="sentencepiece's coverage; rarer characters still get c and ##c.")
@click.option("--seed", type=int, default=12345, show_default=True,
              help="Seed of the sample and of the held-out sentences.")
@click.option("--lower-case", is_flag=True, help="Lower-case the text (accents are kept).")
@click.option("--strip-accents", is_flag=True, help="Strip accents, as BERT's normaliser does.")
@force_option
@click.pass_obj
def command(g, output, vocab_size, sampling_alpha, model_type, input_sentence_size,
            character_coverage, seed, lower_case, strip_accents, force):
    """One vocab for several languages (--lang hr,sr,bs), their shares smoothed by
    --sampling-alpha, compared per language with its own vocab."""
    build_joint_vocab(data_dir=g.data_dir, langs=g.languages, workers=g.workers, output=output,
                      force=force, vocab_size=vocab_size, sampling_alpha=sampling_alpha,
                      model_type=model_type, input_sentence_size=input_sentence_size,
                      character_coverage=character_coverage, seed=seed, lower_case=lower_case,
                      strip_accents=strip_accents)
