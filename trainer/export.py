"""Export a training checkpoint as a Hugging Face model folder.

    python -m trainer.export --checkpoint_dir OUTPUT_DIR --output HF_DIR [--vocab_file V]

--checkpoint_dir is either a run's output dir (the newest complete checkpoint under
OUTPUT_DIR/checkpoints/ckpt_* is taken; half-written .tmp_ckpt_* dirs are ignored) or one
ckpt_* dir (the vocab then comes from its run dir, two levels up). HF_DIR receives
config.json (transformers BertConfig, architectures ["BertForPreTraining"]; for a
--model_type modernbert run ModernBertConfig, ["ModernBertForMaskedLM"],
trainer/models/export_modernbert.py), model.safetensors,
vocab.txt, tokenizer_config.json with the vocab's case setting and a README.md model card
(trainer/model_card.py: language, dump, corpus, vocab, model size, steps, losses, how to load
it, the CC BY-SA attribution of Wikipedia's text), so that

    transformers.BertForPreTraining.from_pretrained(HF_DIR)
    transformers.BertTokenizerFast.from_pretrained(HF_DIR)

load it with no missing weights and the same outputs as our model. The decoder weight and
bias are stored once (they are the word embeddings and cls.predictions.bias; safetensors
refuses shared tensors and transformers re-ties them on load). Needs torch and safetensors,
not transformers.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# Keys that alias another tensor in our (and HF's) state_dict; transformers ties them on load.
TIED_KEYS = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")
TIED_SOURCES = ("bert.embeddings.word_embeddings.weight", "cls.predictions.bias")
# Prefixes wrappers add to parameter names (DDP, torch.compile).
WRAPPER_PREFIXES = ("module.", "_orig_mod.")


class ExportError(ValueError):
    """The checkpoint or vocab can't be exported; the message says why and what to do."""


def find_checkpoint(checkpoint_dir: str | os.PathLike) -> tuple[Path, Path | None]:
    """(the checkpoint dir to export, the run dir holding vocab.txt/bert_config.json or None)."""
    from trainer.checkpoint import TMP_PREFIX, is_complete, list_checkpoints

    d = Path(checkpoint_dir)
    if not d.is_dir():
        raise ExportError(f"{d} is not a directory: pass the training --output_dir or one of "
                          "its checkpoints/ckpt_* dirs")
    if is_complete(d):
        return d, d.parent.parent if d.parent.name == "checkpoints" else None
    if d.name.startswith(TMP_PREFIX):
        raise ExportError(f"{d} is a half-written checkpoint: pass a complete ckpt_* dir")
    ckpts = list_checkpoints(d)
    if not ckpts:
        raise ExportError(f"no complete checkpoint (checkpoints/ckpt_*/model.pt + meta.json) "
                          f"under {d}: train with --checkpoint_every first, or pass a ckpt_* dir")
    return ckpts[-1], d


def read_bert_config(ckpt: Path, run_dir: Path | None):
    from trainer.model import BertConfig

    meta_file = ckpt / "meta.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ExportError(f"{meta_file} is not valid JSON ({e}): the checkpoint is damaged") from None
    if isinstance(meta, dict) and isinstance(meta.get("bert_config"), dict):
        return BertConfig.from_dict(meta["bert_config"], source=f"{meta_file} (bert_config)")
    if run_dir is not None and (run_dir / "bert_config.json").is_file():
        return BertConfig.from_json_file(run_dir / "bert_config.json")
    raise ExportError(f"{meta_file} has no bert_config and there is no bert_config.json in the "
                      "run dir: the model shape is unknown")


def _model_type(ckpt: Path) -> str:
    try:
        return json.loads((ckpt / "meta.json").read_text(encoding="utf-8")).get("model_type", "bert")
    except (OSError, ValueError, AttributeError):
        return "bert"   # read_bert_config says what is wrong with meta.json


