"""Counting: NumPy's bincount, histogram and histogram_bin_edges, PyTorch's histc.

Every count is one deterministic index_add (tensor/scatter.py: repeated indices add up in
order, on every device) into one bin per value plus an overflow bin for the values outside
the range, which is then dropped; so weights keep their gradient. Sizing the result reads
values on the host (bincount's max, histogram's autodetected range): a synchronisation on a
device, as in NumPy and PyTorch.

A value's bin is where a search of the edges puts it: edges[i] <= v < edges[i + 1], the last
bin closed on the right. NumPy computes uniform bins arithmetically and then corrects the
index against the same edges, so both give the same bins; the edges themselves are NumPy's
(np.linspace over the range in NumPy's dtype: float64 for integer input).

>>> import tensor as T
>>> T.bincount(T.tensor([0, 2, 2, 5])).tolist()
[1, 0, 2, 0, 0, 1]
>>> h = T.histogram(T.tensor([1.0, 2.0, 2.5, 4.0]), bins=3)
>>> h.hist.tolist(), h.bin_edges.tolist()
([1, 2, 1], [1.0, 2.0, 3.0, 4.0])
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray
from .creation import full, ones, zeros
from .histogram_bins import estimated_bins
from .optable import T as P  # tensor's public (recorded) functions, for the compositions
from .sorting import ordered_arg, tensor_arg
from .views import broadcast_to


def _as(t: Tensor, d: dt.DType) -> Tensor:
    return t if t.dtype is d else P.astype(t, d)


def _weights(weights, x: Tensor, op: str) -> Tensor | None:
    if weights is None:
        return None
    w = tensor_arg(weights, op, x.device)
    if w.shape != x.shape:
        raise ValueError(f"{op}: weights of shape {w.shape} must have x's shape {x.shape}")
    if w.device != x.device:
        raise ValueError(f"{op}: x is on {x.device} and weights on {w.device}")
    return w


def _host_extrema(a: Tensor) -> np.ndarray:
    """[min, max] of the non-empty a, read on the host (bfloat16 as float32)."""
    mm = P.stack([P.min(a.detach()), P.max(a.detach())])
    return (mm.astype(dt.float32) if mm.dtype is dt.bfloat16 else mm).numpy()


def _accumulate(idx: Tensor, w: Tensor | None, size: int) -> Tensor:
    """The sum of w (ones: int64 counts) at each of size bins, by index (deterministic)."""
    if w is None:   # a broadcast one: no fill of a tensor of ones
        one = broadcast_to(ones(1, dtype=dt.int64, device=idx.device), idx.shape)
        return P.index_add(zeros(size, dtype=dt.int64, device=idx.device), 0, idx, one)
    return P.index_add(zeros(size, dtype=w.dtype, device=idx.device), 0, idx, w)


# ---------------------------------------------------------------- bincount

def bincount(x, weights=None, minlength: int = 0) -> Tensor:
    """Counts of each value of the 1-d non-negative integer x, max(x) + 1 (at least minlength)
    of them, as NumPy's and PyTorch's bincount: int64, or with weights the sum of the weights
    at each value, in the weights' float dtype (float64 for integer or bool weights, as NumPy;
    16-bit weights add up in float32). Differentiable with respect to the weights.

    >>> import tensor as T
    >>> T.bincount(T.tensor([1, 1, 3]), weights=T.tensor([0.5, 0.25, 2.0]), minlength=5).tolist()
    [0.0, 0.75, 0.0, 2.0, 0.0]
    """
    op = "bincount"
    x = tensor_arg(x, op)
    if x.ndim != 1:
        raise ValueError(f"{op}: x must be 1-d, got shape {x.shape}")
    if x.dtype.kind not in "biu":
        raise TypeError(f"{op}: x must hold non-negative integers, got {x.dtype}")
    try:
        minlength = operator.index(minlength)
    except TypeError:
        raise TypeError(f"{op}: minlength must be an integer, got {type(minlength).__name__}") \
            from None
    if minlength < 0:
        raise ValueError(f"{op}: minlength must be non-negative, got {minlength}")
    w = _weights(weights, x, op)
    size = minlength
    if x.shape[0]:
        lo, hi = (int(v) for v in _host_extrema(x))
        if lo < 0:
            raise ValueError(f"{op}: x must be non-negative, found {lo}")
        size = max(size, hi + 1)
    idx = _as(x, dt.int64)
    if w is None:
        return _accumulate(idx, None, size)
    wd = w.dtype if w.dtype.kind in "fc" else dt.float64
    acc = dt.float32 if wd.bits == 16 else wd
    return _as(_accumulate(idx, _as(w, acc), size), wd)


# ---------------------------------------------------------------- histogram

class HistogramResult(NamedTuple):
    hist: Tensor
    bin_edges: Tensor


def _outer_edges(a: Tensor, range, op: str) -> tuple:  # noqa: A002
    """NumPy's _get_outer_edges: the range given, or a's (min, max) (NumPy scalars of a's
    dtype, so NumPy's promotion picks the edges' dtype); an empty range widened by 1/2."""
    if range is not None:
        try:
            first, last = (r.item() if isinstance(r, Tensor) else r for r in range)
        except (TypeError, ValueError):
            raise ValueError(f"{op}: range must be a pair (min, max), got {range!r}") from None
        if first > last:
            raise ValueError(f"{op}: max must be larger than min in range parameter, got "
                             f"{range!r}")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{op}: supplied range of [{first}, {last}] is not finite")
    elif a.numel() == 0:
        first, last = 0, 1
    else:
        first, last = _host_extrema(a)
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"{op}: autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _uniform_edges(a: Tensor, n: int, range, op: str) -> Tensor:  # noqa: A002
    first, last = _outer_edges(a, range, op)
    stand_in = np.empty(0, np.float32 if a.dtype is dt.bfloat16 else a.dtype.np)
    bt = np.result_type(first, last, stand_in)
    if bt.kind in "iu":
        bt = np.dtype(np.float64)
    e = asarray(np.linspace(first, last, n + 1, endpoint=True, dtype=bt), device=a.device)
    if a.dtype is dt.bfloat16 and bt == np.float32:   # NumPy's rule, in bfloat16
        e = e.astype(dt.bfloat16)
    if n > 0 and bool(P.any(e[:-1] >= e[1:])):
        raise ValueError(f"{op}: too many bins for data range [{first}, {last}]: cannot create "
                         f"{n} finite-sized bins in {e.dtype}")
    return e


def _edges(a: Tensor, bins, range, op: str, weighted: bool = False) -> Tensor:  # noqa: A002
    """The bin edges, as NumPy's _get_bin_edges: bins equal bins over the range, the number of
    them a bin estimator ('auto', 'fd', ...) picks, or the given 1-d monotonic edges (the range
    is then ignored, as NumPy does)."""
    if isinstance(bins, str):
        if weighted:
            raise TypeError(f"{op}: the bin estimator {bins!r} does not support weighted data; "
                            "give the number of bins or the edges")
        first, last = _outer_edges(a, range, op)
        n = estimated_bins(a, bins, first, last, range is not None, op)
        return _uniform_edges(a, n, range, op)
    if not isinstance(bins, Tensor | list | tuple | np.ndarray) or np.ndim(bins) == 0:
        try:
            n = operator.index(bins)
        except TypeError:
            raise TypeError(f"{op}: bins must be an integer or a 1-d sequence of edges, got "
                            f"{type(bins).__name__}") from None
        if n < 1:
            raise ValueError(f"{op}: bins must be positive, when an integer, got {n}")
        return _uniform_edges(a, n, range, op)
    e = tensor_arg(bins, op, a.device)
    if e.ndim != 1:
        raise ValueError(f"{op}: bins must be 1-d, when an array, got shape {e.shape}")
    if e.dtype.kind == "c":
        raise TypeError(f"{op}: complex bin edges ({e.dtype}) have no order")
    if e.device != a.device:
        raise ValueError(f"{op}: x is on {a.device} and the bin edges on {e.device}")
    if e.shape[0] > 1 and bool(P.any(e[:-1] > e[1:])):
        raise ValueError(f"{op}: bins must increase monotonically, when an array")
    return e.detach()


def _flat(x, op: str) -> Tensor:
    a = P.reshape(ordered_arg(x, op), (-1,))
    return _as(a, dt.uint8) if a.dtype is dt.bool_ else a   # NumPy's conversion


def _bins_of(a: Tensor, e: Tensor) -> Tensor:
    """Each value's bin plus one: edges[i] <= v < edges[i + 1] gives i + 1 (the last bin also
    takes its right edge), a value below edges[0] 0, one above edges[-1] or NaN len(e). The
    count of the first n edges <= v plus whether v > edges[-1], both by sort's order (NaN the
    greatest; -0.0 == 0.0, as ==): two searches, where a mask, a clamp and a select each took
    a pass (a 2^18 histogram was 6x NumPy's time). Edges holding NaN compare as floats."""
    n = e.shape[0] - 1
    v = _as(a.detach(), dt.result_type(a, e))   # once, not in each search
    if bool(P.any(P.isnan(e))):
        inside = P.logical_and(P.greater_equal(v, e[0]), P.less_equal(v, e[-1]))
        i = P.minimum(P.searchsorted(e, v, side="right"), n)
        return P.where(inside, i, n + 1)
    return P.add(P.searchsorted(e[:-1], v, side="right"), P.searchsorted(e[-1:], v, side="left"))


def histogram(x, bins=10, range=None, weights=None, density: bool = False) -> HistogramResult:  # noqa: A002
    """NumPy's histogram of x (flattened): (hist, bin_edges).

    bins: the number of equal bins over range (default: x's min and max; float64 edges for
    integer input, x's float dtype otherwise, as NumPy), or the 1-d monotonic edges. Values
    outside the range (and NaN) are not counted; the last bin includes its right edge. hist is
    int64, or with weights the sum of the weights in each bin (in their dtype); density=True
    gives float64 densities (hist / bin width / total). Differentiable with respect to the
    weights. bins may name one of NumPy's bin estimators ('auto', 'fd', 'sturges', ...; not
    'stone'), as NumPy's, for unweighted data.

    >>> import tensor as T
    >>> T.histogram(T.tensor([0.5, 1.0, 1.0, 3.0]), bins=[0, 1, 2, 3]).hist.tolist()
    [1, 2, 1]
    """
    op = "histogram"
    x = tensor_arg(x, op)
    a = _flat(x, op)
    w = _weights(weights, x, op)
    e = _edges(a, bins, range, op, w is not None)
    n = max(e.shape[0] - 1, 0)
    if w is not None:
        w = P.reshape(w, (-1,))
    if n == 0:   # one edge or none: no bins
        h = zeros(0, dtype=dt.int64 if w is None else w.dtype, device=a.device)
    elif w is None:
        h = _accumulate(_bins_of(a, e), None, n + 2)[1:n + 1]
    else:   # NumPy adds the weights in double (complex: in complex128)
        acc = dt.complex128 if w.dtype.kind == "c" else dt.float64
        h = _as(_accumulate(_bins_of(a, e), _as(w, acc), n + 2)[1:n + 1], w.dtype)
    if density:
        h = P.divide(P.divide(h, _as(P.diff(e), dt.float64)), P.sum(h))
    return HistogramResult(h, e)


def histogram_bin_edges(x, bins=10, range=None, weights=None) -> Tensor:  # noqa: A002
    """NumPy's histogram_bin_edges: the edges histogram(x, bins, range) uses.

    >>> import tensor as T
    >>> T.histogram_bin_edges(T.tensor([1, 3]), bins=2).tolist()
    [1.0, 2.0, 3.0]
    """
    op = "histogram_bin_edges"
    x = tensor_arg(x, op)
    a = _flat(x, op)
    w = _weights(weights, x, op)
    return _edges(a, bins, range, op, w is not None)


def histc(x, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002
    """PyTorch's histc: counts in bins equal bins over [min, max] (both 0, or equal: x's own
    min and max; still equal: widened by 1 each way), in x's float dtype; values outside (and
    NaN) are not counted, the last bin includes max. A value's bin is PyTorch's arithmetic,
    int((v - min) * bins / (max - min)) in x's dtype.

    >>> import tensor as T
    >>> T.histc(T.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    op = "histc"
    a = _flat(x, op)
    if a.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating-point tensor, got {a.dtype}")
    try:
        bins = operator.index(bins)
    except TypeError:
        raise TypeError(f"{op}: bins must be an integer, got {type(bins).__name__}") from None
    if bins < 1:
        raise ValueError(f"{op}: bins must be > 0, got {bins}")
    lo, hi = float(min), float(max)
    if lo == hi and a.numel():
        lo, hi = (float(v) for v in _host_extrema(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{op}: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"{op}: max must be larger than min, got min={lo}, max={hi}")
    a = a.detach()
    lo_t, hi_t = (full((), v, dtype=a.dtype, device=a.device) for v in (lo, hi))
    inside = P.logical_and(P.greater_equal(a, lo_t), P.less_equal(a, hi_t))
    v = P.where(inside, a, lo_t)   # no NaN or infinity reaches the integer conversion
    i = P.minimum(P.astype(P.trunc((v - lo_t) * bins / (hi_t - lo_t)), dt.int64), bins - 1)
    h = _accumulate(P.where(inside, i, bins), None, bins + 1)[:bins]
    return P.astype(h, a.dtype)


COMPOSITES = {f.__name__: f for f in (bincount, histogram, histogram_bin_edges, histc)}
