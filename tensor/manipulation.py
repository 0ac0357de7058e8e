"""Joining, splitting, rolling, tiling, repeating and padding tensors (NumPy's semantics).

Splits are views; everything else writes through views of one new output with copy_into,
so no Python code runs per element.

>>> import tensor as T
>>> a, b = T.arange(4).reshape(2, 2), T.ones((2, 1), dtype="int64")
>>> T.manipulation.concatenate([a, b], axis=1).tolist()
[[0, 1, 1], [2, 3, 1]]
>>> [t.tolist() for t in T.manipulation.split(T.arange(6), 3)]
[[0, 1], [2, 3], [4, 5]]
"""
from __future__ import annotations

import itertools
import operator

import numpy as np

from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor
from .axes import norm_axis
from .backend import backend_for
from .convert import asarray
from .views import basic_index, expand_dims, flip, reshape, swapaxes

__all__ = ["concatenate", "concat", "cat", "stack", "hstack", "vstack", "dstack", "atleast_1d", "atleast_2d",
           "atleast_3d", "split", "array_split", "hsplit", "vsplit", "chunk", "unbind", "roll",
           "tile", "repeat", "pad", "flip", "fliplr", "flipud", "rot90"]


def _tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return asarray(x)


def _along(axis: int, s) -> tuple:
    """A key selecting s (a slice or int) on `axis` and everything elsewhere."""
    return (slice(None),) * axis + (s,)


# ---------------------------------------------------------------- joining

def concatenate(tensors, axis: int | None = 0, dtype=None) -> Tensor:
    """Join tensors along an existing axis (axis=None: flatten them first), as NumPy's.

    The result dtype is the promotion of all inputs (or `dtype`).

    >>> import tensor as T
    >>> T.manipulation.concatenate([T.zeros((1, 2)), T.ones((2, 2))]).shape
    (3, 2)
    """
    return _join(tensors, axis, dtype, "concatenate")


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    """The array API standard's name for concatenate (axis keyword-only, no dtype).

    >>> import tensor as T
    >>> T.manipulation.concat([T.zeros((2, 1)), T.ones((2, 2))], axis=1).shape
    (2, 3)
    """
    return _join(arrays, axis, None, "concat")


def _join(tensors, axis, dtype, op: str) -> Tensor:
    if op == "concat" and isinstance(tensors, Tensor):  # the standard's arrays: a tuple or list
        raise TypeError(f"{op}: expects a sequence of tensors, got a single tensor of shape "
                        f"{tensors.shape}")
    ts = [t if isinstance(t, Tensor) else asarray(t) for t in tensors]
    if not ts:
        raise ValueError(f"{op}: need at least one tensor to concatenate")
    _same_device(op, ts)
    if axis is None:
        ts, axis = [reshape(t, (-1,)) for t in ts], 0
    first = ts[0]
    if first.ndim == 0:
        raise ValueError(f"{op}: zero-dimensional tensors cannot be concatenated")
    axis = norm_axis(axis, first.ndim, op)
    sh = first._shape
    nd, lead, trail = len(sh), sh[:axis], sh[axis + 1:]
    for i, t in enumerate(ts[1:], 1):
        s = t._shape
        if len(s) == nd and s[:axis] == lead and s[axis + 1:] == trail:
            continue   # (the common case: one test, no per-dimension loop)
        if t.ndim != first.ndim:
            raise ValueError(f"{op}: all inputs must have the same rank, but the tensor at index 0 "
                             f"has shape {first.shape} and the tensor at index {i} has shape {t.shape}")
        for d in range(t.ndim):
            if d != axis and t.shape[d] != first.shape[d]:
                raise ValueError(f"{op}: shapes {first.shape} (index 0) and {t.shape} (index {i}) "
                                 f"must match except on axis {axis}, but differ along axis {d}")
    res = dt.dtype(dtype) if dtype is not None else _result_type(ts)
    shape = list(first.shape)
    shape[axis] = sum(t._shape[axis] for t in ts)
    out = ew.empty_tensor(tuple(shape), res, first.device)
    if _rows_join(out, ts, axis):
        return out
    start, st = 0, out._strides
    for t in ts:
        n = t.shape[axis]
        if n:
            _place(out, t, st, out._offset + start * st[axis])
        start += n
    return out


