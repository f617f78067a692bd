"""The BERT family (`--model_type bert`, the default): original post-LayerNorm BERT with the masked
LM and next-sentence heads, NVIDIA's recipe. The network is trainer/models/bert_network.py
(Hugging Face's parameter names); the export is transformers' `BertForPreTraining`, written
without importing transformers: config.json from the config, model.safetensors from the weights
(the decoder's weight and bias stored once: they are the word embeddings and
cls.predictions.bias; safetensors refuses shared tensors and transformers re-ties them on load).

A run started from a transformers folder without a next-sentence head (BertForMaskedLM, or a
bare BertModel such as mBERT's) exports as `BertForMaskedLM`: the same files without the pooler
and the NSP head, which such a run never trains; from a BertForPreTraining, as BertForPreTraining.
"""
from __future__ import annotations

import json
from pathlib import Path

from trainer.models.bert_network import BertConfig, BertForPreTraining
from trainer.models.family import CardText, ModelFamily, ModelFileError, save_safetensors, state_dict_mismatch

# Keys that alias another tensor in our (and HF's) state_dict; transformers ties them on load.
TIED_KEYS = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")
TIED_SOURCES = ("bert.embeddings.word_embeddings.weight", "cls.predictions.bias")
# The transformers classes a BERT exports as, and whether each has the next-sentence head.
PRETRAINING, MASKED_LM = "BertForPreTraining", "BertForMaskedLM"
EXPORTS = {PRETRAINING: True, MASKED_LM: False}
NSP_PARTS = ("bert.pooler.", "cls.seq_relationship.")   # what BertForMaskedLM leaves out

LOAD_NOTE = """
# fill-mask loads BertForMaskedLM, which leaves out the pooler and the NSP head: transformers'
# load report lists those 4 weights as UNEXPECTED, as it should
# (transformers.logging.set_verbosity_error() before loading hides the report)"""


class BertFamily(ModelFamily):
    name = "bert"
    display_name = "BERT"
    example_config = "trainer/configs/bert_base.json"
    has_nsp = True
    unpads = True
    named_in_objective = False   # the default: the objective line need not say it
    base_prefix = "bert"
    position_table = "bert.embeddings.position_embeddings.weight"
    vocab_rows = ("bert.embeddings.word_embeddings.weight", "cls.predictions.bias",
                  "cls.predictions.decoder.weight", "cls.predictions.decoder.bias")

    def read_config(self, d: dict, source: str):
        if isinstance(d, dict) and d.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{source}: position_embedding_type {d['position_embedding_type']!r}: "
                             "the BERT family has learned absolute positions only")
        return BertConfig.from_dict(d, source=source)

    def export_class(self, architecture: str | None) -> str | None:
        return PRETRAINING if architecture == PRETRAINING else MASKED_LM

    def exports_nsp(self, export_class: str | None) -> bool:
        return EXPORTS.get(export_class or PRETRAINING, False)

    def build(self, config, *, unpad: bool, nsp: bool):
        return BertForPreTraining(config, unpad=unpad, nsp=nsp)

    def compile(self, model) -> None:
        model.bert.encoder.compile_layers()

    def export(self, weights: dict, config, spec, folder: Path, export_class: str | None = None) -> int:
        cls = export_class or PRETRAINING
        if cls not in EXPORTS:
            raise ModelFileError(f"the BERT family exports as {' or '.join(EXPORTS)}, not {cls}")
        state = checked_weights(weights, config)
        if not EXPORTS[cls]:   # BertForMaskedLM: no pooler, no next-sentence head
            state = {k: v for k, v in state.items() if not k.startswith(NSP_PARTS)}
        save_safetensors(state, folder / "model.safetensors")
        (folder / "config.json").write_text(json.dumps(hf_config(config, spec.pad_id, cls), indent=2) + "\n",
                                            encoding="utf-8")
        return sum(v.numel() for v in state.values())

    def card(self, no_nsp: bool, export_class: str | None = None) -> CardText:
        cls = export_class or PRETRAINING
        if not EXPORTS.get(cls, True):
            return CardText("BERT", cls, "masked language model only", "")
        heads = ("masked language model only; the next-sentence head is present but untrained"
                 if no_nsp else "masked language model and next-sentence prediction")
        return CardText("BERT", cls, heads, LOAD_NOTE)


def checked_weights(weights: dict, config) -> dict:
    """The checkpoint's weights, checked against the config by loading them into our model,
    without the tied aliases and in fp32."""
    model = BertForPreTraining(config)
    problems = state_dict_mismatch(model.state_dict(), weights, tied=TIED_KEYS)
    if problems:
        raise ModelFileError(f"the weights do not fit the BERT config ({problems}): was the "
                             "checkpoint written with another model config?")
    sd = dict(weights)   # a state_dict saved without the tied aliases (as safetensors) still loads
    for alias, source in zip(TIED_KEYS, TIED_SOURCES):
        if alias not in sd and source in sd:
            sd[alias] = sd[source]
    model.load_state_dict(sd, strict=True)
    return {k: v.detach().float().contiguous() if v.is_floating_point() else v.contiguous()
            for k, v in model.state_dict().items() if k not in TIED_KEYS}


def hf_config(config, pad_token_id: int, architecture: str = "BertForPreTraining") -> dict:
    """transformers' config.json for `architecture`, written without importing transformers."""
    d = config.to_dict()
    d.update({
        "architectures": [architecture],
        "model_type": "bert",
        "pad_token_id": pad_token_id,
        "position_embedding_type": "absolute",
        "tie_word_embeddings": True,
        "classifier_dropout": None,
        "use_cache": True,
        "dtype": "float32",
    })
    return d


FAMILY = BertFamily()
