"""Helpers for derivative rules: registration, un-broadcasting, dtype fitting.

Rules are written in Tensor ops (through the public, recorded functions), so a backward pass
run with create_graph=True is itself differentiable.
"""
from __future__ import annotations

import tensor as T
from tensor._tensor import Tensor

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
