"""A small multistream dump and its index, made from a single-stream one (the shipped sample):
the same XML, cut into bz2 streams the way the dumps site cuts it; and a bigger single-stream
dump of the sample's pages repeated.

Usage:
    dump, index = make_multistream(sample_dump, tmp_path, pages_per_stream=5)
    bigger = repeated_dump(sample_dump, tmp_path / "x12.xml.bz2", copies=12)   # single-stream
"""
from __future__ import annotations

import bz2
import re
from pathlib import Path

from pipeline.text.multistream import split_pages, write_multistream


def make_multistream(dump: Path, folder: Path, pages_per_stream: int = 5,
                     name: str = "huwiki-20240501-pages-articles-multistream") -> tuple[Path, Path]:
    """NAME.xml.bz2 and NAME-index.txt.bz2 in `folder`, holding the pages of `dump`."""
    header, pages, footer = split_pages(bz2.decompress(Path(dump).read_bytes()))
    folder.mkdir(parents=True, exist_ok=True)
    target, index = folder / f"{name}.xml.bz2", folder / f"{name}-index.txt.bz2"
    write_multistream(target, index, header, pages, footer, pages_per_stream=pages_per_stream)
    return target, index


def repeated_dump(dump: Path, target: Path, copies: int) -> Path:
    """A single-stream dump with the pages of `dump` `copies` times, copy k with page ids
    + k * 1,000,000 and titles ending " (k)" (copy 0 is the original)."""
    header, pages, footer = split_pages(bz2.decompress(Path(dump).read_bytes()))
    out = [header]
    for k in range(copies):
        for page, pid, _title in pages:
            if k:
                page = page.replace(f"<id>{pid}</id>".encode(), f"<id>{int(pid) + k * 1_000_000}</id>".encode(), 1)
                page = re.sub(rb"</title>", f" ({k})</title>".encode(), page, count=1)
            out.append(page)
    out.append(footer)
    target.write_bytes(bz2.compress(b"".join(out), 9))
    return target
