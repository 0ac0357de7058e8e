"""Helpers for derivative rules: registration, un-broadcasting, dtype fitting.

Rules are written in Tensor ops (through the public, recorded functions), so a backward pass
run with create_graph=True is itself differentiable.
"""
from __future__ import annotations

import inspect

import tensor as T
from tensor._tensor import Tensor
from tensor.public import PUB

from .graph import RULES, Rule


def rule(name, save=(), jvp=None):
    """Register fn(ctx, g) as the vector-Jacobian rule of op `name` (decorator)."""
    def deco(fn):
        RULES[name] = Rule(name, fn, jvp, save)
        return fn
    return deco


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum a broadcast gradient back down to `shape`."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and g.shape[i + lead] != 1)
    r = T.sum(g, axis=axes, keepdims=True) if axes else g
    return r.reshape(shape) if r.shape != shape else r


def fit(g, a):
    """The gradient for argument a: None for non-tensors, else summed to a's shape and cast
    to a's dtype (a may be a Tensor or a Meta)."""
    if g is None or not hasattr(a, "shape"):
        return None
    if not isinstance(g, Tensor):
        g = T.full(a.shape, g, dtype=a.dtype, device=getattr(a, "device", None))
    g = sum_to(g, a.shape)
    return g if g.dtype is a.dtype else g.astype(a.dtype)


def zeros_for(a):
    if not hasattr(a, "shape"):
        return None
    return T.zeros(a.shape, dtype=a.dtype, device=getattr(a, "device", None))


def needs(ctx, i) -> bool:
    return ctx.needs[i] if ctx.needs is not None else True


_SIGS: dict = {}


def params(ctx, name) -> dict:
    """The public call's parameters by name, defaults applied (out= dropped: it only says where
    the result is written)."""
    sig = _SIGS.get(name)
    if sig is None:
        sig = _SIGS[name] = inspect.signature(PUB[name])
    kw = ctx.kwargs
    if "out" in kw:
        kw = {k: v for k, v in kw.items() if k != "out"}
    return bind(sig, ctx.args, kw)


_EMPTY = inspect.Parameter.empty


def bind(sig: inspect.Signature, args, kwargs) -> dict:
    """sig.bind(*args, **kwargs) with defaults applied, as a dict in parameter order; a call
    that only names its parameters is mapped directly (inspect's bind costs ~10 us a call), any
    other (**kwargs, a missing or repeated argument) goes through inspect."""
    plan = _PLANS.get(id(sig))   # by identity: hashing a Signature hashes all its parameters
    if plan is None or plan[0] is not sig:
        P = inspect.Parameter
        ps = list(sig.parameters.values())
        plan = _PLANS[id(sig)] = (
            sig,
            [(q.name, q.default) for q in ps if q.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)],
            next((q.name for q in ps if q.kind is P.VAR_POSITIONAL), None),
            [(q.name, q.default) for q in ps if q.kind is P.KEYWORD_ONLY],
            next((q.name for q in ps if q.kind is P.VAR_KEYWORD), None),
            frozenset(q.name for q in ps if q.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)))
    _, pos, var, kwonly, varkw, named = plan
    if (var is not None or len(args) <= len(pos)) and varkw is None and named.issuperset(kwargs):
        out = {}
        for i, (n, d) in enumerate(pos):
            if i < len(args):
                if n in kwargs:
                    break   # given twice: inspect's error
                out[n] = args[i]
            elif not _fill(out, n, d, kwargs):
                break
        else:
            if var is not None:
                out[var] = tuple(args[len(pos):])
            if all(_fill(out, n, d, kwargs) for n, d in kwonly):
                return out
    b = sig.bind(*args, **kwargs)
    b.apply_defaults()
    return b.arguments


def _fill(out: dict, name: str, default, kwargs: dict) -> bool:
    """out[name] from kwargs, else its default; False when it has neither (inspect's error)."""
    if name in kwargs:
        out[name] = kwargs[name]
    elif default is _EMPTY:
        return False
    else:
        out[name] = default
    return True


_PLANS: dict = {}


def needs_all(ctx) -> tuple:
    """Per arg: does it need a gradient (every tensor arg when the Ctx was built without)."""
    if ctx.needs is not None:
        return ctx.needs
    return tuple(hasattr(a, "shape") for a in ctx.args)


def like(t, out):
    """A tangent cast to the output's dtype."""
    return t if t.dtype is out.dtype else t.astype(out.dtype)
