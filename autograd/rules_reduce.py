"""Derivative rules of reductions and scans (tensor/reductions.py): those of the reductions
table's entries (tensor/redtable.py; registered at the end, from the table) and of the
composites mean, var, std and logsumexp.

A reduction's vjp broadcasts g back over the reduced axes and weights it (1 for sum, 1/n for
mean, the softmax for logsumexp...); its jvp reduces the weighted tangent the same way.
"""
from __future__ import annotations

import math

import tensor as T
from tensor.axes import norm_axes, norm_axis
from tensor.redtable import REDUCTIONS

from .grad_mode import is_grad_enabled
from .graph import RULES, Rule
from .rules_util import fit, like, params


def _reduction(ctx, name, ndim):
    p = params(ctx, name)
    ax = p["axis"] if p["axis"] is not None else p.get("dim")
    return p, norm_axes(ax, ndim, name)


def _keep(r, axes, keepdims):
    """A reduced result with the reduced axes kept as size 1 (broadcastable against x)."""
    return T.expand_dims(r, axes) if axes and not keepdims else r


def _unreduce(g, shape, axes, keepdims):
    """Broadcast a reduced gradient back to the input's shape (broadcast_to is skipped when
    nothing changes: it returns its input then, which the recorder mishandles)."""
    g = _keep(g, axes, keepdims)
    return g if g.shape == tuple(shape) else T.broadcast_to(g, shape)


def _count(shape, axes) -> int:
    return math.prod(shape[i] for i in axes)


# ---------------------------------------------------------------- sum, mean, prod

def _sum_vjp(ctx, g):
    x = ctx.args[0]
    p, axes = _reduction(ctx, "sum", x.ndim)
    return (fit(_unreduce(g, x.shape, axes, p["keepdims"]), x),)


def _sum_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    p, axes = _reduction(ctx, "sum", t.ndim)
    return like(T.sum(t, axis=axes, keepdims=p["keepdims"]), ctx.out)


def _mean_vjp(ctx, g):
    x = ctx.args[0]
    p, axes = _reduction(ctx, "mean", x.ndim)
    n = _count(x.shape, axes)
    return (fit(_unreduce(g, x.shape, axes, p["keepdims"]) / max(n, 1), x),)


def _mean_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    p, axes = _reduction(ctx, "mean", t.ndim)
    return like(T.mean(t, axis=axes, keepdims=p["keepdims"]), ctx.out)


def _exclusive_cumprod(v):
    """prod of v[..., :i] at position i (last axis): 1 first, no division."""
    one = T.ones(v.shape[:-1] + (1,), dtype=v.dtype, device=v.device)
    return T.concatenate([one, T.cumprod(v[..., :-1], axis=-1)], axis=-1)


