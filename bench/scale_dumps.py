"""Large dumps for bench/bench_scale.py, made from the real ones in ../shared/data.

The (truncated) ukwiki and viwiki dumps hold 13.6 and 15.3 MB of XML. A dump of N MB repeats
their complete pages until it holds N MB of XML: copy k gets page ids + k * 100,000,000 and
titles ending " (k)", its text is the original's. Repeated text is what the filter's
repeated-line removal drops, so the benchmark runs the filter with --keep-repeats. Each size is
written as a multistream dump with its index (as the dumps site publishes them, 100 pages per
stream; streams compressed in parallel) and, when asked, as a single-stream .bz2 of the same XML.
Files are cached in the work folder by language and size.

Usage (from bench_scale.py):
    dump = build(work, "uk", 512)                       # uk-512mb-pages-articles-multistream.xml.bz2
    single = build(work, "uk", 512, multistream=False)  # uk-512mb-pages-articles.xml.bz2
"""
from __future__ import annotations

import bz2
import lzma
import multiprocessing
import os
import re
from pathlib import Path

from pipeline.text.multistream import split_pages, write_multistream

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
ID_STEP = 100_000_000


def source(lang: str) -> tuple[bytes, list[tuple[bytes, str, str]]]:
    """The header and complete pages of ../shared/data/{lang}wiki.xml.xz."""
    xml = lzma.decompress((SHARED / f"{lang}wiki.xml.xz").read_bytes())
    header, pages, _cut = split_pages(xml)   # the cut page at the end is left out
    return header, pages


def copies_needed(header: bytes, pages, mb: float) -> int:
    one = sum(len(p) for p, _, _ in pages)
    return max(1, -(-int(mb * 1_000_000 - len(header)) // one))


def repeated(pages, copies: int):
    """(page XML, id, title) of every copy, copy 0 the original (see the module docstring)."""
    for k in range(copies):
        for xml, pid, title in pages:
            if k:
                new_id = str(int(pid) + k * ID_STEP)
                xml = xml.replace(f"<id>{pid}</id>".encode(), f"<id>{new_id}</id>".encode(), 1)
                xml = re.sub(rb"</title>", f" ({k})</title>".encode(), xml, count=1)
                pid, title = new_id, f"{title} ({k})"
            yield xml, pid, title


def build(work: Path, lang: str, mb: int, multistream: bool = True) -> Path:
    """The dump of `lang` with about `mb` MB of XML (cached); returns its path."""
    work.mkdir(parents=True, exist_ok=True)
    stem = f"{lang}-{mb}mb-pages-articles"
    target = work / (f"{stem}-multistream.xml.bz2" if multistream else f"{stem}.xml.bz2")
    if target.is_file():
        return target
    header, pages = source(lang)
    copies = copies_needed(header, pages, mb)
    tmp = target.with_name(target.name + ".part")
    footer = b"</mediawiki>\n"
    if multistream:
        index = work / f"{stem}-multistream-index.txt.bz2"
        with multiprocessing.get_context("fork").Pool(os.cpu_count()) as pool:
            write_multistream(tmp, index, header, repeated(pages, copies), footer,
                              map_=lambda f, xs: pool.imap(f, xs, chunksize=4))
    else:
        comp = bz2.BZ2Compressor(9)
        with open(tmp, "wb") as out:
            out.write(comp.compress(header))
            for xml, _, _ in repeated(pages, copies):
                out.write(comp.compress(xml))
            out.write(comp.compress(footer) + comp.flush())
    os.replace(tmp, target)
    return target

