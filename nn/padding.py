"""The padding layers of torch.nn over nn.functional.pad: ConstantPad1d/2d/3d, ZeroPad1d/2d/3d,
ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d and CircularPad1d/2d/3d. `padding` is an int (the
same amount on every side) or 2 * n ints, (before, after) pairs from the LAST dim, as PyTorch;
negative amounts crop. The non-constant modes take (C, *spatial) or (N, C, *spatial) input.

>>> import tensor as T
>>> ReflectionPad1d(2)(T.tensor([[1.0, 2.0, 3.0]])).tolist()
[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
>>> ZeroPad2d((1, 0, 0, 0))(T.ones((1, 1, 2))).tolist()
[[[0.0, 1.0, 1.0]]]
"""
from __future__ import annotations

import numbers

from tensor import Tensor

from ._functional_layers import pad
from .module import Module


class _PadNd(Module):
    _nd, _mode = 1, "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        n, name = 2 * self._nd, type(self).__name__
        if isinstance(padding, numbers.Integral):
            padding = (int(padding),) * n
        if not isinstance(padding, (list, tuple)) or len(padding) != n or not all(
                isinstance(p, numbers.Integral) for p in padding):
            raise ValueError(f"{name}: padding must be an int or {n} ints, got {padding!r}")
        self.padding = tuple(int(p) for p in padding)

    def forward(self, input: Tensor) -> Tensor:
        nd = self._nd
        if self._mode != "constant" and input.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"{type(self).__name__}: expected {nd + 1}-d (unbatched) or "
                             f"{nd + 2}-d input, got shape {tuple(input.shape)}")
        return pad(input, self.padding, self._mode, getattr(self, "value", None))

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with `value`: padding an int or (left, right), as torch.nn.ConstantPad1d.

    >>> import tensor as T
    >>> ConstantPad1d((1, 0), 7.0)(T.ones((1, 2))).tolist()
    [[7.0, 1.0, 1.0]]
    """


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with `value`: (left, right, top, bottom).

    >>> import tensor as T
    >>> ConstantPad2d(1, 0.5)(T.ones((1, 1, 1))).tolist()
    [[[0.5, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 0.5]]]
    """
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with `value`: (left, right, top, bottom, front, back).

    >>> import tensor as T
    >>> ConstantPad3d((1, 0, 0, 1, 2, 0), 1.0)(T.ones((1, 1, 1, 1))).shape
    (1, 3, 2, 2)
    """
    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros.

    >>> import tensor as T
    >>> ZeroPad1d(1)(T.ones((1, 1))).tolist()
    [[0.0, 1.0, 0.0]]
    """


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros.

    >>> import tensor as T
    >>> ZeroPad2d((0, 1, 0, 0))(T.ones((1, 1, 1))).tolist()
    [[[1.0, 0.0]]]
    """
    _nd = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros.

    >>> import tensor as T
    >>> ZeroPad3d(1)(T.ones((1, 1, 1, 1))).shape
    (1, 3, 3, 3)
    """
    _nd = 3


class ReflectionPad1d(_PadNd):
    """Reflect (N, C, L) or (C, L) input at its ends (the edge not repeated); each pad < L.

    >>> import tensor as T
    >>> ReflectionPad1d((1, 0))(T.tensor([[1.0, 2.0]])).tolist()
    [[2.0, 1.0, 2.0]]
    """
    _mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Reflect (N, C, H, W) or (C, H, W) input at its edges.

    >>> import tensor as T
    >>> ReflectionPad2d((0, 0, 1, 0))(T.tensor([[[1.0], [2.0]]])).tolist()
    [[[2.0], [1.0], [2.0]]]
    """
    _nd = 2


class ReflectionPad3d(ReflectionPad1d):
    """Reflect (N, C, D, H, W) or (C, D, H, W) input at its faces.

    >>> import tensor as T
    >>> ReflectionPad3d(1)(T.ones((1, 1, 2, 2, 2))).shape
    (1, 1, 4, 4, 4)
    """
    _nd = 3


class ReplicationPad1d(_PadNd):
    """Repeat the edge values of (N, C, L) or (C, L) input.

    >>> import tensor as T
    >>> ReplicationPad1d((2, 1))(T.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 1.0, 2.0, 2.0]]
    """
    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Repeat the edge values of (N, C, H, W) or (C, H, W) input.

    >>> import tensor as T
    >>> ReplicationPad2d(1)(T.tensor([[[5.0]]])).tolist()
    [[[5.0, 5.0, 5.0], [5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]]
    """
    _nd = 2


class ReplicationPad3d(ReplicationPad1d):
    """Repeat the edge values of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import tensor as T
    >>> ReplicationPad3d((0, 0, 0, 0, 1, 1))(T.ones((1, 1, 1, 1))).shape
    (1, 3, 1, 1)
    """
    _nd = 3


class CircularPad1d(_PadNd):
    """Wrap (N, C, L) or (C, L) input around (periodic padding).

    >>> import tensor as T
    >>> CircularPad1d((1, 2))(T.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0, 2.0]]
    """
    _mode = "circular"


class CircularPad2d(CircularPad1d):
    """Wrap (N, C, H, W) or (C, H, W) input around.

    >>> import tensor as T
    >>> CircularPad2d((1, 0, 0, 0))(T.tensor([[[1.0, 2.0]]])).tolist()
    [[[2.0, 1.0, 2.0]]]
    """
    _nd = 2


class CircularPad3d(CircularPad1d):
    """Wrap (N, C, D, H, W) or (C, D, H, W) input around.

    >>> import tensor as T
    >>> CircularPad3d(1)(T.ones((1, 2, 2, 2))).shape
    (1, 4, 4, 4)
    """
    _nd = 3


__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]