def _weights(ckpt: Path) -> dict:
    """model.pt's state_dict, without the prefixes wrappers add."""
    from trainer.checkpoint import CheckpointError, load_file

    try:  # tensors only (weights_only): a foreign file is refused, never run
        sd = load_file(ckpt / "model.pt")
    except CheckpointError as e:  # truncated or foreign: which file and why, in one line
        raise ExportError(str(e)) from None
    if isinstance(sd, dict) and isinstance(sd.get("model"), dict):
        sd = sd["model"]
    if not isinstance(sd, dict):
        raise ExportError(f"{ckpt / 'model.pt'} does not hold a state_dict")
    for prefix in WRAPPER_PREFIXES:
        if sd and all(k.startswith(prefix) for k in sd):
            sd = {k[len(prefix):]: v for k, v in sd.items()}
    return sd


def load_state_dict(ckpt: Path, config) -> dict:
    """model.pt's weights, checked against the config by loading them into our model."""
    from trainer.model import BertForPreTraining

    sd = _weights(ckpt)
    model = BertForPreTraining(config)
    problems = state_dict_mismatch(model.state_dict(), sd)
    if problems:
        raise ExportError(f"{ckpt / 'model.pt'} does not fit its bert_config ({problems}): "
                          "was the checkpoint written with another model config?")
    # A state_dict saved without the tied aliases (as safetensors files are) still loads.
    sd = dict(sd)
    for alias, source in zip(TIED_KEYS, TIED_SOURCES):
        if alias not in sd and source in sd:
            sd[alias] = sd[source]
    model.load_state_dict(sd, strict=True)
    return {k: v.detach().float().contiguous() if v.is_floating_point() else v.contiguous()
            for k, v in model.state_dict().items() if k not in TIED_KEYS}


def state_dict_mismatch(expected: dict, got: dict) -> str:
    """'' when `got` fits `expected`, else a short summary with one example of each problem."""
    missing = [k for k in expected if k not in got and k not in TIED_KEYS]
    unexpected = [k for k in got if k not in expected]
    shapes = [f"{k} {list(got[k].shape)} vs {list(v.shape)}" for k, v in expected.items()
              if k in got and hasattr(got[k], "shape") and got[k].shape != v.shape]
    parts = [f"{len(xs)} {what}, e.g. {xs[0]}" for xs, what in
             ((missing, "missing"), (unexpected, "unexpected"), (shapes, "of another shape"))
             if xs]
    return "; ".join(parts)


def hf_config(config, pad_token_id: int) -> dict:
    """transformers' config.json for BertForPreTraining, written without importing transformers."""
    d = config.to_dict()
    d.update({
        "architectures": ["BertForPreTraining"],
        "model_type": "bert",
        "pad_token_id": pad_token_id,
        "position_embedding_type": "absolute",
        "tie_word_embeddings": True,
        "classifier_dropout": None,
        "use_cache": True,
        "dtype": "float32",
    })
    return d


def export_bytes(weights: dict, vocab_file: Path) -> int:
    """What the export writes: the tensors (safetensors adds a small header), the vocab twice
    at most (vocab.txt, tokenizer.json), the config, tokenizer config and model card."""
    tensors = sum(v.numel() * v.element_size() + 256 for v in weights.values())
    return tensors + 2 * Path(vocab_file).stat().st_size + (256 << 10)


def _save_safetensors(state: dict, path: Path) -> None:
    from safetensors.torch import save_file

    from trainer.oserrors import as_os_error

    try:
        save_file(state, str(path), metadata={"format": "pt"})
    except Exception as exc:  # noqa: BLE001  safetensors' own error for a full disk
        fault = as_os_error(exc, path)
        if fault is exc:
            raise
        raise fault from None


