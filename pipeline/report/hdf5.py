"""Section `hdf5`: each encoded set (hdf5_... folder): instances, masked share and its
[MASK] / random / kept split, random-next share, tokens per instance, a few decoded instances;
for packed rows of layout 2 also the articles' token-length deciles, the share of the tokens
in articles of at least 512 / 2,048 / 8,192 tokens and the share whose segment in its row
(their own article around them) is that long, and a sample row one segment a line.

Counts come from encode's manifest; the masking figures and lengths are measured on the first
rows of the set's files (pipeline/encoding/stats.py, as `pipeline inspect` does).
"""
from __future__ import annotations

from pathlib import Path

from pipeline.core.report import human_bytes
from pipeline.encoding.context import THRESHOLDS
from pipeline.encoding.hdf5_format import HDF5FormatError, check_file, few_eval_instances, is_packed
from pipeline.encoding.stats import render, render_segments, statistics
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer

from .figures import histogram
from .page import Section, esc, num, percent, table
from .training import masking_text, read_hparams

MEASURED_ROWS = 20_000        # instances read per set for the figures
SHOWN_INSTANCES = 2


def _files(folder: Path, m: dict) -> list[Path]:
    return [folder / o["path"] for o in m.get("outputs", []) if (folder / o["path"]).is_file()]


def _measure(files: list[Path], spec) -> tuple[dict, list]:
    """Statistics summed over files until MEASURED_ROWS instances; decoded instances of the first."""
    import h5py

    total: dict = {}
    shown = []
    for path in files:
        left = MEASURED_ROWS - total.get("instances", 0)
        if left <= 0:
            break
        with h5py.File(path, "r") as f:
            st = statistics(f, spec, max_rows=left)
            for i in range(min(SHOWN_INSTANCES - len(shown), st["instances"])):
                row = (f["input_ids"][i], f["input_mask"][i], f["masked_lm_positions"][i],
                       f["masked_lm_ids"][i], spec)
                a, b = render(*row)
                segments = render_segments(*row, f["doc_starts"][i]) if "doc_starts" in f else None
                shown.append((path.name, i, a, b, int(f["next_sentence_labels"][i]), segments))
        for k, v in st.items():
            if k == "lengths":
                total[k] = [x + y for x, y in zip(total.get(k, [0] * len(v)), v)]
            elif isinstance(v, dict):
                total[k] = {kk: total.get(k, {}).get(kk, 0) + vv for kk, vv in v.items()}
            elif k != "real_share":   # a share: from the sums below, never summed itself
                total[k] = total.get(k, 0) + v
    if total.get("instances") and total.get("lengths"):
        slots = total["instances"] * (len(total["lengths"]) - 1)   # lengths has L + 1 bins
        total["real_share"] = total["length_sum"] / slots
    return total, shown


def _run_inputs(hp: dict) -> list[tuple[str, dict]]:
    """(folder, the settings it was trained with) of each --input_dir of a run's hparams.json:
    a run of --phases trains each phase's folder at the phase's rate (None: the files' masks)."""
    plan = hp.get("phase_plan") or []
    if plan:
        return [(d, {**hp, "mlm_probability": p["mlm_probability"]} if p.get("mlm_probability") is not None
                 else {**hp, "masking": "static"}) for p in plan for d in _folders(p.get("input_dir"))]
    return [(d, hp) for d in _folders(hp.get("input_dir"))]


def _folders(input_dir) -> list[str]:
    return list(input_dir.values()) if isinstance(input_dir, dict) else [input_dir] if input_dir else []


def _used_by(folder: Path, runs) -> list[tuple[str, dict]]:
    """(run name, the settings it trained `folder` with) of each run that trained on `folder`."""
    used, here = [], folder.resolve()
    for run in runs:
        for d, hp in _run_inputs(read_hparams(run)):
            d = Path(d).resolve()
            if masking_text(hp) and (d == here or d in here.parents or here in d.parents):
                used.append((Path(run).name, hp))
    return used


