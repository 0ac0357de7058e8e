"""Differentiable collectives (torch.distributed.nn.functional's names), out of place: each
returns new tensors and never writes its input, and is recorded on the autograd graph with
reverse- and forward-mode rules (autograd/rules_dist.py).

Two conventions, two families:

- all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_gather_tensor,
  reduce_scatter_tensor and all_to_all(_single) treat the program as one function of every
  rank's inputs whose loss is the SUM of the ranks' losses (PyTorch's torch.distributed.nn
  convention). Their adjoints: all_reduce(sum) <-> all_reduce(sum) of the cotangent,
  all_gather <-> reduce_scatter, broadcast <-> reduce (sum) to the root (zeros elsewhere),
  all_to_all <-> all_to_all back to the senders. Each jvp is the op on the tangent.
- Megatron's regions treat a replicated tensor as ONE value that every rank holds (the loss is
  computed identically on every rank, not summed): copy_to_parallel_region ("f": identity
  forward, all-reduce backward), reduce_from_parallel_region ("g": all-reduce forward, identity
  backward), gather_from_parallel_region (all-gather forward, own slice backward) and
  scatter_to_parallel_region (own slice forward, all-gather backward). The tensor-parallel
  layers (nn.parallel.tensor_parallel) are built on these.

The rules run collectives, so EVERY RANK MUST RUN THE SAME BACKWARD (and the same forward-mode
pass): the same graph of collectives, reached in the same order, with a gradient (or tangent)
on every rank where one rank has one. An output one rank leaves unused while another uses it
makes the used rank wait in a collective its peer never joins (the group's timeout then raises
a DistributedError). Only ReduceOp.SUM (and AVG, also linear) have derivatives; MIN, MAX and
PRODUCT raise NotImplementedError when differentiated.

>>> import tensor as T, tensor.distributed as dist                    # doctest: +SKIP
>>> from tensor.distributed.nn import functional as DF               # doctest: +SKIP
>>> x = T.ones(3, requires_grad=True)                                 # doctest: +SKIP
>>> y = DF.all_reduce(x * (dist.get_rank() + 1)); y.sum().backward()  # doctest: +SKIP
>>> x.grad.tolist()    # 2 ranks: d/dx of sum_r sum(y_r) = 2 (rank + 1)  # doctest: +SKIP
[2.0, 2.0, 2.0]
"""
from __future__ import annotations

import tensor as T
from tensor._hook import differentiable
from tensor._tensor import Tensor

from .. import _collectives as C
from .._collectives import ReduceOp
from .._group import resolve

_LINEAR = ("sum", "avg")


def _op(op, t: Tensor, what: str) -> str:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: tensor must be a Tensor, got {type(t).__name__}")
    return C._reduce_op(op, t, what)


def _dim(dim: int, ndim: int, what: str) -> int:
    if not -ndim <= dim < ndim:
        raise ValueError(f"{what}: dim {dim} is out of range for a {ndim}-d tensor")
    return dim % ndim


# ---------------------------------------------------------------- raw (unrecorded) forwards

def _all_reduce(tensor, op, group):
    out = T.clone(tensor)
    C.all_reduce(out, op, group)
    return out


