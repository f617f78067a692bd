"""`pipeline vocab`: a WordPiece vocab.txt trained for the language, with a quality report.

Usage:
    pipeline --lang hu vocab                                  # from DATA_DIR/hu/filtered
    pipeline --lang uk vocab --vocab-size 16000 --model-type unigram
    pipeline --lang hu vocab --lower-case                     # lower-cased, accents kept
    pipeline vocab --input corpus/ --output /tmp/vocab --eval heldout.txt
    pipeline --lang hu vocab --from-spm hu.model              # convert an existing model
    pipeline --lang ja vocab                                  # on MeCab words (ja's default)
    pipeline --lang ja vocab --word-segmenter none            # one token per kanji, as mBERT
    pipeline --lang hu vocab --model-type bytelevel-bpe       # RoBERTa-style tokenizer.json
    pipeline --lang hu vocab --compare xlm-roberta-base/      # an old tokenizer against this vocab

    build_vocab(data_dir="data", lang="hu", workers=2, vocab_size=32000)   # the API

Steps (each a resumable task): (1) one streaming pass over all input: the alphabet after the
case setting, a seeded sample of `--input-sentence-size` sentences and, unless test text is
given, a seeded 2% held out for the report; the sample is split into words the way BERT
splits; (2) sentencepiece training on those word counts; (3) conversion to vocab.txt with
BERT's special tokens and every character as `c` and `##c`, plus tokenizer_config.json with
the case setting; (4) the quality report on held-out sentences (the shard stage's test shards
when present, or --eval, or the held-out slice). Output in DATA_DIR/LANG/vocab/: spm.model,
spm.vocab, vocab.txt, tokenizer_config.json, vocab_report.json, manifest.json.

`--model-type bytelevel-bpe`: steps (2)+(3) train a RoBERTa-style byte-level BPE on the sample's
sentences (vocab/training/bytelevel.py) into tokenizer.json, tokenizer_config.json, special_tokens_map.json
(no vocab.txt), which `pipeline encode` takes as a tokenizer. `--compare DIR` trains nothing: it
measures DIR (any tokenizer folder or vocab.txt) against the finished vocab on the report's
held-out words (vocab/reports/compare.py), prints the table, writes vocab_compare_NAME.json beside it.

Scripts without spaces (vocab/core/segmenters.py, the language's "word_segmenter" or
--word-segmenter): with `mecab` (Japanese) the words are MeCab's, after NFKC, as in the Tohoku
Japanese BERT, and tokenizer_config.json makes transformers load the folder as its
BertJapaneseTokenizer; with `jieba` or `pythainlp` the tokens stay BERT's (one per Chinese
character) and the report's words are the segmenter's; Thai's sentencepiece sample is cut
at PyThaiNLP's words (BERT's split leaves a whole Thai clause as one word), so pieces stay
inside words while the tokenizer stays BERT's.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import click

from common.atomic import write_json_atomic
from pipeline.core.errors import StageError
from pipeline.core.inputs import list_text_files, resolve_output
from pipeline.core.manifest import fingerprint_inputs, read_manifest, require_stage_output
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir, validate_lang
from pipeline.core.runner import StageRun
from pipeline.text.language_settings import word_segmenter as language_segmenter
from vocab.core.layout import (
    NUM_SPECIALS,
    SPECIAL_TOKENS_MAP,
    TOKENIZER_CONFIG,
    TOKENIZER_JSON,
    VOCAB_TXT,
    TrainingError,
    VocabError,
)
from vocab.core.segmenters import CHOICES as SEGMENTER_CHOICES
from vocab.core.segmenters import SegmenterError, load_segmenter
from vocab.kinds import MODEL_TYPES, load_tokenizer, training_kind
from vocab.kinds.base import TrainingJob
from vocab.kinds.wordpiece import SPM_MODEL, SPM_VOCAB
from vocab.reports.compare import compare_tokenizers, format_comparison, record_name
from vocab.reports.quality import evaluate_vocab, format_table, too_small_message
from vocab.training.sample import HELDOUT_FRACTION, SampleError, draw_sample, pick_eval_sentences, read_sentences
from vocab.training.settings import VocabSettings, check_options

log = logging.getLogger("pipeline")

REPORT = "vocab_report.json"
DEFAULT_INPUT_SENTENCES = 1_000_000


def _text_files_in(folder: Path, pattern: str = "*.txt") -> list[Path]:
    """The stage's own files, top level only (never a subfolder of rejects or reports)."""
    return [p for p in list_text_files(folder, pattern) if p.parent == folder]


