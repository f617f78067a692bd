"""The fine-tuning readers' error and their way of opening a user's file.

Every reader reports a bad file as one line, `PATH:LINE: what is wrong; what to do` (LINE left
out when the problem is not about one line), so that the fine-tuning entry can print it as
`Error: ...` without a traceback:

    raise FinetuneDataError.at(path, "3 columns where line 2 has 4; ...", line=17)
    text = read_text(path)     # whole file as str; missing file / non-UTF-8 -> FinetuneDataError

The readers re-export FinetuneDataError from `trainer.finetune.readers`; import it from there.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Union

PathLike = Union[str, "os.PathLike[str]"]


class FinetuneDataError(ValueError):
    """Bad input file; str() is one line: 'PATH:LINE: what is wrong; what to do' (LINE omitted
    when not about a line). `path` and `line` are kept as attributes (None when not given)."""

    def __init__(self, message: str, path: PathLike | None = None, line: int | None = None):
        # one line whatever went into it: a value quoted from the file may hold a newline
        super().__init__(" ".join(str(message).split("\n")))
        self.path = None if path is None else str(path)
        self.line = line

    @classmethod
    def at(cls, path: PathLike, what: str, line: int | None = None) -> FinetuneDataError:
        """The error for `path` (and `line`, 1-based): 'PATH:LINE: what'."""
        where = f"{path}:{line}" if line is not None else f"{path}"
        return cls(f"{where}: {what}", path=path, line=line)


def read_text(path: PathLike) -> str:
    """The file's text (UTF-8, a byte-order mark dropped); one-line errors for a missing,
    unreadable or non-UTF-8 file (with the line of the first bad byte)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FinetuneDataError.at(path, "no such file; check the path") from None
    except IsADirectoryError:
        raise FinetuneDataError.at(path, "is a folder; pass the data file itself") from None
    except OSError as e:
        raise FinetuneDataError.at(path, f"cannot read it ({e.strerror}); check the path "
                                         "and its permissions") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FinetuneDataError.at(
            path, f"not UTF-8 text (byte 0x{data[e.start]:02x}); convert the file to UTF-8, "
                  "e.g. iconv -f latin1 -t utf-8", line) from None
    # Windows editors start UTF-8 files with a BOM; it would stick to the first word or header
    return text[1:] if text.startswith("\ufeff") else text


def text_lines(text: str) -> list[str]:
    """Lines as editors number them: split on \\n only (str.splitlines also splits on \\x0c,
    \\u2028 and others, which would shift line numbers), a trailing \\r dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
