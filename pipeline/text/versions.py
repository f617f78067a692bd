"""The version of each text stage's rules, and the libraries that shape its output.

A stage's rules version goes into its manifest: output made by other rules is redone, never
reported as "already done" with the old text (pipeline/core/runner.py). Bump a stage's number
whenever a change of its rules changes what it writes; later stages see a new input anyway.
The versions of the libraries a stage runs are recorded beside it, for the record.

Usage:
    StageRun("format", out, options, fp, rules=stage_rules("format"))
    run.finish(summary, outputs, extra={"libraries": library_versions("format")})
"""
from __future__ import annotations

from importlib import metadata

# 2: inline templates and colon links keep their text; per-script holes, lead-ins and non-prose
#    lines; sentences never end inside brackets; learned abbreviations; case per alphabet,
#    one-sentence stubs and repeated lines dropped.
# 3: format removes brackets that match nothing and keeps a lead-in before a quotation; split
#    protects brackets that close within 1,200 characters (was 400); filter can drop lines
#    whose brackets or quotes do not balance (--drop-unbalanced).
# extract 3: records carry "links" (the offsets and targets of the article links in "text", for
#    the probe stage); the text is unchanged. probe 1: the first rules of the probe.
RULES_VERSIONS = {"extract": 3, "format": 3, "split": 3, "filter": 3, "probe": 1}
LIBRARIES = {
    "extract": ("wikiextractor",),
    "format": (),
    "split": ("quntoken",),
    "filter": ("langdetect", "numpy"),
    "vocab": ("sentencepiece", "tokenizers"),
}


def stage_rules(stage: str) -> dict:
    return {"rules_version": RULES_VERSIONS[stage]}


def library_versions(stage: str) -> dict[str, str]:
    found = {}
    for name in LIBRARIES.get(stage, ()):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found
