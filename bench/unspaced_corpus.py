"""Real Japanese text for bench_unspaced.py, from Debian packages (no Japanese Wikipedia here).

Usage (in a folder holding the .deb files):
    apt-get download manpages-ja gimp-help-ja libreoffice-help-ja debian-reference-ja
    python bench/unspaced_corpus.py --debs . --out /tmp/jadoc     # jadoc_train.txt, jadoc_test.txt

The packages are manual pages (roff, read with groff) and help/guide pages (HTML): technical
prose, not encyclopedic, but real Japanese written by people. Sentences end at 。！？, need a
kana and 10 characters, repeat no earlier sentence; a page is a document; a seeded 5% of the
documents is held out. Licences: manpages-ja per page (DFSG-free), gimp-help GFDL,
libreoffice-help MPL-2.0, debian-reference GPL-2+; only measured, nothing is shipped.
"""
from __future__ import annotations

import gzip
import random
import re
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import click

_END = re.compile(r"(?<=[。！？])")
_KANA = re.compile(r"[\u3040-\u30ff]")
_CJK_EDGE = "\u3000-\u9fff\uff00-\uffef"


class _Text(HTMLParser):
    """The visible text of a page, a line per block element (no code, scripts or styles)."""

    BLOCK = {"p", "div", "li", "h1", "h2", "h3", "td", "br", "dt", "dd"}
    SKIP = {"script", "style", "pre", "code"}

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in self.SKIP
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def _roff_paragraphs(path: Path) -> list[str]:
    txt = subprocess.run(["groff", "-Kutf8", "-Tutf8", "-mandoc", "-P", "-cbou"],
                         input=gzip.open(path).read(), capture_output=True,
                         timeout=60).stdout.decode("utf-8", "replace")
    paras = []
    for block in re.split(r"\n\s*\n", txt):
        joined = ""
        for line in (x.strip() for x in block.splitlines() if x.strip()):
            cjk_join = joined and re.match(f"[{_CJK_EDGE}]", line) and re.search(f"[{_CJK_EDGE}]$", joined)
            joined += line if cjk_join else (" " if joined else "") + line
        paras.append(joined)
    return paras


def _html_paragraphs(path: Path) -> list[str]:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return "".join(p.parts).split("\n")


def sentences_of(paras: list[str], seen: set[str]) -> list[str]:
    out = []
    for para in paras:
        for s in _END.split(re.sub(r"\s+", " ", para)):
            s = s.strip()
            if len(s) >= 10 and _KANA.search(s) and s not in seen:
                seen.add(s)
                out.append(s)
    return out


def build(debs: Path, out: Path, seed: int = 1) -> tuple[Path, Path]:
    debs_found = sorted(debs.glob("*-ja_*.deb"))
    if not debs_found:
        raise click.UsageError(f"no *-ja_*.deb in {debs}: apt-get download manpages-ja gimp-help-ja "
                               "libreoffice-help-ja debian-reference-ja there first")
    docs: list[list[str]] = []
    seen: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for deb in debs_found:
            root = Path(tmp) / deb.stem
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
            for page in sorted(root.rglob("*")):
                if page.name.endswith(".gz") and "/man/" in str(page):
                    paras = _roff_paragraphs(page)
                elif page.suffix == ".html":
                    paras = _html_paragraphs(page)
                else:
                    continue
                sents = sentences_of(paras, seen)
                if sents:
                    docs.append(sents)
    random.Random(seed).shuffle(docs)
    n_test = len(docs) // 20
    out.mkdir(parents=True, exist_ok=True)
    paths = out / "jadoc_train.txt", out / "jadoc_test.txt"
    for path, part in zip(paths, (docs[n_test:], docs[:n_test])):
        path.write_text("\n\n".join("\n".join(d) for d in part) + "\n", encoding="utf-8")
    return paths


@click.command()
@click.option("--debs", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
def main(debs, out):
    for p in build(debs, out):
        print(f"{p}: {p.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
