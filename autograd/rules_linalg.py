"""Derivative rules of the matrix products (tensor/products.py): matmul, dot, tensordot, outer,
inner. All are bilinear: the jvp is op(ta, b) + op(a, tb); the vjp contracts g with the other
operand over the output's free axes (for matmul: g @ b^T and a^T @ g, with 1-D operands
promoted as NumPy does and broadcast batch axes summed back).
"""
from __future__ import annotations

import operator

import tensor as T
from tensor._tensor import Tensor

from .graph import RULES, Rule
from .rules_util import fit


def _t(a, device=None):
    """A saved operand as a Tensor (a non-Tensor one is made on `device`: the other operand's)."""
    return a if isinstance(a, Tensor) else T.asarray(a, device=device)


def _needs(ctx) -> tuple:
    """Per arg: does it need a gradient (every tensor arg when the Ctx was built without)."""
    if ctx.needs is not None:
        return ctx.needs
    return tuple(hasattr(a, "shape") for a in ctx.args)


def _bilinear_jvp(op, extra=lambda ctx: ()):
    """jvp of a bilinear op(a, b, *extra): op(ta, b) + op(a, tb)."""
    def jvp(ctx, tans):
        a, b = ctx.args[:2]
        ta, tb = tans[0], tans[1] if len(tans) > 1 else None
        r = None
        if ta is not None:
            r = op(ta, _t(b, ta.device), *extra(ctx))
        if tb is not None:
            s = op(_t(a, tb.device), tb, *extra(ctx))
            r = s if r is None else r + s
        if r is None:
            return None
        return r if r.dtype is ctx.out.dtype else r.astype(ctx.out.dtype)
    return jvp


def _matmul_grads(a, b, g, need_a, need_b):
    """(d/da, d/db) of sum(g * matmul(a, b)), NumPy's 1-D promotion and batch broadcasting."""
    a, b = _t(a, g.device), _t(b, g.device)
    a2 = T.expand_dims(a, 0) if a.ndim == 1 else a
    b2 = T.expand_dims(b, -1) if b.ndim == 1 else b
    if b.ndim == 1:
        g = T.expand_dims(g, -1)
    if a.ndim == 1:
        g = T.expand_dims(g, -2)
    ga = gb = None
    if need_a:
        ga = fit(T.matmul(g, b2.mT), a2).reshape(a.shape)
    if need_b:
        gb = fit(T.matmul(a2.mT, g), b2).reshape(b.shape)
    return ga, gb


def _matmul_vjp(ctx, g):
    a, b = ctx.args[:2]
    return _matmul_grads(a, b, g, _needs(ctx)[0], _needs(ctx)[1])


RULES["matmul"] = Rule("matmul", _matmul_vjp, _bilinear_jvp(lambda a, b: T.matmul(a, b)), (0, 1))


def _norm_axes(axes, nd):
    axes = [axes] if isinstance(axes, int) or hasattr(axes, "__index__") else list(axes)
    return [operator.index(x) % nd if nd else operator.index(x) for x in axes]


def tensordot_axes(a_nd, b_nd, axes):
    """tensordot's `axes` as two lists of non-negative axes (as tensor/products.py reads it)."""
    if isinstance(axes, int):
        return list(range(a_nd - axes, a_nd)), list(range(axes))
    ax_a, ax_b = axes
    return _norm_axes(ax_a, a_nd), _norm_axes(ax_b, b_nd)


def _tensordot_grads(a, b, g, ax_a, ax_b, need_a, need_b):
    """g has a's free axes then b's. d/da = g contracted with b over b's free axes, whose result
    holds a's free axes then b's contracted axes (in b's order): permute those onto a's."""
    a, b = _t(a, g.device), _t(b, g.device)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    nfa, nfb = len(free_a), len(free_b)
    ga = gb = None
    if need_a:
        r = T.tensordot(g, b, (list(range(nfa, nfa + nfb)), free_b))
        src = [0] * a.ndim
        for i, f in enumerate(free_a):
            src[f] = i
        order_b = sorted(ax_b)
        for ia, ib in zip(ax_a, ax_b):
            src[ia] = nfa + order_b.index(ib)
        ga = fit(T.permute(r, src) if a.ndim else r, a)
    if need_b:
        r = T.tensordot(a, g, (free_a, list(range(nfa))))
        src = [0] * b.ndim
        order_a = sorted(ax_a)
        for ia, ib in zip(ax_a, ax_b):
            src[ib] = order_a.index(ia)
        for j, f in enumerate(free_b):
            src[f] = len(ax_a) + j
        gb = fit(T.permute(r, src) if b.ndim else r, b)
    return ga, gb


def _tensordot_vjp(ctx, g):
    a, b = ctx.args[:2]
    axes = ctx.kwargs.get("axes", ctx.args[2] if len(ctx.args) > 2 else 2)
    ax_a, ax_b = tensordot_axes(a.ndim, b.ndim, axes)
    return _tensordot_grads(a, b, g, ax_a, ax_b, _needs(ctx)[0], _needs(ctx)[1]) + \
        (None,) * (len(ctx.args) - 2)


def _tensordot_extra(ctx):
    return (ctx.kwargs.get("axes", ctx.args[2] if len(ctx.args) > 2 else 2),)


RULES["tensordot"] = Rule("tensordot", _tensordot_vjp,
                          _bilinear_jvp(lambda a, b, ax: T.tensordot(a, b, ax), _tensordot_extra),
                          (0, 1))


def _scalar_grads(a, b, g, need_a, need_b):
    """A 0-d operand makes dot/inner a plain product."""
    return (fit(g * b, a) if need_a else None), (fit(g * a, b) if need_b else None)


def _dot_vjp(ctx, g):
    a, b = _t(ctx.args[0], g.device), _t(ctx.args[1], g.device)
    n = _needs(ctx)[:2]
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_grads(a, b, g, *n)
    if a.ndim <= 2 and b.ndim <= 2:
        return _matmul_grads(a, b, g, *n)
    return _tensordot_grads(a, b, g, [a.ndim - 1], [0 if b.ndim == 1 else b.ndim - 2], *n)


def _inner_vjp(ctx, g):
    a, b = _t(ctx.args[0], g.device), _t(ctx.args[1], g.device)
    n = _needs(ctx)[:2]
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_grads(a, b, g, *n)
    return _tensordot_grads(a, b, g, [a.ndim - 1], [b.ndim - 1], *n)


def _outer_vjp(ctx, g):
    a, b = _t(ctx.args[0], g.device), _t(ctx.args[1], g.device)
    ga = fit(T.matmul(g, b.reshape(-1)).reshape(a.shape), a) if _needs(ctx)[0] else None
    gb = fit(T.matmul(a.reshape(-1), g).reshape(b.shape), b) if _needs(ctx)[1] else None
    return ga, gb


RULES["dot"] = Rule("dot", _dot_vjp, _bilinear_jvp(lambda a, b: T.dot(a, b)), (0, 1))
RULES["inner"] = Rule("inner", _inner_vjp, _bilinear_jvp(lambda a, b: T.inner(a, b)), (0, 1))
RULES["outer"] = Rule("outer", _outer_vjp, _bilinear_jvp(lambda a, b: T.outer(a, b)), (0, 1))
