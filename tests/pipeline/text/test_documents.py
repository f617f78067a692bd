"""The text stages' file format read whole (read_utf8 + documents) and a line at a time
(read_documents, which dedup uses on files of any size): the same documents, the same one-line
error for a file that is not UTF-8."""
from __future__ import annotations

import pytest

from pipeline.core.errors import StageError
from pipeline.text.documents import documents, format_documents, read_documents, read_utf8

TEXT = ("\ufeffПерший абзац.\r\nДругий\u00a0рядок \u2028 з розділювачем\n\n\n  \n"
        "Ἀρχή ἥμισυ παντός\rκαι\n\nالفقرة الثالثة\n   \nलास्ट")


def test_a_line_at_a_time_reads_the_same_documents(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    whole = list(documents(read_utf8(path)))
    assert list(read_documents(path)) == whole and len(whole) == 4
    assert whole[0][0] == "Перший абзац."                          # no BOM, no \r
    assert format_documents(read_documents(path)) == format_documents(whole)


def test_not_utf8_is_the_same_one_line_error(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes("перший\n\nдругий ".encode() + b"\xff rest\n")
    with pytest.raises(StageError) as whole:
        read_utf8(path)
    with pytest.raises(StageError) as streamed:
        list(read_documents(path))
    assert str(streamed.value) == str(whole.value)
    assert "invalid byte 0xff at offset 27" in str(whole.value) and "\n" not in str(whole.value)
