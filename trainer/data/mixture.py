"""Several languages in one run (--input_dir LANG=DIR ...): which language each training sample
comes from, and the loader that mixes them. One folder is loader.py's path, unchanged.

    languages = find_languages({"hr": DIR, "sr": DIR})          # [Language]; DataError in one line
    data = MixedTrainData(languages, batch_size=32, seed=42, rank=0, world_size=1,
                          phases=[(0.7, 0), (0.3, 64_000)])     # (alpha, from this rank's sample)
    for batch in data: ...                                      # as ShardedTrainData
    state = data.state_dict()                                   # load_state_dict() resumes exactly

**Shares.** Language l with N_l training samples (its share p_l = N_l / sum N) is sampled with
the weight p_l ** alpha / sum_k p_k ** alpha (alpha 1: as the data, 0: every language alike),
quantised to n_l whole samples out of every CYCLE (65,536; largest remainders, at least 1 each).

**The draw** is not random but stratified: within a phase of the schedule, this rank's positions
go through one fixed pattern of CYCLE positions in which language l holds exactly n_l, spread
evenly (its j-th near (j + 1/2) / n_l of the way: Sainte-Laguë's order). Over every cycle the
counts are exactly n_l; in any prefix each language is within (1 + L * share) / 2 of its share
(L languages). The language at position t and how many samples of each language came before t
are closed-form: a pure function of the position and the schedule, so a resume needs only t.

**Each language** keeps its own order (EpochOrder keyed by its code) over its own files, cut into
one block per rank, and its own epochs: a language sampled above its share of the data repeats its
epochs more often. Its k-th sample on a rank is position k of its own stream (ShardedTrainData of
its files alone: one shard piece in use and one read ahead, per language being read). Every rank
draws the same language at the same position, so within a language's epoch the ranks read
disjoint blocks. Dynamic masks are keyed by the sample's index among all languages' samples
(language l's indices start after those of the languages before it), so they stay distinct.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from pipeline.encoding.hdf5_format import DATASETS
from trainer.data.loader import ShardedTrainData, check_doc_attention, stack_rows, to_batch
from trainer.data.prefetch import PrefetchedBatches
from trainer.data.shards import DOC_STARTS, DataError, Shards, find_shards

ROW_KEYS = (*DATASETS, DOC_STARTS)   # what a batch takes of a piece's rows

CYCLE = 1 << 16
STATE_VERSION = 1


@dataclass(frozen=True)
class Language:
    code: str
    input_dir: str
    shards: Shards

    @property
    def num_samples(self) -> int:
        return sum(s.num_samples for s in self.shards.train)


def find_languages(folders: dict[str, str]) -> list[Language]:
    """Each language's shards (sorted by code), checked: a corpus with no training samples, and
    languages of different sequence lengths or predictions, are one line each."""
    out = []
    for code, folder in sorted(folders.items()):
        label = f"--input_dir {code}={folder}"
        if Path(folder).is_dir() and not any("training" in p.name for p in Path(folder).rglob("*.hdf5")):
            raise DataError(f"{label} holds no *training*.hdf5 files: the {code} corpus is empty; "
                            f"encode it (pipeline --lang {code} encode) or leave {code} out")
        shards = find_shards(folder, label=label)
        lang = Language(code, str(folder), shards)
        if lang.num_samples == 0:
            raise DataError(f"{label}: its training files hold no samples, the {code} corpus is "
                            f"empty; encode more text for {code} or leave it out")
        out.append(lang)
    shapes = {(lang.shards.seq_len, lang.shards.max_pred) for lang in out}
    if len(shapes) > 1:
        said = ", ".join(f"{lang.code} ({lang.shards.seq_len}, {lang.shards.max_pred})" for lang in out)
        raise DataError(f"the languages were encoded with different (seq_len, max_pred): {said}; "
                        "encode every language with the same --max-seq and --max-pred")
    return out


def combined_shards(languages: list[Language]) -> Shards:
    """All languages' shards as one Shards (sequence length, packed rows, the budget's timing)."""
    return Shards([s for lang in languages for s in lang.shards.train],
                  [s for lang in languages for s in lang.shards.test])


def sampling_shares(sizes, alpha: float) -> np.ndarray:
    """p_l ** alpha, normalised, for languages of `sizes` training samples."""
    p = np.asarray(sizes, dtype=np.float64) / float(sum(sizes))
    w = p ** float(alpha)
    return w / w.sum()


def quantise(shares: np.ndarray, total: int = CYCLE) -> np.ndarray:
    """Whole counts out of `total` (largest remainders), at least 1 for every language."""
    exact = shares * total
    counts = np.maximum(np.floor(exact).astype(np.int64), 1)
    rest = np.argsort(-(exact - np.floor(exact)), kind="stable")
    i = 0
    while counts.sum() < total:
        counts[rest[i % len(rest)]] += 1
        i += 1
    while counts.sum() > total:   # the minimum of 1 took samples from the largest
        counts[int(np.argmax(counts))] -= 1
    return counts


def cycle_pattern(counts: np.ndarray) -> np.ndarray:
    """One cycle: language l at `counts[l]` evenly spread positions, near (j + 1/2) / n_l."""
    lang = np.repeat(np.arange(len(counts)), counts)
    where = np.concatenate([(np.arange(n) + 0.5) / n for n in counts])
    return lang[np.lexsort((lang, where))].astype(np.int32)


class MixSchedule:
    """The language of every position of a rank's sample stream; see the module docstring.

    `phases`: [(alpha, start)], start in samples of one rank, the first 0, increasing."""

    def __init__(self, sizes, phases, cycle: int = CYCLE):
        self.sizes = [int(n) for n in sizes]
        self.phases = [(float(a), int(s)) for a, s in phases]
        self.cycle = int(cycle)
        self.starts = np.array([s for _, s in self.phases], dtype=np.int64)
        assert self.starts[0] == 0 and (np.diff(self.starts) >= 0).all(), self.phases
        self.counts = [quantise(sampling_shares(self.sizes, a), self.cycle) for a, _ in self.phases]
        self.patterns = [cycle_pattern(c) for c in self.counts]

    def shares(self, phase: int) -> np.ndarray:
        """The sampling shares of a phase, as drawn (the quantised counts / CYCLE)."""
        return self.counts[phase] / self.cycle

    def languages(self, start: int, n: int) -> np.ndarray:
        """The language of positions start .. start + n - 1."""
        pos = np.arange(start, start + n, dtype=np.int64)
        phase = np.searchsorted(self.starts, pos, side="right") - 1
        out = np.empty(n, dtype=np.int32)
        for p in np.unique(phase):
            sel = phase == p
            out[sel] = self.patterns[p][(pos[sel] - self.starts[p]) % self.cycle]
        return out

    def _span(self, phase: int, n: int) -> np.ndarray:
        """How many of each language among the first n positions of a phase."""
        whole, part = divmod(int(n), self.cycle)
        tail = np.bincount(self.patterns[phase][:part], minlength=len(self.sizes))
        return whole * self.counts[phase] + tail

    def counts_before(self, t: int) -> np.ndarray:
        """How many samples of each language the positions before t hold."""
        out = np.zeros(len(self.sizes), dtype=np.int64)
        ends = list(self.starts[1:]) + [None]
        for p, (s, e) in enumerate(zip(self.starts, ends)):
            if t <= s:
                break
            out += self._span(p, (t if e is None else min(t, e)) - s)
        return out


def _code_key(code: str) -> int:
    return int.from_bytes(code.encode("ascii"), "big")


class _Cursor:
    """A language's stream of shard pieces, taken n rows at a time (two pieces in memory)."""

    def __init__(self, stream):
        self.stream, self.cur, self.off = stream, None, 0

    def take(self, n: int) -> dict[str, np.ndarray]:
        parts = []
        while n:
            if self.cur is None or self.off == len(self.cur["input_ids"]):
                # drop the used-up piece before the following one is read (copy rows out of it)
                parts = [{k: v.copy() for k, v in part.items()} for part in parts]
                self.cur = None
                _, self.cur = self.stream.next()
                self.off = 0
            k = min(n, len(self.cur["input_ids"]) - self.off)
            parts.append({key: self.cur[key][self.off:self.off + k] for key in ROW_KEYS if key in self.cur})
            self.off += k
            n -= k
        return stack_rows(parts)

    def close(self) -> None:
        self.stream.close()


