"""NumPy's array construction and manipulation functions not covered elsewhere (diag, trace,
cross, insert, delete, block, vander, gradient, unwrap, ...), built from the public (recorded)
ops, so autograd records every step and they need no derivative rule of their own (public.py's
COMPOSITE). The windows, log ranges, histograms and convolutions are in
tensor/array_extra2.py, which shares this module's registries.

NumPy 2's names, signatures and dtypes; where PyTorch has a function of the same name, its
keyword spellings are accepted too (each docstring says which positional order it follows).
Index arguments (insert's and delete's obj, block's nesting) are read on the host.

>>> import tensor as T
>>> T.diag(T.tensor([1, 2])).tolist()
[[1, 0], [0, 2]]
>>> T.insert(T.tensor([1, 2, 3]), 1, 9).tolist()
[1, 9, 2, 3]
>>> T.block([[T.ones((1, 1)), T.zeros((1, 2))]]).tolist()
[[1.0, 0.0, 0.0]]
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor
from .array_extra2 import (  # noqa: F401  (public.py publishes them)
    COMPOSITES,
    NOT_METHODS,
    _same_device,
    arg,
    dev_of,
    pub,
)
from .axes import AxisError, norm_axis, norm_axis_tuple
from .convert import asarray
from .creation import arange, ones, zeros
from .numpy_extra2 import as_int, cast, host, is_scalar
from .optable import T as P  # tensor's public (recorded) functions
from .reductions import axis_arg


def _along(axis: int, s) -> tuple:
    return (slice(None),) * axis + (s,)


# ---------------------------------------------------------------- diagonals

@pub(method=True)
def diag(v, k: int = 0, *, diagonal=None) -> Tensor:
    """A 1-d v as the k-th diagonal of a square matrix (zeros elsewhere), or a 2-d v's k-th
    diagonal as a new 1-d tensor (a copy, as PyTorch's; NumPy's is a read-only view), as
    NumPy's and PyTorch's diag (same positional order; diagonal= is PyTorch's k).

    >>> import tensor as T
    >>> T.diag(T.tensor([[1, 2], [3, 4]]), 1).tolist()
    [2]
    """
    op = "diag"
    if diagonal is not None:
        k = diagonal
    k = as_int(k, "k", op)
    v = arg(v, op)
    if v.ndim == 1:
        return P.diag_embed(v, k)
    if v.ndim == 2:
        return P.copy(P.diagonal(v, k))
    raise ValueError(f"{op}: input must be 1-d or 2-d, got shape {v.shape}")


@pub(method=True)
def diagflat(v, k: int = 0, *, offset=None) -> Tensor:
    """The flattened v as the k-th diagonal of a square matrix, as NumPy's and PyTorch's
    diagflat (same positional order; offset= is PyTorch's k)."""
    if offset is not None:
        k = offset
    return P.diag_embed(P.reshape(arg(v, "diagflat"), (-1,)), as_int(k, "k", "diagflat"))


@pub(method=True)
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tensor:
    """The sum along the offset-th diagonal of the axis1, axis2 planes, as NumPy's trace (a
    tensor of the other axes; sum's dtype rule: integers and bool add up in int64); PyTorch's
    trace(input) is the 2-d case.

    >>> import tensor as T
    >>> T.trace(T.tensor([[1, 2], [3, 4]])).item()
    5
    """
    op = "trace"
    a = arg(a, op)
    if a.ndim < 2:
        raise ValueError(f"{op}: needs a tensor of rank >= 2, got shape {a.shape}")
    a1, a2 = norm_axis(axis1, a.ndim, op), norm_axis(axis2, a.ndim, op)
    if a1 == a2:
        raise ValueError(f"{op}: axis1 and axis2 must differ, both are {a1}")
    return P.sum(P.diagonal(a, as_int(offset, "offset", op), a1, a2), axis=-1,
                 dtype=None if dtype is None else dt.dtype(dtype))


# ---------------------------------------------------------------- products and ranges

@pub(method=True)
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None, *, dim=None):
    """The cross product of the 3-vectors (or 2-vectors) along axisa of a and axisb of b, the
    other axes broadcast, put along axisc of the result, as NumPy's cross (its positional
    order; axis sets all three). PyTorch's cross(input, other, dim=...) works too, but without
    dim the vectors are along the last axis (NumPy's rule), not the first axis of length 3.
    Two 2-vectors give the z component alone (a scalar per pair). Differentiable.

    >>> import tensor as T
    >>> T.cross(T.tensor([1.0, 0.0, 0.0]), T.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    op = "cross"
    axis = axis_arg(axis, dim, op)
    if axis is not None:
        axisa = axisb = axisc = axis
    dev = dev_of(a, b)
    a, b = arg(a, op, dev), arg(b, op, dev)
    _same_device(op, a, b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError(f"{op}: both inputs need at least one dimension, got shapes {a.shape} "
                         f"and {b.shape}")
    a = P.moveaxis(a, norm_axis(axisa, a.ndim, op), -1)
    b = P.moveaxis(b, norm_axis(axisb, b.ndim, op), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"{op}: incompatible dimensions for cross product: vectors of length "
                         f"{na} and {nb} (each must be 2 or 3)")
    d = dt.result_type(a, b)
    if d is dt.bool_:
        raise TypeError(f"{op}: not supported for bool tensors")
    a, b = cast(a, d), cast(b, d)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = P.subtract(P.multiply(a0, b1), P.multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    if na == 3 and nb == 3:
        a2, b2 = a[..., 2], b[..., 2]
        x = P.subtract(P.multiply(a1, b2), P.multiply(a2, b1))
        y = P.subtract(P.multiply(a2, b0), P.multiply(a0, b2))
    elif na == 2:
        b2 = b[..., 2]
        x, y = P.multiply(a1, b2), P.negative(P.multiply(a0, b2))
    else:
        a2 = a[..., 2]
        x, y = P.negative(P.multiply(a2, b1)), P.multiply(a2, b0)
    x, y, z = P.broadcast_arrays(x, y, z)
    return P.stack([x, y, z], axis=norm_axis(axisc, z.ndim + 1, op))


@pub()
def ptp(a, axis=None, keepdims: bool = False) -> Tensor:
    """max - min along axis (all axes by default), in a's dtype (integers wrap, as NumPy's
    ptp). Differentiable where max and min are.

    >>> import tensor as T
    >>> T.ptp(T.tensor([[1, 5], [2, 9]]), axis=1).tolist()
    [4, 7]
    """
    a = arg(a, "ptp")
    if a.dtype is dt.bool_:
        raise TypeError("ptp: not supported for bool tensors (max - min is a subtraction)")
    if a.dtype.kind == "c":
        raise TypeError(f"ptp: complex input ({a.dtype}) has no order")
    axes = tuple(range(a.ndim)) if axis is None else norm_axis_tuple(axis, a.ndim, "ptp")
    if any(a.shape[i] == 0 for i in axes):
        raise ValueError(f"ptp: zero-size reduction over axes {axes} of shape {a.shape} has no "
                         "identity")
    return P.subtract(P.max(a, axis=axis, keepdims=keepdims), P.min(a, axis=axis, keepdims=keepdims))


# ---------------------------------------------------------------- inserting and deleting

def _flat_or_axis(arr, axis, op: str) -> tuple:
    """arr and its axis: the flattened arr and 0 when axis is None (NumPy's rule)."""
    arr = arg(arr, op)
    if axis is None:
        return P.reshape(arr, (-1,)), 0
    if arr.ndim == 0:
        raise AxisError(f"{op}: axis {axis} is out of bounds for a 0-d tensor")   # NumPy's
    return arr, norm_axis(axis, arr.ndim, op)


@pub()
def append(arr, values, axis=None) -> Tensor:
    """arr with values joined at the end of axis (both flattened when axis is None), as NumPy's
    append: the result type of both. Differentiable with respect to both.

    >>> import tensor as T
    >>> T.append(T.tensor([[1, 2]]), [[3, 4]], axis=0).tolist()
    [[1, 2], [3, 4]]
    """
    op = "append"
    arr = arg(arr, op)
    values = arg(values, op, arr.device)
    _same_device(op, arr, values)
    if axis is None:
        return P.concatenate([P.reshape(arr, (-1,)), P.reshape(values, (-1,))], 0)
    if arr.ndim == 0:
        raise ValueError(f"{op}: axis {axis} is out of bounds for a 0-d tensor")
    a = norm_axis(axis, arr.ndim, op)
    if values.ndim != arr.ndim or any(values.shape[i] != arr.shape[i]
                                      for i in range(arr.ndim) if i != a):
        raise ValueError(f"{op}: values of shape {values.shape} must match arr's shape "
                         f"{arr.shape} except along axis {a}")
    return P.concatenate([arr, values], a)


def _index_list(obj, n: int, op: str, what: str) -> tuple:
    """obj (an int, slice, sequence or tensor of ints, or a bool mask) as host ints and whether
    it was a scalar."""
    if isinstance(obj, slice):
        return list(range(*obj.indices(n))), False
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, bool):
        raise TypeError(f"{op}: {what} must be integers, got a bool")
    else:
        try:
            t = asarray(obj)
        except (TypeError, ValueError):
            raise TypeError(f"{op}: {what} must be an int, a slice or a sequence of ints, got "
                            f"{type(obj).__name__}") from None
        if t.numel() == 0:
            return [], False
    if t.dtype is dt.bool_:
        if t.ndim != 1:
            raise ValueError(f"{op}: a bool {what} must be 1-d, got shape {t.shape}")
        return ("mask", host(t)), False
    if t.dtype.kind not in "iu":
        raise IndexError(f"{op}: {what} must be integers, got {t.dtype}")
    if t.ndim > 1:
        raise ValueError(f"{op}: {what} must be 1-d or a scalar, got shape {t.shape}")
    return host(t), t.ndim == 0


