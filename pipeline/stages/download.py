"""`pipeline download` — the pages-articles dump of a Wikipedia, verified; or a local dump.

Usage:
    pipeline --lang hu download                        # latest huwiki dump from dumps.wikimedia.org
    pipeline --lang hu download --date 20240501
    pipeline --lang hu download --single-stream        # the one-stream dump instead (no index)
    pipeline --lang hu download --dump data/sample/huwiki-sample.xml.bz2     # offline
    download(data_dir="data", lang="hu", dump="x.xml.bz2")                 # from Python

Writes DATA_DIR/LANG/download/: the multistream dump
`{lang}wiki-{date}-pages-articles-multistream.xml.bz2` and its index
`...-multistream-index.txt.bz2` (extract cuts the dump at its streams, so that every worker
decompresses its own part), each with its checksum `<file>.sha1` (or `.md5`, whichever the
dump's published checksum file has), and a manifest whose "dump" and "index" name the files.
`--single-stream` fetches `{lang}wiki-{date}-pages-articles.xml.bz2` alone (the same pages).
`--date latest` is resolved to the date of the latest
finished dump (from the dump's RSS feed). An interrupted download resumes from its `.part`
file with an HTTP Range request; the finished file is checked against the published checksum
and removed if it does not match.

`--dump PATH` takes a local file instead (.xml, .bz2, .xz, .gz): it is checked (readable,
compression intact at its start, a <mediawiki> root, the wiki of --lang) and its absolute path
is recorded in the manifest; nothing is copied or linked, so a multi-GB dump costs no disk space twice. The index
of a local multistream dump is `--index PATH`, or found beside it by its published name.

--lang must be the wiki of the dump: a local dump's <siteinfo> names its wiki (<dbname>hywiki),
and a mismatch is refused in one line that names the dump's own code (`--allow-unknown-lang`
would write a corpus labelled with the wrong language, so it is not suggested); a code is otherwise checked
against the list of Wikipedias (pipeline/text/wikipedias.txt). `--allow-unknown-lang` skips
both checks, for a wiki that is not on the list.

The server is https://dumps.wikimedia.org unless --base-url or WIKI2BERT_DUMPS_URL names a
mirror (the tests use a local server).
"""
from __future__ import annotations

import hashlib
import http.client
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import click

from common.atomic import atomic_open
from common.make_vars import as_typed, make_target
from pipeline.core.errors import StageError
from pipeline.core.manifest import fingerprint_inputs, read_manifest
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir, validate_lang
from pipeline.core.report import progress, report
from pipeline.core.runner import StageRun
from pipeline.text.dump import check_dump, dump_siteinfo
from pipeline.text.multistream import find_index
from pipeline.text.wikipedias import (
    LIST_FILE,
    code_of_dbname,
    is_wikipedia,
    looks_like_a_name,
    same_wiki,
    wiki_dbname,
)

DEFAULT_BASE_URL = "https://dumps.wikimedia.org"
BASE_URL_ENV = "WIKI2BERT_DUMPS_URL"
USER_AGENT = "wiki2bert/0.1 (BERT pretraining data pipeline; python urllib)"
CHUNK = 1 << 20
TIMEOUT = 60


def dump_name(lang: str, date: str, multistream: bool = False) -> str:
    return f"{wiki_db(lang)}-{date}-pages-articles{'-multistream' if multistream else ''}.xml.bz2"


def index_name(lang: str, date: str) -> str:
    return f"{wiki_db(lang)}-{date}-pages-articles-multistream-index.txt.bz2"


def wiki_db(lang: str) -> str:
    """The dump's database name: zh-min-nan -> zh_min_nanwiki, be-tarask -> be_x_oldwiki."""
    return wiki_dbname(lang)


ALLOW_UNKNOWN = "--allow-unknown-lang"
USE_LANG = "--lang {code} (before the stage name: pipeline --lang {code} ...; make corpus LANG={code})"


def local_dump() -> str:
    """The advice to take a local dump, as the command the user typed takes it (DUMP= under make)."""
    return f"pass a local dump with {as_typed('--dump', 'PATH')}"


