"""tensor.distributed: collectives over MPI (CPU processes, mpi4py with the mpich wheel) and
NCCL (GPUs, nccl4py), with PyTorch's names: init_process_group, get_rank, get_world_size,
new_group, barrier, all_reduce, broadcast, reduce, all_gather(_into_tensor),
reduce_scatter(_tensor), all_to_all(_single), gather, scatter, send / recv (isend / irecv), each
with async_op=True returning a Work handle, and batch_isend_irecv of P2POps; the object
collectives all_gather_object, broadcast_object_list, gather_object, scatter_object_list and
send_object_list / recv_object_list. No
transport of our own: the engines move the bytes.

    mpiexec -n 2 python train.py            # or: python -m tensor.distributed.run -n 2 train.py

>>> import tensor as T, tensor.distributed as dist     # doctest: +SKIP
>>> dist.init_process_group()                          # doctest: +SKIP
>>> x = T.ones(4) * (dist.get_rank() + 1)              # doctest: +SKIP
>>> dist.all_reduce(x); x.tolist()                     # doctest: +SKIP
[3.0, 3.0, 3.0, 3.0]

The differentiable collectives are tensor.distributed.nn.functional; DistributedDataParallel
and the tensor-parallel layers are in nn.parallel.
"""
from __future__ import annotations

from ._collectives import (
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    send,
)
from ._group import (
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_local_rank,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    new_group,
)
from ._more import (
    all_gather_object,
    broadcast_object_list,
    gather,
    get_global_rank,
    get_group_rank,
    scatter,
)
from ._p2p_objects import (
    P2POp,
    batch_isend_irecv,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from ._work import DistributedError, Work

__all__ = ["DistributedError", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
           "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single",
           "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list", "destroy_process_group",
           "gather", "gather_object", "get_backend", "get_global_rank", "get_group_rank", "get_local_rank",
           "get_rank", "get_world_size", "init_process_group", "irecv", "is_available", "is_initialized",
           "isend", "new_group", "recv", "recv_object_list", "reduce", "reduce_scatter",
           "reduce_scatter_tensor", "scatter", "scatter_object_list", "send", "send_object_list"]