@pub()
def insert(arr, obj, values, axis=None) -> Tensor:
    """arr with values inserted before the indices obj along axis (arr flattened when axis is
    None), as NumPy's insert: obj an int, a slice, a sequence of ints (the original positions;
    several values at one index keep their order) or a bool mask; values broadcast to the
    inserted slices and cast to arr's dtype. Differentiable with respect to arr and values.

    >>> import tensor as T
    >>> T.insert(T.tensor([[1, 2], [3, 4]]), 1, [9, 8], axis=1).tolist()
    [[1, 9, 2], [3, 8, 4]]
    """
    op = "insert"
    arr, a = _flat_or_axis(arr, axis, op)
    n = arr.shape[a]
    idx, scalar = _index_list(obj, n, op, "obj")
    if isinstance(idx, tuple):   # a bool mask: the positions of its True entries
        idx = [i for i, m in enumerate(idx[1]) if m]
    vals = cast(arg(values, op, arr.device), arr.dtype)
    _same_device(op, arr, vals)
    for i in idx:
        if i < -n or i > n:
            raise IndexError(f"{op}: index {i} is out of bounds for axis {a} with size {n}")
    idx = [i + n if i < 0 else i for i in idx]
    if len(idx) == 1:   # NumPy's one-index path: values fill a block of their own length
        if vals.ndim < arr.ndim:
            vals = P.reshape(vals, (1,) * (arr.ndim - vals.ndim) + vals.shape)
        if scalar:
            vals = P.moveaxis(vals, 0, a)
        idx = idx * vals.shape[a]
    shape = arr.shape[:a] + (len(idx),) + arr.shape[a + 1:]
    try:
        vals = P.broadcast_to(vals, shape)
    except ValueError:
        raise ValueError(f"{op}: values of shape {vals.shape} cannot be broadcast to the "
                         f"inserted block's shape {shape}") from None
    if len(set(idx)) == 1:   # one position: arr's two halves around the block (no gather)
        at = idx[0]
        cut = [slice(None)] * arr.ndim
        head, tail = list(cut), list(cut)
        head[a], tail[a] = slice(0, at), slice(at, None)
        return P.concatenate([arr[tuple(head)], vals, arr[tuple(tail)]], a)
    # where each output position reads from: arr's positions in order, the new ones (at n + j)
    # before the original position idx[j], several at one index in their given order
    order = np.argsort(np.asarray(idx, dtype=np.int64), kind="stable")
    newpos = np.asarray(idx, dtype=np.int64)[order] + np.arange(len(idx))
    src = np.empty(n + len(idx), dtype=np.int64)
    taken = np.zeros(src.shape[0], dtype=bool)
    taken[newpos] = True
    src[newpos] = n + order
    src[~taken] = np.arange(n)
    return P.take(P.concatenate([arr, vals], a), asarray(src, device=arr.device), axis=a)


