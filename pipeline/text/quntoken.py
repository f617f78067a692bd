"""Hungarian sentence splitting with quntoken, in large batches, without losing a character.

quntoken's sentence pipeline (qt_preproc | qt_snt | qt_sntcorr | qt_sntcorr) in raw form
copies its input and wraps each sentence in marker characters (U+1F030 start, U+1F031 end,
U+1F032/U+1F033 around the space between sentences). Two of its habits would damage text:
it turns characters outside the Latin, Greek and Cyrillic scripts into U+FFFD, and it drops
U+200D and U+FEFF, stops at NUL and splits at other control characters. So it is only asked
*where* sentences end: the offsets of its end markers
are mapped back onto the original text, and the sentences are cut from the original, so no
U+FFFD that was not in the input reaches the output. Lines (paragraphs) are cut by the
caller as well, so quntoken joining a line without a final . ! ? onto the next one does no
harm. One call per file: each call starts five processes (~4 ms).

Usage:
    ends = sentence_end_offsets(text)     # sorted character offsets into `text`
    split_paragraphs(text)                # [[sentence, ...] per paragraph line]
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import threading
from functools import lru_cache

from pipeline.core.errors import StageError

START, END, GAP_OPEN, GAP_CLOSE = "\U0001F030", "\U0001F031", "\U0001F032", "\U0001F033"
MARKERS = START + END + GAP_OPEN + GAP_CLOSE
# Characters quntoken would drop or confuse with its markers: replaced in the copy it reads.
_PROTECT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f\u200d\ufeff{MARKERS}]")
MODULES = ("preproc", "snt", "sntcorr", "sntcorr")


class QuntokenMisaligned(RuntimeError):
    """quntoken changed the text in a way its offsets cannot be mapped back."""


@lru_cache(maxsize=1)
def _binaries() -> list[str]:
    spec = importlib.util.find_spec("quntoken")
    if spec is None or not spec.submodule_search_locations:
        raise StageError("quntoken is not installed: `pip install quntoken` (needed for --lang hu), "
                         "or use --splitter rules")
    folder = list(spec.submodule_search_locations)[0]
    paths = [os.path.join(folder, f"qt_{m}") for m in MODULES]
    for p in paths:
        if not os.access(p, os.X_OK):
            raise StageError(f"quntoken's {p} is missing or not executable: reinstall quntoken")
    return paths


def run_quntoken(text: str) -> str:
    """quntoken's raw sentence output for `text` (one pipeline of five processes)."""
    procs = []
    stdin = subprocess.PIPE
    for path in _binaries():
        p = subprocess.Popen([path], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if procs:
            procs[-1].stdout.close()  # only the next process holds the pipe now
        procs.append(p)
        stdin = p.stdout
    data = text.encode("utf-8")

    def feed():
        try:
            procs[0].stdin.write(data)
        except BrokenPipeError:
            pass
        finally:
            procs[0].stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out = procs[-1].stdout.read()
    procs[-1].stdout.close()
    writer.join()
    codes = [p.wait() for p in procs]
    if any(codes):
        raise StageError(f"quntoken failed (exit codes {codes}): reinstall quntoken, "
                         "or split with --splitter rules")
    return out.decode("utf-8", errors="replace")


def sentence_end_offsets(text: str) -> list[int]:
    """Offsets into `text` where quntoken ends a sentence."""
    if not text:
        return []
    out = run_quntoken(_PROTECT.sub("\ufffd", text))
    # Only the end markers matter: drop the others (str.replace is C-fast), then an end
    # marker's index minus the end markers before it is an offset into `text`.
    for marker in (START, GAP_OPEN, GAP_CLOSE):
        out = out.replace(marker, "")
    ends = []
    find = out.find
    i = find(END)
    while i >= 0:
        ends.append(i - len(ends))
        i = find(END, i + 1)
    if len(out) - len(ends) != len(text):
        # quntoken changed the length of the text: its offsets cannot be trusted.
        raise QuntokenMisaligned(f"quntoken output does not align with its input "
                                 f"({len(out) - len(ends)} vs {len(text)} chars)")
    return ends


BATCH_CHARS = 4_000_000  # one quntoken call per ~4 M characters: cheap calls, bounded memory


def split_paragraphs(text: str) -> list[list[str]]:
    """The sentences of each line of `text` (empty list for a blank line).

    Long texts go to quntoken in batches that end at a blank line (a document boundary).
    """
    lines = text.split("\n")
    result: list[list[str]] = []
    start = size = 0
    for i, line in enumerate(lines):
        size += len(line) + 1
        if size >= BATCH_CHARS and not line.strip():
            result += _split_batch("\n".join(lines[start:i + 1]))
            start, size = i + 1, 0
    if start < len(lines):
        result += _split_batch("\n".join(lines[start:]))
    return result


def _split_batch(text: str) -> list[list[str]]:
    ends = sentence_end_offsets(text)
    result = []
    k, n_ends = 0, len(ends)
    line_start = 0
    for line in text.split("\n"):
        line_end = line_start + len(line)
        if k >= n_ends or ends[k] >= line_end:   # no cut inside this line: most short ones
            while k < n_ends and ends[k] <= line_end:
                k += 1
            piece = line.strip()
            result.append([piece] if piece else [])
            line_start = line_end + 1
            continue
        sentences = []
        prev = 0
        while k < n_ends and ends[k] <= line_end:
            cut = ends[k] - line_start
            k += 1
            if cut > prev:
                piece = line[prev:cut].strip()
                if piece:
                    sentences.append(piece)
                prev = cut
        piece = line[prev:].strip()
        if piece:
            sentences.append(piece)
        result.append(sentences)
        line_start = line_end + 1
    return result
