"""The README.md model card that export writes beside the model, as the Hugging Face Hub expects:
metadata (language, library, pipeline tag), what the model was trained on and for how long, its
last losses, how to load it, and the attribution that Wikipedia's CC BY-SA text requires (and the
terms of the web corpora beside it: ingested/manifest.json's record of them).

A run of sequence-length phases (--phases) lists them (rows, steps, batch, masking, peak learning
rate, RoPE θ, data). A run on several languages (--input_dir LANG=DIR) lists them: each one's dump, tokens, share of
the training samples, sampling share at the start and the end of the --sampling_alpha schedule,
and last evaluation. Everything comes from files the run and the pipeline left (hparams.json,
train_log.jsonl, the encode and download manifests beside the HDF5 input); a fact that cannot
be found is written as "unknown", never guessed.

Usage:
    text = model_card(run_dir, ckpt, config, spec, n_params, family)   # family: its CardText
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from common.atomic import write_text_atomic
from common.dump_date import dump_date
from common.heldout_file import STATIC_MASKS, read_heldout
from common.numbers import baseline_text, signed
from trainer.export.passes import passes_row

CC_BY_SA = "https://creativecommons.org/licenses/by-sa/4.0/"
KINDS = {"wordpiece": "WordPiece", "bpe": "BPE", "unigram": "Unigram", "wordlevel": "word-level"}


def source_name(source: str) -> str:
    """What a run started from, as a card may show it: a local folder by its name (not the
    trainer's machine's path), a Hub name as it is."""
    path = Path(source)
    return path.name if path.is_absolute() or path.exists() else source


def _json(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _records(run_dir: Path | None) -> list[dict]:
    """train_log.jsonl's records (a torn line skipped)."""
    path = run_dir / "train_log.jsonl" if run_dir else None
    if path is None or not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _last_records(run_dir: Path | None) -> tuple[dict, dict]:
    """The last training and the last eval record of train_log.jsonl."""
    train, ev = {}, {}
    for rec in _records(run_dir):
        if "eval_loss" in rec:
            ev = rec
        elif "loss" in rec:
            train = rec
    return train, ev