@pub()
def delete(arr, obj, axis=None) -> Tensor:
    """arr without the entries obj along axis (arr flattened when axis is None), as NumPy's
    delete: obj an int, a slice, a sequence of ints (negative ones count from the end,
    repeats allowed) or a bool mask of the axis' length. Differentiable with respect to arr.

    >>> import tensor as T
    >>> T.delete(T.tensor([1, 2, 3, 4]), [0, -1]).tolist()
    [2, 3]
    """
    op = "delete"
    arr, a = _flat_or_axis(arr, axis, op)
    n = arr.shape[a]
    idx, _ = _index_list(obj, n, op, "obj")
    if isinstance(idx, tuple):
        if len(idx[1]) != n:
            raise ValueError(f"{op}: a bool obj must have the axis' length {n}, got "
                             f"{len(idx[1])}")
        keep = ~np.asarray(idx[1], dtype=bool)
    else:
        drop = np.asarray(idx, dtype=np.int64)
        bad = drop[(drop < -n) | (drop >= n)]
        if bad.size:
            raise IndexError(f"{op}: index {int(bad[0])} is out of bounds for axis {a} with size {n}")
        keep = np.ones(n, dtype=bool)
        keep[drop % max(n, 1)] = False
    keep = asarray(np.flatnonzero(keep).astype(np.int64), device=arr.device)
    return P.take(arr, keep, axis=a)