def _prod_others(x, axes, out_keep):
    """The product over `axes` of every element but the one at each position, shaped like x.
    Without zeros that is out / x; with zeros, left and right exclusive cumulative products
    (exact, and differentiable again through cumprod's rule)."""
    if not axes:
        return T.ones(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return T.zeros(x.shape, dtype=x.dtype, device=x.device)
    if not bool(T.any(x == 0)):
        return out_keep / x
    k = len(axes)
    kept = [i for i in range(x.ndim) if i not in axes]
    front = T.moveaxis(x, list(axes), list(range(x.ndim - k, x.ndim)))
    moved_shape = front.shape
    v = front.reshape(tuple(x.shape[i] for i in kept) + (_count(x.shape, axes),))
    left = _exclusive_cumprod(v)
    right = T.flip(_exclusive_cumprod(T.flip(v, -1)), -1)
    r = (left * right).reshape(moved_shape)
    return T.moveaxis(r, list(range(x.ndim - k, x.ndim)), list(axes))


def _prod_vjp(ctx, g):
    x, out = ctx.args[0], ctx.out
    p, axes = _reduction(ctx, "prod", x.ndim)
    others = _prod_others(x, axes, _keep(out, axes, p["keepdims"]))
    return (fit(_unreduce(g, x.shape, axes, p["keepdims"]) * others, x),)


def _prod_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    x, out = ctx.args[0], ctx.out
    p, axes = _reduction(ctx, "prod", x.ndim)
    others = _prod_others(x, axes, _keep(out, axes, p["keepdims"]))
    return like(T.sum(t * others, axis=axes, keepdims=p["keepdims"]), out)


RULES["mean"] = Rule("mean", _mean_vjp, _mean_jvp, ())


# ---------------------------------------------------------------- var, std

def _var_parts(ctx, name):
    """(params, axes, x - mean, 1 / (n - ddof)) of a var/std call."""
    x = ctx.args[0]
    p, axes = _reduction(ctx, name, x.ndim)
    ddof = p["correction"] if p["correction"] is not None else p["ddof"]
    denom = _count(x.shape, axes) - ddof
    dev = x - T.mean(x, axis=axes, keepdims=True)
    return p, axes, dev, (1.0 / denom if denom > 0 else math.inf)


def _var_vjp(ctx, g):
    x = ctx.args[0]
    p, axes, dev, inv = _var_parts(ctx, "var")
    return (fit(_unreduce(g, x.shape, axes, p["keepdims"]) * dev * (2.0 * inv), x),)


def _dvar(ctx, name, t):
    """The tangent of var: 2 sum(Re(conj(x - mean) t)) / (n - ddof) (complex x: var is real)."""
    p, axes, dev, inv = _var_parts(ctx, name)
    prod = T.real(T.conj(dev) * t) if dev.dtype.kind == "c" else dev * t
    return T.sum(prod, axis=axes, keepdims=p["keepdims"]) * (2.0 * inv)


def _var_jvp(ctx, tans):
    if tans[0] is None:
        return None
    return like(_dvar(ctx, "var", tans[0]), ctx.out)


def _std_scale(out):
    """d std / d var = 1 / (2 std), taken as 0 where std is 0 (as PyTorch), NaN-free."""
    zero = out == 0
    return T.where(zero, 0.0, 0.5 / T.where(zero, 1.0, out))


def _std_vjp(ctx, g):
    x = ctx.args[0]
    p, axes, dev, inv = _var_parts(ctx, "std")
    gv = g * _std_scale(ctx.out)
    return (fit(_unreduce(gv, x.shape, axes, p["keepdims"]) * dev * (2.0 * inv), x),)


def _std_jvp(ctx, tans):
    if tans[0] is None:
        return None
    return like(_dvar(ctx, "std", tans[0]) * _std_scale(ctx.out), ctx.out)


RULES["var"] = Rule("var", _var_vjp, _var_jvp, (0,))
RULES["std"] = Rule("std", _std_vjp, _std_jvp, (0, "out"))


# ---------------------------------------------------------------- max, min, logsumexp

def _extreme_weights(ctx, name):
    """Where x equals the (broadcast) result, 1/count (ties share the gradient evenly, as
    PyTorch's amax/amin); a NaN result matches the NaNs."""
    x, out = ctx.args[0], ctx.out
    p, axes = _reduction(ctx, name, x.ndim)
    o = _keep(out, axes, p["keepdims"])
    hit = (x == o) | (T.isnan(x) & T.isnan(o))
    w = hit.astype(x.dtype)
    return p, axes, w / T.sum(w, axis=axes, keepdims=True)


def _extreme(name):
    def vjp(ctx, g):
        x = ctx.args[0]
        p, axes, w = _extreme_weights(ctx, name)
        return (fit(_unreduce(g, x.shape, axes, p["keepdims"]) * w, x),)

    def jvp(ctx, tans):
        if tans[0] is None:
            return None
        p, axes, w = _extreme_weights(ctx, name)
        return like(T.sum(tans[0] * w, axis=axes, keepdims=p["keepdims"]), ctx.out)
    return Rule(name, vjp, jvp, (0, "out"))


def _softmax(ctx):
    x, out = ctx.args[0], ctx.out
    p, axes = _reduction(ctx, "logsumexp", x.ndim)
    o = _keep(out, axes, p["keepdims"])
    o = T.where(o == -math.inf, 0.0, o)  # all -inf (or empty): zero weights, not NaN
    return p, axes, T.exp(x - o)


def _lse_vjp(ctx, g):
    x = ctx.args[0]
    p, axes, sm = _softmax(ctx)
    return (fit(_unreduce(g, x.shape, axes, p["keepdims"]) * sm, x),)


def _lse_jvp(ctx, tans):
    if tans[0] is None:
        return None
    p, axes, sm = _softmax(ctx)
    return like(T.sum(tans[0] * sm, axis=axes, keepdims=p["keepdims"]), ctx.out)


RULES["logsumexp"] = Rule("logsumexp", _lse_vjp, _lse_jvp, (0, "out"))


# ---------------------------------------------------------------- cumsum, cumprod

def _scan_axis(ctx, name, x):
    """(axis, flat): the scanned axis, and whether x was flattened first (axis=None)."""
    p = params(ctx, name)
    ax = p["axis"] if p["axis"] is not None else p["dim"]
    if ax is None:
        return 0, True
    return norm_axis(ax, x.ndim, name), False


def _revcumsum(v, a):
    return T.flip(T.cumsum(T.flip(v, a), axis=a), a)


def _cumsum_vjp(ctx, g):
    x = ctx.args[0]
    a, flat = _scan_axis(ctx, "cumsum", x)
    r = _revcumsum(g, a)
    return (fit(r.reshape(x.shape) if flat else r, x),)


def _cumsum_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    a, flat = _scan_axis(ctx, "cumsum", t)
    return like(T.cumsum(t.reshape(-1) if flat else t, axis=a), ctx.out)


def _zeros_split(x, a):
    """Masks along axis a: positions before the first zero, and the first zero itself."""
    nz = T.cumsum(x == 0, axis=a)
    return nz == 0, (x == 0) & (nz == 1), nz


_DENSE_MAX = 1 << 24  # elements of the (..., n, n) table of the exact-to-all-orders form


def _dense(x, a):
    """P[..., i, k] = prod_{j<=k, j!=i} x_j for k >= i, else 0 (axis a moved last): a polynomial
    in x, so differentiating it again is exact even at zeros. O(n) times x's memory."""
    xm = T.moveaxis(x, a, -1)
    n = xm.shape[-1]
    i = T.arange(n, device=x.device)
    p = T.cumprod(T.where(T.eye(n, dtype=T.bool_, device=x.device), 1.0, T.expand_dims(xm, -2)),
                  axis=-1)
    return T.where(i.reshape(n, 1) <= i, p, 0.0)


def _use_dense(x, a, v) -> bool:
    """With zeros, the O(n) form below is exact to first order only; when this computation is
    itself recorded (create_graph, reverse-over-forward) take the dense form if it fits."""
    return (is_grad_enabled() and (x.requires_grad or v.requires_grad)
            and x.numel() * x.shape[a] <= _DENSE_MAX)


def _cumprod_grad(x, y, g, a):
    """d/dx_i of sum_k g_k y_k = sum_{k>=i} g_k prod_{j<=k, j!=i} x_j. Before the first zero it
    is revcumsum(g y) / x; at the first zero, revcumsum(g y') with that zero replaced by 1;
    past it every term holds the zero."""
    if not bool(T.any(x == 0)):
        return _revcumsum(g * y, a) / x
    if _use_dense(x, a, g):
        r = T.sum(_dense(x, a) * T.expand_dims(T.moveaxis(g, a, -1), -2), axis=-1)
        return T.moveaxis(r, -1, a)
    before, first, _ = _zeros_split(x, a)
    y1 = T.cumprod(T.where(first, 1.0, x), axis=a)
    return (T.where(before, _revcumsum(g * y, a) / T.where(before, x, 1.0), 0.0)
            + T.where(first, _revcumsum(g * y1, a), 0.0))


def _cumprod_tangent(x, y, t, a):
    """dy_k = sum_{i<=k} t_i prod_{j<=k, j!=i} x_j (same split as _cumprod_grad)."""
    if not bool(T.any(x == 0)):
        return y * T.cumsum(t / x, axis=a)
    if _use_dense(x, a, t):
        r = T.sum(_dense(x, a) * T.expand_dims(T.moveaxis(t, a, -1), -1), axis=-2)
        return T.moveaxis(r, -1, a)
    before, first, nz = _zeros_split(x, a)
    y1 = T.cumprod(T.where(first, 1.0, x), axis=a)
    t0 = T.sum(T.where(first, t, 0.0), axis=a, keepdims=True)
    head = y * T.cumsum(T.where(before, t, 0.0) / T.where(before, x, 1.0), axis=a)
    return T.where(before, head, 0.0) + T.where(nz >= 1, t0 * y1, 0.0)


def _cumprod_operand(ctx, x):
    a, flat = _scan_axis(ctx, "cumprod", x)
    xs = x.reshape(-1) if flat else x
    return a, flat, like(xs, ctx.out)


def _cumprod_vjp(ctx, g):
    x = ctx.args[0]
    a, flat, xs = _cumprod_operand(ctx, x)
    r = _cumprod_grad(xs, ctx.out, g, a)
    return (fit(r.reshape(x.shape) if flat else r, x),)


def _cumprod_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    a, flat, xs = _cumprod_operand(ctx, ctx.args[0])
    t = like(t.reshape(-1) if flat else t, ctx.out)
    return _cumprod_tangent(xs, ctx.out, t, a)


# ---------------------------------------------------------------- the table's entries

_TABLE = {"sum": Rule("sum", _sum_vjp, _sum_jvp, ()),
          "prod": Rule("prod", _prod_vjp, _prod_jvp, (0, "out")),
          "max": _extreme("max"), "min": _extreme("min"),
          "cumsum": Rule("cumsum", _cumsum_vjp, _cumsum_jvp, ()),
          "cumprod": Rule("cumprod", _cumprod_vjp, _cumprod_jvp, (0, "out"))}
for _r in REDUCTIONS:  # an entry with grad=True and no rule here fails tests/test_optable.py
    if _r.grad and _r.name in _TABLE:
        for _n in (_r.name, *_r.aliases):  # under the aliases too, as RULES["clamp"]: a Ctx
            RULES[_n] = _TABLE[_r.name]    # built by hand may name the op either way
