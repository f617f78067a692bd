"""Section `funnel`: what each stage received and kept (documents, sentences, bytes, seconds),
with a red warning where a stage lost an unusual share of its input.

The figures come from the stages' manifests only (no corpus is read). "Lost" is what a stage
dropped of what it was given: articles extract found empty, articles format found empty,
documents the filter rejected, text bytes split did not pass on.
"""
from __future__ import annotations

from pipeline.core.report import human_bytes

from .figures import panels
from .inputs import ReportInputs
from .page import Section, num, percent, table

# The share of its input a stage may drop before the report calls it unusual.
LOSS_LIMITS = {"extract": 0.10, "format": 0.10, "split": 0.02, "filter": 0.30}
# The filter drops whole documents and, inside kept ones, lines (repeated and unbalanced ones): its share of
# the text bytes lost is checked too.
FILTER_BYTES_LIMIT = 0.40
LOSS_WHAT = {
    "extract": "of the articles were empty after wikiextractor",
    "format": "of the articles were empty after cleaning",
    "split": "of the text bytes did not reach the sentence files",
    "filter": "of the documents were rejected",
}


def _lost(stage: str, s: dict) -> float | None:
    """The share of its input `stage` dropped, from its summary."""
    if stage == "extract":
        empty = (s.get("dropped") or {}).get("empty", 0)
        total = s.get("documents", 0) + empty
        return empty / total if total else None
    if stage == "format":
        empty = (s.get("dropped") or {}).get("empty_articles", 0)
        total = s.get("documents", 0) + empty
        return empty / total if total else None
    if stage == "split":
        # split writes each sentence on its own line: the bytes stay within a few per mille
        ib, ob = s.get("input_bytes"), s.get("output_bytes")
        return max(0.0, 1 - ob / ib) if ib and ob is not None else None
    if stage == "filter":
        return s["rejected"] / s["documents"] if s.get("documents") else None
    return None


def _documents(stage: str, s: dict):
    if stage == "filter":
        return s.get("kept")
    if stage == "encode":
        return s.get("instances")
    return s.get("documents")


def funnel_rows(data: ReportInputs) -> list[dict]:
    """One row per finished stage, in pipeline order (encode once per HDF5 set)."""
    rows = []
    for stage in ("download", "extract", "format", "split", "filter", "shard", "vocab"):
        m = data.manifest(stage)
        if m is None:
            continue
        s = m.get("summary") or {}
        rows.append({"stage": stage, "documents": _documents(stage, s),
                     "sentences": s.get("sentences"),
                     "bytes": s.get("output_bytes", s.get("input_bytes") if stage == "download" else None),
                     "seconds": m.get("seconds"), "lost": _lost(stage, s)})
    for _folder, m in data.encodings:
        s = m.get("summary") or {}
        o = m.get("options") or {}
        rows.append({"stage": f"encode {o.get('max_seq')}/{o.get('max_pred')}",
                     "documents": s.get("documents"), "sentences": None,
                     "bytes": sum(x.get("bytes", 0) for x in m.get("outputs", [])),
                     "seconds": m.get("seconds"), "lost": None,
                     "instances": s.get("instances")})
    return rows


def funnel_section(data: ReportInputs) -> Section:
    sec = Section("funnel", "Funnel: what each stage kept")
    rows = funnel_rows(data)
    if not rows:
        sec.note("No stage has finished in this folder yet: run `pipeline run` first.")
        return sec
    for r in rows:
        limit = LOSS_LIMITS.get(r["stage"])
        r["bad"] = limit is not None and r["lost"] is not None and r["lost"] > limit
        if r["bad"]:
            sec.warn(f"{r['stage']}: {percent(r['lost'])} {LOSS_WHAT[r['stage']]} "
                     f"(more than {percent(limit, 0)} is unusual)")
    flt = data.summary("filter")
    if flt.get("input_bytes"):
        byte_loss = 1 - flt.get("output_bytes", 0) / flt["input_bytes"]
        if byte_loss > FILTER_BYTES_LIMIT:
            sec.warn(f"filter: {percent(byte_loss)} of the text bytes did not reach filtered/ "
                     f"(more than {percent(FILTER_BYTES_LIMIT, 0)} is unusual; its summary in "
                     "filtered/manifest.json says what was dropped)")
            for r in rows:
                r["bad"] = r["bad"] or r["stage"] == "filter"
    ext = data.summary("extract")
    if ext.get("truncated"):
        sec.warn("extract: the dump is truncated (it ends inside a page); the articles after "
                 "the cut are missing")

    cells = [("stage", "documents", "sentences", "output", "seconds", "lost", "limit")]
    for r in rows:
        limit = LOSS_LIMITS.get(r["stage"])
        docs = num(r["documents"])
        if r.get("instances") is not None:
            docs = f"{num(r['documents'])} docs → {num(r['instances'])} instances"
        cells.append((r["stage"], docs, num(r["sentences"]),
                      human_bytes(r["bytes"]) if r["bytes"] is not None else "-",
                      num(r["seconds"], 1) if r["seconds"] is not None else "-",
                      percent(r["lost"]), percent(limit, 0) if limit else ""))
    bad = {i for i, r in enumerate(rows) if r["bad"]}
    labels = [r["stage"] for r in rows]
    flags = [r["bad"] for r in rows]
    sec.add(panels([
        ("documents", labels, [r["documents"] for r in rows], flags),
        ("output bytes", labels, [r["bytes"] for r in rows], flags),
        ("seconds", labels, [r["seconds"] for r in rows], flags),
    ], title="Each stage's output (red: lost an unusual share)"))
    sec.add(table(cells, numeric={1, 2, 3, 4, 5, 6}, bad_rows=bad))
    dropped = ext.get("dropped") or {}
    if dropped:
        sec.note("extract skipped pages that are not articles: "
                 + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in dropped.items())
                 + " (redirects and other namespaces are expected).")
    return sec
