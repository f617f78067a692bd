"""torch.distributed set-up from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK).

    env = init_distributed("cpu", force=False)   # gloo on CPU, nccl on CUDA
    ...; env.barrier(); mean = env.all_reduce_mean(tensor); env.shutdown()

A plain `python run_pretraining.py` is one process and needs no process group; DeepSpeed
does (else it goes looking for MPI), so `force=True` creates a one-rank group on a free port.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class DistEnv:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    backend: str | None  # None: no process group

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.backend is not None

    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    def all_reduce_sum(self, t: torch.Tensor) -> torch.Tensor:
        if self.active and self.world_size > 1:
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t

    def all_reduce_mean(self, t: torch.Tensor) -> torch.Tensor:
        return self.all_reduce_sum(t) / self.world_size

    def shutdown(self) -> None:
        if self.active and dist.is_initialized():
            dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resolve_device(name: str | None) -> str:
    if name is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda but no CUDA device is available: use --device cpu")
    return name


def init_distributed(device: str, force: bool = False) -> DistEnv:
    """Join torchrun's process group (gloo on CPU, nccl on CUDA); alone, make one if `force`."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device == "cuda":
        torch.cuda.set_device(local_rank)
        dev = torch.device("cuda", local_rank)
    else:
        dev = torch.device("cpu")
    backend = None
    if world_size > 1 or force:
        backend = "nccl" if device == "cuda" else "gloo"
        if world_size == 1:
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", str(_free_port()))
            os.environ.setdefault("RANK", "0")
            os.environ.setdefault("WORLD_SIZE", "1")
            os.environ.setdefault("LOCAL_RANK", "0")
        if not dist.is_initialized():
            dist.init_process_group(backend=backend, rank=rank, world_size=world_size,
                                    device_id=dev if device == "cuda" else None)
    return DistEnv(rank, world_size, local_rank, dev, backend)
