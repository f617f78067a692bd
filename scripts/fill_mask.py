"""Fill-mask with an exported model, through Hugging Face transformers.

Usage:
    python scripts/fill_mask.py HF_DIR "Budapest Magyarország [MASK]." [MORE SENTENCES ...] [--top_k 5]

HF_DIR is what `python -m trainer.export` wrote, a BERT or a ModernBERT: it is loaded once with
transformers' AutoModelForMaskedLM (the masked-LM head only; a BERT export's NSP head is not
needed). Prints the top predictions for each [MASK] of each sentence. transformers' load
report and progress bars stay off (one line instead if weights are missing).
Needs torch and transformers, not the rest of the project.
"""
from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path


def quiet_transformers() -> None:
    """No LOAD REPORT table, no weight-loading or download bars: errors only."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


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


def fill_masks(model_dir: str | Path, texts: list[str],
               top_k: int = 5) -> list[list[list[tuple[str, float]]]]:
    """For each text, for each [MASK] in it, the top_k (token, probability) pairs."""
    import torch

    tokenizer, model = load(model_dir)
    for text in texts:
        if tokenizer.mask_token not in text:
            raise ValueError(f"{text!r} has no {tokenizer.mask_token}: put one where a word should "
                             "be guessed")
    accepted = inspect.signature(model.forward).parameters   # ModernBERT takes no token_type_ids
    out = []
    for text in texts:
        enc = {k: v for k, v in tokenizer(text, return_tensors="pt").items() if k in accepted}
        with torch.no_grad():
            logits = model(**enc).logits[0]
        results = []
        for pos in (enc["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist():
            top = logits[pos].float().softmax(-1).topk(min(top_k, logits.shape[-1]))
            results.append([(tokenizer.convert_ids_to_tokens(i), p)
                            for i, p in zip(top.indices.tolist(), top.values.tolist())])
        out.append(results)
    return out


def fill_mask(model_dir: str | Path, text: str, top_k: int = 5) -> list[list[tuple[str, float]]]:
    """The top_k (token, probability) pairs for each [MASK] in `text`."""
    return fill_masks(model_dir, [text], top_k)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("texts", nargs="+", metavar="text", help="sentences with [MASK] in them")
    parser.add_argument("--top_k", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        results = fill_masks(args.model_dir, args.texts, args.top_k)
    except (ValueError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    for text, masks in zip(args.texts, results):
        print(text)
        for n, candidates in enumerate(masks, 1):
            shown = ", ".join(f"{tok} ({p:.2f})" for tok, p in candidates)
            print(f"  [MASK] #{n}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
