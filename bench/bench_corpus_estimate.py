"""The corpus's tokens estimated from the dump (recipes/corpus_estimate.py, what `make pretrain
--dry-run` plans a GPU's step with before the pipeline has run) against what `pipeline encode`
counts with make pretrain's settings (CPU: modernbert_small's vocab rule, packed 128-token rows).

Usage:
    python bench/bench_corpus_estimate.py                 # sample, fixtures, ../shared/data's dumps
    python bench/bench_corpus_estimate.py --runs 5 --only hu uk

Dumps: the shipped hu sample; the fixtures' ja / zh / th / hy dumps (tests/helpers/wiki_dump.py);
ukwiki and viwiki from ../shared/data where present (truncated real dumps, read in part). Each
dump goes through the pipeline once, in a temporary folder (tests/helpers/pretrain_corpus.py:
make pretrain's commands); the estimate is timed over --runs (median). The table: the XML the
estimate read and its share of the file, its seconds, the estimate, encode's count, and their ratio
(the test holds it within 2x: tests/recipes/test_corpus_estimate.py).
"""
from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recipes.corpus_estimate import estimate_corpus  # noqa: E402
from tests.helpers.pretrain_corpus import encoded_tokens  # noqa: E402
from tests.helpers.wiki_dump import fixture_dump  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def dumps(work: Path, only: list[str] | None) -> list[tuple[str, Path]]:
    found = [("hu", ROOT / "data" / "sample" / "huwiki-sample.xml.bz2")]
    found += [(lang, fixture_dump(work, lang)) for lang in ("ja", "zh", "th", "hy")]
    found += [(lang, SHARED / f"{lang}wiki.xml.xz") for lang in ("uk", "vi")
              if (SHARED / f"{lang}wiki.xml.xz").is_file()]
    return [(lang, dump) for lang, dump in found if not only or lang in only]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="timed estimates a dump (median)")
    p.add_argument("--only", nargs="+", help="these languages only (hu ja zh th hy uk vi)")
    a = p.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")
    logging.disable(logging.WARNING)   # the stages' summaries: the table says what counts
    only = f" --only {' '.join(a.only)}" if a.only else ""
    print(f"$ python bench/bench_corpus_estimate.py --runs {a.runs}{only}")
    print(f"{'dump':<24} {'XML read':>12} {'share':>6} {'est. s':>7} {'estimated':>11} {'encoded':>11} {'enc/est':>8}")
    with tempfile.TemporaryDirectory(prefix="bench_estimate_") as tmp:
        for lang, dump in dumps(Path(tmp), a.only):
            times, found = [], None
            for _ in range(a.runs):
                found = estimate_corpus(dump, lang)
                times.append(found.seconds)
            counted = encoded_tokens(dump, lang, Path(tmp) / f"data_{lang}")
            print(f"{dump.name:<24} {found.xml_read / 1e6:>9.2f} MB {found.share:>6.0%} "
                  f"{statistics.median(times):>7.2f} {found.tokens:>11,} {counted:>11,} {counted / found.tokens:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
