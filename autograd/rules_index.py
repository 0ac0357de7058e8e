"""Derivative rules of indexing (tensor/indexing.py): getitem, setitem, take,
take_along_axis, index_add(_), scatter_add(_), index_put_.

Reading is a gather, so its vjp scatters the gradient back with accumulation (repeated
indices add up): index_put_(zeros, key, g, accumulate=True). Writing (setitem, index_put_
without accumulate) zeroes the written region of x's gradient; the written value gets the
gradient of the slots it actually landed in (with repeated indices the last write wins, so
the earlier ones get zero). In-place rules save only index tensors, never x (its old value
is gone after the op). All through public ops: create_graph=True works.
"""
from __future__ import annotations

import operator

import numpy as np

import tensor as T
from tensor._tensor import Tensor
from tensor.axes import norm_axis
from tensor.scatter import put_key

from .graph import RULES, Rule
from .rules_util import fit, needs, sum_to
from .rules_views import params, same_op_jvp


def _zeros(a, dtype=None):
    return T.zeros(a.shape, dtype=dtype or a.dtype, device=a.device)


def _float(a) -> bool:
    return hasattr(a, "dtype") and a.dtype.kind in "fc"


def _tuple_key(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _is_basic_item(k) -> bool:
    if k is None or k is Ellipsis or isinstance(k, slice):
        return True
    if isinstance(k, bool | np.bool_) or hasattr(k, "shape") or isinstance(k, list | tuple):
        return False
    try:
        operator.index(k)
        return True
    except TypeError:
        return False


def _is_basic(key) -> bool:
    return all(_is_basic_item(k) for k in _tuple_key(key))


def fit_value(gv, v):
    """The gradient of a written value v from the gradient gv of the indexed region: summed over
    broadcast axes (v may also carry extra leading size-1 axes, as NumPy allows), cast."""
    if gv is None or not _float(v):
        return None
    shape = tuple(v.shape)
    lead = 0
    while len(shape) - lead > gv.ndim and shape[lead] == 1:
        lead += 1
    gv = sum_to(gv, shape[lead:])
    if gv.shape != shape:
        gv = gv.reshape(shape)
    return gv if gv.dtype is v.dtype else gv.astype(v.dtype)


def _region_grad(g, key):
    """g at key, zeroed where a repeated index was overwritten by a later write."""
    gv = g[key]
    if _is_basic(key) or gv.numel() <= 1:
        return gv
    ids = T.arange(gv.numel(), device=g.device).reshape(gv.shape)
    last = T.full(g.shape, -1, dtype=T.int64, device=g.device)
    last[key] = ids
    won = last[key] == ids
    if bool(T.all(won)):
        return gv
    return T.where(won, gv, T.zeros((), dtype=gv.dtype, device=gv.device))


def _write_vjp(ctx, g, key, value, accumulate):
    """Gradients (x, key, value, ...) of writing value (arg 2) at key (x's old value is not
    needed), aligned with ctx.args."""
    x = ctx.args[0]
    gx = gv = None
    if needs(ctx, 0):
        if accumulate:
            gx = g
        else:
            mask = T.ones(x.shape, dtype=g.dtype, device=g.device)
            mask[key] = 0
            gx = g * mask
        gx = fit(gx, x)
    if len(ctx.args) > 2 and needs(ctx, 2) and _float(value):
        gv = fit_value(g[key] if accumulate else _region_grad(g, key), value)
    return ((gx, None, gv) + (None,) * len(ctx.args))[:len(ctx.args)]


def _write_jvp(ctx, tans, key, accumulate):
    x = ctx.args[0]
    tx, tv = tans[0], (tans[2] if len(tans) > 2 else None)
    if (tx is None and tv is None) or not _float(x):
        return None
    r = tx.copy() if tx is not None else T.zeros(x.shape, dtype=x.dtype, device=x.device)
    if tv is None:
        if not accumulate:
            r[key] = 0
        return r
    tv = tv.astype(r.dtype, copy=False)
    if not accumulate:   # the write's own broadcasting (a (1,) value into a 0-d slot, as NumPy)
        r[key] = tv
        return r
    return T.index_put_(r, key, tv, accumulate)


# ---------------------------------------------------------------- getitem / setitem / index_put_

def _getitem_vjp(ctx, g):
    x, key = ctx.args[0], ctx.args[1]
    z = T.zeros(x.shape, dtype=g.dtype, device=g.device)
    return (fit(T.index_put_(z, key, g, True), x), None)


def _getitem_jvp(ctx, tans):
    t = tans[0]
    return None if t is None else t[ctx.args[1]]


RULES["getitem"] = Rule("getitem", _getitem_vjp, _getitem_jvp, (1,))


def _setitem_vjp(ctx, g):
    key, value = ctx.args[1], ctx.args[2]
    return _write_vjp(ctx, g, key, value, False)


def _setitem_jvp(ctx, tans):
    return _write_jvp(ctx, tans, ctx.args[1], False)


RULES["setitem"] = Rule("setitem", _setitem_vjp, _setitem_jvp, (1,))


def _index_put_vjp(ctx, g):
    p = params("index_put_", ctx)
    return _write_vjp(ctx, g, put_key(p["key"]), p["value"], bool(p["accumulate"]))


def _index_put_jvp(ctx, tans):
    p = params("index_put_", ctx)
    return _write_jvp(ctx, tans, put_key(p["key"]), bool(p["accumulate"]))


RULES["index_put_"] = Rule("index_put_", _index_put_vjp, _index_put_jvp, (1,))


# ---------------------------------------------------------------- take / take_along_axis

def _take_vjp(ctx, g):
    x = ctx.args[0]
    p = params("take", ctx)
    axis = p["axis"]
    if axis is None:
        z = T.zeros((int(np.prod(x.shape, dtype=np.int64)),), dtype=g.dtype, device=g.device)
        axis = 0
    else:
        z = T.zeros(x.shape, dtype=g.dtype, device=g.device)
        axis = norm_axis(axis, x.ndim, "take")
    z = T.index_put_(z, (slice(None),) * axis + (p["indices"],), g, True)
    return (fit(z.reshape(x.shape), x), None, None)


RULES["take"] = Rule("take", _take_vjp, same_op_jvp("take"), (1,))


def along_key(shape, idx, axis, device=None):
    """The advanced key of take_along_axis: idx on `axis`, broadcast aranges elsewhere (made
    on `device`, default idx's)."""
    key = []
    for d, n in enumerate(shape):
        if d == axis:
            key.append(idx)
        else:
            sh = [1] * len(shape)
            sh[d] = n
            key.append(T.arange(n, device=device or idx.device).reshape(sh))
    return tuple(key)


def _take_along_axis_vjp(ctx, g):
    x = ctx.args[0]
    p = params("take_along_axis", ctx)
    idx, axis = p["indices"], p["axis"]
    if not isinstance(idx, Tensor):
        idx = T.asarray(idx, device=g.device)
    shape = tuple(x.shape)
    if axis is None:
        shape, axis = (int(np.prod(shape, dtype=np.int64)),), 0
    axis = norm_axis(axis, len(shape), "take_along_axis")
    z = T.index_put_(T.zeros(shape, dtype=g.dtype, device=g.device),
                     along_key(shape, idx, axis, g.device), g, True)
    return (fit(z.reshape(x.shape), x), None, None)


RULES["take_along_axis"] = Rule("take_along_axis", _take_along_axis_vjp,
                                same_op_jvp("take_along_axis"), (1,))


# ---------------------------------------------------------------- index_add / scatter_add

def _index_add_rule(name):
    def vjp(ctx, g):
        p = params(name, ctx)
        x, src, alpha = ctx.args[0], p["source"], p["alpha"]
        if len(ctx.args) > 4 and needs(ctx, 4):
            raise NotImplementedError(f"autograd: {name} with a tensor alpha that requires grad "
                                      "is not supported; multiply the source instead")
        gx = fit(g, x) if needs(ctx, 0) else None
        gs = None
        if len(ctx.args) > 3 and needs(ctx, 3) and _float(src):
            idx = p["index"]
            idx = (idx if isinstance(idx, Tensor) else T.asarray(idx, device=g.device)).reshape(-1)
            gs = T.take(g, idx, norm_axis(p["axis"], g.ndim, "index_add"))
            if not (isinstance(alpha, int | float) and alpha == 1):
                gs = gs * alpha
            gs = fit(gs, src)
        return (gx, None, None, gs) + (None,) * (len(ctx.args) - 4)

    def jvp(ctx, tans):
        p = params(name, ctx)
        tx = tans[0]
        ts = tans[3] if len(tans) > 3 else None
        if len(tans) > 4 and tans[4] is not None:
            raise NotImplementedError(f"autograd: {name} with a tensor alpha that carries a "
                                      "tangent is not supported; multiply the source instead")
        return _add_into_tangent(ctx.args[0], tx, ts, lambda t, u: T.index_add(
            t, p["axis"], p["index"], u, p["alpha"]))
    RULES[name] = Rule(name, vjp, jvp, (2,))


_index_add_rule("index_add")
_index_add_rule("index_add_")


def _add_into_tangent(x, tx, ts, add):
    """jvp of x (+)= source at indices: x's tangent with the source's tangent added in."""
    if tx is None and ts is None:
        return None
    tx = tx.copy() if tx is not None else T.zeros(x.shape, dtype=x.dtype, device=x.device)
    return tx if ts is None else add(tx, ts.astype(tx.dtype, copy=False))


def _scatter_add_rule(name):
    def vjp(ctx, g):
        p = params(name, ctx)
        x, src = ctx.args[0], p["src"]
        gx = fit(g, x) if needs(ctx, 0) else None
        gs = None
        if len(ctx.args) > 3 and needs(ctx, 3) and _float(src):
            idx = p["index"]
            idx = idx if isinstance(idx, Tensor) else T.asarray(idx, device=g.device)
            axis = norm_axis(p["axis"], g.ndim, "scatter_add")
            sub = g[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(idx.shape))]
            gs = T.take_along_axis(sub, idx, axis)
            if gs.shape != tuple(src.shape):
                gs = T.pad(gs, [(0, s - n) for s, n in zip(src.shape, gs.shape)])
            gs = fit(gs, src)
        return (gx, None, None, gs)

    def jvp(ctx, tans):
        p = params(name, ctx)
        tx = tans[0]
        ts = tans[3] if len(tans) > 3 else None
        return _add_into_tangent(ctx.args[0], tx, ts, lambda t, u: T.scatter_add(
            t, p["axis"], p["index"], u))
    RULES[name] = Rule(name, vjp, jvp, (2,))


_scatter_add_rule("scatter_add")
_scatter_add_rule("scatter_add_")
