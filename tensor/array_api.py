"""The Python array API standard's inspection surface (version 2024.12): finfo, iinfo,
isdtype and `__array_namespace_info__()` (capabilities, default device and dtypes, devices,
dtypes by kind). `Tensor.__array_namespace__()` returns the `tensor` module itself.

>>> import tensor as T
>>> T.finfo(T.float32).eps, T.iinfo(T.int8).max, T.isdtype(T.int16, "signed integer")
(1.1920928955078125e-07, 127, True)
>>> x = T.ones(3); x.__array_namespace__() is T
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import dtypes as dt
from .backend import backend_for
from .device import CPU
from .device import device as parse_device

API_VERSION = "2024.12"
_STANDARD = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"}
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _as_dtype(x, fn: str) -> dt.DType:
    d = getattr(x, "dtype", x)   # a tensor (or array) gives its dtype
    try:
        return dt.dtype(d)
    except TypeError:
        raise TypeError(f"{fn}: expected a dtype or a tensor, got {type(x).__name__} {x!r:.40}") from None


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name for the returned object
    """Machine limits of a floating dtype (the standard's finfo_object; `tiny` as NumPy's)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dt.DType

    @property
    def tiny(self) -> float:
        return self.smallest_normal

    @property
    def resolution(self) -> float:
        return 10.0 ** -math.floor(-math.log10(self.eps))


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801
    """Machine limits of an integer dtype."""
    bits: int
    max: int
    min: int
    dtype: dt.DType


def _bfloat16_info() -> finfo_object:
    big = float(np.float32(2.0) ** 127 * (2 - 2.0 ** -7))   # 0x7F7F: 8 exponent bits, 7 mantissa
    return finfo_object(16, 2.0 ** -7, big, -big, 2.0 ** -126, dt.bfloat16)


def finfo(type) -> finfo_object:  # noqa: A002 - the standard's parameter name
    """Machine limits of a floating dtype (or of a tensor's dtype): bits, eps, max, min,
    smallest_normal, dtype (the standard's fields; Python floats). A complex dtype gives its
    parts' limits, and dtype is that real dtype (as NumPy and the standard)."""
    d = dt.real_of(_as_dtype(type, "finfo"))
    if d.kind != "f":
        raise TypeError(f"finfo: {d.name} is not a floating-point dtype (use iinfo for integers)")
    if d is dt.bfloat16:
        return _bfloat16_info()
    f = np.finfo(d.np)
    return finfo_object(d.bits, float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), d)


def iinfo(type) -> iinfo_object:  # noqa: A002
    """Machine limits of an integer dtype (or of a tensor's dtype): bits, max, min, dtype."""
    d = _as_dtype(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d.name} is not an integer dtype (use finfo for floating dtypes)")
    lo, hi = dt.iinfo_bounds(d)
    return iinfo_object(d.bits, hi, lo, d)


# the standard's dtype kinds, each a predicate on our kind letters
_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind) -> bool:
    """Whether dtype is of `kind`: a dtype, one of the standard's kind names ('bool', 'signed
    integer', 'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric'),
    or a tuple of those (any matches)."""
    if not isinstance(dtype, dt.DType):
        raise TypeError(f"isdtype: expected a dtype, got {type(dtype).__name__} {dtype!r:.40}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, dt.DType):
        return dtype is kind
    if isinstance(kind, str):
        test = _KINDS.get(kind)
        if test is None:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}, a dtype "
                             "or a tuple of those")
        return test(dtype)
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple, got {type(kind).__name__}")


def namespace_method(namespace):
    """Tensor.__array_namespace__ for the package `namespace` (the `tensor` module binds itself
    here once it is built): any standard version up to 2024.12; one we do not know is a
    ValueError, as the standard asks."""
    def __array_namespace__(self, *, api_version: str | None = None):
        if api_version is not None and api_version not in _VERSIONS:
            raise ValueError(f"__array_namespace__: api_version {api_version!r} is not supported; "
                             f"supported: {', '.join(_VERSIONS)}")
        return namespace
    return __array_namespace__


class Info:
    """What `tensor.__array_namespace_info__()` returns (the standard's inspection object)."""

    __module__ = "tensor"

    def capabilities(self) -> dict:
        # CUDA launches take at most 16 dimensions after merging contiguous ones
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 16 if _cuda_devices() else 64}

    def default_device(self):
        return parse_device(None)

    def default_dtypes(self, *, device=None) -> dict:
        _check_device(device)
        f = dt.get_default_dtype()
        return {"real floating": f, "complex floating": dt.complex_of(f), "integral": dt.int64,
                "indexing": dt.int64}

    def devices(self) -> list:
        return [CPU] + _cuda_devices()

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes we have (float16 and bfloat16 are extras, not listed)."""
        _check_device(device)
        return {d.name: d for d in dt.ALL if d.name in _STANDARD and (kind is None or isdtype(d, kind))}


def _cuda_devices() -> list:
    return [parse_device(f"cuda:{i}") for i in range(backend_for("cuda").device_count())]


def _check_device(device) -> None:
    if device is not None:
        parse_device(device)   # an unknown or unavailable device raises (ValueError / DeviceError)


def array_namespace_info() -> Info:
    return Info()
