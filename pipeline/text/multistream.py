"""Multistream bz2 dumps: cut into byte ranges that workers decompress on their own.

A `pages-articles-multistream.xml.bz2` dump is many bz2 streams back to back: the first holds
the XML header and <siteinfo> (and is not in the index), each of the others about 100 whole
pages, the last one also `</mediawiki>`. Its index, `NAME-multistream-index.txt.bz2`, has one
line `offset:page_id:title` per page (titles contain ':'; the pages of one stream share its
offset).

The cutting rule, one for both ways of knowing where streams start: after the header stream,
the file is cut into windows of `window` bytes; a window owns every stream that starts inside
it and reads each of them to its end, even past the window's end. The stream starts come from
the index when there is one, else from searching the window for the bz2 stream magic; a hit is
a stream start only if decompressing from it works (the magic can occur by chance). So the
tasks, their pages and their order depend on the dump and the window size only: not on the
index, not on the number of workers.

Usage:
    header = read_header(path)            # None unless the first stream is the header alone
    index = find_index(path)              # NAME-multistream-index.txt.bz2 beside it, or None
    starts = read_index(index)            # the streams' offsets, ascending, unique
    ranges = cut_windows(header.end, size, window, starts)   # [(start, end, starts_inside)]
    for chunk in read_range(path, start, end, starts_inside, status): ...   # XML of those streams
    header, pages, footer = split_pages(xml)  # an XML dump as text: (page XML, id, title)
    write_multistream(dump, index, header, pages, footer)   # and as a multistream dump
"""
from __future__ import annotations

import bisect
import bz2
import functools
import html
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.errors import StageError

# A bz2 stream starts with "BZh", the block size 1-9, and the first block's magic (pi's digits).
STREAM_MAGIC = re.compile(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59")
READ = 1 << 20
PAGE_XML = re.compile(rb"[ \t]*<page>.*?</page>\n", re.S)
HEADER_LIMIT = 4 << 20   # a header stream is a few KB; a first stream longer than this is data


@dataclass(frozen=True)
class Header:
    end: int      # offset of the first page stream
    xml: bytes    # the decompressed header: <mediawiki ...> and <siteinfo>


def read_header(path: str | os.PathLike) -> Header | None:
    """The header stream of a multistream dump, or None when the file's first bz2 stream is
    not the header alone (a single-stream dump, or one cut elsewhere, e.g. by pbzip2)."""
    dec = bz2.BZ2Decompressor()
    out = bytearray()
    consumed = 0
    with open(path, "rb") as fh:
        while not dec.eof and consumed < HEADER_LIMIT:
            block = fh.read(64 * 1024)
            if not block:
                return None
            try:
                out += dec.decompress(block)
            except OSError:
                return None
            consumed += len(block)
    if not dec.eof:
        return None
    end = consumed - len(dec.unused_data)
    if b"<siteinfo" not in out or b"<page" in out or end >= Path(path).stat().st_size:
        return None
    return Header(end, bytes(out))


def find_index(dump: str | os.PathLike) -> Path | None:
    """The index the dumps site publishes beside a multistream dump, if it is there."""
    dump = Path(dump)
    name = dump.name
    if "multistream" not in name:
        return None
    stem = re.sub(r"\.xml(\.bz2)?$", "", name)
    for candidate in (f"{stem}-index.txt.bz2", f"{stem}-index.txt"):
        if (dump.parent / candidate).is_file():
            return dump.parent / candidate
    return None


def read_index(path: str | os.PathLike) -> list[int]:
    """The stream offsets of an index (`offset:page_id:title` lines), ascending and unique."""
    path = Path(path)
    opener = bz2.open if path.name.endswith(".bz2") else open
    offsets = set()
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                parts = line.rstrip("\n").split(":", 2)   # titles contain ':'
                if len(parts) != 3 or not parts[0].isdigit():
                    raise StageError(f"index {path} line {lineno} is not 'offset:page_id:title': "
                                     "give the dump's -multistream-index.txt.bz2 with --index")
                offsets.add(int(parts[0]))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StageError(f"index {path} cannot be read ({exc}): download it again, or leave "
                         "--index out and the stream starts are searched in the dump") from None
    if not offsets:
        raise StageError(f"index {path} is empty: download it again, or leave --index out")
    return sorted(offsets)


def cut_windows(first: int, size: int, window: int, starts: list[int] | None):
    """[(start, end, stream starts inside, or None: search)]: windows of `window` bytes from
    `first` to the end of the file (see the module docstring)."""
    ranges = []
    for start in range(first, size, window):
        end = min(start + window, size)
        inside = None
        if starts is not None:   # a window the index lists no stream in is searched (the footer)
            inside = starts[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)] or None
        ranges.append((start, end, inside))
    return ranges


@dataclass
class RangeStatus:
    """What reading a range found: the streams it read and whether the file ended mid-stream."""

    first: int | None = None   # offset of the first stream read
    stop: int | None = None    # offset just after the last stream read
    truncated: bool = False
    streams: list[int] = field(default_factory=list)


