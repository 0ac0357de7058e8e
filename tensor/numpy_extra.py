"""NumPy's comparison, set, searching and index-helper functions, built from the public
(recorded) ops, so autograd records every step and they need no derivative rule of their own
(public.py's COMPOSITE): interp is differentiable with respect to x, xp and fp; select, choose,
piecewise, compress and extract with respect to the values they pick.

NumPy 2's names, signatures and output dtypes (index arrays int64); where PyTorch has a
function of the same name, its keyword spellings are accepted too (each docstring says which
positional order it follows). Sizes that depend on the data (unique, intersect1d, nonzero...)
are read on the host, a synchronisation on a GPU, as NumPy and PyTorch do. The in-place ones
(place, putmask, fill_diagonal) write through the public setitem, so autograd's in-place checks
apply. The index helpers are in tensor/numpy_extra2.py, which shares this module's registries.

>>> import tensor as T
>>> T.isin(T.tensor([1, 2, 3]), T.tensor([3, 1])).tolist()
[True, False, True]
>>> v, inv = T.unique(T.tensor([3, 1, 3]), return_inverse=True)
>>> v.tolist(), inv.tolist()
([1, 3], [1, 0, 1])
>>> T.interp(T.tensor([0.5, 3.0]), T.tensor([0.0, 1.0]), T.tensor([0.0, 10.0])).tolist()
[5.0, 10.0]
"""
from __future__ import annotations

import math

from . import dtypes as dt
from ._tensor import Tensor
from .axes import AxisError, norm_axis
from .convert import asarray
from .creation import arange, full
from .numpy_extra2 import (  # noqa: F401  (public.py publishes them)
    COMPOSITES,
    NOT_METHODS,
    arrs,
    as_int,
    cast,
    device_of,
    flag,
    host,
    is_scalar,
    pub,
    ravel,
)
from .optable import T as P  # tensor's public (recorded) functions
from .reductions import axis_arg
from .sorting import sort_flat, tensor_arg
from .views import broadcast_shapes

# ---------------------------------------------------------------- comparison

def _nan(v):
    return P.isnan(v) if isinstance(v, Tensor) else v != v


