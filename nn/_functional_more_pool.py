"""Pooling-like functions of nn.functional, as PyTorch's: lp_pool1d/2d/3d,
local_response_norm, adaptive_max_pool3d, max_unpool1d/2d/3d and embedding_bag.

lp_pool is PyTorch's own composition (average pooling of x**p, times the window size, to the
power 1/p); local_response_norm sums each channel window of x**2 from shifted slices;
adaptive_max_pool3d gathers its windows with a static index table (as the 1-D and 2-D ones of
nn/_functional_layers.py); embedding_bag is a row gather and one segment reduction over the
bags (tensor.segment_sum / segment_max: sorted bag ids, deterministic). max_unpool scatters
into zeros and its gradient gathers at the same indices (PyTorch's rule, so an index that two
inputs share gives both the gradient).

>>> import tensor as T
>>> lp_pool1d(T.tensor([[[3.0, 4.0]]]), 2, 2).tolist()
[[[5.0]]]
>>> max_unpool1d(T.tensor([[[3.0, 2.0]]]), T.tensor([[[1, 2]]]), 2).tolist()
[[[0.0, 3.0, 2.0, 0.0]]]
"""
from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

import tensor as T
from autograd import Function, is_grad_enabled, no_grad
from tensor import Tensor

from ._functional import _float, _tensor, relu
from ._functional_layers import _empty_adaptive, _windows
from .conv import ntuple
from .embedding import (
    _inverse_frequency,
    _renorm_,
    _ScaleGrad,
    _SparseLookup,
    check_lookup,
    checked_ids,
)
from .pooling import MAX_NUMEL, _avg_pool, _max_pool, adaptive_size

# ---------------------------------------------------------------- lp pooling