def _same_device(op: str, ts: list) -> None:
    d0 = ts[0]._storage.device
    for t in ts:
        if t._storage.device is not d0:
            ew.same_device(op, ts)   # (equal devices may be distinct objects: its test decides)
            return


def _result_type(ts: list) -> dt.DType:
    d0 = ts[0]._dtype
    for t in ts:
        if t._dtype is not d0:
            return dt.result_type(*ts)
    return d0


def _rows_join(out: Tensor, ts: list, axis: int) -> bool:
    """Many inputs of out's dtype, all contiguous: one backend call (concat_rows) copies them
    all into out (fresh, contiguous), joined along axis (stack: along its new axis). False:
    the caller copies each input."""
    d = out._dtype
    if len(ts) < 8 or not out.numel():
        return False
    be = backend_for(out.device)
    if be.concat_rows is None:
        return False
    for t in ts:
        if t._dtype is not d or not t.is_contiguous():
            return False
    outer = 1
    for n in out._shape[:axis]:
        outer *= n
    be.concat_rows(out, ts, outer)
    out._storage.version += 1
    return True


def _place(out: Tensor, t: Tensor, strides: tuple, offset: int) -> None:
    """Write t into the block of the fresh tensor out that has t's shape, these strides and
    this offset. Where t has out's dtype and device (nothing to cast or move; out overlaps
    nothing, being fresh) the copy kernel runs directly, without copy_into's checks."""
    dst = out._view(t._shape, strides, offset)
    if t._dtype is out._dtype and t.device == out.device:
        ew.run(t._dtype, f"cast_{t._dtype.sfx}_{t._dtype.sfx}", dst, [t])
        out._storage.version += 1
    else:
        ew.copy_into(dst, t)


def cat(tensors, dim: int = 0) -> Tensor:
    """PyTorch's name for concatenate (`dim` for `axis`)."""
    return concatenate(tensors, dim)


def stack(tensors, axis: int = 0) -> Tensor:
    """Join same-shaped tensors along a new axis, as NumPy's stack.

    >>> import tensor as T
    >>> T.manipulation.stack([T.zeros(3), T.ones(3)], axis=1).shape
    (3, 2)
    """
    ts = [t if isinstance(t, Tensor) else asarray(t) for t in tensors]
    if not ts:
        raise ValueError("stack: need at least one tensor to stack")
    _same_device("stack", ts)
    for i, t in enumerate(ts[1:], 1):
        if t._shape != ts[0]._shape:
            raise ValueError(f"stack: all inputs must have the same shape, but the tensor at index 0 has "
                             f"shape {ts[0].shape} and the tensor at index {i} has shape {t.shape}")
    first = ts[0]
    axis = norm_axis(axis, first.ndim + 1, "stack")
    out = ew.empty_tensor(first.shape[:axis] + (len(ts),) + first.shape[axis:],
                          _result_type(ts), first.device)
    if out.numel() and not _rows_join(out, ts, axis):   # input i is the slot i of the new axis
        st = out._strides
        for i, t in enumerate(ts):
            _place(out, t, st[:axis] + st[axis + 1:], out._offset + i * st[axis])
    return out


def atleast_1d(x) -> Tensor:
    """x as a view with at least one dimension."""
    x = _tensor(x)
    return reshape(x, (1,)) if x.ndim == 0 else x


def atleast_2d(x) -> Tensor:
    """x as a view with at least two dimensions (a 1-d x becomes a row)."""
    x = atleast_1d(x)
    return expand_dims(x, 0) if x.ndim == 1 else x