def _resolve_inputs(data_dir, lang, input, from_spm) -> tuple[list[Path], Path | None]:
    """(input files, the path that identifies them); no files only for --from-spm without text."""
    if input is not None:
        return list_text_files(input), Path(input)
    filtered = stage_dir(data_dir, lang, "filter")
    if from_spm is not None and read_manifest(filtered) is None:
        return [], None
    require_stage_output(filtered, "filter")
    return _text_files_in(filtered), filtered


def _resolve_eval(data_dir, lang, input, eval_path) -> tuple[list[Path], str]:
    """(eval files, description): --eval, else the test shards when the shard stage has
    finished (only for the default input), else none (a slice of the input is held out)."""
    if eval_path is not None:
        return list_text_files(eval_path), f"--eval {eval_path}"
    if input is None:
        sharded = stage_dir(data_dir, lang, "shard")
        if read_manifest(sharded) is not None:
            tests = [p for p in sorted(sharded.glob("*_test_*.txt")) if not p.name.startswith(".")]
            if tests:
                return tests, f"test shards in {sharded}"
    return [], ""


def _scan(run: StageRun, files, work: Path, seed, sample_size, hold_out, eval_sentences, words,
          keep_text=False) -> dict:
    """Task 1's work: vocab/training/sample.py's full pass and word counts on the runner's executor."""
    try:
        return draw_sample(run.map, files, work, seed=seed, sample_size=sample_size,
                           hold_out=hold_out, eval_sentences=eval_sentences, words=words,
                           **({"keep_text": True} if keep_text else {}))
    except (SampleError, SegmenterError) as exc:
        raise StageError(str(exc)) from None


def resolve_segmenter(lang: str, option: str | None) -> str | None:
    """The word segmenter for `lang` (None for none), loaded once here so that a missing
    package is one line before any work starts."""
    name = language_segmenter(lang, option)
    if name is not None:
        try:
            load_segmenter(name)
        except SegmenterError as exc:
            raise StageError(str(exc)) from None
    return name


def build_vocab(data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
                vocab_size=32000, model_type="bpe", input_sentence_size=DEFAULT_INPUT_SENTENCES,
                character_coverage=0.9999, seed=12345, lower_case=False, strip_accents=False,
                from_spm=None, eval_path=None, word_segmenter=None) -> dict:
    """Train (or convert with from_spm) the vocab of `lang`; return the summary dict."""
    lang = validate_lang(lang)
    segmenter = language_segmenter(lang, word_segmenter)
    try:
        kind = training_kind(model_type, segmenter)
        kind.check_training(vocab_size, from_spm, strip_accents, segmenter)
        check_options(vocab_size, input_sentence_size, character_coverage, from_spm)
    except TrainingError as exc:
        raise StageError(str(exc)) from None
    settings = VocabSettings(vocab_size, model_type, input_sentence_size, character_coverage, seed,
                             lower_case, strip_accents, from_spm, resolve_segmenter(lang, word_segmenter))
    files, input_root = _resolve_inputs(data_dir, lang, input, from_spm)
    eval_files, eval_source = _resolve_eval(data_dir, lang, input, eval_path)
    out = resolve_output(data_dir, lang, "vocab", output)
    options = settings.options(lang, eval_path, character_coverage=kind.uses_character_coverage)
    fp = fingerprint_inputs([p for p in (input_root, eval_path) if p is not None])
    run = StageRun("vocab", out, options, fp, force=force, workers=workers)
    if run.complete:
        return run.skip()

    scan_info = _scan_step(run, kind, settings, files, eval_files, eval_source)
    _check_sample(scan_info, settings, files, input_root, eval_source)
    conv_info, train_seconds = _train_step(run, kind, settings, out, scan_info, has_text=bool(files))
    report = _report_step(run, settings, out, options, scan_info, conv_info, train_seconds)
    outputs = [out / n for n in (SPM_MODEL, SPM_VOCAB, VOCAB_TXT, TOKENIZER_JSON, TOKENIZER_CONFIG,
                                 SPECIAL_TOKENS_MAP, REPORT) if (out / n).is_file()]
    return run.finish(_summary(settings, scan_info, conv_info, report, train_seconds), outputs=outputs)


