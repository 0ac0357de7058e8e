"""NumPy's other pad modes (tensor.pad hands these over): linear_ramp, maximum, mean, median,
minimum, empty, and reflect / symmetric with reflect_type='odd'.

As NumPy's, the axes are padded one after another, each from the tensor padded along the axes
before it (so corners come from the values already padded). The derivative rules
(autograd/rules_manip.py) replay the same per-axis steps: `odd_steps` gives the index plan of
an odd reflection, `ramp_weights` the weights of a ramp.

>>> import tensor as T
>>> T.pad(T.tensor([1.0, 2.0, 3.0]), 2, mode="linear_ramp", end_values=(5, 0)).tolist()
[5.0, 3.0, 1.0, 2.0, 3.0, 1.5, 0.0]
>>> T.pad(T.tensor([1, 2, 6]), (1, 2), mode="mean").tolist()
[3, 1, 2, 6, 3, 3]
"""
from __future__ import annotations

import numpy as np

from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor

STAT_MODES = ("maximum", "mean", "median", "minimum")
# the keyword arguments each mode takes (NumPy's table); the others take none
MODE_KWARGS = {"constant": ("constant_values",), "linear_ramp": ("end_values",),
               "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
               **{m: ("stat_length",) for m in STAT_MODES}}
EXTRA_MODES = ("linear_ramp", "empty") + STAT_MODES


def check_kwargs(mode: str, given: dict) -> None:
    """NumPy's rule: a keyword argument the mode does not use is an error, not ignored."""
    bad = sorted(k for k, v in given.items() if v is not None and k not in MODE_KWARGS.get(mode, ()))
    if bad:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {', '.join(bad)}")


def _axis_slice(x: Tensor, axis: int, start: int, stop: int) -> Tensor:
    from .views import basic_index
    return basic_index(x, (slice(None),) * axis + (slice(start, stop),))


def _join(parts: list, axis: int) -> Tensor:
    """parts (one dtype, equal but along axis) laid end to end along axis, in a new tensor."""
    first = parts[0]
    shape = first.shape[:axis] + (sum(p.shape[axis] for p in parts),) + first.shape[axis + 1:]
    out = ew.empty_tensor(shape, first.dtype, first.device, "pad")
    at = 0
    for p in parts:
        ew.copy_into(_axis_slice(out, axis, at, at + p.shape[axis]), p)
        at += p.shape[axis]
    return out


def _widened(v: Tensor, axis: int, width: int) -> Tensor:
    """v (size 1 along axis) repeated width times along axis."""
    from .views import broadcast_view
    shape = v.shape[:axis] + (width,) + v.shape[axis + 1:]
    return broadcast_view(v, shape)


def ramp_weights(width: int, left: bool, axis: int, ndim: int, device, scaled: bool = True) -> Tensor:
    """The share of the edge value at each padded position of a ramp (0 at the far end): NumPy's
    linspace(end_value, edge, width, endpoint=False), reversed on the right side (scaled=False:
    the positions j themselves, before the division by width)."""
    from .creation import arange
    w = arange(0, width, dtype=dt.float64, device=device)
    if scaled:
        w = ew.binary("true_divide", w, float(width))
    if not left:
        from .views import flip
        w = flip(w, 0)
    return w.reshape((1,) * axis + (width,) + (1,) * (ndim - axis - 1))


def _ramp_side(edge: Tensor, end, width: int, left: bool, axis: int) -> Tensor:
    """end + (edge - end) * j / width in float64, floored for integer dtypes as NumPy's linspace."""
    w = ramp_weights(width, left, axis, edge.ndim, edge.device, scaled=False)
    e64 = edge.astype(dt.complex128 if edge.dtype.kind == "c" else dt.float64)
    step = ew.binary("true_divide", ew.binary("subtract", e64, end), float(width))
    r = ew.binary("add", ew.binary("multiply", w, step), end)
    if edge.dtype.kind in "iu":
        r = ew.unary("floor", r)
    return r.astype(edge.dtype)