def atleast_3d(x) -> Tensor:
    """x as a view with at least three dimensions ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    x = atleast_2d(x)
    if x.ndim == 2:
        x = expand_dims(x, 2)
    return x


def hstack(tensors) -> Tensor:
    """Concatenate along axis 1 (axis 0 for 1-d inputs), as NumPy's hstack."""
    ts = [atleast_1d(t) for t in tensors]
    return concatenate(ts, 0 if ts and ts[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Concatenate along axis 0 after making inputs at least 2-d, as NumPy's vstack."""
    return concatenate([atleast_2d(t) for t in tensors], 0)


def dstack(tensors) -> Tensor:
    """Concatenate along axis 2 after making inputs at least 3-d, as NumPy's dstack."""
    return concatenate([atleast_3d(t) for t in tensors], 2)


# ---------------------------------------------------------------- splitting (views)

def _split_at(x: Tensor, points, axis: int) -> list:
    n = x.shape[axis]
    bounds = [0] + list(points) + [n]
    return [basic_index(x, _along(axis, slice(a, b))) for a, b in zip(bounds[:-1], bounds[1:])]


def array_split(x: Tensor, indices_or_sections, axis: int = 0) -> list:
    """Split into views; an int need not divide the axis (the first pieces get one more).

    >>> import tensor as T
    >>> [t.shape for t in T.manipulation.array_split(T.arange(7), 3)]
    [(3,), (2,), (2,)]
    """
    x = _tensor(x)
    axis = norm_axis(axis, x.ndim, "array_split")
    if getattr(indices_or_sections, "ndim", 0) > 0:   # a tensor / ndarray of split points
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int) or hasattr(indices_or_sections, "__index__"):
        k = operator.index(indices_or_sections)
        if k <= 0:
            raise ValueError(f"array_split: number of sections must be larger than 0, got {k}")
        each, extra = divmod(x.shape[axis], k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        return _split_at(x, itertools.accumulate(sizes[:-1]), axis)
    return _split_at(x, [operator.index(i) for i in indices_or_sections], axis)


def split(x: Tensor, indices_or_sections, axis: int = 0) -> list:
    """Split into views, as NumPy's split: an int must divide the axis evenly.

    >>> import tensor as T
    >>> [t.tolist() for t in T.manipulation.split(T.arange(5), [1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    x = _tensor(x)
    axis = norm_axis(axis, x.ndim, "split")
    if isinstance(indices_or_sections, int) and indices_or_sections > 0:
        if x.shape[axis] % indices_or_sections:
            raise ValueError(f"split: axis {axis} of size {x.shape[axis]} does not divide into "
                             f"{indices_or_sections} equal sections; use array_split")
    return array_split(x, indices_or_sections, axis)


def hsplit(x: Tensor, indices_or_sections) -> list:
    """split along axis 1 (axis 0 for 1-d x)."""
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("hsplit: needs a tensor of rank >= 1")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(x: Tensor, indices_or_sections) -> list:
    """split along axis 0 of a tensor of rank >= 2."""
    x = _tensor(x)
    if x.ndim < 2:
        raise ValueError(f"vsplit: needs a tensor of rank >= 2, got shape {x.shape}")
    return split(x, indices_or_sections, 0)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> list:
    """PyTorch's chunk: pieces of ceil(n / chunks) along dim (the last may be smaller; maybe fewer).

    >>> import tensor as T
    >>> [t.shape for t in T.manipulation.chunk(T.arange(5), 3)]
    [(2,), (2,), (1,)]
    """
    x = _tensor(x)
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    dim = norm_axis(dim, x.ndim, "chunk")
    n = x.shape[dim]
    size = max(-(-n // chunks), 1)
    return _split_at(x, range(size, n, size), dim)


def unbind(x: Tensor, axis: int = 0) -> tuple:
    """The slices along axis as a tuple of views (PyTorch's unbind).

    >>> import tensor as T
    >>> [t.tolist() for t in T.manipulation.unbind(T.arange(4).reshape(2, 2), 1)]
    [[0, 2], [1, 3]]
    """
    x = _tensor(x)
    axis = norm_axis(axis, x.ndim, "unbind")
    return tuple(basic_index(x, _along(axis, i)) for i in range(x.shape[axis]))


# ---------------------------------------------------------------- roll, tile, repeat

def _int_tuple(v, op: str, what: str) -> tuple:
    try:
        if isinstance(v, int) or hasattr(v, "__index__"):
            return (operator.index(v),)
        return tuple(operator.index(i) for i in v)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an int or a tuple of ints, got {v!r}") from None


def roll(x: Tensor, shift, axis=None) -> Tensor:
    """Shift elements cyclically along axes (flattened when axis is None), as NumPy's roll.

    >>> import tensor as T
    >>> T.manipulation.roll(T.arange(5), 2).tolist()
    [3, 4, 0, 1, 2]
    """
    x = _tensor(x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), sum(_int_tuple(shift, "roll", "shift")), 0), x.shape)
    shifts, axes = _int_tuple(shift, "roll", "shift"), _int_tuple(axis, "roll", "axis")
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(f"roll: shift {shifts} and axis {axes} have different lengths")
    total = [0] * x.ndim
    for s, a in zip(shifts * (len(axes) if len(shifts) == 1 else 1),
                    axes * (len(shifts) if len(axes) == 1 else 1)):
        total[norm_axis(a, x.ndim, "roll")] += s
    parts = []
    for a, n in enumerate(x.shape):
        s = total[a] % n if n else 0
        parts.append([(slice(None), slice(None))] if s == 0 else
                     [(slice(0, n - s), slice(s, n)), (slice(n - s, n), slice(0, s))])
    out = ew.empty_tensor(x.shape, x.dtype, x.device)
    if out.numel():
        for combo in itertools.product(*parts):
            ew.copy_into(basic_index(out, tuple(d for _, d in combo)),
                         basic_index(x, tuple(s for s, _ in combo)))
    return out


def tile(x: Tensor, reps) -> Tensor:
    """Repeat the whole tensor reps[i] times along each axis, as NumPy's tile.

    >>> import tensor as T
    >>> T.manipulation.tile(T.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = _tensor(x)
    reps = _int_tuple(reps, "tile", "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions in {reps}")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(x, (1,) * (nd - x.ndim) + x.shape)
    shape, strides = [], []
    for r, n, s in zip(reps, x.shape, x.strides):
        shape += [r, n]
        strides += [0, s]
    out = ew.empty_tensor(tuple(shape), x.dtype, x.device)
    ew.copy_into(out, x._view(shape, strides))
    return reshape(out, tuple(r * n for r, n in zip(reps, x.shape)))


def _repeat_counts(repeats, n: int) -> Tensor | int:
    """repeats as an int, or as a contiguous int64 tensor of n counts."""
    if isinstance(repeats, int) or hasattr(repeats, "__index__") and not hasattr(repeats, "shape"):
        return operator.index(repeats)
    r = _tensor(repeats)
    if r.dtype.kind not in "iub" and r.numel():
        raise TypeError(f"repeat: repeats must be integers, got {r.dtype.name}")
    if r.numel() == 1:
        return int(r.item())
    if r.ndim != 1 or r.shape[0] != n:
        raise ValueError(f"repeat: repeats of shape {r.shape} cannot be broadcast to the axis length {n}")
    return ew.contiguous(r.astype(dt.int64, copy=False))


def repeat(x: Tensor, repeats, axis: int | None = None) -> Tensor:
    """Repeat each element (flattened when axis is None), as NumPy's repeat.

    >>> import tensor as T
    >>> T.manipulation.repeat(T.tensor([1, 2]), [1, 3]).tolist()
    [1, 2, 2, 2]
    """
    from . import indexing
    x = _tensor(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = norm_axis(axis, x.ndim, "repeat")
    n = x.shape[axis]
    r = _repeat_counts(repeats, n)
    if isinstance(r, int):
        if r < 0:
            raise ValueError(f"repeat: repeats may not contain negative values, got {r}")
        shape = x.shape[:axis + 1] + (r,) + x.shape[axis + 1:]
        v = x._view(shape, x.strides[:axis + 1] + (0,) + x.strides[axis + 1:])
        out = ew.empty_tensor(shape, x.dtype, x.device)
        ew.copy_into(out, v)
        return reshape(out, x.shape[:axis] + (n * r,) + x.shape[axis + 1:])
    total, idx = backend_for(r.device).repeat_index(n, r)   # (on a GPU: two host reads)
    if total < 0 and -total - 1 >= n:   # a count so large that the total could overflow
        i = -total - 1 - n
        raise ValueError(f"repeat: count {i} is {r[i].item()}, too large for {n} elements (the "
                         "total could pass int64's range)")
    if total < 0:
        raise ValueError(f"repeat: repeats may not contain negative values (count {-total - 1} is "
                         "negative)")
    return indexing.take(x, idx, axis)


# ---------------------------------------------------------------- pad

def _pairs(v, ndim: int, op: str, as_index: bool) -> list:
    if isinstance(v, dict):  # NumPy 2: {axis: width or (before, after)}, other axes unpadded
        seq = [(0, 0)] * ndim
        for axis, w in v.items():
            seq[norm_axis(axis, ndim, op)] = (w, w) if isinstance(w, int) else tuple(w)
        v = seq
    if ndim == 0:
        return []
    if type(v) is int or (type(v) is float and not as_index):   # pad(x, 3): no NumPy round trip
        if as_index and v < 0:
            raise ValueError(f"{op}: pad_width can't contain negative values, got {v!r}")
        return [(v, v)] * ndim
    a = np.asarray(v)
    if as_index:
        if a.dtype.kind not in "iu":
            raise TypeError(f"{op}: pad_width must be integers, got {v!r}")
        if (a < 0).any():
            raise ValueError(f"{op}: pad_width can't contain negative values, got {v!r}")
    try:
        a = np.broadcast_to(a, (ndim, 2))
    except ValueError:
        raise ValueError(f"{op}: pad_width {v!r} cannot be broadcast to {(ndim, 2)} "
                         f"(one (before, after) pair per axis)") from None
    return [(p[0].item(), p[1].item()) for p in a]


def _pad_index(n: int, before: int, after: int, mode: str) -> Tensor:
    """For each padded position j in [-before, n + after), the source index along the axis."""
    from .creation import arange
    from .ops import clip
    j = arange(-before, n + after)
    if mode == "edge":
        return clip(j, 0, n - 1)
    if mode == "wrap":
        return ew.binary("remainder", j, n)
    period = 2 * (n - 1) if mode == "reflect" else 2 * n
    if period == 0:  # reflect of a single element repeats it
        return ew.binary("multiply", j, 0)
    m = ew.binary("remainder", j, period)
    top = period - (mode == "symmetric")
    return ew.where(ew.binary("greater_equal", m, n), ew.binary("subtract", top, m), m)


def _pad_src(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """_pad_index's source positions as a NumPy int64 array (host side)."""
    j = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(j, 0, n - 1)
    if mode == "wrap":
        return j % n
    period = 2 * (n - 1) if mode == "reflect" else 2 * n
    if period == 0:
        return np.zeros_like(j)
    m = j % period
    return np.where(m >= n, period - (mode == "symmetric") - m, m)


_PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


def _pad_ends(mode: str, ndim: int, end_values, stat_length) -> list | None:
    """Per axis: linear_ramp's end values, or a statistic mode's stat_length pair (None: all)."""
    from . import pad_modes
    if mode == "linear_ramp":
        return _pairs(0 if end_values is None else end_values, ndim, "pad", False)
    if mode not in pad_modes.STAT_MODES:
        return None
    if stat_length is None:
        return [(None, None)] * ndim
    pad_modes.check_stat_length(stat_length)
    return _pairs(stat_length, ndim, "pad", True)


def pad(x: Tensor, pad_width, mode: str = "constant", constant_values=0, *, end_values=None,
        stat_length=None, reflect_type=None) -> Tensor:
    """Pad with constants or with values taken from x, as NumPy's pad.

    pad_width: int, (before, after), one pair per axis, or {axis: width}. Modes: constant,
    edge, wrap, reflect, symmetric (reflect_type 'even' or 'odd'), and (tensor/pad_modes.py)
    linear_ramp (end_values), maximum, mean, median, minimum (stat_length), empty.

    >>> import tensor as T
    >>> T.manipulation.pad(T.tensor([1, 2]), (1, 2)).tolist()
    [0, 1, 2, 0, 0]
    >>> T.manipulation.pad(T.tensor([1, 2, 3]), 2, mode="reflect").tolist()
    [3, 2, 1, 2, 3, 2, 1]
    """
    from . import indexing, pad_modes
    x = _tensor(x)
    if mode not in _PAD_MODES + pad_modes.EXTRA_MODES:
        raise ValueError(f"pad: mode {mode!r} is not supported; use one of "
                         f"{', '.join(_PAD_MODES + pad_modes.EXTRA_MODES)}")
    pad_modes.check_kwargs(mode, {"end_values": end_values, "stat_length": stat_length,
                                  "reflect_type": reflect_type})
    widths = _pairs(pad_width, x.ndim, "pad", True)
    if mode in pad_modes.EXTRA_MODES or pad_modes.check_reflect_type(reflect_type) == "odd":
        return pad_modes.pad_extra(x, widths, mode, _pad_ends(mode, x.ndim, end_values, stat_length))
    if mode != "constant":
        for a, ((b, e), n) in enumerate(zip(widths, x.shape)):
            if (b or e) and n == 0:
                raise ValueError(f"pad: can't extend empty axis {a} using modes other than 'constant'")
        if not any(b or e for b, e in widths):
            return ew.copy(x)
        out = pad_modes.pad_by_index(x, [_pad_src(n, b, e, mode) if b or e else None
                                         for (b, e), n in zip(widths, x.shape)])
        if out is not None:   # a few block copies (each take would gather every element)
            return out
        for a, ((b, e), n) in enumerate(zip(widths, x.shape)):
            if b or e:
                x = indexing.take(x, _pad_index(n, b, e, mode), a)
        return x
    values = _pairs(constant_values, x.ndim, "pad", False)
    shape = tuple(n + b + e for n, (b, e) in zip(x.shape, widths))
    out = ew.empty_tensor(shape, x.dtype, x.device)
    for a, ((b, e), (cb, ce)) in enumerate(zip(widths, values)):
        if b:
            ew.copy_into(basic_index(out, _along(a, slice(0, b))), cb)
        if e:
            ew.copy_into(basic_index(out, _along(a, slice(shape[a] - e, shape[a]))), ce)
    center = tuple(slice(b, b + n) for (b, _), n in zip(widths, x.shape))
    ew.copy_into(basic_index(out, center), x)
    return out


# ---------------------------------------------------------------- flips and rotations (views)

def fliplr(x: Tensor) -> Tensor:
    """Reverse axis 1 (a view)."""
    x = _tensor(x)
    if x.ndim < 2:
        raise ValueError(f"fliplr: needs a tensor of rank >= 2, got shape {x.shape}")
    return flip(x, 1)


def flipud(x: Tensor) -> Tensor:
    """Reverse axis 0 (a view)."""
    x = _tensor(x)
    if x.ndim < 1:
        raise ValueError("flipud: needs a tensor of rank >= 1")
    return flip(x, 0)


def rot90(x: Tensor, k: int = 1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of axes, from the first towards the second (a view).

    >>> import tensor as T
    >>> T.manipulation.rot90(T.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    x = _tensor(x)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must name 2 axes, got {axes}")
    a0, a1 = (norm_axis(a, x.ndim, "rot90") for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: axes must differ, got {axes}")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    return swapaxes(flip(x, a1), a0, a1) if k == 1 else flip(swapaxes(x, a0, a1), a1)

