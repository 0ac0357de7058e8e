"""NumPy's NaN-skipping reductions and scans (nansum, nanprod, nanmean, nanvar, nanstd, nanmax,
nanmin, nanargmax, nanargmin, nancumsum, nancumprod), PyTorch's running scans (cummax, cummin,
logcumsumexp) and NumPy's cov, corrcoef, average, trapezoid, partition and argpartition.

Every function here is a composition of the public (recorded) functions (`P.`, bound by
tensor/public.py, which publishes them as COMPOSITE), so autograd differentiates them in both
modes and both devices run them with no rule or kernel of their own. The nan- forms replace
NaNs with a neutral value through `where` before reducing, so NaN positions get a zero
gradient (nanmax / nanmin of a float tensor that needs no gradient, and nanargmax / nanargmin
of any float tensor, run the kernel-only NaN-skipping folds of tensor/redtable.py instead: one
pass). Integer and bool inputs behave as the plain reductions (they hold no NaN).

>>> import tensor as T
>>> x = T.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]])
>>> T.nansum(x, axis=1).tolist(), T.nanmean(x, axis=1).tolist(), T.nanargmax(x, axis=1).tolist()
([4.0, 2.0], [2.0, 2.0], [2, 2])
>>> T.cummax(T.tensor([1, 3, 2, 3]), dim=0).indices.tolist()
[0, 1, 1, 3]
"""
from __future__ import annotations

import math
import os
import sys
import warnings
from typing import NamedTuple

import numpy as np

from . import _hook, reductions
from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor, tracked
from .axes import norm_axes, norm_axis, norm_axis_tuple
from .creation import arange, full
from .optable import T as P  # tensor's public (recorded) functions, for the compositions
from .reductions import axis_arg
from .sorting import ordered_arg, partition_along, tensor_arg


def _prep(x, axis, dim, op: str) -> tuple[Tensor, tuple]:
    """(x as a tensor, its reduced axes: sorted, normalised), errors naming op."""
    x = tensor_arg(x, op)
    return x, norm_axes(axis_arg(axis, dim, op), x.ndim, op)


def _inexact(x: Tensor) -> bool:
    return x.dtype.kind in "fc"


def _acc(d: dt.DType) -> dt.DType:
    """The dtype 16-bit floats accumulate in (float32, as the library's mean and var)."""
    return dt.float32 if d in (dt.float16, dt.bfloat16) else d


def _out_dtype(x: Tensor, dtype, op: str) -> dt.DType:
    od = x.dtype if dtype is None else dt.dtype(dtype)
    if od.kind not in "fc":
        raise TypeError(f"{op}: dtype must be inexact for a {x.dtype.name} input (NumPy's "
                        f"rule), got {od.name}")
    return od


def _drop(r: Tensor, x: Tensor, axes: tuple) -> Tensor:
    """r (reduced over x's axes, kept as size 1) without those axes."""
    return P.reshape(r, tuple(n for i, n in enumerate(x.shape) if i not in axes))


# ---------------------------------------------------------------- nansum, nanprod, nanmean

