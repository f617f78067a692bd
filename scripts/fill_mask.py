"""Fill-mask with an exported model, through Hugging Face transformers.

Usage:
    python scripts/fill_mask.py HF_DIR "Budapest Magyarország [MASK]." [--top_k 5]

HF_DIR is what `python -m trainer.export` wrote. Prints the top predictions for each [MASK].
transformers' load report and progress bars stay off (one line instead if weights are missing).
Needs torch and transformers, not the rest of the project.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def quiet_transformers() -> None:
    """No LOAD REPORT table, no weight-loading or download bars: errors only."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def fill_mask(model_dir: str | Path, text: str, top_k: int = 5) -> list[list[tuple[str, float]]]:
    """The top_k (token, probability) pairs for each [MASK] in `text`."""
    import torch
    from transformers import AutoTokenizer, BertForPreTraining

    quiet_transformers()
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise ValueError(f"{model_dir} holds no exported model (no config.json): "
                         "run `python -m trainer.export` first")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    if tokenizer.mask_token not in text:
        raise ValueError(f"the text has no {tokenizer.mask_token}: put one where a word should be guessed")
    model, info = BertForPreTraining.from_pretrained(str(model_dir), output_loading_info=True)
    model.eval()
    if info.get("missing_keys"):   # what the silenced report would have said, in one line
        missing = sorted(info["missing_keys"])
        print(f"warning: {model_dir} lacks {len(missing)} weights (e.g. {missing[0]}): they are "
              "untrained, so the predictions mean little", file=sys.stderr)
    enc = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).prediction_logits[0]
    results = []
    for pos in (enc["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist():
        probs = logits[pos].float().softmax(-1)
        top = probs.topk(top_k)
        results.append([(tokenizer.convert_ids_to_tokens(i), p)
                        for i, p in zip(top.indices.tolist(), top.values.tolist())])
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("text")
    parser.add_argument("--top_k", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        results = fill_mask(args.model_dir, args.text, args.top_k)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(args.text)
    for n, candidates in enumerate(results, 1):
        shown = ", ".join(f"{tok} ({p:.2f})" for tok, p in candidates)
        print(f"  [MASK] #{n}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
