"""Segment and scatter reductions: scatter_reduce(_) (PyTorch's), segment_sum / segment_prod /
segment_max / segment_min / segment_mean over sorted segment ids (TensorFlow's and
torch_scatter's), and gather (PyTorch's argument order and shape rules).

>>> import tensor as T
>>> T.scatter_reduce(T.zeros(3), 0, T.tensor([0, 2, 0]), T.tensor([1.0, 2.0, 3.0]), "amax").tolist()
[3.0, 0.0, 2.0]
>>> T.segment_sum(T.tensor([1.0, 2.0, 3.0]), T.tensor([0, 0, 2])).tolist()
[3.0, 0.0, 3.0]

Deterministic on every device, no atomics: the destination of each source element is computed
first (a flat position in the output, or a row where the index is the same across the other
dims), and one recorded op, `segment_reduce`, runs the backends' segmented kernels. CUDA sorts
the destinations stably first (the backend's segment_order: the index family's radix sort),
then a thread per (segment, column) combines its sources (cuda_src/segment.cuh); the CPU
combines them directly in one pass in source order (tensor/cpu/csrc/segment.h; OpenMP threads
own ranges of output rows). Each output element combines its sources in their original order,
so the result is that of a sequential loop over the sources (np.add.at's for sums) and the same
bits on both devices. Everything around that op is composed of public ops, so all of this is
differentiable in both modes (rules in autograd/rules_segment.py: sum and mean linear; amax /
amin split the gradient equally among the elements equal to the result, the initial value
included, as the dense amax; prod: the product of the others, zeros counted exactly).

Empty segments: 0 for segment_sum / mean / max / min (PyTorch's include_self=False convention
on a zero-filled output, as torch_scatter), 1 for segment_prod (the product's identity, as
TensorFlow). scatter_reduce leaves an output element no index points at equal to the input.
Errors (indices out of range, unsorted segment ids, shapes) are raised before a kernel runs.
Integer "mean" rounds down (floor division, as PyTorch).
"""
from __future__ import annotations

from . import dtypes as dt
from . import elementwise as ew
from ._hook import differentiable
from ._tensor import Tensor
from .aliasing import check_writable
from .axes import as_int, norm_axis
from .backend import backend_for
from .optable import T as P  # tensor's public (recorded) functions, for the compositions
from .scatter import check_index_extent
from .views import distinct

REDUCES = ("sum", "prod", "mean", "amax", "amin")
_KERNEL_DTYPES = {dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64, dt.uint64,
                  dt.float32, dt.float64}

__all__ = ["scatter_reduce", "scatter_reduce_", "segment_sum", "segment_prod", "segment_max",
           "segment_min", "segment_mean", "gather", "segment_reduce"]


def _pub(name: str):
    return getattr(P, name)


# ---------------------------------------------------------------- the one recorded op

def _segment_raw(x: Tensor, src: Tensor, seg: Tensor, order, offsets: Tensor, reduce: str,
                 include_self: bool) -> Tensor:
    """A copy of x (m, inner) whose row t is combined (reduce: sum, prod, amax, amin) with the
    rows order[offsets[t] .. offsets[t + 1]) of src (n, inner), in that order; from x's row
    (include_self) or from the segment's first row; rows of empty segments stay x's. seg
    (int64 (n,)): the row of x each row of src goes to (read by the derivative rules only)."""
    d = x.dtype
    if d not in _KERNEL_DTYPES:   # 16-bit floats: reduced in float32, rounded once
        r = _segment_raw(x.astype(dt.float32), src.astype(dt.float32), seg, order, offsets,
                         reduce, include_self)
        return r.astype(d)
    out = ew.copy(x)
    if not out.is_contiguous():
        out = ew.contiguous(out)
    backend_for(x.device).segment_reduce(ew.contiguous(src), ew.contiguous(seg), order, offsets,
                                         out, reduce, include_self)
    return out


segment_reduce = differentiable("segment_reduce", _segment_raw)


# ---------------------------------------------------------------- checks

