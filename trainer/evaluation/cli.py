"""Does a model read the long context? The context evaluation (trainer/evaluation/context.py) of an exported
model, a transformers folder or a wiki2bert run, on any HDF5 folder of long packed rows.

Usage:
    python -m trainer.evaluation --model HF_DIR_OR_RUN --input_dir HDF5_DIR [--max_rows 500]
        [--batch_tokens 16384] [--device cpu] [--json OUT.json]

HDF5_DIR is an `encode --pack --max-seq 2048` (or longer) output folder; its *test* files are
read (the first --max_rows rows). The masked tokens (their static masks) inside segments of at
least 1,024 tokens are scored three times: with the whole segment around them (up to the
model's length: the data's rows for a RoPE model such as ModernBERT, its learned table for BERT,
RoBERTa, DistilBERT), and with only the 512 and the 128 tokens of their window. The model runs
as the trainer runs it, attention within each row (trainer/models/), so a model trained on
128-token rows is scored on the long data as one trained to 2,048 is (bench_long_context.py).
It prints one line, e.g.

    context evaluation on 21,345 masked tokens in 61 held-out segments of 1,024+ tokens: accuracy
    0.2310 with the whole segment (up to 2,048 tokens), 0.2200 with 512 tokens around the mask,
    0.1900 with 128: context gain +0.0110

and with --json writes the figures (the keys train_log.jsonl uses). Bad input is one `Error:`
line and exit status 1 (a mistyped flag: exit status 2, with the flag meant).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from common.flags import HintingParser
from trainer.config.init_from import open_init_source
from trainer.data.shards import DataError, inspect_shard, is_test_file
from trainer.data.vocabulary import data_tokenizer, load_spec
from trainer.errors import TrainError
from trainer.evaluation.context import context_line, evaluate_context
from trainer.models import get_family
from trainer.models.loading import fit_weights
from trainer.runtime.distributed import DistEnv
from trainer.start.origin import source_weights


def load_model(path, device: str, seq_len: int):
    """(the model as the trainer builds it, with the weights of `path`; the long view's width:
    the data's rows where the family takes them (RoPE), else its learned table; the --init_from
    source; whether the model runs unpadded)."""
    source = open_init_source(path)
    family = get_family(source.model_type)
    config = family.read_config(source.config, source=f"--model {path}")
    try:
        config, _ = family.fit_positions(config, seq_len)
        width = seq_len
    except ValueError:   # a learned table shorter than the rows: the long view is its length
        width = family.max_positions(config)
    model = family.build(config, unpad=family.unpads, nsp=False)
    report = fit_weights(model, source_weights(source, model, family))
    if report.fresh:
        print(f"warning: --model {path} lacks {len(report.fresh)} of the model's tensors "
              f"({report.line()}): the figures mean little", file=sys.stderr)
    return model.to(torch.device(device)).eval(), width, source, family.unpads


def test_files(input_dir: Path):
    files = sorted(p for p in Path(input_dir).rglob("*.hdf5") if is_test_file(p))
    if not files:
        raise DataError(f"--input_dir {input_dir} holds no *test*.hdf5 files: give an `encode --pack` "
                        "output folder (its held-out rows are scored)")
    shards = [inspect_shard(p) for p in files]
    if not all(s.doc_starts for s in shards):
        raise DataError(f"--input_dir {input_dir}: its rows do not mark where documents start (no "
                        "doc_starts): encode them with `pipeline encode --pack` (layout 2)")
    return shards


def check_tokenizer(source, input_dir: Path, first_file) -> None:
    """One line when the data was encoded with another tokenizer than the model's."""
    data = data_tokenizer(input_dir, first_file)
    if data is None or source.tokenizer is None:
        return
    own = load_spec(source.tokenizer).fingerprint
    if own != data.fingerprint:
        raise ValueError(f"--input_dir {input_dir} was encoded with {data.where}, not with the tokenizer "
                         f"of --model {source.path} (fingerprints {data.fingerprint[:12]} and {own[:12]}): "
                         "encode the data with the model's tokenizer")


def run(model_dir, input_dir, max_rows: int = 500, batch_tokens: int = 16384, device: str = "cpu") -> dict:
    """The context evaluation's figures ({} when the rows hold no long segment)."""
    shards = test_files(input_dir)
    model, width, source, unpad = load_model(model_dir, device, shards[0].seq_len)
    check_tokenizer(source, Path(input_dir), shards[0].path)
    env = DistEnv(0, 1, 0, torch.device(device), None)
    return evaluate_context(model, shards, env, lambda module, batch: module(**batch), width, batch_tokens,
                            unpad=unpad, max_samples=max_rows)


def main(argv=None) -> int:
    p = HintingParser(prog="python -m trainer.evaluation", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="an exported folder, a transformers folder or a run")
    p.add_argument("--input_dir", required=True, type=Path, help="an encode --pack folder of long rows")
    p.add_argument("--max_rows", type=int, default=500, help="held-out rows read (default 500)")
    p.add_argument("--batch_tokens", type=int, default=16384, help="tokens a batch (default 16384)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    a = p.parse_args(argv)
    try:
        res = run(a.model, a.input_dir, a.max_rows, a.batch_tokens, a.device)
    except (ValueError, TrainError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(context_line(res))
    if a.json is not None:
        a.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
