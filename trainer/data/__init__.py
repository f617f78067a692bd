"""The training data room: the shards under --input_dir (shards.py), the sample order of an epoch
(order.py), the streaming loader (loader.py, with its threads in prefetch.py), several languages
mixed by an exponent (mixture.py), masking at training time (masking.py) and the batch's layout:
where its real tokens are, cut into rows or documents (unpadding.py)."""
from trainer.data.loader import ShardedTrainData, eval_batches, to_batch
from trainer.data.order import EpochOrder, Piece
from trainer.data.shards import DataError, ShardInfo, Shards, find_shards, inspect_shard, read_shard

__all__ = ["DataError", "EpochOrder", "Piece", "ShardInfo", "ShardedTrainData", "Shards",
           "eval_batches", "find_shards", "inspect_shard", "read_shard", "to_batch"]