class MixedTrainData(PrefetchedBatches):
    """Endless micro-batches mixing several languages; the interface of ShardedTrainData."""

    def __init__(self, languages: list[Language], batch_size: int, seed: int, rank: int,
                 world_size: int, phases, vocab_size: int | None = None, pin_memory: bool = False,
                 unpad: bool = False, depth: int = 4, masker=None, doc_attention: str | None = None):
        if batch_size < 1:
            raise DataError(f"batch size must be >= 1, got {batch_size}")
        self.languages = list(languages)
        self.batch_size, self.seed = int(batch_size), int(seed)
        self.rank, self.world_size = int(rank), int(world_size)
        self.pin_memory, self.unpad, self.depth, self.masker = pin_memory, unpad, int(depth), masker
        self.doc_attention = doc_attention   # as ShardedTrainData's
        self.schedule = MixSchedule([lang.num_samples for lang in self.languages], phases)
        self.streams, base = [], 0
        for lang in self.languages:
            try:
                self.streams.append(ShardedTrainData(
                    lang.shards.train, 1, seed, rank, world_size, vocab_size, masker=masker,
                    order_key=_code_key(lang.code), index_base=base, doc_attention=doc_attention))
            except DataError as exc:
                raise DataError(f"--input_dir {lang.code}={lang.input_dir}: {exc}") from None
            base += lang.num_samples
        self.samples_consumed = 0   # by this rank, over all languages (batches handed out)

    # -- position ------------------------------------------------------------------------
    @property
    def num_samples(self) -> int:
        return sum(lang.num_samples for lang in self.languages)

    def epochs(self) -> dict[str, int]:
        """Each language's epoch (passes over its own files) at the current position."""
        counts = self.schedule.counts_before(self.samples_consumed)
        return {lang.code: int(c) // s.order.per_rank
                for lang, c, s in zip(self.languages, counts, self.streams)}

    @property
    def epoch(self) -> int:
        """The epochs every language has completed (those of the least repeated one)."""
        return min(self.epochs().values())

    def _identity(self) -> dict:
        return {"languages": [[lang.code, len(lang.shards.train), lang.num_samples]
                              for lang in self.languages],
                "schedule": [list(p) for p in self.schedule.phases], "cycle": self.schedule.cycle}

    def masking_settings(self) -> dict:
        return self.masker.settings() if self.masker is not None else {"masking": "static"}

    def state_dict(self) -> dict:
        return {"version": STATE_VERSION, "seed": self.seed, "world_size": self.world_size,
                "samples_consumed": self.samples_consumed, "masking": self.masking_settings(),
                "doc_attention": self.doc_attention, **self._identity()}

    def load_state_dict(self, state: dict) -> None:
        """Resume at a saved position; refuse (one line) when the order cannot be kept."""
        if "languages" not in state:
            raise DataError(f"the checkpoint was trained on one --input_dir folder "
                            f"({state.get('num_files')} files, {state.get('num_samples')} samples), "
                            "not on languages: resume with that --input_dir, or start a new --output_dir")
        if state.get("version") != STATE_VERSION:
            raise DataError(f"mixed loader state version {state.get('version')} is not {STATE_VERSION}: "
                            "this checkpoint was written by another trainer version")

        def said(langs):
            return ", ".join(f"{c} {f} files {n} samples" for c, f, n in langs)

        now = self._identity()
        if [list(x) for x in state["languages"]] != now["languages"] or state["seed"] != self.seed:
            raise DataError(f"the languages, their data or the seed changed since the checkpoint "
                            f"({said(state['languages'])}, seed {state['seed']} then; "
                            f"{said(now['languages'])}, seed {self.seed} now): resume with the same "
                            "--input_dir LANG=DIR folders and --seed, or start a new --output_dir")
        if [list(p) for p in state["schedule"]] != now["schedule"] or state["cycle"] != now["cycle"]:
            def phases(ps):
                return ", ".join(f"{a:g} from sample {s}" for a, s in ps)
            raise DataError(f"the --sampling_alpha schedule changed since the checkpoint "
                            f"({phases(state['schedule'])} then; {phases(now['schedule'])} now, per "
                            "rank): resume with the same --sampling_alpha, --max_steps, "
                            "--train_batch_size and --gradient_accumulation_steps")
        if state["masking"] != self.masking_settings():
            raise DataError(f"the masking changed since the checkpoint ({state['masking']} then, "
                            f"{self.masking_settings()} now): resume with the same --masking, "
                            "--mlm_probability and --whole_word_masking, or start a new --output_dir")
        check_doc_attention(state, self.doc_attention)
        if state["world_size"] != self.world_size and state["samples_consumed"]:
            raise DataError(f"the checkpoint was written by {state['world_size']} ranks and this run "
                            f"has {self.world_size}: with several languages the sample order is kept "
                            f"only on as many ranks; resume with {state['world_size']} ranks (e.g. "
                            f"torchrun --nproc_per_node={state['world_size']})")
        self.close()
        self.samples_consumed = int(state["samples_consumed"])

    # -- reading -------------------------------------------------------------------------
    def _assemble(self, consumed: int) -> Iterator[dict]:
        """The batches from position `consumed` on (runs in the batch thread)."""
        counts = self.schedule.counts_before(consumed)
        cursors: dict[int, _Cursor] = {}   # opened when a language is first drawn
        try:
            t, n = consumed, self.batch_size
            while True:
                langs = self.schedule.languages(t, n)
                parts = []
                for lang in np.unique(langs):
                    lang = int(lang)
                    k = int(np.count_nonzero(langs == lang))
                    if lang not in cursors:
                        cursors[lang] = _Cursor(self.streams[lang].piece_stream(int(counts[lang])))
                    parts.append(cursors[lang].take(k))
                    counts[lang] += k
                # rows grouped by language -> the positions' order
                back = np.empty(n, dtype=np.int64)
                back[np.argsort(langs, kind="stable")] = np.arange(n)
                rows = {k: v[back] for k, v in stack_rows(parts).items()}
                yield to_batch(rows, self.pin_memory, self.unpad, self.doc_attention == "within")
                t += n
        finally:
            for cursor in cursors.values():
                cursor.close()


    # -- what the run records --------------------------------------------------------------
    def facts(self) -> dict:
        """Per language: folder, files, samples, share of the samples, sampling share per phase."""
        total = self.num_samples
        return {lang.code: {"input_dir": lang.input_dir, "train_files": len(lang.shards.train),
                            "train_samples": lang.num_samples,
                            "test_samples": sum(s.num_samples for s in lang.shards.test),
                            "sample_share": lang.num_samples / total,
                            "sampling_shares": [float(self.schedule.shares(p)[i])
                                                for p in range(len(self.schedule.phases))]}
                for i, lang in enumerate(self.languages)}
