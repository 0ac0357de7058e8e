"""Axis arguments: NumPy's normalisation and errors, shared by every op that takes an axis.

>>> norm_axis(-1, 3, "sum"), norm_axes((2, 0), 3, "sum")
(2, (0, 2))
"""
from __future__ import annotations

import operator


def as_int(v, name: str, op: str) -> int:
    """v as a Python int: an int, a NumPy integer, a 0-d integer tensor; a bool (or bool
    tensor), a float or anything else raises TypeError naming the op and the argument."""
    try:
        if isinstance(v, bool) or getattr(getattr(v, "dtype", None), "name", None) == "bool":
            raise TypeError
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an integer, got {type(v).__name__}") from None


class AxisError(ValueError, IndexError):
    """An axis outside [-ndim, ndim) (a ValueError and an IndexError, as NumPy's)."""


def norm_axis(axis, ndim: int, op: str) -> int:
    try:
        if isinstance(axis, bool):   # an int to operator.index, not an axis (NumPy refuses it)
            raise TypeError
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(f"{op}: axis {axis} is out of bounds for a tensor of rank {ndim}")
    return a + ndim if a < 0 else a


def norm_axis_tuple(axes, ndim: int, op: str, what: str = "axis") -> tuple:
    """NumPy's normalize_axis_tuple, the one check of every argument naming several axes: an
    int or a sequence of ints -> normalised axes in the given order. An axis out of range
    raises AxisError, a repeated one ValueError, anything but ints TypeError (`what` names the
    argument in the messages)."""
    if isinstance(axes, int) or hasattr(axes, "__index__"):
        axes = (axes,)
    elif isinstance(axes, str | bytes) or not hasattr(axes, "__iter__"):
        raise TypeError(f"{op}: {what} must be an integer or a tuple of integers, got "
                        f"{type(axes).__name__} {axes!r:.40}")
    axes = tuple(axes)
    out = tuple(norm_axis(a, ndim, op) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {what} {axes}")
    return out


def norm_axes(axes, ndim: int, op: str) -> tuple:
    """None -> all axes; an int or a sequence -> sorted unique normalised axes."""
    if axes is None:
        return tuple(range(ndim))
    return tuple(sorted(norm_axis_tuple(axes, ndim, op)))
