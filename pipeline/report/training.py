"""Section `training`: for each trainer output dir given with `--run DIR`, the loss, MLM and NSP
loss (NSP only where the run trained it), learning rate and samples/s curves from
train_log.jsonl, the eval points, the masking the run used, and the held-out masked-LM accuracy
against the unigram baseline where `make pretrain` measured it (heldout_mlm.json), a warning at
the top of the page ("What needs a look") where that says the model has not got past word
frequencies; for runs of long rows, the context evaluation (the accuracy deep in long articles
with the whole segment, 512 and 128 tokens around the mask, and the gain). The trainer's eval
and heldout_mlm.json are two accuracies, each named for what it scores (common/heldout_file.py).

Reads only the run's plain files (train_log.jsonl, hparams.json, heldout_mlm.json): the
pipeline never imports the trainer.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from common.heldout_file import EVERY_TOKEN, LEARNED, STATIC_MASKS, read_heldout, verdict
from common.numbers import baseline_text, signed
from pipeline.encoding.hdf5_format import few_eval_instances

from .figures import line_chart
from .page import Section, esc, num, table

TRAIN_LOG = "train_log.jsonl"   # written by trainer/runtime/logs.py
HPARAMS = "hparams.json"


def read_hparams(run: Path) -> dict:
    try:
        return json.loads((Path(run) / HPARAMS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def masking_text(hp: dict) -> str | None:
    """What the run masked, in words: dynamic masking's rate and split, or the files' masks."""
    if hp.get("masking") == "dynamic":
        split = " / ".join(f"{100 * x:.0f}%" for x in (
            hp.get("mask_replace_prob", 0.8), hp.get("random_replace_prob", 0.1),
            1 - hp.get("mask_replace_prob", 0.8) - hp.get("random_replace_prob", 0.1)))
        words = ", whole words" if hp.get("whole_word_masking") else ""
        return (f"dynamic: {100 * hp.get('mlm_probability', 0.15):.0f}% of the tokens, new each "
                f"epoch{words}; [MASK] / random / kept {split}")
    return "static: the masks in the HDF5 files" if hp.get("masking") == "static" else None


def heldout_text(run: Path) -> str | None:
    """'0.214 against 0.061 for the unigram baseline ...' from heldout_mlm.json, if there."""
    try:
        return baseline_text(read_heldout(run))
    except (KeyError, ValueError, TypeError):   # none, or a record of another shape
        return None


def heldout_warning(run: Path) -> str | None:
    """'uk_modern: held-out accuracy 1.0x the unigram baseline: it has not learned ...' where
    heldout_mlm.json says the model is under LEARNED x the baseline; None otherwise."""
    r = read_heldout(run)
    try:
        ratio = float(r["accuracy"]) / float(r["unigram_accuracy"])
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None
    return (f"{Path(run).name}: held-out accuracy at [MASK] {ratio:.1f}x the unigram baseline: {verdict(ratio)}"
            if ratio < LEARNED else None)


def read_records(run: Path) -> list[dict]:
    """Every record of train_log.jsonl (training, eval, phase starts, re-plans); a torn line is skipped."""
    path = Path(run) / TRAIN_LOG
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def read_log(run: Path, records: list[dict] | None = None) -> tuple[list[dict], list[dict]]:
    """(training records, eval records) of train_log.jsonl (or of its `records`, read already);
    a torn last line is skipped."""
    records = read_records(run) if records is None else records
    return ([r for r in records if "loss" in r and "eval_loss" not in r],
            [r for r in records if "eval_loss" in r])


def planned_end(hp: dict, records: list[dict]):
    """The step the run's plan ends at: a --train_budget re-plan moves it, so the last re-plan's
    end (trainer/loop.py logs `replan_end`), else the phases' or hparams.json's first plan."""
    ends = [r["replan_end"] for r in records if "replan_end" in r]
    plan = hp.get("phase_plan") or []
    return ends[-1] if ends else (plan[-1].get("last_step") if plan else hp.get("max_steps"))


def phases_text(plan: list[dict], records: list[dict], trained) -> str:
    """'128 / 40 (steps 1-66) -> 512 / 160 (67-85) -> 2,048 / 640 (86-94)': each phase's rows and
    the steps it trained (train_log.jsonl's phase starts; the plan's where it did not start)."""
    started = {r["phase_start"]: r["step"] for r in records if "phase_start" in r}
    parts = []
    for p in plan:
        n, first = p.get("phase"), started.get(p.get("phase"))
        if first is None:
            steps = f"{num(p.get('first_step'))}-{num(p.get('last_step'))} planned, not reached"
        else:
            nxt = started.get(n + 1)
            steps = f"{num(first)}-{num(nxt - 1 if nxt is not None else trained)}"
        parts.append(f"{num(p.get('seq_len'))} / {num(p.get('max_pred'))} ({'steps ' if not parts else ''}{steps})")
    return " -> ".join(parts)


def _series(records: list[dict], key: str) -> tuple[list, list]:
    pts = [(r["step"], r[key]) for r in records
           if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]
    return [p[0] for p in pts], [p[1] for p in pts]


def languages(evals: list[dict]) -> list[str]:
    """The language codes of a multilingual run's eval records (`eval_mlm_acc/hr` ...)."""
    found = {k.split("/", 1)[1] for r in evals for k in r if k.startswith("eval_mlm_acc/")}
    return sorted(found)


