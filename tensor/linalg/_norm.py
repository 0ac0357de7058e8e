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
    a = T.abs(x.astype(d, copy=False))
    if ord == math.inf:
        r = T.max(a, axis=ax, keepdims=keepdims) if a.size else T.zeros(
            T.sum(a, axis=ax, keepdims=keepdims).shape, dtype=a.dtype, device=a.device)
    elif ord == -math.inf:
        r = T.min(a, axis=ax, keepdims=keepdims)
    elif ord == 0:
        r = T.sum((a != 0).astype(a.dtype), axis=ax, keepdims=keepdims)
    elif ord == 1:
        r = T.sum(a, axis=ax, keepdims=keepdims)
    elif ord == 2:
        r = T.sqrt(T.sum(a * a, axis=ax, keepdims=keepdims))
    elif isinstance(ord, (int, float)) and not isinstance(ord, bool):
        r = T.sum(a ** ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)
    else:
        raise ValueError(f"linalg.vector_norm: ord must be a number, inf or -inf, got {ord!r}")
    return r


vector_norm_op_raw = differentiable("linalg_vector_norm", _vector_norm_raw)


def vector_norm_op(x, ord, axis, keepdims):  # noqa: A002
    return vector_norm_op_raw(x, ord, axis, keepdims)
