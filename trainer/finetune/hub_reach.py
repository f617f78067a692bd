"""Whether the Hugging Face Hub answers, asked once a process with one request: where it does not,
datasets and models are read from the cache alone (the libraries' offline mode), so that a
`--suite` or a `--compare` model without a network ends in one line within seconds, instead of
huggingface_hub's retries of every file (24 lines over 25 s, issue 60).

    with hub_or_cache() as unreachable:   # "" where the Hub answers, else why not
        datasets.load_dataset("unimelb-nlp/wikiann", "hu")

HF_HUB_OFFLINE / HF_DATASETS_OFFLINE set by the user: offline, nothing asked. Any answer of the
Hub's server (even an error status) counts as reachable; a refused or timed-out connection, a
name that does not resolve or a proxy that fails does not.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator


@functools.lru_cache(maxsize=1)
def hub_unreachable() -> str:
    """"" where the Hub's endpoint answers one HEAD request, else the reason in a few words."""
    from huggingface_hub import constants, get_session

    if constants.HF_HUB_OFFLINE:
        return ""   # the user's own offline mode: the libraries answer for it
    try:
        get_session().head(constants.ENDPOINT, timeout=constants.HF_HUB_ETAG_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - whatever the transport raises: no answer came
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"{constants.ENDPOINT}: {reason}"
    return ""


@contextlib.contextmanager
def hub_or_cache() -> Iterator[str]:
    """The block runs in offline mode where the Hub cannot be reached (its reason given to the
    block), as it would under HF_HUB_OFFLINE=1; the libraries' settings are restored after."""
    unreachable = hub_unreachable()
    if not unreachable:
        yield ""
        return
    import huggingface_hub.constants as hub

    saved = [hub.HF_HUB_OFFLINE]
    hub.HF_HUB_OFFLINE = True
    try:
        import datasets.config as ds
    except ImportError:
        ds = None
    if ds is not None:
        saved.append(ds.HF_HUB_OFFLINE)
        ds.HF_HUB_OFFLINE = True
    try:
        yield unreachable
    finally:
        hub.HF_HUB_OFFLINE = saved[0]
        if ds is not None:
            ds.HF_HUB_OFFLINE = saved[1]
