"""`pipeline probe` — a token-classification probe from the dump's own links (WikiANN's idea),
so that a tagging task exists for any Wikipedia, with no labelled data.

Usage:
    pipeline --lang uk probe                                 # after `pipeline run` (or up to shard)
    pipeline --lang uk probe --train-sentences 5000 --seed 7
    probe_corpus(data_dir="data", lang="uk", workers=2)     # the same from Python; the summary
    python -m trainer.finetune --model M --probe data/uk --output_dir O      # fine-tune on it

Writes DATA_DIR/LANG/probe/train.conll, dev.conll and test.conll: one token per line,
`WORD<TAB>TAG`, a blank line after each sentence, IOB2 tags of one entity type (B-LINK,
I-LINK, O); and manifest.json last, with the counts (sentences, tokens, mentions and articles
per split, articles read, sentences dropped per reason).

A mention is a stretch of text that the article links to another article, or a later unlinked
occurrence of such a stretch, or of the article's own title (pipeline/text/probe.py: what a
label means, its noise, and how a sentence is tagged). Each article's text is cleaned and split
exactly as the format and split stages do it (the split stage's splitter and learned
abbreviations, from its manifest), and a sentence is used only if it is, byte for byte, a line
of the shards: filtered-out text never enters the probe. A line of the test shards (the
held-out articles) goes to dev or test, a line of the training shards to train, a line of both
(possible with the filter's --keep-repeats) to none. A held-out article goes whole to dev or to
test: largest first (ties: a seeded hash of the title), each to the split that is emptier for
its asked size.

Sizes: --train-sentences 20000, --dev-sentences 2000, --test-sentences 2000: the sentences with
the smallest seeded hashes of each split. A big corpus is not read whole: a seeded share of the
articles is read first (enough, by the shards' sentence counts, for the sizes asked) and more in
rounds (x4) while a split is short. A corpus with fewer sentences gives what it has and says so;
under FLOORS a split is too small to mean much (a warning names the fix). Only a probe with no
sentence at all is refused.

Work: one task per extracted file and round (resumable; any --workers gives the same bytes);
then the training shards are scanned once per round for the candidates (64-bit hashes of lines;
the test shards' hashes, small, are held in memory).
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections import Counter
from pathlib import Path

import click
import numpy as np

from common.atomic import atomic_open, atomic_path
from pipeline.core.errors import StageError
from pipeline.core.inputs import flat_name, list_text_files, resolve_output
from pipeline.core.manifest import fingerprint_inputs, read_manifest
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir, validate_lang
from pipeline.core.runner import StageRun, Task
from pipeline.text.documents import read_utf8
from pipeline.text.probe import TAGS, conll_block, line_hash, prepare_article, seeded_hash, tag_article
from pipeline.text.splitting import split_lines
from pipeline.text.versions import stage_rules

log = logging.getLogger("pipeline")

SPLITS = ("train", "dev", "test")
FLOORS = {"train": 1000, "dev": 500, "test": 500}   # under these a split is too small to mean much
LINKS_SINCE = 3      # extract rules version from which records carry "links"
USABLE_SHARE = 0.25  # share of an article's sentences the probe can use (low estimate)
GROWTH = 4           # the share of articles read grows by this much per round
MIN_SHARE = 0.001    # never read less than this share of the articles first
_TAG_OF = {t[0]: t for t in TAGS}   # "O", "B", "I" in the work files


def _upstream(data_dir, lang: str, stage: str) -> tuple[Path, dict]:
    folder = stage_dir(data_dir, lang, stage)
    manifest = read_manifest(folder)
    if manifest is None:
        raise StageError(f"{folder} holds no finished '{stage}' output: run `pipeline --lang {lang} "
                         f"{stage}` (or `pipeline --lang {lang} run`) before `pipeline probe`")
    return folder, manifest


def _save_hashes(folder: Path, name: str, values) -> str:
    """Sorted hashes saved for the workers, under a name that says their content (a worker
    keeps what it loaded, by name)."""
    array = np.asarray(values, dtype=np.uint64)
    path = folder / f"{name}_{hashlib.sha1(array.tobytes()).hexdigest()[:16]}.npy"
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)
    return str(path)


@functools.lru_cache(maxsize=4)
def _hashes(path: str) -> np.ndarray:
    return np.load(path)


def _contains(sorted_hashes: np.ndarray, values: list[int]) -> np.ndarray:
    v = np.asarray(values, dtype=np.uint64)
    if not len(sorted_hashes) or not len(v):
        return np.zeros(len(v), dtype=bool)
    i = np.minimum(np.searchsorted(sorted_hashes, v), len(sorted_hashes) - 1)
    return sorted_hashes[i] == v


def _file_hashes(path: Path) -> np.ndarray:
    return np.unique(np.asarray([line_hash(s) for s in (x.strip() for x in read_utf8(path).split("\n")) if s],
                                dtype=np.uint64))


def scan_shard(job: tuple[Path, str]) -> np.ndarray:
    """The candidate hashes (a sorted .npy) that are lines of one training shard."""
    shard, candidates = job
    found = _file_hashes(shard)
    return found[_contains(_hashes(candidates), found.tolist())]


def probe_file(job: dict) -> dict:
    """One task: the articles of one extracted file whose seeded hash falls in [lo, hi), tagged;
    their usable sentences (with the split each belongs to) go to a JSON-lines work file."""
    seed, lo, hi = job["seed"], job["lo"], job["hi"]
    test = _hashes(job["test_hashes"])
    counts: Counter = Counter()
    articles = []
    with open(job["src"], encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            record = json.loads(line)
            if "links" not in record:
                raise StageError(f"{job['src']} line {lineno} has no links: it was extracted by an "
                                 "older version; run `pipeline extract` again")
            if lo <= seeded_hash(record.get("title", ""), seed, "article") < hi:
                counts["articles_read"] += 1
                article = prepare_article(record)
                counts["links_lost"] += article.lost_links
                if article.paragraphs:
                    articles.append((record, article))
    text = "\n\n".join("\n".join(a.paragraphs) for _, a in articles)
    per_line = split_lines(text, job["lang"], job["splitter"], job["src"], job["learned"]) if articles else []
    out, start = [], 0
    for record, article in articles:
        per_paragraph = per_line[start:start + len(article.paragraphs)]
        start += len(article.paragraphs) + 1
        title = record.get("title", "")
        sentences, dropped = tag_article(article, per_paragraph)
        counts.update(dropped)
        hashes = [line_hash(s.text) for s in sentences]
        held = _contains(test, hashes).tolist()   # lines of the test shards: dev or test
        for side in set(held):
            counts["articles_held_out" if side else "articles_training"] += 1
        for s, h, is_held in zip(sentences, hashes, held):
            out.append(json.dumps({"h": h, "k": seeded_hash(s.text, seed, "sentence"), "held": is_held,
                                   "a": record.get("id", title), "ak": seeded_hash(title, seed, "article"),
                                   "t": s.text, "g": "".join(g[0] for g in s.tags),
                                   "p": s.propagated}, ensure_ascii=False) + "\n")
    with atomic_open(job["dst"]) as fh:
        fh.writelines(out)
    counts["candidates"] = len(out)
    return dict(counts)


class Candidates:
    """What the work files hold, without the text: side (0 training, 1 held out), key, hash,
    article key, file and line of each sentence."""

    def __init__(self):
        self.rows: list[tuple[int, int, int, int, int, int]] = []
        self.files: list[Path] = []
        self.in_training: set[int] = set()   # candidate hashes found in the training shards

    def read(self, path: Path) -> None:
        f = len(self.files)
        self.files.append(path)
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                c = json.loads(line)
                self.rows.append((int(c["held"]), c["k"], c["h"], c["ak"], f, i))

    def unchecked(self, checked: set[int]) -> list[int]:
        """Hashes not yet looked up in the training shards (training candidates must be there,
        held-out ones must not: with the filter's --keep-repeats a line can be in both)."""
        return sorted({r[2] for r in self.rows if r[2] not in checked})

    def usable(self, sizes: dict) -> dict[str, list[tuple]]:
        """Per split, the distinct sentences it can take, in selection order (seeded key):
        train those of the training shards; the held-out articles go whole to dev or test,
        largest first (ties: seeded hash), each to the split that is emptier for its size."""
        out = {s: [] for s in SPLITS}
        seen: set[tuple[int, int]] = set()
        held: dict[int, list[tuple]] = {}
        for row in sorted(self.rows):
            if (row[0], row[2]) in seen or (row[2] in self.in_training) != (row[0] == 0):
                continue
            seen.add((row[0], row[2]))
            if row[0] == 0:
                out["train"].append(row)
            else:
                held.setdefault(row[3], []).append(row)
        for _article, rows in sorted(held.items(), key=lambda a: (-len(a[1]), a[0])):  # largest first
            if not sizes["dev"] and not sizes["test"]:
                break
            if not sizes["dev"] or not sizes["test"]:
                split = "dev" if sizes["dev"] else "test"
            else:
                split = "dev" if len(out["dev"]) * sizes["test"] <= len(out["test"]) * sizes["dev"] else "test"
            out[split].extend(rows)
        for split in ("dev", "test"):
            out[split].sort()
        return out


def first_share(sizes: dict, shard_summary: dict) -> float:
    """The share of articles to read first: enough, by the shards' sentence counts, for the
    sizes asked (at least all of a small corpus)."""
    test = shard_summary.get("test_sentences", 0)
    train = shard_summary.get("sentences", 0) - test
    need = [sizes["train"] / max(1, USABLE_SHARE * train),
            (sizes["dev"] + sizes["test"]) / max(1, USABLE_SHARE * test) if test else 0.0]
    return min(1.0, max(need + [MIN_SHARE]))


def probe_corpus(*, data_dir="data", lang="hu", workers=None, output=None, force=False,
                 train_sentences=20000, dev_sentences=2000, test_sentences=2000, seed=12345) -> dict:
    """Build the probe of `lang`; see the module docstring. Returns the summary dict."""
    lang = validate_lang(lang)
    sizes = {"train": train_sentences, "dev": dev_sentences, "test": test_sentences}
    if min(sizes.values()) < 0 or not sum(sizes.values()):
        raise StageError(f"--train/dev/test-sentences must be 0 or more, not all 0 (got {sizes})")
    extracted, ext_manifest = _upstream(data_dir, lang, "extract")
    split_dir, split_manifest = _upstream(data_dir, lang, "split")
    sharded, shard_manifest = _upstream(data_dir, lang, "shard")
    if (ext_manifest.get("rules") or {}).get("rules_version", 0) < LINKS_SINCE:
        raise StageError(f"{extracted} was extracted by an older version, without the links the "
                         f"probe is made of: run `pipeline --lang {lang} extract` again (it redoes "
                         "the stage), then the stages after it")
    table = shard_manifest.get("shards") or []
    train_shards = [sharded / r["file"] for r in table if r["split"] == "training"]
    test_shards = [sharded / r["file"] for r in table if r["split"] == "test"]
    out = resolve_output(data_dir, lang, "probe", output)
    options = {"lang": lang, **{f"{k}_sentences": v for k, v in sizes.items()}, "seed": seed}
    share = first_share(sizes, shard_manifest.get("summary", {}))
    run = StageRun("probe", out, options, fingerprint_inputs([extracted, split_dir, sharded]),
                   force=force, workers=workers, rules=stage_rules("probe"),
                   expected_bytes=int(share * ext_manifest["summary"].get("output_bytes", 0)))
    if run.complete:
        return run.skip()
    files = list_text_files(extracted, "wiki_*")
    test_hashes = np.unique(np.concatenate([_file_hashes(p) for p in test_shards] or [np.zeros(0, np.uint64)]))
    test_path = _save_hashes(run.work_dir, "test_hashes", test_hashes)
    job = {"seed": seed, "lang": lang, "splitter": split_manifest["options"]["splitter"],
           "learned": frozenset(split_manifest.get("learned_abbreviations", ())),
           "test_hashes": test_path}
    goal = {s: sizes[s] if s == "train" or test_shards else 0 for s in SPLITS}  # what can be had
    totals: Counter = Counter()
    candidates, checked = Candidates(), set()
    lo, rounds = 0, 0
    while True:
        hi = 2 ** 64 if share >= 1 else int(share * 2 ** 64)
        tasks = []
        for f in files:
            name = f"r{rounds}_{flat_name(extracted, f)}"
            dst = run.work_dir / f"{name}.jsonl"
            tasks.append(Task(name, {**job, "src": str(f), "dst": str(dst), "lo": lo, "hi": hi}, (dst,)))
        for task, info in run.run_tasks(tasks, probe_file, desc="probe", unit="file"):
            totals.update(info)
            candidates.read(task.outputs[0])
        new = candidates.unchecked(checked)
        if new and train_shards:
            saved = _save_hashes(run.work_dir, "candidates", new)
            jobs = [(p, saved) for p in train_shards]
            for found in run.map(scan_shard, jobs, desc="probe: training shards", unit="shard"):
                candidates.in_training.update(found.tolist())
        checked.update(new)
        usable = candidates.usable(sizes)
        rounds += 1
        if share >= 1 or all(len(usable[s]) >= goal[s] for s in SPLITS):
            break
        lo, share = hi, min(1.0, share * GROWTH)
    return _finish(run, out, candidates, usable, sizes, totals, share, rounds, bool(test_shards))


def _finish(run: StageRun, out: Path, candidates: Candidates, usable: dict, sizes: dict,
            totals: Counter, share: float, rounds: int, has_test: bool) -> dict:
    """Write the chosen sentences (in key order), the manifest last; the summary."""
    chosen = {s: usable[s][:sizes[s]] for s in SPLITS}
    wanted = {(row[4], row[5]): s for s in SPLITS for row in chosen[s]}
    records: dict[str, list] = {s: [] for s in SPLITS}
    for f, path in enumerate(candidates.files):
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if (f, i) in wanted:
                    c = json.loads(line)
                    records[wanted[(f, i)]].append((c["k"], c["h"], c))
    counts = {s: Counter() for s in SPLITS}
    articles = {s: set() for s in SPLITS}
    paths = []
    for s in SPLITS:
        path = out / f"{s}.conll"
        with atomic_open(path) as fh:
            for _k, _h, c in sorted(records[s], key=lambda r: (r[0], r[1])):
                tokens, tags = c["t"].split(), [_TAG_OF[g] for g in c["g"]]
                assert len(tokens) == len(tags), c["t"]
                fh.write(conll_block(tokens, tags))
                counts[s].update(sentences=1, tokens=len(tokens), mentions=c["g"].count("B"),
                                 propagated=c["p"])
                articles[s].add(c["a"])
        paths.append(path)
    n = {s: counts[s]["sentences"] for s in SPLITS}
    if not sum(n.values()):
        raise StageError(f"no sentence of the corpus has a linked mention that reached the shards "
                         f"({totals['articles_read']} articles read): the probe is built from the "
                         "articles' links; a dump without links cannot give one")
    dropped = {k: totals[k] for k in ("no_mention", "too_long", "unlinked_variant", "private_use",
                                      "not_found") if totals[k]}
    dropped["not_in_training_shards"] = sum(1 for r in candidates.rows
                                            if r[0] == 0 and r[2] not in candidates.in_training)
    dropped["held_out_but_in_training_shards"] = sum(1 for r in candidates.rows
                                                     if r[0] == 1 and r[2] in candidates.in_training)
    dropped["duplicate"] = (len(candidates.rows) - dropped["not_in_training_shards"]
                            - dropped["held_out_but_in_training_shards"] - sum(len(v) for v in usable.values()))
    warnings = []
    for s in SPLITS:
        if n[s] < min(sizes[s], FLOORS[s]):
            fix = ("use a larger dump" if s == "train" else
                   "hold out more articles (`pipeline shard --test-fraction 0.2 --force`, or a larger "
                   "--min-test-sentences), then `pipeline probe --force`" if has_test else
                   "hold out articles: `pipeline shard --test-fraction 0.01 --force`")
            warnings.append(f"only {n[s]:,} {s} sentences (asked {sizes[s]:,}; under {FLOORS[s]:,} "
                            f"they mean little): the corpus has no more: {fix}")
    for w in warnings:
        log.warning("probe: warning: %s", w)
    summary = {
        **{f"{s}_sentences": n[s] for s in SPLITS},
        "tokens": {s: counts[s]["tokens"] for s in SPLITS},
        "mentions": {s: counts[s]["mentions"] for s in SPLITS},
        "propagated_mentions": {s: counts[s]["propagated"] for s in SPLITS},
        "articles": {s: len(articles[s]) for s in SPLITS},
        "available": {s: len(usable[s]) for s in SPLITS},
        "articles_read": totals["articles_read"],
        "held_out_articles": totals["articles_held_out"],
        "training_articles": totals["articles_training"],
        "article_share_read": round(share, 6), "rounds": rounds,
        "dropped_sentences": dropped,
        "links_lost": totals["links_lost"],
        "seconds": run.seconds(),
    }
    return run.finish(summary, paths, extra={"warnings": warnings})


@click.command("probe")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/probe].")
@click.option("--train-sentences", type=click.IntRange(min=0), default=20000, show_default=True,
              help="Training sentences (from training articles).")
@click.option("--dev-sentences", type=click.IntRange(min=0), default=2000, show_default=True,
              help="Dev sentences (from held-out articles).")
@click.option("--test-sentences", type=click.IntRange(min=0), default=2000, show_default=True,
              help="Test sentences (from the other held-out articles).")
@click.option("--seed", type=int, default=12345, show_default=True,
              help="Seed of the hashes that choose articles, dev/test and sentences.")
@force_option
@click.pass_obj
def command(g, output, train_sentences, dev_sentences, test_sentences, seed, force):
    """Tag mentions of linked articles (IOB2, B-LINK/I-LINK/O) in sentences of the shards:
    train.conll from training articles, dev.conll and test.conll from held-out ones.

    Needs extract (with links), split and shard. For `python -m trainer.finetune --probe
    DATA_DIR/LANG`.
    """
    probe_corpus(**g.kwargs(), output=output, train_sentences=train_sentences,
                 dev_sentences=dev_sentences, test_sentences=test_sentences, seed=seed, force=force)
