"""Sorting and searching (the array API's sort, argsort, searchsorted, unique_*; PyTorch's topk).

Every sort is stable, in both directions, on every device: the backends sort each row by an
order-preserving integer key (cuda_src/scalar/sort_key.h), and a stable sort is unique, so
the CPU and CUDA give the same indices bit for bit. Order: NaN is the greatest value (last
ascending, as NumPy; first descending, as PyTorch), NaNs keep their input order; -0.0 and
+0.0 compare equal. descending=True is the stable descending sort (equal elements keep their
order), not NumPy's flip of the ascending one. The standard leaves NaN and signed-zero order
to the implementation and asks searchsorted to agree with sort: it searches by the same keys.

>>> import tensor as T
>>> T.sort(T.tensor([3, 1, 2])).tolist(), T.argsort(T.tensor([3, 1, 2]), descending=True).tolist()
([1, 2, 3], [0, 2, 1])
>>> T.searchsorted(T.tensor([1, 2, 2, 3]), T.tensor([2, 5]), side="right").tolist()
[3, 4]
>>> T.unique_counts(T.tensor([2, 1, 2])).counts.tolist()
[1, 2]
"""
from __future__ import annotations

import operator
from typing import NamedTuple

from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor, empty, tracked
from .axes import norm_axis
from .backend import backend_for
from .convert import asarray
from .creation import full
from .indexing import take, take_along_axis
from .optable import T as P  # tensor's public (recorded) functions, for the compositions
from .views import complex_part, moveaxis, reshape


def tensor_arg(x, op: str, device=None) -> Tensor:
    """x as a tensor (array-likes converted, on device); TypeError naming op when it is none."""
    if isinstance(x, Tensor):
        return x
    try:
        return asarray(x, device=device)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: expected a tensor, got {type(x).__name__}") from e


def ordered_arg(x, op: str) -> Tensor:
    """tensor_arg, for an op that orders values: a complex tensor is a TypeError naming op."""
    t = tensor_arg(x, op)
    if t.dtype.kind == "c":
        raise TypeError(f"{op}: complex input ({t.dtype}) has no order; give a real tensor")
    return t


def flag(v, name: str, op: str) -> bool:
    """v, which must be a bool (not merely truthy), else a TypeError naming op."""
    if not isinstance(v, bool):
        raise TypeError(f"{op}: {name} must be a bool, got {type(v).__name__}")
    return v


def _sort(x, axis, descending, stable, op: str, values: bool):
    """(values or None, int64 indices) of x sorted stably along axis."""
    x = tensor_arg(x, op)
    flag(descending, "descending", op)
    flag(stable, "stable", op)   # every sort is stable: stable=False is allowed to be
    a = norm_axis(axis, max(x.ndim, 1), op)   # a 0-d tensor sorts as one element
    xm = reshape(x, (1,)) if x.ndim == 0 else moveaxis(x, a, -1)
    xm = ew.contiguous(xm)
    L = xm.shape[-1]
    rows = xm.numel() // L if L else 0
    if x.dtype.kind == "c":
        idx = _complex_order(xm, rows, L, descending)
        vals = take_along_axis(xm, idx, -1) if values else None
    else:
        idx = empty(xm.shape, dt.int64, x.device)
        vals = empty(xm.shape, x.dtype, x.device) if values else None
        backend_for(x.device).sort_rows(xm, vals, idx, rows, L, descending)

    def back(t):
        return reshape(t, ()) if x.ndim == 0 else moveaxis(t, -1, a)
    return (back(vals) if values else None), back(idx)


def sort_flat(f: Tensor, op: str) -> tuple:
    """(values, int64 indices) of the 1-d f's stable ascending sort, from one kernel call (a
    sort then a take of f by its indices gathered the values in a second random-access pass);
    the values are a recorded gather of f by the indices when autograd follows f."""
    if tracked(f):
        idx = _sort(f, -1, False, True, op, False)[1]
        return P.take(f, idx), idx
    return _sort(f, -1, False, True, op, True)