# ---------------------------------------------------------------- joining

def _tensors(tup, op: str) -> list:
    if isinstance(tup, Tensor) or not hasattr(tup, "__iter__"):
        raise TypeError(f"{op}: expected a sequence of arrays, got {type(tup).__name__}")
    tup = list(tup)
    if not tup:
        raise ValueError(f"{op}: need at least one array to stack")
    dev = dev_of(*tup)
    ts = [arg(t, op, dev) for t in tup]
    _same_device(op, *ts)
    return ts


@pub()
def column_stack(tup) -> Tensor:
    """1-d arrays as the columns of a 2-d tensor (2-d arrays joined as they are), as NumPy's
    and PyTorch's column_stack.

    >>> import tensor as T
    >>> T.column_stack([T.tensor([1, 2]), T.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    ts = _tensors(tup, "column_stack")
    return P.concatenate([P.reshape(t, (-1, 1)) if t.ndim < 2 else t for t in ts], 1)


@pub()
def row_stack(tup) -> Tensor:
    """vstack under NumPy's (deprecated) and PyTorch's other name."""
    return P.vstack(_tensors(tup, "row_stack"))


def _block_depth(arrays, where: str, op: str) -> tuple:
    """(list depth, max array ndim) of block's nested lists; mismatched depths are errors."""
    if isinstance(arrays, tuple):
        raise TypeError(f"{op}: {where} is a tuple; only lists arrange blocks (a tuple is not "
                        "turned into an array)")
    if not isinstance(arrays, list):
        return 0, arg(arrays, op).ndim
    if not arrays:
        raise ValueError(f"{op}: lists cannot be empty ({where} is [])")
    depths = [_block_depth(x, f"{where}[{i}]", op) for i, x in enumerate(arrays)]
    first = depths[0][0]
    for i, (d, _) in enumerate(depths):
        if d != first:
            raise ValueError(f"{op}: list depths are mismatched: {where}[0] is at depth "
                             f"{first + 1} but {where}[{i}] at depth {d + 1}")
    return first + 1, max(n for _, n in depths)


