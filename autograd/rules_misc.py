"""Derivative rules of the small public ops that are not table entries (tensor/public.py):
round, clip, astype, copies, device transfers, fills, tril/triu.
"""
from __future__ import annotations

import tensor as T
from tensor.ops import bounds

from .graph import RULES, Rule
from .rules_util import fit, like, needs_all, params, zeros_for

# ---------------------------------------------------------------- round, clip

def _zero_rule(name):
    def vjp(ctx, g):
        return (zeros_for(ctx.args[0]) if needs_all(ctx)[0] else None,) + (None,) * (len(ctx.args) - 1)

    def jvp(ctx, tans):
        return None if tans[0] is None else T.zeros(ctx.out.shape, dtype=ctx.out.dtype,
                                                    device=ctx.out.device)
    RULES[name] = Rule(name, vjp, jvp, ())


_zero_rule("round")
_zero_rule("around")


def _clip_bounds(ctx, name):
    """(x, lower, upper, positions of x, lower and upper in ctx.args) of a clip call, whichever
    spelling gave the bounds: min/max (args 1, 2) or NumPy's a_min/a_max (args 4, 5)."""
    p = params(ctx, name)
    lo, hi = bounds(p["min"], p["max"], p["a_min"], p["a_max"])
    return p["x"], lo, hi, (0, 1 if p["min"] is not None else 4, 2 if p["max"] is not None else 5)


def _clip_masks(x, lo, hi):
    """The shares of g that (x, lower, upper) take in out = minimum(maximum(x, lo), hi), as
    PyTorch 2.14's: a tensor bound is maximum's / minimum's operand (a tie splits g evenly), a
    scalar bound is strict (x exactly on it gets 0, as relu at 0 and clip_ here)."""
    if lo is None and hi is None:   # no bounds: a copy
        return T.full(x.shape, 1.0, dtype=x.dtype, device=x.device), None, None
    wx, wlo, m = 1.0, None, x
    if lo is not None:
        if isinstance(lo, T.Tensor):
            wx = (x > lo) + 0.5 * (x == lo)
            wlo = 1.0 - wx
            m = T.maximum(x, lo)
        else:
            wx = x > lo
            m = T.maximum(x, T.asarray(lo, dtype=x.dtype, device=x.device))
    if hi is None:
        return wx, wlo, None
    if isinstance(hi, T.Tensor):
        wm = (m < hi) + 0.5 * (m == hi)
        return wx * wm, None if wlo is None else wlo * wm, 1.0 - wm
    wm = m < hi
    return wx * wm, None if wlo is None else wlo * wm, None


def _share(w, v):
    """v's share w of it (where w is 0, 0 even where v is inf or NaN)."""
    return T.where(w != 0, v * w, 0.0)


def _no_grad_kwargs(ctx, name):
    """A tensor the recorder left in kwargs (clip(x, a_max=w): a_min skipped) has no edge: its
    gradient would silently be dropped."""
    for k, v in ctx.kwargs.items():
        if isinstance(v, T.Tensor) and v.requires_grad:
            raise NotImplementedError(f"autograd: {name}: the gradient of a tensor passed by "
                                      f"keyword ({k}=) is not tracked; pass it positionally")


def _clip_vjp(ctx, g):
    _no_grad_kwargs(ctx, "clip")
    x, lo, hi, at = _clip_bounds(ctx, "clip")
    need = needs_all(ctx) + (False,) * 6
    grads = [None] * len(ctx.args)
    for m, a, i in zip(_clip_masks(x, lo, hi), (x, lo, hi), at):
        if m is not None and i < len(grads) and need[i]:
            grads[i] = fit(_share(m, g), a)
    return tuple(grads)


def _clip_jvp(ctx, tans):
    x, lo, hi, at = _clip_bounds(ctx, "clip")
    r = None
    for m, i in zip(_clip_masks(x, lo, hi), at):
        t = tans[i] if i < len(tans) else None
        if m is not None and t is not None:
            term = _share(m, t)
            r = term if r is None else r + term
    if r is None:
        return None
    return like(r if r.shape == ctx.out.shape else T.broadcast_to(r, ctx.out.shape), ctx.out)


