"""A new vocabulary on an existing model (--init_from OLD --vocab_file NEW): the rows of the
token-sized tensors (the word embeddings, an untied decoder, the decoder's bias: the family's
`vocab_rows`) for NEW's ids, made from OLD's rows.

    plan = plan_transfer(old_spec, new_spec)      # which old rows each new token starts from
    state = transfer_rows(state, family.vocab_rows, plan, seed=42)
    log.info(plan.summary())

- **Shared tokens keep their rows exactly** (bit for bit). Tokens are compared by their text and
  whether they start a word, across tokenizer styles: WordPiece `x` / `##x`, SentencePiece `▁x` /
  `x`, byte-level BPE `Ġx` / `x` (its byte alphabet decoded to the bytes they stand for).
  Special tokens are compared by role (cls, sep, pad, mask, unk: `[CLS]` takes `<s>`'s row),
  other special tokens ([unusedN], added control tokens) by their text.
- **Any other token starts as the mean of the old rows of its text's pieces** (the "fast
  vocabulary transfer" of Gee et al. 2022; the decomposition step of FOCUS and WECHSEL): the
  old vocabulary's pieces found longest first, as WordPiece finds them (the first piece a word
  start where the token starts a word, then pieces inside a word; SentencePiece's bare `▁` where
  no word-start piece fits), on the text as the old tokenizer normalises it (lower-cased, accents
  stripped, where it does). A character no old piece holds is skipped.
- **A token with no piece at all** (a special token without a counterpart, text of characters the
  old vocabulary lacks) starts random: N(0, σ), σ the old rows' standard deviation (a bias: the
  old biases' mean), from the run's seed.

The specs are the tokenization layer's (vocab/kinds): `tokens`, `is_special`, `role_ids()`, the
case setting, and `piece_key(token)`, which each kind answers for its own pieces: (the piece's
text as bytes, whether it starts a word).
"""
from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field

import torch

ROLES = ("cls", "sep", "pad", "mask", "unk")
MAX_PIECE_BYTES = 64


def _roles(spec) -> dict[int, str]:
    """id -> role of the spec's special tokens (a role it lacks is left out; the first role of
    ROLES wins an id two roles share)."""
    ids = spec.role_ids()
    out = {}
    for role in ROLES:
        if ids.get(role) is not None:
            out.setdefault(int(ids[role]), role)
    return out


def _normaliser(spec):
    lower, strip = spec.lower_case, spec.strip_accents

    def norm(text: bytes) -> bytes:
        if not (lower or strip):
            return text
        s = text.decode("utf-8", errors="surrogateescape")
        s = s.lower() if lower else s
        if strip:
            s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
        return s.encode("utf-8", errors="surrogateescape")
    return norm


@dataclass
class TransferPlan:
    new_size: int
    kept: list[tuple[int, int]] = field(default_factory=list)           # (new id, old id)
    pieces: list[tuple[int, list[int]]] = field(default_factory=list)   # (new id, old ids)
    unmatched: list[int] = field(default_factory=list)                  # new ids, random rows
    why: Counter = field(default_factory=Counter)                      # reason -> count

    def summary(self) -> str:
        reasons = "; ".join(f"{n} {r}" for r, n in self.why.most_common())
        rest = (f", {len(self.unmatched)} with no old piece, random ({reasons})" if self.unmatched
                else ", none without an old piece")
        return (f"new vocabulary of {self.new_size} tokens: {len(self.kept)} rows kept from the old "
                f"one, {len(self.pieces)} initialised as the mean of their old pieces{rest}")