def _block(arrays, depth: int, list_ndim: int, ndim: int, dev) -> Tensor:
    if not isinstance(arrays, list):
        t = arg(arrays, "block", dev)
        return P.reshape(t, (1,) * (ndim - t.ndim) + t.shape) if t.ndim < ndim else t
    parts = [_block(x, depth + 1, list_ndim, ndim, dev) for x in arrays]
    _same_device("block", *parts)
    try:
        return P.concatenate(parts, -(list_ndim - depth))
    except ValueError as e:
        raise ValueError(f"block: the blocks at depth {depth + 1} do not fit: {e}") from None


@pub()
def block(arrays) -> Tensor:
    """One tensor assembled from nested lists of blocks, as NumPy's block: the innermost lists
    join along the last axis, the next ones along the axis before, and so on; every block is
    first given the result's rank (leading ones).

    >>> import tensor as T
    >>> T.block([[T.eye(2), T.zeros((2, 1))], [T.ones((1, 2)), T.ones((1, 1))]]).shape
    (3, 3)
    """
    list_ndim, arr_ndim = _block_depth(arrays, "arrays", "block")
    ndim = max(list_ndim, arr_ndim)
    dev = None
    stack = [arrays]
    while stack and dev is None:   # the first tensor's device, for the array-likes
        x = stack.pop()
        dev = x.device if isinstance(x, Tensor) else dev
        stack.extend(x if isinstance(x, list) else ())
    r = _block(arrays, 0, list_ndim, ndim, dev)
    return P.copy(r) if list_ndim == 0 else r


@pub()
def resize(a, new_shape) -> Tensor:
    """A new tensor of new_shape filled with a's flattened values repeated as often as needed
    (zeros when a is empty), as NumPy's resize (not ndarray.resize, which pads with zeros).

    >>> import tensor as T
    >>> T.resize(T.tensor([1, 2, 3]), (2, 4)).tolist()
    [[1, 2, 3, 1], [2, 3, 1, 2]]
    """
    op = "resize"
    a = P.reshape(arg(a, op), (-1,))
    if is_scalar(new_shape) or isinstance(new_shape, Tensor):
        new_shape = host(arg(new_shape, op)) if isinstance(new_shape, Tensor) else [new_shape]
    try:
        shape = tuple(operator.index(s) for s in new_shape)
    except TypeError:
        raise TypeError(f"{op}: new_shape must be an int or a sequence of ints, got "
                        f"{new_shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}: all elements of new_shape must be non-negative, got {shape}")
    size = math.prod(shape)
    if a.shape[0] == 0 or size == 0:
        return zeros(shape, dtype=a.dtype, device=a.device)
    idx = P.remainder(arange(size, device=a.device), a.shape[0])
    return P.reshape(P.take(a, idx), shape)


# ---------------------------------------------------------------- differences

@pub()
def ediff1d(ary, to_end=None, to_begin=None) -> Tensor:
    """The differences between consecutive entries of the flattened ary, with to_begin
    prepended and to_end appended (flattened, cast to ary's dtype: they must cast under
    NumPy's same_kind rule), as NumPy's ediff1d. Differentiable.

    >>> import tensor as T
    >>> T.ediff1d(T.tensor([1, 2, 4, 7]), to_begin=-99).tolist()
    [-99, 1, 2, 3]
    """
    op = "ediff1d"
    a = P.reshape(arg(ary, op), (-1,))
    if a.dtype is dt.bool_:
        raise TypeError(f"{op}: not supported for bool tensors (a difference is a subtraction)")
    parts = [P.subtract(a[1:], a[:-1])]
    for name, extra, front in (("to_begin", to_begin, True), ("to_end", to_end, False)):
        if extra is None:
            continue
        e = arg(extra, op, a.device)
        if not dt.can_cast(e.dtype, a.dtype, "same_kind"):
            raise TypeError(f"{op}: the dtype of {name} ({e.dtype}) must be compatible with "
                            f"ary's ({a.dtype}) under the same_kind rule")
        e = cast(P.reshape(e, (-1,)), a.dtype)
        parts.insert(0, e) if front else parts.append(e)
    return P.concatenate(parts, 0) if len(parts) > 1 else parts[0]


