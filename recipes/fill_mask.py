"""Fill-mask with an exported model, through Hugging Face transformers.

Usage:
    python scripts/fill_mask.py HF_DIR "Bartók Béla magyar [[zeneszerző]], zongoraművész." [--top_k 5]
    python scripts/fill_mask.py HF_DIR "Budapest Magyarország [MASK]." [MORE SENTENCES ...]
    python scripts/fill_mask.py HF_DIR "..." --device cuda     # on the GPU (make pretrain: the run's)

HF_DIR is what `python -m trainer.export` wrote (any family, any tokenizer kind): it is loaded
once with transformers' AutoTokenizer and AutoModelForMaskedLM (the masked-LM head only). A word
in double brackets is hidden whole: it becomes as many [MASK] as it has pieces in that sentence,
and each mask's line ends with the rank of the piece that was there (of all the vocabulary's
tokens); a [MASK] written as such is one piece to guess. One line a mask, the same whoever prints
it (this script, `make demo`, `make pretrain`):

    Bartók Béla magyar [MASK], zongoraművész.
        [MASK] = zeneszerző (0.21), költő (0.08), ...   | 'zeneszerző' ranks 1 of 3008
    (several masks: [MASK] #1 = ..., [MASK] #2 = ...)

A tokenizer.json that cannot split words as its kind does (WordPiece on MeCab words: the
fast form of a ModernBERT export) is given the text split as the kind splits it
(vocab/kinds: `fast_text`). transformers' load report and progress bars stay off (one line
instead if weights are missing). Needs torch and transformers.
"""
from __future__ import annotations

import argparse
import inspect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer

HIDDEN = re.compile(r"\[\[(.+?)\]\]")   # [[word]]: the word to hide whole


@dataclass
class Mask:
    """One masked position: the best guesses, and the piece that was there (if the text said)."""

    top: list[tuple[str, float]]
    expected: str | None = None
    rank: int | None = None        # the expected piece's rank among all tokens, 1 = best


@dataclass
class Filled:
    text: str                      # as shown: the hidden word replaced by its masks
    masks: list[Mask] = field(default_factory=list)
    vocab_size: int = 0

    def lines(self) -> list[str]:
        """The text, then one line a mask (the module doc's format)."""
        out = [self.text]
        for n, m in enumerate(self.masks, 1):
            label = "[MASK]" if len(self.masks) == 1 else f"[MASK] #{n}"
            out.append(f"    {label} = " + ", ".join(f"{t} ({p:.2f})" for t, p in m.top)
                       + (f"   | '{m.expected}' ranks {m.rank} of {self.vocab_size}" if m.rank else ""))
        return out

    @property
    def ranks(self) -> str:
        """The hidden word's pieces' ranks ("3", "12+1"), "-" where the text hid none."""
        return "+".join(str(m.rank) for m in self.masks if m.rank) or "-"


def quiet_transformers() -> None:
    """No LOAD REPORT table, no weight-loading or download bars: errors only."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def torch_device(name: str):
    """--device as a torch.device ('cpu' or 'cuda'); ValueError (one Error line) for 'cuda'
    where no CUDA GPU is visible."""
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA GPU is visible here (use --device cpu)")
    return torch.device(name)


def load(model_dir: str | Path):
    """(tokenizer, masked-LM model) of an export, with one warning line if weights are missing."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    quiet_transformers()
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise ValueError(f"{model_dir} holds no exported model (no config.json): "
                         "run `python -m trainer.export` first")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model, info = AutoModelForMaskedLM.from_pretrained(str(model_dir), output_loading_info=True)
    model.eval()
    if info.get("missing_keys"):   # what the silenced report would have said, in one line
        missing = sorted(info["missing_keys"])
        print(f"warning: {model_dir} lacks {len(missing)} weights (e.g. {missing[0]}): they are "
              "untrained, so the predictions mean little", file=sys.stderr)
    return tokenizer, model


def text_preparer(model_dir: Path, tokenizer):
    """text -> the text the loaded tokenizer must be given for the kind's ids."""
    if not tokenizer.is_fast:   # a slow tokenizer (BertJapaneseTokenizer) splits words itself
        return lambda text: text
    try:
        return load_tokenizer(model_dir).fast_text
    except VocabError:          # a folder no kind reads: its tokenizer as it is
        return lambda text: text


def shown_token(tokenizer, token_id: int) -> str:
    """A piece as a reader knows it: decoded ("város", not byte-level BPE's "ĠvÃ¡ros"; "##e"
    stays, as WordPiece's decoder keeps a first piece's mark)."""
    return tokenizer.decode([token_id]).strip() or tokenizer.convert_ids_to_tokens(token_id)


def _ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text)["input_ids"]


def _pieces_at(tokenizer, text: str, start: int, end: int) -> tuple[list[int], list[int]] | None:
    """(ids of `text`, positions of the pieces that cover text[start:end]) from a fast
    tokenizer's offsets; None where there are none to read."""
    if not tokenizer.is_fast:
        return None
    enc = tokenizer(text, return_offsets_mapping=True)
    hit = [i for i, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < end and e > start]
    return (enc["input_ids"], list(range(hit[0], hit[-1] + 1))) if hit else None


