"""wiki2bert's data pipeline: a Wikipedia dump in any language to BERT pretraining data.

Stages (each a function and a `pipeline` subcommand, listed in order by
pipeline/core/registry.py): download, extract, format, split, filter, shard, vocab, encode;
`run` chains them. Layout: docs/architecture.md. The stages never import torch.
"""
