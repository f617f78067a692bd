"""The masking rate the data was encoded with: what --mlm_probability defaults to with
--masking dynamic, so that continued pretraining on `pipeline encode --masked-lm-prob 0.3` data
masks 30% unless told otherwise (issue 46).

    encoded_rate("data/hu/hdf5_..._masked_lm_prob_0.3_...")   # (0.3, "its encode manifest") or None
    rate_note(found)              # the one log line saying where the run's rate came from

The rate is the encode manifest's option masked_lm_prob (in --input_dir or the folder above it),
else the `_masked_lm_prob_P_` of the folder's name (pipeline/encoding/hdf5_format.py's
output_folder_name); with several languages, their common rate. Read without torch or h5py.
"""
from __future__ import annotations

import re
from pathlib import Path

from common.encode_manifest import encode_manifest

_IN_NAME = re.compile(r"_masked_lm_prob_([0-9.]+)_")


def _one(folder) -> tuple[float, str] | None:
    try:
        return float(encode_manifest(folder, "options")["options"]["masked_lm_prob"]), "its encode manifest"
    except (KeyError, TypeError, ValueError):
        pass
    for part in (Path(folder).name, Path(folder).parent.name):
        found = _IN_NAME.search(part)
        if found:
            try:
                return float(found.group(1).rstrip(".")), "its folder's name"
            except ValueError:
                continue
    return None


def encoded_rate(input_dir) -> tuple[float, str] | None:
    """(rate, where it was read) of --input_dir (a folder or {code: folder}), or None when the
    data does not say, or its languages were encoded at different rates."""
    if not input_dir:
        return None
    folders = list(input_dir.values()) if isinstance(input_dir, dict) else [input_dir]
    found = [_one(f) for f in folders]
    rates = {f[0] for f in found if f is not None}
    if None in found or len(rates) != 1 or not 0 < next(iter(rates)) < 1:
        return None
    return found[0]


def rate_note(found: tuple[float, str]) -> str:
    """The log line of a dynamic-masking run that took the data's rate (`found`: encoded_rate's)."""
    rate, where = found
    return (f"masking: {rate:g} of the tokens, the rate --input_dir was encoded with ({where}: "
            f"masked_lm_prob {rate:g}); --mlm_probability sets another")
