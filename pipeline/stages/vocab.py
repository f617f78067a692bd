"""`pipeline vocab`: a WordPiece vocab.txt trained for the language, with a quality report.

Usage:
    pipeline --lang hu vocab                                  # from DATA_DIR/hu/filtered
    pipeline --lang uk vocab --vocab-size 16000 --model-type unigram
    pipeline --lang hu vocab --lower-case                     # lower-cased, accents kept
    pipeline vocab --input corpus/ --output /tmp/vocab --eval heldout.txt
    pipeline --lang hu vocab --from-spm hu.model              # convert an existing model
    pipeline --lang ja vocab                                  # on MeCab words (ja's default)
    pipeline --lang ja vocab --word-segmenter none            # one token per kanji, as mBERT

    build_vocab(data_dir="data", lang="hu", workers=2, vocab_size=32000)   # the API

Steps (each a resumable task): (1) one streaming pass over all input: the alphabet after the
case setting, a seeded sample of `--input-sentence-size` sentences and, unless test text is
given, a seeded 2% held out for the report; the sample is split into words the way BERT
splits; (2) sentencepiece training on those word counts; (3) conversion to vocab.txt with
BERT's special tokens and every character as `c` and `##c`, plus tokenizer_config.json with
the case setting; (4) the quality report on held-out sentences (the shard stage's test shards
when present, or --eval, or the held-out slice). Output in DATA_DIR/LANG/vocab/: spm.model,
spm.vocab, vocab.txt, tokenizer_config.json, vocab_report.json, manifest.json.

Scripts without spaces (vocab/segmenters.py, the language's "word_segmenter" or
--word-segmenter): with `mecab` (Japanese) the words are MeCab's, after NFKC, as in the Tohoku
Japanese BERT, and tokenizer_config.json makes transformers load the folder as its
BertJapaneseTokenizer; with `jieba` or `pythainlp` the tokens stay BERT's (one per Chinese
character) and the report's words are the segmenter's; Thai's sentencepiece sample is cut
at PyThaiNLP's words (BERT's split leaves a whole Thai clause as one word), so pieces stay
inside words while the tokenizer stays BERT's.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import click

from common.atomic import atomic_open, atomic_path, write_json_atomic
from pipeline.core.errors import StageError
from pipeline.core.inputs import list_text_files, resolve_output
from pipeline.core.manifest import file_sha256, fingerprint_inputs, read_manifest, require_stage_output
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir, validate_lang
from pipeline.core.runner import StageRun
from pipeline.text.language_settings import word_segmenter as language_segmenter
from vocab.convert import ConversionError, read_spm_pieces, to_wordpiece
from vocab.normalizer import is_vocab_char
from vocab.report import evaluate_vocab, format_table, too_small_message
from vocab.sample import HELDOUT_FRACTION, SampleError, draw_sample, pick_eval_sentences, read_sentences
from vocab.segmenters import CHOICES as SEGMENTER_CHOICES
from vocab.segmenters import SegmenterError, load_segmenter
from vocab.spec import NUM_SPECIALS, tokenizer_config
from vocab.train import MODEL_TYPES, TrainingError, train_sentencepiece

log = logging.getLogger("pipeline")

SPM_MODEL = "spm.model"
SPM_VOCAB = "spm.vocab"
VOCAB_TXT = "vocab.txt"
TOKENIZER_CONFIG = "tokenizer_config.json"
REPORT = "vocab_report.json"
DEFAULT_INPUT_SENTENCES = 1_000_000
# sentencepiece keeps <unk> and `▁` among its pieces; neither becomes a vocab.txt line.
SPM_EXTRA_PIECES = 2


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


def _scan(run: StageRun, files, work: Path, seed, sample_size, hold_out, eval_sentences,
          lower_case, strip_accents, sample_words=None) -> dict:
    """Task 1's work: vocab/sample.py's full pass and word counts on the runner's executor."""
    try:
        return draw_sample(run.map, files, work, seed=seed, sample_size=sample_size,
                           hold_out=hold_out, eval_sentences=eval_sentences, lower_case=lower_case,
                           strip_accents=strip_accents, sample_words=sample_words)
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


