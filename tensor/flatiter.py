"""x.flat: NumPy's flat iterator over a tensor's elements in C (row-major) order, whatever its
strides: indexing reads and writes the tensor itself, `x.flat = v` fills it.

>>> import tensor as T
>>> x = T.arange(6).reshape(2, 3).T      # a transposed view
>>> x.flat[1].item(), x.flat[[0, 5]].tolist()
(3, [0, 5])
>>> x.flat[2:4] = -1
>>> x.tolist()
[[0, 3], [-1, -1], [2, 5]]
"""
from __future__ import annotations

import numbers

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray
from .creation import arange
from .public import PUB


class FlatIter:
    """What x.flat gives: len, iteration (0-d tensors, as iterating a tensor gives), indexing
    with ints, slices, integer or boolean arrays (reads copy where x is not contiguous, writes
    go into x), copy() (a 1-D copy) and base (x)."""

    __slots__ = ("base",)

    def __init__(self, base: Tensor):
        self.base = base

    def __len__(self) -> int:
        return self.base.numel()

    def __iter__(self):
        return iter(PUB["reshape"](self.base, (-1,)))

    def __repr__(self) -> str:
        return f"<flat iterator over a tensor of shape {self.base.shape}>"

    def copy(self) -> Tensor:
        return PUB["copy"](PUB["reshape"](self.base, (-1,)))

    def __array__(self, dtype=None, copy=None):
        import numpy as np
        return np.asarray(self.copy().numpy(), dtype=dtype)

    def __getitem__(self, key):
        return PUB["getitem"](PUB["reshape"](self.base, (-1,)), key)

    def __setitem__(self, key, value) -> None:
        x = self.base
        value = _cycled(value, _shape(key, x), x)
        if value is None:   # an empty value: NumPy writes nothing
            return
        if x.is_contiguous():   # the 1-D view writes into x
            PUB["setitem"](PUB["view"](x, (-1,)), key, value)
            return
        flat = _positions(key, x)   # the positions, as x's indices
        if isinstance(flat, int):
            pos = []
            for d in reversed(x.shape):
                flat, r = divmod(flat, d)
                pos.append(r)
            pos = tuple(reversed(pos))
        else:
            pos = tuple(PUB["unravel_index"](flat, x.shape))
            if isinstance(value, Tensor):
                value = PUB["reshape"](value, (-1,))
        PUB["setitem"](x, pos, value)


def _is_int(key) -> bool:
    return isinstance(key, numbers.Integral) and not isinstance(key, bool)


def _positions(key, x: Tensor):
    """The flat positions x.flat[key] names: an int for an int key, else 1-D int64; ints and
    slices without making all of x's positions (a loop of x.flat[i] = v stays cheap per write)."""
    n = x.numel()
    if _is_int(key):
        k = int(key)
        if not -n <= k < n:
            raise IndexError(f"index {k} is out of bounds for axis 0 with size {n}")
        return k % n
    if key is Ellipsis or isinstance(key, slice):
        r = range(*(slice(None) if key is Ellipsis else key).indices(n))
        return arange(r.start, r.stop, r.step, dtype=dt.int64, device=x.device)
    return PUB["reshape"](PUB["getitem"](arange(n, device=x.device), key), (-1,))


def _shape(key, x: Tensor) -> tuple:
    """The shape of x.flat[key] (() for a single element)."""
    n = x.numel()
    if key is Ellipsis:
        return (n,)
    if isinstance(key, slice):
        return (len(range(*key.indices(n))),)
    if _is_int(key):
        return ()
    if isinstance(key, Tensor | list) or hasattr(key, "__array__"):   # integer arrays: their shape
        k = key if isinstance(key, Tensor) else asarray(key)
        if k.dtype.kind in "iu":
            return k.shape
    return PUB["getitem"](arange(n, device=x.device), key).shape


def _cycled(value, shape: tuple, x: Tensor):
    """value for the positions x.flat[key] names (of that shape): a scalar as it is; an array
    flattened and repeated (or cut) to as many elements, in that shape, NumPy's rule for flat
    assignment; None for an empty array (NumPy then writes nothing)."""
    if not isinstance(value, Tensor) and not hasattr(value, "__len__"):
        return value
    v = PUB["reshape"](asarray(value, device=x.device), (-1,))
    n = 1
    for k in shape:
        n *= k
    if not shape and v.numel() != 1:
        raise ValueError(f"flat: cannot set a single element of a tensor of shape {x.shape} from "
                         f"{v.numel()} values")
    if v.numel() == 0:
        return None
    if v.numel() != n:
        v = PUB["getitem"](v, arange(n, device=x.device, dtype=dt.int64) % v.numel())
    return PUB["reshape"](v, shape)


def flat(x: Tensor) -> FlatIter:
    return FlatIter(x)


def set_flat(x: Tensor, value) -> None:
    """x.flat = value: every element of x, value repeated in C order (a scalar: a fill)."""
    FlatIter(x)[...] = value
