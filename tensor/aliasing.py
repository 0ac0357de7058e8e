"""Memory overlap and write permission: the one place that decides them for every op.

Any kernel that writes a destination while reading other operands (values, index arrays,
masks) must not read memory it has already overwritten: `elementwise.stable(src, dst)` (on the
overlap test here) hands it a copy of
src whenever the two may overlap. Any op that writes a tensor (in-place ops, `out=`,
`__setitem__`, `copy_`, `fill_`, index_put_...) first calls `check_writable(dst, op)`, which
refuses read-only tensors (NumPy's messages) and destinations where several elements share one
memory location: such a write has no single right answer once the kernel runs in parallel (or
on a GPU), so it raises as PyTorch does instead of buffering as NumPy does.

>>> import tensor as T
>>> x = T.arange(6)
>>> T.shares_memory(x[:3], x[2:]), T.shares_memory(x[:3], x[3:])
(True, False)
>>> y = T.as_strided(x, (3,), (0,))             # three elements, one memory location
>>> try:
...     y += 1
... except ValueError as e:
...     print(e)  # doctest: +ELLIPSIS
add: unsupported operation: more than one element of the written-to tensor refers to a single ...
>>> b = T.broadcast_to(x[:3], (2, 3))
>>> b.flags.writeable, x.flags.writeable
(False, True)
"""
from __future__ import annotations

import numpy as np

from ._tensor import Tensor, readonly_reason

_EXACT_LIMIT = 1 << 20  # up to this many elements an inconclusive overlap test is settled exactly


def _extent(t: Tensor):
    """[lo, hi) byte range of t's elements within its storage, or None when t is empty."""
    lo = hi = t._offset
    for n, s in zip(t._shape, t._strides):
        if n == 0:
            return None
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    isz = t._dtype.itemsize
    return lo * isz, (hi + 1) * isz


def may_overlap(a: Tensor, b: Tensor) -> bool:
    """True when the memory ranges spanned by a and b intersect (NumPy's may_share_memory).

    Addresses, not storage objects, are compared: two storages wrap the same memory when it
    came back through NumPy or DLPack (`T.asarray(x.numpy())`)."""
    sa, sb = a._storage, b._storage
    if sa is not sb and (sa.device != sb.device or sa.nbytes == 0 or sb.nbytes == 0
                         or sa.ptr >= sb.ptr + sb.nbytes or sb.ptr >= sa.ptr + sa.nbytes):
        return False
    ea, eb = _extent(a), _extent(b)
    if ea is None or eb is None:
        return False
    d = sa.ptr - sb.ptr  # a's range moved to be measured from sb.ptr, as b's is
    return ea[0] + d < eb[1] and eb[0] < ea[1] + d


def same_view(a: Tensor, b: Tensor) -> bool:
    """a and b address the same elements in the same order (an elementwise kernel may then read
    an element of b just before writing it in a)."""
    return (a._storage is b._storage and a._offset == b._offset and a._shape == b._shape
            and a._strides == b._strides and a._dtype.itemsize == b._dtype.itemsize)


def shares_memory(a: Tensor, b: Tensor) -> bool:
    """True when the memory ranges spanned by a and b overlap (NumPy's may_share_memory).

    >>> import tensor as T
    >>> x = T.zeros((2, 3))
    >>> T.shares_memory(x, x.T), T.shares_memory(x, x.copy())
    (True, False)
    """
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"shares_memory: {name} must be a Tensor, got {type(t).__name__}")
    return may_overlap(a, b)


def internal_overlap(t: Tensor) -> bool:
    """True when two elements of t share a memory location (a zero stride on an axis longer
    than 1, or an as_strided layout that folds onto itself).

    Sorted by |stride|, a layout is free of overlap when each stride exceeds the span of the
    axes with smaller strides; when that test fails without a zero stride the offsets are
    compared exactly (up to _EXACT_LIMIT elements; past it the layout counts as overlapping)."""
    if t.is_contiguous() or 0 in t._shape:
        return False
    key = (t._shape, t._strides)
    r = _OVERLAP.get(key)
    if r is None:
        if len(_OVERLAP) > 4096:
            _OVERLAP.clear()
        r = _OVERLAP[key] = _overlap_of(t._shape, t._strides)
    return r


_OVERLAP: dict = {}  # (shape, strides) -> internal_overlap: layouts repeat, the test is Python


def _overlap_of(shape, strides) -> bool:
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n != 1)
    span = 0
    for s, n in dims:
        if s <= span:
            return s == 0 or _offsets_repeat(dims)
        span += (n - 1) * s
    return False


def _offsets_repeat(dims) -> bool:
    n = 1
    for _, m in dims:
        n *= m
    if n > _EXACT_LIMIT:
        return True
    off = np.zeros(1, np.int64)
    for s, m in dims:
        off = (off[:, None] + np.arange(m, dtype=np.int64) * s).ravel()
    return np.unique(off).size != off.size


def check_not_readonly(t: Tensor, op: str, what: str = "assignment destination") -> None:
    """The read-only half of check_writable (an assignment checks it before its key, as NumPy)."""
    if t._ro is not None or t._storage.readonly:
        raise ValueError(f"{op}: {what} is read-only: {readonly_reason(t)}; write into a copy "
                         "(.copy()) instead")


def check_writable(t: Tensor, op: str, what: str = "assignment destination") -> None:
    """Raise ValueError (NumPy's message, naming op and the reason) unless t may be written.

    what: NumPy's words for the destination: "assignment destination" for assignments
    (setitem, copy_, fill_), "output array" for the output of an op (out=, in-place ops)."""
    check_not_readonly(t, op, what)
    if t._contig is not True and not t.is_contiguous() and internal_overlap(t):
        raise ValueError(f"{op}: unsupported operation: more than one element of the written-to "
                         f"tensor refers to a single memory location (shape {t.shape}, strides "
                         f"{t.strides}); write into a copy (.copy()) instead")
