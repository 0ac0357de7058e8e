"""Derivative rule of tensor.fft's one recorded op, fft_c2c (scale times the DFT along the last
axis, or its conjugate-root inverse). The map is linear: y = s F x with F the symmetric DFT
matrix, so the vjp is its adjoint s conj(F) g, the opposite transform with the same scale, and
the jvp the transform itself. Written for complex numbers directly (conj=False: the adjoint,
not a transpose the engine conjugates around)."""
from __future__ import annotations

from tensor.fft import fft_c2c

from .graph import RULES, Rule


def _vjp(ctx, g):
    _, inverse, scale = ctx.args
    return (fft_c2c(g, not inverse, scale), None, None)


def _jvp(ctx, tans):
    _, inverse, scale = ctx.args
    return None if tans[0] is None else fft_c2c(tans[0], inverse, scale)


RULES["fft_c2c"] = Rule("fft_c2c", _vjp, _jvp, (), conj=False)
