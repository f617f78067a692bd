"""extract on a multistream dump: cut into byte ranges at stream starts (from the index, or
searched for and confirmed by decompressing), the same JSON lines in the same order as the
single-stream form, task boundaries that depend on neither the index nor --workers, and clear
lines for an index that does not fit."""
from __future__ import annotations

import bz2
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.extract import extract
from pipeline.text.multistream import RangeStatus, find_index, read_header, read_index, read_range, split_pages
from tests.helpers.multistream_dump import make_multistream


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("wiki_*"))}


@pytest.fixture
def multistream(sample_dump, tmp_path):
    return make_multistream(sample_dump, tmp_path / "dumps", pages_per_stream=4)


def test_same_lines_as_single_stream_with_or_without_index_for_any_workers(sample_dump, multistream, tmp_path):
    dump, index = multistream
    single = extract(input=sample_dump, output=tmp_path / "single", workers=1, task_mb=0.02)
    with_index = extract(input=dump, output=tmp_path / "index", workers=1, task_mb=0.02)
    index.rename(tmp_path / "elsewhere.txt.bz2")   # no index beside it: stream starts are searched
    searched = extract(input=dump, output=tmp_path / "searched", workers=2, task_mb=0.02)
    a, b, c = files(tmp_path / "single"), files(tmp_path / "index"), files(tmp_path / "searched")
    assert b == c and len(b) > 5                  # the same files, cut the same way
    assert b"".join(a.values()) == b"".join(b.values())   # the same lines in the same order
    for key in ("documents", "dropped"):
        assert single[key] == with_index[key] == searched[key]
    urls = {json.loads(line)["url"] for f in b.values() for line in f.splitlines()}
    assert all(u.startswith("https://hu.wikipedia.org/wiki?curid=") for u in urls)  # siteinfo in every range


def test_the_index_beside_the_dump_is_found_and_read(multistream, tmp_path):
    dump, index = multistream
    assert find_index(dump) == index
    offsets = read_index(index)
    lines = bz2.decompress(index.read_bytes()).decode().splitlines()
    assert len(lines) > len(offsets) > 5          # many pages share one stream's offset
    assert offsets == sorted({int(line.split(":", 1)[0]) for line in lines})
    assert offsets[0] == read_header(dump).end


def test_titles_with_colons_and_a_bad_index_line(tmp_path):
    good = tmp_path / "i.txt.bz2"
    good.write_bytes(bz2.compress("600:1:Kategória:Magyar: a b\n600:2:X\n9000:3:Y:Z\n".encode()))
    assert read_index(good) == [600, 9000]
    bad = tmp_path / "bad.txt.bz2"
    bad.write_bytes(bz2.compress(b"600 1 no colons\n"))
    with pytest.raises(StageError, match="line 1 is not 'offset:page_id:title'"):
        read_index(bad)


def test_an_index_of_another_dump_is_one_clear_line(multistream, tmp_path):
    dump, index = multistream
    other = tmp_path / "other.txt.bz2"
    offsets = read_index(index)
    other.write_bytes(bz2.compress(f"{offsets[0]}:1:A\n{offsets[1] + 7}:2:B\n".encode()))
    res = CliRunner().invoke(cli, ["extract", "--input", str(dump), "--index", str(other),
                                   "--output", str(tmp_path / "o"), "--task-mb", "0.02"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    errors = [line for line in re.split(r"[\r\n]", res.output) if "Error:" in line]
    assert len(errors) == 1 and errors[0].startswith("Error: the index does not match")


def test_index_with_a_dump_that_is_not_multistream(sample_dump, multistream, tmp_path):
    _dump, index = multistream
    with pytest.raises(StageError, match="goes with a multistream dump"):
        extract(input=sample_dump, index=index, output=tmp_path / "o")


def test_a_magic_that_is_no_stream_start_is_skipped(sample_dump, tmp_path):
    """Bytes that look like a stream start but do not decompress are passed over."""
    _header, pages, _footer = split_pages(bz2.decompress(sample_dump.read_bytes()))
    real = bz2.compress(b"".join(p for p, _, _ in pages[:3]))
    fake = b"xxBZh91AY&SY" + bytes(range(256)) * 4
    path = tmp_path / "d.bz2"
    path.write_bytes(fake + real)
    status = RangeStatus()
    xml = b"".join(read_range(path, 0, len(fake) + 1, None, status))
    assert status.first == len(fake) and status.stop == len(fake) + len(real)
    assert xml == b"".join(p for p, _, _ in pages[:3])


def test_a_truncated_multistream_dump_keeps_the_complete_pages(sample_dump, multistream, tmp_path, caplog):
    dump, index = multistream
    cut = tmp_path / "cut-multistream.xml.bz2"
    offsets = read_index(index)
    cut.write_bytes(dump.read_bytes()[:offsets[-2] + 200])   # the file ends inside a stream
    summary = extract(input=cut, index=index, output=tmp_path / "o", workers=1, task_mb=0.02)
    assert summary["truncated"] and 0 < summary["documents"] < 41
    assert "truncated" in caplog.text
    searched = extract(input=cut, output=tmp_path / "s", workers=1, task_mb=0.02)   # no index
    assert searched["truncated"] and files(tmp_path / "s") == files(tmp_path / "o")


def test_a_bz2_of_many_streams_cut_anywhere_reads_as_one_stream(sample_dump, tmp_path):
    """pbzip2-style files: several streams, cut mid-page; no header stream, so one reader."""
    xml = bz2.decompress(sample_dump.read_bytes())
    path = tmp_path / "p.xml.bz2"
    path.write_bytes(b"".join(bz2.compress(xml[i:i + 30_000]) for i in range(0, len(xml), 30_000)))
    assert read_header(path) is None
    extract(input=path, output=tmp_path / "p", workers=1, task_mb=0.02)
    extract(input=sample_dump, output=tmp_path / "s", workers=1, task_mb=0.02)
    assert files(tmp_path / "p") == files(tmp_path / "s")


@pytest.mark.parametrize("with_index", [True, False])
def test_a_corrupt_stream_is_one_clear_error(multistream, tmp_path, with_index):
    dump, index = multistream
    offsets = read_index(index)
    data = bytearray(dump.read_bytes())
    # a stream past the first 64 KB of XML, which `check_dump` reads (and may find corrupt first)
    middle = (offsets[6] + offsets[7]) // 2
    data[middle:middle + 40] = bytes(40)
    bad = tmp_path / "bad-multistream.xml.bz2"
    bad.write_bytes(bytes(data))
    # with the index the stream is known and fails to decompress; searched for, it is not found
    # and the streams read around it do not join up
    message = "is corrupt" if with_index else f"do not join up at byte {offsets[6]:,}.*corrupt"
    with pytest.raises(StageError, match=message):
        extract(input=bad, index=index if with_index else None, output=tmp_path / "o", workers=1,
                task_mb=0.02)
    assert not (tmp_path / "o" / "manifest.json").exists()


def test_a_corrupt_last_stream_is_not_lost_silently(multistream, tmp_path):
    dump, index = multistream
    offsets = read_index(index)
    data = bytearray(dump.read_bytes())
    data[offsets[-1] + 10:offsets[-1] + 50] = bytes(40)
    bad = tmp_path / "bad-multistream.xml.bz2"
    bad.write_bytes(bytes(data))
    with pytest.raises(StageError, match="corrupt"):
        extract(input=bad, output=tmp_path / "o", workers=1, task_mb=0.02)