def _lp_pool(input, nd, norm_type, kernel_size, stride, ceil_mode, op):
    _float(input, op)
    k = ntuple(kernel_size, nd, "kernel_size", op)
    if norm_type == 0:
        raise ValueError(f"{op}: norm_type must be a non-zero value, but got {norm_type}")
    if norm_type in (math.inf, -math.inf):     # PyTorch: the max (min) of |x| per window
        sign = 1.0 if norm_type > 0 else -1.0
        y = _max_pool(T.abs(input) * sign, nd, k, stride, 0, 1, ceil_mode, False, op)
        return y if sign > 0 else -y
    y = _avg_pool(T.power(input, norm_type), nd, k, stride, 0, ceil_mode, True, None, op)
    return T.power(T.sign(y) * relu(T.abs(y)) * math.prod(k), 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, L) or (C, L): (sum of x**p over each window)**(1/p).

    >>> import tensor as T
    >>> lp_pool1d(T.tensor([[1.0, 1.0, 2.0, 2.0]]), 1, 2).tolist()
    [[2.0, 4.0]]
    """
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode, "lp_pool1d")


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, H, W) or (C, H, W), as torch.nn.functional.lp_pool2d.

    >>> import tensor as T
    >>> lp_pool2d(T.full((1, 2, 2), 2.0), 2, 2).tolist()
    [[[4.0]]]
    """
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode, "lp_pool2d")


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W).

    >>> import tensor as T
    >>> lp_pool3d(T.ones((1, 2, 2, 2)), 1, 2).reshape(-1).tolist()
    [8.0]
    """
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode, "lp_pool3d")


# ---------------------------------------------------------------- local response norm


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x**2 over `size` neighbouring channels)**beta, the window of
    channel c spanning [c - size // 2, c + (size - 1) // 2] (zeros past the ends), for
    (N, C, *) input with at least 3 dims.

    >>> import tensor as T
    >>> local_response_norm(T.full((1, 2, 1), 2.0), 2, alpha=1.0, beta=1.0, k=0.0).tolist()
    [[[1.0], [0.5]]]
    """
    op = "local_response_norm"
    _float(input, op)
    if input.ndim < 3:
        raise ValueError(f"{op}: expected an input of 3 or more dims (N, C, *), got shape "
                         f"{tuple(input.shape)}")
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 1:
        raise ValueError(f"{op}: size must be a positive int, got {size!r}")
    size = int(size)
    if input.numel() == 0:
        return input
    c = input.shape[1]
    widths = [(0, 0)] * input.ndim
    widths[1] = (size // 2, (size - 1) // 2)
    sq = T.pad(input * input, tuple(widths))
    s = sq[:, 0:c]
    for i in range(1, size):
        s = s + sq[:, i:i + c]
    return input / T.power(s * (alpha / size) + k, beta)


# ---------------------------------------------------------------- adaptive max pooling 3-d


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed (OD, OH, OW) (None keeps that
    size), window i spanning [floor(i*n/o), ceil((i+1)*n/o)); return_indices: also the flat
    (d * H + h) * W + w positions of the maxima (the first maximum, as PyTorch's).

    >>> import tensor as T
    >>> adaptive_max_pool3d(T.arange(8.0).reshape(1, 2, 2, 2), (1, 1, 2)).tolist()
    [[[[6.0, 7.0]]]]
    """
    op = "adaptive_max_pool3d"
    _tensor(input, op)
    if input.ndim not in (4, 5):
        raise ValueError(f"{op}: expected 4-d or 5-d input, got shape {tuple(input.shape)}")
    x = input if input.ndim == 5 else input.reshape((1,) + tuple(input.shape))
    ins = tuple(x.shape[2:])
    size = adaptive_size(x, 3, output_size, op)
    if 0 in size:
        return _empty_adaptive(x, size, input.ndim == 4, return_indices)
    wins = [_windows(n, o) for n, o in zip(ins, size)]
    cells = [((np.asarray(wd)[:, None, None] * ins[1] + np.asarray(wh)[:, None]) * ins[2]
              + np.asarray(ww)).reshape(-1) for wd, wh, ww in itertools.product(*wins)]
    kk = max(len(cl) for cl in cells)
    table = np.stack([np.concatenate([cl, np.full(kk - len(cl), cl[0])]) for cl in cells])
    n, ch = x.shape[:2]
    flat = x.reshape(n, ch, -1)
    tab = T.asarray(table.astype(np.int64), device=x.device)
    with no_grad():
        vals = T.take(flat.detach(), tab.reshape(-1), axis=2).reshape(n, ch, len(cells), kk)
        best = T.argmax(vals, axis=3)
        base = T.asarray(np.arange(len(cells), dtype=np.int64) * kk, device=x.device)
        where = T.take(tab.reshape(-1), best + base, axis=0)
    y = T.take_along_axis(flat, where, axis=2)
    out = (n, ch) + size
    y, where = y.reshape(out), where.reshape(out)
    if input.ndim == 4:
        y, where = y[0], where[0]
    return (y, where) if return_indices else y


# ---------------------------------------------------------------- max unpooling


class _Unpool(Function):
    """out[..., idx[..., i]] = x[..., i] over zeros of the last dim `total`; the gradient of x
    is the output gradient gathered at idx (PyTorch's max_unpool rule)."""

    @staticmethod
    def forward(ctx, x, idx, total):
        ctx.save_for_backward(idx)
        ctx.total = total
        return _Unpool._scatter(x, idx, total)

    @staticmethod
    def _scatter(x, idx, total):
        out = T.zeros(tuple(x.shape[:-1]) + (total,), dtype=x.dtype, device=x.device)
        with no_grad():
            T.put_along_axis(out, idx, x.detach(), -1)
        return out

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return T.take_along_axis(g, idx, axis=-1), None, None

    @staticmethod
    def jvp(ctx, t, *_):   # the tangent unpooled as the values
        (idx,) = ctx.saved_tensors
        return _Unpool._scatter(t, idx, ctx.total)


def _unpool_size(x, k, s, p, output_size, op) -> tuple:
    nd = len(k)
    default = tuple((x.shape[-nd + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd))
    if output_size is None:
        size = default
    else:
        size = tuple(int(v) for v in output_size)
        if len(size) == nd + 2 or (len(size) == nd + 1 and x.ndim == nd + 1):
            size = size[len(size) - nd:]
        if len(size) != nd:
            raise ValueError(f"{op}: output_size should be a sequence of {nd} or {nd + 2} "
                             f"ints, got {tuple(output_size)}")
        for d in range(nd):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < size[d] < hi:
                raise ValueError(f"{op}: invalid output_size {size} (dim {d} must be between "
                                 f"{lo} and {hi}, exclusive)")
    if min(size) < 0:
        raise ValueError(f"{op}: output size {size} must be non-negative")
    return size


def _max_unpool(input, indices, nd, kernel_size, stride, padding, output_size, op):
    _tensor(input, op)
    _tensor(indices, op)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be an integer tensor, got {indices.dtype.name}")
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected {nd + 1}-d or {nd + 2}-d input, got shape "
                         f"{tuple(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise ValueError(f"{op}: indices shape {tuple(indices.shape)} != input shape "
                         f"{tuple(input.shape)}")
    k = ntuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None else ntuple(stride, nd, "stride", op)
    p = ntuple(padding, nd, "padding", op)
    if min(k + s) < 1 or min(p) < 0:
        raise ValueError(f"{op}: kernel_size {k} and stride {s} must be positive and padding "
                         f"{p} non-negative")
    size = _unpool_size(input, k, s, p, output_size, op)
    total, lead = math.prod(size), tuple(input.shape[:-nd])
    if math.prod(lead) * total > MAX_NUMEL:
        raise ValueError(f"{op}: output size {lead + size} is too large (more than "
                         f"2**{MAX_NUMEL.bit_length() - 1} elements)")
    idx = checked_ids(indices.reshape(lead + (-1,)).astype(T.int64), 0, total, lambda v, i: (
        f"{op}: indices hold the position {v}, out of range [0, {total}) for the output size "
        f"{size} (at position {i})"))
    y = _Unpool.apply(input.reshape(lead + (-1,)), idx, total)
    return y.reshape(lead + size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool1d: (N, C, L) or (C, L) values placed at the positions
    max_pool1d(..., return_indices=True) gave, zeros elsewhere; the output length is
    (L - 1) * stride - 2 * padding + kernel_size unless output_size says otherwise.

    >>> import tensor as T
    >>> max_unpool1d(T.tensor([[5.0]]), T.tensor([[1]]), 3).tolist()
    [[0.0, 5.0, 0.0]]
    """
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size,
                       "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool2d over (N, C, H, W) or (C, H, W) (flat h * W + w
    indices).

    >>> import tensor as T
    >>> max_unpool2d(T.tensor([[[5.0]]]), T.tensor([[[3]]]), 2).tolist()
    [[[0.0, 0.0], [0.0, 5.0]]]
    """
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size,
                       "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool3d over (N, C, D, H, W) or (C, D, H, W).

    >>> import tensor as T
    >>> max_unpool3d(T.tensor([[[[5.0]]]]), T.tensor([[[[7]]]]), 2).reshape(-1).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0]
    """
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size,
                       "max_unpool3d")


# ---------------------------------------------------------------- embedding bag

_BAG_MODES = ("sum", "mean", "max")


def _bags(input, offsets, include_last_offset, op) -> tuple:
    """(flat ids, bag id of each (sorted), number of bags, how many ids are used)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: offsets must be None for a 2-d input (each row is a bag), "
                             f"got offsets of shape {tuple(offsets.shape)}")
        b, length = input.shape
        seg = np.repeat(np.arange(b, dtype=np.int64), length)
        return input.reshape(-1), seg, b, b * length
    if input.ndim != 1:
        raise ValueError(f"{op}: input must be 1-d (with offsets) or 2-d (bags as rows), got "
                         f"shape {tuple(input.shape)}")
    if offsets is None:
        raise ValueError(f"{op}: a 1-d input needs offsets (the start of each bag)")
    _tensor(offsets, op)
    if offsets.ndim != 1 or offsets.dtype.kind not in "iu":
        raise ValueError(f"{op}: offsets must be a 1-d integer tensor, got shape "
                         f"{tuple(offsets.shape)} and dtype {offsets.dtype.name}")
    off = np.asarray(offsets.tolist(), dtype=np.int64)
    n = input.shape[0]
    if include_last_offset and off.size == 0:
        raise ValueError(f"{op}: include_last_offset needs at least one offset")
    if off.size and off[0] != 0:
        raise ValueError(f"{op}: offsets[0] has to be 0 (the first bag starts at position 0), "
                         f"got {off[0]}")
    if np.any(np.diff(off) < 0):
        raise ValueError(f"{op}: offsets must be non-decreasing, got {off.tolist()}")
    if off.size and off[-1] > n:
        raise ValueError(f"{op}: offsets[-1] {off[-1]} cannot be greater than the input's "
                         f"length {n}")
    if include_last_offset and off[-1] != n:
        # PyTorch documents offsets[-1] == len(input); otherwise its bags depend on the dtype
        # and mode (float64 sums run the last bag to the end, float32 ones stop at offsets[-1])
        raise ValueError(f"{op}: with include_last_offset, offsets[-1] ({off[-1]}) must equal "
                         f"the input's length {n}")
    used = n
    bags = off.size - 1 if include_last_offset else off.size
    seg = np.searchsorted(off, np.arange(used), side="right") - 1
    return (input if used == n else input[:used]), seg.astype(np.int64), bags, used


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embedding rows, without the (n, dim) intermediate a
    user would keep: bags are the rows of a 2-d input, or the runs of a 1-d input that start
    at `offsets` (include_last_offset: the last offset ends the last bag). per_sample_weights
    (mode 'sum') scales each row; ids equal to padding_idx are left out of their bag (an empty
    bag gives zeros); scale_grad_by_freq (modes 'sum' and 'mean') divides each row's gradient by
    how often its id occurs in the input; sparse=True makes a leaf weight's gradient a
    tensor.sparse.SparseCOO of the rows read (as Embedding's). Output (number of bags, dim).

    >>> import tensor as T
    >>> w = T.arange(6.0).reshape(3, 2)
    >>> embedding_bag(T.tensor([0, 2, 1]), w, T.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    op = "embedding_bag"
    if mode not in _BAG_MODES:
        raise ValueError(f"{op}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if scale_grad_by_freq and mode == "max":
        raise ValueError(f"{op}: mode='max' does not support scale_grad_by_freq (as PyTorch's)")
    _float(weight, op)
    input, padding_idx = check_lookup(weight, input, padding_idx, op)
    ids, seg, bags, used = _bags(input, offsets, include_last_offset, op)
    if per_sample_weights is not None:
        _tensor(per_sample_weights, op)
        if mode != "sum":
            raise ValueError(f"{op}: per_sample_weights is only supported for mode='sum', got "
                             f"mode={mode!r}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"{op}: per_sample_weights shape {tuple(per_sample_weights.shape)} "
                             f"!= input shape {tuple(input.shape)}")
        if per_sample_weights.dtype is not weight.dtype:
            raise TypeError(f"{op}: per_sample_weights is {per_sample_weights.dtype.name} but "
                            f"weight is {weight.dtype.name}")
    if max_norm is not None:
        _renorm_(weight, ids, max_norm, norm_type)
    if sparse and weight.requires_grad and weight.grad_fn is None and is_grad_enabled():
        # weight's gradient a SparseCOO of the looked-up rows, as Embedding(sparse=True)'s
        rows = _SparseLookup.apply(weight, ids.astype(T.int64), padding_idx)
    else:
        rows = T.take(weight, ids.astype(T.int64), axis=0)
    if scale_grad_by_freq and weight.requires_grad and is_grad_enabled():
        rows = _ScaleGrad.apply(rows, _inverse_frequency(ids, weight))
    if per_sample_weights is not None:
        rows = rows * T.expand_dims(per_sample_weights.reshape(-1)[:used], 1)
    seg = T.asarray(seg, device=weight.device)
    keep = None if padding_idx is None else T.expand_dims(ids != padding_idx, 1)
    if mode == "max":
        if keep is not None:
            rows = T.where(keep, rows, -math.inf)
        out = T.segment_max(rows, seg, bags)
        if keep is None:
            return out
        with no_grad():
            has = T.segment_sum(keep.astype(T.int64), seg, bags) > 0
        return T.where(has, out, 0.0)           # a bag of padding only gives zeros
    if keep is not None:
        rows = T.where(keep, rows, 0.0)
    out = T.segment_sum(rows, seg, bags)
    if mode == "sum":
        return out
    ones = T.ones((used, 1), dtype=weight.dtype, device=weight.device)
    cnt = T.segment_sum(ones if keep is None else keep.astype(weight.dtype), seg, bags)
    return out / T.maximum(cnt, 1.0)


__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "local_response_norm", "adaptive_max_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "embedding_bag"]
