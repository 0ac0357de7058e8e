"""NumPy's index-trick objects: mgrid / ogrid (grids from slices; a complex step is a number of
points, both ends included), r_ / c_ (concatenation of slices, scalars and arrays along the first
/ last axis, with NumPy's 'axis,ndmin,trans1d' string directive), s_ / index_exp (index tuples).

>>> import tensor as T
>>> T.mgrid[0:2, 0:3].shape, T.r_[1:4, 10, [7, 8]].tolist(), T.c_[[1, 2], [3, 4]].tolist()
((2, 2, 3), [1, 2, 3, 10, 7, 8], [[1, 3], [2, 4]])
"""
from __future__ import annotations

import sys

from ._tensor import Tensor


def _T():
    return sys.modules[__package__]


def _range(s: slice, what: str):
    """The values of a slice of mgrid / r_: arange(start, stop, step), or with a complex step
    linspace(start, stop, |step|) (float64)."""
    T = _T()
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if s.stop is None:
        raise ValueError(f"{what}: a slice needs a stop, got {s!r}")
    if isinstance(step, complex):
        return T.linspace(float(start), float(s.stop), int(abs(step)), dtype=T.float64)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (start, s.stop, step)):
        return T.arange(start, s.stop, step, dtype=T.int64)
    return T.arange(float(start), float(s.stop), float(step), dtype=T.float64)


class _Grid:
    def __init__(self, sparse: bool, name: str):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        T = _T()
        if isinstance(key, slice):
            return _range(key, self.name)
        axes = [_range(k, self.name) for k in key]
        d = T.result_type(*axes)
        axes = [T.astype(a, d) for a in axes]
        if self.sparse:
            n = len(axes)
            return tuple(T.reshape(a, tuple(-1 if i == j else 1 for j in range(n)))
                         for i, a in enumerate(axes))
        return T.stack(T.meshgrid(*axes, indexing="ij"), axis=0)

    def __repr__(self) -> str:
        return f"tensor.{self.name}"


class _Concat:
    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def _directive(self, s: str):
        try:
            vals = [int(v) for v in s.split(",")]
        except ValueError:
            raise ValueError(f"{self.name}: unknown string directive {s!r} (NumPy's 'r' and 'c' "
                             "matrix directives are not supported)") from None
        axis, ndmin, trans1d = (vals + [self.ndmin, self.trans1d][len(vals) - 1:])[:3]
        return axis, ndmin, trans1d

    def _upgrade(self, t: Tensor, ndmin: int, trans1d: int) -> Tensor:
        """NumPy's array(item, ndmin=ndmin) then the trans1d placement of the item's axes."""
        T = _T()
        k = t.ndim
        if k >= ndmin:
            return t
        t = T.reshape(t, (1,) * (ndmin - k) + tuple(t.shape))
        if trans1d == -1 or k == 0:
            return t
        k2 = ndmin - k
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        return T.permute_dims(t, tuple(axes[:k1] + axes[k2:] + axes[k1:k2]))

    def __getitem__(self, key):
        T = _T()
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if key and isinstance(key[0], str):
            axis, ndmin, trans1d = self._directive(key[0])
            key = key[1:]
        parts = []
        for item in key:
            if isinstance(item, slice):
                t = _range(item, self.name)
            elif isinstance(item, str):
                raise ValueError(f"{self.name}: a string directive must come first, got {item!r}")
            else:
                t = item if isinstance(item, Tensor) else T.asarray(item)
                if t.ndim == 0:
                    t = T.reshape(t, (1,))
            parts.append(self._upgrade(t, ndmin, trans1d))
        if not parts:
            return T.zeros((0,))
        return T.concatenate(parts, axis=axis)

    def __repr__(self) -> str:
        return f"tensor.{self.name}"


class _IndexExpression:
    def __init__(self, maketuple: bool):
        self.maketuple = maketuple

    def __getitem__(self, item):
        return (item,) if self.maketuple and not isinstance(item, tuple) else item


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")
r_ = _Concat(0, 1, -1, "r_")
c_ = _Concat(-1, 2, 0, "c_")
s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)
