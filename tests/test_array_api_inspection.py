"""The array API standard's inspection surface: finfo, iinfo, isdtype, the constants,
__array_namespace__ and __array_namespace_info__ (tensor/array_api.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as T
from tensor import dtypes as dt


@pytest.mark.parametrize("d", [dt.float16, dt.float32, dt.float64], ids=lambda d: d.name)
def test_finfo_matches_numpy(d):
    f, n = T.finfo(d), np.finfo(d.np)
    assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == (
        n.bits, float(n.eps), float(n.max), float(n.min), float(n.smallest_normal))
    assert f.dtype is d and f.tiny == f.smallest_normal
    assert all(type(v) is float for v in (f.eps, f.max, f.min, f.smallest_normal))
    assert T.finfo(T.ones(2, dtype=d)) == f   # a tensor gives its dtype's limits


def test_finfo_bfloat16():
    f = T.finfo(T.bfloat16)
    assert (f.bits, f.eps, f.smallest_normal) == (16, 2.0 ** -7, 2.0 ** -126)
    assert f.max == -f.min == 3.3895313892515355e38   # 0x7F7F, the largest finite bfloat16
    big = T.tensor([f.max], dtype=T.float32).astype(T.bfloat16).astype(T.float32).item()
    assert big == f.max and math.isinf(T.tensor([f.max * 1.01]).astype(T.bfloat16).item())


@pytest.mark.parametrize("d", dt.INTEGER, ids=lambda d: d.name)
def test_iinfo_matches_numpy(d):
    i, n = T.iinfo(d), np.iinfo(d.np)
    assert (i.bits, i.max, i.min, i.dtype) == (n.bits, int(n.max), int(n.min), d)
    assert type(i.max) is int and T.iinfo(T.zeros(1, dtype=d)) == i


def test_info_errors_name_the_function():
    with pytest.raises(TypeError, match="finfo: int32 is not a floating-point dtype"):
        T.finfo(T.int32)
    with pytest.raises(TypeError, match="iinfo: float32 is not an integer dtype"):
        T.iinfo(T.float32)
    with pytest.raises(TypeError, match="iinfo: float32"):
        T.iinfo(T.ones(1, dtype=T.float32))
    with pytest.raises(TypeError, match="finfo: expected a dtype or a tensor"):
        T.finfo(object())


_UINTS = {"uint8", "uint16", "uint32", "uint64"}
KINDS = {"bool": {"bool"}, "signed integer": {"int8", "int16", "int32", "int64"},
         "unsigned integer": _UINTS, "integral": {"int8", "int16", "int32", "int64"} | _UINTS,
         "real floating": {"float16", "bfloat16", "float32", "float64"},
         "complex floating": {"complex64", "complex128"},
         "numeric": {"int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                     "float64", "complex64", "complex128"} | _UINTS}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_isdtype_kinds(kind):
    assert {d.name for d in dt.ALL if T.isdtype(d, kind)} == KINDS[kind]


def test_isdtype_dtypes_tuples_and_errors():
    assert T.isdtype(T.int8, T.int8) and not T.isdtype(T.int8, T.int16)
    assert T.isdtype(T.float32, ("bool", T.float32)) and not T.isdtype(T.int8, ("bool", "real floating"))
    with pytest.raises(ValueError, match="isdtype: unknown kind 'integer'"):
        T.isdtype(T.int8, "integer")
    with pytest.raises(TypeError, match="isdtype: expected a dtype"):
        T.isdtype("int8", "integral")
    with pytest.raises(TypeError, match="isdtype: kind must be"):
        T.isdtype(T.int8, 3)


def test_constants():
    assert (T.e, T.pi) == (math.e, math.pi) and math.isinf(T.inf) and T.inf > 0
    assert math.isnan(T.nan) and T.newaxis is None
    assert T.ones((2, 3))[:, T.newaxis].shape == (2, 1, 3)


def test_array_namespace():
    x = T.ones(3)
    assert T.__array_api_version__ == "2024.12"
    assert x.__array_namespace__() is T and x.__array_namespace__(api_version="2022.12") is T
    with pytest.raises(ValueError, match="api_version '2031.12' is not supported"):
        x.__array_namespace__(api_version="2031.12")


def test_namespace_info():
    info = T.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert caps["max dimensions"] in (16, 64)
    assert info.default_device() == T.get_default_device()
    assert info.default_dtypes() == {"real floating": T.get_default_dtype(), "integral": T.int64,
                                     "indexing": T.int64, "complex floating": T.complex128}
    devs = info.devices()
    assert devs[0] == T.device("cpu") and all(d.type == "cuda" for d in devs[1:])
    # the standard's dtypes only: float16 and bfloat16 are extras
    assert info.dtypes() == {d.name: d for d in dt.ALL if d.name not in ("float16", "bfloat16")}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(device="cpu", kind=("bool", "unsigned integer"))) == {"bool"} | _UINTS
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        info.dtypes(device="tpu")


def test_dtype_equality_with_unrelated_objects_is_false():
    """`==` against anything that is not a dtype answers False, never raises (NumPy's parser
    raises ValueError or SyntaxError for some strings; the standard asks for a plain False)."""
    for other in ["x", "format number 1 of 'x' is not recognized", "f4,,", None, 3, object(), []]:
        assert not (T.float32 == other) and T.float32 != other
    assert T.float32 == "float32" and T.float32 == np.float32
