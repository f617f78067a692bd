"""Several languages in one run: the --input_dir LANG=DIR folders and the --sampling_alpha
schedule, read and checked (no data, no torch; the sampling itself is trainer/data/mixture.py).

    parse_input_dirs(["hr=/d/hr", "sr=/d/sr"])   # {"hr": "/d/hr", "sr": "/d/sr"} (sorted by code)
    parse_input_dirs(["/d/hu"])                  # "/d/hu": one plain folder, today's run
    parse_alpha_schedule("0.7,0.5,0.3")          # [(0.7, 0), (0.5, 1/3), (0.3, 2/3)]
    parse_alpha_schedule("0.7@0,0.5@0.4,0.3@0.8")

--input_dir is repeatable: a plain DIR once (one folder, as before), or LANG=DIR for every
language (the key a plain code: letters and '-', e.g. hr, zh-yue; the pipeline checks that the
code is a Wikipedia's). In the JSON --config_file: a string, a list of those strings, or an
object {"hr": DIR, ...}. The languages are kept sorted by code, so the order of the flags does
not change the run.

--sampling_alpha: a language's share of the samples is proportional to (its share of the
training samples) ** alpha, normalised (1: proportional to the data, 0: uniform). A schedule over
the run: `A1,A2,...,An` (n equal parts of max_steps) or `A1@F1,A2@F2,...` (Ai from the share Fi
of max_steps on: F1 = 0, increasing, below 1). Each alpha is in [0, 1].
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from trainer.config.errors import ConfigError

CODE = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
ALPHA_SYNTAX = ("give one exponent (0.3), n exponents for n equal parts of max_steps "
                "(0.7,0.5,0.3), or exponents from a share of max_steps on (0.7@0,0.5@0.4,0.3@0.8); "
                "each in [0, 1]")


def _split(text: str) -> tuple[str, str] | None:
    """(code, folder) of `LANG=DIR`; None for a plain folder (no '=' before any '/')."""
    key, eq, folder = text.partition("=")
    if not eq or "/" in key or "\\" in key:
        return None
    if not CODE.fullmatch(key):
        raise ConfigError(f"--input_dir {text}: {key!r} is not a language code (letters and '-', "
                          "e.g. hr or zh-yue); a folder whose name holds '=' is given as ./NAME")
    if not folder:
        raise ConfigError(f"--input_dir {text}: give the folder after '=' ({key}=DIR)")
    return key, folder


def parse_input_dirs(value) -> str | dict[str, str] | None:
    """--input_dir as given (a string, a list of strings, a {code: folder} object) -> one plain
    folder (a string) or {code: folder} sorted by code; see the module docstring."""
    if value is None or isinstance(value, str):
        items = [] if value is None else [value]
    elif isinstance(value, dict):
        items = [f"{k}={v}" if isinstance(k, str) and isinstance(v, str) else None
                 for k, v in value.items()]
        if None in items or any(_split(t) is None for t in items):
            raise ConfigError("--input_dir as an object must map language codes to folders, "
                              'e.g. {"hr": "DIR", "sr": "DIR"}')
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise ConfigError(f"--input_dir {value!r}: give a folder, LANG=DIR items or "
                          '{"LANG": "DIR", ...}')
    if not items:
        return None
    keyed = [_split(t) for t in items]
    if all(k is None for k in keyed):
        if len(items) > 1:
            raise ConfigError(f"--input_dir given {len(items)} times without languages: give one "
                              "folder, or LANG=DIR for every language (--input_dir hr=DIR "
                              "--input_dir sr=DIR)")
        return items[0]
    if any(k is None for k in keyed):
        plain = items[keyed.index(None)]
        raise ConfigError(f"--input_dir {plain} has no language while others do: give LANG=DIR "
                          "for every language")
    out: dict[str, str] = {}
    for code, folder in keyed:
        same = next((c for c in out if c.lower() == code.lower()), None)
        if same is not None:
            raise ConfigError(f"language {code} is given twice (--input_dir {same}={out[same]} and "
                              f"{code}={folder}): give each language once")
        twice = next((c for c, f in out.items() if f.rstrip("/") == folder.rstrip("/")), None)
        if twice is not None:
            raise ConfigError(f"--input_dir {twice}={out[twice]} and {code}={folder} name the same "
                              "folder: give each language its own encode output")
        out[code] = folder
    return dict(sorted(out.items()))


def _number(text: str, what: str, spec: str) -> Fraction:
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ConfigError(f"--sampling_alpha {spec}: {what} {text.strip()!r} is not a number; "
                          f"{ALPHA_SYNTAX}") from None
    return value


def parse_alpha_schedule(spec) -> list[tuple[float, Fraction]]:
    """[(alpha, the share of max_steps it starts at), ...], the first at 0; see the module doc."""
    text = str(spec).strip()
    parts = [p for p in text.split(",")]
    if not text or any(not p.strip() for p in parts):
        raise ConfigError(f"--sampling_alpha {text!r} is empty or has an empty part; {ALPHA_SYNTAX}")
    timed = ["@" in p for p in parts]
    if any(timed) and not all(timed):
        raise ConfigError(f"--sampling_alpha {text}: give a start (@share of max_steps) to every "
                          f"exponent or to none; {ALPHA_SYNTAX}")
    out = []
    for i, part in enumerate(parts):
        a, _, start = part.partition("@")
        alpha = _number(a, "exponent", text)
        if not 0 <= alpha <= 1:
            raise ConfigError(f"--sampling_alpha {text}: exponent {a.strip()} is outside [0, 1] "
                              "(1: proportional to the data, 0: every language alike)")
        begin = _number(start, "start", text) if all(timed) else Fraction(i, len(parts))
        out.append((float(alpha), begin))
    starts = [b for _, b in out]
    if starts[0] != 0:
        raise ConfigError(f"--sampling_alpha {text}: the first exponent must start at @0")
    if any(not 0 <= b < 1 for b in starts) or any(x >= y for x, y in zip(starts, starts[1:])):
        raise ConfigError(f"--sampling_alpha {text}: the starts must increase from 0 and stay "
                          "below 1 (shares of max_steps)")
    return out


def normalise_alpha(value) -> str:
    """The flag's text from a config file's number or string (a bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise ConfigError(f"sampling_alpha {value!r}: {ALPHA_SYNTAX}")
    return str(value)


def schedule_steps(schedule, max_steps: int) -> list[tuple[float, int]]:
    """[(alpha, the step it starts at)] for a run of `max_steps` optimizer steps."""
    return [(alpha, math.floor(start * max_steps)) for alpha, start in schedule]
