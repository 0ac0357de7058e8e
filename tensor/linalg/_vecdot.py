"""linalg.vecdot: the array API's (keyword axis) with PyTorch's keyword dim, over the top-level
vecdot (conj(x) . y for complex operands)."""
from __future__ import annotations

from .. import elementwise as ew
from .._tensor import Tensor
from ._names import T


def vecdot(x, y, *, dim: int | None = None, axis: int | None = None) -> Tensor:
    """sum(conj(x) * y) along dim (= axis; -1 by default), the other dims broadcast: the array
    API's linalg.vecdot, with PyTorch's keyword dim accepted too. The contracted dimensions must
    have one length (the standard raises there; PyTorch would broadcast a length 1)."""
    if dim is not None and axis is not None:
        raise TypeError("linalg.vecdot: give dim or axis (the same argument), not both")
    ax = -1 if dim is None and axis is None else (dim if dim is not None else axis)
    x, y = ew.as_tensor(x, "linalg.vecdot"), ew.as_tensor(y, "linalg.vecdot")
    return T.vecdot(x, y, axis=ax)


__all__ = ["vecdot"]