def _tensor(x, what: str, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {what} must be a Tensor, got {type(x).__name__}")
    return x


def _index(idx, op: str, what: str = "index") -> Tensor:
    idx = _tensor(idx, what, op)
    if idx.dtype.kind not in "iu" or idx.dtype is dt.bool_:
        raise TypeError(f"{op}: {what} must have an integer dtype, got {idx.dtype.name}")
    return idx


def _value_dtype(d: dt.DType, op: str) -> None:
    if d is dt.bool_ or d.kind == "c":
        raise TypeError(f"{op}: {d.name} values are not supported (real numbers only)")


def _check_range(idx: Tensor, size: int, op: str, what: str = "index", dim=None) -> None:
    """Every element of idx in [0, size): one host read of (min, max)."""
    if idx.numel() == 0:
        return
    idx = distinct(idx)   # (an expanded index: its distinct elements only)
    lo, hi = int(_pub("min")(idx).item()), int(_pub("max")(idx).item())
    where = f" for dimension {dim}" if dim is not None else ""
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise IndexError(f"{op}: {what} {bad} is out of bounds{where} with size {size}")


def _reduce(reduce, op: str) -> str:
    if reduce not in REDUCES:
        raise ValueError(f"{op}: reduce must be one of {', '.join(map(repr, REDUCES))}, got {reduce!r}")
    return reduce


def _offsets(sorted_keys: Tensor, m: int) -> Tensor:
    """int64 (m + 1,): where each of the keys 0..m starts in the ascending int64 sorted_keys."""
    from .creation import arange
    return _pub("searchsorted")(sorted_keys, arange(m + 1, dtype=dt.int64, device=sorted_keys.device))


def counts(seg: Tensor, offsets, m: int) -> Tensor:
    """How many rows go to each of the m segments (int64): the differences of the offsets, or
    (where the backend combines by the keys directly and made none) a count of seg's."""
    if offsets is not None:
        return offsets[1:] - offsets[:-1]
    return _pub("bincount")(seg, minlength=m).astype(dt.int64)


def _mean_from_sum(total: Tensor, cnt: Tensor, extra: int) -> Tensor:
    """total (m, inner) over its count per row (+ extra), at least 1."""
    if extra:
        cnt = cnt + extra
    cnt = _pub("reshape")(_pub("maximum")(cnt, 1), (-1, 1))
    if total.dtype.kind in "iu":
        return _pub("floor_divide")(total, cnt.astype(total.dtype))
    return total / cnt.astype(total.dtype)


# ---------------------------------------------------------------- scatter_reduce

def _flat_targets(index: Tensor, dim: int, shape: tuple) -> Tensor:
    """The C-order flat position in `shape` that each element of index points at (int64, index's
    shape): index's value on dim, its own coordinates elsewhere."""
    from .creation import arange
    reshape = _pub("reshape")
    cs, s = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        cs[d], s = s, s * shape[d]
    t = index.astype(dt.int64) * cs[dim]
    for d, n in enumerate(index.shape):
        if d != dim and n > 1:
            sh = [1] * index.ndim
            sh[d] = n
            t = t + reshape(arange(n, dtype=dt.int64, device=index.device) * cs[d], tuple(sh))
    return t


def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
    """PyTorch's scatter_reduce (out of place): for every position p of index, the element of
    input at p with its dim-th coordinate replaced by index[p] is combined with src[p]
    (reduce: "sum", "prod", "mean", "amax", "amin"); include_self=False leaves input's value
    out of every element that receives at least one source. Sources combine in their order.

    >>> import tensor as T
    >>> T.scatter_reduce(T.ones(2), 0, T.tensor([1, 1]), T.tensor([2.0, 3.0]), "prod").tolist()
    [1.0, 6.0]
    """
    op = "scatter_reduce"
    x = _tensor(input, "input", op)
    idx = _index(index, op)
    src = _tensor(src, "src", op)
    reduce = _reduce(reduce, op)
    _value_dtype(x.dtype, op)
    if src.dtype is not x.dtype:
        raise TypeError(f"{op}: src ({src.dtype.name}) must have the dtype of input ({x.dtype.name})")
    if src.device != x.device:
        raise ValueError(f"{op}: input and src must be on one device, got {x.device} and "
                         f"{src.device}")
    if idx.device != x.device:   # an index on another device moves (as scatter_add's does)
        idx = ew.to_device(idx, x.device)
    if x.ndim == 0:   # PyTorch: a 0-d tensor behaves as one of shape (1,)
        r = scatter_reduce(_pub("reshape")(x, (1,)), dim, _pub("reshape")(idx, (-1,)),
                           _pub("reshape")(src, (-1,)), reduce, include_self=include_self)
        return _pub("reshape")(r, ())
    dim = norm_axis(dim, x.ndim, op)
    if not idx.ndim == src.ndim == x.ndim:
        raise ValueError(f"{op}: index, input and src must have the same number of dimensions, got "
                         f"shapes {idx.shape}, {x.shape} and {src.shape}")
    check_index_extent(idx, src, x, dim, op, "input")
    _check_range(idx, x.shape[dim], op, dim=dim)
    if idx.numel() == 0:   # a recorded copy: gradients and tangents flow through to input
        return _pub("copy")(x)
    if src.shape != idx.shape:
        src = _pub("getitem")(src, tuple(slice(0, n) for n in idx.shape))
    red = "sum" if reduce == "mean" else reduce
    idx = _as_expanded(idx, dim, x.shape)   # a materialised expanded index: as if expanded
    if _rows_index(idx, dim, x.shape):
        # an index constant across the other dims (an expanded 1-d index: the graph case):
        # whole slices along dim are the segments' rows, sorted by the n indices only
        move, reshape = _pub("moveaxis"), _pub("reshape")
        targets = ew.contiguous(idx[tuple(slice(None) if d == dim else 0 for d in range(idx.ndim))]
                                .astype(dt.int64))
        xm, sm = move(x, dim, 0), move(src, dim, 0)
        m, n = xm.shape[0], sm.shape[0]
        inner = xm.numel() // m if m else 0
        order, offsets = backend_for(x.device).segment_order(targets, m)
        out = segment_reduce(reshape(xm, (m, inner)), reshape(sm, (n, inner)), targets, order,
                             offsets, red, bool(include_self))
        if reduce == "mean":
            out = _mean_from_sum(out, counts(targets, offsets, m), int(bool(include_self)))
        return move(reshape(out, xm.shape), 0, dim)
    m, n = x.numel(), idx.numel()
    targets = _pub("reshape")(_flat_targets(idx, dim, x.shape), (-1,))
    # stable: equal targets keep their sources' order
    order, offsets = backend_for(x.device).segment_order(ew.contiguous(targets), m)
    out = segment_reduce(_pub("reshape")(x, (m, 1)), _pub("reshape")(src, (n, 1)), targets, order,
                         offsets, red, bool(include_self))
    if reduce == "mean":
        out = _mean_from_sum(out, counts(targets, offsets, m), int(bool(include_self)))
    return _pub("reshape")(out, x.shape)


def _rows_index(idx: Tensor, dim: int, shape: tuple) -> bool:
    """Whether idx repeats one index along every dim but `dim` (stride 0 or size 1 there)
    over the whole of input's other dims."""
    return idx.ndim > 1 and all(idx.shape[d] == shape[d] and (idx.strides[d] == 0 or idx.shape[d] == 1)
                                for d in range(idx.ndim) if d != dim)


def _as_expanded(idx: Tensor, dim: int, shape: tuple) -> Tensor:
    """idx as a stride-0 expansion of its first slice along the other dims when it holds one
    index per position along dim (the same across all of input's other dims: an expanded index
    made contiguous), which then takes the rows path (its rows' indices only, not every
    element's target); else idx. Two corner elements are compared first, so most other indices
    cost no full comparison."""
    if idx.ndim < 2 or _rows_index(idx, dim, shape) or any(
            idx.shape[d] != shape[d] for d in range(idx.ndim) if d != dim):
        return idx
    last = tuple(slice(None) if d == dim else -1 for d in range(idx.ndim))
    zero = tuple(slice(None) if d == dim else 0 for d in range(idx.ndim))
    if not bool(_pub("all")(idx[last] == idx[zero]).item()):
        return idx
    first = idx[tuple(slice(None) if d == dim else slice(0, 1) for d in range(idx.ndim))]
    if not bool(_pub("all")(idx == first).item()):
        return idx
    return _pub("broadcast_to")(first, idx.shape)


def scatter_reduce_(input, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
    """scatter_reduce written into input (returned)."""
    x = _tensor(input, "input", "scatter_reduce_")
    check_writable(x, "scatter_reduce_")
    # reduced from a copy when autograd tracks x: the reduction saves x, which copy_ overwrites
    r = scatter_reduce(_pub("copy")(x) if x.requires_grad else x, dim, index, src, reduce,
                       include_self=include_self)
    return _pub("copy_")(x, r)


# ---------------------------------------------------------------- segments

def _num_segments(k, op: str):
    """None, or k as a non-negative int (an integer: not a bool, not a float)."""
    if k is None:
        return None
    k = as_int(k, "num_segments", op)
    if k < 0:
        raise ValueError(f"{op}: num_segments must be a non-negative integer, got {k}")
    return k


def _segment(data, segment_ids, num_segments, reduce: str, op: str) -> Tensor:
    from .creation import full
    data = _tensor(data, "data", op)
    ids = _index(segment_ids, op, "segment_ids")
    _value_dtype(data.dtype, op)
    if data.ndim == 0:
        raise ValueError(f"{op}: data must have at least one dimension")
    if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(f"{op}: segment_ids must be 1-d with one id per row of data ({data.shape[0]}), "
                         f"got shape {ids.shape}")
    if ids.device != data.device:
        raise ValueError(f"{op}: data and segment_ids must be on one device, got {data.device} and "
                         f"{ids.device}")
    num_segments = _num_segments(num_segments, op)
    n = ids.shape[0]
    if n and ids.dtype is dt.uint64:   # ids past int64's range, before the cast wraps them
        hi = int(_pub("max")(ids).item())
        if hi >= 2 ** 63:
            raise IndexError(f"{op}: segment id {hi} is out of bounds" + (
                f" with size {num_segments}" if num_segments is not None else
                " (segment ids must be below 2**63)"))
    ids = ids.astype(dt.int64)
    if n > 1 and bool(_pub("any")(ids[1:] < ids[:-1]).item()):
        raise ValueError(f"{op}: segment_ids must be sorted in ascending order")
    if num_segments is None:
        num_segments = int(ids[-1].item()) + 1 if n else 0
        if n and int(ids[0].item()) < 0:
            raise IndexError(f"{op}: segment id {int(ids[0].item())} is negative")
    else:
        _check_range(ids, num_segments, op, "segment id")
    rest = data.shape[1:]
    inner = 1
    for s in rest:
        inner *= s
    init = full((num_segments, inner), 1 if reduce == "prod" else 0, dtype=data.dtype,
                device=data.device)
    offsets = _offsets(ids, num_segments)
    red = "sum" if reduce == "mean" else reduce
    out = segment_reduce(init, _pub("reshape")(data, (n, inner)), ids, None, offsets, red, False)
    if reduce == "mean":
        out = _mean_from_sum(out, counts(ids, offsets, num_segments), 0)
    return _pub("reshape")(out, (num_segments,) + rest)


def segment_sum(data, segment_ids, num_segments=None) -> Tensor:
    """out[s] = the sum of the rows data[i] with segment_ids[i] == s (ids sorted ascending;
    num_segments defaults to the last id + 1; empty segments give 0)."""
    return _segment(data, segment_ids, num_segments, "sum", "segment_sum")


def segment_prod(data, segment_ids, num_segments=None) -> Tensor:
    """segment_sum's product (empty segments give 1)."""
    return _segment(data, segment_ids, num_segments, "prod", "segment_prod")


def segment_max(data, segment_ids, num_segments=None) -> Tensor:
    """segment_sum's maximum (NaN propagates; empty segments give 0)."""
    return _segment(data, segment_ids, num_segments, "amax", "segment_max")


def segment_min(data, segment_ids, num_segments=None) -> Tensor:
    """segment_sum's minimum (NaN propagates; empty segments give 0)."""
    return _segment(data, segment_ids, num_segments, "amin", "segment_min")


def segment_mean(data, segment_ids, num_segments=None) -> Tensor:
    """segment_sum's mean (empty segments give 0; integers round down)."""
    return _segment(data, segment_ids, num_segments, "mean", "segment_mean")


# ---------------------------------------------------------------- gather

def gather(input, dim: int, index) -> Tensor:
    """PyTorch's gather: out[p] = input at p with its dim-th coordinate replaced by index[p];
    out has index's shape, which may be smaller than input's on every dimension but dim.
    (take_along_axis with PyTorch's argument order, no broadcasting, no negative indices.)

    >>> import tensor as T
    >>> T.gather(T.tensor([[1, 2], [3, 4]]), 1, T.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    op = "gather"
    x = _tensor(input, "input", op)
    idx = _index(index, op)
    if x.ndim == 0:
        return _pub("reshape")(gather(_pub("reshape")(x, (1,)), dim, _pub("reshape")(idx, (-1,))),
                               idx.shape)
    dim = norm_axis(dim, x.ndim, op)
    if idx.ndim != x.ndim:
        raise ValueError(f"{op}: index ({idx.shape}) and input ({x.shape}) must have the same "
                         "number of dimensions")
    for d in range(x.ndim):
        if d != dim and idx.shape[d] > x.shape[d]:
            raise ValueError(f"{op}: index of shape {idx.shape} is larger than input {x.shape} "
                             f"along dimension {d}")
    _check_range(idx, x.shape[dim], op, dim=dim)
    if any(idx.shape[d] < x.shape[d] for d in range(x.ndim) if d != dim):
        x = _pub("getitem")(x, tuple(slice(None) if d == dim else slice(0, n)
                                     for d, n in enumerate(idx.shape)))
    return _pub("take_along_axis")(x, idx, dim)