def _one_set(sec: Section, folder: Path, m: dict, lang: str, runs=()) -> None:
    o, s = m.get("options") or {}, m.get("summary") or {}
    seq, pred = o.get("max_seq"), o.get("max_pred")
    files = _files(folder, m)
    packed = bool(files) and is_packed(files[0])   # the file says so (or, written before, its folder)
    sec.add(f"<h3>seq {esc(seq)} / {esc(pred)} predictions{', packed rows' if packed else ''} "
            f"<small>{esc(folder.name)}</small></h3>")
    test = (s.get("instances") or 0) - (s.get("training_instances") or 0)
    if few_eval_instances(test):
        sec.warn(f"seq {seq}: {few_eval_instances(test)}")
    try:
        for f in files[:1]:
            check_file(f)
        recorded = m.get("vocab")   # encode records its vocab.txt or tokenizer folder; the data dir may have moved
        spec = load_tokenizer(recorded if recorded and Path(recorded).exists() else folder.parent / "vocab")
    except (HDF5FormatError, VocabError) as exc:
        sec.warn(f"seq {seq}: {exc}")
        return
    st, shown = _measure(files, spec)
    n, masked = st.get("instances", 0), st.get("masked", 0)
    rows = [("figure", "value"),
            ("files (training + test)", num(len(files))),
            ("instances: training / test", f"{num(s.get('training_instances'))} / {num(test)}"),
            ("documents / tokens", f"{num(s.get('documents'))} / {num(s.get('tokens'))}"),
            ("size on disk", human_bytes(sum(x.get("bytes", 0) for x in m.get("outputs", [])))),
            ("dupe factor / masked LM prob", f"{o.get('dupe_factor')} / {o.get('masked_lm_prob')}"),
            ("measured on", f"the first {num(n)} instances"),
            ("masked share of tokens", percent(masked / st["tokens"] if st.get("tokens") else None, 2)),
            ("[MASK] / random / kept", " / ".join(percent(st[k] / masked if masked else None)
                                                  for k in ("as_mask", "random", "kept"))),
            ("random next sentence (B)", percent(st["random_next"] / n if n else None)),
            ("mean length", f"{st['length_sum'] / max(1, n):.1f} of {seq}"),
            ("real (non-pad) tokens", percent(st.get("real_share"), 1)),
            ("instances with invalid masked positions", num(st.get("bad_positions")))]
    bad = set()
    if st.get("bad_positions"):
        bad.add(len(rows) - 2)
        sec.warn(f"seq {seq}: {st['bad_positions']:,} instances have invalid masked positions")
    used = _used_by(folder, runs)
    remasked = any(hp.get("masking") == "dynamic" for _, hp in used)
    if remasked:   # the files' split is not what the training used: said so, and no warning
        rows[8] = ("[MASK] / random / kept in the files (not used: the run masks anew)", rows[8][1])
    elif masked and abs(st["as_mask"] / masked - 0.8) > 0.05:
        bad.add(7)
        sec.warn(f"seq {seq}: {percent(st['as_mask'] / masked)} of the masked tokens are [MASK], "
                 "not about 80%")
    for name, hp in used:   # what the training did with these rows (dynamic: its own masks)
        rows.append((f"masks in training ({name})", masking_text(hp)))
    rows += _context_rows(s, st)
    sec.add(table(rows, bad_rows=bad))
    lengths = st.get("lengths") or []
    if lengths:
        values = list(range(len(lengths)))
        step = max(1, seq // 32)   # 32 bins; the last one, [seq - step, seq], holds full instances
        sec.add(histogram(values, weights=lengths, bins=list(range(0, seq + 1, step)), log=True,
                          title=f"Tokens per instance, seq {seq} ({num(n)} instances; log scale)",
                          xlabel="tokens (with [CLS] and [SEP])", ylabel="instances"))
    legend = "[MASK→x] masked, {y→x} random, &lt;x&gt; kept"
    for name, i, a, b, label, segments in shown:
        if segments is not None:   # packed layout 2: one segment (one document) a line
            items = "".join(f"<li>{esc(x)}</li>" for x in segments)
            sec.add(f'<p class="note">{esc(name)} #{i}, a packed row, one segment (a document\'s '
                    f'tokens from its [CLS]) a line; {legend}</p>'
                    f'<ul class="sample" lang="{esc(lang)}">{items}</ul>')
            continue
        if packed:   # documents back to back, a [SEP] after each: no A/B pair
            sec.add(f'<p class="note">{esc(name)} #{i}, a packed row; {legend}</p>'
                    f'<ul class="sample" lang="{esc(lang)}"><li>{esc(f"{a} {b}".rstrip())}</li></ul>')
            continue
        sec.add(f'<p class="note">{esc(name)} #{i}, B is {"a random" if label else "the actual"} '
                f'next sentence; {legend}</p>'
                f'<ul class="sample" lang="{esc(lang)}"><li>A: {esc(a)}</li><li>B: {esc(b)}</li></ul>')


def _context_rows(summary: dict, st: dict) -> list[tuple[str, str]]:
    """The rows of packed layout 2's context figures (encode's summary; segments measured)."""
    rows = []
    limits = " / ".join(f"{t:,}" for t in THRESHOLDS)
    articles = summary.get("article_tokens")
    if articles:
        deciles = [f"{articles[k]:,}" for k in sorted(articles, key=lambda k: (len(k), k)) if k != "max"]
        rows.append(("article length in tokens: deciles (longest)",
                     f"{' / '.join(deciles)} ({num(articles.get('max'))})"))
    for key, what in (("tokens_in_articles_of", f"tokens in articles of at least {limits} tokens"),
                      ("tokens_with_context", f"tokens with at least {limits} tokens of their "
                                              "article in the row")):
        if summary.get(key):
            rows.append((what, " / ".join(percent(summary[key].get(str(t)), 1) for t in THRESHOLDS)))
    if st.get("segments") is not None:
        rows.append(("segments (documents) per row, measured", f"{st['segments'] / max(1, st['instances']):.2f}"))
    return rows


def hdf5_section(encodings: list, lang: str, runs=()) -> Section:
    sec = Section("hdf5", "HDF5 pretraining instances")
    if not encodings:
        sec.note("No finished encode output (hdf5_... folder) yet: run `pipeline encode`.")
    for folder, m in encodings:
        _one_set(sec, folder, m, lang, runs)
    return sec
