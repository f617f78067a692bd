"""Lean NVIDIA-style BERT pretraining on the pipeline's HDF5 shards."""