def _per_language(sec: Section, hp: dict, evals: list[dict]) -> None:
    """A multilingual run: each language's sampling shares and last eval, and its eval curve."""
    langs = languages(evals)
    if not langs:
        return
    info, ev = hp.get("languages") or {}, evals[-1]
    rows = [("language", "share of the samples", "sampling shares (start -> end)",
             "last eval: mlm loss / acc")]
    for code in langs:
        shares = (info.get(code) or {}).get("sampling_shares") or []
        sampled = " -> ".join(f"{x:.1%}" for x in (shares[0], shares[-1])) if shares else "-"
        own = (info.get(code) or {}).get("sample_share")
        loss, acc = ev.get(f"eval_mlm_loss/{code}"), ev.get(f"eval_mlm_acc/{code}")
        rows.append((code, f"{own:.1%}" if isinstance(own, (int, float)) else "-", sampled,
                     f"{loss:.4f} / {acc:.3f}" if loss is not None and acc is not None else "-"))
    sec.add(table(rows))
    sec.add(line_chart({f"{code} eval mlm acc": _series(evals, f"eval_mlm_acc/{code}") for code in langs},
                       title="Held-out masked-LM accuracy per language"))


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0f}%"


def device_rows(train: list[dict]) -> list[tuple]:
    """What the device did, a row a phase: the phase_* figures of each phase's last step
    (trainer/runtime/card_use.py); [] for a run logged before they were."""
    ends = [r for r in train if "phase_tokens_per_sec" in r]
    if not ends:
        return []
    rows = [("phase", "real tokens/s", "model TFLOP/s", "MFU", "peak memory GiB", "GPU busy")]
    for n, r in enumerate(ends, 1):
        tflops, mfu, gib = r.get("phase_tflops"), r.get("phase_mfu"), r.get("phase_peak_memory_gib")
        rows.append((str(n), num(round(r["phase_tokens_per_sec"])), "-" if tflops is None else f"{tflops:.3g}",
                     "-" if mfu is None else f"{100 * mfu:.1f}%", "-" if gib is None else f"{gib:.1f}",
                     _pct(r.get("phase_gpu_busy"))))
    return rows


