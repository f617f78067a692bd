"""Export a training checkpoint as a Hugging Face model folder.

Usage:
    python -m trainer.export --checkpoint_dir OUTPUT_DIR --output HF_DIR [--vocab_file V] \
        [--evaluation FINETUNE_OUTPUT_DIR]

The folder holds transformers' own class of the run's model family (BertForPreTraining,
ModernBertForMaskedLM, ...), its tokenizer files and a model card (trainer/export/hf.py), so that

    transformers.AutoModelForMaskedLM.from_pretrained(HF_DIR)
    transformers.AutoTokenizer.from_pretrained(HF_DIR)

load it with the trainer's outputs. The card's Evaluation section shows the fine-tuning results
of `python -m trainer.finetune` (a suite's table; --evaluation, else OUTPUT_DIR/downstream/).
Bad input is one `Error:` line and exit status 1.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.os_errors import os_error_message
from trainer.export.hf import export


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trainer.export",
        description="Export a training checkpoint as a Hugging Face model folder (transformers' "
                    "own class of the run's model family).")
    parser.add_argument("--checkpoint_dir", required=True,
                        help="training --output_dir (newest complete checkpoint) or one ckpt_* dir")
    parser.add_argument("--output", required=True, help="folder to write (created if needed)")
    parser.add_argument("--vocab_file", default=None,
                        help="vocab.txt or its folder (default: the run dir's vocab.txt)")
    parser.add_argument("--evaluation", default=None,
                        help="fine-tuning results for the card's Evaluation section: python -m "
                             "trainer.finetune's --output_dir, its suite.json or a results.json "
                             "(default: the run dir's downstream/ results, if any)")
    args = parser.parse_args(argv)
    try:
        ckpt = export(args.checkpoint_dir, args.output, args.vocab_file,
                      evaluation=args.evaluation)
    except ValueError as e:   # ExportError, VocabError, bad config, too small a disk: one line
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except OSError as e:      # a full or read-only disk, a permission: which file, what to do

        reading = str(e.filename or "").startswith(str(Path(args.checkpoint_dir)))
        where = "--checkpoint_dir" if reading else "--output"
        print(f"Error: {os_error_message(e, where=where)}", file=sys.stderr)
        return 1
    print(f"exported {ckpt} -> {args.output}")
    return 0
