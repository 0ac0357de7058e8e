"""Derivative rules of joining, splitting, rolling, tiling, repeating and padding
(tensor/manipulation.py).

Joins split the gradient back into the inputs (integer or bool inputs, and non-tensor inputs,
get None); splits (list outputs) join the per-piece gradients back, missing ones as zeros;
tile and integer repeat sum the copies; per-element repeat and the non-constant pad modes
scatter-add through the index they gathered with. All of these ops are linear: each jvp
applies the op itself to the tangent(s). Everything goes through public ops.
"""
from __future__ import annotations

import operator

import numpy as np

import tensor as T
from tensor import manipulation as _manip  # only its pure index helpers (_pairs, _pad_index)
from tensor import pad_modes as _pad_modes  # and pad_modes' (odd_steps, ramp_weights, stat_lengths)
from tensor._tensor import Tensor
from tensor.axes import norm_axis
from tensor.public import PUB

from .graph import RULES, Meta, Rule
from .rules_util import fit
from .rules_views import params, register, reshape_back


def _is_t(a) -> bool:
    return isinstance(a, Tensor | Meta)


def _float(a) -> bool:
    return _is_t(a) and a.dtype.kind in "fc"


def _shape(a) -> tuple:
    return tuple(a.shape) if hasattr(a, "shape") else tuple(np.shape(a))


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _along(axis, s) -> tuple:
    return (slice(None),) * axis + (s,)


# ---------------------------------------------------------------- joining

def _atleast(shape, nd) -> tuple:
    if nd >= 1 and len(shape) == 0:
        shape = (1,)
    if nd >= 2 and len(shape) == 1:
        shape = (1,) + shape
    if nd >= 3 and len(shape) == 2:
        shape = shape + (1,)
    return shape


def _split_grads(g, seq, shapes, axis):
    """g cut along axis into the pieces of the joined inputs (one entry per tensor input, as
    the engine flattens a list argument)."""
    grads, start = [], 0
    for a, sh in zip(seq, shapes):
        n = sh[axis]
        if _is_t(a):
            if _float(a):
                piece = g[_along(axis, slice(start, start + n))]
                grads.append(fit(piece.reshape(a.shape), a))
            else:
                grads.append(None)
        start += n
    return grads


def _join_vjp(name, layout):
    """layout(seq, params, g) -> (shapes of the inputs as joined, axis of the join)."""
    def vjp(ctx, g):
        seq = ctx.args[0]
        shapes, axis = layout(seq, params(name, ctx), g)
        return (_split_grads(g, seq, shapes, axis),) + (None,) * (len(ctx.args) - 1)
    return vjp


def _join_jvp(name):
    fn = PUB[name]

    def jvp(ctx, tans):
        ts = tans[0]
        if ts is None or all(t is None for t in ts):
            return None
        dtype = ctx.out.dtype
        dev = ctx.out.device
        full = [(t if t is not None else T.zeros(_shape(a), dtype=dtype, device=dev))
                .astype(dtype, copy=False) for a, t in zip(ctx.args[0], ts)]
        return fn(full, *ctx.args[1:], **ctx.kwargs)
    return jvp


def _concat_layout(seq, p, g):
    axis = p["axis"] if "axis" in p else p["dim"]
    if axis is None:
        return [(_numel(_shape(a)),) for a in seq], 0
    return [_shape(a) for a in seq], norm_axis(axis, g.ndim, "concatenate")


def _stack_vjp(ctx, g):
    seq = ctx.args[0]
    axis = norm_axis(params("stack", ctx)["axis"], g.ndim, "stack")
    grads = [(fit(g[_along(axis, i)], a) if _float(a) else None)
             for i, a in enumerate(seq) if _is_t(a)]
    return (grads,) + (None,) * (len(ctx.args) - 1)


def _hstack_layout(seq, p, g):
    shapes = [_atleast(_shape(a), 1) for a in seq]
    return shapes, 0 if shapes and len(shapes[0]) == 1 else 1


for _n, _lay in (("concatenate", _concat_layout), ("cat", _concat_layout), ("concat", _concat_layout),
                 ("hstack", _hstack_layout),
                 ("vstack", lambda seq, p, g: ([_atleast(_shape(a), 2) for a in seq], 0)),
                 ("dstack", lambda seq, p, g: ([_atleast(_shape(a), 3) for a in seq], 2))):
    RULES[_n] = Rule(_n, _join_vjp(_n, _lay), _join_jvp(_n), ())