def _one_run(sec: Section, run: Path) -> None:
    sec.add(f"<h3>{esc(run)}</h3>")
    records = read_records(run)
    train, evals = read_log(run, records)
    if not train:
        sec.warn(f"{run}: no {TRAIN_LOG} with training steps (is it a trainer --output_dir?)")
        return
    hp = read_hparams(run)
    last = train[-1]
    heldout = heldout_text(run)
    if heldout:
        sec.add(f"<p><b>Did it learn?</b> Held-out masked-LM accuracy of the export: {esc(heldout)}</p>")
        if warning := heldout_warning(run):
            sec.warn(warning)
    plan = hp.get("phase_plan") or []
    trained, end = max(r.get("step", 0) for r in records), planned_end(hp, records)
    # a run of sequence-length phases: its steps and each phase's rows, not the first phase's alone
    shape = ([("steps trained / planned", f"{num(trained)} / {num(end)}"),
              ("phases: seq_len / max_pred (steps)", phases_text(plan, records, trained))] if len(plan) > 1 else
             [("phase / max_steps", f"{hp.get('phase', '-')} / {num(end)}"),
              ("seq_len / max_pred", f"{hp.get('seq_len', '-')} / {hp.get('max_pred', '-')}")])
    rows = [("figure", "value")] + ([(f"held-out MLM accuracy of the export, {EVERY_TOKEN}", heldout)]
                                    if heldout else []) + shape[:1] + [
            ("ranks / global batch", f"{hp.get('world_size', '-')} / {num(hp.get('global_batch_size'))}"),
            *shape[1:],
            ("objective", hp.get("objective", "-")),
            ("masking", masking_text(hp) or "-"),
            ("last logged step", num(last["step"]))]
    if "nsp_loss" in last:
        rows.append(("loss (mlm + nsp)", f"{last['loss']:.4f} ({last['mlm_loss']:.4f} + {last['nsp_loss']:.4f})"))
    else:  # --no_nsp: masked LM only
        rows.append(("loss (mlm only)", f"{last['loss']:.4f}"))
    if evals:
        ev = evals[-1]
        rows.append((f"last eval: mlm loss / acc {STATIC_MASKS}",
                     f"{ev['eval_mlm_loss']:.4f} / {ev['eval_mlm_acc']:.3f}"))
        if "eval_nsp_loss" in ev:
            rows.append(("last eval: nsp loss / acc", f"{ev['eval_nsp_loss']:.4f} / {ev['eval_nsp_acc']:.3f}"))
        long = [r for r in evals if "eval_context_gain" in r]   # trainer/evaluation/context.py
        if long:
            c = long[-1]
            rows.append(("long context: accuracy whole segment / 512 / 128 tokens",
                         f"{c['eval_context_acc_long']:.3f} / {c['eval_context_acc_512']:.3f} / "
                         f"{c['eval_context_acc_128']:.3f}: gain {signed(c['eval_context_gain'])} on "
                         f"{num(c['eval_context_tokens'])} tokens (step {num(c['step'])})"))
        n = ev.get("eval_instances")
        rows.append(("eval instances", num(n)))
        if n is not None and few_eval_instances(n):
            sec.warn(f"{run.name}: {few_eval_instances(n)}")
    sec.add(table(rows))
    device = device_rows(train)
    if device:   # MFU: - on a CPU; peak memory: the GPU allocator's in the phase, else the process's
        sec.add(f"<p><b>What the device did</b> ({esc(hp.get('device', '-'))}, {esc(hp.get('precision', '-'))}), "
                "each phase:</p>")
        sec.add(table(device))
    _per_language(sec, hp, evals)
    bad = [r["step"] for r in train if not math.isfinite(r.get("loss", float("nan")))]
    if bad:
        sec.warn(f"{run.name}: the loss is not finite from step {bad[0]} on")
    lines = {k: _series(train, k) for k in ("loss", "mlm_loss", "nsp_loss")}
    points = {f"eval {k}": _series(evals, f"eval_{k}") for k in ("mlm_loss", "nsp_loss")}
    # a series with no point (nsp_loss of a masked-LM-only run) is no line of the legend
    sec.add(line_chart({k: v for k, v in lines.items() if v[0]}, title="Training loss",
                       points={k: v for k, v in points.items() if v[0]} or None))
    if any("eval_context_gain" in r for r in evals):
        sec.add(line_chart({}, title="Held-out accuracy deep in long articles, by the context around the mask",
                           points={f"{view} tokens": _series(evals, f"eval_context_acc_{key}") for view, key in
                                   (("the whole segment's", "long"), ("512", "512"), ("128", "128"))}))
    sec.add(line_chart({"learning rate": _series(train, "lr")}, title="Learning rate"))
    sec.add(line_chart({"samples/s": _series(train, "samples_per_sec")},
                       title="Throughput (samples/s, all ranks)"))


def training_section(runs: list[Path]) -> Section:
    sec = Section("training", "Training")
    if not runs:
        sec.note("No training run given: `pipeline report --run RUN_DIR` (repeatable) adds the "
                 "loss, learning-rate and throughput curves of trainer output dirs.")
    for run in runs:
        _one_run(sec, Path(run))
    return sec