def _check_options(vocab_size, model_type, input_sentence_size, character_coverage, from_spm):
    if vocab_size < NUM_SPECIALS + 100:
        raise StageError(f"--vocab-size {vocab_size} is too small: BERT's special tokens take "
                         f"{NUM_SPECIALS} ids; use at least {NUM_SPECIALS + 100} (typically 16000-64000)")
    if model_type not in MODEL_TYPES:
        raise StageError(f"--model-type {model_type!r} is not one of {', '.join(MODEL_TYPES)}")
    if input_sentence_size < 1:
        raise StageError("--input-sentence-size must be at least 1")
    if not 0 < character_coverage <= 1:
        raise StageError(f"--character-coverage {character_coverage} must be in (0, 1], e.g. 0.9999")
    if from_spm is not None and not Path(from_spm).is_file():
        raise StageError(f"--from-spm {from_spm} is not a file: give a sentencepiece .model file")


@dataclass(frozen=True)
class VocabSettings:
    """One build's settings, checked, as every step reads them."""

    vocab_size: int
    model_type: str
    input_sentence_size: int
    character_coverage: float
    seed: int
    lower_case: bool
    strip_accents: bool
    from_spm: Path | None
    segmenter: str | None   # the language's word segmenter, None for none

    @property
    def word_tokenizer(self) -> str | None:
        """"mecab" for a vocab on MeCab words (Japanese), else None: BERT's tokens."""
        return "mecab" if self.segmenter == "mecab" else None

    @property
    def sample_words(self) -> str | None:
        """The words sentencepiece learns from: MeCab's, Thai's (BERT leaves a whole Thai
        clause as one word), or BERT's (None; Chinese: BERT splits every character anyway)."""
        return self.segmenter if self.segmenter in ("mecab", "pythainlp") else None

    def options(self, lang: str, eval_path) -> dict:
        """The manifest's options: what a rerun must match to skip the stage."""
        options = {"lang": lang, "vocab_size": self.vocab_size, "model_type": self.model_type,
                   "input_sentence_size": self.input_sentence_size,
                   "character_coverage": self.character_coverage, "seed": self.seed,
                   "lower_case": bool(self.lower_case), "strip_accents": bool(self.strip_accents),
                   "from_spm": None if self.from_spm is None else {
                       "path": str(self.from_spm), "sha256": file_sha256(self.from_spm)},
                   # Only an explicit --eval is an option: test shards that appear after a
                   # finished run must not make `pipeline run` refuse to skip this stage.
                   "eval": None if eval_path is None else str(eval_path)}
        if self.segmenter is not None:   # only then: other languages' manifests stay as they were
            options["word_segmenter"] = self.segmenter
        if self.from_spm is not None:
            options = {k: v for k, v in options.items()
                       if k not in ("model_type", "input_sentence_size", "character_coverage")}
        return options


def build_vocab(data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
                vocab_size=32000, model_type="bpe", input_sentence_size=DEFAULT_INPUT_SENTENCES,
                character_coverage=0.9999, seed=12345, lower_case=False, strip_accents=False,
                from_spm=None, eval_path=None, word_segmenter=None) -> dict:
    """Train (or convert with from_spm) the vocab of `lang`; return the summary dict."""
    lang = validate_lang(lang)
    _check_options(vocab_size, model_type, input_sentence_size, character_coverage, from_spm)
    settings = VocabSettings(vocab_size, model_type, input_sentence_size, character_coverage, seed,
                             lower_case, strip_accents, from_spm, resolve_segmenter(lang, word_segmenter))
    if settings.word_tokenizer and strip_accents:
        raise StageError("--strip-accents does not go with MeCab words (transformers' Japanese "
                         "tokenizer keeps accents): leave it out, or pass --word-segmenter none")
    files, input_root = _resolve_inputs(data_dir, lang, input, from_spm)
    eval_files, eval_source = _resolve_eval(data_dir, lang, input, eval_path)
    out = resolve_output(data_dir, lang, "vocab", output)
    options = settings.options(lang, eval_path)
    fp = fingerprint_inputs([p for p in (input_root, eval_path) if p is not None])
    run = StageRun("vocab", out, options, fp, force=force, workers=workers)
    if run.complete:
        return run.skip()

    scan_info = _scan_step(run, settings, files, eval_files, eval_source)
    _check_sample(scan_info, settings, files, input_root, eval_source)
    train_seconds = _train_step(run, settings, out, scan_info)
    conv_info = _convert_step(run, settings, out, has_text=bool(files))
    report = _report_step(run, settings, out, options, scan_info, conv_info, train_seconds)
    outputs = [out / n for n in (SPM_MODEL, SPM_VOCAB, VOCAB_TXT, TOKENIZER_CONFIG, REPORT)
               if (out / n).is_file()]
    return run.finish(_summary(settings, scan_info, conv_info, report, train_seconds), outputs=outputs)