RULES["stack"] = Rule("stack", _stack_vjp, _join_jvp("stack"), ())


def _atleast_vjp(ctx, g):
    x = ctx.args[0]
    return reshape_back(ctx, g) if _is_t(x) else (None,)


for _n in ("atleast_1d", "atleast_2d", "atleast_3d"):
    register(_n, _atleast_vjp)


# ---------------------------------------------------------------- splitting (list outputs)

def _bounds_split(x, ios, axis):
    """(axis, [slice per output]) of array_split/split."""
    axis = norm_axis(axis, x.ndim, "split")
    n = x.shape[axis]
    if isinstance(ios, int) or (hasattr(ios, "__index__") and not hasattr(ios, "shape")):
        k = operator.index(ios)
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        pts = list(np.cumsum(sizes[:-1], dtype=np.int64).tolist()) if k > 1 else []
    else:
        pts = [operator.index(i) for i in ios]
    b = [0] + pts + [n]
    return axis, [slice(s, e) for s, e in zip(b[:-1], b[1:])]


def _pieces(name, ctx):
    x, p = ctx.args[0], params(name, ctx)
    if name in ("split", "array_split"):
        return _bounds_split(x, p["indices_or_sections"], p["axis"])
    if name == "hsplit":
        return _bounds_split(x, p["indices_or_sections"], 1 if x.ndim > 1 else 0)
    if name == "vsplit":
        return _bounds_split(x, p["indices_or_sections"], 0)
    if name == "chunk":
        dim = norm_axis(p["dim"], x.ndim, "chunk")
        n = x.shape[dim]
        size = max(-(-n // p["chunks"]), 1)
        b = [0] + list(range(size, n, size)) + [n]
        return dim, [slice(s, e) for s, e in zip(b[:-1], b[1:])]
    raise AssertionError(name)


def _split_vjp(name):
    def vjp(ctx, gs):
        x = ctx.args[0]
        if not _float(x):
            return (None,) * len(ctx.args)
        axis, sl = _pieces(name, ctx)
        n = x.shape[axis]
        ranges = [range(*s.indices(n)) for s in sl]
        cursor, clean = 0, True
        for r in ranges:
            if len(r):
                clean = clean and r.start == cursor
                cursor = r.stop
        clean = clean and cursor == n
        dtype = next((g.dtype for g in gs if g is not None), x.dtype)

        def piece_shape(r):
            return x.shape[:axis] + (len(r),) + x.shape[axis + 1:]
        if clean:
            parts = [g if g is not None else T.zeros(piece_shape(r), dtype=dtype, device=x.device)
                     for g, r in zip(gs, ranges) if len(r)]
            gx = (T.concatenate(parts, axis) if parts
                  else T.zeros(x.shape, dtype=dtype, device=x.device))
        else:  # overlapping or unordered split points: accumulate each piece back
            gx = T.zeros(x.shape, dtype=dtype, device=x.device)
            for g, s, r in zip(gs, sl, ranges):
                if g is not None and len(r):
                    gx = T.index_put_(gx, _along(axis, s), g, True)
        return (fit(gx, x),) + (None,) * (len(ctx.args) - 1)
    return vjp


for _n in ("split", "array_split", "hsplit", "vsplit", "chunk"):
    register(_n, _split_vjp(_n), save=(1,))


def _unbind_vjp(ctx, gs):
    x = ctx.args[0]
    if not _float(x):
        return (None,) * len(ctx.args)
    axis = norm_axis(params("unbind", ctx)["axis"], x.ndim, "unbind")
    if x.shape[axis] == 0:
        return (T.zeros(x.shape, dtype=x.dtype, device=x.device),) + (None,) * (len(ctx.args) - 1)
    dtype = next((g.dtype for g in gs if g is not None), x.dtype)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    parts = [g if g is not None else T.zeros(shape, dtype=dtype, device=x.device) for g in gs]
    return (fit(T.stack(parts, axis), x),) + (None,) * (len(ctx.args) - 1)


register("unbind", _unbind_vjp)


# ---------------------------------------------------------------- roll, tile, repeat

def _roll_vjp(ctx, g):
    p = params("roll", ctx)
    s = p["shift"]
    neg = -operator.index(s) if isinstance(s, int) or hasattr(s, "__index__") else tuple(
        -operator.index(i) for i in s)
    return (fit(T.roll(g, neg, p["axis"]), ctx.args[0]),) + (None,) * (len(ctx.args) - 1)


register("roll", _roll_vjp)


def _tile_vjp(ctx, g):
    x = ctx.args[0]
    reps = params("tile", ctx)["reps"]
    reps = (operator.index(reps),) if isinstance(reps, int) or hasattr(reps, "__index__") else \
        tuple(operator.index(r) for r in reps)
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    xs = (1,) * (nd - x.ndim) + tuple(x.shape)
    inter = tuple(v for r, n in zip(reps, xs) for v in (r, n))
    gx = T.sum(g.reshape(inter), axis=tuple(range(0, 2 * nd, 2))) if nd else g
    return (fit(gx.reshape(x.shape), x), None)


register("tile", _tile_vjp)


def _repeat_vjp(ctx, g):
    x = ctx.args[0]
    p = params("repeat", ctx)
    reps, axis = p["repeats"], p["axis"]
    shape = tuple(x.shape)
    if axis is None:
        shape, axis = (_numel(shape),), 0
    axis = norm_axis(axis, len(shape), "repeat")
    n = shape[axis]
    if not (isinstance(reps, int) or hasattr(reps, "__index__") and not hasattr(reps, "shape")):
        r = reps if isinstance(reps, Tensor) else T.asarray(reps, device=g.device)
        reps = int(r.item()) if r.numel() == 1 else r
    if isinstance(reps, Tensor):
        idx = T.repeat(T.arange(n, device=g.device), reps.to(g.device).astype(T.int64, copy=False))
        gx = T.index_add(T.zeros(shape, dtype=g.dtype, device=g.device), axis, idx, g)
    else:
        r = operator.index(reps)
        gx = T.sum(g.reshape(shape[:axis] + (n, r) + shape[axis + 1:]), axis=axis + 1)
    return (fit(gx.reshape(x.shape), x),) + (None,) * (len(ctx.args) - 1)


register("repeat", _repeat_vjp, save=(1,))


# ---------------------------------------------------------------- pad

def _pad_vjp(ctx, g):
    x = ctx.args[0]
    p = params("pad", ctx)
    widths = _manip._pairs(p["pad_width"], x.ndim, "pad", True)
    mode = p["mode"]
    if len(ctx.args) > 3 and ctx.needs is not None and ctx.needs[3]:
        raise NotImplementedError("autograd: pad with constant_values that require grad is not "
                                  "supported; pad with 0 and add the constants with where()")
    rest = (None,) * (len(ctx.args) - 1)
    if mode in _pad_modes.EXTRA_MODES or p["reflect_type"] == "odd":
        return (fit(_pad_extra_vjp(x, widths, p, g), x),) + rest
    if mode == "constant":
        key = tuple(slice(b, b + n) for (b, _), n in zip(widths, x.shape))
        return (fit(g[key], x),) + rest
    shape = list(g.shape)
    for a in range(x.ndim - 1, -1, -1):
        b, e = widths[a]
        if b or e:
            n = x.shape[a]
            shape[a] = n
            idx = _manip._pad_index(n, b, e, mode).to(g.device)
            g = T.index_add(T.zeros(tuple(shape), dtype=g.dtype, device=g.device), a, idx, g)
    return (fit(g, x),) + rest


def _pad_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    if len(tans) > 3 and tans[3] is not None:
        raise NotImplementedError("autograd: pad with constant_values that carry a tangent is "
                                  "not supported")
    p = params("pad", ctx)
    mode = p["mode"]
    if mode in ("constant", "empty"):
        return T.pad(t, p["pad_width"], "constant", 0)
    if mode in _SELECTING:
        raise NotImplementedError(_selecting_message(mode))
    if mode == "linear_ramp":   # the ramps towards the fixed end values: the tangent ramps to 0
        return T.pad(t, p["pad_width"], mode, end_values=0)
    if mode in _pad_modes.STAT_MODES:   # mean: linear
        return T.pad(t, p["pad_width"], mode, stat_length=p["stat_length"])
    return T.pad(t, p["pad_width"], mode, reflect_type=p["reflect_type"])


register("pad", _pad_vjp, _pad_jvp)

# The statistic, ramp and odd-reflection modes (tensor/pad_modes.py), axis by axis in reverse
# of the forward's order. maximum, minimum and median would need x's values to know which
# element each pad copies; pad does not save x (its other modes need only shapes), so they
# refuse.
_SELECTING = ("maximum", "minimum", "median")


def _selecting_message(mode):
    fn = {"maximum": "amax", "minimum": "amin"}.get(mode, mode)
    return (f"autograd: pad mode {mode!r} is not differentiable (it would need the input's values, "
            f"which pad does not keep); compute the statistic with T.{fn}(..., keepdims=True) and "
            "join it with concatenate")


def _at(g, a, start, stop):
    return g[_along(a, slice(start, stop))]


def _placed(v, a, before, after):
    """v padded with zeros along axis a only."""
    w = [(0, 0)] * v.ndim
    w[a] = (before, after)
    return T.pad(v, w)


def _ramp_back(g, a, n, b, e):
    gx = _at(g, a, b, b + n)
    for width, left in ((b, True), (e, False)):
        if width:
            side = _at(g, a, 0, b) if left else _at(g, a, b + n, b + n + e)
            w = _pad_modes.ramp_weights(width, left, a, g.ndim, g.device).astype(g.dtype)
            share = T.sum(side * w, axis=a, keepdims=True)
            gx = gx + (_placed(share, a, 0, n - 1) if left else _placed(share, a, n - 1, 0))
    return gx


def _mean_back(g, a, n, b, e, lengths):
    gx = _at(g, a, b, b + n)
    lb, le = _pad_modes.stat_lengths(lengths, n)
    for width, k, left in ((b, lb, True), (e, le, False)):
        if width and k:
            side = _at(g, a, 0, b) if left else _at(g, a, b + n, b + n + e)
            share = T.sum(side, axis=a, keepdims=True) / k
            spread = T.broadcast_to(share, share.shape[:a] + (k,) + share.shape[a + 1:])
            gx = gx + (_placed(spread, a, 0, n - k) if left else _placed(spread, a, n - k, 0))
    return gx


def _odd_back(g, a, n, b, e, include_edge):
    if n == 1:   # the forward repeated the single value
        idx = _manip._pad_index(1, b, e, "edge").to(g.device)
        shape = g.shape[:a] + (1,) + g.shape[a + 1:]
        return T.index_add(T.zeros(shape, dtype=g.dtype, device=g.device), a, idx, g)
    steps, lengths, m = _pad_modes.odd_steps(n, b, e, include_edge), [], n
    for before, after in steps:
        lengths.append(m)
        m += len(before) + len(after)
    for (before, after), m in zip(reversed(steps), reversed(lengths)):
        cb, ce = len(before), len(after)
        gv = _at(g, a, cb, cb + m)
        sides = ((before, _at(g, a, 0, cb), True), (after, _at(g, a, cb + m, cb + m + ce), False))
        for idx, side, left in sides:
            if idx:   # side = 2 * edge - take(v, idx)
                gv = T.index_add(gv, a, T.asarray(idx, dtype=T.int64, device=g.device), -side)
                twice = 2 * T.sum(side, axis=a, keepdims=True)
                gv = gv + (_placed(twice, a, 0, m - 1) if left else _placed(twice, a, m - 1, 0))
        g = gv
    return g


def _pad_extra_vjp(x, widths, p, g):
    mode = p["mode"]
    if mode in _SELECTING:
        raise NotImplementedError(_selecting_message(mode))
    if _numel(x.shape) == 0:
        return T.zeros(tuple(x.shape), dtype=g.dtype, device=g.device)
    lengths = None
    if mode in _pad_modes.STAT_MODES:
        lengths = _manip._pad_ends(mode, x.ndim, None, p["stat_length"])
    for a in range(x.ndim - 1, -1, -1):
        b, e = widths[a]
        n = x.shape[a]
        if not (b or e):
            continue
        if mode == "empty":
            g = _at(g, a, b, b + n)
        elif mode == "linear_ramp":
            g = _ramp_back(g, a, n, b, e)
        elif mode == "mean":
            g = _mean_back(g, a, n, b, e, lengths[a])
        else:
            g = _odd_back(g, a, n, b, e, mode == "symmetric")
    return g


# ---------------------------------------------------------------- flips and rotations

def _fliplr_vjp(ctx, g):
    return (fit(T.flip(g, 1), ctx.args[0]),)


def _flipud_vjp(ctx, g):
    return (fit(T.flip(g, 0), ctx.args[0]),)


def _rot90_vjp(ctx, g):
    p = params("rot90", ctx)
    return (fit(T.rot90(g, -p["k"], p["axes"]), ctx.args[0]),) + (None,) * (len(ctx.args) - 1)


register("fliplr", _fliplr_vjp)
register("flipud", _flipud_vjp)
register("rot90", _rot90_vjp)
