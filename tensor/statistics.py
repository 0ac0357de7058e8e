"""Order statistics: NumPy's median, quantile and percentile (and their nan- forms), PyTorch's
kthvalue.

Each one sorts the reduced elements of every slice (the public, stable sort: NaN last) and
picks or interpolates the values at positions computed with NumPy's own formulas, all through
the public (recorded) functions, so autograd differentiates them (reverse and forward) without
a rule of their own: the gradient goes to the element(s) each result was picked from.

The names keep NumPy's semantics: median averages the two middle values of an even count
(PyTorch's median returns the lower one, with its index, when given a dim); NaN anywhere in a
slice gives NaN, the nan- forms skip NaNs (an all-NaN slice gives NaN). Integer and bool inputs
give float64, floats keep their dtype; quantile's q may be a Python number, a sequence or a
tensor, and q's dimensions come first in the result.

>>> import tensor as T
>>> x = T.tensor([[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0]])
>>> T.median(x, axis=1).tolist(), T.quantile(x, [0.0, 1.0], axis=1).tolist()
([2.25, 5.5], [[1.0, 2.0], [4.0, 9.0]])
>>> T.kthvalue(x, 2).indices.tolist()
[3, 0]
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor
from .axes import norm_axes, norm_axis
from .convert import asarray
from .creation import full
from .optable import T as P  # tensor's public (recorded) functions, for the compositions
from .reductions import axis_arg
from .sorting import check_k, ordered_arg


def _rows(x: Tensor, axis, keepdims: bool, op: str) -> tuple[Tensor, tuple]:
    """(x's reduced elements as the last axis of a (rows..., n) tensor, the result's shape)."""
    axes = norm_axes(axis, x.ndim, op)
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    y = x if kept + axes == tuple(range(x.ndim)) else P.permute(x, kept + axes)
    rows = tuple(x.shape[i] for i in kept)
    y = P.reshape(y, rows + (math.prod(x.shape[i] for i in axes),))
    out = tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keepdims else rows
    return y, out


def _float_of(d: dt.DType) -> dt.DType:
    return d if d.kind == "f" else dt.float64


def _nan_full(shape: tuple, d: dt.DType, device) -> Tensor:
    return full(shape, math.nan, dtype=_float_of(d), device=device)


# ---------------------------------------------------------------- kthvalue (PyTorch's)

class KthvalueResult(NamedTuple):
    values: Tensor
    indices: Tensor


def kthvalue(x, k: int, dim: int = -1, keepdim: bool = False) -> KthvalueResult:
    """PyTorch's kthvalue: the k-th smallest element (k from 1) along dim and its index. Ties
    resolve as a stable sort does (the index a stable ascending sort puts at position k - 1);
    NaN counts as the largest value.

    >>> import tensor as T
    >>> r = T.kthvalue(T.tensor([[4, 1, 3], [2, 2, 0]]), 2, dim=1)
    >>> r.values.tolist(), r.indices.tolist()
    ([3, 2], [2, 0])
    """
    op = "kthvalue"
    x = ordered_arg(x, op)
    a = norm_axis(dim, max(x.ndim, 1), op)
    k = check_k(k, 1, x, a, op)
    idx = P.argsort(x, axis=a)
    if x.ndim == 0:
        return KthvalueResult(P.copy(x), idx)
    idx = idx[(slice(None),) * a + (slice(k - 1, k),)]
    vals = P.take_along_axis(x, idx, a)
    if not keepdim:
        vals, idx = P.squeeze(vals, a), P.squeeze(idx, a)
    return KthvalueResult(vals, idx)


# ---------------------------------------------------------------- median, nanmedian

def _median(x, axis, keepdims: bool, dim, op: str, skip_nan: bool) -> Tensor:
    x = ordered_arg(x, op)
    s, shape = _rows(x, axis_arg(axis, dim, op), keepdims, op)
    n = s.shape[-1]
    if n == 0:   # NumPy: the mean of nothing
        return _nan_full(shape, x.dtype, x.device)
    s = P.sort(s, axis=-1)
    if not skip_nan or x.dtype.kind != "f":
        m = P.mean(s[..., (n - 1) // 2:n // 2 + 1], axis=-1)
        if x.dtype.kind == "f":
            last = s[..., -1]
            m = P.where(P.isnan(last), last, m)
    else:   # the middle of each slice's count of numbers (NaNs sort after them)
        cnt = P.sum(P.logical_not(P.isnan(s)), axis=-1, keepdims=True)
        lo = P.take_along_axis(s, P.maximum((cnt - 1) // 2, 0), -1)
        hi = P.take_along_axis(s, P.minimum(cnt // 2, n - 1), -1)
        m = P.where(cnt % 2 == 1, lo, P.mean(P.concat([lo, hi], axis=-1), axis=-1, keepdims=True))
        m = P.where(cnt == 0, math.nan, m)[..., 0]
    return P.reshape(m, shape)


def median(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """NumPy's median along axis (None: all; an int or a tuple): the middle value of each
    sorted slice, the mean of the two middle ones for an even count; NaN in a slice gives NaN.

    With axis (or none), NumPy's: values only, the mean of the two middle values. PyTorch's
    keywords (dim=, keepdim=) give torch.median's (values, indices) with the lower middle value
    instead (tensor/torch_spelling.py).

    >>> import tensor as T
    >>> T.median(T.tensor([[1, 4, 2, 8]]), axis=1).tolist()
    [3.0]
    """
    return _median(x, axis, keepdims, dim, "median", False)


def nanmedian(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """NumPy's nanmedian: median ignoring NaNs (an all-NaN or empty slice gives NaN).

    >>> import tensor as T
    >>> T.nanmedian(T.tensor([1.0, float("nan"), 4.0, 2.0])).item()
    2.0
    """
    return _median(x, axis, keepdims, dim, "nanmedian", True)


# ---------------------------------------------------------------- quantile, percentile

_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_CONTINUOUS = {   # Hyndman and Fan's (alpha, beta) of the methods that interpolate
    "interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
METHODS = ("linear", "midpoint", "averaged_inverted_cdf") + _DISCRETE + tuple(_CONTINUOUS)
_TORCH_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _method(method: str, interpolation, op: str) -> str:
    if interpolation is not None:   # PyTorch's keyword
        if interpolation not in _TORCH_METHODS:
            raise ValueError(f"{op}: interpolation must be one of {_TORCH_METHODS}, got "
                             f"{interpolation!r}")
        if method not in ("linear", interpolation):
            raise TypeError(f"{op}: give method or interpolation, not both")
        method = interpolation
    if method not in METHODS:
        raise ValueError(f"{op}: {method!r} is not a valid method; use one of {METHODS}")
    return method


def _host_q(q, scale: float, op: str) -> tuple[np.ndarray, bool]:
    """(q / scale as a NumPy array, whether q is a Python number). q's values are read on the
    host (a tensor on a device: a synchronisation) to check their range, as NumPy and PyTorch do."""
    weak = type(q) in (int, float)
    if isinstance(q, Tensor):
        qn = (q.astype(dt.float32) if q.dtype is dt.bfloat16 else q).numpy()
    else:
        qn = np.asarray(q)
    if qn.dtype.kind not in "biuf":
        raise TypeError(f"{op}: q must hold real numbers, got {qn.dtype}")
    if scale != 1:
        qn = np.true_divide(qn, scale)
    if qn.size and not (qn.min() >= 0 and qn.max() <= 1):   # NaN fails too
        raise ValueError(f"{op}: q must be in [0, {scale:g}], got {q!r:.80}")
    return (qn.astype(np.int64) if qn.dtype.kind == "b" else qn), weak


def _discrete(i: Tensor, take_prev: Tensor) -> Tensor:
    """NumPy's _discrete_interpolation_to_boundaries: floor(i), or the next index where
    take_prev is False; never below 0."""
    prev = P.floor(i)
    return P.maximum(P.astype(P.where(take_prev, prev, prev + 1), dt.int64), 0)


def _positions(method: str, n: Tensor, q: Tensor):
    """NumPy's positions of the quantiles q in sorted slices of n elements (n: int64, 0-d or
    one per slice): an int64 index (the methods that pick a value), or (previous index, next
    index, weight) to interpolate. The arithmetic is NumPy's, in q's dtype (n converted to it as
    NumPy converts a Python int), so the weights are NumPy's bit for bit."""
    if q.dtype.kind == "f" or method not in ("linear", "lower", "higher", "nearest"):
        q = q if q.dtype.kind == "f" else P.astype(q, dt.float64)
        nq, n1 = P.astype(n, q.dtype), P.astype(n - 1, q.dtype)
    else:
        nq, n1 = n, n - 1
    if method in ("lower", "higher", "nearest"):
        f = {"lower": P.floor, "higher": P.ceil, "nearest": P.rint}[method]
        return P.astype(f(n1 * q), dt.int64)
    if method == "inverted_cdf":
        i = nq * q - 1
        return _discrete(i, i == P.floor(i))
    if method == "closest_observation":   # ties go to the even order statistic (1-based)
        i = nq * q - 1 - 0.5
        return _discrete(i, P.logical_and(i == P.floor(i), P.remainder(P.floor(i), 2) == 1))
    if method == "linear":
        v = n1 * q
        if v.dtype.kind != "f":   # an integer q (0 or 1): a position, no interpolation
            return v
    elif method == "midpoint":
        v = 0.5 * (P.floor(n1 * q) + P.ceil(n1 * q))
    elif method == "averaged_inverted_cdf":
        v = nq * q - 1
    else:
        alpha, beta = _CONTINUOUS[method]
        v = nq * q + (alpha + q * (1 - alpha - beta)) - 1
    return _neighbours(method, v, n)