def check_wiki(lang: str, dump: Path | None = None, use: str | None = None) -> None:
    """StageError unless `lang` is the wiki of the local `dump` (its <siteinfo> <dbname>), or,
    where that says nothing (no dump, no dbname), a code on the list of Wikipedias. `use`: how
    to give the right code, {code} standing for it (recipes/pretrain.py: its own flag; default:
    the pipeline's, make's LANG= under make). The flags are named as the user gives them
    (common/make_vars.py)."""
    use = use or ("LANG={code}" if make_target() else USE_LANG)
    given, allow = as_typed("--lang", lang), as_typed(ALLOW_UNKNOWN)
    dbname = dump_siteinfo(dump).dbname if dump is not None else ""
    if dbname:
        if same_wiki(lang, dbname):
            return
        # the dump's own code, never --allow-unknown-lang: that would label the corpus wrongly
        code = code_of_dbname(dbname) or _wiki_code(dbname)
        fix = (f"use {use.format(code=code)}" if code
               else f"{dbname} is not a Wikipedia's dump; pass {allow} if it is the one you mean")
        raise StageError(f"{given} does not match the dump: {dump} is the dump of {dbname} "
                         f"(the <dbname> of its <siteinfo>), not {wiki_db(lang)}: {fix}")
    if not is_wikipedia(lang):
        listed = (f"{given} is not the code of a Wikipedia (pipeline/text/{LIST_FILE.name} lists them, "
                  "from meta.wikimedia.org/wiki/List_of_Wikipedias)")
        if looks_like_a_name(lang):   # the flag would not help: the corpus would be labelled with a name
            raise StageError(f"{listed}: it looks like the language's name; give its wiki's code, the "
                             "start of the wiki's address: hu for hu.wikipedia.org, uk for uk.wikipedia.org")
        raise StageError(f"{listed}: check the code (hu, uk, zh-min-nan, simple, ...), or pass {allow} "
                         "for a wiki that is not on the list")


def _wiki_code(dbname: str) -> str:
    """The code of a wiki newer than the list from its dbname (qqqwiki -> qqq), else ''."""
    if not dbname.endswith("wiki"):
        return ""
    code = dbname[:-len("wiki")].replace("_", "-")
    try:
        return validate_lang(code)
    except StageError:
        return ""


def check_date(date: str) -> str:
    if date == "latest" or re.fullmatch(r"20\d{6}", date):
        return date
    raise StageError(f"--date {date!r} is not a dump date: use YYYYMMDD (e.g. 20240501) or 'latest'; "
                     f"or {local_dump()}")


def _offline_hint() -> str:
    return f"check the network, the language code and the dump date, or {local_dump()}"