def compare_vocab(data_dir="data", lang="hu", old=None, output=None, eval_path=None, seed=12345,
                  word_segmenter=None) -> dict:
    """`pipeline vocab --compare OLD`: OLD (any tokenizer folder or vocab.txt) against this
    language's finished vocab on the report's held-out sentences (the test shards or --eval);
    prints the table and writes vocab_compare_NAME.json in the vocab folder."""
    new_dir = Path(output) if output is not None else stage_dir(data_dir, validate_lang(lang), "vocab")
    require_stage_output(new_dir, "vocab", option="--output")
    try:
        old_spec, new_spec = load_tokenizer(old), load_tokenizer(new_dir)
    except VocabError as exc:
        raise StageError(f"--compare {old}: {exc}") from None
    eval_files, source = _resolve_eval(data_dir, lang, None, eval_path)
    if not eval_files:
        raise StageError("--compare needs held-out text: run `pipeline shard` first (its test "
                         "shards), or give held-out sentences with --eval PATH")
    sentences = pick_eval_sentences(eval_files, seed)
    try:
        rep = compare_tokenizers(old_spec, new_spec, sentences, source=source,
                                 segmenter=resolve_segmenter(lang, word_segmenter))
    except SegmenterError as exc:
        raise StageError(f"vocab --compare: {exc}") from None
    record = new_dir / f"vocab_compare_{record_name(old_spec)}.json"
    write_json_atomic(record, rep)
    log.info("vocab: %s against %s on held-out sentences\n%s\n  (recorded in %s)", old_spec.folder,
             new_spec.folder, format_comparison(rep), record)
    if too_small_message(len(sentences)):
        log.warning("vocab: warning: %s", too_small_message(len(sentences)))
    return rep


def _scan_step(run: StageRun, kind, s: VocabSettings, files, eval_files, eval_source) -> dict:
    """Task 1, the full pass over the input (alphabet, sample, held-out); returns its record."""
    if not run.task_done("scan"):
        t0 = time.time()
        eval_sentences = pick_eval_sentences(eval_files, s.seed) if eval_files else []
        work = run.work_dir
        if files:
            info = _scan(run, files, work, s.seed, 0 if s.from_spm else s.input_sentence_size,
                         hold_out=not eval_files, eval_sentences=eval_sentences,
                         words=kind.sample_words(s.lower_case, s.strip_accents, s.segmenter),
                         keep_text=kind.keeps_sample_text)
        else:
            (work / "eval.txt").write_text("".join(x + "\n" for x in eval_sentences), encoding="utf-8")
            info = {"sentences": 0, "eval_sentences": len(eval_sentences), "alphabet": None}
        if info["eval_sentences"] and not eval_source:
            eval_source = f"{HELDOUT_FRACTION:.0%} of the input held out (seed {s.seed})"
        info["eval_source"] = eval_source
        info["seconds"] = round(time.time() - t0, 3)
        run.mark_done("scan", info)
    return run.task_info("scan")


def _check_sample(scan_info: dict, s: VocabSettings, files, input_root, eval_source: str) -> None:
    """A StageError when there is text but nothing left to train on."""
    if not files or scan_info["sample_sentences"] or s.from_spm is not None:
        return
    if scan_info["sentences"]:
        raise StageError(
            f"all {scan_info['sentences']:,} sentences in {input_root} also occur in the "
            f"held-out text ({scan_info.get('eval_source') or eval_source}), which is never "
            "trained on: give more text, or other held-out text with --eval")
    raise StageError(f"no sentences to train on in {input_root}: check --input "
                     "(one sentence a line, UTF-8)")


def _train_step(run: StageRun, kind, s: VocabSettings, out: Path, scan_info: dict,
                has_text: bool) -> tuple[dict, float]:
    """Tasks 2 and 3: the kind trained on the sample and written into `out` (sentencepiece then
    vocab.txt, or a byte-level BPE's tokenizer.json: vocab/kinds); (its record, the seconds
    training took)."""
    job = TrainingJob(run.work_dir, out, s.vocab_size, s.model_type, s.lower_case, s.strip_accents,
                      s.character_coverage, s.seed, s.from_spm, has_text, sample=scan_info,
                      steps=run, log=log)
    try:
        return kind.train(job)
    except TrainingError as exc:
        raise StageError(str(exc)) from None


