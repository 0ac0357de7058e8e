"""Derivative rules of tensor.segment's one recorded op, segment_reduce(x, src, seg, order,
offsets, reduce, include_self): out[t] = x[t] (when it takes part) combined with the rows of
src that go to t (seg[i] == t). Every reduction is written as weights: out's change is
sum_i w_src[i] dsrc[i] over the segment plus w_self[t] dx[t], so the vjp is
(g * w_self, g[seg] * w_src) and the jvp segsum(w_src * tsrc) + w_self * tx.

- sum: w = 1 (x takes part when include_self or when no source reaches t);
- amax / amin: the elements equal to the result (NaN matching NaN), x's included when it takes
  part, share the gradient equally (1 / their count), as the dense amax (rules_reduce.py);
- prod: the product of the others: out / v where the segment has no zero, the product of the
  nonzero elements for the one zero of a segment with exactly one, 0 otherwise (zeros counted
  per segment, no division by zero); where that product is 0 because of another zero, it is
  written as that zero's value, so second derivatives are exact as well.

The weights are public ops (segment sums and products through segment_reduce itself), so
backward with create_graph=True is differentiable again."""
from __future__ import annotations

import tensor as T
from tensor.public import PUB
from tensor.segment import counts, segment_reduce

from .graph import RULES, Rule


def _segsum(v, ctx):
    """The sum of v's rows (n, inner) per segment: (m, inner)."""
    x, _, seg, order, offsets, _, _ = ctx.args
    return segment_reduce(T.zeros(x.shape, dtype=v.dtype, device=v.device), v, seg, order, offsets,
                          "sum", True)


def _take(t, seg):
    return PUB["take"](t, seg, axis=0)


def _weights(ctx):
    """(w_self (m, inner) or (m, 1), w_src (n, inner) or None for ones)."""
    x, src, seg, order, offsets, reduce, include_self = ctx.args
    out = ctx.out
    cnt = T.reshape(counts(seg, offsets, x.shape[0]), (-1, 1))
    part = (cnt == 0) | bool(include_self)   # x's row takes part in out
    if reduce == "sum":
        return part.astype(x.dtype), None
    if reduce in ("amax", "amin"):
        o_src = _take(out, seg)
        hit_src = ((src == o_src) | (T.isnan(src) & T.isnan(o_src))).astype(x.dtype)
        hit_self = (part & ((x == out) | (T.isnan(x) & T.isnan(out)))).astype(x.dtype)
        n = T.maximum(_segsum(hit_src, ctx) + hit_self, 1.0)
        return hit_self / n, hit_src / _take(n, seg)
    # prod
    zsrc = src == 0
    zself = part & (x == 0)
    zeros = _segsum(zsrc.astype(x.dtype), ctx) + zself.astype(x.dtype)
    one = T.ones((), dtype=x.dtype, device=x.device)
    nz_self = T.where(part & ~zself, x, one)
    pnz = segment_reduce(nz_self, T.where(zsrc, one, src), seg, order, offsets, "prod", True)
    zero = T.zeros((), dtype=x.dtype, device=x.device)
    # the zero values themselves (numerically 0): the product of the others keeps its
    # derivative with respect to them, so second derivatives at zeros are exact too
    zsum = _segsum(T.where(zsrc, src, zero), ctx) + T.where(zself, x, zero)

    def w(v, zv, nz, zs, zsum_t):
        safe = T.where(zv, one, v)
        return T.where(zv, T.where(zs == 1, nz, T.where(zs == 2, nz * (zsum_t - v), zero)),
                       T.where(zs == 0, nz / safe, T.where(zs == 1, nz / safe * zsum_t, zero)))
    w_self = T.where(part, w(x, zself, pnz, zeros, zsum), zero)
    w_src = w(src, zsrc, _take(pnz, seg), _take(zeros, seg), _take(zsum, seg))
    return w_self, w_src


def _vjp(ctx, g):
    x, src, seg = ctx.args[:3]
    w_self, w_src = _weights(ctx)
    gs = _take(g, seg)
    gsrc = gs if w_src is None else gs * w_src
    gx = g * w_self
    if gx.shape != x.shape:
        gx = T.broadcast_to(gx, x.shape)
    return (gx, gsrc, None, None, None, None, None)


def _jvp(ctx, tans):
    tx, tsrc = tans[0], tans[1]
    if tx is None and tsrc is None:
        return None
    w_self, w_src = _weights(ctx)
    out = None
    if tsrc is not None:
        out = _segsum(tsrc if w_src is None else tsrc * w_src, ctx)
    if tx is not None:
        d = tx * w_self
        out = d if out is None else out + d
    if out.shape != ctx.out.shape:
        out = T.broadcast_to(out, ctx.out.shape)
    return out


RULES["segment_reduce"] = Rule("segment_reduce", _vjp, _jvp, (0, 1, 2, 3, 4, "out"))
