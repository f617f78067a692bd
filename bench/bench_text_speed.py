"""Speed of the text stages of two checkouts, measured interleaved on the same inputs.

On a shared machine the speed of a stage drifts by tens of percent within minutes, so two
benchmark runs made one after the other compare the machine as much as the code. This one
runs format, split and filter of --before and --after in turns (before, after, before, ...) on
the same input folders, each in a fresh process with one worker and --force, and prints per
stage and language the median input MB per CPU-second of the process tree (quntoken's
processes counted) and the ratio after/before.

Inputs come from a data directory made by bench_text_quality.py --keep DIR (DIR/data/LANG/
extracted, formatted, sentences); the Hungarian quntoken row uses DIR/quntoken/quntoken_in.

Usage:
    .venv/bin/python bench/bench_text_quality.py --keep /tmp/q        # once, for the inputs
    .venv/bin/python bench/bench_text_speed.py --data /tmp/q --before ../old-checkout --runs 5
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_text_quality import pipeline  # noqa: E402  (one way to time a stage's process tree)

STAGE_INPUT = {"format": "extracted", "split": "formatted", "filter": "sentences"}


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()
               and p.name != "manifest.json" and ".stage" not in p.parts) / 1e6


def jobs(data: Path) -> list[tuple[str, str, Path, list[str]]]:
    """(label, lang, input folder, extra options) of every measurement there is input for."""
    found = []
    for lang_dir in sorted((data / "data").iterdir()) if (data / "data").is_dir() else []:
        for stage, folder in STAGE_INPUT.items():
            if (lang_dir / folder).is_dir():
                found.append((stage, lang_dir.name, lang_dir / folder, []))
    quntoken = data / "quntoken" / "quntoken_in"
    if quntoken.is_dir():
        found.append(("split (quntoken, sample x N)", "hu", quntoken, ["--splitter", "quntoken"]))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="A bench_text_quality.py --keep folder.")
    ap.add_argument("--before", type=Path, default=None, help="The other checkout.")
    ap.add_argument("--after", type=Path, default=ROOT, help="[default: this checkout]")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if args.data is None or args.before is None:   # `make bench` runs every script bare
        print("skipping: compares two checkouts; give --data (a bench_text_quality.py --keep folder) "
              "and --before OLD_CHECKOUT")
        return
    todo = jobs(args.data)
    if not todo:
        raise SystemExit(f"no inputs under {args.data}: run bench_text_quality.py --keep {args.data} first")
    print(f"interleaved, {args.runs} runs each; median input MB per CPU-second of the process tree")
    print("| stage | lang | input MB | before | after | after/before |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for stage, lang, src, extra in todo:
            name = stage.split(" ")[0]
            cpu: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.runs):
                for side in ("before", "after"):
                    repo = getattr(args, side).resolve()
                    out = Path(tmp) / side / lang / name
                    cpu[side].append(pipeline(repo, ["--data-dir", tmp, "--lang", lang, "--workers", "1", name,
                                                     "--input", str(src), "--output", str(out), "--force",
                                                     *extra]))
            mb = folder_mb(src)
            before, after = (mb / statistics.median(cpu[s]) for s in ("before", "after"))
            print(f"| {stage} | {lang} | {mb:.1f} | {before:.1f} | {after:.1f} | {after / before:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
