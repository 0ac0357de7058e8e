"""vector_norm as one recorded op ("linalg_vector_norm", rule in autograd/rules_la.py): a
composition would differentiate sqrt at 0 into NaN; the rule gives PyTorch's subgradient (0
where the norm is 0; ties of the inf-norms share the gradient equally)."""
from __future__ import annotations

import math

from .. import dtypes as dt
from .._hook import differentiable
from ..axes import norm_axis_tuple
from ._names import T


def norm_axes(x, axis) -> tuple:
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, int) or hasattr(axis, "__index__"):
        axis = (axis,)
    return norm_axis_tuple(tuple(axis), x.ndim, "linalg.vector_norm", "axis")


def _vector_norm_raw(x, ord=2, axis=None, keepdims=False):  # noqa: A002
    ax = norm_axes(x, axis)
    d = x.dtype if x.dtype.kind in "fc" else dt.float64
    if d.itemsize == 2:   # 16-bit floats: powers and sums in float32, one rounding at the end
        return _vector_norm_raw(x.astype(dt.float32), ord, axis, keepdims).astype(d)
    x = x.astype(d, copy=False)
    if ord == 2 and d is dt.float32:   # the common case: squares need no abs (one pass fewer)
        w = x.astype(dt.float64)
        return T.sqrt(T.sum(w * w, axis=ax, keepdims=keepdims)).astype(dt.float32)
    a = T.abs(x)
    if ord == math.inf:
        r = T.max(a, axis=ax, keepdims=keepdims) if a.size else T.zeros(
            T.sum(a, axis=ax, keepdims=keepdims).shape, dtype=a.dtype, device=a.device)
    elif ord == -math.inf:
        r = T.min(a, axis=ax, keepdims=keepdims)
    elif ord == 0:
        r = T.sum((a != 0).astype(a.dtype), axis=ax, keepdims=keepdims)
    elif ord == 1:
        r = T.sum(a, axis=ax, keepdims=keepdims)
    elif ord == 2 or (isinstance(ord, (int, float)) and not isinstance(ord, bool)):
        r = _power_sum_root(a, ord, ax, keepdims)
    else:
        raise ValueError(f"linalg.vector_norm: ord must be a number, inf or -inf, got {ord!r}")
    return r


def _power_sum_root(a, p, ax, keepdims):
    """sum(a ** p) ** (1 / p) of a >= 0 over ax without spurious overflow or underflow of the
    powers: float32 (and the 16-bit floats, computed in it) with 0 < p <= 6 in float64, whose
    range holds every such power of a float32 (one rounding at the end, no scaling needed);
    other dtypes and powers scaled by a power of two (_pow2_scaled)."""
    if a.dtype is dt.float32 and 0 < p <= 6:
        w = a.astype(dt.float64)
        s = T.sum(w * w if p == 2 else w ** p, axis=ax, keepdims=keepdims)
        return (T.sqrt(s) if p == 2 else s ** (1.0 / p)).astype(dt.float32)
    a, up = _pow2_scaled(a, ax) if p > 0 else (a, None)
    s = T.sum(a * a if p == 2 else a ** p, axis=ax, keepdims=keepdims)
    return _unscale(T.sqrt(s) if p == 2 else s ** (1.0 / p), up, ax, keepdims)


def _pow2_scaled(a, ax):
    """a (absolute values) times 2**-e, e the exponent of the largest |a| over the reduced axes
    (kept as size-1 axes), so a's powers neither overflow nor underflow: 3e38 squared is inf in
    float32 and 1e-30 squared is 0, while their 2-norms are finite and nonzero. Powers of two
    scale exactly, so ordinary inputs get the same bits as the unscaled sum; e is 0 where the
    largest is 0, inf or NaN, and clamped so 2**-e stays a normal number of a's dtype."""
    if a.size == 0 or not ax:
        return a, None
    m = T.max(a, axis=ax, keepdims=True)
    big = math.frexp(float(T.finfo(a.dtype).max))[1] - 2   # 2**-e, 2**e normal for |e| <= big
    # e ~ the exponent of m (log2 is exact at powers of two; off by one elsewhere at worst,
    # which leaves a * 2**-e below 2): fewer ops than frexp, and a scalar per reduced slice
    m64 = m.astype(dt.float64)
    e = T.where(T.isfinite(m64) & (m64 > 0), T.clip(T.floor(T.log2(m64)) + 1.0, -big, big), 0.0)
    # the factors as powers of two of a's own dtype (exp2 is exact at integers; both normal
    # numbers), so the scaling is one multiplication of a, not a float64 round trip of it
    return a * T.exp2(-e).astype(a.dtype), T.exp2(e).astype(a.dtype)


def _unscale(r, up, ax, keepdims):
    """Undo _pow2_scaled's factor on the reduced result r (exact, bar overflow to inf)."""
    if up is None:
        return r
    return r * (up if keepdims else T.squeeze(up, axis=ax))


vector_norm_op_raw = differentiable("linalg_vector_norm", _vector_norm_raw)


def vector_norm_op(x, ord, axis, keepdims):  # noqa: A002
    return vector_norm_op_raw(x, ord, axis, keepdims)