@pub()
def unwrap(p, discont=None, axis: int = -1, *, period=2 * math.pi) -> Tensor:
    """p with every jump along axis larger than discont (default period / 2) replaced by its
    complement modulo period, as NumPy's unwrap (integer p with an integer period stays
    integer). Differentiable with respect to p.

    >>> import tensor as T
    >>> [round(v, 4) for v in T.unwrap(T.tensor([0.0, 3.0, 6.5])).tolist()]
    [0.0, 3.0, 0.2168]
    """
    op = "unwrap"
    p = arg(p, op)
    if p.ndim == 0:
        raise ValueError(f"{op}: needs a tensor of rank >= 1, got a 0-d tensor")
    if p.dtype.kind == "c":
        raise TypeError(f"{op}: complex input ({p.dtype}) is not supported")
    a = norm_axis(axis, p.ndim, op)
    dd = P.diff(p, axis=a)
    if discont is None:
        discont = period / 2
    d = dt.result_type(dd, period)
    if d.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    ddmod = P.add(P.remainder(P.subtract(dd, -high), period), -high)
    if ambiguous:   # a jump of exactly period / 2 keeps its sign
        ddmod = P.where(P.logical_and(P.equal(ddmod, -high), P.greater(dd, 0)), high, ddmod)
    fix = P.subtract(ddmod, dd)
    fix = P.where(P.less(P.abs(dd), discont), zeros((), dtype=fix.dtype, device=fix.device), fix)
    first = cast(P.getitem(p, _along(a, slice(0, 1))), d)
    rest = cast(P.add(P.getitem(p, _along(a, slice(1, None))), P.cumsum(fix, axis=a)), d)
    return P.concatenate([first, rest], a)


def _spacing(h, f: Tensor, a: int, op: str):
    """One axis' spacing: a Python number, a 0-d tensor, or 1-d coordinates (float64 when
    integer); coordinates with equal steps become that step (NumPy's rule)."""
    if is_scalar(h):
        return h
    h = arg(h, op, f.device)
    if h.ndim == 0:
        return h
    if h.ndim != 1:
        raise ValueError(f"{op}: distances must be either scalars or 1d, got shape {h.shape}")
    if h.shape[0] != f.shape[a]:
        raise ValueError(f"{op}: when 1d, distances must match the length of the corresponding "
                         f"dimension ({f.shape[a]}), got {h.shape[0]}")
    if h.dtype.kind in "biu":
        h = cast(h, dt.float64)
    dx = P.diff(h)
    if dx.shape[0] and bool(P.all(P.equal(dx, dx[0]))):
        return dx[0]
    return dx


def _grad_axis(f: Tensor, a: int, h, edge_order: int) -> Tensor:
    """NumPy's gradient along axis a: central differences inside, one-sided ones (first or
    second order) at the ends, spacing h uniform (a number) or the coordinate steps dx."""
    def sl(start, stop=None):
        return P.getitem(f, _along(a, slice(start, stop)))

    def piece(i):   # entry i of the 1-d steps, shaped to broadcast along axis a
        return P.reshape(h[i], (1,) * f.ndim)

    uniform = not isinstance(h, Tensor) or h.ndim == 0
    if uniform:
        inner = P.divide(P.subtract(sl(2), sl(0, -2)), P.multiply(h, 2.0))
    else:
        shape = (1,) * a + (-1,) + (1,) * (f.ndim - a - 1)
        dx1, dx2 = P.reshape(h[:-1], shape), P.reshape(h[1:], shape)
        c0 = P.negative(dx2) / (dx1 * (dx1 + dx2))
        c1 = (dx2 - dx1) / (dx1 * dx2)
        c2 = dx1 / (dx2 * (dx1 + dx2))
        inner = c0 * sl(0, -2) + c1 * sl(1, -1) + c2 * sl(2)
    if edge_order == 1:
        h0, hn = (h, h) if uniform else (piece(0), piece(-1))
        first = P.divide(P.subtract(sl(1, 2), sl(0, 1)), h0)
        last = P.divide(P.subtract(sl(-1), sl(-2, -1)), hn)
    else:
        if uniform:
            c = (-1.5 / h, 2.0 / h, -0.5 / h)
            e = (0.5 / h, -2.0 / h, 1.5 / h)
        else:
            d1, d2 = piece(0), piece(1)
            c = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2),
                 -d1 / (d2 * (d1 + d2)))
            d1, d2 = piece(-2), piece(-1)
            e = (d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2.0 * d2 + d1) / (d2 * (d1 + d2)))
        first = c[0] * sl(0, 1) + c[1] * sl(1, 2) + c[2] * sl(2, 3)
        last = e[0] * sl(-3, -2) + e[1] * sl(-2, -1) + e[2] * sl(-1)
    return P.concatenate([first, inner, last], a)


