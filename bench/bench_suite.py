"""A suite through `datasets` on the fixtures' sets: a small pretrained model against random init.

Usage:
    python bench/bench_suite.py [--seeds 1,2,3] [--steps 200] [--epochs 4] [--out DIR]

Builds the tests' three learnable tasks (tests/helpers/finetune_data.py) as datasets the way the
Hub lays them out (NER: a README card with ClassLabel features and Parquet under data/;
classification and SQuAD-shaped QA: save_to_disk folders), pretrains the tests' tiny BERT
(2 layers, hidden 32, whole-word vocab w0..w59) with masked-LM on 4,000 sentences drawn like
the tagging task's, then runs

    python -m trainer.finetune --model PRETRAINED --suite suite.json --baseline random-init ...

and prints the suite's table (suite.md): the same recipe, rows and seeds for the pretrained
model and its random init. Offline: HF_HOME points into the work folder. A few minutes of CPU.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def build_sets(root: Path) -> Path:
    """The three fixture tasks as datasets, and the suite file naming them."""
    from tests.helpers.finetune_data import write_classification_jsonl, write_squad
    from tests.helpers.hub_datasets import (
        CLASS_FEATURES,
        TAGGING_FEATURES,
        classification_splits,
        hub_folder,
        saved_folder,
        squad_splits,
        tagging_splits,
    )

    hub_folder(root / "ner", {"default": tagging_splits((300, 60, 60))}, TAGGING_FEATURES)
    cls = {s: write_classification_jsonl(root / f"{s}.jsonl", n, seed)
           for s, n, seed in (("train", 300, 1), ("validation", 80, 2), ("test", 80, 3))}
    saved_folder(root / "classify", classification_splits(cls), CLASS_FEATURES)
    qa = {s: write_squad(root / f"{s}.json", n, seed)
          for s, n, seed in (("train", 300, 1), ("validation", 60, 2), ("test", 60, 3))}
    saved_folder(root / "qa", squad_splits(qa))
    suite = root / "suite.json"
    suite.write_text(json.dumps({"name": "fixtures", "tasks": [
        {"name": "ner (hub layout)", "dataset": "ner"},
        {"name": "classify (save_to_disk)", "dataset": "classify", "text_column": "sentence"},
        {"name": "qa (save_to_disk)", "dataset": "qa"}]}))
    return suite


def pretrain(root: Path, steps: int) -> Path:
    """The tests' tiny BERT, masked-LM trained on sentences like the tagging task's."""
    import torch
    import transformers

    from tests.helpers.finetune_data import make_model_dir, tagged_sentences

    make_model_dir(root / "init")
    tok = transformers.AutoTokenizer.from_pretrained(root / "init" / "hf")
    model = transformers.AutoModelForMaskedLM.from_pretrained(root / "init" / "hf")
    texts = [" ".join(w for w, _ in s) for s in tagged_sentences(4000, 100)]
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    rng = random.Random(0)
    torch.manual_seed(0)
    model.train()
    for _ in range(steps):
        batch = tok(rng.sample(texts, 64), padding=True, return_tensors="pt")
        labels = batch["input_ids"].clone()
        special = labels < tok.convert_tokens_to_ids("w0")
        masked = (torch.rand(labels.shape) < 0.15) & ~special
        labels[~masked] = -100
        batch["input_ids"][masked] = tok.mask_token_id
        loss = model(**batch, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    out = root / "pretrained"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    print(f"pretrained {steps} steps, last MLM loss {loss.item():.3f}", flush=True)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--steps", type=int, default=200, help="masked-LM steps of the small model")
    p.add_argument("--epochs", default="4")
    p.add_argument("--learning_rate", default="2e-3")
    p.add_argument("--out", type=Path, default=None, help="keep the work here (default: a temp dir)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_suite_") as tmp:
        root = args.out or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, HF_HOME=str(root / "hf_home"), HF_DATASETS_OFFLINE="1",
                   HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
        os.environ.update(env)
        t0 = time.perf_counter()
        suite = build_sets(root)
        model = pretrain(root, args.steps)
        t1 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "trainer.finetune", "--model", str(model), "--suite",
                        str(suite), "--output_dir", str(root / "ft"), "--seeds", args.seeds,
                        "--baseline", "random-init", "--epochs", args.epochs, "--learning_rate",
                        args.learning_rate, "--device", "cpu", "--max_seq_length", "64",
                        "--doc_stride", "32"], check=True, env=env, cwd=ROOT,
                       stderr=subprocess.DEVNULL)
        print(f"\npretraining {t1 - t0:.0f} s, suite {time.perf_counter() - t1:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
