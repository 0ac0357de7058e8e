"""Derivative rules of reductions and scans (tensor/reductions.py)."""
from __future__ import annotations

import tensor as T

from .graph import RULES, Rule
from .rules_util import fit


def _axes(ctx, ndim):
    from tensor.views import norm_axes
    a = ctx.kwargs.get("axis", ctx.args[1] if len(ctx.args) > 1 else None)
    if a is None:
        a = ctx.kwargs.get("dim")
    return norm_axes(a, ndim, "sum")


def _keepdims(ctx, i):
    return ctx.kwargs.get("keepdims", ctx.args[i] if len(ctx.args) > i else False)


def _expand_back(g, x, axes, keepdims):
    """Broadcast a reduced gradient back to the input's shape."""
    if not keepdims and axes:
        g = T.expand_dims(g, axes)
    return T.broadcast_to(g, x.shape)


def _sum_vjp(ctx, g):
    x = ctx.args[0]
    axes = _axes(ctx, x.ndim)
    return (fit(_expand_back(g, x, axes, _keepdims(ctx, 3)), x),)


def _sum_jvp(ctx, tans):
    t = tans[0]
    return None if t is None else T.sum(t, *ctx.args[1:], **ctx.kwargs)


RULES["sum"] = Rule("sum", _sum_vjp, _sum_jvp, ())
