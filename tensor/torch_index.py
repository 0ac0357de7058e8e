"""PyTorch's indexing functions beyond NumPy's: index_select, masked_select, narrow,
Tensor.unfold, scatter(_), index_copy(_), index_fill(_), masked_scatter(_), take_along_dim,
put(_), index_reduce(_), diagonal_scatter, select_scatter, slice_scatter, nonzero_static.

Each checks its arguments under its own (PyTorch's) name, raising before anything is written,
then calls only the public (recorded) functions (`P.`): reads are take / getitem /
take_along_axis / as_strided, writes are setitem or index_put_ with an advanced key built from
`index` and arange grids, index_reduce is scatter_reduce over an expanded index. So autograd
records every step and none needs a rule of its own (public.py's COMPOSITE). Out-of-place
forms clone, then call the in-place form.

>>> import tensor as T
>>> x = T.arange(6.0).reshape(2, 3)
>>> T.index_select(x, 1, T.tensor([2, 0])).tolist()
[[2.0, 0.0], [5.0, 3.0]]
>>> T.zeros(2, 3).scatter_(1, T.tensor([[2], [0]]), 1.0).tolist()
[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
>>> T.arange(5).unfold(0, 2, 2).tolist()
[[0, 1], [2, 3]]
"""
from __future__ import annotations

import operator

from . import dtypes as dt
from ._tensor import Tensor
from .axes import norm_axis
from .convert import asarray
from .creation import arange, full
from .indexing import grid_key
from .optable import T as P  # tensor's public (recorded) functions
from .views import broadcast_shapes

COMPOSITES: dict = {}   # name -> function, published by tensor/public.py as T.name / method
METHODS: dict = {}      # PyTorch's methods that are no T.function (Tensor.unfold)
_LONG = (dt.int64,)
_INTS = (dt.int32, dt.int64)


