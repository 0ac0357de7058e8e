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
    """sig.bind(*args, **kwargs) with defaults applied, as a dict in parameter order; without
    keyword arguments it maps positions directly (inspect's bind costs ~10 us a call)."""
    plan = _PLANS.get(sig)
    if plan is None:
        P = inspect.Parameter
        ps = list(sig.parameters.values())
        plan = _PLANS[sig] = (
            [(q.name, q.default) for q in ps if q.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)],
            next((q.name for q in ps if q.kind is P.VAR_POSITIONAL), None),
            [(q.name, q.default) for q in ps if q.kind is P.KEYWORD_ONLY],
            next((q.name for q in ps if q.kind is P.VAR_KEYWORD), None))
    pos, var, kwonly, varkw = plan
    if not kwargs and (var is not None or len(args) <= len(pos)):
        out = {}
        for i, (n, d) in enumerate(pos):
            if i < len(args):
                out[n] = args[i]
            elif d is _EMPTY:
                break
            else:
                out[n] = d
        else:
            if var is not None:
                out[var] = tuple(args[len(pos):])
            if all(d is not _EMPTY for _, d in kwonly):
                out.update(kwonly)
                if varkw is not None:
                    out[varkw] = {}
                return out
    b = sig.bind(*args, **kwargs)
    b.apply_defaults()
    return b.arguments


_PLANS: dict = {}


def needs_all(ctx) -> tuple:
    """Per arg: does it need a gradient (every tensor arg when the Ctx was built without)."""
    if ctx.needs is not None:
        return ctx.needs
    return tuple(hasattr(a, "shape") for a in ctx.args)


def like(t, out):
    """A tangent cast to the output's dtype."""
    return t if t.dtype is out.dtype else t.astype(out.dtype)