def _clip_inplace_mask(ctx):
    """In place, only the clipped values are left: x passed where lo < out < hi (strictly, so
    an x exactly on a bound gets 0, as out of place with a scalar bound; a tensor bound's tie,
    which out of place splits, cannot be told apart from a clipped value once x is gone)."""
    _, lo, hi, _ = _clip_bounds(ctx, "clip_")
    out = ctx.args[0]
    m = None if lo is None else out > lo
    if hi is not None:
        m = out < hi if m is None else m & (out < hi)
    return m


def _clip_inplace_refuse(bound_needs):
    if any(bound_needs):
        raise NotImplementedError("autograd: clip_/clamp_ with bounds that require grad (or carry "
                                  "a tangent) is not supported: the input is overwritten; use "
                                  "clip()/clamp()")


def _clip_inplace_vjp(ctx, g):
    _clip_inplace_refuse(needs_all(ctx)[1:])
    m = _clip_inplace_mask(ctx)
    return (fit(g if m is None else T.where(m, g, 0.0), ctx.args[0]),) + (None,) * (len(ctx.args) - 1)


def _clip_inplace_jvp(ctx, tans):
    _clip_inplace_refuse([t is not None for t in tans[1:]])
    if tans[0] is None:
        return None
    m = _clip_inplace_mask(ctx)
    return like(tans[0] if m is None else T.where(m, tans[0], 0.0), ctx.out)


for _n in ("clip", "clamp"):
    RULES[_n] = Rule(_n, _clip_vjp, _clip_jvp, (0, 1, 2, 4, 5))
for _n in ("clip_", "clamp_"):
    RULES[_n] = Rule(_n, _clip_inplace_vjp, _clip_inplace_jvp, (0, 1, 2, 3, 4))


# ---------------------------------------------------------------- casts, copies, fills, tril

def _identity_vjp(ctx, g):
    return (fit(g, ctx.args[0]),) + (None,) * (len(ctx.args) - 1)


def _identity_jvp(ctx, tans):
    return None if tans[0] is None else like(tans[0], ctx.out)


for _n in ("contiguous", "copy", "clone"):
    RULES[_n] = Rule(_n, _identity_vjp, _identity_jvp, ())


def _astype_vjp(ctx, g):   # astype(..., device=) may also have moved x
    return (fit(g, ctx.args[0]).to(ctx.args[0].device),) + (None,) * (len(ctx.args) - 1)


def _astype_jvp(ctx, tans):
    return None if tans[0] is None else like(tans[0].to(ctx.out.device), ctx.out)


RULES["astype"] = Rule("astype", _astype_vjp, _astype_jvp, ())


def _to_device_vjp(ctx, g):
    return (fit(g, ctx.args[0]).to(ctx.args[0].device), None)


def _to_device_jvp(ctx, tans):
    return None if tans[0] is None else tans[0].to(ctx.out.device)


RULES["to_device"] = Rule("to_device", _to_device_vjp, _to_device_jvp, ())


def _overwrite_vjp(ctx, g):
    """copy_(x, src) / fill_(x, value): x's old value is gone (zero gradient); a tensor source
    gets g summed to its shape."""
    _no_grad_kwargs(ctx, "copy_/fill_")
    x = ctx.args[0]
    gx = zeros_for(x) if needs_all(ctx)[0] else None
    if len(ctx.args) < 2:
        return (gx,)
    return gx, (fit(g, ctx.args[1]) if needs_all(ctx)[1] else None)


def _overwrite_jvp(ctx, tans):
    ts = tans[1] if len(tans) > 1 else None
    if ts is None:
        return T.zeros(ctx.out.shape, dtype=ctx.out.dtype, device=ctx.out.device)
    return like(ts if ts.shape == ctx.out.shape else T.broadcast_to(ts, ctx.out.shape), ctx.out)


for _n in ("copy_", "fill_", "zero_"):
    RULES[_n] = Rule(_n, _overwrite_vjp, _overwrite_jvp, ())


def _tri(name):
    fn = getattr(T, name)

    def vjp(ctx, g):
        return (fn(g, params(ctx, name)["k"]),) + (None,) * (len(ctx.args) - 1)

    def jvp(ctx, tans):
        return None if tans[0] is None else fn(tans[0], params(ctx, name)["k"])
    RULES[name] = Rule(name, vjp, jvp, ())


_tri("tril")
_tri("triu")
