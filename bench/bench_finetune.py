"""Fine-tuning speed: trainer/finetune's loop against Hugging Face's `Trainer`, same model,
same rows, same settings.

Usage:
    python bench/bench_finetune.py [--conll data/uk/probe/train.conll] [--runs 3]
        [--layers 4] [--hidden 256] [--examples 2000] [--batch-size 32] [--epochs 1] [--threads 1]

Both train one copy of the same randomly initialised BERT (BertForTokenClassification, the
probe's task) on the same tokenised rows (words labelled by their first piece), with AdamW,
linear warmup and decay, the same batch size and epochs, dynamic padding (Trainer with
DataCollatorForTokenClassification), no evaluation, logging or saving during training. The
runs alternate (ours, Trainer, ours, ...) so that both meet the same machine; the table gives
the median examples/s of each and their ratio. Without --conll the rows come from a synthetic
tagging task. Needs `accelerate` for Trainer (`pip install accelerate`).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def make_model_folder(root: Path, layers: int, hidden: int, words: list[str]) -> Path:
    """A random BERT exported as a Hugging Face folder, its vocab built from `words`."""
    import transformers

    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(words))
    folder = root / "model"
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    config = transformers.BertConfig(vocab_size=len(tokens), hidden_size=hidden,
                                     num_hidden_layers=layers, num_attention_heads=max(1, hidden // 64),
                                     intermediate_size=4 * hidden, max_position_embeddings=512)
    transformers.BertForPreTraining(config).save_pretrained(folder)
    return folder


def load_rows(conll: Path | None, examples: int):
    from trainer.finetune.readers import TaggedSentence, read_tagging

    if conll is not None:
        sentences = read_tagging(conll)[:examples]
    else:
        sys.path.insert(0, str(ROOT))
        from tests.helpers.finetune_data import tagged_sentences
        sentences = [TaggedSentence([w for w, _ in s], [t for _, t in s], i + 1)
                     for i, s in enumerate(tagged_sentences(examples, 1, 8, 40))]
    return sentences


def run_ours(folder, rows, labels, args, pad_id) -> float:
    import torch

    from trainer.finetune.loop import LoopSettings, train
    from trainer.finetune.source import build_model

    torch.manual_seed(0)
    model = build_model(folder, "token", labels=labels, pretrained=False)
    stats = train(model, rows, LoopSettings(epochs=args.epochs, learning_rate=5e-5,
                                            batch_size=args.batch_size),
                  seed=1, device=torch.device("cpu"), pad_id=pad_id)
    return len(rows) * args.epochs / stats["seconds"]


def run_hf_trainer(folder, rows, labels, args, tokenizer, tmp: Path) -> float:
    import torch
    import transformers

    from trainer.finetune.source import build_model

    torch.manual_seed(0)
    model = build_model(folder, "token", labels=labels, pretrained=False)
    targs = transformers.TrainingArguments(
        output_dir=str(tmp / "hf_trainer"), per_device_train_batch_size=args.batch_size,
        num_train_epochs=args.epochs, learning_rate=5e-5, weight_decay=0.01, warmup_steps=0.1,
        lr_scheduler_type="linear", max_grad_norm=1.0, logging_strategy="no", save_strategy="no",
        eval_strategy="no", report_to=[], disable_tqdm=True, use_cpu=True, seed=1,
        dataloader_num_workers=0)
    collator = transformers.DataCollatorForTokenClassification(tokenizer)
    dataset = [{k: r[k] for k in ("input_ids", "token_type_ids", "labels")} for r in rows]
    trainer = transformers.Trainer(model=model, args=targs, train_dataset=dataset,
                                   data_collator=collator)
    start = time.perf_counter()
    trainer.train()
    return len(rows) * args.epochs / (time.perf_counter() - start)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--conll", type=Path, default=None, help="tagging data (default: synthetic)")
    p.add_argument("--examples", type=int, default=2000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (1: a busy shared machine slows both alike; with more, "
                        "OpenMP's spinning threads make a run 10x slower whenever another job runs)")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)

    from trainer.finetune.features import tagging_features
    from trainer.finetune.source import load_tokenizer, quiet_transformers

    quiet_transformers()
    sentences = load_rows(args.conll, args.examples)
    labels = sorted({t for s in sentences for t in s.tags})
    with tempfile.TemporaryDirectory(prefix="bench_finetune_") as tmp:
        tmp = Path(tmp)
        folder = make_model_folder(tmp, args.layers, args.hidden, [w for s in sentences for w in s.words])
        tokenizer = load_tokenizer(folder, 128)
        feats = tagging_features(tokenizer, sentences, {lab: i for i, lab in enumerate(labels)}, 128)
        ours, hf = [], []
        for i in range(args.runs):   # alternating who goes first: both meet the same machine
            first_ours = i % 2 == 0
            if first_ours:
                ours.append(run_ours(folder, feats.rows, labels, args, tokenizer.pad_token_id))
            hf.append(run_hf_trainer(folder, feats.rows, labels, args, tokenizer, tmp))
            if not first_ours:
                ours.append(run_ours(folder, feats.rows, labels, args, tokenizer.pad_token_id))
    mean_len = sum(len(r["input_ids"]) for r in feats.rows) / len(feats.rows)
    print(f"BERT {args.layers} layers, hidden {args.hidden}; {len(feats.rows)} rows, mean "
          f"{mean_len:.1f} pieces; batch {args.batch_size}, {args.epochs:g} epoch(s); "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads; {args.runs} runs each")
    print("| loop | examples/s (median) | runs |")
    print("|---|---|---|")
    print(f"| trainer/finetune | {statistics.median(ours):.1f} | {', '.join(f'{x:.1f}' for x in ours)} |")
    print(f"| HF Trainer | {statistics.median(hf):.1f} | {', '.join(f'{x:.1f}' for x in hf)} |")
    print(f"ours / Trainer: {statistics.median(ours) / statistics.median(hf):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
