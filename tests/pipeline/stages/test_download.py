"""download: from a local HTTP server on 127.0.0.1 (never the internet), and local --dump files.
The server publishes the sample as a multistream dump with its index (what download fetches by
default) and as the single-stream dump (--single-stream)."""
from __future__ import annotations

import bz2
import hashlib
import http.server
import json
import threading

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.download import download
from tests.helpers.multistream_dump import make_multistream

DATE = "20240501"
NAME = f"huwiki-{DATE}-pages-articles-multistream.xml.bz2"
INDEX = f"huwiki-{DATE}-pages-articles-multistream-index.txt.bz2"
SINGLE = f"huwiki-{DATE}-pages-articles.xml.bz2"


class DumpServer(http.server.ThreadingHTTPServer):
    """Serves `files` (url path -> bytes) with Range support; can break off a response."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.cut_after: int | None = None  # send only this many bytes of the next dump response

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        srv: DumpServer = self.server  # type: ignore[assignment]
        rng = self.headers.get("Range")
        srv.requests.append((self.path, rng))
        data = srv.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        start = int(rng.split("=")[1].rstrip("-")) if rng else 0
        if start >= len(data) and rng:
            self.send_response(416)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = data[start:]
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if srv.cut_after is not None and self.path.endswith(".bz2"):
            body = body[: srv.cut_after]
            srv.cut_after = None
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture(scope="module")
def published(sample_dump, tmp_path_factory) -> dict[str, bytes]:
    """The files of the dump of DATE: the multistream dump, its index, the single-stream dump."""
    dump, index = make_multistream(sample_dump, tmp_path_factory.mktemp("pub"), pages_per_stream=5,
                                   name=f"huwiki-{DATE}-pages-articles-multistream")
    return {NAME: dump.read_bytes(), INDEX: index.read_bytes(), SINGLE: sample_dump.read_bytes()}


@pytest.fixture
def server(published):
    srv = DumpServer()
    sums = "".join(f"{hashlib.sha1(data).hexdigest()}  {name}\n" for name, data in published.items())
    srv.files = {
        **{f"/huwiki/{DATE}/{name}": data for name, data in published.items()},
        f"/huwiki/{DATE}/huwiki-{DATE}-sha1sums.txt":
            f"{'0' * 40}  huwiki-{DATE}-stub-articles.xml.gz\n{sums}".encode(),
        "/huwiki/latest/huwiki-latest-pages-articles.xml.bz2-rss.xml":
            f"<rss><channel><item><link>{'http://x'}/huwiki/{DATE}</link></item></channel></rss>".encode(),
    }
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_latest_is_resolved_downloaded_and_verified(server, published, tmp_path):
    summary = download(data_dir=tmp_path, lang="hu", base_url=server.url)
    out = tmp_path / "hu" / "download"
    assert summary["date"] == DATE and summary["checksum"] == "sha1 verified"
    for name in (NAME, INDEX):   # the multistream dump and its index, each checked
        assert (out / name).read_bytes() == published[name]
        assert (out / f"{name}.sha1").read_text().split() == [hashlib.sha1(published[name]).hexdigest(), name]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dump"] == NAME and manifest["index"] == INDEX and not list(out.glob("*.part"))
    # rerun: nothing fetched, nothing rewritten
    n = len(server.requests)
    mtime = (out / NAME).stat().st_mtime_ns
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--base-url", server.url])
    assert res.exit_code == 0 and "already done" in res.output
    assert len(server.requests) == n and (out / NAME).stat().st_mtime_ns == mtime


def test_interrupted_download_resumes_with_range(server, published, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKI2BERT_DUMPS_URL", server.url)
    server.cut_after = 10_000
    with pytest.raises(StageError, match="rerun the same command to resume"):
        download(data_dir=tmp_path, lang="hu", date=DATE)
    part = tmp_path / "hu" / "download" / f"{NAME}.part"
    assert part.stat().st_size == 10_000
    download(data_dir=tmp_path, lang="hu", date=DATE)
    assert (f"/huwiki/{DATE}/{NAME}", "bytes=10000-") in server.requests
    assert (tmp_path / "hu" / "download" / NAME).read_bytes() == published[NAME]
    assert not part.exists()


def test_whole_part_file_is_not_fetched_again(server, published, tmp_path):
    out = tmp_path / "out"
    server.cut_after = len(published[NAME])  # everything arrives, then the link drops
    try:
        download(output=out, lang="hu", date=DATE, base_url=server.url)
    except StageError:
        pass
    download(output=out, lang="hu", date=DATE, base_url=server.url)
    assert (out / NAME).read_bytes() == published[NAME]


def test_checksum_mismatch_removes_the_file(server, tmp_path):
    server.files[f"/huwiki/{DATE}/huwiki-{DATE}-sha1sums.txt"] = f"{'ab' * 20}  {NAME}\n{'ab' * 20}  {INDEX}\n".encode()
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--date", DATE,
                                   "--base-url", server.url])
    assert res.exit_code == 1 and "checksum mismatch" in res.output and "Traceback" not in res.output
    out = tmp_path / "hu" / "download"
    assert not (out / NAME).exists() and not (out / f"{NAME}.part").exists()
    assert not (out / "manifest.json").exists()


def test_md5sums_when_there_is_no_sha1sums(server, published, tmp_path):
    del server.files[f"/huwiki/{DATE}/huwiki-{DATE}-sha1sums.txt"]
    server.files[f"/huwiki/{DATE}/huwiki-{DATE}-md5sums.txt"] = "".join(
        f"{hashlib.md5(published[n]).hexdigest()}  {n}\n" for n in (NAME, INDEX)).encode()
    summary = download(output=tmp_path / "o", lang="hu", date=DATE, base_url=server.url)
    assert summary["checksum"] == "md5 verified" and (tmp_path / "o" / f"{INDEX}.md5").is_file()


def test_a_dump_date_without_an_index_says_so(server, tmp_path):
    server.files[f"/huwiki/{DATE}/huwiki-{DATE}-sha1sums.txt"] = b"0  " + NAME.encode() + b"\n"
    with pytest.raises(StageError, match=f"lists no checksum for {INDEX}"):
        download(output=tmp_path / "o", lang="hu", date=DATE, base_url=server.url)


def test_a_corrupt_index_is_removed_and_named(server, tmp_path):
    server.files[f"/huwiki/{DATE}/{INDEX}"] = b"BZh9 not the index"
    with pytest.raises(StageError, match=f"{INDEX}: sha1 checksum mismatch"):
        download(output=tmp_path / "o", lang="hu", date=DATE, base_url=server.url)
    assert (tmp_path / "o" / NAME).is_file() and not (tmp_path / "o" / INDEX).exists()


def test_single_stream_and_then_extract_from_either(server, published, tmp_path):
    from pipeline.stages.extract import extract

    one = download(data_dir=tmp_path / "a", lang="hu", date=DATE, base_url=server.url, multistream=False)
    assert one["dump"] == SINGLE and "index" not in one
    assert sorted(p.name for p in (tmp_path / "a" / "hu" / "download").glob("*.bz2")) == [SINGLE]
    download(data_dir=tmp_path / "b", lang="hu", date=DATE, base_url=server.url)
    a = extract(data_dir=tmp_path / "a", lang="hu", workers=1)
    b = extract(data_dir=tmp_path / "b", lang="hu", workers=1)
    assert a["documents"] == b["documents"] == 41
    manifest = json.loads((tmp_path / "b" / "hu" / "extracted" / "manifest.json").read_text())
    assert manifest["options"].get("multistream") is True


@pytest.mark.parametrize("args,message", [
    (["--date", "20990101"], "404"),
    (["--date", "2024-05-01"], "not a dump date"),
])
def test_missing_dump_or_bad_date_names_dump_option(server, tmp_path, args, message):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--base-url", server.url, *args])
    assert res.exit_code == 1 and message in res.output and "--dump" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_a_wrong_date_does_not_block_the_corrected_command(server, tmp_path):
    with pytest.raises(StageError, match="404"):
        download(data_dir=tmp_path, lang="hu", date="20990101", base_url=server.url)
    assert download(data_dir=tmp_path, lang="hu", date=DATE, base_url=server.url)["date"] == DATE


def test_no_network_names_dump_option(tmp_path):
    import socket
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "vi", "download",
                                   "--base-url", f"http://127.0.0.1:{port}"])
    assert res.exit_code == 1 and "cannot reach" in res.output and "--dump" in res.output


def test_local_dump_is_checked_and_recorded(sample_dump, tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--dump", str(sample_dump)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "hu" / "download"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dump"] == str(sample_dump.resolve())
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]  # recorded, not copied
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--dump", str(sample_dump)])
    assert "already done" in res.output


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"plain text, not xml\n", "not a MediaWiki XML dump"),
    (bz2.compress(b"<html><body>Not Found</body></html>"), "not a MediaWiki XML dump"),
    (b"BZh91AY&SY" + b"\x00garbage" * 50, "corrupt"),
    (b"\x1f\x8b\x08\x00" + b"\xff" * 40, "corrupt"),
    (bz2.compress(b"<mediawiki>" + b"x" * 200_000)[:40], "cut short"),
])
def test_bad_local_dumps_are_refused(tmp_path, content, message):
    dump = tmp_path / "dump.xml.bz2"
    dump.write_bytes(content)
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "download", "--dump", str(dump)])
    assert res.exit_code == 1 and message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "d" / "hu" / "download" / "manifest.json").exists()


def test_missing_local_dump(tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--dump", str(tmp_path / "nope.bz2")])
    assert res.exit_code == 1 and "does not exist" in res.output


def test_lang_that_is_a_path_is_refused_before_anything_is_written(sample_dump, tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--lang", "../x", "download",
                                   "--dump", str(sample_dump)])
    assert res.exit_code == 2 and "--lang" in res.output
    assert not (tmp_path / "d").exists() and not (tmp_path / "x").exists()
    with pytest.raises(StageError, match="not a Wikipedia language code"):
        download(data_dir=tmp_path / "d", lang="../x", dump=sample_dump)
    assert not (tmp_path / "d").exists()


def test_a_published_dump_that_is_not_a_dump_names_the_way_out(server, tmp_path):
    """The checksum matches, but the server's file is an HTML page: one line naming --dump."""
    page = b"<html><body>maintenance</body></html>\n"
    server.files[f"/huwiki/{DATE}/{NAME}"] = page
    server.files[f"/huwiki/{DATE}/huwiki-{DATE}-sha1sums.txt"] = (
        f"{hashlib.sha1(page).hexdigest()}  {NAME}\n"
        f"{hashlib.sha1(server.files[f'/huwiki/{DATE}/{INDEX}']).hexdigest()}  {INDEX}\n").encode()
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "download", "--base-url", server.url,
                                   "--date", DATE])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "not a MediaWiki XML dump" in res.output and "--dump" in res.output
    assert not (tmp_path / "hu" / "download" / "manifest.json").exists()


def test_a_local_multistream_dump_brings_its_index(sample_dump, tmp_path):
    dump, index = make_multistream(sample_dump, tmp_path / "dumps", pages_per_stream=5)
    summary = download(data_dir=tmp_path / "d", lang="hu", dump=dump)
    assert summary["index"] == str(index.resolve())       # found beside it by its name
    moved = index.rename(tmp_path / "idx.txt.bz2")
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "e"), "download", "--dump", str(dump),
                                   "--index", str(moved)])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "e" / "hu" / "download" / "manifest.json").read_text())
    assert manifest["index"] == str(moved.resolve())
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "f"), "download", "--dump", str(dump),
                                   "--index", str(tmp_path / "nope.bz2")])
    assert res.exit_code == 1 and "does not exist" in res.output