def _neighbours(method: str, v: Tensor, n: Tensor):
    """NumPy's _get_indexes and _get_gamma: the two positions around v (both the last one past
    the end, both the first before the start) and the weight of the second."""
    above, below = v >= P.astype(n - 1, v.dtype), v < 0
    prev = P.where(above, -1.0, P.where(below, 0.0, P.floor(v)))
    nxt = P.where(above, -1.0, P.where(below, 0.0, P.floor(v) + 1))
    g = v - prev    # NumPy's weight counts from the -1 it writes for "the last"
    if method == "midpoint":
        g = P.where(v == P.floor(v), 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        g = P.where(g == 0, 0.5, 1.0)

    def index(t):
        t = P.astype(t, dt.int64)
        return P.where(t < 0, n - 1, t)
    return index(prev), index(nxt), P.astype(g, v.dtype)


def _lerp(a: Tensor, b: Tensor, g: Tensor, x_dtype: dt.DType, weak: bool) -> Tensor:
    """NumPy's _lerp: a + (b - a) g, or b - (b - a)(1 - g) where g >= 1/2 (exact at g = 1). A
    Python-number q is a weak scalar in NumPy: its weights take x's float dtype (1 - g is
    computed before that rounding, as NumPy computes it in Python floats)."""
    upper, g1 = g >= 0.5, 1 - g
    if weak:
        g, g1 = P.astype(g, _float_of(x_dtype)), P.astype(g1, _float_of(x_dtype))
    d = b - a
    return P.where(upper, b - d * g1, a + d * g)


def _quantile(x, q, axis, keepdims, method, dim, interpolation, op: str, scale: float,
              skip_nan: bool) -> Tensor:
    x = ordered_arg(x, op)
    method = _method(method, interpolation, op)
    qn, weak = _host_q(q, scale, op)
    ax = axis_arg(axis, dim, op)
    s, shape = _rows(x, ax, keepdims, op)
    n = s.shape[-1]
    if skip_nan and x.numel() == 0:
        return _nan_full(qn.shape + shape, x.dtype, x.device)
    if n == 0:
        raise IndexError(f"{op}: cannot take a quantile of zero elements (axis {ax} of shape "
                         f"{x.shape})")
    if x.dtype is dt.bool_ and method not in _DISCRETE and not (
            method == "linear" and qn.dtype.kind in "iu"):
        raise TypeError(f"{op}: method {method!r} interpolates, which bool input cannot (NumPy "
                        "refuses to subtract bools); use a method that picks a value, or astype")
    skip_nan = skip_nan and x.dtype.kind == "f"
    s = P.sort(s, axis=-1)
    qt = asarray(qn.reshape(-1), device=x.device)
    if skip_nan:   # each slice's count of numbers: NaNs sort after them
        cnt = P.sum(P.logical_not(P.isnan(s)), axis=-1, keepdims=True)
    else:
        cnt = full((), n, dtype=dt.int64, device=x.device)
    pos = _positions(method, cnt, qt)

    def pick(i):   # an all-NaN slice (count 0) reads its first element, replaced below
        return P.take_along_axis(s, P.maximum(i, 0), -1) if skip_nan else P.take(s, i, axis=-1)
    if isinstance(pos, tuple):
        r = _lerp(pick(pos[0]), pick(pos[1]), pos[2], x.dtype, weak)
    else:
        r = pick(P.where(pos < 0, cnt - 1, pos) if skip_nan else pos)
    if skip_nan:
        r = P.where(cnt == 0, math.nan, r)
    elif x.dtype.kind == "f":
        last = s[..., -1:]
        r = P.where(P.isnan(last), last, r)
    return P.reshape(P.moveaxis(r, -1, 0), qn.shape + shape)


def quantile(x, q, axis=None, keepdims: bool = False, *, method: str = "linear", dim=None,
             interpolation: str | None = None) -> Tensor:
    """NumPy's quantile: the q-th quantiles (q in [0, 1]: a number, a sequence or a tensor)
    of x along axis (None: all; an int or a tuple), q's dimensions first in the result.

    method: any of NumPy's 13 (METHODS): "linear" (default), "lower", "higher", "nearest",
    "midpoint", "inverted_cdf", "averaged_inverted_cdf", "closest_observation",
    "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased", "normal_unbiased";
    PyTorch's `interpolation=` names the first five. NumPy's dtypes: the methods that pick
    a value keep x's dtype; the interpolating ones give x's float dtype for a Python-number q,
    the promotion of x and q's dtype for an array q, float64 for integer x. NaN in a slice
    gives NaN. Differentiable (the gradient goes to the neighbours each result interpolates);
    not with respect to q.

    >>> import tensor as T
    >>> T.quantile(T.tensor([1.0, 2.0, 4.0, 8.0]), 0.5).item()
    3.0
    >>> T.quantile(T.tensor([1, 2, 4, 8]), [0.25, 0.75], method="lower").tolist()
    [1, 4]
    """
    return _quantile(x, q, axis, keepdims, method, dim, interpolation, "quantile", 1, False)


def nanquantile(x, q, axis=None, keepdims: bool = False, *, method: str = "linear", dim=None,
                interpolation: str | None = None) -> Tensor:
    """NumPy's nanquantile: quantile ignoring NaNs (an all-NaN slice gives NaN). For an empty
    x NumPy returns nanmean's result without q's dimensions; this keeps them (NaN-filled).

    >>> import tensor as T
    >>> T.nanquantile(T.tensor([1.0, float("nan"), 3.0]), 0.5).item()
    2.0
    """
    return _quantile(x, q, axis, keepdims, method, dim, interpolation, "nanquantile", 1, True)


def percentile(x, q, axis=None, keepdims: bool = False, *, method: str = "linear", dim=None,
               interpolation: str | None = None) -> Tensor:
    """NumPy's percentile: quantile with q in [0, 100].

    >>> import tensor as T
    >>> T.percentile(T.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), 25).item()
    2.0
    """
    return _quantile(x, q, axis, keepdims, method, dim, interpolation, "percentile", 100, False)


def nanpercentile(x, q, axis=None, keepdims: bool = False, *, method: str = "linear", dim=None,
                  interpolation: str | None = None) -> Tensor:
    """NumPy's nanpercentile: nanquantile with q in [0, 100].

    >>> import tensor as T
    >>> T.nanpercentile(T.tensor([float("nan"), 1.0, 3.0]), 50).item()
    2.0
    """
    return _quantile(x, q, axis, keepdims, method, dim, interpolation, "nanpercentile", 100, True)


COMPOSITES = {f.__name__: f for f in (kthvalue, median, nanmedian, quantile, nanquantile,
                                      percentile, nanpercentile)}