def partition_along(x: Tensor, kth, axis: int, values: bool) -> tuple:
    """(values or None, int64 indices) of NumPy's partition of x along axis at the positions kth
    (ints in [-n, n), checked by the caller): each kth position holds what the stable sort puts
    there, smaller-or-equal elements before it and greater-or-equal ones after (NaN last).
    A backend with partition_rows selects (O(n) a row); others, and complex x, take the whole
    stable sort, which is one such partition. The values are differentiable (a gather of x by
    the indices when x requires grad)."""
    op = "partition"
    part = getattr(backend_for(x.device), "partition_rows", None)
    a = norm_axis(axis, max(x.ndim, 1), op)
    # values autograd follows (a gradient or a tangent): a recorded gather of x by the indices
    gather = values and tracked(x)
    if part is None or x.dtype.kind == "c":
        if gather:
            idx = _sort(x, axis, False, True, op, False)[1]
            return P.take_along_axis(x, idx, axis=a if x.ndim else None), idx
        return _sort(x, axis, False, True, op, values)
    xm = ew.contiguous(reshape(x, (1,)) if x.ndim == 0 else moveaxis(x, a, -1))
    L = xm.shape[-1]
    rows = xm.numel() // L if L else 0
    ks = sorted({operator.index(k) % L for k in kth}) if L else []
    idx = empty(xm.shape, dt.int64, x.device)
    vals = empty(xm.shape, x.dtype, x.device) if values and not gather else None
    part(xm, ks, vals, idx, rows, L)

    def back(t):
        return reshape(t, ()) if x.ndim == 0 else moveaxis(t, -1, a)
    idx = back(idx)
    if gather:
        return P.take_along_axis(x, idx, axis=a if x.ndim else None), idx
    return (back(vals) if values else None), idx


def _complex_order(xm: Tensor, rows: int, L: int, descending: bool) -> Tensor:
    """The order of complex rows as NumPy's: lexicographic on (real, imaginary) among the values
    without NaN, then R+nanj, nan+Rj and nan+nanj (reversed when descending). Three stable sorts
    of the real kernels: by imaginary part, by real part, by that NaN class."""
    be = backend_for(xm.device)
    re, im = complex_part(xm, 0), complex_part(xm, 1)
    nan_im, nan_re = (ew.astype(ew.unary("isnan", p), dt.int8) for p in (im, re))
    nan_class = ew.binary("add", nan_im, ew.binary("add", nan_re, nan_re))   # 0 .. 3
    order = None
    for key in (im, re, nan_class):
        key = ew.contiguous(key if order is None else take_along_axis(key, order, -1))
        step = empty(xm.shape, dt.int64, xm.device)
        be.sort_rows(key, None, step, rows, L, descending)
        order = step if order is None else take_along_axis(order, step, -1)
    return order


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _numpy_args(x, axis, kind, order, stable, op: str):
    """(x, axis, stable) after NumPy's sort arguments: axis=None sorts the flattened x; every
    kind is accepted (all our sorts are stable); order (structured arrays) is refused."""
    if kind not in _KINDS:
        raise ValueError(f"{op}: kind must be one of {_KINDS[1:]} or None, got {kind!r}")
    if order is not None:
        raise TypeError(f"{op}: order= sorts structured arrays, which tensor does not have")
    if axis is None:
        x = reshape(tensor_arg(x, op), (-1,))
        axis = -1
    return x, axis, True if stable is None else stable


def sort(x, /, axis: int = -1, kind=None, order=None, *, descending: bool = False,
         stable: bool = True) -> Tensor:
    """A sorted copy of x along axis (stable; NaN last ascending, first descending).

    >>> import tensor as T
    >>> T.sort(T.tensor([[2.0, float("nan"), 1.0]]), descending=True).tolist()
    [[nan, 2.0, 1.0]]

    NumPy's positional axis, axis=None (the flattened x) and kind= (any: the sort is stable) work.
    """
    x, axis, stable = _numpy_args(x, axis, kind, order, stable, "sort")
    return _sort(x, axis, descending, stable, "sort", True)[0]


