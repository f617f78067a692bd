"""Quality and speed of the text stages, per language, on every dump there is.

For each dump (the shipped Hungarian sample and every *wiki.xml.* in --data), runs download,
extract, format, split and filter with one worker in a fresh data directory, then prints one
table: the corpus measures of pipeline/text/quality.py (goals beside them), the share of link
labels of the wikitext's prose paragraphs that reach formatted/, documents per stage, and each
stage's speed as input MB and documents per CPU-second of the whole process tree (the stage
and every process it waited for: quntoken's too). Speeds are medians over --runs reruns of the
stage on the same input (--force). The Hungarian sample is too small to time quntoken on, so a
last row splits it repeated to about 10 MB (quntoken_speed).

Usage:
    .venv/bin/python bench/bench_text_quality.py [--runs 3] [--data ../shared/data] [--keep DIR]
    .venv/bin/python bench/bench_text_quality.py --repo /path/to/other/checkout   # its rules
    .venv/bin/python bench/bench_text_quality.py --filter-extra=--min-sentences=1 # stage options

--repo runs the stages and the link measure with another checkout's code (a "before" column);
the measures themselves always come from this checkout.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STAGES = ("extract", "format", "split", "filter")
STAGE_INPUT = {"extract": "download", "format": "extracted", "split": "formatted", "filter": "sentences"}


def pipeline(repo: Path, args: list[str]) -> float:
    """Run `pipeline ARGS` with `repo`'s code; returns the CPU seconds of its process tree."""
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1", "PYTHONPATH": str(repo)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "pipeline", "-q", *args], cwd=repo, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"pipeline {' '.join(args)} failed:\n{proc.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def input_mb(lang_dir: Path, stage: str) -> float:
    if stage == "extract":
        dump = json.loads((lang_dir / "download" / "manifest.json").read_text())["summary"]
        return dump.get("xml_bytes") or dump.get("bytes") or 0
    folder = lang_dir / STAGE_INPUT[stage]
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()
               and p.name != "manifest.json" and ".stage" not in p.parts) / 1e6


def run_language(repo: Path, data_dir: Path, lang: str, dump: Path, runs: int, extra: dict) -> dict:
    common = ["--data-dir", str(data_dir), "--lang", lang, "--workers", "1"]
    pipeline(repo, common + ["download", "--dump", str(dump)])
    lang_dir = data_dir / lang
    speeds = {}
    for stage in STAGES:
        cpu = [pipeline(repo, common + [stage, *extra.get(stage, ())])]
        for _ in range(runs - 1):
            cpu.append(pipeline(repo, common + [stage, "--force", *extra.get(stage, ())]))
        summary = json.loads((lang_dir / stage_folder(stage) / "manifest.json").read_text())["summary"]
        mb = input_mb(lang_dir, stage) if stage != "extract" else summary.get("xml_bytes", 0) / 1e6
        med = statistics.median(cpu)
        speeds[stage] = {"mb": mb, "cpu_s": med, "mb_per_cpu_s": mb / med,
                         "docs": summary.get("documents"), "docs_per_cpu_s": (summary.get("documents") or 0) / med,
                         "kept": summary.get("kept"), "rejections": summary.get("rejections")}
    return speeds


QUNTOKEN_MB = 10  # the Hungarian sample is 0.1 MB: at that size the start-up is all one measures


def quntoken_speed(repo: Path, formatted: Path, work: Path, runs: int) -> dict:
    """Hungarian split through quntoken at scale: the sample's formatted files repeated to about
    QUNTOKEN_MB MB in 4 files, split with one worker; medians of input MB per CPU-second of the
    process tree (quntoken's processes counted)."""
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(formatted.rglob("*.txt")))
    copies = max(1, int(QUNTOKEN_MB * 1e6 / 4 / max(1, len(text.encode()))))
    src = work / "quntoken_in"
    src.mkdir(parents=True, exist_ok=True)
    for i in range(4):
        (src / f"wiki_{i:02d}.txt").write_text(text * copies, encoding="utf-8")
    mb = sum(p.stat().st_size for p in src.iterdir()) / 1e6
    args = ["--data-dir", str(work), "--lang", "hu", "--workers", "1", "split", "--splitter", "quntoken",
            "--input", str(src), "--output", str(work / "quntoken_out"), "--force"]
    cpu = statistics.median(pipeline(repo, args) for _ in range(runs))
    return {"mb": mb, "mb_per_cpu_s": mb / cpu}


