"""Elementwise functions of tensor.sparse matrices that keep 0 at 0 (PyTorch's sparse unary
ufuncs: A.abs(), A.sqrt(), A.sin(), ..., A ** p for p > 0): the function of the stored values,
a matrix of A's layout, written with the library's recorded ops (both devices, differentiable
in the values). A nonlinear function is applied to the entries with their duplicates summed
first (a COO coalesced, as PyTorch's), since f(a) + f(b) is not f(a + b); conj keeps the
pattern as it is. Functions that do not keep 0 at 0 (exp, cos, ...) are not offered: the
entries a matrix does not store would change."""
from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ._ops import pub
from ._reduce import unique_entries

# f(0) == 0 (or False) for each, so the result stores the same entries
UNARY = ("abs", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "asinh", "atan", "atanh", "expm1",
         "log1p", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "erf", "erfinv",
         "deg2rad", "rad2deg", "square", "relu", "nan_to_num", "isnan", "signbit", "conj")
_LINEAR = ("conj",)


def unary(A, name: str, *args, **kwargs):
    """name (one of UNARY) of A's stored entries, a matrix of A's layout."""
    if name not in _LINEAR:
        A = unique_entries(A)[0]
    return A._with_values(pub(name)(A._values, *args, **kwargs))


def method(name: str):
    """The matrix method `name` (PyTorch's A.abs(), A.sqrt(), ...)."""
    def f(self, *args, **kwargs):
        return unary(self, name, *args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"PyTorch's sparse {name}: {name} of the stored entries (duplicates summed "
                 "first), a matrix of this layout.")
    return f


def power(A, exponent, op: str = "pow"):
    """A ** exponent for a real exponent > 0 (0 ** p stays 0, so the pattern is kept): the
    stored entries' powers, duplicates summed first. Exponents <= 0 raise (the unstored
    entries would become 1 or inf; PyTorch refuses 0 too)."""
    if isinstance(exponent, Tensor):
        if exponent.ndim:
            raise TypeError(f"{op}: the exponent of a sparse matrix must be a scalar, got shape "
                            f"{exponent.shape}")
        exponent = exponent.item()
    if isinstance(exponent, bool | np.bool_) or not isinstance(exponent, numbers.Real):
        raise TypeError(f"{op}: the exponent of a sparse matrix must be a real number, got "
                        f"{type(exponent).__name__}")
    if not exponent > 0:
        raise ValueError(f"{op}: a sparse matrix takes exponents > 0 only, got {exponent} (the "
                         "entries it does not store would become 0 ** p)")
    A = unique_entries(A)[0]
    return A._with_values(pub("power")(A._values, exponent))


__all__ = ["UNARY", "unary", "method", "power"]
