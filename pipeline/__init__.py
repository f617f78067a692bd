"""wiki2bert's data pipeline: a Wikipedia dump in any language to BERT pretraining data.

Stages (each a function and a `pipeline` subcommand): download, extract, format, split,
filter, vocab, shard, encode; `run` chains them. The stages never import torch.
"""
