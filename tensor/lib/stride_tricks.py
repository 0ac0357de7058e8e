"""NumPy's numpy.lib.stride_tricks: sliding_window_view and as_strided (strides in bytes, as
NumPy's; tensor.as_strided takes element strides, as PyTorch's).

>>> import tensor as T
>>> from tensor.lib.stride_tricks import sliding_window_view
>>> sliding_window_view(T.arange(5), 3).tolist()
[[0, 1, 2], [1, 2, 3], [2, 3, 4]]
"""
from __future__ import annotations

import operator

from .._tensor import Tensor
from ..axes import norm_axis
from ..convert import asarray
from ..optable import T as P  # tensor's public (recorded) functions


def _tensor(x, op: str) -> Tensor:
    return x if isinstance(x, Tensor) else asarray(x)


def _ints(v, op: str, what: str) -> tuple:
    try:
        return tuple(operator.index(i) for i in (v if hasattr(v, "__len__") else (v,)))
    except TypeError:
        raise TypeError(f"{op}: {what} must be an int or a sequence of ints, got {v!r}") from None


def sliding_window_view(x, window_shape, axis=None, *, subok: bool = False,
                        writeable: bool = False) -> Tensor:
    """A read-only (unless writeable=True) view of every window of window_shape sliding over
    x's axes (all of them, or `axis`, which may repeat an axis): shape x.shape with each windowed
    axis shortened by its window - 1, then the window's own axes, as NumPy's."""
    op = "sliding_window_view"
    x = _tensor(x, op)
    window = _ints(window_shape, op, "window_shape")
    if any(w < 0 for w in window):
        raise ValueError(f"{op}: window_shape cannot contain negative values, got {window}")
    if axis is None:
        if len(window) != x.ndim:
            raise ValueError(f"{op}: since axis is None, window_shape must have one entry per "
                             f"axis of x (x.ndim = {x.ndim}), got {window}")
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(norm_axis(a, x.ndim, op) for a in _ints(axis, op, "axis"))
        if len(axes) != len(window):
            raise ValueError(f"{op}: window_shape {window} and axis {axis} must have the same length")
    shape = list(x.shape)
    for a, w in zip(axes, window):
        if shape[a] < w:
            raise ValueError(f"{op}: window shape {window} cannot be larger than the input "
                             f"shape {tuple(x.shape)} along axis {a}")
        shape[a] -= w - 1
    strides = tuple(x.strides) + tuple(x.strides[a] for a in axes)
    v = P.as_strided(x, tuple(shape) + window, strides, x.storage_offset())
    if not writeable:
        v.flags.writeable = False
    return v


def as_strided(x, shape=None, strides=None, subok: bool = False, writeable: bool = True) -> Tensor:
    """NumPy's as_strided: a view of x with shape and strides in bytes (default: x's), from
    x's first element. writeable=False makes the view read-only."""
    op = "as_strided"
    x = _tensor(x, op)
    shape = tuple(x.shape) if shape is None else _ints(shape, op, "shape")
    if strides is None:
        el = tuple(x.strides)
    else:
        b = _ints(strides, op, "strides")
        if any(s % x.itemsize for s in b):
            raise ValueError(f"{op}: strides {b} (bytes) must be multiples of the itemsize "
                             f"{x.itemsize} of {x.dtype.name}")
        el = tuple(s // x.itemsize for s in b)
    v = P.as_strided(x, shape, el, x.storage_offset())
    if not writeable:
        v.flags.writeable = False
    return v