def phases_section(plan: list[dict], records: list[dict], last_step) -> str:
    """A run of sequence-length phases (a section of the card): each phase's rows, steps (as
    trained: train_log.jsonl's phase starts; as planned where it did not start), batch, masking,
    peak learning rate, RoPE θ and data."""
    started = {r["phase_start"]: r["step"] for r in records if "phase_start" in r}
    rows = []
    for p in plan:
        n = p["phase"]
        first = started.get(n)
        if first is None:
            steps = f"{p['first_step']:,}-{p['last_step']:,} planned, not reached"
        else:
            nxt = started.get(n + 1)
            last = nxt - 1 if nxt is not None else last_step
            steps = f"{first:,}-{last:,}" if isinstance(last, int) else f"{first:,}-"
        theta = ", ".join(f"{k.replace('_rope_theta', '')} {p[k]:g}" for k in
                          ("rope_theta", "global_rope_theta", "local_rope_theta") if p.get(k) is not None)
        masks = f"{p['mlm_probability']:g}" if p.get("mlm_probability") is not None else "static"
        accum = p.get("gradient_accumulation_steps")   # a step in tokens: micro-batch x accumulation
        batch = f"{p['train_batch_size']} × {accum}" if accum else p["train_batch_size"]
        rows.append(f"| {n} | {p['seq_len']:,} | {steps} | {batch} | {masks} | "
                    f"{p['learning_rate']:g} | {theta or '-'} | `{Path(p['input_dir']).name}` |")
    return ("""
## Sequence-length phases

Trained in phases of growing rows under one learning-rate schedule (warmup at the start, decay at
the end), each phase on its own data with its own batch, masking rate, peak learning rate and
RoPE θ. The data: each phase's encode folder (`pipeline encode`'s name for its rows).

| phase | tokens a row | steps | batch a rank | masked | peak lr | RoPE θ | data |
|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + "\n")


def _cell(value, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def device_section(records: list[dict], hp: dict) -> str:
    """What the device did in each phase (train_log.jsonl's phase_* figures of a phase's last
    step: trainer/runtime/card_use.py), between markers that scripts/goldens.py blanks (the
    figures are timings)."""
    ends = [r for r in records if "phase_tokens_per_sec" in r and "loss" in r]
    if not ends:
        return ""
    starts = sorted(r["step"] for r in records if "phase_start" in r) or [1]
    rows = []
    for r in ends:
        phase = sum(1 for s in starts if s <= r["step"])
        mfu = None if r.get("phase_mfu") is None else 100 * r["phase_mfu"]
        busy = r.get("phase_gpu_busy")
        rows.append(f"| {phase} | {r['phase_tokens_per_sec']:,.0f} | {_cell(r.get('phase_tflops'), '.3g')} | "
                    f"{_cell(mfu, '.1f')}{'%' if mfu is not None else ''} | "
                    f"{_cell(r.get('phase_peak_memory_gib'), '.1f')} | "
                    f"{_cell(busy, '.0f')}{'%' if busy is not None else ''} |")
    return (f"""
## What the device did

Trained on `{hp.get('device', 'unknown')}` in {hp.get('precision', 'unknown')}: real (non-padding) tokens a
second over all ranks, model TFLOP/s, MFU (a GPU's share of its card's peak; - on a CPU or a card
without a known peak), peak memory (the GPU allocator's in the phase; on a CPU the process's
peak so far) and the GPU's busy share (NVML, sampled while training; - on a CPU).

<!-- device -->
| phase | tokens/s | TFLOP/s | MFU | peak GiB | GPU busy |
|---|---|---|---|---|---|
""" + "\n".join(rows) + "\n<!-- /device -->\n")


def corpus_facts(input_dir: str | None) -> dict:
    """Language, dump and corpus size from the pipeline's folders around the HDF5 input."""
    facts = {"lang": "unknown", "dump": "unknown", "dump_date": "unknown", "documents": None,
             "tokens": None, "instances": None}
    if not input_dir:
        return facts
    hdf5 = Path(input_dir)
    wiki = next((p.name for p in sorted(hdf5.glob("*wiki")) if p.is_dir()), None)
    if wiki:
        facts["lang"] = wiki[: -len("wiki")]
    encoded = _json(hdf5 / "manifest.json").get("summary", {})
    facts.update(documents=encoded.get("documents"), tokens=encoded.get("tokens"),
                 instances=encoded.get("training_instances"))
    download = _json(hdf5.parent / "download" / "manifest.json").get("summary", {})
    if download.get("dump"):
        facts["dump"] = Path(download["dump"]).name
        newest = _json(hdf5.parent / "extracted" / "manifest.json").get("summary", {}).get("newest_revision")
        facts["dump_date"] = dump_date(facts["dump"], download.get("date"), newest)
    return facts


def web_corpora(folders) -> dict:
    """The web corpora in the run's data: ingest's record ("corpora" in ingested/manifest.json
    beside each HDF5 input) of those sources the encoded data holds (its manifest's "sources")."""
    out = {}
    for folder in (folders.values() if isinstance(folders, dict) else [folders] if folders else []):
        encoded = _json(Path(folder) / "manifest.json").get("sources")
        for name, record in (_json(Path(folder).parent / "ingested" / "manifest.json").get("corpora") or {}).items():
            if encoded is None or name in encoded:
                out[name] = record
    return out


def web_attribution(web: dict) -> str:
    """The card's paragraph on the web text beside Wikipedia: each corpus, its part, its terms."""
    if not web:
        return ""
    lines = "".join(f"- {c.get('title')} ({c.get('repo')}, {c.get('url')}), its `{c.get('language') or 'whole'}` "
                    f"part at revision `{str(c.get('revision'))[:12]}`: {c.get('license_text')}.\n"
                    for c in web.values())
    return f"\nBeside Wikipedia, the training text holds web corpora, under their own terms:\n\n{lines}"


def _n(value) -> str:
    return f"{value:,}" if isinstance(value, int) else "unknown"


def _pct(value) -> str:
    return f"{value:.1%}" if isinstance(value, (int, float)) else "unknown"


def _total(facts: list[dict], key: str):
    values = [f[key] for f in facts]
    return sum(values) if all(isinstance(v, int) for v in values) else None


def languages_section(hp: dict, ev: dict, corpora: dict) -> str:
    """A run on several languages (a section of the card): each one's corpus, share of the training samples, sampling
    share at the start and the end of the --sampling_alpha schedule, and last evaluation."""
    langs = hp.get("languages") or {}
    schedule = ", ".join(f"{p['alpha']:g} from step {p['start_step']}"
                         for p in hp.get("sampling_schedule", []))
    rows = []
    for code, corpus in corpora.items():
        f = langs.get(code, {})
        shares = f.get("sampling_shares") or [None]
        last = (f"MLM loss {ev[f'eval_mlm_loss/{code}']:.4f} (accuracy {ev[f'eval_mlm_acc/{code}']:.3f}) "
                f"on {_n(ev.get(f'eval_instances/{code}'))}" if f"eval_mlm_loss/{code}" in ev else "none logged")
        rows.append(f"| `{code}` | {corpus['dump']} | {_n(corpus['tokens'])} | "
                    f"{_n(f.get('train_samples'))} ({_pct(f.get('sample_share'))}) | "
                    f"{_pct(shares[0])} | {_pct(shares[-1])} | {last} |")
    return (f"""
## Languages

Trained on {len(corpora)} languages at once, each sampled with a share proportional to (its
share of the training samples) ** alpha, normalised (`--sampling_alpha {hp.get('sampling_alpha', 'unknown')}`:
{schedule or 'unknown'}). The overall evaluation is the mean over the languages.

| language | dump | tokens | training samples (share) | sampled at the start | at the end | last evaluation |
|---|---|---|---|---|---|---|
""" + "\n".join(rows) + "\n")


ATTENTION = {"within": "within each document of the packed rows (`--doc_attention within`: a row's "
                       "documents do not see each other; positions count from each document's start)",
             "across": "across the whole packed row, from one document into the next "
                       "(`--doc_attention across`)"}


def attention_row(hp: dict) -> str:
    """The card's line on attention in packed rows ("" for rows of sentence pairs, or a run
    from before the choice existed)."""
    how = ATTENTION.get(hp.get("doc_attention"))
    return f"\n| attention | {how} |" if how else ""


def context_row(records: list[dict]) -> str:
    """The card's line on the last context evaluation (trainer/evaluation/context.py; "" without one)."""
    ev = next((r for r in reversed(records) if "eval_context_gain" in r), None)
    if ev is None:
        return ""
    return (f"\n| long context | masked tokens deep in long held-out articles: accuracy "
            f"{ev['eval_context_acc_long']:.3f} with the whole segment around them (up to "
            f"{ev.get('eval_context_long_width', 0):,} tokens), {ev['eval_context_acc_512']:.3f} with 512 tokens, "
            f"{ev['eval_context_acc_128']:.3f} with 128: context gain {signed(ev['eval_context_gain'])} "
            f"({ev['eval_context_tokens']:,} tokens, step {ev['step']}) |")


HELDOUT_ROW = "| held-out [MASK] accuracy |"
OLD_ROWS = (HELDOUT_ROW, "| held-out masked-LM accuracy |")   # the row's name before issue 60


def heldout_row(run_dir: Path | None, step) -> str:
    """The card's line on the export's held-out masked-LM accuracy against the unigram baseline
    (heldout_mlm.json, which `make pretrain` writes after the export, for checkpoint `step`);
    "" without one, or for another checkpoint's export."""
    r = read_heldout(run_dir) if run_dir else {}
    try:
        return f"\n{HELDOUT_ROW} {baseline_text(r)} |" if r.get("step") == step else ""
    except (KeyError, ValueError, TypeError):   # a record of another shape: no line, not a failed export
        return ""


def add_heldout(card_file: Path, run_dir: Path, step) -> None:
    """Put heldout_row into an exported card (`make pretrain` measures after the export),
    in place of an earlier one, after the last-evaluation line."""
    if not Path(card_file).is_file():   # an export from before cards: nothing to add to
        return
    lines = [ln for ln in Path(card_file).read_text(encoding="utf-8").split("\n")
             if not ln.startswith(OLD_ROWS)]
    row = heldout_row(run_dir, step)
    at = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("| last evaluation |")), None)
    if row and at is not None:
        lines.insert(at, row.lstrip("\n"))
    write_text_atomic(Path(card_file), lambda fh: fh.write("\n".join(lines)))