def masked_ids(tokenizer, prepare, text: str) -> tuple[str, list[int], list[int], list[int] | None]:
    """(the text as shown, its ids with the masks in, the masks' positions, the hidden word's
    ids or None). A [[word]]'s pieces are the pieces of the sentence that cover its characters
    (the fast tokenizer's offsets), as whole-word masking hides them in training: without
    spaces (Thai) a [MASK] in the word's place would change how its neighbours split. Where the
    text is split before the tokenizer sees it (WordPiece on MeCab words) or there are no offsets,
    they are the ids where the sentence with the word and the one with a [MASK] in its place differ."""
    mask = tokenizer.mask_token
    m = HIDDEN.search(text)
    if m is None:
        ids = _ids(tokenizer, prepare(text))
        return text, ids, [i for i, t in enumerate(ids) if t == tokenizer.mask_token_id], None
    before, word, after = text[:m.start()], m.group(1), HIDDEN.sub(r"\1", text[m.end():])
    full = before + word + after
    found = _pieces_at(tokenizer, full, len(before), len(full) - len(after)) if prepare(full) == full else None
    if found is not None:
        whole, at = found
        ids = [tokenizer.mask_token_id if i in at else t for i, t in enumerate(whole)]
        return before + mask * len(at) + after, ids, at, [whole[i] for i in at]
    whole = _ids(tokenizer, prepare(full))
    single = _ids(tokenizer, prepare(before + mask + after))
    p = 0
    while p < min(len(whole), len(single)) and whole[p] == single[p]:
        p += 1
    s = 0
    while s < min(len(whole), len(single)) - p and whole[-1 - s] == single[-1 - s]:
        s += 1
    pieces = whole[p:len(whole) - s]
    ids = whole[:p] + [tokenizer.mask_token_id] * len(pieces) + whole[len(whole) - s:]
    return before + mask * len(pieces) + after, ids, list(range(p, p + len(pieces))), pieces


def fill_masks(model_dir: str | Path, texts: list[str], top_k: int = 5, device: str = "cpu") -> list[Filled]:
    """Each text filled (see the module doc): its masks' top_k guesses and, for a [[word]],
    the rank of each of its pieces; the model runs on `device`."""
    import torch

    where = torch_device(device)
    tokenizer, model = load(model_dir)
    model.to(where)
    for text in texts:
        if tokenizer.mask_token not in text and not HIDDEN.search(text):
            raise ValueError(f"{text!r} has no {tokenizer.mask_token} and no [[word]]: put one where "
                             "a word should be guessed")
    prepare = text_preparer(Path(model_dir), tokenizer)
    accepted = inspect.signature(model.forward).parameters   # ModernBERT takes no token_type_ids
    vocab_size = int(model.config.vocab_size)
    out = []
    for text in texts:
        shown, ids, positions, expected = masked_ids(tokenizer, prepare, text)
        enc = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
        if "token_type_ids" in accepted:
            enc["token_type_ids"] = torch.zeros(1, len(ids), dtype=torch.long)
        with torch.no_grad():
            logits = model(**{k: v.to(where) for k, v in enc.items()}).logits[0].cpu()
        filled = Filled(shown, vocab_size=vocab_size)
        for n, pos in enumerate(positions):
            probs = logits[pos].float().softmax(-1)
            top = probs.topk(min(top_k, probs.shape[-1]))
            mask = Mask([(shown_token(tokenizer, i), p) for i, p in zip(top.indices.tolist(), top.values.tolist())])
            if expected is not None:
                want = expected[n]
                mask.expected = shown_token(tokenizer, want)
                mask.rank = int((probs > probs[want]).sum()) + 1
            filled.masks.append(mask)
        out.append(filled)
    return out


def hide_words(lines, spec, segmenter: str | None = None, n: int = 3, min_words: int = 6,
               max_words: int = 40) -> list[str]:
    """n of `lines` (of min_words to max_words words) with one word each written [[word]]: the
    longest word of letters that is one piece of `spec` (a vocab/kinds tokenizer), else the
    longest word of letters. The words are the ones the tokenizer's kind counts (MeCab's for
    WordPiece on MeCab words; `segmenter`'s, the language's, for the others)."""
    segmenter = spec.word_segmenter(segmenter)
    out: list[str] = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        (_, words), = spec.word_pieces([line], segmenter)
        if not min_words <= len(words) <= max_words:
            continue
        spans, pos = [], 0
        for word, ids, *_ in words:
            at = line.find(word, pos)
            if at < 0:          # the kind normalised the word (NFKC): no place in the line
                break
            spans.append((at, at + len(word), len(ids)))
            pos = at + len(word)
        else:
            letters = [sp for sp in spans if line[sp[0]:sp[1]].isalpha()]
            if letters:
                a, b, _ = max(letters, key=lambda sp: (sp[2] == 1, sp[1] - sp[0]))
                out.append(f"{line[:a]}[[{line[a:b]}]]{line[b:]}")
        if len(out) >= n:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("texts", nargs="+", metavar="text",
                        help="sentences with a [[word]] to hide whole, or [MASK] in them")
    parser.add_argument("--top_k", type=int, default=5)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the model runs")
    args = parser.parse_args(argv)
    try:
        results = fill_masks(args.model_dir, args.texts, args.top_k, args.device)
    except (ValueError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for filled in results:
        print("\n".join(filled.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