def _stat(mode: str, chunk: Tensor, axis: int, dtype: dt.DType) -> Tensor:
    from . import reductions, statistics
    if mode in ("maximum", "minimum"):
        if chunk.shape[axis] == 0:
            raise ValueError("pad: stat_length of 0 yields no value for padding")
        return (reductions.max if mode == "maximum" else reductions.min)(chunk, axis=axis, keepdims=True)
    if mode == "mean":
        s = reductions.mean(chunk, axis=axis, keepdims=True)
    else:
        s = statistics.median(chunk, axis=axis, keepdims=True)
    if dtype.kind in "iu":   # NumPy rounds the statistic (half to even) before the cast
        s = ew.unary("rint", s)
    return s.astype(dtype)


def stat_lengths(length_pair, n: int) -> tuple:
    """NumPy's: None or more than n count as n."""
    return tuple(n if k is None or k > n else k for k in length_pair)


def _stat_pad(x: Tensor, axis: int, b: int, e: int, lengths, mode: str) -> Tensor:
    n = x.shape[axis]
    lb, le = stat_lengths(lengths, n)
    parts = [x]
    if b:
        parts.insert(0, _widened(_stat(mode, _axis_slice(x, axis, 0, lb), axis, x.dtype), axis, b))
    if e:
        parts.append(_widened(_stat(mode, _axis_slice(x, axis, n - le, n), axis, x.dtype), axis, e))
    return _join(parts, axis)


def odd_steps(n: int, b: int, e: int, include_edge: bool) -> list:
    """NumPy's odd reflection of one axis, chunk by chunk: per step (idx_before, idx_after),
    the positions in the tensor padded so far (its length grows by both chunks each step) that
    are mirrored (as 2 * edge - value) to its front and back. A length-1 axis repeats its value."""
    steps, length = [], n
    while b > 0 or e > 0:
        if include_edge:
            period, off = length // n * n, 0
        else:
            period, off = (length - 1) // (n - 1) * (n - 1), 1
        cb, ce = min(period, b), min(period, e)
        before = list(range(off + cb - 1, off - 1, -1))
        after = list(range(length - 1 - off, length - 1 - off - ce, -1))
        steps.append((before, after))
        length += cb + ce
        b, e = b - cb, e - ce
    return steps


def _odd_pad(x: Tensor, axis: int, b: int, e: int, include_edge: bool) -> Tensor:
    from .indexing import take
    n = x.shape[axis]
    if n == 1:   # NumPy: a singleton axis is extended with its value
        return ew.copy(_widened(x, axis, 1 + b + e))
    for before, after in odd_steps(n, b, e, include_edge):
        m = x.shape[axis]
        parts = [x]
        for idx, edge_at, front in ((before, 0, True), (after, m - 1, False)):
            if idx:
                edge = _axis_slice(x, axis, edge_at, edge_at + 1)
                mirrored = take(x, _index(idx, x.device), axis)
                chunk = ew.binary("subtract", ew.binary("multiply", edge, 2), mirrored)
                if chunk.dtype is not x.dtype:   # bool: computed in integers, stored as NumPy does
                    chunk = chunk.astype(x.dtype)
                if front:
                    parts.insert(0, chunk)
                else:
                    parts.append(chunk)
        x = _join(parts, axis)
    return x


def _index(idx: list, device) -> Tensor:
    from .convert import asarray
    return asarray(idx, dtype=dt.int64, device=device)


def check_stat_length(stat_length) -> None:
    import numpy as np
    a = np.asarray(stat_length)
    if a.dtype.kind not in "iu" or (a < 0).any():
        raise ValueError(f"pad: stat_length must be non-negative integers (or None), got {stat_length!r}")


def pad_extra(x: Tensor, widths: list, mode: str, ends: list | None) -> Tensor:
    """x padded by widths ((before, after) per axis) in one of EXTRA_MODES, or in reflect /
    symmetric with reflect_type='odd'. ends: per axis, linear_ramp's (end before, end after)
    or a statistic mode's (stat_length before, after; None: the whole axis)."""
    if mode == "empty":
        out = ew.empty_tensor(tuple(n + b + e for n, (b, e) in zip(x.shape, widths)), x.dtype, x.device)
        from .views import basic_index
        ew.copy_into(basic_index(out, tuple(slice(b, b + n) for (b, _), n in zip(widths, x.shape))), x)
        return out
    for a, ((b, e), n) in enumerate(zip(widths, x.shape)):
        if (b or e) and n == 0:
            raise ValueError(f"pad: can't extend empty axis {a} using modes other than 'constant' "
                             "or 'empty'")
    if x.size == 0:   # only axes of size 0 elsewhere: nothing to compute from
        return ew.empty_tensor(tuple(n + b + e for n, (b, e) in zip(x.shape, widths)), x.dtype, x.device)
    for a, (b, e) in enumerate(widths):
        if not (b or e):
            continue
        n = x.shape[a]
        if mode == "linear_ramp":
            parts = [x]
            if b:
                parts.insert(0, _ramp_side(_axis_slice(x, a, 0, 1), ends[a][0], b, True, a))
            if e:
                parts.append(_ramp_side(_axis_slice(x, a, n - 1, n), ends[a][1], e, False, a))
            x = _join(parts, a)
        elif mode in STAT_MODES:
            x = _stat_pad(x, a, b, e, ends[a], mode)
        else:
            x = _odd_pad(x, a, b, e, mode == "symmetric")
    return x


