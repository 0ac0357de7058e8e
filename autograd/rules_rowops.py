"""Derivative rules of tensor/rowops.py's ops: softmax, log_softmax (each one node, whether
T.softmax, x.softmax() or nn.functional.softmax recorded it) and relu.

A vjp runs rowops' fused backward when the backward pass is not itself recorded, and composes
public ops under create_graph=True, so higher derivatives work.
"""
from __future__ import annotations

import tensor as T
from tensor import rowops

from .grad_mode import is_grad_enabled
from .graph import RULES, Rule
from .rules_util import fit


def _axis(y, axis):
    """The reduction axis of the composed rules (a 0-d y reduces over all of itself)."""
    return None if y.ndim == 0 else axis


def _softmax_rule(log: bool) -> Rule:
    def vjp(ctx, g):
        y, x, axis = ctx.out, ctx.args[0], ctx.args[1]
        rest = (None,) * (len(ctx.args) - 1)   # axis (and dtype=)
        if not is_grad_enabled():
            return (fit(rowops.softmax_backward(y, g, axis, log), x),) + rest
        ax = _axis(y, axis)
        if log:
            return (fit(g - T.exp(y) * g.sum(axis=ax, keepdims=True), x),) + rest
        return (fit(y * (g - (g * y).sum(axis=ax, keepdims=True)), x),) + rest

    def jvp(ctx, tans):
        t, y = tans[0], ctx.out
        if t is None:
            return None
        t = t.astype(y.dtype, copy=False)   # (dtype= cast x inside the op)
        ax = _axis(y, ctx.args[1])
        if log:
            return t - (T.exp(y) * t).sum(axis=ax, keepdims=True)
        return y * (t - (y * t).sum(axis=ax, keepdims=True))
    name = "log_softmax" if log else "softmax"
    return Rule(name, vjp, jvp, ("out",))


RULES["softmax"] = _softmax_rule(False)
RULES["log_softmax"] = _softmax_rule(True)


def _relu_vjp(ctx, g):
    return (T.where(ctx.out > 0, g, 0.0),)   # the gradient at 0 is 0, as PyTorch's


def _relu_jvp(ctx, tans):
    return None if tans[0] is None else T.where(ctx.out > 0, tans[0], 0.0)


RULES["relu"] = Rule("relu", _relu_vjp, _relu_jvp, ("out",))
