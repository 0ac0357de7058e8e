"""NumPy's histogram bin estimators (bins='auto', 'fd', 'sturges', ...): the bin width each rule
gives for the data, and from it the number of equal bins over the range, as NumPy's
_get_bin_edges does (the data restricted to the range first when one is given).

>>> import tensor as T
>>> T.histogram_bin_edges(T.arange(10.0), bins="sturges").shape
(6,)
"""
from __future__ import annotations

import math

from ._tensor import Tensor
from .optable import T as P  # tensor's public (recorded) functions, for the compositions


def _ptp(x: Tensor) -> float:
    return float(P.amax(x)) - float(P.amin(x))


def _sqrt(x: Tensor) -> float:
    return _ptp(x) / math.sqrt(x.numel())


def _sturges(x: Tensor) -> float:
    return _ptp(x) / (math.log2(x.numel()) + 1.0)


def _rice(x: Tensor) -> float:
    return _ptp(x) / (2.0 * x.numel() ** (1.0 / 3))


def _std(x: Tensor) -> float:
    return float(P.std(P.astype(x, "float64") if x.dtype.kind in "biu" else x))


def _scott(x: Tensor) -> float:
    return (24.0 * math.pi ** 0.5 / x.numel()) ** (1.0 / 3.0) * _std(x)


def _fd(x: Tensor) -> float:
    q75, q25 = (float(v) for v in P.percentile(x, [75, 25]).tolist())
    return 2.0 * (q75 - q25) * x.numel() ** (-1.0 / 3.0)


def _doane(x: Tensor) -> float:
    n = x.numel()
    if n <= 2:
        return 0.0
    sg1 = math.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
    xf = P.astype(x, "float64") if x.dtype.kind in "biu" else x
    sigma = _std(xf)
    if sigma <= 0.0:
        return 0.0
    g1 = float(P.mean(P.power(P.divide(P.subtract(xf, P.mean(xf)), sigma), 3)))
    return _ptp(x) / (1.0 + math.log2(n) + math.log2(1.0 + abs(g1) / sg1))


def _auto(x: Tensor) -> float:
    fd, sturges = _fd(x), _sturges(x)
    return min(fd, sturges) if fd else sturges


SELECTORS = {"auto": _auto, "fd": _fd, "doane": _doane, "rice": _rice, "scott": _scott,
             "sqrt": _sqrt, "sturges": _sturges}


def estimated_bins(a: Tensor, name: str, first, last, restrict: bool, op: str) -> int:
    """The number of equal bins over [first, last] that estimator `name` picks for the flat a
    (only its values inside the range count when restrict, i.e. a range was given)."""
    if name not in SELECTORS:
        if name == "stone":
            raise NotImplementedError(f"{op}: the 'stone' bin estimator is not supported; use one "
                                      f"of {sorted(SELECTORS)}")
        raise ValueError(f"{op}: {name!r} is not a valid estimator for bins; use one of "
                         f"{sorted(SELECTORS)} or give the number of bins or the edges")
    if restrict and a.numel():
        a = a[P.logical_and(P.greater_equal(a, first), P.less_equal(a, last))]
    if a.numel() == 0:
        return 1
    width = SELECTORS[name](a)
    if not width or math.isnan(width):
        return 1
    if a.dtype.kind in "biu" and width < 1:
        width = 1
    return int(math.ceil((last - first) / width))