def _scan_step(run: StageRun, s: VocabSettings, files, eval_files, eval_source) -> dict:
    """Task 1, the full pass over the input (alphabet, sample, held-out); returns its record."""
    if not run.task_done("scan"):
        t0 = time.time()
        eval_sentences = pick_eval_sentences(eval_files, s.seed) if eval_files else []
        work = run.work_dir
        if files:
            info = _scan(run, files, work, s.seed, 0 if s.from_spm else s.input_sentence_size,
                         hold_out=not eval_files, eval_sentences=eval_sentences,
                         lower_case=s.lower_case, strip_accents=s.strip_accents,
                         sample_words=s.sample_words)
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


def _train_step(run: StageRun, s: VocabSettings, out: Path, scan_info: dict) -> float:
    """Task 2, sentencepiece on exactly the sample drawn (or the --from-spm model copied);
    returns the seconds it took."""
    if not run.task_done("train"):
        t0 = time.time()
        if s.from_spm is not None:
            with atomic_path(out / SPM_MODEL) as tmp:
                shutil.copyfile(s.from_spm, tmp)
        else:
            log.info("vocab: training %s on %s words (%s distinct) from %s sentences", s.model_type,
                     f"{scan_info['sample_words']:,}", f"{scan_info['distinct_words']:,}",
                     f"{scan_info['sample_sentences']:,}")
            work = run.work_dir
            try:
                model = train_sentencepiece(work / "sample.tsv", work / "spm",
                                            s.vocab_size - NUM_SPECIALS + SPM_EXTRA_PIECES,
                                            s.model_type, s.character_coverage, s.seed,
                                            split_by_script=s.word_tokenizer is None)
            except TrainingError as exc:
                raise StageError(str(exc)) from None
            os.replace(work / "spm.vocab", out / SPM_VOCAB)
            os.replace(model, out / SPM_MODEL)
        run.mark_done("train", {"seconds": round(time.time() - t0, 3)})
    return run.task_info("train")["seconds"]


def _convert_step(run: StageRun, s: VocabSettings, out: Path, has_text: bool) -> dict:
    """Task 3, the WordPiece vocab.txt and the case setting beside it; returns its record."""
    if not run.task_done("convert"):
        try:
            pieces = read_spm_pieces(out / SPM_MODEL)
        except ConversionError as exc:
            raise StageError(str(exc)) from None
        if has_text:
            alphabet = set(json.loads((run.work_dir / "alphabet.json").read_text(encoding="utf-8")))
        else:
            log.warning("vocab: no input text (no filtered output, no --input): the alphabet "
                        "comes from the model's pieces only")
            alphabet = {c for p in pieces for c in p.lstrip("\u2581") if is_vocab_char(c)}
        try:
            tokens, conv = to_wordpiece(pieces, alphabet, s.vocab_size, s.lower_case, s.strip_accents,
                                        word_tokenizer=s.word_tokenizer)
        except ConversionError as exc:
            raise StageError(str(exc)) from None
        with atomic_open(out / VOCAB_TXT) as fh:
            fh.writelines(t + "\n" for t in tokens)
        write_json_atomic(out / TOKENIZER_CONFIG, tokenizer_config(s.lower_case, s.strip_accents,
                                                                   word_tokenizer=s.word_tokenizer))
        run.mark_done("convert", conv.as_dict() | {"vocab_size": len(tokens)})
    conv_info = run.task_info("convert")
    if conv_info["vocab_size"] < s.vocab_size:
        log.warning("vocab: warning: %s tokens, fewer than --vocab-size %s: the input has too "
                    "little text for that many pieces", f"{conv_info['vocab_size']:,}", f"{s.vocab_size:,}")
    return conv_info


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
              help="sentencepiece's algorithm; either becomes a WordPiece vocab.txt.")
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
@force_option
@click.pass_obj
def command(g, input_, output, vocab_size, model_type, input_sentence_size, character_coverage,
            seed, lower_case, strip_accents, from_spm, eval_path, word_segmenter, force):
    """Train a WordPiece vocab.txt (sentencepiece BPE/unigram) and report its quality."""
    build_vocab(**g.kwargs(), input=input_, output=output, force=force, vocab_size=vocab_size,
                model_type=model_type, input_sentence_size=input_sentence_size,
                character_coverage=character_coverage, seed=seed, lower_case=lower_case,
                strip_accents=strip_accents, from_spm=from_spm, eval_path=eval_path,
                word_segmenter=word_segmenter)
