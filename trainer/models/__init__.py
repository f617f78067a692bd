"""The trainer's models by `--model_type`: `bert` (trainer/models/bert.py, NVIDIA's recipe) and
`modernbert` (trainer/models/modernbert.py: transformers' ModernBERT, masked LM only).

    config = load_model_config("modernbert", "trainer/configs/modernbert_tiny.json")
    model = build_model("modernbert", config, unpad=False, nsp=False)
    compile_model(model)                      # torch.compile each encoder layer in place

Both take the same batch and return trainer.models.bert.PretrainingOutput.
"""
from __future__ import annotations

MODEL_TYPES = ("bert", "modernbert")


def load_model_config(model_type: str, path):
    """The model JSON as the model type's config; ValueError naming the file and key."""
    if model_type == "modernbert":
        from trainer.models.modernbert import load_config
        return load_config(path)
    from trainer.models.bert import BertConfig
    return BertConfig.from_json_file(path)


def config_from_dict(model_type: str, d: dict, source: str):
    if model_type == "modernbert":
        from trainer.models.modernbert import config_from_dict as modern
        return modern(d, source=source)
    from trainer.models.bert import BertConfig
    return BertConfig.from_dict(d, source=source)


def build_model(model_type: str, config, unpad: bool = False, nsp: bool = True):
    if model_type == "modernbert":
        from trainer.models.modernbert import ModernBertForPreTraining
        return ModernBertForPreTraining(config)   # MLM only; no unpadding of its own
    from trainer.models.bert import BertForPreTraining
    return BertForPreTraining(config, unpad=unpad, nsp=nsp)


def compile_model(model) -> None:
    if hasattr(model, "compile_layers"):
        model.compile_layers()
    else:
        model.bert.encoder.compile_layers()


def config_dict(config) -> dict:
    """The config as JSON-able keys (checkpoint meta, bert_config.json of the run)."""
    d = config.to_dict()
    return {k: v for k, v in d.items() if not k.startswith("_")}


def check_recipe(args, train_files) -> bool:
    """The objective against the model type and the data; returns whether the data is packed.

    Packed rows (`pipeline encode --pack`, a folder whose name ends in `_packed`) hold no
    sentence pairs, so training them with NSP would learn from labels that are all 0.
    ModernBERT has no pooler or NSP head and no unpadding of its own (packed rows need none)."""
    from pipeline.encoding.hdf5_format import is_packed

    packed = any(is_packed(f) for f in train_files)
    if packed and not args.no_nsp:
        raise ValueError(f"--input_dir {args.input_dir} holds packed rows (encode --pack: no "
                         "sentence pairs, next-sentence labels all 0): add --no_nsp")
    if args.model_type == "modernbert":
        if not args.no_nsp:
            raise ValueError("--model_type modernbert trains masked LM only: add --no_nsp")
        args.unpad = False
    return packed
