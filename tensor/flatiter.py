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
        value = _cycled(value, _count(key, x), x)
        if x.is_contiguous():   # the 1-D view writes into x
            PUB["setitem"](PUB["view"](x, (-1,)), key, value)
            return
        flat = PUB["getitem"](arange(x.numel(), device=x.device), key)   # the positions, as
        pos = tuple(PUB["unravel_index"](PUB["reshape"](flat, (-1,)), x.shape))   # x's indices
        PUB["setitem"](x, pos, value)


def _count(key, x: Tensor) -> int:
    """How many elements x.flat[key] names."""
    n = x.numel()
    if key is Ellipsis:
        return n
    if isinstance(key, slice):
        return len(range(*key.indices(n)))
    if isinstance(key, int):
        return 1
    return PUB["getitem"](arange(n, device=x.device), key).numel()


def _cycled(value, n: int, x: Tensor):
    """value for n positions: a scalar as it is; an array flattened and repeated (or cut) to n
    elements, NumPy's rule for flat assignment."""
    if not isinstance(value, Tensor) and not hasattr(value, "__len__"):
        return value
    v = PUB["reshape"](asarray(value, device=x.device), (-1,))
    if v.numel() == n or v.numel() == 0:
        return PUB["reshape"](v, (n,)) if v.numel() == n and n != 1 else v
    return PUB["getitem"](v, arange(n, device=x.device, dtype=dt.int64) % v.numel())


def flat(x: Tensor) -> FlatIter:
    return FlatIter(x)


def set_flat(x: Tensor, value) -> None:
    """x.flat = value: every element of x, value repeated in C order (a scalar: a fill)."""
    FlatIter(x)[...] = value
