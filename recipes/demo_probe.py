"""The demo's last step: is the model any good on a task? Fine-tune it on the probe that
`pipeline probe` built from the dump's own links, beside the same model from random weights,
where the probe's test split is large enough to tell the two apart.

Used by recipes/demo.py (`--probe on` on the sample) and recipes/pretrain.py; by hand:
    python -m trainer.finetune --model data/demo/hf_model --probe data/demo/hu \
        --output_dir data/demo/probe --seeds 1,2,3 --baseline random-init --epochs 3 \
        --learning_rate 5e-4 --batch_size 32
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from pipeline.text.held_out import SMALL_TEST_SHARE

SEEDS = "1,2,3"
# bench_recipes.py's probe settings for a small ModernBERT: a larger step than a BERT-base
# recipe (5e-5); both variants get the same. There a 4 x 256 model pretrained 30 minutes beat
# its random init by 0.15 entity F1, more than 10 sd of the seeds (bench/README.md).
EPOCHS = 3
LEARNING_RATE = 5e-4
BATCH_SIZE = 32
# Below this many test sentences the probe cannot separate a pretrained model from a random
# one: the sample's 15 gave F1 sds of 0.02-0.06 and the sign of the gap flipped with the
# learning rate (bench/README.md). `pipeline probe` itself warns under 500.
MIN_TEST_SENTENCES = 500


def _summary(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("summary") or {}
    except (OSError, ValueError, AttributeError):
        return {}


def probe_needs(lang_dir: Path) -> str:
    """Where the probe's test split is under MIN_TEST_SENTENCES, what would give it that many, from
    this corpus's own counts (`pipeline shard` holds out up to SMALL_TEST_SHARE of a small corpus's
    documents for the probe: pipeline/stages/shard.py): 'a corpus of about 9,000 filtered
    sentences holds that many out (8x this one's 1,134)'."""
    shard, probe = _summary(lang_dir / "sharded" / "manifest.json"), _summary(lang_dir / "probe" / "manifest.json")
    held, sentences = shard.get("test_sentences", 0), shard.get("sentences", 0)
    usable = sum((probe.get("available") or {}).get(s, 0) for s in ("dev", "test"))
    if not held or not usable or not sentences:
        return "a larger dump holds that many out"
    needed = 2 * MIN_TEST_SENTENCES * held / usable / SMALL_TEST_SHARE   # dev and test, at this corpus's yield
    if needed <= sentences:   # enough text: its shards were made with less held out (before issue 60)
        return ("this corpus can hold that many out, its shards were made holding out less: redo them "
                "with the run's --force")
    return (f"a corpus of about {round(needed, -3):,.0f} filtered sentences holds that many out "
            f"({needed / sentences:.0f}x this one's {sentences:,})")


def probe_runs() -> int:
    """Fine-tuning runs of the probe: each seed, pretrained and from random init."""
    return 2 * len(SEEDS.split(","))


def probe_command(hf_dir: Path, lang_dir: Path, output_dir: Path) -> list:
    return [sys.executable, "-m", "trainer.finetune", "--model", hf_dir, "--probe", lang_dir,
            "--output_dir", output_dir, "--seeds", SEEDS, "--baseline", "random-init",
            "--epochs", EPOCHS, "--learning_rate", LEARNING_RATE, "--batch_size", BATCH_SIZE]


def probe_summary(results_file: Path) -> str:
    """'pretrained 0.61 ± 0.01 vs random init 0.42 ± 0.02 entity F1 (3 seeds, N test sentences)'."""
    r = json.loads(results_file.read_text(encoding="utf-8"))
    p, b = r["pretrained"], r["random_init"]
    gap = p["mean"] - b["mean"]
    spread = max(p["sd"], b["sd"])
    verdict = ("pretraining helped" if gap > 2 * spread else
               "pretraining hurt" if -gap > 2 * spread else "no clear difference")
    split = r["evaluated_on"]
    return (f"probe {r['metric']} on {r['data']['examples'][split]} {split} sentences, "
            f"{len(r['seeds'])} seeds: pretrained {p['mean']:.3f} ± {p['sd']:.3f}, random init "
            f"{b['mean']:.3f} ± {b['sd']:.3f} ({verdict})")