def export(checkpoint_dir, output, vocab_file=None, where: str = "--output") -> Path:
    """Write HF_DIR from a checkpoint (see module docstring); returns the checkpoint used.
    Refused before writing when the disk of HF_DIR (`where` names the flag) is too small."""
    from trainer.model_card import model_card
    from trainer.oserrors import DiskSpaceError, check_free_space
    from vocab.spec import VocabError, load_vocab, tokenizer_config

    ckpt, run_dir = find_checkpoint(checkpoint_dir)
    if vocab_file is None:
        if run_dir is None or not (run_dir / "vocab.txt").is_file():
            raise ExportError(f"no vocab.txt in the run dir of {ckpt}: pass --vocab_file")
        vocab_file = run_dir / "vocab.txt"
    try:
        spec = load_vocab(vocab_file)
    except VocabError as e:
        raise ExportError(str(e)) from None
    modern = _model_type(ckpt) == "modernbert"
    if modern:   # needs transformers (BERT's export does not)
        from trainer.models import export_modernbert
    config = export_modernbert.read_config(ckpt, spec) if modern else read_bert_config(ckpt, run_dir)
    if spec.size > config.vocab_size:
        raise ExportError(f"{spec.vocab_file} has {spec.size} tokens but the model's vocab_size "
                          f"is {config.vocab_size}: pass the vocab the model was trained with")
    state = None if modern else load_state_dict(ckpt, config)
    weights = _weights(ckpt) if modern else state

    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        check_free_space(out.parent, export_bytes(weights, spec.vocab_file), "the exported model",
                         where=where)
    except DiskSpaceError as e:
        raise ExportError(str(e)) from None
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp_export_{out.name}_", dir=out.parent))
    try:
        if modern:   # transformers' own save_pretrained: config.json + model.safetensors
            n_params = export_modernbert.save(ckpt, config, tmp, weights)
        else:
            _save_safetensors(state, tmp / "model.safetensors")
            (tmp / "config.json").write_text(
                json.dumps(hf_config(config, spec.pad_id), indent=2) + "\n", encoding="utf-8")
            n_params = sum(v.numel() for v in state.values())
        shutil.copyfile(spec.vocab_file, tmp / "vocab.txt")
        tok_cfg = tokenizer_config(spec.lower_case, spec.strip_accents,
                                   model_max_length=config.max_position_embeddings,
                                   word_tokenizer=spec.word_tokenizer)   # MeCab words (ja)
        (tmp / "tokenizer_config.json").write_text(json.dumps(tok_cfg, indent=2) + "\n",
                                                   encoding="utf-8")
        if modern and spec.word_tokenizer is None:
            export_modernbert.write_tokenizer_json(tmp)
        (tmp / "README.md").write_text(model_card(run_dir, ckpt, config, spec, n_params),
                                       encoding="utf-8")
        # Files move in one by one with os.replace: readers see old or new files, never halves.
        out.mkdir(exist_ok=True)
        for f in tmp.iterdir():
            os.replace(f, out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ckpt


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trainer.export",
        description="Export a training checkpoint as a Hugging Face BertForPreTraining folder.")
    parser.add_argument("--checkpoint_dir", required=True,
                        help="training --output_dir (newest complete checkpoint) or one ckpt_* dir")
    parser.add_argument("--output", required=True, help="folder to write (created if needed)")
    parser.add_argument("--vocab_file", default=None,
                        help="vocab.txt or its folder (default: the run dir's vocab.txt)")
    args = parser.parse_args(argv)
    try:
        ckpt = export(args.checkpoint_dir, args.output, args.vocab_file)
    except ValueError as e:   # ExportError, VocabError, bad config, too small a disk: one line
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except OSError as e:      # a full or read-only disk, a permission: which file, what to do
        from trainer.oserrors import os_error_message

        reading = str(e.filename or "").startswith(str(Path(args.checkpoint_dir)))
        where = "--checkpoint_dir" if reading else "--output"
        print(f"Error: {os_error_message(e, where=where)}", file=sys.stderr)
        return 1
    print(f"exported {ckpt} -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
