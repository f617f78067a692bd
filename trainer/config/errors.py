"""The config's one error: a bad flag or config file, said in one line (checks.py, languages.py,
init_from.py and resolved.py raise it; run_pretraining.py prints it as `Error: ...`)."""
from __future__ import annotations


class ConfigError(ValueError):
    """A bad flag or config file; the message says what is wrong and what to do."""