def nansum(x, axis=None, dtype=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """NumPy's nansum: sum treating NaN as zero (an all-NaN or empty slice sums to 0). Result
    dtypes as sum's: bool and signed integers give int64, unsigned uint64, floats keep theirs.

    >>> import tensor as T
    >>> T.nansum(T.tensor([1.0, float("nan"), 2.5])).item()
    3.5
    """
    x, axes = _prep(x, axis, dim, "nansum")
    x = P.where(P.isnan(x), 0, x) if _inexact(x) else x
    return P.sum(x, axis=axes, dtype=dtype, keepdims=keepdims)


def nanprod(x, axis=None, dtype=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """NumPy's nanprod: product treating NaN as one (an all-NaN or empty slice gives 1).

    >>> import tensor as T
    >>> T.nanprod(T.tensor([2.0, float("nan"), 3.0])).item()
    6.0
    """
    x, axes = _prep(x, axis, dim, "nanprod")
    x = P.where(P.isnan(x), 1, x) if _inexact(x) else x
    return P.prod(x, axis=axes, dtype=dtype, keepdims=keepdims)


def _sum_count(x: Tensor, axes: tuple, acc: dt.DType):
    """(sum of x's numbers in acc, their count in acc's real dtype, their mask), kept dims."""
    keep = P.logical_not(P.isnan(x))
    xa = P.astype(P.where(keep, x, 0), acc)
    cnt = P.astype(P.sum(keep, axis=axes, keepdims=True), dt.real_of(acc))
    return P.sum(xa, axis=axes, keepdims=True), cnt, xa, keep


def nanmean(x, axis=None, dtype=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """NumPy's nanmean: the mean of each slice's numbers (an all-NaN or empty slice gives NaN,
    without NumPy's warning). Integers and bools give float64 (mean's rule), floats keep their
    dtype (16-bit ones accumulate in float32).

    >>> import tensor as T
    >>> T.nanmean(T.tensor([1.0, float("nan"), 4.0])).item()
    2.5
    """
    x, axes = _prep(x, axis, dim, "nanmean")
    if not _inexact(x):
        return P.mean(x, axis=axes, dtype=dtype, keepdims=keepdims)
    od = _out_dtype(x, dtype, "nanmean")
    s, cnt, _, _ = _sum_count(x, axes, _acc(od))
    r = P.astype(s / cnt, od)
    return r if keepdims else _drop(r, x, axes)


def nanvar(x, axis=None, dtype=None, ddof=0, keepdims: bool = False, *, correction=None,
           dim=None) -> Tensor:
    """NumPy's nanvar: the variance of each slice's numbers, ddof (NumPy) or correction
    (PyTorch) degrees of freedom removed. A slice whose count of numbers is <= ddof gives NaN
    (NumPy's nanvar; the plain var divides by zero there). Complex input gives the real variance
    of |x - mean|; integers give float64 (var's rule).

    >>> import tensor as T
    >>> T.nanvar(T.tensor([1.0, float("nan"), 3.0]), ddof=1).item()
    2.0
    """
    if correction is not None:
        ddof = correction
    x, axes = _prep(x, axis, dim, "nanvar")
    if not _inexact(x):
        return P.var(x, axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims)
    od = _out_dtype(x, dtype, "nanvar")
    s, cnt, xa, keep = _sum_count(x, axes, _acc(od))
    d = P.where(keep, xa - s / cnt, 0)
    sq = P.square(P.real(d)) + P.square(P.imag(d)) if d.dtype.kind == "c" else P.square(d)
    dof = cnt - ddof
    ok = dof > 0
    # a safe divisor, so the NaN of a slice with too few numbers has a zero gradient
    v = P.where(ok, P.sum(sq, axis=axes, keepdims=True) / P.where(ok, dof, 1), math.nan)
    v = P.astype(v, dt.real_of(od))
    return v if keepdims else _drop(v, x, axes)


def nanstd(x, axis=None, dtype=None, ddof=0, keepdims: bool = False, *, correction=None,
           dim=None) -> Tensor:
    """NumPy's nanstd: the square root of nanvar.

    >>> import tensor as T
    >>> T.nanstd(T.tensor([1.0, float("nan"), 3.0])).item()
    1.0
    """
    _prep(x, axis, dim, "nanstd")   # so a bad argument is reported for nanstd, not nanvar
    v = nanvar(x, axis, dtype, ddof, keepdims, correction=correction, dim=dim)
    zero = v == 0   # a constant slice: 0 with a zero gradient (as std's), not sqrt's 0 * inf
    return P.where(zero, 0.0, P.sqrt(P.where(zero, 1.0, v)))


# ---------------------------------------------------------------- nanmax, nanmin, nanarg*

def _nan_extreme(x, axis, keepdims, dim, out, op: str) -> Tensor:
    x, axes = _prep(x, axis, dim, op)
    if any(x.shape[i] == 0 for i in axes):
        raise ValueError(f"{op}: zero-size reduction over axes {axes} of shape {x.shape} has no "
                         "identity")
    big = op == "nanmax"
    if out is not None:   # NumPy's out= (checked before anything runs; the result's dtype is x's)
        ew._prepare_out(op, out, _kept_shape(x, axes, keepdims), x.dtype, x.device)
    if x.dtype.kind == "c":   # NumPy's order: by real part, then imaginary; NaN (either part) skipped
        nan = P.isnan(x)
        r = P.take_along_axis(*_lex_pick(x, P.logical_not(nan), axes, big), -1)
        r = P.reshape(r, _kept_shape(x, axes, keepdims))
        if _hook.capture is None and bool(P.any(P.isnan(r)).item()):
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=_user_level())
        return _into(r, out, op)
    if x.dtype.kind != "f":
        return _into((P.max if big else P.min)(x, axis=axes, keepdims=keepdims), out, op)
    if tracked(x):
        nan = P.isnan(x)
        r = (P.max if big else P.min)(P.where(nan, -math.inf if big else math.inf, x), axis=axes,
                                      keepdims=keepdims)   # NaN positions get a zero gradient
        r = P.where(P.all(nan, axis=axes, keepdims=keepdims), math.nan, r)
    else:   # one pass: the kernel-only fold skips NaNs (tensor/redtable.py INTERNAL)
        r = reductions._keep(reductions._run(op, x, axes, x.dtype), x, axes, keepdims)
    if _hook.capture is None and r.dtype.kind == "f" and _has_nan(r):   # (a capture reads nothing)
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=_user_level())
    return _into(r, out, op)


def _kept_shape(x: Tensor, axes: tuple, keepdims: bool) -> tuple:   # a reduction's shape
    return tuple(1 if i in axes else n for i, n in enumerate(x.shape) if keepdims or i not in axes)


def _into(r: Tensor, out, op: str) -> Tensor:
    """r, or out= (checked first by the caller, as NumPy's) holding r."""
    if out is None:
        return r
    ew.copy_into(out, r, op)
    return out


def _lex_pick(x: Tensor, ok: Tensor | None, axes: tuple, big: bool) -> tuple[Tensor, Tensor]:
    """(x with its reduced axes flattened last, the index there of the first element of the
    slice where ok (None: everywhere) holds that is the largest (big) / smallest by real part,
    then imaginary part; 0 where ok holds nowhere), the indices kept as a last axis of size 1."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    flat = kept + tuple(axes)
    ks = tuple(x.shape[i] for i in kept) + (-1,)
    def last(t):
        return P.reshape(P.permute(t, flat) if flat != tuple(range(t.ndim)) else t, ks)
    x = last(x)
    ext, worst = (P.max, -math.inf) if big else (P.min, math.inf)
    re = P.real(x) if ok is None else P.where(last(ok), P.real(x), worst)
    top = re == ext(re, axis=-1, keepdims=True)
    ok = top if ok is None else P.logical_and(last(ok), top)
    im = P.where(ok, P.imag(x), worst)
    ok = P.logical_and(ok, im == ext(im, axis=-1, keepdims=True))
    return x, P.argmax(ok, axis=-1, keepdims=True)


def _has_nan(r: Tensor) -> bool:
    """Whether r holds a NaN: one host read (a synchronisation on a GPU), NumPy's warning's
    cost; a max over r propagates any NaN (one small kernel, not isnan's and any's two)."""
    n = r.numel()
    if n > 1:
        r = reductions._run("max", r, tuple(range(r.ndim)), r.dtype)
    return n > 0 and math.isnan(r.item())


_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_level() -> int:
    """warnings.warn's stacklevel, from its caller, of the first frame outside this package: the
    user's call, whichever wrappers (torch_spelling, Tensor methods) lie between."""
    f, level = sys._getframe(2), 2
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f, level = f.f_back, level + 1
    return level


def nanmax(x, axis=None, keepdims: bool = False, *, dim=None, out=None) -> Tensor:
    """NumPy's nanmax: the largest number of each slice, ignoring NaNs. An all-NaN slice gives
    NaN and, as NumPy, a RuntimeWarning("All-NaN slice encountered"): a float result is read
    back once to look for a NaN (one small reduction and a host read; a synchronisation on a
    GPU; not while tensor.compile captures a step, which cannot read on the host). Of -0.0 and
    0.0 the first is kept, as NumPy's (np.nanmax([-0.0, 0.0]) is -0.0; in longer slices which
    one comes first follows the kernel's fixed lane order, as NumPy's follows its SIMD layout).
    Integers and bools: max. Complex: NumPy's order (real part, then imaginary; a NaN in either
    part is skipped; the first of equal ones; an all-NaN slice gives its first element), in
    several passes. out=: a tensor of the result's shape whose dtype x's casts to ('same_kind').

    >>> import tensor as T
    >>> T.nanmax(T.tensor([[1.0, float("nan")], [float("nan"), -2.0]]), axis=1).tolist()
    [1.0, -2.0]
    """
    return _nan_extreme(x, axis, keepdims, dim, out, "nanmax")


def nanmin(x, axis=None, keepdims: bool = False, *, dim=None, out=None) -> Tensor:
    """NumPy's nanmin: the smallest number of each slice, ignoring NaNs (all-NaN: NaN and
    NumPy's RuntimeWarning; complex, out= as nanmax).

    >>> import tensor as T
    >>> T.nanmin(T.tensor([3.0, float("nan"), -1.0])).item()
    -1.0
    """
    return _nan_extreme(x, axis, keepdims, dim, out, "nanmin")


def _nan_arg(x, axis, keepdims, dim, out, op: str) -> Tensor:
    x = tensor_arg(x, op)
    axis = axis_arg(axis, dim, op)
    axes = tuple(range(x.ndim)) if axis is None else (norm_axis(axis, x.ndim, op),)
    if x.shape[axis] == 0 if axis is not None else x.numel() == 0:
        raise ValueError(f"{op}: attempt to get {op[3:]} of an empty sequence (shape {x.shape}, "
                         f"axis {axis})")
    if out is not None:
        if isinstance(out, Tensor) and out.dtype.kind not in "iu":
            raise TypeError(f"{op}: out= must have an integer dtype, got {out.dtype.name}")
        ew._prepare_out(op, out, _kept_shape(x, axes, keepdims), dt.int64, x.device)
    bad = ValueError(f"{op}: All-NaN slice encountered (shape {x.shape}, axis {axis})")
    if x.dtype.kind == "c":   # NumPy's: NaN (either part) as -inf / inf, then by real, imaginary
        nan = P.isnan(x)
        if bool(P.any(P.all(nan, axis=axis)).item()):
            raise bad
        fill = complex(-math.inf if op == "nanargmax" else math.inf, 0)
        r = _lex_pick(P.where(nan, fill, x), None, axes, op == "nanargmax")
        r = P.reshape(r[1], _kept_shape(x, axes, keepdims))
    else:   # one pass (tensor/redtable.py INTERNAL; integers: argmax's): -1 marks a slice of NaNs
        r = reductions._run(op if x.dtype.kind == "f" else op[3:], x, axes, dt.int64)
        r = reductions._keep(r, x, axes, keepdims)
        # (a host read: a capture gives up there, and the step stays eager, as before this pass)
        if x.dtype.kind == "f" and r.numel() and reductions._run(
                "min", r, tuple(range(r.ndim)), dt.int64).item() < 0:
            raise bad
    return _into(r, out, op)


def nanargmax(x, axis=None, keepdims: bool = False, *, dim=None, out=None) -> Tensor:
    """NumPy's nanargmax: the int64 index of the first largest number of each slice, ignoring
    NaNs (the flat index when axis is None), in one pass (complex: NumPy's order, in several).
    As NumPy, a slice whose numbers are all -inf gives 0, and an all-NaN slice raises
    ValueError, found by one small reduction of the result and a host read (a synchronisation;
    a step that tensor.compile captures stays eager). out=: an integer tensor of the result's
    shape.

    >>> import tensor as T
    >>> T.nanargmax(T.tensor([float("nan"), 2.0, 5.0, 5.0])).item()
    2
    """
    return _nan_arg(x, axis, keepdims, dim, out, "nanargmax")


def nanargmin(x, axis=None, keepdims: bool = False, *, dim=None, out=None) -> Tensor:
    """NumPy's nanargmin: the index of the first smallest number, ignoring NaNs (as nanargmax).

    >>> import tensor as T
    >>> T.nanargmin(T.tensor([float("nan"), 2.0, -1.0])).item()
    2
    """
    return _nan_arg(x, axis, keepdims, dim, out, "nanargmin")


# ---------------------------------------------------------------- nancumsum, nancumprod

def _nan_scan(x, axis, dtype, dim, op: str, fill: int) -> Tensor:
    x = tensor_arg(x, op)
    axis = axis_arg(axis, dim, op)
    if axis is not None:
        axis = norm_axis(axis, x.ndim, op)
    if _inexact(x):
        x = P.where(P.isnan(x), fill, x)
    return (P.cumsum if fill == 0 else P.cumprod)(x, axis=axis, dtype=dtype)


def nancumsum(x, axis=None, dtype=None, *, dim=None) -> Tensor:
    """NumPy's nancumsum: cumsum treating NaN as zero (flattened when axis is None).

    >>> import tensor as T
    >>> T.nancumsum(T.tensor([1.0, float("nan"), 2.0])).tolist()
    [1.0, 1.0, 3.0]
    """
    return _nan_scan(x, axis, dtype, dim, "nancumsum", 0)


def nancumprod(x, axis=None, dtype=None, *, dim=None) -> Tensor:
    """NumPy's nancumprod: cumprod treating NaN as one (flattened when axis is None).

    >>> import tensor as T
    >>> T.nancumprod(T.tensor([2.0, float("nan"), 3.0])).tolist()
    [2.0, 2.0, 6.0]
    """
    return _nan_scan(x, axis, dtype, dim, "nancumprod", 1)


# ---------------------------------------------------------------- cummax, cummin, logcumsumexp

class CumResult(NamedTuple):
    """cummax's and cummin's (values, indices), as torch.return_types.cummax."""
    values: Tensor
    indices: Tensor


def _scan_dim(x, dim, axis, op: str) -> int:
    d = axis_arg(axis, dim, op)
    if d is None:
        raise TypeError(f"{op}: missing the dim to scan along")
    return norm_axis(d, max(x.ndim, 1), op)


def _doubling(ys: tuple, combine) -> tuple:
    """The inclusive scan of the tensors ys along their last axis by ceil(log2 n) rounds of
    combine(earlier, later) over pairs d = 1, 2, 4, ... apart (Hillis and Steele): O(n log n)
    elementwise work in few launches, for an associative combine of no kernel of its own."""
    n, d = ys[0].shape[-1], 1
    while d < n:
        new = combine(tuple(y[..., :n - d] for y in ys), tuple(y[..., d:] for y in ys))
        ys = tuple(P.concatenate([y[..., :d], z], axis=-1) for y, z in zip(ys, new))
        d *= 2
    return ys


def _cum_extreme(x, dim, axis, op: str) -> CumResult:
    x = ordered_arg(x, op)
    a = _scan_dim(x, dim, axis, op)
    if x.ndim == 0:
        return CumResult(P.copy(x), full((), 0, dtype=dt.int64, device=x.device))
    v = P.moveaxis(x.detach(), a, -1)
    i = P.broadcast_to(arange(v.shape[-1], dtype=dt.int64, device=x.device), v.shape)
    big = op == "cummax"

    def combine(early, late):   # PyTorch's: the later element wins ties, and any NaN wins
        (va, ia), (vb, ib) = early, late
        take = vb >= va if big else vb <= va
        if x.dtype.kind == "f":
            take = P.logical_or(take, P.isnan(vb))
        return P.where(take, vb, va), P.where(take, ib, ia)
    idx = P.moveaxis(_doubling((v, i), combine)[1], -1, a)
    return CumResult(P.take_along_axis(x, idx, a), idx)


def cummax(x, dim=None, *, axis=None) -> CumResult:
    """PyTorch's cummax: (values, indices) of the running maximum along dim. As PyTorch: among
    equal values the latest index is taken, and a NaN, once met, is the maximum (each later NaN
    takes over its index). The gradient goes to the element each value was taken from.

    >>> import tensor as T
    >>> r = T.cummax(T.tensor([1.0, 3.0, 2.0, 3.0]), dim=0)
    >>> r.values.tolist(), r.indices.tolist()
    ([1.0, 3.0, 3.0, 3.0], [0, 1, 1, 3])
    """
    return _cum_extreme(x, dim, axis, "cummax")


def cummin(x, dim=None, *, axis=None) -> CumResult:
    """PyTorch's cummin: (values, indices) of the running minimum along dim (ties and NaNs as
    cummax).

    >>> import tensor as T
    >>> T.cummin(T.tensor([2, 1, 3, 1]), dim=0).indices.tolist()
    [0, 1, 1, 3]
    """
    return _cum_extreme(x, dim, axis, "cummin")


def logcumsumexp(x, dim=None, *, axis=None) -> Tensor:
    """PyTorch's logcumsumexp: log(cumsum(exp(x))) along dim, computed stably by running
    logaddexp, so a prefix far below the largest value keeps its own scale. Integers and bools
    give their float dtype (float64; PyTorch refuses them), as logsumexp.

    >>> import tensor as T
    >>> T.logcumsumexp(T.tensor([-1000.0, 0.0, 0.0]), dim=0).tolist()[:2]
    [-1000.0, 0.0]
    """
    op = "logcumsumexp"
    x = ordered_arg(x, op)
    a = _scan_dim(x, dim, axis, op)
    if x.dtype.kind != "f":
        x = P.astype(x, dt.float_of(x.dtype))
    if x.ndim == 0:
        return P.copy(x)
    y = _doubling((P.moveaxis(x, a, -1),), lambda e, la: (P.logaddexp(e[0], la[0]),))[0]
    return P.moveaxis(y, -1, a)


# ---------------------------------------------------------------- average, cov, corrcoef

def _weights_view(a: Tensor, w: Tensor, axis, op: str) -> tuple[Tensor, tuple | None]:
    """(w broadcastable against a, the normalised axes) by NumPy's rules for weights whose
    shape differs from a's: they lie along the given axes, in that order."""
    axes = None if axis is None else norm_axis_tuple(axis, a.ndim, op)
    if a.shape == w.shape:
        return w, axes
    if axes is None:
        raise TypeError(f"{op}: axis must be given when the shapes of a {a.shape} and weights "
                        f"{w.shape} differ")
    if w.shape != tuple(a.shape[i] for i in axes):
        raise ValueError(f"{op}: shape of weights {w.shape} must be consistent with shape of a "
                         f"{a.shape} along axes {axes}")
    order = tuple(int(i) for i in np.argsort(axes))
    w = P.permute(w, order) if order != tuple(range(len(order))) else w
    return P.reshape(w, tuple(s if i in axes else 1 for i, s in enumerate(a.shape))), axes


def average(a, axis=None, weights=None, returned: bool = False, *, keepdims: bool = False):
    """NumPy's average: the (weighted) mean along axis (None: all; an int or a tuple). weights
    are of a's shape or lie along axis; returned=True also gives the sum of the weights,
    broadcast to the result's shape. Dtypes as NumPy's: integers and bools give float64, else
    the result type of a and the weights. Weights that sum to zero raise ZeroDivisionError
    (a host read of the sums, as NumPy's check).

    >>> import tensor as T
    >>> T.average(T.tensor([1.0, 2.0, 4.0]), weights=T.tensor([1.0, 1.0, 2.0])).item()
    2.75
    """
    op = "average"
    a = tensor_arg(a, op)
    if weights is None:
        axes = norm_axes(axis, a.ndim, op)
        avg = P.mean(a, axis=axes, keepdims=keepdims)
        scl = full(avg.shape, math.prod(a.shape[i] for i in axes), dtype=avg.dtype, device=a.device)
        return (avg, scl) if returned else avg
    w = tensor_arg(weights, op, a.device)
    floor = (dt.float64,) if a.dtype.kind in "biu" else ()
    rd = dt.result_type(a.dtype, w.dtype, *floor)
    w, axes = _weights_view(a, w, axis, op)
    scl = P.sum(w, axis=axes, dtype=rd, keepdims=keepdims)
    if bool(P.any(scl == 0).item()):
        raise ZeroDivisionError(f"{op}: weights sum to zero, can't be normalized")
    avg = P.sum(P.astype(a, rd) * P.astype(w, rd), axis=axes, keepdims=keepdims) / scl
    if returned:
        return avg, (scl if scl.shape == avg.shape else P.copy(P.broadcast_to(scl, avg.shape)))
    return avg


def _rows_of(m, dtype: dt.DType, rowvar: bool, op: str, what: str) -> Tensor:
    """m as the 2-d (variables, observations) tensor NumPy 2's cov makes of it: with
    rowvar=False a 2-d m is transposed (a single row too: one observation of each column's
    variable), y as NumPy still does it (unless it is one row)."""
    x = P.astype(m, dtype)
    if x.ndim > 2:
        raise ValueError(f"{op}: {what} has more than 2 dimensions (shape {x.shape})")
    flip = x.ndim == 2 if what == "m" else x.ndim < 2 or x.shape[0] != 1
    x = P.atleast_2d(x) if x.ndim < 2 else x
    return P.matrix_transpose(x) if not rowvar and flip else x


def _check_weights(w, n: int, op: str, what: str, integral: bool) -> Tensor:
    w = P.astype(tensor_arg(w, op), dt.float64)
    if w.ndim > 1:
        raise ValueError(f"{op}: cannot handle multidimensional {what} (shape {w.shape})")
    if w.shape[0:1] != (n,):
        raise ValueError(f"{op}: incompatible numbers of samples ({n}) and {what} {w.shape}")
    host = w.numpy()   # NumPy's value checks: a host read
    if integral and not np.all(host == np.around(host)):
        raise TypeError(f"{op}: {what} must be integer")
    if np.any(host < 0):
        raise ValueError(f"{op}: {what} cannot be negative")
    return w


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None, *, dtype=None, correction=None) -> Tensor:
    """NumPy's cov: the covariance matrix of the variables in m's rows (rowvar=False: columns),
    y's variables appended; normalised by N - ddof (ddof default: 0 with bias, else 1; PyTorch's
    correction= names it too), fweights (integer frequencies) and aweights (observation
    weights) as NumPy. NumPy's dtype: float64 (complex128 for complex input) unless dtype is
    given, so float32 input gives float64 (torch.cov keeps float32). One variable gives a 0-d
    result. The weights' value checks read them on the host.

    >>> import tensor as T
    >>> T.cov(T.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    op = "cov"
    m = tensor_arg(m, op)
    if correction is not None:
        if ddof is not None:
            raise TypeError(f"{op}: give ddof or correction, not both")
        ddof = correction
    if ddof is not None and int(ddof) != ddof:
        raise ValueError(f"{op}: ddof must be an integer, got {ddof!r}")
    ys = () if y is None else (tensor_arg(y, op, m.device),)
    if dtype is None:
        dtype = dt.result_type(m.dtype, *(t.dtype for t in ys), dt.float64)
    dtype = dt.dtype(dtype)
    x = _rows_of(m, dtype, rowvar, op, "m")
    if x.shape[0] == 0:
        return full((0, 0), 0, dtype=dt.float64, device=m.device)
    if ys:
        x = P.concatenate([x, _rows_of(ys[0], dtype, rowvar, op, "y")], axis=0)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    n = x.shape[1]
    w = aw = None
    if fweights is not None:
        w = _check_weights(fweights, n, op, "fweights", True)
    if aweights is not None:
        aw = _check_weights(aweights, n, op, "aweights", False)
        w = aw if w is None else w * aw
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    xc = P.astype(x - P.expand_dims(avg, 1), x.dtype)   # NumPy's X -= avg keeps X's dtype
    if w is None:
        fact = n - ddof
        scale = 1.0 / fact if fact > 0 else math.inf
    else:
        w_sum = w_sum[0]
        if w_sum.dtype.kind == "c":   # (the weights are real; average returns x's dtype)
            w_sum = P.real(w_sum)
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * P.sum(w * aw) / w_sum
        scale = 1.0 / P.where(fact > 0, fact, 0.0)
    xt = P.matrix_transpose(xc if w is None else xc * w)
    c = P.matmul(xc, P.conj(xt) if xt.dtype.kind == "c" else xt)
    c = c * (scale if w is None else P.astype(scale, dt.real_of(c.dtype)))
    return P.squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True, *, dtype=None) -> Tensor:
    """NumPy's corrcoef: the Pearson correlation coefficients, cov(x, y, rowvar) over the
    outer product of the standard deviations, clipped to [-1, 1] (real and imaginary parts
    separately for complex input). One variable gives c / c (1.0, or NaN), as NumPy.

    >>> import tensor as T
    >>> T.corrcoef(T.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    sd = P.sqrt(P.real(P.diagonal(c)))
    c = c / P.expand_dims(sd, 1) / P.expand_dims(sd, 0)
    if c.dtype.kind != "c":
        return P.clip(c, -1, 1)
    return P.clip(P.real(c), -1, 1) + P.clip(P.imag(c), -1, 1) * 1j


# ---------------------------------------------------------------- trapezoid

def trapezoid(y, x=None, dx=1.0, axis: int = -1) -> Tensor:
    """NumPy's trapezoid: the integral of y along axis by the trapezoidal rule, at the sample
    points x (1-d along axis, or y's shape) or spaced dx apart. Dtypes as NumPy's (integer y
    with the default dx gives float64).

    >>> import tensor as T
    >>> T.trapezoid(T.tensor([1.0, 2.0, 3.0]), x=T.tensor([0.0, 1.0, 3.0])).item()
    6.5
    """
    op = "trapezoid"
    y = tensor_arg(y, op)
    a = norm_axis(axis, y.ndim, op)
    if x is None:
        d = dx
    else:
        x = tensor_arg(x, op, y.device)
        if x.ndim == 1:
            d = P.diff(x)
            d = P.reshape(d, tuple(d.shape[0] if i == a else 1 for i in range(y.ndim)))
        else:
            d = P.diff(x, axis=a)
    hi = y[(slice(None),) * a + (slice(1, None),)]
    lo = y[(slice(None),) * a + (slice(None, -1),)]
    return P.sum(d * (hi + lo) / 2.0, axis=a)


# ---------------------------------------------------------------- partition, argpartition

def _kth(kth, x: Tensor, axis, op: str) -> tuple[Tensor, int]:
    """(x as sorted along one axis: flattened for axis None, the axis), kth checked as NumPy."""
    if isinstance(kth, Tensor):
        kth = kth.tolist()
    k = np.asarray(kth)
    if k.dtype.kind == "b":
        raise ValueError(f"{op}: booleans unacceptable as partition index")
    if k.dtype.kind not in "iu":
        raise TypeError(f"{op}: partition index must be integer, got {kth!r:.40}")
    if k.ndim > 1:
        raise ValueError(f"{op}: kth must be an integer or a 1-d sequence, got shape {k.shape}")
    if axis is None:
        x, axis = P.reshape(x, (-1,)), 0
    a = norm_axis(axis, x.ndim, op)
    n = x.shape[a]
    if x.numel():   # NumPy checks nothing for an empty array
        for v in k.reshape(-1).tolist():
            if not -n <= v < n:
                raise ValueError(f"{op}: kth(={v + n if v < 0 else v}) out of bounds ({n})")
    return x, a


def partition(a, kth, axis=-1, kind: str = "introselect", order=None) -> Tensor:
    """NumPy's partition: a copy of a whose element at each kth position (an int or a sequence;
    negative counts from the end) is the one a sorted copy would hold there, smaller-or-equal
    ones before it and greater-or-equal ones after (NaN last): by a selection on the CPU
    (O(n) a row), by the stable sort elsewhere (a sorted axis is one such partition). axis=None
    partitions the flattened array. Differentiable (a gather of a by argpartition's indices).

    >>> import tensor as T
    >>> T.partition(T.tensor([3, 4, 2, 1]), 2)[2].item()
    3
    """
    op = "partition"
    if order is not None:
        raise ValueError(f"{op}: order= needs structured arrays, which tensors do not have")
    x, ax = _kth(kth, tensor_arg(a, op), axis, op)
    return partition_along(x, _kth_list(kth), ax, True)[0]


def argpartition(a, kth, axis=-1, kind: str = "introselect", order=None) -> Tensor:
    """NumPy's argpartition: the int64 indices that partition a (as partition: a selection on
    the CPU, the stable sort's elsewhere).

    >>> import tensor as T
    >>> T.argpartition(T.tensor([3, 4, 2, 1]), 1)[:2].tolist()
    [3, 2]
    """
    op = "argpartition"
    if order is not None:
        raise ValueError(f"{op}: order= needs structured arrays, which tensors do not have")
    x, ax = _kth(kth, tensor_arg(a, op), axis, op)
    return partition_along(x, _kth_list(kth), ax, False)[1]


def _kth_list(kth) -> list:
    return np.asarray(kth.tolist() if isinstance(kth, Tensor) else kth).reshape(-1).tolist()


COMPOSITES = {f.__name__: f for f in (
    nansum, nanprod, nanmean, nanvar, nanstd, nanmax, nanmin, nanargmax, nanargmin, nancumsum,
    nancumprod, cummax, cummin, logcumsumexp, average, cov, corrcoef, trapezoid, partition,
    argpartition)}
