"""Derivative rules of the elementwise ops, built from the partials the op table gives
(tensor/optable.py, `Op.grad`), then the few rules that are not a table entry's partials.

A unary op gives its derivative d(x, out): vjp is g * d, jvp is t * d. A binary op gives its two
partials; vjp sums g * partial back to each operand's shape, jvp is ta * da + tb * db. ZERO ops
get a zero gradient; NONE ops (no float output) get no rule: their results never need one;
NO_RULE ops (a float output, no derivative: nextafter) get none either, so recording one on a
graph raises.
"""
from __future__ import annotations

import tensor as T
from tensor.optable import BINARY, NO_RULE, NONE, UNARY, ZERO

from .graph import RULES, Ctx, Rule
from .rules_util import fit


def _at(p, *args):
    """A partial's value: a constant, or the table's function of (operands..., out)."""
    return p(*args) if callable(p) else p


def _unary(name, grad):
    (d,) = grad.d

    def vjp(ctx, g):
        return (fit(g * _at(d, ctx.args[0], ctx.out), ctx.args[0]),)

    def jvp(ctx, tans):
        t = tans[0]
        return None if t is None else t * _at(d, ctx.args[0], ctx.out)
    return Rule(name, vjp, jvp, grad.save)


def _zero_unary(name):
    """Piecewise-constant ops: zero gradient (as PyTorch's floor, sign, round...)."""
    def vjp(ctx, g):
        return (T.zeros_like(g, dtype=ctx.args[0].dtype),)

    def jvp(ctx, tans):
        return None if tans[0] is None else T.zeros_like(tans[0])
    return Rule(name, vjp, jvp, ())


def _binary(name, grad):
    """A partial is computed only for an operand that is a tensor and needs it (a Python scalar
    operand, or one without requires_grad / a tangent, skips its partial's ops)."""
    def partials(a, b, y, needs):
        return tuple(_at(p, a, b, y) if need and hasattr(v, "shape") else None
                     for p, v, need in zip(grad.d, (a, b), needs))

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
    return Rule(name, vjp, jvp, grad.save, reads=grad.reads)


for _op in UNARY + BINARY:
    if _op.grad in (None, NONE, NO_RULE):  # None: undeclared, which tests/test_optable.py
        continue                                # reports (autograd itself still imports)
    if _op.grad == ZERO:  # unary only: a binary piecewise-constant op gives zero partials
        RULES[_op.name] = _zero_unary(_op.name)
        continue
    RULES[_op.name] = (_unary if _op.arity == 1 else _binary)(_op.name, _op.grad)
    if _op.grad.inplace is True:  # op_ reads neither operand nor out: the same rule holds
        RULES[_op.name + "_"] = RULES[_op.name]


def _overwritten(name):
    """x.op_(...) of an op with no float output (x.eq_(y), x.logical_and_(y)) on a float x on
    the graph: x then holds 0 / 1, constants, so every operand gets a zero gradient (as
    PyTorch's) instead of a refusal."""
    def zeros(t):
        return T.zeros(t.shape, dtype=t.dtype, device=t.device)

    def vjp(ctx, g):
        return tuple(zeros(a) if isinstance(a, T.Tensor) and a.dtype.kind in "fc" else None
                     for a in ctx.args)

    def jvp(ctx, tans):
        return zeros(ctx.out)
    return Rule(name, vjp, jvp, ())


for _op in UNARY + BINARY:
    if _op.grad == NONE:
        RULES.setdefault(_op.name + "_", _overwritten(_op.name + "_"))


# ---------------------------------------------------------------- by hand
# where is not a table op (a condition and two values); multiply_/true_divide_ (inplace=OWN in
# the table) overwrite an operand their partials read, so they keep a copy of it first.

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


_inplace_product("multiply_", divide=False)
_inplace_product("true_divide_", divide=True)


# ---------------------------------------------------------------- complex, not holomorphic
# The table's partials are complex derivatives d/dz (the engine conjugates around a vjp,
# autograd.graph.Rule). conj, abs, angle and the complex sign are functions of z and conj(z):
# their rules handle complex numbers themselves (conj=False), and are the table's for real ones.

def _is_c(a) -> bool:
    return hasattr(a, "dtype") and a.dtype.kind == "c"


def _over(v, r):
    """v / r for a real r >= 0, taken as 0 where r == 0 (PyTorch's choice at z = 0)."""
    zero = r == 0
    return T.where(zero, 0.0, v / T.where(zero, 1.0, r))


