"""The model's flags: its architecture and family, the weights and tokenizer it starts from, and
its positions (the four position flags: trainer/config/positions.py)."""
from __future__ import annotations

from trainer.config.positions import add_position_flags, check_position_flags
from trainer.models import describe, names


def add_flags(parser) -> None:
    g = parser.add_argument_group("model")
    g.add_argument("--model_config", "--bert_config", dest="model_config",
                   help="model JSON (vocab_size, hidden_size, ...), e.g. trainer/configs/bert_base.json "
                   "or, with --model_type modernbert, trainer/configs/modernbert_base.json; also a "
                   "transformers config.json (new weights of that architecture: the family from its "
                   "model_type unless --model_type says otherwise)")
    g.add_argument("--model_type", choices=names(), default="bert", help=describe())
    g.add_argument("--init_from", help="start from the weights and architecture of a transformers "
                   "folder (*ForMaskedLM, BertForPreTraining, a bare BertModel/XLMRobertaModel: its "
                   "missing head initialised) or of a wiki2bert run (output_dir or ckpt_* dir), with a "
                   "fresh optimizer and schedule (docs/training.md: Continued pretraining)")
    g.add_argument("--new_token_init", choices=("pieces", "random"), default="pieces",
                   help="with --init_from and another --vocab_file: a token the old vocabulary lacks "
                        "starts as the mean of its old pieces' rows (pieces) or at random (random, "
                        "the ablation); shared tokens keep their rows either way")
    g.add_argument("--vocab_file", help="the tokenizer the data was encoded with: vocab.txt (or its "
                   "folder) or a transformers tokenizer folder (tokenizer.json); copied into "
                   "output_dir. Default with --init_from: its own. With --init_from and another "
                   "tokenizer, the model's vocabulary is adapted to this one")
    add_position_flags(g)   # --max_position_embeddings, --global_rope_theta ... (config/positions.py)


def check(args) -> None:
    check_position_flags(args)   # values; N only beside --init_from
