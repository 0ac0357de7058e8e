"""Derivative rule of sort (tensor/sorting.py): sorting permutes x along the axis, so the
gradient of the values goes back through the inverse permutation (a gather by the argsort of
the sorting indices), and a tangent is gathered by the sorting indices themselves. Ties take
the stable order's choice, as the forward pass did. argsort, searchsorted give integers
(no rule); unique_* and topk are compositions of recorded ops."""
from __future__ import annotations

import tensor as T
from tensor.axes import norm_axis

from .rules_util import fit, params, rule


def _order(ctx):
    """(axis, the indices that sorted x) of the recorded sort call."""
    x = ctx.args[0]
    p = params(ctx, "sort")
    a = norm_axis(p["axis"], x.ndim, "sort")
    return a, T.argsort(x, axis=a, descending=p["descending"])


def _sort_jvp(ctx, tans):
    t = tans[0]
    if t is None or ctx.args[0].ndim == 0:
        return t
    a, idx = _order(ctx)
    return T.take_along_axis(t, idx, a)


@rule("sort", save=(0,), jvp=_sort_jvp)
def _sort_vjp(ctx, g):
    x = ctx.args[0]
    if x.ndim == 0:
        return (fit(g, x),)
    a, idx = _order(ctx)
    return (fit(T.take_along_axis(g, T.argsort(idx, axis=a), a), x),)
