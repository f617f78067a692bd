"""torch.distributed set-up from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK).

    env = init_distributed("cpu", force=False)   # gloo on CPU, nccl on CUDA
    ...; env.barrier(); mean = env.all_reduce_mean(tensor); env.shutdown()

A plain `python run_pretraining.py` is one process and needs no process group; DeepSpeed
does (else it goes looking for MPI), so `force=True` creates a one-rank group on a free port.

Under torchrun the ranks meet in the store that torchrun's agent keeps for the whole job
(TORCHELASTIC_USE_AGENT_STORE). That store outlives a restart (`--max-restarts`), and with it
the keys the last group's ranks wrote: a new group that read them connected to dead ranks and
hung for the store's timeout (pytorch/pytorch#135712). So every group first agrees on a fresh
key prefix (`_fresh_group_store`), whatever torchrun's restart counts say on each node.
"""
from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.constants import default_pg_timeout


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


GROUP_KEY = "wiki2bert/group"
HELLO_WAIT = timedelta(seconds=2)   # a rank that read an earlier group's key asks again after this


def _fresh_group_store(rank: int, world_size: int, timeout: timedelta):
    """A store for this group's process group alone, under a prefix no earlier group used.

    Rank 0 writes a new random name; every other rank reads the name, says hello under it with
    a token of its own process and waits to be welcomed by that token. Only a live rank 0 of
    this group welcomes, so a name left by an earlier group (its rank 0 is gone) times out and
    is read again: the ranks cannot settle on a stale name."""
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                          is_master=False, timeout=timeout)
    deadline = time.monotonic() + timeout.total_seconds()
    if rank == 0:
        name = uuid.uuid4().hex
        store.set(GROUP_KEY, name)
        hellos = [f"wiki2bert/{name}/hello{r}" for r in range(1, world_size)]
        store.wait(hellos, timeout)
        for key in hellos:
            store.set(f"wiki2bert/{name}/welcome/{store.get(key).decode()}", "1")
    else:
        token = uuid.uuid4().hex
        while True:
            store.wait([GROUP_KEY], timeout)
            name = store.get(GROUP_KEY).decode()
            store.set(f"wiki2bert/{name}/hello{rank}", token)
            try:
                store.wait([f"wiki2bert/{name}/welcome/{token}"], HELLO_WAIT)
                break
            except dist.DistStoreError:
                if time.monotonic() > deadline:
                    raise
    return dist.PrefixStore(f"wiki2bert/{name}/pg", store)


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
            store = None
            if world_size > 1 and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
                store = _fresh_group_store(rank, world_size, default_pg_timeout)
            dist.init_process_group(backend=backend, rank=rank, world_size=world_size, store=store,
                                    device_id=dev if device == "cuda" else None)
    return DistEnv(rank, world_size, local_rank, dev, backend)
