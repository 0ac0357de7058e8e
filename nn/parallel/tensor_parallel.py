"""Tensor-parallel layers (Megatron-LM's splits) on the differentiable collectives of
tensor.distributed.nn.functional: a layer's weight is split across the ranks of a process group,
each rank computes its part, and the collectives (Megatron's f and g) join the parts so that
outputs AND gradients equal the unsplit layer's.

- ColumnParallelLinear: rank r holds rows [r*k, (r+1)*k) of the (out, in) weight (a slice of
  the output features) and of the bias. Input replicated -> f (identity forward, all-reduce of
  the input gradient backward) -> local linear -> output shard, or (gather_output=True) the
  full output gathered along the last dim.
- RowParallelLinear: rank r holds columns [r*k, (r+1)*k) of the weight (a slice of the input
  features). Input shard (input_is_parallel=True, e.g. a ColumnParallelLinear's output with
  gather_output=False) or replicated (split here) -> local linear -> g (all-reduce forward,
  identity backward) -> + bias (full, replicated, added once after the reduction).
- VocabParallelEmbedding: rank r holds vocabulary rows [r*k, (r+1)*k); ids outside them look
  up zeros, and an all-reduce (g) sums the ranks' partial lookups.

The MLP block `RowParallelLinear(h, d)(gelu(ColumnParallelLinear(d, h, gather_output=False)(x)))`
costs one all-reduce forward and one backward. Every rank of the group must run the same
forward and backward (the rules run collectives); inputs and replicated parameters are the same
on every rank. Parameters are float32 by default (dtype= to change).

Initialisation: each layer draws the FULL weight exactly as nn.Linear / nn.Embedding would
(same random stream) and keeps its shard, so with the same seed on every rank the shards form
the same full weight as the unsplit layer. To shard an existing layer, use
`ColumnParallelLinear.from_full(linear)` (likewise Row..., VocabParallelEmbedding.from_full).

>>> import tensor as T, tensor.distributed as dist                         # doctest: +SKIP
>>> from nn.parallel.tensor_parallel import ColumnParallelLinear           # doctest: +SKIP
>>> _ = T.manual_seed(0); col = ColumnParallelLinear(4, 8)                 # doctest: +SKIP
>>> col.weight.shape                                   # on 2 ranks                # doctest: +SKIP
(4, 4)
"""
from __future__ import annotations

import tensor as T
from autograd import no_grad
from tensor import Tensor
from tensor.distributed._group import resolve
from tensor.distributed.nn import functional as DF

from .. import _functional as F
from .. import init
from ..module import Module, Parameter


def _group_of(group, what: str):
    g = resolve(group, what)
    return g, g.size(), g.rank()


def _shard_size(n: int, world: int, what: str, name: str) -> int:
    if n <= 0 or n % world:
        raise ValueError(f"{what}: {name}={n} must be a positive multiple of the world size "
                         f"{world} (each rank holds {name} / world_size of it)")
    return n // world


def _input(x, n: int, what: str, which: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(x).__name__}")
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(f"{what}: expected input of shape (*, {n}) ({which}), got shape "
                         f"{tuple(x.shape)}")


def _full_linear_init(out_f: int, in_f: int, bias: bool, dtype, device):
    """(weight, bias) drawn as nn.Linear(in_f, out_f) draws them (same random stream)."""
    w = T.empty(out_f, in_f, dtype=dtype, device=device)
    b = T.empty(out_f, dtype=dtype, device=device) if bias else None
    with no_grad():
        init.default_layer_init_(w, b)
    return w, b


def _take(t: Tensor, key) -> Parameter:
    with no_grad():
        return Parameter(T.clone(t.detach()[key]))


class _Parallel(Module):
    def _setup(self, in_features, out_features, group, what):
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.process_group = group
        _, self.world_size, self.rank = _group_of(group, what)

    def _full(self, bias: bool, dtype, device, init: bool):
        """The full layer's (weight, bias): drawn as nn.Linear's, or zeros to be filled."""
        d = T.float32 if dtype is None else dtype
        if init:
            return _full_linear_init(self.out_features, self.in_features, bias, d, device)
        w = T.zeros((self.out_features, self.in_features), dtype=d, device=device)
        return w, (T.zeros((self.out_features,), dtype=d, device=device) if bias else None)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, rank={self.rank}/{self.world_size}")


class ColumnParallelLinear(_Parallel):
    """y = x @ W.T + b with W's output features split across the group: x (*, in) replicated
    -> (*, out) (gather_output=True) or (*, out / world) this rank's shard."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 gather_output: bool = True, process_group=None, device=None, dtype=None,
                 _init: bool = True) -> None:
        super().__init__()
        what = "ColumnParallelLinear"
        self._setup(in_features, out_features, process_group, what)
        self.gather_output = bool(gather_output)
        k = _shard_size(self.out_features, self.world_size, what, "out_features")
        w, b = self._full(bias, dtype, device, _init)
        rows = slice(self.rank * k, (self.rank + 1) * k)
        self.weight = _take(w, rows)
        if bias:
            self.bias = _take(b, rows)
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_full(cls, linear, gather_output: bool = True, process_group=None):
        """This rank's shard of an existing nn.Linear (same on every rank): copies."""
        m = cls(linear.in_features, linear.out_features, linear.bias is not None, gather_output,
                process_group, device=linear.weight.device, dtype=linear.weight.dtype,
                _init=False)
        k = m.weight.shape[0]
        rows = slice(m.rank * k, (m.rank + 1) * k)
        m.weight = _take(linear.weight, rows)
        if linear.bias is not None:
            m.bias = _take(linear.bias, rows)
        return m

    def forward(self, x: Tensor) -> Tensor:
        _input(x, self.in_features, "ColumnParallelLinear", "in_features, replicated")
        x = DF.copy_to_parallel_region(x, self.process_group)
        y = F.linear(x, self.weight, self.bias)
        if self.gather_output:
            y = DF.gather_from_parallel_region(y, -1, self.process_group)
        return y


