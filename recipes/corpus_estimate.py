"""The corpus's tokens, estimated from the dump before any stage has run: what `make pretrain
--dry-run` (recipes/pretrain_plan.py) bounds a GPU's step by until `pipeline encode` has
counted them, and its vocab size before the corpus is filtered.

    found = estimate_corpus(Path("ukwiki.xml.xz"), "uk")   # None where the dump cannot be read
    found.tokens, found.words                # ~590,000; the words counted, as the vocab rule reads them
    found.line()                             # "corpus: about 590,000 tokens, estimated from ..."

How: the dump's articles are read in dump order (any compression, a truncated dump too) up to
SAMPLE_XML_BYTES of its XML, each through the extract stage's wikiextractor and the format
stage's cleaning; their words are counted as the vocab stage counts them (recipes/vocab_rule.py:
BERT's split, MeCab's words for Japanese, a character a word for Chinese, cut at PyThaiNLP's
words for Thai), each word max(1, TOKENS_PER_CHAR x its characters) tokens: a frequent word is
one piece of the vocab, a long rare one several. Scaled by the share of the file read. Against
the tokens `pipeline encode` wrote (bench/bench_corpus_estimate.py, bench/README.md): the shipped
hu sample 1.41x the estimate, the ja / zh / th / hy fixtures 1.07x / 1.04x / 1.35x / 0.68x, the
truncated ukwiki and viwiki 0.83x and 1.05x; within 2x is what the tests hold it to.
"""
from __future__ import annotations

import functools
import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import StageError
from pipeline.stages.extract import article_job
from pipeline.text.articles import article_record, page_namespace
from pipeline.text.cleaning import format_article
from pipeline.text.dump import DumpReader
from recipes.vocab_rule import MODEL_TYPE, CorpusWords, words_of

SAMPLE_XML_BYTES = 4_000_000   # about 1.5 s on one core; the share read scales the count up
TOKENS_PER_CHAR = 0.25         # a rare word's pieces a character (calibrated: see the docstring)


@dataclass
class CorpusEstimate:
    """What the dump's sample says about the corpus it will make."""

    tokens: int            # the corpus's tokens, estimated
    words: CorpusWords     # the sample's words, counts scaled to the whole dump
    xml_read: int          # bytes of XML read
    share: float           # the share of the dump file they are (1.0: all of it)
    seconds: float

    def line(self) -> str:
        """'corpus: about 590,000 tokens, estimated from the dump (4.0 MB of its XML, 36% of the
        file; encode counts them exactly)'."""
        read = (f"all {_mb(self.xml_read)} of its XML" if self.share >= 1 else
                f"{_mb(self.xml_read)} of its XML, {self.share:.0%} of the file")
        return (f"corpus: about {rounded(self.tokens):,} tokens, estimated from the dump ({read}, "
                f"{self.seconds:.1f} s; encode counts them exactly)")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def rounded(n: float) -> int:
    """`n` to two significant figures: an estimate shown as one (612,345 -> 610,000)."""
    n = int(n)
    return round(n, 2 - len(str(n))) if n >= 100 else n


@dataclass
class Read:
    """How much of the dump the sample read: its XML, the compressed bytes of the file they took."""

    xml: int = 0
    compressed: int = 0
    whole: bool = True


def article_lines(reader: DumpReader, max_xml_bytes: int, read: Read):
    """The cleaned paragraphs of the dump's articles, as extract and format make them, from the
    chunks of XML read until `max_xml_bytes`: every page of those chunks, none of the next
    (`read` says how much that is)."""
    logging.getLogger("wikiextractor").setLevel(logging.ERROR)
    site = None
    for page in reader.pages():
        if reader.xml_bytes > read.xml >= max_xml_bytes:   # a page of a chunk past the sample
            read.whole = False
            return
        read.xml, read.compressed = reader.xml_bytes, reader.compressed_read
        if page_namespace(page, reader.siteinfo) != "0" or page.redirect:
            continue
        if site is None:   # the siteinfo is read before the first page: extract's settings of it
            _path, urlbase, prefix, known, _pages, dropped = article_job(None, reader.siteinfo, ())
            site = (urlbase, prefix, known, dropped)
        try:
            record = article_record(page.id, page.revid, page.title, page.text, *site)
        except Exception:  # noqa: BLE001 - as extract: one pathological page is skipped
            record = None
        if record is not None:
            yield from format_article(record["text"].split("\n"))
    read.xml = reader.xml_bytes


@functools.lru_cache(maxsize=8)   # the dry run asks twice (its corpus line, the passes)
def estimate_corpus(dump: Path, lang: str, model_type: str = MODEL_TYPE,
                    max_xml_bytes: int = SAMPLE_XML_BYTES) -> CorpusEstimate | None:
    """The corpus `dump` will make for `lang` (see the module docstring); None where the dump
    cannot be read (the pipeline's download stage says why, in its own words)."""
    t0 = time.perf_counter()
    read = Read()
    try:
        reader = DumpReader(dump)
        found = words_of(article_lines(reader, max_xml_bytes, read), lang, model_type)
    except (StageError, OSError):
        return None
    share = 1.0 if read.whole else max(read.compressed / reader.compressed_bytes, 1e-9)
    tokens = sum(n * max(1.0, TOKENS_PER_CHAR * len(w)) for w, n in found.words.items()) / share
    scaled = Counter({w: n / share for w, n in found.words.items()})
    return CorpusEstimate(round(tokens), CorpusWords(scaled, found.alphabet, found.least),
                          read.xml, share, time.perf_counter() - t0)