def check_reflect_type(reflect_type) -> str:
    rt = "even" if reflect_type is None else reflect_type
    if rt not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    return rt


# ---------------------------------------------------------------- index pads as block copies

def _runs(src) -> list:
    """src (ints) cut into maximal runs of step -1, 0 or +1: (first position, length, first
    source, step) each."""
    runs, j, n = [], 0, len(src)
    while j < n:
        step = src[j + 1] - src[j] if j + 1 < n else 1
        if step not in (-1, 0, 1):
            step = 1
        m = 1
        while j + m < n and src[j + m] - src[j + m - 1] == step:
            m += 1
        runs.append((j, m, src[j], step))
        j += m
    return runs


def _core(src) -> tuple | None:
    """Where src (an int64 array) holds every source it uses once, ascending: (first position,
    length, first source); None when no such run exists."""
    lo, hi = int(src.min()), int(src.max()) + 1
    ident = np.arange(lo, hi)
    for j0 in np.flatnonzero(src == lo).tolist():
        if j0 + hi - lo <= len(src) and np.array_equal(src[j0:j0 + hi - lo], ident):
            return j0, hi - lo, lo
    return None


def pad_by_index(x: Tensor, srcs: list):
    """x taken along every axis a by the source positions srcs[a] (an int array into axis a,
    one per output position; None: the axis as it is), as successive takes along each axis
    would give it (the corners from the values already padded), but written as a few block
    copies: x's block into the core of a new tensor (per axis the longest run of consecutive
    sources covering all), then per axis the other positions from runs of the core (step -1,
    0 or +1), NumPy's order. None when an axis has no such core (the caller takes)."""
    shape, cores = [], []
    for a, (n, src) in enumerate(zip(x.shape, srcs)):
        if src is None:
            src = srcs[a] = np.arange(n)
        core = _core(src) if len(src) else None
        if core is None:
            return None
        shape.append(len(src))
        cores.append(core)
    out = ew.empty_tensor(tuple(shape), x.dtype, x.device, "pad")
    if out.numel() == 0:
        return out
    st, off = out._strides, out._offset
    core_view = out._view(tuple(m for _, m, _ in cores),
                          st, off + sum(j0 * s for (j0, _, _), s in zip(cores, st)))
    from .views import basic_index
    ew.copy_into(core_view, basic_index(x, tuple(slice(s0, s0 + m) for _, m, s0 in cores)))
    copy = f"cast_{out._dtype.sfx}_{out._dtype.sfx}"
    for a, (src, (j0, m, s0)) in enumerate(zip(srcs, cores)):
        if m == len(src):
            continue
        # the extent so far: axes before a padded, axes after a their core only
        ext = [(0, shape[i]) if i <= a else (cores[i][0], cores[i][1]) for i in range(len(shape))]
        base = off + sum(e0 * s for (e0, _), s in zip(ext, st))
        lens = [e for _, e in ext]
        for j, r, s, step in _runs(src[:j0].tolist()) + [
                (j0 + m + j, r, s, step) for j, r, s, step in _runs(src[j0 + m:].tolist())]:
            lens[a] = r
            dst = out._view(tuple(lens), st, base + j * st[a])
            sst = list(st)
            sst[a] = st[a] * step
            # within out, from its core to positions outside it: disjoint, one dtype, so the
            # copy kernel runs directly (copy_into would stage the overlapping storage)
            ew.run(out._dtype, copy, dst, [out._view(tuple(lens), tuple(sst), base + (j0 + s - s0) * st[a])])
    out._storage.version += 1
    return out
