"""Derivative rules of the elementwise ops (tensor/optable.py), forward and reverse.

A unary op needs only its derivative d(x, out): vjp is g * d, jvp is t * d. A binary op gives
its two partials; vjp sums them back to each operand's shape, jvp is ta * da + tb * db.
"""
from __future__ import annotations

import math

import tensor as T

from .graph import RULES, Rule
from .rules_util import fit

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)


def _unary(name, deriv, save):
    """deriv(x, out) -> dy/dx (x or out may be a Meta when not saved)."""
    def vjp(ctx, g):
        return (fit(g * deriv(ctx.args[0], ctx.out), ctx.args[0]),)

    def jvp(ctx, tans):
        t = tans[0]
        return None if t is None else t * deriv(ctx.args[0], ctx.out)
    RULES[name] = Rule(name, vjp, jvp, save)


def _zero_unary(name):
    """Piecewise-constant ops: zero gradient (as PyTorch's floor, sign, round...)."""
    def vjp(ctx, g):
        return (T.zeros_like(g, dtype=ctx.args[0].dtype),)

    def jvp(ctx, tans):
        return None if tans[0] is None else T.zeros_like(tans[0])
    RULES[name] = Rule(name, vjp, jvp, ())


X, OUT = (0,), ("out",)
_unary("negative", lambda x, y: -1.0, ())
_unary("positive", lambda x, y: 1.0, ())
_unary("abs", lambda x, y: T.sign(x), X)
_unary("exp", lambda x, y: y, OUT)
_unary("expm1", lambda x, y: y + 1.0, OUT)
_unary("log", lambda x, y: 1.0 / x, X)
_unary("log1p", lambda x, y: 1.0 / (x + 1.0), X)
_unary("log2", lambda x, y: 1.0 / (x * _LN2), X)
_unary("log10", lambda x, y: 1.0 / (x * _LN10), X)
_unary("sqrt", lambda x, y: 0.5 / y, OUT)
_unary("square", lambda x, y: 2.0 * x, X)
_unary("reciprocal", lambda x, y: -(y * y), OUT)
_unary("sin", lambda x, y: T.cos(x), X)
_unary("cos", lambda x, y: -T.sin(x), X)
_unary("tan", lambda x, y: 1.0 + y * y, OUT)
_unary("arcsin", lambda x, y: 1.0 / T.sqrt(1.0 - x * x), X)
_unary("arccos", lambda x, y: -1.0 / T.sqrt(1.0 - x * x), X)
_unary("arctan", lambda x, y: 1.0 / (1.0 + x * x), X)
_unary("sinh", lambda x, y: T.cosh(x), X)
_unary("cosh", lambda x, y: T.sinh(x), X)
_unary("tanh", lambda x, y: 1.0 - y * y, OUT)
_unary("erf", lambda x, y: _2_SQRTPI * T.exp(-(x * x)), X)
_unary("sigmoid", lambda x, y: y * (1.0 - y), OUT)
for _n in ("sign", "floor", "ceil", "trunc", "rint"):
    _zero_unary(_n)


def _binary(name, partials, save):
    """partials(a, b, out) -> (d/da, d/db); a or b may be Python scalars."""
    def vjp(ctx, g):
        a, b = ctx.args[:2]
        da, db = partials(a, b, ctx.out, ctx.needs)
        return (fit(g * da, a) if da is not None else None,
                fit(g * db, b) if db is not None else None)

    def jvp(ctx, tans):
        a, b = ctx.args[:2]
        da, db = partials(a, b, ctx.out, (tans[0] is not None, tans[1] is not None))
        r = None
        if tans[0] is not None:
            r = tans[0] * da
        if tans[1] is not None:
            r = tans[1] * db if r is None else r + tans[1] * db
        return r
    RULES[name] = Rule(name, vjp, jvp, save)


def _need(needs, i, a):
    return needs[i] and hasattr(a, "shape")


def _mul(a, b, y, n):
    return (b if _need(n, 0, a) else None), (a if _need(n, 1, b) else None)


def _div(a, b, y, n):
    return ((1.0 / b) if _need(n, 0, a) else None), (-(y / b) if _need(n, 1, b) else None)


def _pow(a, b, y, n):
    da = b * a ** (b - 1) if _need(n, 0, a) else None
    db = None
    if _need(n, 1, b):
        db = T.where(a == 0, 0.0, y * T.log(T.where(a == 0, 1.0, a)))
    return da, db


def _maxmin(greater):
    def p(a, b, y, n):
        w = (a > b if greater else a < b) + 0.5 * (a == b)  # ties split the gradient
        return (w if _need(n, 0, a) else None), ((1.0 - w) if _need(n, 1, b) else None)
    return p


def _atan2(a, b, y, n):
    r = a * a + b * b
    return (b / r if _need(n, 0, a) else None), (-a / r if _need(n, 1, b) else None)


def _rem(a, b, y, n):
    return (1.0 if _need(n, 0, a) else None), (-T.floor_divide(a, b) if _need(n, 1, b) else None)


_binary("add", lambda a, b, y, n: (1.0, 1.0), ())
_binary("subtract", lambda a, b, y, n: (1.0, -1.0), ())
_binary("multiply", _mul, (0, 1))
_binary("true_divide", _div, (1, "out"))
_binary("power", _pow, (0, 1, "out"))
_binary("maximum", _maxmin(True), (0, 1))
_binary("minimum", _maxmin(False), (0, 1))
_binary("arctan2", _atan2, (0, 1))
_binary("remainder", _rem, (0, 1))
_binary("floor_divide", lambda a, b, y, n: (0.0, 0.0), ())


def _where_vjp(ctx, g):
    c, a, b = ctx.args
    zero = T.zeros_like(g)
    return (None, fit(T.where(c, g, zero), a), fit(T.where(c, zero, g), b))


def _where_jvp(ctx, tans):
    c, a, b = ctx.args
    ta, tb = tans[1], tans[2]
    if ta is None and tb is None:
        return None
    z = T.zeros(ctx.out.shape, dtype=ctx.out.dtype, device=ctx.out.device)
    return T.where(c, z if ta is None else ta, z if tb is None else tb)


RULES["where"] = Rule("where", _where_vjp, _where_jvp, (0,))


def _inplace_product(name, divide: bool):
    """multiply_/true_divide_: self's old value is gone after the op, so when the other operand
    carries a gradient or a tangent, record() keeps a copy of it first (ctx.old; "old" in save)."""
    def vjp(ctx, g):
        a, b = ctx.args[:2]
        ga = fit(g / b if divide else g * b, a) if ctx.needs[0] else None
        gb = None
        if ctx.needs[1]:
            gb = fit(-(g * ctx.old) / (b * b) if divide else g * ctx.old, b)
        return (ga, gb)

    def jvp(ctx, tans):
        ta, tb = tans[:2]
        b = ctx.args[1]
        r = None if ta is None else (ta / b if divide else ta * b)
        if tb is not None:
            d = -(ctx.old * tb) / (b * b) if divide else ctx.old * tb
            r = d if r is None else r + d
        return r
    RULES[name] = Rule(name, vjp, jvp, (1, "old"))


for _n in ("add", "subtract", "negative", "positive"):
    RULES[_n + "_"] = RULES[_n]
_inplace_product("multiply_", divide=False)
_inplace_product("true_divide_", divide=True)