def argsort(x, /, axis: int = -1, kind=None, order=None, *, descending: bool = False,
            stable: bool = True) -> Tensor:
    """The int64 indices that sort x along axis (stable in both directions).

    >>> import tensor as T
    >>> T.argsort(T.tensor([1, 0, 1, 0])).tolist()
    [1, 3, 0, 2]
    """
    x, axis, stable = _numpy_args(x, axis, kind, order, stable, "argsort")
    return _sort(x, axis, descending, stable, "argsort", False)[1]


def searchsorted(x1, x2, /, *, side: str = "left", sorter=None) -> Tensor:
    """int64 insertion points of x2's elements into the ascending 1-d x1 (by sort's order).

    >>> import tensor as T
    >>> T.searchsorted(T.tensor([1.0, 2.0, 3.0]), T.tensor([0.5, 2.0])).tolist()
    [0, 1]
    """
    op = "searchsorted"
    x1 = tensor_arg(x1, op)
    if x1.ndim != 1:
        raise ValueError(f"{op}: x1 must be 1-d, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"{op}: side must be 'left' or 'right', got {side!r}")
    x2 = x2 if isinstance(x2, Tensor) else asarray(x2, device=x1.device)
    if x2.device != x1.device:
        raise ValueError(f"{op}: x1 is on {x1.device} and x2 on {x2.device}")
    if sorter is not None:
        sorter = tensor_arg(sorter, op)
        if sorter.shape != x1.shape or sorter.dtype.kind not in "iu":
            raise ValueError(f"{op}: sorter must be an integer tensor of shape {x1.shape}, got "
                             f"{sorter.dtype} {sorter.shape}")
        x1 = take(x1, sorter)
    d = dt.result_type(x1, x2)
    a = ew.contiguous(ew.astype(x1, d, copy=False))
    v = ew.contiguous(ew.astype(x2, d, copy=False))
    if d.kind == "c":
        return _complex_searchsorted(a, v, side == "right")
    out = empty(x2.shape, dt.int64, x1.device)
    backend_for(x1.device).searchsorted(a, v, out, side == "right")
    return out


def _complex_searchsorted(a: Tensor, v: Tensor, right: bool) -> Tensor:
    """searchsorted in sort's complex order: one stable sort of v and a together (v first for
    side='left', so that v goes before the a's equal to it; after them for 'right'); a v's
    insertion point is the count of a's sorted before it."""
    n, m = a.shape[0], v.numel()
    vf = reshape(v, (m,))
    order = P.argsort(P.concat([a, vf] if right else [vf, a]))
    is_a = P.astype(P.less(order, n) if right else P.greater_equal(order, m), dt.int64)
    before = P.subtract(P.cumsum(is_a), is_a)          # a's sorted strictly before each position
    at_v = P.nonzero(P.equal(is_a, 0))[0]
    out = empty((m,), dt.int64, a.device)
    out[P.subtract(P.take(order, at_v), n if right else 0)] = P.take(before, at_v)
    return reshape(out, v.shape)


# ---------------------------------------------------------------- unique (compositions)

class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique(x, op: str) -> UniqueAllResult:
    """The sorted distinct values of x (NaNs each distinct, -0.0 == +0.0), the flat index of
    each one's first occurrence, x's elements' positions among them, and their counts."""
    x = tensor_arg(x, op)
    f = P.reshape(x, (-1,))
    n, dev = f.shape[0], x.device
    perm = P.argsort(f)              # stable: a group's first element is its first occurrence
    s = P.take(f, perm)
    first = full((min(n, 1),), True, dtype=dt.bool_, device=dev)
    new = P.concat([first, P.not_equal(s[1:], s[:-1])])   # NaN != NaN: each NaN its own group
    starts = P.nonzero(new)[0]
    group = P.cumsum(P.astype(new, dt.int64)) - 1
    inverse = P.reshape(P.take(group, P.argsort(perm)), x.shape)
    counts = P.diff(starts, append=full((1,), n, dtype=dt.int64, device=dev))
    return UniqueAllResult(P.take(s, starts), P.take(perm, starts), inverse, counts)


def unique_all(x, /) -> UniqueAllResult:
    """(values, indices, inverse_indices, counts) of x's distinct elements, sorted."""
    return _unique(x, "unique_all")


def unique_counts(x, /) -> UniqueCountsResult:
    """(values, counts) of x's distinct elements, sorted."""
    r = _unique(x, "unique_counts")
    return UniqueCountsResult(r.values, r.counts)


def unique_inverse(x, /) -> UniqueInverseResult:
    """(values, inverse_indices): x == values[inverse_indices]."""
    r = _unique(x, "unique_inverse")
    return UniqueInverseResult(r.values, r.inverse_indices)


def unique_values(x, /) -> Tensor:
    """x's distinct elements, sorted (NaNs each kept)."""
    return _unique(x, "unique_values").values


# ---------------------------------------------------------------- topk (a composition)

def check_k(k, lowest: int, x: Tensor, a: int, op: str) -> int:
    """topk's / kthvalue's k as an int in [lowest, size of x's axis a] (a 0-d x: size 1)."""
    size = x.shape[a] if x.ndim else 1
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{op}: k must be an integer, got {type(k).__name__}") from None
    if not lowest <= k <= size:
        raise ValueError(f"{op}: k {k} is out of range for dimension {a} of size {size} "
                         f"(shape {x.shape})")
    return k


class TopkResult(NamedTuple):
    values: Tensor
    indices: Tensor


def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopkResult:  # noqa: A002
    """PyTorch's topk: the k largest (or smallest) elements along dim, in order, and their
    indices; ties keep input order (a stable sort), NaN counts as the largest.

    >>> import tensor as T
    >>> T.topk(T.tensor([1, 5, 3, 5]), 2).indices.tolist()
    [1, 3]
    """
    x = tensor_arg(x, "topk")
    flag(largest, "largest", "topk")
    flag(sorted, "sorted", "topk")
    a = norm_axis(dim, max(x.ndim, 1), "topk")
    k = check_k(k, 0, x, a, "topk")
    if x.ndim and _selects(x, k, a):
        idx = _topk_indices(x, k, a, largest)
        return TopkResult(P.take_along_axis(x, idx, a), idx)
    idx = P.argsort(x, axis=a, descending=largest)
    if x.ndim:
        idx = idx[(slice(None),) * a + (slice(0, k),)]
        return TopkResult(P.take_along_axis(x, idx, a), idx)
    return TopkResult(P.reshape(x, ()) if k else P.reshape(x, (1,))[:0], idx if k else idx[None][:0])


# a selection (the backend's topk_rows) for k up to this, and k up to a quarter of the row;
# beyond, the radix sort of the whole row is as fast
TOPK_SELECT_MAX = 256


def _selects(x: Tensor, k: int, a: int) -> bool:
    """Whether topk takes the selection kernel: a real x, a small k, a backend that has one."""
    return (0 < k <= TOPK_SELECT_MAX and 4 * k <= x.shape[a] and x.dtype.kind != "c"
            and backend_for(x.device).topk_rows is not None)


def _topk_indices(x: Tensor, k: int, a: int, largest: bool) -> Tensor:
    """The int64 positions of topk along axis a: the first k of the stable sort's (descending
    when largest), found by a selection instead of a sort of the whole row."""
    xm = ew.contiguous(moveaxis(x, a, -1))
    L = xm.shape[-1]
    idx = empty(xm.shape[:-1] + (k,), dt.int64, x.device)
    backend_for(x.device).topk_rows(xm, k, None, idx, xm.numel() // L, L, largest)
    return moveaxis(idx, -1, a)


FUNCS = {f.__name__: f for f in (sort, argsort, searchsorted)}
COMPOSITES = {f.__name__: f for f in (unique_all, unique_counts, unique_inverse, unique_values, topk)}