def _pub(fn):
    COMPOSITES[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------- argument checks

def _tensor(x, what: str, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {what} must be a Tensor, got {type(x).__name__}")
    return x


def _index(index, op: str, x: Tensor, dtypes=_LONG, vector: bool = False) -> Tensor:
    """index as an integer tensor of one of `dtypes` (PyTorch's rule per op; a list becomes
    int64); vector=True: 0-d or 1-d, returned 1-d."""
    if not isinstance(index, Tensor):
        index = asarray(index, device=x.device)
        if index.numel() == 0 or index.dtype is dt.int32:
            index = index.astype(dt.int64)
    if index.dtype not in dtypes:
        want = " or ".join(d.name for d in dtypes)
        raise TypeError(f"{op}: index must have dtype {want}, got {index.dtype.name}")
    if vector:
        if index.ndim > 1:
            raise IndexError(f"{op}: index must be 0-d or 1-d, got shape {index.shape}")
        index = P.reshape(index, (-1,))
    return index


def _source(src, x: Tensor, what: str, op: str) -> Tensor:
    """src as a Tensor of x's dtype on x's device (PyTorch casts none of these)."""
    src = _tensor(src, what, op)
    if src.dtype is not x.dtype:
        raise TypeError(f"{op}: {what} ({src.dtype.name}) must have the dtype of self "
                        f"({x.dtype.name})")
    if src.device != x.device:
        raise ValueError(f"{op}: self and {what} must be on one device, got {x.device} and "
                         f"{src.device}")
    return src


def _check_range(idx: Tensor, size: int, op: str, dim=None, wrap: bool = False) -> None:
    """Every index in [0, size) (wrap: [-size, size)), with one host read of (min, max), so a
    bad index raises naming the op before anything is written."""
    if idx.numel() == 0:
        return
    lo, hi = (int(v) for v in P.stack([P.min(idx), P.max(idx)]).tolist())   # (one read)
    low = -size if wrap else 0
    if lo < low or hi >= size:
        where = f" for dimension {dim}" if dim is not None else ""
        raise IndexError(f"{op}: index {lo if lo < low else hi} is out of bounds{where} with "
                         f"size {size}")


def _scalar(value, x: Tensor, op: str):
    """A Python scalar (or a 0-d tensor) written into x: complex into a real x is refused."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"{op}: a value tensor must be 0-d, got shape {value.shape}")
        return value
    if not isinstance(value, bool | int | float | complex):
        raise TypeError(f"{op}: value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")
    if isinstance(value, complex) and x.dtype.kind != "c":
        raise TypeError(f"{op}: cannot write complex value {value} into a {x.dtype.name} tensor")
    return value


def _saved(x: Tensor, src: Tensor) -> Tensor:
    """x, or a copy where autograd records: scatter_reduce saves its input for backward, which
    the in-place form then overwrites (a version-counter error on backward)."""
    return P.copy(x) if x.requires_grad or src.requires_grad else x


def _along(dim: int, k) -> tuple:
    return (slice(None),) * dim + (k,)


def _flat1(x: Tensor) -> Tensor:
    """A 0-d tensor as a (1,) view (PyTorch treats a scalar as a 1-element vector)."""
    return P.reshape(x, (1,)) if x.ndim == 0 else x


# ---------------------------------------------------------------- reads

@_pub
def index_select(input, dim: int, index) -> Tensor:  # noqa: A002  (PyTorch's names)
    """The slices of input at index (0-d or 1-d, int32 or int64) along dim, as PyTorch's.

    >>> import tensor as T
    >>> T.index_select(T.tensor([[1, 2], [3, 4]]), 0, T.tensor([1, 1])).tolist()
    [[3, 4], [3, 4]]
    """
    op = "index_select"
    x = _tensor(input, "input", op)
    idx = _index(index, op, x, _INTS, vector=True)
    if x.ndim == 0:
        norm_axis(dim, 1, op)
        if idx.numel() != 1:
            raise IndexError(f"{op}: index into a 0-d tensor must hold one value, got "
                             f"{idx.numel()}")
        _check_range(idx, 1, op, 0)
        return P.reshape(x, ())
    dim = norm_axis(dim, x.ndim, op)
    _check_range(idx, x.shape[dim], op, dim)
    return P.take(x, idx, dim)


@_pub
def masked_select(input, mask) -> Tensor:  # noqa: A002
    """The elements of input where the bool mask is True (both broadcast), as a 1-d tensor.

    >>> import tensor as T
    >>> T.masked_select(T.tensor([[1, 2], [3, 4]]), T.tensor([True, False])).tolist()
    [1, 3]
    """
    op = "masked_select"
    x, m = _tensor(input, "input", op), _tensor(mask, "mask", op)
    if m.dtype is not dt.bool_:
        raise TypeError(f"{op}: mask must be bool, got {m.dtype.name}")
    shape = broadcast_shapes(x.shape, m.shape, op=op)
    if x.shape != shape:
        x = P.broadcast_to(x, shape)
    if m.shape != shape:
        m = P.broadcast_to(m, shape)
    return P.getitem(P.reshape(x, (-1,)), P.reshape(m, (-1,)))


@_pub
def narrow(input, dim: int, start, length: int) -> Tensor:  # noqa: A002
    """input[..., start:start + length, ...] along dim, a view (start may be negative or a
    0-d integer tensor).

    >>> import tensor as T
    >>> T.arange(5).narrow(0, -3, 2).tolist()
    [2, 3]
    """
    op = "narrow"
    x = _tensor(input, "input", op)
    if x.ndim == 0:
        raise ValueError(f"{op}: cannot be applied to a 0-d tensor")
    dim = norm_axis(dim, x.ndim, op)
    if isinstance(start, Tensor):   # PyTorch's: a 0-d integer tensor only
        if start.ndim or start.dtype.kind not in "iu":
            raise TypeError(f"{op}: start must be an int or a 0-d integer tensor, got a "
                            f"{start.dtype.name} tensor of shape {start.shape}")
        start = int(start.item())
    start = operator.index(start)
    length, n = operator.index(length), x.shape[dim]
    if not -n <= start <= n:
        raise IndexError(f"{op}: start {start} is out of range [{-n}, {n}] for dimension {dim} "
                         f"of shape {x.shape}")
    start += n if start < 0 else 0
    if length < 0:
        raise ValueError(f"{op}: length must be non-negative, got {length}")
    if start + length > n:
        raise ValueError(f"{op}: start ({start}) + length ({length}) exceeds dimension {dim} "
                         f"of size {n}")
    return P.getitem(x, _along(dim, slice(start, start + length)))


def unfold(self, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: every window of `size` elements along dimension, `step` apart, as a new
    last axis; a zero-copy view (as_strided), windows may overlap.

    >>> import tensor as T
    >>> T.arange(5).unfold(0, 3, 1).tolist()
    [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    """
    op = "unfold"
    x = _tensor(self, "self", op)
    d = norm_axis(dimension, max(x.ndim, 1), op)
    size, step = operator.index(size), operator.index(step)
    n = x.shape[d] if x.ndim else 1
    if size < 0 or size > n:
        raise ValueError(f"{op}: size {size} must be in [0, {n}] (dimension {d} of shape "
                         f"{x.shape})")
    if step <= 0:
        raise ValueError(f"{op}: step must be positive, got {step}")
    if x.ndim == 0:
        return P.as_strided(x, (size,), (1,))
    st = x.strides[d]
    shape = x.shape[:d] + ((n - size) // step + 1,) + x.shape[d + 1:] + (size,)
    strides = x.strides[:d] + (st * step,) + x.strides[d + 1:] + (st,)
    return P.as_strided(x, shape, strides)


METHODS["unfold"] = unfold


@_pub
def take_along_dim(input, indices, dim: int | None = None) -> Tensor:  # noqa: A002
    """PyTorch's take_along_dim: take_along_axis with input and int64 indices broadcast on
    every dimension but dim; dim=None reads the flattened input at the flattened indices.
    Negative indices count from the end.

    >>> import tensor as T
    >>> T.take_along_dim(T.tensor([[10, 30, 20]]), T.tensor([[1], [2]]), 1).tolist()
    [[30], [20]]
    """
    op = "take_along_dim"
    x = _tensor(input, "input", op)
    idx = _index(indices, op, x)
    if dim is None:
        _check_range(idx, x.numel(), op, wrap=True)
        return P.take_along_axis(P.reshape(x, (-1,)), P.reshape(idx, (-1,)), 0)
    if x.ndim != idx.ndim:
        raise ValueError(f"{op}: input ({x.shape}) and indices ({idx.shape}) must have the same "
                         "number of dimensions")
    if x.ndim == 0:
        norm_axis(dim, 1, op)
        _check_range(idx, 1, op, 0, wrap=True)
        return P.reshape(x, ())
    d = norm_axis(dim, x.ndim, op)
    _check_range(idx, x.shape[d], op, d, wrap=True)
    one = broadcast_shapes(x.shape[:d] + (1,) + x.shape[d + 1:],
                           idx.shape[:d] + (1,) + idx.shape[d + 1:], op=op)
    xs, ixs = one[:d] + (x.shape[d],) + one[d + 1:], one[:d] + (idx.shape[d],) + one[d + 1:]
    x = x if x.shape == xs else P.broadcast_to(x, xs)
    idx = idx if idx.shape == ixs else P.broadcast_to(idx, ixs)
    return P.take_along_axis(x, idx, d)


@_pub
def nonzero_static(input, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """argwhere(input) with exactly `size` rows: cut after size, padded with fill_value.

    >>> import tensor as T
    >>> T.nonzero_static(T.tensor([0, 3, 4]), size=3).tolist()
    [[1], [2], [-1]]
    """
    op = "nonzero_static"
    x = _tensor(input, "input", op)
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"{op}: size must be a non-negative integer, got {size}")
    a = P.argwhere(x)
    k = a.shape[0]
    if k >= size:
        return P.getitem(a, slice(0, size))
    pad = full((size - k, a.shape[1]), operator.index(fill_value), dtype=dt.int64, device=x.device)
    return P.concatenate([a, pad], 0)


# ---------------------------------------------------------------- scatter

def _scatter_src(src, value, x: Tensor, op: str):
    if (src is None) == (value is None):
        raise TypeError(f"{op}: give exactly one of src (a tensor) and value (a number)")
    v = value if src is None else src
    if isinstance(v, Tensor) and (v.ndim or not x.ndim):
        return _source(v, x, "src", op), True
    return _scalar(v, x, op), False   # PyTorch reads a 0-d src tensor as its Scalar value


def _scatter(input, dim, index, src, value, reduce, op: str) -> Tensor:  # noqa: A002
    x = _tensor(input, "self", op)
    v, is_src = _scatter_src(src, value, x, op)
    idx = _index(index, op, x, _INTS)
    if reduce not in (None, "add", "multiply"):
        raise ValueError(f"{op}: reduce must be 'add' or 'multiply', got {reduce!r}")
    if x.ndim == 0:
        d = norm_axis(dim, 1, op)
        if idx.ndim > 1 or (is_src and v.ndim > 1):
            raise ValueError(f"{op}: index {idx.shape} and src of a 0-d self must be 0-d or 1-d")
        vv = P.reshape(v, (-1,)) if is_src else v
        _scatter(P.reshape(x, (1,)), d, P.reshape(idx, (-1,)), vv, None, reduce, op)
        return x
    dim = norm_axis(dim, x.ndim, op)
    if idx.ndim != x.ndim or (is_src and v.ndim != x.ndim):
        raise ValueError(f"{op}: index ({idx.shape}), self ({x.shape}) and src "
                         f"({v.shape if is_src else ()}) must have the same number of dimensions")
    for d in range(x.ndim):
        if (is_src and idx.shape[d] > v.shape[d]) or (
                d != dim and idx.shape[d] > x.shape[d]):
            raise ValueError(f"{op}: index of shape {idx.shape} is larger than src "
                             f"{v.shape if is_src else ()} or self {x.shape} along dimension {d} "
                             f"(dim={dim})")
    _check_range(idx, x.shape[dim], op, dim)
    if idx.numel() == 0:
        return x
    if is_src and v.shape != idx.shape:
        v = P.getitem(v, tuple(slice(0, n) for n in idx.shape))
    if reduce is None:
        P.setitem(x, grid_key(idx, dim, idx.shape, idx.device), v)
        return x
    if not isinstance(v, Tensor):
        v = full(idx.shape, v, dtype=x.dtype, device=x.device)
    elif not is_src:   # a 0-d value tensor
        v = P.broadcast_to(P.astype(v, x.dtype), idx.shape)
    if reduce == "add":
        return P.scatter_add_(x, dim, idx, v)
    if x.dtype is dt.bool_ or x.dtype.kind == "c":
        raise TypeError(f"{op}: reduce='multiply' does not support {x.dtype.name} tensors")
    return P.copy_(x, P.scatter_reduce(_saved(x, v), dim, idx, v, "prod"))


@_pub
def scatter_(input, dim: int, index, src=None, value=None, *, reduce=None) -> Tensor:  # noqa: A002
    """PyTorch's scatter_: self[..., index[p], ...] = src[p] (or value) at every position p
    of index, the index on dim and p's own coordinates elsewhere; index (int32 or int64) has
    self's rank and is no larger than src anywhere, nor than self but along dim. Repeated
    indices: the last write wins. reduce="add" / "multiply" (PyTorch's deprecated argument)
    combines instead. Returns self.

    >>> import tensor as T
    >>> x = T.zeros(3); x.scatter_(0, T.tensor([2, 0]), T.tensor([5.0, 6.0])).tolist()
    [6.0, 0.0, 5.0]
    """
    return _scatter(input, dim, index, src, value, reduce, "scatter_")


@_pub
def scatter(input, dim: int, index, src=None, value=None, *, reduce=None) -> Tensor:  # noqa: A002
    """scatter_ on a copy of input."""
    return _scatter(P.copy(_tensor(input, "input", "scatter")), dim, index, src, value, reduce,
                    "scatter")


# ---------------------------------------------------------------- index_copy / index_fill

def _index_copy(input, dim, index, source, op: str) -> Tensor:  # noqa: A002
    x = _tensor(input, "self", op)
    idx = _index(index, op, x, vector=True)
    src = _source(source, x, "source", op)
    if x.ndim == 0 or src.ndim == 0:
        if x.numel() != 1 or src.numel() != 1 or idx.numel() != 1:
            raise ValueError(f"{op}: a 0-d self or source needs one index and one element, got "
                             f"self {x.shape}, index {idx.shape}, source {src.shape}")
        dim = norm_axis(dim, max(x.ndim, 1), op)
        x1, src = _flat1(x), P.reshape(src, (1,) * max(x.ndim, 1))
    else:
        dim, x1 = norm_axis(dim, x.ndim, op), x
    want = x1.shape[:dim] + (idx.shape[0],) + x1.shape[dim + 1:]
    if src.shape != want:
        raise ValueError(f"{op}: source of shape {src.shape} does not match {want} (self of "
                         f"shape {x.shape}, dim {dim}, {idx.shape[0]} indices)")
    _check_range(idx, x1.shape[dim], op, dim)
    if idx.numel():
        P.setitem(x1, _along(dim, idx), src)
    return x


@_pub
def index_copy_(input, dim: int, index, source) -> Tensor:  # noqa: A002
    """self[..., index[i], ...] = source[..., i, ...] along dim (int64 index, 0-d or 1-d; no
    negative indices; repeated ones: the last wins). Returns self.

    >>> import tensor as T
    >>> T.zeros(3).index_copy_(0, T.tensor([2, 0]), T.tensor([5.0, 6.0])).tolist()
    [6.0, 0.0, 5.0]
    """
    return _index_copy(input, dim, index, source, "index_copy_")


@_pub
def index_copy(input, dim: int, index, source) -> Tensor:  # noqa: A002
    """index_copy_ on a copy of input."""
    return _index_copy(P.copy(_tensor(input, "input", "index_copy")), dim, index, source,
                       "index_copy")


def _index_fill(input, dim, index, value, op: str) -> Tensor:  # noqa: A002
    x = _tensor(input, "self", op)
    idx = _index(index, op, x, vector=True)
    value = _scalar(value, x, op)
    if isinstance(value, Tensor) and value.dtype.kind == "c" and x.dtype.kind != "c":
        raise TypeError(f"{op}: cannot write a {value.dtype.name} value into a {x.dtype.name} "
                        "tensor")
    x1 = _flat1(x)
    dim = norm_axis(dim, x1.ndim, op)
    _check_range(idx, x1.shape[dim], op, dim, wrap=True)
    if idx.numel():
        P.setitem(x1, _along(dim, idx), value)
    return x


@_pub
def index_fill_(input, dim: int, index, value) -> Tensor:  # noqa: A002
    """self[..., index[i], ...] = value along dim (int64 index, 0-d or 1-d, negative indices
    count from the end; value a number or a 0-d tensor, cast to self's dtype). Returns self.

    >>> import tensor as T
    >>> T.zeros(2, 3).index_fill_(1, T.tensor([-1]), 7.0).tolist()
    [[0.0, 0.0, 7.0], [0.0, 0.0, 7.0]]
    """
    return _index_fill(input, dim, index, value, "index_fill_")


@_pub
def index_fill(input, dim: int, index, value) -> Tensor:  # noqa: A002
    """index_fill_ on a copy of input."""
    return _index_fill(P.copy(_tensor(input, "input", "index_fill")), dim, index, value,
                       "index_fill")


# ---------------------------------------------------------------- masked_scatter, put

def _mask(mask, op: str) -> Tensor:
    m = _tensor(mask, "mask", op)
    if m.dtype is not dt.bool_:
        raise TypeError(f"{op}: mask must be bool, got {m.dtype.name}")
    return m


def _masked_scatter(input, mask, source, op: str) -> Tensor:  # noqa: A002
    x = _tensor(input, "self", op)
    m = _mask(mask, op)
    src = _source(source, x, "source", op)
    if broadcast_shapes(x.shape, m.shape, op=op) != x.shape:
        raise ValueError(f"{op}: mask of shape {m.shape} does not broadcast to self's shape "
                         f"{x.shape}")
    x1, m = _flat1(x), P.reshape(m, (1,)) if m.ndim == 0 else m
    if m.shape != x1.shape:
        m = P.broadcast_to(m, x1.shape)
    n = int(P.count_nonzero(m).item())
    if src.numel() < n:
        raise ValueError(f"{op}: source has {src.numel()} elements, fewer than the mask's {n} "
                         "True elements")
    if n:
        P.setitem(x1, m, P.getitem(P.reshape(src, (-1,)), slice(0, n)))
    return x


@_pub
def masked_scatter_(input, mask, source) -> Tensor:  # noqa: A002
    """The elements of self where mask (bool, broadcast to self) is True, in C order, become
    source's first elements in C order (source needs at least as many). Returns self.

    >>> import tensor as T
    >>> T.zeros(4).masked_scatter_(T.tensor([True, False, True, False]), T.tensor([1.0, 2.0, 3.0])).tolist()
    [1.0, 0.0, 2.0, 0.0]
    """
    return _masked_scatter(input, mask, source, "masked_scatter_")


@_pub
def masked_scatter(input, mask, source) -> Tensor:  # noqa: A002
    """masked_scatter_ on a copy of input broadcast with mask (PyTorch's out-of-place rule)."""
    op = "masked_scatter"
    x, m = _tensor(input, "input", op), _mask(mask, op)
    shape = broadcast_shapes(x.shape, m.shape, op=op)
    y = P.copy(x) if x.shape == shape else P.contiguous(P.broadcast_to(x, shape))
    return _masked_scatter(y, m, source, op)


def _put(input, index, source, accumulate, op: str) -> Tensor:  # noqa: A002
    x = _tensor(input, "self", op)
    idx = _index(index, op, x)
    src = _source(source, x, "source", op)
    if src.numel() != idx.numel():
        raise ValueError(f"{op}: source ({src.shape}) and index ({idx.shape}) must have the same "
                         "number of elements")
    _check_range(idx, x.numel(), op, wrap=True)
    if idx.numel() == 0:
        return x
    x1, flat = _flat1(x), P.reshape(idx, (-1,))
    flat = P.where(flat < 0, flat + x.numel(), flat)
    key = []
    for n in reversed(x1.shape):   # C-order coordinates of the flat indices
        key.append(P.remainder(flat, n))
        flat = P.floor_divide(flat, n)
    P.index_put_(x1, tuple(reversed(key)), P.reshape(src, (-1,)), bool(accumulate))
    return x


@_pub
def put_(input, index, source, accumulate: bool = False) -> Tensor:  # noqa: A002
    """self.flatten()[index] = source.flatten() (C order, whatever self's strides; int64
    index of any shape, negative counts from the end); accumulate=True adds, repeated
    indices adding up. Returns self.

    >>> import tensor as T
    >>> T.zeros(2, 2).put_(T.tensor([3, -4]), T.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 1.0]]
    """
    return _put(input, index, source, accumulate, "put_")


@_pub
def put(input, index, source, accumulate: bool = False, *, mode: str | None = None):  # noqa: A002
    """PyTorch's put: put_ on a copy of input, returned. With NumPy's mode= ('raise', 'wrap'
    or 'clip'; np.put(x, ind, v) always passes it): NumPy's put instead, which writes into input
    itself (the values repeated in turn where fewer than the indices) and returns None."""
    if mode is None:
        return _put(P.copy(_tensor(input, "input", "put")), index, source, accumulate, "put")
    x = _tensor(input, "a", "put")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    idx = P.reshape(asarray(index, device=x.device), (-1,))
    if accumulate:
        raise TypeError("put: NumPy's form (mode=) takes no accumulate")
    n, k = x.numel(), idx.numel()
    if k == 0:   # (an empty list of indices reads as float64: nothing to write, as NumPy)
        return None
    if idx.dtype.kind not in "iub":   # (booleans count as 0 and 1, as NumPy's put)
        raise TypeError(f"put: NumPy's form takes integer indices, got {idx.dtype.name}")
    if n == 0:
        raise IndexError("put: cannot put into an empty tensor")
    idx = idx.astype(dt.int64)
    if mode == "wrap":
        idx = P.remainder(idx, n)
    elif mode == "clip":
        idx = P.clip(idx, 0, n - 1)
    vals = P.reshape(asarray(source, dtype=x.dtype, device=x.device), (-1,))
    if vals.numel() == 0:
        return None
    if vals.numel() != k:   # NumPy repeats the values
        vals = P.take(vals, P.remainder(arange(k, device=x.device), vals.numel()))
    _put(x, idx, vals, False, "put")
    return None


# ---------------------------------------------------------------- index_reduce

_IREDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce(x, dim, index, source, reduce, include_self, op, inplace=False) -> tuple:
    """(self or its (1,) view, its index_reduce result), or (x, None) for an empty index."""
    x = _tensor(x, "self", op)
    if reduce not in _IREDUCES:
        raise ValueError(f"{op}: reduce must be one of {', '.join(map(repr, _IREDUCES))}, got "
                         f"{reduce!r}")
    idx = _index(index, op, x, _INTS, vector=True)
    src = _source(source, x, "source", op)
    if x.dtype is dt.bool_ or x.dtype.kind == "c":
        raise TypeError(f"{op}: {x.dtype.name} tensors are not supported (real numbers only)")
    x1 = _flat1(x)
    src = P.reshape(src, (1,)) if src.ndim == 0 and x.ndim == 0 else src
    dim = norm_axis(dim, x1.ndim, op)
    want = x1.shape[:dim] + (idx.shape[0],) + x1.shape[dim + 1:]
    if src.shape != want:
        raise ValueError(f"{op}: source of shape {src.shape} does not match {want} (self of "
                         f"shape {x.shape}, dim {dim}, {idx.shape[0]} indices)")
    _check_range(idx, x1.shape[dim], op, dim)
    if idx.numel() == 0:
        return x1, None
    one = [1] * x1.ndim
    one[dim] = idx.shape[0]
    e = P.broadcast_to(P.reshape(idx, tuple(one)), src.shape)
    base = _saved(x1, src) if inplace else x1
    return x1, P.scatter_reduce(base, dim, e, src, reduce, include_self=bool(include_self))


@_pub
def index_reduce_(input, dim: int, index, source, reduce: str, *,  # noqa: A002
                  include_self: bool = True) -> Tensor:
    """self[..., index[i], ...] combined with source[..., i, ...] along dim (reduce: "prod",
    "mean", "amax", "amin"; include_self=False leaves self's value out of every slice that
    receives one). Integer "mean" rounds down. Returns self.

    >>> import tensor as T
    >>> T.ones(3).index_reduce_(0, T.tensor([0, 0, 2]), T.tensor([2.0, 3.0, 4.0]), "prod").tolist()
    [6.0, 1.0, 4.0]
    """
    x1, r = _index_reduce(input, dim, index, source, reduce, include_self, "index_reduce_", True)
    if r is not None:
        P.copy_(x1, r)
    return input


@_pub
def index_reduce(input, dim: int, index, source, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Tensor:
    """index_reduce_ on a copy of input."""
    x1, r = _index_reduce(input, dim, index, source, reduce, include_self, "index_reduce")
    return P.copy(input) if r is None else P.reshape(r, input.shape)


# ---------------------------------------------------------------- *_scatter (out of place)

def _fitting_src(x: Tensor, src, view: Tensor, op: str, what: str) -> Tensor:
    """src as a tensor of exactly the shape of view (x's slice, diagonal...), writable into x."""
    src = _tensor(src, "src", op)
    if src.shape != view.shape:
        raise ValueError(f"{op}: src of shape {src.shape} must have the shape {view.shape} of "
                         f"the {what} of input {x.shape}")
    if src.dtype.kind == "c" and x.dtype.kind != "c":
        raise TypeError(f"{op}: cannot write {src.dtype.name} src into a {x.dtype.name} tensor")
    return src


def _embed(x: Tensor, src, key, view: Tensor, op: str) -> Tensor:
    """A copy of x with src (its shape exactly that of x[key], cast) written at key."""
    src = _fitting_src(x, src, view, op, "slice")
    y = P.copy(x)
    P.setitem(y, key, src)
    return y


@_pub
def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """A copy of input whose diagonal (offset, dim1, dim2: as diagonal's) is src.

    >>> import tensor as T
    >>> T.diagonal_scatter(T.zeros(2, 2), T.tensor([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    op = "diagonal_scatter"
    x = _tensor(input, "input", op)
    src = _fitting_src(x, src, P.diagonal(x, offset, dim1, dim2), op, "diagonal")
    y = P.copy(x)
    P.copy_(P.diagonal(y, offset, dim1, dim2), src)
    return y


@_pub
def select_scatter(input, src, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of input whose slice at index along dim is src (of that slice's shape).

    >>> import tensor as T
    >>> T.select_scatter(T.zeros(2, 2), T.tensor([1.0, 2.0]), 0, -1).tolist()
    [[0.0, 0.0], [1.0, 2.0]]
    """
    op = "select_scatter"
    x = _tensor(input, "input", op)
    if x.ndim == 0:
        raise ValueError(f"{op}: cannot be applied to a 0-d tensor")
    dim, index = norm_axis(dim, x.ndim, op), operator.index(index)
    n = x.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"{op}: index {index} is out of range for dimension {dim} of shape "
                         f"{x.shape}")
    key = _along(dim, index)
    return _embed(x, src, key, P.getitem(x, key), op)


@_pub
def slice_scatter(input, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:  # noqa: A002
    """A copy of input whose slice start:end:step along dim is src (of that slice's shape).

    >>> import tensor as T
    >>> T.slice_scatter(T.zeros(4), T.tensor([1.0, 2.0]), 0, step=2).tolist()
    [1.0, 0.0, 2.0, 0.0]
    """
    op = "slice_scatter"
    x = _tensor(input, "input", op)
    if x.ndim == 0:
        raise ValueError(f"{op}: cannot be applied to a 0-d tensor")
    dim, step = norm_axis(dim, x.ndim, op), operator.index(step)
    if step <= 0:
        raise ValueError(f"{op}: step must be positive, got {step}")
    key = _along(dim, slice(start, end, step))
    return _embed(x, src, key, P.getitem(x, key), op)