def model_card(run_dir: Path | None, ckpt: Path, config, spec, n_params: int, family,
               evaluation: str = "") -> str:
    """The README.md; `evaluation`: the Evaluation section (trainer/export/evaluation.py)."""
    hp = _json(run_dir / "hparams.json") if run_dir else {}
    meta = _json(ckpt / "meta.json")
    plan = hp.get("phase_plan") or []
    # phases: one corpus encoded at several lengths (the first phase's folder says which)
    folders = hp.get("input_dir") or (plan[0]["input_dir"] if plan else None)
    corpora = ({code: {**corpus_facts(d), "lang": code} for code, d in folders.items()}
               if isinstance(folders, dict) else {})
    corpus = corpus_facts(folders) if not corpora else {
        "lang": ", ".join(f"`{c}`" for c in corpora).strip("`"), **{
            k: _total(list(corpora.values()), k) for k in ("documents", "tokens", "instances")},
        "dump": "; ".join(f"{c}: {f['dump']} (date {f['dump_date']})" for c, f in corpora.items()),
        "dump_date": None}
    web = web_corpora(folders)
    web_datasets = "".join(f"- {c.get('repo')}\n" for c in web.values())   # the YAML's datasets
    train, ev = _last_records(run_dir)
    phases = phases_section(plan, _records(run_dir), meta.get("step")) if plan else ""
    lang = corpus["lang"]
    codes = list(corpora) or ([lang] if lang != "unknown" else [])
    case = ("lower-cased" if spec.lower_case else "cased") + (", accents stripped" if spec.strip_accents else "")
    nsp = f", NSP {train['nsp_loss']:.4f}" if "nsp_loss" in train else ", MLM only"
    losses = (f"loss {train['loss']:.4f} (MLM {train['mlm_loss']:.4f}{nsp}) "
              f"at step {train['step']}" if train else "unknown (no train_log.jsonl)")
    ev_nsp = (f", NSP loss {ev['eval_nsp_loss']:.4f} (accuracy {ev['eval_nsp_acc']:.3f})"
              if "eval_nsp_loss" in ev else "")
    evals = (f"MLM loss {ev['eval_mlm_loss']:.4f} (accuracy {ev['eval_mlm_acc']:.3f} {STATIC_MASKS}){ev_nsp} at step "
             f"{ev['step']} on {_n(ev.get('eval_instances'))} held-out instances" if ev else "none logged")
    text = family.card(no_nsp=hp.get("no_nsp", False), export_class=meta.get("export_class"))
    arch, cls, note, heads = text.arch, text.hf_class, text.load_note, text.heads
    phase = meta.get("phase", hp.get("phase", "unknown"))
    init = (f", initialised from `{source_name(hp['init_checkpoint'])}`"
            if phase == 2 and hp.get("init_checkpoint") else "")
    if hp.get("init_from"):
        init = f", continued from `{source_name(hp['init_from'])}`"
    lang_meta = "language:\n" + "".join(f"- {c}\n" for c in codes) if codes else ""
    site = ", ".join(f"https://{c}.wikipedia.org" for c in codes) or "https://www.wikipedia.org"
    dump = corpus["dump"] + (f" (date {corpus['dump_date']})" if corpus["dump_date"] else "")
    wikipedia = f"`{lang}` Wikipedia" + ("s" if len(codes) > 1 else "")
    # the table rows below must stay one line each: their contents, built here
    corpus_row = (f"{_n(corpus['documents'])} documents, {_n(corpus['tokens'])} tokens, "
                  f"{_n(corpus['instances'])} training instances")
    seq_lens = " -> ".join(f"{p['seq_len']:,}" for p in plan)
    lengths = (f"sequence lengths {seq_lens} in {len(plan)} phases" if plan
               else f"sequence length {hp.get('seq_len', 'unknown')}")
    head = f"phase {phase}{init}: " if not plan else (f"{init[2:]}: " if init else "")
    batch = _n(hp.get("global_batch_size")) + (" in the first phase" if plan else "")
    # the plan's end (a budget moves it), else the checkpoint's max_steps (a resume may have moved
    # it: hparams.json keeps the first start's)
    end = meta.get("end_step", meta.get("max_steps", hp.get("max_steps")))
    training_row = (f"{head}{_n(meta.get('step'))} steps of {_n(end)}, "
                    f"{lengths}, global batch {batch}, {hp.get('world_size', 'unknown')} ranks, "
                    f"{hp.get('precision', 'unknown')}")
    return f"""---
{lang_meta}library_name: transformers
pipeline_tag: fill-mask
tags:
- bert
- wiki2bert
datasets:
- wikipedia
{web_datasets}---

# {arch} for `{lang}`, pretrained on Wikipedia with wiki2bert

A {arch} ({config.num_hidden_layers} layers, hidden size {config.hidden_size},
{config.num_attention_heads} heads, {n_params:,} parameters) with its pretraining heads ({heads}),
trained with wiki2bert on the {wikipedia}.

| | |
|---|---|
| language | `{lang}` |
| Wikipedia dump | {dump} |
| corpus | {corpus_row} |
| vocab | {spec.size:,} {KINDS.get(spec.piece_model, spec.piece_model)} tokens, {case} |
| training | {training_row} |{passes_row(hp, train)}
| objective | {hp.get('objective', 'unknown')} |{attention_row(hp)}
| final training loss | {losses} |
| last evaluation | {evals} |{heldout_row(run_dir, meta.get("step"))}{context_row(_records(run_dir))}
| exported | {time.strftime('%Y-%m-%d')} from `{ckpt.name}` |
{languages_section(hp, ev, corpora) if corpora else ""}{phases}{device_section(_records(run_dir), hp)}{evaluation}
## How to load it

```python
from transformers import AutoTokenizer, {cls}, pipeline

tokenizer = AutoTokenizer.from_pretrained("PATH_OR_HUB_NAME")
model = {cls}.from_pretrained("PATH_OR_HUB_NAME")
fill = pipeline("fill-mask", model="PATH_OR_HUB_NAME"){note}
```

The tokenizer keeps the vocab's case setting (`tokenizer_config.json`): {case}.

## Training data and attribution

The training text is from Wikipedia, written by Wikipedia contributors
({site}), and licensed under the Creative Commons Attribution-ShareAlike
4.0 license ({CC_BY_SA}). Credit them when you share this model or text generated with it;
choose this model's own license (add `license:` above) with that in mind.
{web_attribution(web)}"""