@pub(method=True)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise |a - b| <= atol + rtol * |b| (bool), as NumPy's and PyTorch's isclose (same
    positional order): b is first promoted to a floating dtype; infinities are close only to
    themselves; NaN is close to NaN only with equal_nan. Complex compares by modulus.

    >>> import tensor as T
    >>> T.isclose(T.tensor([1.0, float("nan")]), T.tensor([1.0 + 1e-9, float("nan")]),
    ...           equal_nan=True).tolist()
    [True, True]
    """
    op = "isclose"
    flag(equal_nan, "equal_nan", op)
    if is_scalar(a) and is_scalar(b):
        a = tensor_arg(a, op)
    x = a if is_scalar(a) else tensor_arg(a, op, device_of(b))
    if is_scalar(b):
        y = complex(b) if isinstance(b, complex) else float(b)
        absy, fin = abs(y), math.isfinite(abs(y))
    else:
        y = tensor_arg(b, op, device_of(x))
        y = cast(y, dt.result_type(y, 1.0))
        absy, fin = P.abs(y), P.isfinite(y)
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x.device != y.device:
        raise ValueError(f"{op}: a is on {x.device} and b on {y.device}")
    tol = P.add(P.multiply(absy, rtol), atol) if isinstance(absy, Tensor) else atol + rtol * absy
    close = P.less_equal(P.abs(P.subtract(x, y)), tol)
    if fin is not True:
        close = P.logical_and(close, fin) if isinstance(fin, Tensor) else P.logical_and(close, False)
    close = P.logical_or(close, P.equal(x, y))
    if equal_nan:
        close = P.logical_or(close, P.logical_and(_nan(x), _nan(y)))
    return close


@pub(method=True)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of isclose(a, b, ...) holds (a Python bool, as NumPy and PyTorch).

    >>> import tensor as T
    >>> T.allclose(T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    return bool(P.all(isclose(a, b, rtol, atol, equal_nan)).item())


@pub()
def array_equal(a1, a2, equal_nan: bool = False) -> bool:
    """True when a1 and a2 have the same shape and elements (a Python bool); equal_nan=True
    counts NaN equal to NaN (a complex NaN: either part NaN).

    >>> import tensor as T
    >>> T.array_equal(T.tensor([1.0, float("nan")]), T.tensor([1.0, float("nan")]), equal_nan=True)
    True
    """
    op = "array_equal"
    flag(equal_nan, "equal_nan", op)
    a1, a2 = arrs(op, a1, a2)
    if a1.shape != a2.shape:
        return False
    eq = P.equal(a1, a2)
    if equal_nan and (a1.dtype.kind in "fc" or a2.dtype.kind in "fc"):
        eq = P.logical_or(eq, P.logical_and(P.isnan(a1), P.isnan(a2)))
    return bool(P.all(eq).item())


@pub()
def array_equiv(a1, a2) -> bool:
    """True when a1 and a2 broadcast to one shape and are equal there (a Python bool).

    >>> import tensor as T
    >>> T.array_equiv(T.tensor([1, 2]), T.tensor([[1, 2], [1, 2]]))
    True
    """
    a1, a2 = arrs("array_equiv", a1, a2)
    try:
        broadcast_shapes(a1.shape, a2.shape, op="array_equiv")
    except ValueError:
        return False
    return bool(P.all(P.equal(a1, a2)).item())


# ---------------------------------------------------------------- unique and sets

def _row_keys(rows: Tensor) -> list:
    """lexsort keys that order the rows of a 2-d tensor lexicographically (column 0 first)."""
    return [rows[:, j] for j in range(rows.shape[1] - 1, -1, -1)]


def _lexsort(keys: list, axis: int) -> Tensor:
    order = P.argsort(keys[0], axis=axis)
    for k in keys[1:]:
        order = P.take_along_axis(order, P.argsort(P.take_along_axis(k, order, axis), axis=axis),
                                  axis)
    return order


@pub(method=True)
def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None, *, equal_nan: bool = True,
           sorted: bool = True, dim=None):  # noqa: A002  (NumPy's and PyTorch's keyword)
    """NumPy's unique: the sorted distinct elements of ar (flattened), or with axis the distinct
    slices along axis in lexicographic order, and optionally the index of each one's first
    occurrence, the inverse (ar's shape for axis=None, 1-d along axis, as NumPy 2 and PyTorch)
    and the counts, as a tuple (values, [index], [inverse], [counts]).

    Positional order is NumPy's; PyTorch's keywords dim= (for axis), sorted=, return_inverse=
    and return_counts= are accepted (the result is sorted either way). equal_nan=True (NumPy's
    default) makes all NaNs one value (a complex value with a NaN part, as NumPy); along an
    axis of an input of 2 or more dimensions, slices holding NaN are each distinct, as NumPy's
    (a 1-d input with an axis is treated as axis=None, as NumPy's). -0.0 equals 0.0.

    >>> import tensor as T
    >>> [t.tolist() for t in T.unique(T.tensor([2, 1, 2]), return_index=True, return_counts=True)]
    [[1, 2], [1, 0], [1, 2]]
    """
    op = "unique"
    for name, v in (("return_index", return_index), ("return_inverse", return_inverse),
                    ("return_counts", return_counts), ("equal_nan", equal_nan),
                    ("sorted", sorted)):
        flag(v, name, op)
    axis = axis_arg(axis, dim, op)
    x = tensor_arg(ar, op)
    if axis is not None and x.ndim == 1:   # NumPy 2: a 1-d input takes the flat path (equal_nan)
        norm_axis(axis, x.ndim, op)
        axis = None
    if axis is None:
        rows, f = None, ravel(x)
        s, perm = sort_flat(f, op)
        new = P.not_equal(s[1:], s[:-1])
        if equal_nan and x.dtype.kind == "f" and s.shape[0] > 1:
            # a NaN after a NaN starts no group: NaNs sort last, from the first one's position
            first = int(P.searchsorted(s.detach(), full((1,), math.nan, dtype=x.dtype,
                                                         device=x.device))[0].item())
            if first < s.shape[0] - 1:
                new[first:] = False
        elif equal_nan and x.dtype.kind == "c":   # a value with a NaN part: is NaN
            nan = P.isnan(s)
            new = P.logical_and(new, P.logical_not(P.logical_and(nan[1:], nan[:-1])))
    else:
        a = norm_axis(axis, x.ndim, op)
        m = x.shape[a]
        rows = P.reshape(P.moveaxis(x, a, 0), (m, math.prod(x.shape) // max(m, 1)))
        perm = _lexsort(_row_keys(rows), 0) if rows.shape[1] else arange(m, device=x.device)
        s = P.take(rows, perm, axis=0)
        new = P.any(P.not_equal(s[1:], s[:-1]), axis=1)
    n = perm.shape[0]
    new = P.concat([full((min(n, 1),), True, dtype=dt.bool_, device=x.device), new])
    starts = P.nonzero(new)[0]
    if axis is None:
        values = P.take(s, starts)
    else:
        values = P.take(x, P.take(perm, starts), axis=a)
    out = [values]
    if return_index:
        out.append(P.take(perm, starts))
    if return_inverse:
        inverse = P.take(P.subtract(P.cumsum(cast(new, dt.int64)), 1), P.argsort(perm))
        out.append(P.reshape(inverse, x.shape) if axis is None else inverse)
    if return_counts:
        out.append(P.diff(starts, append=full((1,), n, dtype=dt.int64, device=x.device)))
    return out[0] if len(out) == 1 else tuple(out)


@pub()
def isin(element=None, test_elements=None, assume_unique: bool = False, invert: bool = False, *,
         kind=None, elements=None) -> Tensor:
    """Whether each element of `element` is in test_elements (bool, element's shape), as
    NumPy's isin and PyTorch's isin(elements, test_elements) (same positional order; PyTorch's
    keyword elements= is accepted). Equality is ==: NaN is in nothing, -0.0 is 0.0.
    kind ('sort' or 'table') is accepted and ignored: both give this result.

    >>> import tensor as T
    >>> T.isin(T.tensor([[1, 5], [2, 0]]), [0, 1], invert=True).tolist()
    [[False, True], [True, False]]
    """
    op = "isin"
    if elements is not None:
        if element is not None:
            raise TypeError(f"{op}: give element or elements, not both")
        element = elements
    if element is None or test_elements is None:
        raise TypeError(f"{op}: needs element and test_elements")
    flag(assume_unique, "assume_unique", op)
    flag(invert, "invert", op)
    if kind not in (None, "sort", "table"):
        raise ValueError(f"{op}: kind must be None, 'sort' or 'table', got {kind!r}")
    e, t = arrs(op, element, test_elements)
    d = dt.result_type(e, t)
    # A signed int with uint64 promotes to float64, which merges values above 2**53; compare
    # exactly in int64 instead: uint64 values past int64's range wrap negative, and a negative
    # element (a real negative or a wrapped uint64) can only match values of the other kind.
    exact = d.kind == "f" and e.dtype.kind in "iu" and t.dtype.kind in "iu"
    if exact:
        d = dt.int64
    if d.kind in "iu" and not exact and t.numel() and kind != "sort":
        found = _isin_table(e, t, d)
        if found is not None:
            return P.logical_not(found) if invert else found
    tf = P.sort(ravel(cast(t, d)))
    ec = cast(e, d)
    if tf.shape[0] == 0:
        found = full(e.shape, False, dtype=dt.bool_, device=e.device)
    else:
        at = P.clip(P.searchsorted(tf, ec), 0, tf.shape[0] - 1)
        found = P.equal(P.take(tf, at), ec)
        if exact:
            found = P.logical_and(found, P.greater_equal(ec, 0))
    return P.logical_not(found) if invert else found


def _isin_table(e: Tensor, t: Tensor, d: dt.DType):
    """isin of integers (common dtype d) by a lookup table over test_elements' range, as
    NumPy's kind='table': O(n) where the search is O(n log m) (a 2^18 isin in 1000 values was
    18x NumPy). None when the range is over 6x the sizes (NumPy's bound), then isin searches.
    Indices are formed in int64, or in d when d is 64 bits wide (values - min < the range)."""
    t = ravel(t).detach()
    lo, hi = (int(P.min(t).item()), int(P.max(t).item()))
    if hi - lo >= 6 * (e.numel() + t.numel()):
        return None
    w = d if d.itemsize == 8 else dt.int64
    table = full((hi - lo + 1,), False, dtype=dt.bool_, device=t.device)
    table[cast(P.subtract(cast(t, w), lo), dt.int64)] = True
    ew_ = cast(e.detach(), w)
    ec = P.clip(ew_, lo, hi)   # in range of the table; equal to e only where e was in it
    return P.logical_and(P.take(table, cast(P.subtract(ec, lo), dt.int64)), P.equal(ec, ew_))


def _concat_flat(op: str, ar1, ar2) -> tuple:
    a, b = arrs(op, ar1, ar2)
    d = dt.result_type(a, b)
    return cast(ravel(a), d), cast(ravel(b), d)


@pub()
def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False):
    """The sorted values in both ar1 and ar2 (flattened; NaN in neither), and with
    return_indices the index of each one's first occurrence in ar1 and in ar2.

    >>> import tensor as T
    >>> [t.tolist() for t in T.intersect1d([1, 3, 4, 3], [3, 1, 2, 1], return_indices=True)]
    [[1, 3], [0, 1], [1, 0]]
    """
    op = "intersect1d"
    flag(assume_unique, "assume_unique", op)
    flag(return_indices, "return_indices", op)
    a, b = _concat_flat(op, ar1, ar2)
    if not assume_unique:
        a, ia = unique(a, return_index=True)
        b, ib = unique(b, return_index=True)
    aux = P.concat([a, b])
    order = P.argsort(aux)
    aux = P.take(aux, order)
    same = P.nonzero(P.equal(aux[1:], aux[:-1]))[0]
    values = P.take(aux, same)
    if not return_indices:
        return values
    i1 = P.take(order, same)
    i2 = P.subtract(P.take(order, P.add(same, 1)), a.shape[0])
    if not assume_unique:
        i1, i2 = P.take(ia, i1), P.take(ib, i2)
    return values, i1, i2


@pub()
def union1d(ar1, ar2) -> Tensor:
    """The sorted values in ar1 or ar2 (flattened), each once (NaNs as one).

    >>> import tensor as T
    >>> T.union1d([3, 1], [2, 1]).tolist()
    [1, 2, 3]
    """
    return unique(P.concat(list(_concat_flat("union1d", ar1, ar2))))


@pub()
def setdiff1d(ar1, ar2, assume_unique: bool = False) -> Tensor:
    """The values of ar1 not in ar2: sorted and unique, or with assume_unique ar1's order.

    >>> import tensor as T
    >>> T.setdiff1d([5, 1, 3, 1], [3]).tolist()
    [1, 5]
    """
    op = "setdiff1d"
    flag(assume_unique, "assume_unique", op)
    a, b = arrs(op, ar1, ar2)
    a = ravel(a) if assume_unique else unique(a)
    return P.getitem(a, isin(a, b, invert=True))


@pub()
def setxor1d(ar1, ar2, assume_unique: bool = False) -> Tensor:
    """The sorted values in exactly one of ar1 and ar2 (NaNs of both kept, NaN != NaN).

    >>> import tensor as T
    >>> T.setxor1d([1, 2, 3], [2, 4]).tolist()
    [1, 3, 4]
    """
    op = "setxor1d"
    flag(assume_unique, "assume_unique", op)
    a, b = _concat_flat(op, ar1, ar2)
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = P.sort(P.concat([a, b]))
    if aux.shape[0] == 0:
        return aux
    edge = full((1,), True, dtype=dt.bool_, device=aux.device)
    flg = P.concat([edge, P.not_equal(aux[1:], aux[:-1]), edge])
    return P.getitem(aux, P.logical_and(flg[1:], flg[:-1]))


# ---------------------------------------------------------------- sorting and searching

@pub()
def lexsort(keys, axis: int = -1) -> Tensor:
    """The int64 indices that sort by several keys (the last key primary, the first the least
    significant), stably along axis; keys is a sequence of same-shaped tensors or a tensor
    whose first axis enumerates them.

    >>> import tensor as T
    >>> T.lexsort([T.tensor([9, 4, 0]), T.tensor([1, 0, 1])]).tolist()
    [1, 2, 0]
    """
    op = "lexsort"
    ks = list(P.unbind(keys, 0)) if isinstance(keys, Tensor) and keys.ndim else (
        [keys] if isinstance(keys, Tensor) else list(keys))
    if not ks:
        raise TypeError(f"{op}: needs a sequence of keys with len > 0")
    ks = arrs(op, *ks)
    if len({k.shape for k in ks}) > 1:
        raise ValueError(f"{op}: all keys need to be the same shape, got "
                         f"{[k.shape for k in ks]}")
    if ks[0].ndim == 0:
        raise ValueError(f"{op}: the keys are 0-d; give 1-d or higher keys")
    return _lexsort(ks, norm_axis(axis, ks[0].ndim, op))


@pub()
def sort_complex(a) -> Tensor:
    """a sorted along its last axis (real part first, then imaginary), as a complex tensor:
    complex64 for int8, uint8, int16, uint16; complex128 for other real dtypes (NumPy's rule).

    >>> import tensor as T
    >>> T.sort_complex(T.tensor([2 + 1j, 1 + 3j, 2 - 1j])).tolist()
    [(1+3j), (2-1j), (2+1j)]
    """
    x = tensor_arg(a, "sort_complex")
    if x.ndim == 0:
        raise AxisError("sort_complex: axis -1 is out of bounds for a 0-d tensor")   # NumPy's
    s = P.sort(x)
    if x.dtype.kind == "c":
        return s
    small = x.dtype in (dt.int8, dt.uint8, dt.int16, dt.uint16)
    return P.astype(s, dt.complex64 if small else dt.complex128)


def _bins_1d(bins, x: Tensor, op: str, what: str) -> Tensor:
    b = tensor_arg(bins, op, x.device)
    if b.ndim != 1:
        raise ValueError(f"{op}: {what} must be 1-d, got shape {b.shape}")
    if b.dtype.kind == "c" or x.dtype.kind == "c":
        raise TypeError(f"{op}: complex input has no order ({x.dtype}, {b.dtype})")
    if b.device != x.device:
        raise ValueError(f"{op}: input is on {x.device} and {what} on {b.device}")
    return b


@pub()
def digitize(x, bins, right: bool = False) -> Tensor:
    """The int64 index of the bin of each value of x: bins[i-1] <= x < bins[i] for increasing
    bins (bins[i-1] < x <= bins[i] with right=True), mirrored for decreasing bins (NumPy's
    rule; monotonicity is checked on the host).

    >>> import tensor as T
    >>> T.digitize(T.tensor([0.5, 1.0, 3.5]), T.tensor([1.0, 2.0, 3.0])).tolist()
    [0, 1, 3]
    """
    op = "digitize"
    flag(right, "right", op)
    x = tensor_arg(x, op)
    b = _bins_1d(bins, x, op, "bins")
    side = "left" if right else "right"
    if b.shape[0] > 1:   # NumPy's test, where a comparison with NaN is False: [0, 1, nan] rises
        lo, hi, ne = b[:-1], b[1:], P.not_equal(b[1:], b[0])
        flat, rising, fall, rise = host(P.stack([
            P.logical_not(P.any(ne)), P.less(b[0], P.take(hi, P.argmax(ne))),
            P.any(P.greater(lo, hi)), P.any(P.less(lo, hi))]))
        inc = flat or (rising and not fall)
        if not inc and (rising or rise):
            raise ValueError(f"{op}: bins must be monotonically increasing or decreasing")
        if not inc:
            return P.rsub(P.searchsorted(P.flip(b, 0), x, side=side), b.shape[0])
    return P.searchsorted(b, x, side=side)


@pub()
def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """PyTorch's bucketize (its signature): the index of each input value among the ascending
    1-d boundaries, boundaries[i-1] < v <= boundaries[i] (right=False) or
    boundaries[i-1] <= v < boundaries[i] (right=True); int64, or int32 with out_int32.

    >>> import tensor as T
    >>> T.bucketize(T.tensor([1, 5, 9]), T.tensor([1, 3, 5, 7, 9]), right=True).tolist()
    [1, 3, 5]
    """
    op = "bucketize"
    flag(out_int32, "out_int32", op)
    flag(right, "right", op)
    x = tensor_arg(input, op, device_of(boundaries))
    b = _bins_1d(boundaries, x, op, "boundaries")
    r = P.searchsorted(b, x, side="right" if right else "left")
    return cast(r, dt.int32) if out_int32 else r


def _fp64(v, op: str, what: str, dev, complex_ok: bool) -> Tensor:
    t = tensor_arg(v, op, dev)
    if t.dtype.kind == "c" and not complex_ok:
        raise TypeError(f"{op}: {what} must be real, got {t.dtype}")
    return cast(t, dt.complex128 if t.dtype.kind == "c" else dt.float64)


def _interp_real(x, xp, fp, left, right) -> Tensor:
    n = xp.shape[0]
    first, last = fp[0], fp[n - 1]
    lo = first if left is None else left
    hi = last if right is None else right
    if n == 1:   # NumPy's one-point rule: a NaN x gets fp[0]
        return P.where(P.less(x, xp[0]), lo, P.where(P.greater(x, xp[0]), hi, first))
    j = P.subtract(P.searchsorted(xp, x, side="right"), 1)
    jc = P.clip(j, 0, n - 2)
    x0, x1, f0, f1 = P.take(xp, jc), P.take(xp, P.add(jc, 1)), P.take(fp, jc), P.take(fp, P.add(jc, 1))
    slope = P.divide(P.subtract(f1, f0), P.subtract(x1, x0))
    r = P.add(P.multiply(slope, P.subtract(x, x0)), f0)
    # NumPy's fallbacks for a NaN result: from the right end, then a flat segment's value
    r = P.where(P.isnan(r), P.add(P.multiply(slope, P.subtract(x, x1)), f1), r)
    r = P.where(P.logical_and(P.isnan(r), P.equal(f0, f1)), f0, r)
    r = P.where(P.equal(x0, x), f0, r)
    r = P.where(P.equal(j, n - 1), last, r)
    r = P.where(P.greater(x, xp[n - 1]), hi, r)
    r = P.where(P.less(x, xp[0]), lo, r)
    return P.where(P.isnan(x), x, r)


def _end_value(v, op: str, name: str, dev):
    if v is None or is_scalar(v):
        return v
    t = tensor_arg(v, op, dev)
    if t.ndim:
        raise ValueError(f"{op}: {name} must be a scalar, got shape {t.shape}")
    return cast(t, dt.complex128 if t.dtype.kind == "c" else dt.float64)


def _part(v, k: int):
    if v is None:
        return None
    if isinstance(v, Tensor):
        return P.real(v) if k == 0 else P.imag(v)
    return complex(v).real if k == 0 else complex(v).imag


@pub()
def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """NumPy's one-dimensional piecewise-linear interpolation of (xp, fp) at x: float64 (complex128
    for complex fp), x's shape; left / right (default fp[0] / fp[-1]) beyond the ends; with
    period, xp and x wrap around (left and right are then ignored). xp must be increasing
    (without period; not checked, as NumPy). Differentiable with respect to x, xp and fp.

    >>> import tensor as T
    >>> T.interp(T.tensor([-1.0, 2.5]), T.tensor([0.0, 2.0, 3.0]), T.tensor([1.0, 3.0, 0.0]),
    ...          left=-9.0).tolist()
    [-9.0, 1.5]
    """
    op = "interp"
    dev = device_of(x, xp, fp)
    xv, xpv = _fp64(x, op, "x", dev, False), _fp64(xp, op, "xp", dev, False)
    fpv = _fp64(fp, op, "fp", dev, True)
    if xpv.ndim != 1 or fpv.ndim != 1:
        raise ValueError(f"{op}: xp and fp must be 1-d, got shapes {xpv.shape} and {fpv.shape}")
    if xpv.shape[0] != fpv.shape[0]:
        raise ValueError(f"{op}: fp and xp are not of the same length ({fpv.shape[0]} and "
                         f"{xpv.shape[0]})")
    if xpv.shape[0] == 0:
        raise ValueError(f"{op}: array of sample points is empty")
    if len({t.device for t in (xv, xpv, fpv)}) > 1:
        raise ValueError(f"{op}: x, xp and fp are on different devices")
    left, right = _end_value(left, op, "left", dev), _end_value(right, op, "right", dev)
    if period is None and fpv.dtype.kind != "c" and any(
            isinstance(v, complex) or isinstance(v, Tensor) and v.dtype.kind == "c"
            for v in (left, right)):   # NumPy's: a real fp takes real ends only
        raise TypeError(f"{op}: left and right must be real numbers for a real fp")
    if period is not None:
        if isinstance(period, Tensor):
            period = period.item()
        if not is_scalar(period) or isinstance(period, complex):
            raise TypeError(f"{op}: period must be a real number, got {type(period).__name__}")
        if period == 0:
            raise ValueError(f"{op}: period must be a non-zero value")
        period, left, right = abs(period), None, None
        xv, xpv = P.remainder(xv, period), P.remainder(xpv, period)
        order = P.argsort(xpv)
        xpv, fpv = P.take(xpv, order), P.take(fpv, order)
        xpv = P.concat([P.subtract(xpv[-1:], period), xpv, P.add(xpv[:1], period)])
        fpv = P.concat([fpv[-1:], fpv, fpv[:1]])
    if fpv.dtype.kind != "c":
        return _interp_real(xv, xpv, fpv, left, right)
    re, im = (_interp_real(xv, xpv, _part(fpv, k), _part(left, k), _part(right, k))
              for k in (0, 1))
    return P.complex(re, im)


# ---------------------------------------------------------------- functions over axes

@pub()
def apply_along_axis(func1d, axis: int, arr, *args, **kwargs) -> Tensor:
    """func1d applied to every 1-d slice of arr along axis (a Python loop over the slices);
    its results (each of one shape) take axis's place, in the first result's dtype.

    >>> import tensor as T
    >>> T.apply_along_axis(lambda r: r[0] + r[-1], 1, T.tensor([[1, 2], [3, 5]])).tolist()
    [3, 8]
    """
    op = "apply_along_axis"
    x = tensor_arg(arr, op)
    a = norm_axis(axis, x.ndim, op)
    xm = P.moveaxis(x, a, -1)
    outer = xm.shape[:-1]
    if 0 in outer:
        raise ValueError(f"{op}: Cannot apply_along_axis when any iteration dimensions are 0 "
                         f"(shape {x.shape}, axis {a})")
    flat = P.reshape(xm, (math.prod(outer), xm.shape[-1]))   # -1 is ambiguous with a 0 axis
    res = [func1d(flat[i], *args, **kwargs) for i in range(flat.shape[0])]
    res = [r if isinstance(r, Tensor) else asarray(r, device=x.device) for r in res]
    if any(r.shape != res[0].shape for r in res):
        raise ValueError(f"{op}: func1d returned results of different shapes "
                         f"{sorted({r.shape for r in res})}")
    out = P.reshape(P.stack([cast(r, res[0].dtype) for r in res]), outer + res[0].shape)
    k = res[0].ndim
    perm = list(range(a)) + list(range(len(outer), len(outer) + k)) + list(range(a, len(outer)))
    return P.permute(out, perm)


@pub()
def apply_over_axes(func, a, axes) -> Tensor:
    """func(a, axis) applied for each axis in turn, each result of a's rank or one less (then
    the axis is put back with size 1), as NumPy's apply_over_axes.

    >>> import tensor as T
    >>> T.apply_over_axes(T.sum, T.ones((2, 3, 4)), [0, 2]).tolist()
    [[[8.0], [8.0], [8.0]]]
    """
    op = "apply_over_axes"
    val = tensor_arg(a, op)
    n = val.ndim
    for ax in ((axes,) if is_scalar(axes) else axes):
        ax = as_int(ax, "axes", op)
        ax = ax + n if ax < 0 else ax
        res = func(val, ax)
        if res.ndim != val.ndim:
            res = P.expand_dims(res, ax)
            if res.ndim != val.ndim:
                raise ValueError(f"{op}: function is not returning an array of the correct shape")
        val = res
    return val
from . import numpy_extra3, numpy_poly, printing  # noqa: E402,F401  (more NumPy functions, in these registries)
