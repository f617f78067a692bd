"""Opening, checking and streaming MediaWiki XML dumps (.xml, .bz2, .xz, .gz).

Usage:
    kind = check_dump(path)               # StageError unless it looks like a usable dump
    reader = DumpReader(path)
    for page in reader.pages():           # every complete <page>, in dump order
        ...
    reader.siteinfo, reader.truncated     # filled in while reading
    DumpReader(path, byte_range=(start, end, starts), siteinfo=site).pages()   # one range of a
                                          # multistream dump (pipeline/text/multistream.py)

The compression is recognised by its magic bytes, not the file name. Pages are read with a
streaming XML parser (expat), so any layout of the export schema works (attributes, one-line
XML, self-closing <text/>), and memory holds one page at a time. A dump that ends mid-page
(a truncated download, or a real dump cut short to test on) yields every complete page and sets
`truncated`; a corrupt stream or malformed XML in the middle raises StageError.
"""
from __future__ import annotations

import bz2
import gzip
import itertools
import lzma
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO
from xml.etree import ElementTree as ET

from pipeline.core.errors import StageError
from pipeline.text.multistream import RangeStatus, read_range

MAGIC = [(b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"), (b"\x1f\x8b", "gz")]
CHUNK = 1 << 20
# Errors a decompressor raises on corrupt data (truncation is EOFError, handled apart).
CORRUPT_ERRORS = (OSError, lzma.LZMAError, zlib.error, gzip.BadGzipFile)


def sniff_compression(path: str | os.PathLike) -> str:
    """'bz2', 'xz', 'gz' or 'plain', from the first bytes of the file."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return "plain"


class _CountingReader:
    """A raw file that remembers how many compressed bytes were read (for the progress bar)."""

    def __init__(self, fh: BinaryIO):
        self.fh = fh
        self.pos = 0

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        self.pos += len(data)
        return data

    read1 = read

    def readinto(self, b) -> int:
        n = self.fh.readinto(b)
        self.pos += n or 0
        return n

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.fh.close()


def open_dump(path: str | os.PathLike) -> tuple[BinaryIO, _CountingReader]:
    """(decompressed binary stream, raw reader whose .pos counts compressed bytes read)."""
    kind = sniff_compression(path)
    raw = _CountingReader(open(path, "rb"))
    if kind == "bz2":
        return bz2.BZ2File(raw), raw
    if kind == "xz":
        return lzma.LZMAFile(raw), raw
    if kind == "gz":
        return gzip.GzipFile(fileobj=raw), raw
    return raw, raw  # type: ignore[return-value]


def _what_to_do(path) -> str:
    return f"check that {path} is a MediaWiki XML dump (pages-articles .xml, .xml.bz2, .xml.xz or .xml.gz)"


def check_dump(path: str | os.PathLike) -> str:
    """Check a local dump before accepting it; return its compression. Raises StageError.

    Readable, not empty, compression intact at the start, and a <mediawiki root element.
    """
    path = Path(path)
    if not path.exists():
        raise StageError(f"dump {path} does not exist: check the path given to --dump/--input")
    if path.is_dir():
        raise StageError(f"dump {path} is a folder: give the dump file itself")
    if not os.access(path, os.R_OK):
        raise StageError(f"dump {path} is not readable: check its permissions")
    if path.stat().st_size == 0:
        raise StageError(f"dump {path} is empty: download it again or {_what_to_do(path)}")
    kind = sniff_compression(path)
    stream, raw = open_dump(path)
    head = b""
    try:
        while len(head) < 64 * 1024:
            block = stream.read1(64 * 1024)
            if not block:
                break
            head += block
    except EOFError:  # cut short: fine if the start is there (extract keeps complete pages)
        if not head:
            raise StageError(f"dump {path}: the {kind} stream ends before any data: "
                             "the file is cut short; download it again") from None
    except CORRUPT_ERRORS as exc:
        raise StageError(f"dump {path}: its {kind} compression is corrupt ({exc}); download it again") from None
    finally:
        stream.close()
        raw.close()
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith("<?xml"):
        text = text[text.find("?>") + 2:].lstrip() if "?>" in text else ""
    while text.startswith("<!--"):
        end = text.find("-->")
        text = text[end + 3:].lstrip() if end >= 0 else ""
    if not text.startswith("<mediawiki"):
        raise StageError(f"{path} is not a MediaWiki XML dump (it does not start with <mediawiki>): "
                         f"{_what_to_do(path)}")
    return kind


@dataclass
class SiteInfo:
    """What the dump says about its wiki: base URL and namespace names by key."""

    base: str = ""
    dbname: str = ""
    namespaces: dict[int, str] = field(default_factory=dict)

    @property
    def urlbase(self) -> str:
        """The base of page URLs (https://hu.wikipedia.org/wiki), as wikiextractor builds them."""
        return self.base[: self.base.rfind("/")] if "/" in self.base else self.base


@dataclass
class Page:
    id: str
    revid: str
    ns: str
    title: str
    redirect: bool
    text: str
    timestamp: str = ""   # its revision's, ISO 8601 (2023-05-01T12:08:16Z); "" where the dump has none


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


class DumpReader:
    """Streams the pages of one dump, or of one byte range of a multistream dump; see the
    module docstring."""

    def __init__(self, path: str | os.PathLike, byte_range: tuple[int, int, list | None] | None = None,
                 siteinfo: SiteInfo | None = None):
        self.path = Path(path)
        self.byte_range = byte_range   # (start, end, stream starts or None): pipeline/text/multistream.py
        self.siteinfo = siteinfo or SiteInfo()
        self.truncated = False
        self.truncation = ""   # where it was cut, for the warning
        self.compression = sniff_compression(self.path)
        self.compressed_bytes = self.path.stat().st_size
        self.compressed_read = 0  # progress, in bytes of the file on disk
        self.xml_bytes = 0        # decompressed bytes read
        self.newest = ""          # the newest revision timestamp read: the dump's date where its name has none
        self.streams = None       # a range's RangeStatus once read

    def pages(self) -> Iterator[Page]:
        if self.byte_range is None:
            yield from self._parse(self._file_chunks(), b"")
            return

        self.streams = status = RangeStatus()
        start, end, starts = self.byte_range

        def chunks():
            yield from read_range(self.path, start, end, starts, status)
            self.compressed_read = (status.stop or start) - start
            if status.truncated:
                self.truncated = True
                self.truncation = f"the bz2 stream at byte {status.streams[-1]:,} ends early"

        # A range holds <page> elements only: they are parsed inside a root of our own.
        yield from self._parse(chunks(), b"<mediawiki>")

    def _file_chunks(self) -> Iterator[bytes]:
        stream, raw = open_dump(self.path)
        try:
            while True:
                try:
                    # read1: one decompression step at a time, so a stream that is cut short
                    # loses only its unfinished block, not the whole buffered read.
                    chunk = stream.read1(CHUNK)
                except EOFError:  # compressed stream cut short: keep what came before
                    self.truncated = True
                    self.truncation = f"the {self.compression} stream ends early"
                    return
                except CORRUPT_ERRORS as exc:
                    raise StageError(
                        f"dump {self.path}: its {self.compression} stream is corrupt after "
                        f"{raw.pos:,} bytes ({exc}); download it again") from None
                self.compressed_read = raw.pos
                if not chunk:
                    return
                yield chunk
        finally:
            stream.close()
            raw.close()

    def _parse(self, chunks: Iterator[bytes], prefix: bytes) -> Iterator[Page]:
        parser = ET.XMLPullParser(events=("start", "end"))
        root = None
        depth = 0
        chunks = itertools.chain([prefix], chunks) if prefix else chunks
        for chunk in chunks:
            self.xml_bytes += len(chunk) if chunk is not prefix else 0
            try:
                parser.feed(chunk)
                events = list(parser.read_events())
            except ET.ParseError as exc:
                raise StageError(
                    f"dump {self.path} is not well-formed XML ({exc}): the file is corrupt "
                    "or not UTF-8; download it again") from None
            for event, elem in events:
                if event == "start":
                    depth += 1
                    if root is None:
                        root = elem
                        if _local(elem.tag) != "mediawiki":
                            raise StageError(f"{self.path} is not a MediaWiki XML dump (root <{_local(elem.tag)}>): "
                                             f"{_what_to_do(self.path)}")
                    continue
                depth -= 1
                if depth != 1:
                    continue
                name = _local(elem.tag)
                if name == "siteinfo":
                    self.siteinfo = read_siteinfo(elem)
                elif name == "page":
                    page = read_page(elem)
                    if page is not None:
                        self.newest = max(self.newest, page.timestamp)   # ISO 8601 sorts as text
                        yield page
                root.remove(elem)  # memory: one page at a time
        try:
            if prefix and depth > 0 and not self.truncated:
                parser.feed(b"</mediawiki>")   # a range before the last: close our root
            parser.close()
        except ET.ParseError as exc:
            if not self.truncated and self.byte_range is not None:
                raise StageError(f"dump {self.path}: the streams from byte {self.byte_range[0]:,} "
                                 f"do not hold whole pages ({exc}): not a multistream dump cut "
                                 "at pages; decompress and recompress it, or pass a single-stream "
                                 "dump") from None
            self.truncated = True
            self.truncation = self.truncation or str(exc)
        if root is None and not self.truncated and self.byte_range is None:
            raise StageError(f"{self.path} holds no XML: {_what_to_do(self.path)}")


def read_siteinfo(elem) -> SiteInfo:
    """The <siteinfo> element's base URL, database name and namespaces."""
    info = SiteInfo()
    for child in elem:
        name = _local(child.tag)
        if name == "base":
            info.base = (child.text or "").strip()
        elif name == "dbname":
            info.dbname = (child.text or "").strip()
        elif name == "namespaces":
            for ns in child:
                try:
                    key = int(ns.get("key", ""))
                except ValueError:
                    continue
                info.namespaces[key] = (ns.text or "").strip()
    return info


def siteinfo_of(header_xml: bytes) -> SiteInfo:
    """The SiteInfo of a dump's header (a multistream dump's first stream)."""
    parser = ET.XMLPullParser(events=("end",))
    try:
        parser.feed(header_xml)
        for _event, elem in parser.read_events():
            if _local(elem.tag) == "siteinfo":
                return read_siteinfo(elem)
    except ET.ParseError as exc:
        raise StageError(f"the dump's header is not well-formed XML ({exc}): download it again") from None
    return SiteInfo()


def dump_siteinfo(path: str | os.PathLike, max_bytes: int = 4 << 20) -> SiteInfo:
    """The <siteinfo> at the start of a dump (read up to `max_bytes` of XML; an empty SiteInfo
    if there is none there). For a dump that check_dump accepted."""
    stream, raw = open_dump(path)
    parser = ET.XMLPullParser(events=("end",))
    read = 0
    try:
        while read < max_bytes:
            block = stream.read1(CHUNK) if hasattr(stream, "read1") else stream.read(CHUNK)
            if not block:
                break
            read += len(block)
            parser.feed(block)
            for _event, elem in parser.read_events():
                name = _local(elem.tag)
                if name == "siteinfo":
                    return read_siteinfo(elem)
                if name == "page":  # past the header
                    return SiteInfo()
    except (EOFError, ET.ParseError, *CORRUPT_ERRORS):
        pass  # a cut or broken start: extract says what is wrong
    finally:
        stream.close()
        raw.close()
    return SiteInfo()


def read_page(elem) -> Page | None:
    fields = {"id": "", "revid": "", "ns": "", "title": "", "text": "", "timestamp": ""}
    redirect = False
    for child in elem:
        name = _local(child.tag)
        if name in ("id", "ns", "title"):
            fields[name] = (child.text or "").strip()
        elif name == "redirect":
            redirect = True
        elif name == "revision":  # pages-articles has one; a history dump's last one wins
            for rc in child:
                rname = _local(rc.tag)
                if rname == "id":
                    fields["revid"] = (rc.text or "").strip()
                elif rname == "text":
                    fields["text"] = rc.text or ""
                elif rname == "timestamp":
                    fields["timestamp"] = (rc.text or "").strip()
    if not fields["id"] and not fields["title"]:
        return None
    return Page(fields["id"], fields["revid"], fields["ns"], fields["title"], redirect, fields["text"],
                fields["timestamp"])
