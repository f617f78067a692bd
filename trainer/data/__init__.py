"""The training data room: the shards under --input_dir (shards.py), the sample order of an epoch
(order.py), the streaming loader (loader.py, with its threads in prefetch.py), masking at
training time (masking.py) and where a batch's real tokens are (unpadding.py)."""
from trainer.data.loader import ShardedTrainData, eval_batches, to_batch
from trainer.data.order import EpochOrder, Piece
from trainer.data.shards import DataError, ShardInfo, Shards, find_shards, inspect_shard, read_shard

__all__ = ["DataError", "EpochOrder", "Piece", "ShardInfo", "ShardedTrainData", "Shards",
           "eval_batches", "find_shards", "inspect_shard", "read_shard", "to_batch"]