def stage_folder(stage: str) -> str:
    return {"extract": "extracted", "format": "formatted", "split": "sentences", "filter": "filtered"}[stage]


# -- link labels of prose paragraphs ------------------------------------------------------------

_LINK = re.compile(r"\[\[([^\[\]|]+)(?:\|([^\[\]]*))?\]\]")
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>"
                  r"|<(gallery|imagemap|timeline|graph|math|pre|syntaxhighlight|source)[^>]*>.*?</\1>", re.S | re.I)
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SIDEBAR = re.compile(r"^[a-z]{2,3}(?:-[a-z]+)*$")
_MEDIA_FILE = re.compile(r"\.(?:jpe?g|png|svg|gif|tiff?|webp|ogg|ogv|webm|pdf|djvu)$", re.I)


def prose_labels(wikitext: str, skip_prefixes: set[str]) -> list[str]:
    """The visible labels of links in the page's plain prose paragraphs (not in templates,
    tables, lists, refs; not file, category or sidebar language links)."""
    text = _COMMENT.sub("", wikitext)
    text = _REF.sub("", text)
    for _ in range(6):
        new = _TEMPLATE.sub("\x00", text)
        if new == text:
            break
        text = new
    labels = []
    depth = 0
    for line in text.split("\n"):
        opens, closes = line.count("{|") + line.count("{{"), line.count("|}") + line.count("}}")
        at_start = depth
        depth = max(0, depth + opens - closes)
        if at_start or opens or closes or len(line) < 60 or "\x00" in line[:1]:
            continue
        if line[0] in "*#:;=!|{<[ \t•·–-—" and not line.startswith("[["):
            continue
        visible = _LINK.sub(lambda m: "", line)
        if len(visible.strip(" ,.;:·•|\x00")) < 0.3 * len(line):
            continue  # a row of links: a navigation box, not prose
        if line.startswith("[[") and (line[2:].split(":", 1)[0].strip() in skip_prefixes
                                      or _MEDIA_FILE.search(line[2:].split("|", 1)[0].strip())):
            continue  # a picture with its caption (under any alias of the file namespace)
        for m in _LINK.finditer(line):
            target, label = m.group(1), m.group(2)
            prefix = target.lstrip(":").split(":", 1)[0] if ":" in target else ""
            if prefix and (prefix.strip() in skip_prefixes or (not target.startswith(":") and _SIDEBAR.match(prefix))):
                continue
            shown = label if label is not None else (target.split(":", 2)[-1] if target.startswith(":") else target)
            shown = " ".join(unicodedata.normalize("NFC", html.unescape(shown)).split())
            if shown and "#" not in target[:1] and not re.search(r"['<>{}\[\]]", shown):
                labels.append(shown)
    return labels


LINK_WORKER = r"""
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from pipeline.text.articles import extract_pages, namespace_names, page_namespace, read_articles
from pipeline.text.cleaning import format_article
from pipeline.text.dump import DumpReader
sys.path.insert(0, sys.argv[3])
from bench_text_quality import prose_labels
reader = DumpReader(sys.argv[2])
found = total = 0
misses = []
with tempfile.TemporaryDirectory() as tmp:
    for page in reader.pages():
        si = reader.siteinfo
        if page_namespace(page, si) != "0" or page.redirect:
            continue
        skip = {si.namespaces.get(k) for k in (6, 14)} | {"File", "Image", "Category", "Media"}
        labels = prose_labels(page.text, {s for s in skip if s})
        if not labels:
            continue
        out = Path(tmp) / "x"
        job = (out, si.urlbase, (si.namespaces.get(10) or "Template") + ":", namespace_names(si),
               [(page.id, page.revid, page.title, page.text)])
        try:  # what the extract stage passes, where the checkout has it
            from pipeline.text.articles import dropped_link_prefixes
            job += (dropped_link_prefixes(si),)
        except ImportError:
            pass
        extract_pages(job)
        text = ""
        for _t, lines in read_articles(out):
            text = " ".join(" ".join(format_article(lines)).split())
        for label in labels:
            total += 1
            if label in text:
                found += 1
            elif len(misses) < 8:
                misses.append(f"{page.title}: {label}")
print(json.dumps({"found": found, "total": total, "misses": misses}))
"""