def read_range(path: str | os.PathLike, start: int, end: int, starts: list[int] | None,
               status: RangeStatus) -> Iterator[bytes]:
    """The decompressed XML of the streams that start in [start, end), each read to its end.
    `starts`: their offsets from the index (checked against the dump), or None to search."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as fh:
        pos = (starts[0] if starts else None) if starts is not None else _first_stream(fh, start, end)
        if pos is None:
            return
        if starts is not None and not _decodes(fh, pos):
            fh.seek(pos)
            if STREAM_MAGIC.match(fh.read(10)):
                raise StageError(f"dump {path}: the bz2 stream at byte {pos:,} is corrupt; "
                                 "download it again")
            raise StageError(f"the index does not match {path}: no bz2 stream starts at byte "
                             f"{pos:,}; give this dump's own index with --index, or none")
        status.first = pos
        fh.seek(pos)
        leftover = b""
        while pos < end and pos < size:
            status.streams.append(pos)
            dec = bz2.BZ2Decompressor()
            data, leftover = leftover, b""
            fed = 0
            while not dec.eof:
                if not data:
                    data = fh.read(READ)
                    if not data:   # the file ends inside this stream: a truncated dump
                        status.truncated = True
                        status.stop = size
                        return
                fed += len(data)
                try:
                    chunk = dec.decompress(data)
                except OSError as exc:
                    raise StageError(f"dump {path}: the bz2 stream at byte {pos:,} is corrupt "
                                     f"({exc}); download it again") from None
                data = b""
                if chunk:
                    yield chunk
            leftover = dec.unused_data
            pos += fed - len(leftover)
        status.stop = pos
    if starts and not set(starts) <= set(status.streams):
        raise StageError(f"the index does not match {path}: it lists bz2 streams at bytes "
                         f"{sorted(set(starts) - set(status.streams))[:3]} where none starts; give "
                         "this dump's own index with --index, or none (streams are then searched)")


def _first_stream(fh, start: int, end: int) -> int | None:
    """The first offset in [start, end) where a bz2 stream starts, confirmed by decompressing
    its first block; None when no stream starts in the window."""
    pos = start
    while pos < end:
        fh.seek(pos)
        # 9 bytes more: a magic starting before pos + READ is found whole in this piece
        buf = fh.read(min(READ, end - pos) + len(b"BZh91AY&SY") - 1)
        for m in STREAM_MAGIC.finditer(buf):
            offset = pos + m.start()
            if offset >= end:
                return None
            if _decodes(fh, offset):
                return offset
        pos += READ
    return None


def _decodes(fh, offset: int) -> bool:
    """Decompressing from `offset` gives data (a whole first block, its CRC checked), or the
    file ends before any error: a stream cut short is a truncated dump, not a corrupt one."""
    fh.seek(offset)
    dec = bz2.BZ2Decompressor()
    try:
        while not dec.eof:
            block = fh.read(64 * 1024)
            if not block:
                return True
            if dec.decompress(block, max_length=1):
                return True
        return True
    except OSError:
        return False


def split_pages(xml: bytes) -> tuple[bytes, list[tuple[bytes, str, str]], bytes]:
    """(header, [(page XML, page id, title)], footer) of an XML dump laid out as MediaWiki
    writes them (each <page> on lines of its own); their concatenation is `xml`. A dump cut
    mid-page keeps the cut page in the footer."""
    pages = list(PAGE_XML.finditer(xml))
    if not pages:
        raise StageError("no <page> element in the dump")
    out = []
    for m in pages:
        page = m.group(0)
        pid = re.search(rb"<id>(\d+)</id>", page)
        title = re.search(rb"<title>(.*?)</title>", page, re.S)
        out.append((page, pid.group(1).decode() if pid else "",
                    html.unescape(title.group(1).decode("utf-8")) if title else ""))
    for (a, b) in zip(pages, pages[1:]):
        if a.end() != b.start():
            raise StageError(f"something other than pages between bytes {a.end():,} and {b.start():,}")
    return xml[:pages[0].start()], out, xml[pages[-1].end():]


def write_multistream(dump: str | os.PathLike, index: str | os.PathLike, header: bytes,
                      pages: Iterable[tuple[bytes, str, str]], footer: bytes,
                      pages_per_stream: int = 100, level: int = 9, map_=map) -> int:
    """Write a multistream dump as the dumps site lays one out (the header alone in the first
    stream, then streams of `pages_per_stream` pages, the footer in a stream of its own) and
    its bz2 index. `pages`: (the page's XML, its id, its title); `map_`: an ordered map to
    compress streams in parallel (a pool's imap). Returns the number of streams."""
    ids: list = []   # the (id, title) of each stream's pages, in stream order

    def texts():     # the streams' XML; with a pool, only these bytes travel
        batch: list[tuple[bytes, str, str]] = []
        for page in itertools.chain(pages, [None]):
            if page is not None:
                batch.append(page)
            if batch and (page is None or len(batch) == pages_per_stream):
                ids.append([(pid, title) for _, pid, title in batch])
                yield b"".join(xml for xml, _, _ in batch)
                batch = []

    with open(dump, "wb") as out, bz2.open(index, "wt", encoding="utf-8") as idx:
        out.write(bz2.compress(header, level))
        for i, data in enumerate(map_(functools.partial(bz2.compress, compresslevel=level), texts())):
            offset = out.tell()
            out.write(data)
            idx.writelines(f"{offset}:{pid}:{title}\n" for pid, title in ids[i])
            ids[i] = None
        out.write(bz2.compress(footer, level))
    return len(ids) + 2

