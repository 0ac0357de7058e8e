"""Parallel training: DistributedDataParallel (data parallelism) and the tensor-parallel layers
(Megatron-style ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding), on
tensor.distributed."""
from __future__ import annotations

from .distributed import DistributedDataParallel
from .tensor_parallel import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding

__all__ = ["ColumnParallelLinear", "DistributedDataParallel", "RowParallelLinear",
           "VocabParallelEmbedding"]