def plan_transfer(old, new, pieces: bool = True) -> TransferPlan:
    """Which old rows each token of `new` starts from (see the module docstring); without
    `pieces` a token the old vocabulary lacks starts random (the ablation of the mean)."""
    old_roles = {role: i for i, role in _roles(old).items()}
    new_roles = _roles(new)
    table: dict[tuple[bytes, bool], int] = {}
    old_special: dict[str, int] = {}
    for i, t in enumerate(old.tokens):
        if not t:
            continue
        if old.is_special(t):
            old_special.setdefault(t, i)
        else:
            table.setdefault(old.piece_key(t), i)
    longest = min(MAX_PIECE_BYTES, max((len(k[0]) for k in table), default=1))
    norm = _normaliser(old)
    plan = TransferPlan(new_size=len(new.tokens))
    for j, t in enumerate(new.tokens):
        if j in new_roles or (t and new.is_special(t)):
            i = old_roles.get(new_roles[j]) if j in new_roles else old_special.get(t)
            if i is None:
                plan.unmatched.append(j)
                plan.why["special tokens without a counterpart"] += 1
            else:
                plan.kept.append((j, i))
            continue
        if not t:
            plan.unmatched.append(j)
            plan.why["ids without a token"] += 1
            continue
        key = new.piece_key(t)
        if key in table:
            plan.kept.append((j, table[key]))
            continue
        found = _pieces(norm(key[0]), key[1], table, longest) if pieces else []
        if found:
            plan.pieces.append((j, found))
        else:
            plan.unmatched.append(j)
            plan.why["no piece of the old vocabulary spells them" if pieces
                     else "--new_token_init random"] += 1
    return plan


def _pieces(text: bytes, starts: bool, table: dict, longest: int) -> list[int]:
    """The old ids that spell `text`, longest piece first (WordPiece's rule)."""
    out, i, first = [], 0, starts
    bare = table.get((b"", True))   # SentencePiece's lone "▁"
    while i < len(text):
        for j in range(min(len(text), i + longest), i, -1):
            found = table.get((text[i:j], first))
            if found is not None:
                out.append(found)
                i = j
                break
        else:
            if first and bare is not None:   # "▁" + the word's pieces, as SentencePiece spells it
                out.append(bare)
            else:   # no piece holds this character: skip it (to the next UTF-8 character)
                i += 1
                while i < len(text) and text[i] & 0xC0 == 0x80:
                    i += 1
        first = False
    return out


def transfer_rows(state: dict, names, plan: TransferPlan, seed: int) -> dict:
    """`state` with each of `names` it holds (tensors of one row per old token) remade for the
    new vocabulary by `plan`; tensors that are one (tied) stay one."""
    gen = torch.Generator().manual_seed(seed)
    done: dict = {}
    out = dict(state)
    for name in names:
        if name not in state:
            continue
        old = state[name]
        key = (old.data_ptr(), tuple(old.shape), old.dtype)
        if key not in done:
            done[key] = _new_rows(old, plan, gen)
        out[name] = done[key]
    return out


def _new_rows(old: torch.Tensor, plan: TransferPlan, gen: torch.Generator) -> torch.Tensor:
    rows = old.detach().float()
    flat = rows.reshape(rows.shape[0], -1)
    if plan.pieces:
        at = [(j, i, 1.0 / len(ps)) for j, ps in plan.pieces for i in ps]
        index = torch.tensor([[j for j, _, _ in at], [i for _, i, _ in at]], dtype=torch.long)
        weights = torch.tensor([w for _, _, w in at], dtype=torch.float32)
        mean = torch.sparse_coo_tensor(index, weights, (plan.new_size, flat.shape[0]),
                                       check_invariants=True).coalesce()
        new = torch.sparse.mm(mean, flat)
    else:
        new = torch.zeros(plan.new_size, flat.shape[1])
    if plan.unmatched:
        idx = torch.tensor(plan.unmatched, dtype=torch.long)
        if rows.dim() == 1:
            new[idx] = flat.mean()
        else:
            new[idx] = torch.randn(len(idx), flat.shape[1], generator=gen) * flat.std()
    if plan.kept:
        j, i = (torch.tensor(x, dtype=torch.long) for x in zip(*plan.kept))
        new[j] = flat[i]
    return new.reshape(plan.new_size, *rows.shape[1:]).to(old.dtype)
