"""Small learnable fine-tuning tasks and a tiny model to fine-tune, written by the tests.

The vocab holds whole words w0..w59, so every word is one piece. Tagging: entities start with
one of w0..w11 (B-ENT) and may go on with one of w50..w54 (I-ENT); the rest is O. Classification: a text is "pos" when
it holds more of w0..w29 than of w30..w59. QA: the answer is the one word of w50..w54 in the context.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import torch

from trainer.export import export
from trainer.models.bert_network import BertConfig, BertForPreTraining

WORDS = [f"w{i}" for i in range(60)]
ENTITY_WORDS = set(WORDS[:12])


def make_model_dir(root: Path, *, layers: int = 2, hidden: int = 32, seed: int = 0) -> Path:
    """A trainer run dir (one checkpoint) and its Hugging Face export; returns the run dir.
    The export is at root / "hf"."""
    run = root / "run"
    ckpt = run / "checkpoints" / "ckpt_00000010"
    ckpt.mkdir(parents=True)
    tokens = (["[PAD]"] + [f"[unused{i}]" for i in range(10)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
              + WORDS + [",", "."])
    (run / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    config = BertConfig(vocab_size=len(tokens), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=4, intermediate_size=2 * hidden,
                        max_position_embeddings=128)
    (run / "bert_config.json").write_text(json.dumps(config.to_dict()))
    torch.manual_seed(seed)
    torch.save(BertForPreTraining(config).state_dict(), ckpt / "model.pt")
    (ckpt / "meta.json").write_text(json.dumps({"step": 10, "phase": 1, "world_size": 1,
                                                "bert_config": config.to_dict(),
                                                "format_version": 1}))
    export(run, root / "hf")
    return run


def tagged_sentences(n: int, seed: int, min_len: int = 4, max_len: int = 12) -> list[list[tuple[str, str]]]:
    """Entities are a word of w0..w11 (B-ENT), sometimes followed by one of w50..w54 (I-ENT);
    every other word is O: the tags follow from the words, so a small model learns them fast."""
    rng = random.Random(seed)
    inside = WORDS[50:55]
    outside = [w for w in WORDS if w not in ENTITY_WORDS and w not in inside]
    out = []
    for _ in range(n):
        target = rng.randint(min_len, max_len)
        pairs: list[tuple[str, str]] = []
        while len(pairs) < target:
            if rng.random() < 0.25:
                pairs.append((rng.choice(sorted(ENTITY_WORDS)), "B-ENT"))
                if rng.random() < 0.4:
                    pairs.append((rng.choice(inside), "I-ENT"))
            else:
                pairs.append((rng.choice(outside), "O"))
        out.append(pairs)
    return out


def write_conll(path: Path, sentences, docstart: bool = True) -> Path:
    lines = ["-DOCSTART- O", ""] if docstart else []
    for s in sentences:
        lines += [f"{w} {t}" for w, t in s] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_classification_jsonl(path: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(n):
            words = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))]
            low = sum(int(w[1:]) < 30 for w in words)
            label = "pos" if low > len(words) - low else "neg"
            fh.write(json.dumps({"sentence": " ".join(words), "label": label}) + "\n")
    return path


def write_squad(path: Path, n: int, seed: int) -> Path:
    """Each context holds one of w50..w54 among other words: that word is the answer."""
    rng = random.Random(seed)
    others = WORDS[:50] + WORDS[55:]
    paragraphs = []
    for i in range(n):
        words = [rng.choice(others) for _ in range(rng.randint(6, 20))]
        pos = rng.randrange(len(words) + 1)
        answer = rng.choice(WORDS[50:55])
        words.insert(pos, answer)
        context = " ".join(words)
        start = len(" ".join(words[:pos])) + (1 if pos else 0)
        assert context[start:start + len(answer)] == answer
        paragraphs.append({"context": context, "qas": [{
            "id": f"q{i}", "question": "w59 ?",
            "answers": [{"text": answer, "answer_start": start}]}]})
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}),
                    encoding="utf-8")
    return path