def _open(url: str, start: int = 0):
    headers = {"User-Agent": USER_AGENT}
    if start:
        headers["Range"] = f"bytes={start}-"
    req = urllib.request.Request(url, headers=headers)
    try:
        return urllib.request.urlopen(req, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and start:  # the partial file is already whole
            return None
        if exc.code == 404:
            raise StageError(f"{url} does not exist (404): no such dump; {_offline_hint()}") from None
        raise StageError(f"{url}: HTTP {exc.code} {exc.reason}; {_offline_hint()}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise StageError(f"cannot reach {url} ({reason}); {_offline_hint()}") from None


def _get_text(url: str) -> str:
    with _open(url) as resp:
        return resp.read().decode("utf-8", errors="replace")


def resolve_latest(base: str, lang: str) -> str:
    """The date of the latest finished pages-articles dump, from its RSS feed."""
    db = wiki_db(lang)
    url = f"{base}/{db}/latest/{db}-latest-pages-articles.xml.bz2-rss.xml"
    rss = _get_text(url)
    m = re.search(rf"/{re.escape(db)}/(20\d{{6}})", rss)
    if not m:
        raise StageError(f"{url} names no dump date; use --date YYYYMMDD, or {local_dump()}")
    return m.group(1)


def published_checksums(base: str, lang: str, date: str, names: list[str]) -> tuple[str, dict[str, str]]:
    """(algorithm, {name: hex digest}) for every file in `names`, from the dump's sha1sums
    (else md5sums) file."""
    db = wiki_db(lang)
    last_error = None
    for algo in ("sha1", "md5"):
        url = f"{base}/{db}/{date}/{db}-{date}-{algo}sums.txt"
        try:
            listing = _get_text(url)
        except StageError as exc:
            last_error = last_error or exc   # a sha1sums that lacks a file says more than a 404
            continue
        found = {}
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("*") in names:
                found[parts[1].lstrip("*")] = parts[0].lower()
        missing = [n for n in names if n not in found]
        if not missing:
            return algo, found
        last_error = StageError(f"{url} lists no checksum for {missing[0]}: the dump of {date} may be "
                                f"unfinished; try another --date, or {local_dump()}")
    raise last_error  # type: ignore[misc]


def fetch(url: str, part: Path, algo: str) -> str:
    """Download `url` into `part`, resuming what is there; return the file's hex digest."""
    have = part.stat().st_size if part.exists() else 0
    resp = _open(url, start=have)
    digest = hashlib.new(algo)
    if resp is not None and have and resp.status != 206:  # the server ignored Range: start over
        have = 0
    if have:
        with open(part, "rb") as fh:
            while block := fh.read(CHUNK):
                digest.update(block)
    if resp is None:
        return digest.hexdigest()
    total = resp.headers.get("Content-Length")
    total = int(total) + have if total is not None else None
    got = have  # counted here: a bar under `pipeline -q` is disabled and counts nothing
    with resp, open(part, "ab" if have else "wb") as out, \
            progress(total=total, initial=have, unit="B", unit_scale=True, desc="download") as bar:
        try:
            while block := resp.read(CHUNK):
                out.write(block)
                digest.update(block)
                got += len(block)
                bar.update(len(block))
            short = total is not None and got < total  # http.client does not raise on this
        except (OSError, http.client.HTTPException) as exc:
            short, reason = True, str(exc)
        else:
            reason = f"{got:,} of {total:,} bytes" if short else ""
    if short:
        raise StageError(f"the download of {url} broke off ({reason}); rerun the same command to "
                         f"resume it, or {local_dump()}")
    return digest.hexdigest()


def download(*, data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
             date: str = "latest", dump=None, base_url: str | None = None, index=None,
             multistream: bool = True, allow_unknown_lang: bool = False) -> dict:
    """Download (or accept with `dump=`) the dump of `lang`; see the module docstring."""
    validate_lang(lang)
    if input is not None and dump is not None and Path(input) != Path(dump):
        raise StageError("give the local dump once: --dump PATH (or --input PATH), not both")
    dump = None if dump is None and input is None else Path(dump if dump is not None else input)
    kind = check_dump(dump) if dump is not None else None  # a missing or broken file says so first
    if not allow_unknown_lang:
        check_wiki(lang, dump)
    out = Path(output) if output is not None else stage_dir(data_dir, lang, "download")
    started = time.time()
    if dump is not None:
        return _accept_local(dump, kind, None if index is None else Path(index), out, force, started)
    if index is not None:
        raise StageError("--index goes with a local --dump; a downloaded multistream dump comes "
                         "with its own index")

    date = check_date(date)
    base = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
    options = {"lang": lang, "date": date, "source": base, "multistream": multistream}
    finished = read_manifest(out)
    if finished and finished.get("options") == options and not force:  # no network needed
        report("download", finished["summary"], skipped=True)
        return finished["summary"]
    # Ask the server first: a wrong --date or --lang must not leave an unfinished run behind
    # that then refuses the corrected command.
    if date == "latest":
        date = resolve_latest(base, lang)
    name = dump_name(lang, date, multistream)
    names = [name, index_name(lang, date)] if multistream else [name]
    algo, expected = published_checksums(base, lang, date, names)
    run = StageRun("download", out, options, force=force)
    for each in names:
        if not run.task_done(each):
            _fetch_verified(f"{base}/{wiki_db(lang)}/{date}/{each}", out / each, algo, expected[each])
            run.mark_done(each, {algo: expected[each]})
    target = out / name
    try:
        check_dump(target)
    except StageError as exc:  # the server's file itself is broken: only another dump helps
        raise StageError(f"{exc}; or try another --date, or {local_dump()}") from None
    summary = {"dump": name, "date": date, "input_bytes": sum((out / n).stat().st_size for n in names),
               "checksum": f"{algo} verified", "seconds": round(time.time() - started, 2)}
    if multistream:
        summary["index"] = names[1]
    extra = {"dump": name, "url": f"{base}/{wiki_db(lang)}/{date}/{name}", algo: expected[name],
             "checksums": {n: f"{algo}:{expected[n]}" for n in names}}
    if multistream:
        extra["index"] = names[1]
    return run.finish(summary, [p for n in names for p in (out / n, out / f"{n}.{algo}")], extra=extra)


def _fetch_verified(url: str, target: Path, algo: str, expected: str) -> None:
    """Fetch `url` to `target` (resuming its .part), check it against the published digest,
    and write `<target>.<algo>`; a mismatch removes the download."""
    part = target.with_name(target.name + ".part")
    got = fetch(url, part, algo)
    if got != expected:
        part.unlink(missing_ok=True)
        raise StageError(f"{target.name}: {algo} checksum mismatch (got {got}, published {expected}): "
                         "the download was corrupt and was removed; rerun to download it again, "
                         f"or {local_dump()}")
    os.replace(part, target)
    with atomic_open(target.with_name(f"{target.name}.{algo}")) as fh:
        fh.write(f"{expected}  {target.name}\n")


def _accept_local(path: Path, kind: str, index: Path | None, out: Path, force: bool,
                  started: float) -> dict:
    path = path.resolve()
    if index is not None and not index.is_file():
        raise StageError(f"index {index} does not exist: give the dump's -multistream-index.txt.bz2, "
                         "or leave --index out")
    index = (index or find_index(path))
    options = {"local_dump": str(path)}
    if index is not None:
        index = index.resolve()
        options["index"] = str(index)
    run = StageRun("download", out, options, fingerprint_inputs([path]), force=force)
    if run.complete:
        return run.skip()
    summary = {"dump": str(path), "compression": kind, "input_bytes": path.stat().st_size,
               "checksum": "none (local file, recorded by path)", "seconds": round(time.time() - started, 2)}
    extra = {"dump": str(path)}
    if index is not None:
        summary["index"] = extra["index"] = str(index)
    return run.finish(summary, [], extra=extra)


@click.command("download")
@click.option("--date", default="latest", show_default=True,
              help="Dump date YYYYMMDD, or 'latest' (the newest finished dump).")
@click.option("--dump", "dump", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Use this local dump (.xml/.bz2/.xz/.gz) instead of downloading (offline).")
@click.option("--input", "input", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Same as --dump.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/download].")
@click.option("--index", "index", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The index of a local multistream --dump [default: found beside it by name].")
@click.option("--multistream/--single-stream", default=True, show_default=True,
              help="Fetch the multistream dump and its index (extract splits it over workers), "
                   "or the single-stream one.")
@click.option("--base-url", default=None, metavar="URL",
              help=f"Dump server or mirror [default: ${BASE_URL_ENV} or {DEFAULT_BASE_URL}].")
@click.option(ALLOW_UNKNOWN, "allow_unknown_lang", is_flag=True,
              help="Take --lang as it is: no check against the dump's <siteinfo> nor the list of "
                   "Wikipedias (for a wiki that is not on the list).")
@force_option
@click.pass_obj
def command(g, date, dump, input, output, index, multistream, base_url, force, allow_unknown_lang):
    """Download the --lang Wikipedia dump (resumable, checksum-verified), or take --dump PATH.

    No network? Pass a local dump with --dump PATH.
    """
    download(**g.kwargs(), date=date, dump=dump, input=input, output=output, base_url=base_url,
             force=force, index=index, multistream=multistream,
             allow_unknown_lang=allow_unknown_lang)