def _all_gather(tensor, group):
    g = resolve(group, "all_gather")
    stack = T.empty((g.size(),) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    C.all_gather_into_tensor(stack, tensor, g)
    return tuple(stack[i] for i in range(g.size()))


def _reduce_scatter(output, input_list, op, group):
    out = T.empty(tuple(output.shape), dtype=output.dtype, device=output.device)
    C.reduce_scatter(out, list(input_list), op, group)
    return out


def _broadcast(tensor, src, group):
    out = T.clone(tensor)
    C.broadcast(out, src, group)
    return out


def _reduce(tensor, dst, op, group):
    g = resolve(group, "reduce")
    out = T.clone(tensor)
    C.reduce(out, dst, op, g)
    return out if g.ranks[g.rank()] == dst else T.zeros_like(tensor)


def _all_gather_tensor(tensor, dim, group):
    g = resolve(group, "all_gather_tensor")
    w = g.size()
    stack = T.empty((w,) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    C.all_gather_into_tensor(stack, tensor, g)
    shape = list(tensor.shape)
    shape[dim] *= w
    return T.clone(T.moveaxis(stack, 0, dim)).reshape(tuple(shape))


def _reduce_scatter_tensor(tensor, op, dim, group):
    g = resolve(group, "reduce_scatter_tensor")
    w = g.size()
    shape = tuple(tensor.shape)
    blocks = T.clone(T.moveaxis(tensor.reshape(shape[:dim] + (w, shape[dim] // w)
                                               + shape[dim + 1:]), dim, 0))
    out = T.empty(blocks.shape[1:], dtype=tensor.dtype, device=tensor.device)
    C.reduce_scatter_tensor(out, blocks, op, g)
    return out


def _all_to_all(input_list, shapes, group):
    outs = [T.empty(sh, dtype=input_list[0].dtype, device=input_list[0].device) for sh in shapes]
    C.all_to_all(outs, list(input_list), group)
    return tuple(outs)


def _all_to_all_single(tensor, rows, out_splits, in_splits, group):
    out = T.empty((rows,) + tuple(tensor.shape[1:]), dtype=tensor.dtype, device=tensor.device)
    C.all_to_all_single(out, tensor, out_splits, in_splits, group)
    return out


def _identity(tensor, group):
    return T.clone(tensor)


def _own_slice(tensor, dim, group):
    g = resolve(group, "scatter_to_parallel_region")
    k = tensor.shape[dim] // g.size()
    key = (slice(None),) * dim + (slice(g.rank() * k, (g.rank() + 1) * k),)
    return T.clone(tensor[key])


def _all_reduce_sum(tensor, group):
    return _all_reduce(tensor, "sum", group)


all_reduce_op = differentiable("dist_all_reduce", _all_reduce)
all_gather_op = differentiable("dist_all_gather", _all_gather)
reduce_scatter_op = differentiable("dist_reduce_scatter", _reduce_scatter)
broadcast_op = differentiable("dist_broadcast", _broadcast)
reduce_op = differentiable("dist_reduce", _reduce)
all_gather_tensor_op = differentiable("dist_all_gather_tensor", _all_gather_tensor)
reduce_scatter_tensor_op = differentiable("dist_reduce_scatter_tensor", _reduce_scatter_tensor)
all_to_all_op = differentiable("dist_all_to_all", _all_to_all)
all_to_all_single_op = differentiable("dist_all_to_all_single", _all_to_all_single)
copy_to_op = differentiable("dist_copy_to_parallel", _identity)
reduce_from_op = differentiable("dist_reduce_from_parallel", _all_reduce_sum)
gather_from_op = differentiable("dist_gather_from_parallel", _all_gather_tensor)
scatter_to_op = differentiable("dist_scatter_to_parallel", _own_slice)


# ---------------------------------------------------------------- public (sum-of-losses)

def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None) -> Tensor:
    """A new tensor: the reduction of tensor over the group's ranks (tensor is not written).
    Backward (SUM): all_reduce of the cotangent; forward mode: all_reduce of the tangent."""
    return all_reduce_op(tensor, _op(op, tensor, "all_reduce"), group)


def all_gather(tensor: Tensor, group=None) -> tuple:
    """A tuple of new tensors, one per group rank: element r is rank r's tensor. Backward:
    reduce_scatter of the cotangents (missing ones count as zeros)."""
    _op("sum", tensor, "all_gather")
    return all_gather_op(tensor, group)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None) -> Tensor:
    """A new tensor: the reduction over ranks of their input_list[r] (r = this group rank).
    output (PyTorch's argument) only gives the shape and dtype and is NOT written: use the
    returned tensor; pass None to take them from input_list[0]. Backward: all_gather."""
    what = "reduce_scatter"
    ins = list(input_list)
    if not ins or not all(isinstance(x, Tensor) for x in ins):
        raise TypeError(f"{what}: input_list must be a non-empty list of Tensors")
    output = ins[0] if output is None else output
    if not isinstance(output, Tensor):
        raise TypeError(f"{what}: output must be a Tensor or None, got {type(output).__name__}")
    return reduce_scatter_op(output.detach(), ins, _op(op, output, what), group)


def broadcast(tensor: Tensor, src: int, group=None) -> Tensor:
    """A new tensor holding global rank src's tensor, on every rank. Backward: the cotangents
    summed onto rank src (zero gradient on the other ranks)."""
    _op("sum", tensor, "broadcast")
    return broadcast_op(tensor, int(src), group)


def reduce(tensor: Tensor, dst: int, op=ReduceOp.SUM, group=None) -> Tensor:
    """A new tensor: the reduction on global rank dst, ZEROS on the other ranks (unlike
    PyTorch, which hands those their input back; zeros make it linear with broadcast as its
    adjoint). Backward: broadcast of dst's cotangent."""
    return reduce_op(tensor, int(dst), _op(op, tensor, "reduce"), group)


def all_gather_tensor(tensor: Tensor, dim: int = 0, group=None) -> Tensor:
    """The ranks' tensors concatenated along dim in rank order (one new tensor). Backward:
    reduce_scatter_tensor of the cotangent along dim."""
    _op("sum", tensor, "all_gather_tensor")
    return all_gather_tensor_op(tensor, _dim(dim, tensor.ndim, "all_gather_tensor"), group)


def reduce_scatter_tensor(tensor: Tensor, op=ReduceOp.SUM, dim: int = 0, group=None) -> Tensor:
    """This rank's block (rank order along dim) of the reduction over ranks. Backward:
    all_gather_tensor of the cotangent along dim."""
    what = "reduce_scatter_tensor"
    op = _op(op, tensor, what)
    dim = _dim(dim, tensor.ndim, what)
    w = resolve(group, what).size()
    if tensor.shape[dim] % w:
        raise ValueError(f"{what}: size {tensor.shape[dim]} of dim {dim} (shape {tensor.shape}) "
                         f"is not divisible by the world size {w}")
    return reduce_scatter_tensor_op(tensor, op, dim, group)


def all_to_all(output_tensor_list, input_tensor_list, group=None) -> tuple:
    """A tuple of new tensors: element r is rank r's input_tensor_list[this rank], shaped as
    output_tensor_list[r] (which only gives the shapes and is NOT written; None: the shapes of
    input_tensor_list). Backward: all_to_all of the cotangents back to their senders."""
    what = "all_to_all"
    ins = list(input_tensor_list)
    if not ins or not all(isinstance(x, Tensor) for x in ins):
        raise TypeError(f"{what}: input_tensor_list must be a non-empty list of Tensors")
    _op("sum", ins[0], what)
    like = ins if output_tensor_list is None else list(output_tensor_list)
    if not all(isinstance(o, Tensor) for o in like):
        raise TypeError(f"{what}: output_tensor_list must be a list of Tensors or None")
    return all_to_all_op(ins, tuple(tuple(o.shape) for o in like), group)


def all_to_all_single(output, input, output_split_sizes=None,  # noqa: A002 - PyTorch's name
                      input_split_sizes=None, group=None) -> Tensor:
    """A new tensor: the rows the ranks send here, in rank order (see
    tensor.distributed.all_to_all_single). output only gives the number of rows and is NOT
    written (None: sum(output_split_sizes), or input's rows). Backward: the same exchange with
    the split sizes swapped."""
    what = "all_to_all_single"
    _op("sum", input, what)
    if output is not None:
        rows = output.shape[0]
    elif output_split_sizes is not None:
        rows = sum(int(k) for k in output_split_sizes)
    else:
        rows = input.shape[0]
    osp = None if output_split_sizes is None else tuple(int(k) for k in output_split_sizes)
    isp = None if input_split_sizes is None else tuple(int(k) for k in input_split_sizes)
    return all_to_all_single_op(input, int(rows), osp, isp, group)


# ---------------------------------------------------------------- Megatron's regions

def copy_to_parallel_region(tensor: Tensor, group=None) -> Tensor:
    """Megatron's f: identity forward (a copy), all-reduce (sum) of the gradient backward. Put
    it where a replicated tensor enters rank-local (sharded) computation."""
    _op("sum", tensor, "copy_to_parallel_region")
    return copy_to_op(tensor, group)


def reduce_from_parallel_region(tensor: Tensor, group=None) -> Tensor:
    """Megatron's g: all-reduce (sum) forward, identity backward. Turns per-rank partial sums
    into the replicated total."""
    _op("sum", tensor, "reduce_from_parallel_region")
    return reduce_from_op(tensor, group)


def gather_from_parallel_region(tensor: Tensor, dim: int = -1, group=None) -> Tensor:
    """All-gather along dim forward (shards -> replicated), own slice of the gradient backward."""
    what = "gather_from_parallel_region"
    _op("sum", tensor, what)
    return gather_from_op(tensor, _dim(dim, tensor.ndim, what), group)


def scatter_to_parallel_region(tensor: Tensor, dim: int = -1, group=None) -> Tensor:
    """This rank's slice along dim forward (replicated -> shard), all-gather of the gradient
    backward."""
    what = "scatter_to_parallel_region"
    _op("sum", tensor, what)
    dim = _dim(dim, tensor.ndim, what)
    w = resolve(group, what).size()
    if tensor.shape[dim] % w:
        raise ValueError(f"{what}: size {tensor.shape[dim]} of dim {dim} (shape {tensor.shape}) "
                         f"is not divisible by the world size {w}")
    return scatter_to_op(tensor, dim, group)


__all__ = ["ReduceOp", "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
           "all_gather_tensor", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
           "copy_to_parallel_region",
           "reduce_from_parallel_region", "gather_from_parallel_region",
           "scatter_to_parallel_region"]
