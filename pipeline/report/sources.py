"""Section `sources`: the per-source funnel (read by ingest or format, kept by dedup, left by split
and filter, in the shards after weights with their held-out documents, in each HDF5 set with its
training tokens) and examples of the pairs dedup removed.

Only manifests are read. The section is empty (not shown) for a corpus of Wikipedia alone
that never went through ingest or dedup.
"""
from __future__ import annotations

from pipeline.encoding.hdf5_format import TRAINING_TEXT

from .inputs import ReportInputs
from .page import Section, num, percent, table

DEDUP_WARN_SHARE = 0.5   # a source losing more than this to dedup is mostly copies: say so


def source_rows(data: ReportInputs) -> list[dict]:
    """One row per source: documents read, removed by dedup (and why), in the shards, encoded."""
    dedup = data.summary("dedup").get("per_source") or {}
    ingested = data.summary("ingest").get("per_source") or {}
    shards = data.summary("shard").get("sources") or {}
    names = list(dict.fromkeys([*dedup, *ingested, *shards]))
    rows = []
    for name in names:
        d, s = dedup.get(name, {}), shards.get(name, {})
        read = ingested.get(name, {}).get("documents", d.get("documents"))
        encoded = [(m.get("options") or {}, (m.get("sources") or {}).get(name, {}),
                    ((m.get(TRAINING_TEXT) or {}).get("sources") or {}).get(name, {}).get("tokens"))
                   for _f, m in data.encodings]
        rows.append({
            "source": name, "read": read, "dedup_in": d.get("documents"), "kept": d.get("kept"),
            "exact": d.get("exact"), "near": d.get("near"), "paragraphs": d.get("paragraphs"),
            "removed_share": d.get("removed_share"), "weight": s.get("weight"), "filtered": s.get("documents"),
            "training": s.get("training_documents"), "test": s.get("test_documents"),
            "encoded": {f"{o.get('max_seq')}/{o.get('max_pred')}": (e.get("training_documents"), tokens)
                        for o, e, tokens in encoded if e},
        })
    return rows


def sources_section(data: ReportInputs, lang: str) -> Section | None:
    rows = source_rows(data)
    if not rows or (len(rows) == 1 and data.manifest("dedup") is None):
        return None
    sec = Section("sources", "Sources: what came from where")
    cells = [("source", "read", "exact copies", "near copies", "paragraph copies", "removed",
              "after split and filter", "weight", "training docs", "test docs",
              "encoded (training docs, tokens)")]
    for r in rows:
        cells.append((r["source"], num(r["read"]), num(r["exact"]), num(r["near"]),
                      num(r["paragraphs"]), percent(r["removed_share"]), num(r["filtered"]),
                      num(r["weight"], 2) if r["weight"] is not None else "-",
                      num(r["training"]), num(r["test"]),
                      ", ".join(f"{k}: {num(n)}" + (f", {num(t)} tokens" if t is not None else "")
                                for k, (n, t) in r["encoded"].items()) or "-"))
        if (r["removed_share"] or 0) > DEDUP_WARN_SHARE:
            sec.warn(f"dedup removed {percent(r['removed_share'])} of {r['source']}: it is mostly "
                     "copies of Wikipedia or of an earlier source")
    sec.add(table(cells, numeric=set(range(1, 11))))
    m = data.manifest("dedup")
    if m is not None:
        o = m.get("options") or {}
        sec.note(f"Keep rule: {m.get('keep_rule', '')}; near copies at an estimated Jaccard "
                 f"similarity ≥ {o.get('threshold')} of word 3-grams ({o.get('num_perm')} "
                 "permutations); held-out test documents are chosen after deduplication.")
        examples = m.get("examples") or []
        if examples:
            ex = [("why", "similarity", "removed", "kept (the copy that stays)")]
            ex += [(e["reason"], num(e["similarity"], 2), f"[{e['removed_source']}] {e['removed']}",
                    f"[{e['kept_source']}] {e['kept']}") for e in examples]
            sec.add(table(ex, numeric={1}, lang=lang))
    return sec