@pub()
def gradient(f, *varargs, axis=None, edge_order: int = 1, spacing=None, dim=None):
    """The gradient of f by second-order central differences inside and first- or
    second-order (edge_order) one-sided differences at the ends, as NumPy's gradient: varargs
    give the spacing (one number for every axis, or one per axis: a number or the 1-d
    coordinates). Integer f gives float64, other dtypes keep theirs. One tensor for one axis,
    else a tuple (NumPy's). PyTorch's keywords spacing= (a number or a sequence, one per
    axis) and dim= are accepted too. Differentiable with respect to f and the spacing.

    >>> import tensor as T
    >>> T.gradient(T.tensor([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    op = "gradient"
    f = arg(f, op)
    axis = axis_arg(axis, dim, op)
    if spacing is not None:
        if varargs:
            raise TypeError(f"{op}: give the spacing as varargs or as spacing=, not both")
        varargs = tuple(spacing) if isinstance(spacing, list | tuple) else (spacing,)
    if f.dtype is dt.bool_ or f.dtype.kind not in "iufc":
        raise TypeError(f"{op}: not supported for {f.dtype} tensors")
    axes = tuple(range(f.ndim)) if axis is None else norm_axis_tuple(axis, f.ndim, op)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: repeated axis in {axis!r}")
    if len(varargs) == 0:
        varargs = (1.0,) * len(axes)
    elif len(varargs) == 1 and (is_scalar(varargs[0]) or
                                isinstance(varargs[0], Tensor) and varargs[0].ndim == 0):
        varargs = varargs * len(axes)
    elif len(varargs) != len(axes):
        raise TypeError(f"{op}: invalid number of spacing arguments: {len(varargs)} for "
                        f"{len(axes)} axes")
    edge_order = as_int(edge_order, "edge_order", op)
    if edge_order not in (1, 2):
        raise ValueError(f"{op}: edge_order must be 1 or 2, got {edge_order}")
    otype = f.dtype if f.dtype.kind in "fc" else dt.float64
    f = cast(f, otype)
    out = []
    for a, h in zip(axes, varargs):
        if f.shape[a] < edge_order + 1:
            raise ValueError(f"{op}: the shape of the array is too small to calculate a "
                             f"numerical gradient along axis {a} ({f.shape[a]} entries): at "
                             f"least edge_order + 1 = {edge_order + 1} are required")
        out.append(cast(_grad_axis(f, a, _spacing(h, f, a, op), edge_order), otype))
    return out[0] if len(axes) == 1 else tuple(out)


# ---------------------------------------------------------------- creation

@pub()
def vander(x, N=None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-d x: columns x**(N-1), ..., x, 1 (increasing: the other
    way), as NumPy's and PyTorch's vander (same positional order); NumPy's dtype (x's promoted
    with int64: integers and bool give int64, floats float64). Differentiable.

    >>> import tensor as T
    >>> T.vander(T.tensor([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    op = "vander"
    x = arg(x, op)
    if x.ndim != 1:
        raise ValueError(f"{op}: x must be a one-dimensional array, got shape {x.shape}")
    n = x.shape[0]
    N = n if N is None else as_int(N, "N", op)
    if N < 0:
        raise ValueError(f"{op}: N must be non-negative, got {N}")
    d = dt.promote_types(x.dtype, dt.int64)
    x = cast(x, d)
    cols = [] if N == 0 else [ones((n, 1), dtype=d, device=x.device)]
    if N > 1:
        cols.append(P.cumprod(P.broadcast_to(P.reshape(x, (n, 1)), (n, N - 1)), axis=1))
    v = cast(P.concatenate(cols, 1), d) if cols else zeros((n, 0), dtype=d, device=x.device)
    return v if increasing else P.flip(v, 1)
