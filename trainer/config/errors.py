"""The config's one error: a bad flag or config file, said in one line (checks.py, languages.py,
init_from.py, phases.py and resolved.py raise it; run_pretraining.py prints it as `Error: ...`);
and the one reader of the JSON files the flags name (--config_file, --phases), which says so."""
from __future__ import annotations

import json


class ConfigError(ValueError):
    """A bad flag or config file; the message says what is wrong and what to do."""


def read_json(path: str, flag: str, missing: str = ""):
    """The JSON file `path` that `flag` names; one ConfigError when it is missing (+ `missing`),
    unreadable or not JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{flag} {path} not found{missing}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{flag} {path} is not valid JSON: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{flag} {path} cannot be read: {exc.strerror or exc}") from None
