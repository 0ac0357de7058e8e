"""linalg.vecdot: PyTorch's (keyword dim, the operands broadcast together, the contracted
dimension included) and the array API's (keyword axis) in one, over the top-level vecdot
(conj(x) . y for complex operands)."""
from __future__ import annotations

from .. import elementwise as ew
from .._tensor import Tensor
from ._names import T


def vecdot(x, y, *, dim: int | None = None, axis: int | None = None) -> Tensor:
    """sum(conj(x) * y) along dim (= axis; -1 by default) after broadcasting x and y together
    (PyTorch's linalg.vecdot; a size-1 contracted dimension broadcasts, as there)."""
    if dim is not None and axis is not None:
        raise TypeError("linalg.vecdot: give dim or axis (the same argument), not both")
    ax = -1 if dim is None and axis is None else (dim if dim is not None else axis)
    x, y = ew.as_tensor(x, "linalg.vecdot"), ew.as_tensor(y, "linalg.vecdot")
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"linalg.vecdot: operands must have at least one dimension, got shapes "
                         f"{x.shape} and {y.shape}")
    if x.shape != y.shape:
        try:
            shape = T.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise ValueError(f"linalg.vecdot: shapes {x.shape} and {y.shape} do not broadcast") from None
        x, y = T.broadcast_to(x, shape), T.broadcast_to(y, shape)
    return T.vecdot(x, y, axis=ax)


__all__ = ["vecdot"]