def _report_step(run: StageRun, s: VocabSettings, out: Path, options: dict, scan_info: dict,
                 conv_info: dict, train_seconds: float) -> dict:
    """Step 4, the quality report on the held-out sentences, with the tokenizer encode will use."""
    eval_sentences = list(read_sentences(run.work_dir / "eval.txt"))
    try:
        rep = evaluate_vocab(out, eval_sentences, source=scan_info.get("eval_source", ""),
                             segmenter=s.segmenter)
    except SegmenterError as exc:
        raise StageError(f"vocab report: {exc}") from None
    rep["settings"] = options
    rep["input"] = {k: v for k, v in scan_info.items() if k not in ("eval_source", "seconds")}
    rep["scan_seconds"] = scan_info["seconds"]
    rep["conversion"] = conv_info
    rep["train_seconds"] = train_seconds
    write_json_atomic(out / REPORT, rep)
    if eval_sentences:
        log.info("vocab: quality on held-out sentences\n%s", format_table(rep))
        if too_small_message(len(eval_sentences)):
            log.warning("vocab: warning: %s", too_small_message(len(eval_sentences)))
    else:
        log.warning("vocab: no held-out sentences to measure the vocab on (give --eval PATH)")
    return rep


def _summary(s: VocabSettings, scan_info: dict, conv_info: dict, rep: dict, train_seconds: float) -> dict:
    """The stage's summary line and manifest summary."""
    case = ("lower-cased" if s.lower_case else "cased") + (", accents stripped" if s.strip_accents else "")
    return {"vocab_size": conv_info["vocab_size"], "case": case,
            "unk_tokens": f"{100 * rep['unk_token_share']:.4f}%",
            "subwords_per_word": round(rep["subwords_per_word"], 4),
            "sentences": scan_info.get("sentences", 0),
            "sample_sentences": scan_info.get("sample_sentences", 0),
            "train_seconds": train_seconds}


@click.command("vocab")
@click.option("--input", "input_", type=click.Path(exists=True, path_type=Path), default=None,
              help="Sentences, one a line: a .txt file or a folder [default: DATA_DIR/LANG/filtered].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/vocab].")
@click.option("--vocab-size", type=click.IntRange(min=NUM_SPECIALS + 100), default=32000,
              show_default=True, help="Lines of vocab.txt, special tokens included.")
@click.option("--model-type", type=click.Choice(MODEL_TYPES), default="bpe", show_default=True,
              help="sentencepiece's bpe or unigram, either converted to a WordPiece vocab.txt; or "
                   "bytelevel-bpe, a byte-level BPE tokenizer.json as RoBERTa and ModernBERT use.")
@click.option("--input-sentence-size", type=click.IntRange(min=1), default=DEFAULT_INPUT_SENTENCES,
              show_default=True, help="Sentences in the seeded training sample.")
@click.option("--character-coverage", type=click.FloatRange(0, 1, min_open=True),
              default=0.9999, show_default=True,
              help="sentencepiece's coverage; rarer characters still get c and ##c.")
@click.option("--seed", type=int, default=12345, show_default=True,
              help="Seed of the training sample and of the held-out sentences.")
@click.option("--lower-case", is_flag=True, help="Lower-case the text (accents are kept).")
@click.option("--strip-accents", is_flag=True,
              help="Strip accents (with or without --lower-case), as BERT's normaliser does.")
@click.option("--from-spm", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Convert this sentencepiece model instead of training one.")
@click.option("--eval", "eval_path", type=click.Path(exists=True, path_type=Path), default=None,
              help="Held-out sentences for the report [default: the test shards, else a seeded "
                   "2% of the input].")
@click.option("--word-segmenter", type=click.Choice(SEGMENTER_CHOICES), default=None,
              help="Words of a script without spaces [default: the language's: ja mecab (a "
                   "vocab on MeCab words), zh jieba, th pythainlp (their words in the report "
                   "only)]; none: BERT's split, one token per CJK character.")
@click.option("--compare", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Measure another tokenizer (a transformers tokenizer folder or a vocab.txt) "
                   "against this language's finished vocab on the held-out text; trains nothing.")
@force_option
@click.pass_obj
def command(g, input_, output, vocab_size, model_type, input_sentence_size, character_coverage,
            seed, lower_case, strip_accents, from_spm, eval_path, word_segmenter, compare, force):
    """Train a WordPiece vocab.txt (sentencepiece BPE/unigram) or a byte-level BPE
    tokenizer.json, and report its quality; or compare another tokenizer with it."""
    if compare is not None:
        compare_vocab(data_dir=g.data_dir, lang=g.lang, old=compare, output=output,
                      eval_path=eval_path, seed=seed, word_segmenter=word_segmenter)
        return
    build_vocab(**g.kwargs(), input=input_, output=output, force=force, vocab_size=vocab_size,
                model_type=model_type, input_sentence_size=input_sentence_size,
                character_coverage=character_coverage, seed=seed, lower_case=lower_case,
                strip_accents=strip_accents, from_spm=from_spm, eval_path=eval_path,
                word_segmenter=word_segmenter)