def link_text_kept(repo: Path, dump: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", LINK_WORKER, str(repo), str(dump), str(ROOT / "bench")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo)})
    if proc.returncode:
        raise SystemExit(f"link measure failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the table ---------------------------------------------------------------------------------


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.2f}%" if unit == "share" else f"{value:.1f}"


def print_table(results: dict[str, dict], runs: int) -> None:
    from pipeline.text.quality import MEASURES

    langs = list(results)
    width = 54
    print(f"\ntext stages, one worker; speeds: medians of {runs} runs, input MB (docs) per CPU-second "
          "of the process tree")
    print(f"{'measure':{width}} {'goal':>8} " + " ".join(f"{lang:>12}" for lang in langs))
    print("-" * (width + 10 + 13 * len(langs)))
    for m in MEASURES:
        goal = fmt(m.goal, m.unit) if m.unit == "share" else f"{m.goal:g}/10k"
        cells = [fmt(results[lang]["quality"]["measures"].get(m.key), m.unit) for lang in langs]
        print(f"{m.label[:width]:{width}} {'≤' + goal:>8} " + " ".join(f"{c:>12}" for c in cells))
    cells = [f"{100 * r['links']['found'] / max(1, r['links']['total']):.2f}%" for r in results.values()]
    print(f"{'link labels of prose paragraphs kept in formatted/':{width}} {'≥99.5%':>8} "
          + " ".join(f"{c:>12}" for c in cells))
    for label, key in (("documents formatted", "format"), ("documents kept by filter", "filter")):
        cells = [str(r["speed"][key]["kept"] if key == "filter" else r["speed"][key]["docs"])
                 for r in results.values()]
        print(f"{label:{width}} {'':>8} " + " ".join(f"{c:>12}" for c in cells))
    for stage in STAGES:
        goal = {"format": "≥8", "split": "≥8", "filter": "≥5"}.get(stage, "")
        cells = [f"{r['speed'][stage]['mb_per_cpu_s']:.1f} ({r['speed'][stage]['docs_per_cpu_s']:.0f})"
                 for r in results.values()]
        print(f"{stage + ': MB (docs) per CPU-second':{width}} {goal:>8} " + " ".join(f"{c:>12}" for c in cells))
    if "hu" in results and "quntoken" in results["hu"]:
        q = results["hu"]["quntoken"]
        label = f"hu split through quntoken, sample x{q['mb']:.0f} MB: MB/CPU-s"
        print(f"{label:{width}} {'≥3':>8} " + " ".join(
            f"{q['mb_per_cpu_s']:>12.1f}" if lang == "hu" else f"{'':>12}" for lang in langs))
    for lang, r in results.items():
        rej = r["speed"]["filter"]["rejections"] or {}
        print(f"{lang} rejections: {rej}; link misses: {r['links']['misses'][:4]}")


def dumps(data: Path) -> list[tuple[str, Path]]:
    found = [("hu", ROOT / "data" / "sample" / "huwiki-sample.xml.bz2")]
    for path in sorted(data.glob("*wiki.xml*")) if data.is_dir() else []:
        found.append((path.name.split("wiki.")[0], path))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repo", type=Path, default=ROOT, help="Checkout whose stages run [default: this one].")
    ap.add_argument("--keep", type=Path, default=None, help="Work here and keep the outputs.")
    ap.add_argument("--langs", default=None, help="Comma-separated subset, e.g. uk,vi.")
    for stage in STAGES:
        ap.add_argument(f"--{stage}-extra", default="", help=f"Extra options of {stage}, comma-separated.")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))  # the measures are always this checkout's
    from pipeline.text.quality import measure_corpus

    extra = {s: [x for x in getattr(args, f"{s}_extra").split(",") if x] for s in STAGES}
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_text_quality_"))
    results = {}
    started = time.time()
    try:
        for lang, dump in dumps(args.data):
            if args.langs and lang not in args.langs.split(","):
                continue
            data_dir = work / "data"
            if (data_dir / lang).exists():
                shutil.rmtree(data_dir / lang)
            speed = run_language(args.repo.resolve(), data_dir, lang, dump, args.runs, extra)
            results[lang] = {"speed": speed, "quality": measure_corpus(data_dir / lang),
                             "links": link_text_kept(args.repo.resolve(), dump)}
            if lang == "hu":
                results[lang]["quntoken"] = quntoken_speed(args.repo.resolve(), data_dir / lang / "formatted",
                                                           work / "quntoken", args.runs)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print_table(results, args.runs)
    print(f"({time.time() - started:.0f} s; code: {args.repo})")


if __name__ == "__main__":
    main()