class RowParallelLinear(_Parallel):
    """y = x @ W.T + b with W's input features split across the group: x (*, in / world) this
    rank's shard (input_is_parallel=True) or (*, in) replicated -> (*, out) replicated."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 input_is_parallel: bool = True, process_group=None, device=None, dtype=None,
                 _init: bool = True) -> None:
        super().__init__()
        what = "RowParallelLinear"
        self._setup(in_features, out_features, process_group, what)
        self.input_is_parallel = bool(input_is_parallel)
        k = _shard_size(self.in_features, self.world_size, what, "in_features")
        w, b = self._full(bias, dtype, device, _init)
        self.weight = _take(w, (slice(None), slice(self.rank * k, (self.rank + 1) * k)))
        if bias:
            self.bias = _take(b, slice(None))
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_full(cls, linear, input_is_parallel: bool = True, process_group=None):
        """This rank's shard of an existing nn.Linear (same on every rank): copies."""
        m = cls(linear.in_features, linear.out_features, linear.bias is not None,
                input_is_parallel, process_group, device=linear.weight.device,
                dtype=linear.weight.dtype, _init=False)
        k = m.weight.shape[1]
        m.weight = _take(linear.weight, (slice(None), slice(m.rank * k, (m.rank + 1) * k)))
        if linear.bias is not None:
            m.bias = _take(linear.bias, slice(None))
        return m

    def forward(self, x: Tensor) -> Tensor:
        what = "RowParallelLinear"
        if self.input_is_parallel:
            _input(x, self.weight.shape[1], what, "in_features / world_size, this rank's shard")
        else:
            _input(x, self.in_features, what, "in_features, replicated")
            x = DF.scatter_to_parallel_region(x, -1, self.process_group)
        y = DF.reduce_from_parallel_region(F.linear(x, self.weight), self.process_group)
        return y if self.bias is None else y + self.bias


class VocabParallelEmbedding(Module):
    """nn.Embedding with the vocabulary split across the group: rank r holds rows
    [r*k, (r+1)*k) of the (num_embeddings, embedding_dim) table. ids (any shape, replicated)
    -> ids.shape + (embedding_dim,) replicated. Init N(0, 1) as nn.Embedding's full table."""

    def __init__(self, num_embeddings: int, embedding_dim: int, process_group=None, device=None,
                 dtype=None, _init: bool = True) -> None:
        super().__init__()
        what = "VocabParallelEmbedding"
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.process_group = process_group
        _, self.world_size, self.rank = _group_of(process_group, what)
        k = _shard_size(self.num_embeddings, self.world_size, what, "num_embeddings")
        self.vocab_start, self.vocab_end = self.rank * k, (self.rank + 1) * k
        d = T.float32 if dtype is None else dtype
        w = T.empty((self.num_embeddings, self.embedding_dim), dtype=d, device=device)
        with no_grad():
            if _init:
                init.normal_(w)
        self.weight = _take(w, slice(self.vocab_start, self.vocab_end))

    @classmethod
    def from_full(cls, embedding, process_group=None):
        """This rank's shard of an existing nn.Embedding (same on every rank): copies."""
        w = embedding.weight
        m = cls(w.shape[0], w.shape[1], process_group, device=w.device, dtype=w.dtype,
                _init=False)
        m.weight = _take(w, slice(m.vocab_start, m.vocab_end))
        return m

    def forward(self, ids: Tensor) -> Tensor:
        what = "VocabParallelEmbedding"
        if not isinstance(ids, Tensor) or ids.dtype.kind not in "iu":
            got = ids.dtype.name if isinstance(ids, Tensor) else type(ids).__name__
            raise TypeError(f"{what}: expected an integer index tensor, got {got}")
        if ids.numel():
            a = ids.numpy()
            lo, hi = int(a.min()), int(a.max())
            if lo < 0 or hi >= self.num_embeddings:
                raise IndexError(f"{what}: index out of range: ids span [{lo}, {hi}] but the "
                                 f"vocabulary has {self.num_embeddings} rows")
        mine = (ids >= self.vocab_start) & (ids < self.vocab_end)
        local = T.where(mine, ids - self.vocab_start, 0)
        part = T.where(T.expand_dims(mine, -1), self.weight[local], 0.0)
        return DF.reduce_from_parallel_region(part, self.process_group)

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.embedding_dim}, vocab=[{self.vocab_start}, "
                f"{self.vocab_end}), rank={self.rank}/{self.world_size}")


__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding"]