def _conj_vjp(ctx, g):
    return (fit(T.conj(g) if _is_c(g) else g, ctx.args[0]),)


def _conj_jvp(ctx, tans):
    t = tans[0]
    return None if t is None else (T.conj(t) if _is_c(t) else t)


def _abs_jvp(ctx, tans):
    """d|z| = Re(conj(sgn z) dz)."""
    t, x = tans[0], ctx.args[0]
    if t is None:
        return None
    return T.real(T.conj(T.sign(x)) * t) if _is_c(x) else t * T.sign(x)


def _sgn_project(x, y, v):
    """The complex sign's derivative applied to v, (v - s Re(conj(s) v)) / |z| with s = sgn z:
    a real-linear map that is its own adjoint, so vjp and jvp alike."""
    return _over(v - y * T.real(T.conj(y) * v), T.abs(x))


def _sign_vjp(ctx, g):
    x = ctx.args[0]
    return (fit(_sgn_project(x, ctx.out, g), x) if _is_c(x) else T.zeros_like(g, dtype=x.dtype),)


def _sign_jvp(ctx, tans):
    t, x = tans[0], ctx.args[0]
    if t is None:
        return None
    return _sgn_project(x, ctx.out, t) if _is_c(x) else T.zeros_like(t)


def _angle_vjp(ctx, g):
    """d arg z = Im(dz / z): the gradient is i g z / |z|^2 (0 at z = 0); real x: zero."""
    x = ctx.args[0]
    if not _is_c(x):
        return (T.zeros_like(g, dtype=x.dtype),)
    return (fit(_over(g * x, T.square(T.abs(x))) * 1j, x),)


def _angle_jvp(ctx, tans):
    t, x = tans[0], ctx.args[0]
    if t is None:
        return None
    if not _is_c(x):
        return T.zeros_like(t)
    return _over(T.imag(t * T.conj(x)), T.square(T.abs(x)))


RULES["conjugate"] = RULES["conjugate_"] = Rule("conjugate", _conj_vjp, _conj_jvp, (), conj=False)
RULES["abs"] = Rule("abs", RULES["abs"].vjp, _abs_jvp, (0,), conj=False)
RULES["sign"] = Rule("sign", _sign_vjp, _sign_jvp, (0, "out"), conj=False)
RULES["angle"] = Rule("angle", _angle_vjp, _angle_jvp, (0,), conj=False)


# ---------------------------------------------------------------- the in-place forms
# op_ of every differentiable table op, after the rules above: one that reads only the output or
# the other operand shares op's rule (the output saved is x after the write, version-checked);
# one whose partials read x's old value makes record() keep a copy of x first ("old0" in save:
# ctx.old), and runs op's rule on it, as PyTorch saves self's original value.

def _inplace_rule(name, base):
    if 0 not in base.save:
        return base

    def swap(ctx):
        return Ctx((ctx.old,) + tuple(ctx.args[1:]), ctx.kwargs, ctx.out, ctx.needs)
    reads = None if base.reads is None else tuple(
        tuple("old0" if i == 0 else i for i in r) for r in base.reads)
    return Rule(name, lambda ctx, g: base.vjp(swap(ctx), g),
                lambda ctx, tans: base.jvp(swap(ctx), tans),
                (base.save - {0}) | {"old0"}, base.conj, reads)


for _op in UNARY + BINARY:
    if _op.name in RULES and _op.name + "_" not in RULES:
        RULES[_op.name + "_"] = _inplace_rule(_op.name + "_", RULES[_op.name])


def _power_inplace():
    """x.pow_(b): as PyTorch's pow_, keep x's old value and b but not the result (so a later
    in-place write into x is no error); d/db reads x ** b, recomputed from the old value (recorded,
    so create_graph and reverse mode over the tangent see its history)."""
    base = RULES["power"]

    def swap(ctx, need_b):
        old, b = ctx.old, ctx.args[1]
        out = T.power(old, b) if need_b and hasattr(b, "shape") else None
        return Ctx((old,) + tuple(ctx.args[1:]), ctx.kwargs, out, ctx.needs)

    def vjp(ctx, g):
        return base.vjp(swap(ctx, ctx.needs[1]), g)

    def jvp(ctx, tans):
        return base.jvp(swap(ctx, tans[1] is not None), tans)
    return Rule("power_", vjp, jvp, ("old0", 1), base.conj)


RULES["power_"] = _power_inplace()
