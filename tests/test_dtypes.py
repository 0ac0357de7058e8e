"""dtypes against NumPy 2: promote_types, result_type with weak Python scalars (NEP 50),
can_cast, dtype() parsing; and the bfloat16 rules NumPy has no opinion on."""
from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from helpers import ALL_DTYPES, DTYPE_NAMES, NP_DTYPES, to_np

import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")

PAIRS = list(itertools.product(NP_DTYPES, NP_DTYPES))
SCALARS = (True, False, 0, 1, -3, 2**40, 1.5, -0.0, float("inf"))
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def test_promote_types_matches_numpy_for_all_pairs():
    for a, b in PAIRS:
        want = np.promote_types(a.np, b.np).name
        assert T.promote_types(a, b).name == want, (a.name, b.name)
        assert T.promote_types(a.name, b.np).name == want     # names and NumPy dtypes accepted
        assert T.promote_types(b, a) is T.promote_types(a, b)


@pytest.mark.parametrize("other", ALL_DTYPES, ids=lambda d: d.name)
def test_bfloat16_promotion_rules(other):
    """bfloat16 with bool/ints -> bfloat16; with float16 -> float32 (neither holds the other);
    with float32 -> float32; with float64 -> float64; with itself -> bfloat16."""
    want = {"float16": "float32", "float32": "float32", "float64": "float64"}.get(
        other.name, "bfloat16")
    assert T.promote_types(T.bfloat16, other).name == want
    assert T.promote_types(other, T.bfloat16).name == want
    assert T.result_type(T.bfloat16, other).name == want


@pytest.mark.parametrize("d", NP_DTYPES, ids=lambda d: d.name)
def test_result_type_with_weak_python_scalars(d):
    """NEP 50: a Python scalar adopts the other operand's dtype within its kind; int with a float
    scalar goes to float64; bool with an int scalar to int64 -- exactly np.result_type."""
    for s in SCALARS:
        assert T.result_type(d, s).name == np.result_type(d.np, s).name, (d.name, s)
        assert T.result_type(s, d).name == np.result_type(s, d.np).name, (s, d.name)
        x = T.zeros(2, dtype=d)
        assert T.result_type(x, s).name == np.result_type(np.zeros(2, d.np), s).name


def test_result_type_many_operands_and_pure_scalars():
    for a, b in PAIRS:
        for s in (True, 7, 2.5):
            want = np.result_type(a.np, b.np, s).name
            assert T.result_type(a, s, b).name == want, (a.name, b.name, s)
    for scalars in ((1,), (1.5,), (True,), (True, 1), (1, 2.5), (True, 2.5, 3)):
        assert T.result_type(*scalars).name == np.result_type(*scalars).name, scalars
    assert T.result_type(T.int8, np.float32(1)).name == "float32"   # NumPy scalars are strong
    assert T.result_type(T.int8, np.int64(1)).name == "int64"
    with pytest.raises(TypeError, match="result_type"):
        T.result_type(T.int8, "abc")


def test_bfloat16_with_python_scalars():
    for s in SCALARS:
        assert T.result_type(T.bfloat16, s) is T.bfloat16, s
        assert T.result_type(s, T.bfloat16) is T.bfloat16, s
    assert T.result_type(T.int8, T.bfloat16, 1.5) is T.bfloat16
    assert T.result_type(T.float16, T.bfloat16, 1) is T.float32


def test_default_float_dtype_applies_to_weak_floats():
    old = T.get_default_dtype()
    try:
        T.set_default_dtype("float32")
        assert T.result_type(T.int8, 1.5) is T.float32
        assert T.result_type(1.5) is T.float32
        assert T.result_type(T.float16, 1.5) is T.float16    # a float tensor keeps its dtype
        assert T.result_type(T.float64, 1.5) is T.float64
    finally:
        T.set_default_dtype(old)
    assert T.result_type(T.int8, 1.5) is T.float64


@pytest.mark.parametrize("casting", CASTINGS)
def test_can_cast_matches_numpy(casting):
    for a, b in PAIRS:
        want = bool(np.can_cast(a.np, b.np, casting))
        assert T.can_cast(a, b, casting) == want, (a.name, b.name, casting)


def test_can_cast_bfloat16():
    assert T.can_cast(T.bfloat16, T.float32) and T.can_cast(T.bfloat16, T.float64)
    assert not T.can_cast(T.bfloat16, T.float16) and not T.can_cast(T.float16, T.bfloat16)
    assert not T.can_cast(T.float32, T.bfloat16)
    assert T.can_cast(T.int8, T.bfloat16) and T.can_cast(T.bool_, T.bfloat16)  # the promotion rule
    assert not T.can_cast(T.bfloat16, T.int64)
    assert T.can_cast(T.float64, T.bfloat16, "same_kind")
    assert not T.can_cast(T.bfloat16, T.int32, "same_kind")
    assert T.can_cast(T.bfloat16, T.bool_, "unsafe")
    assert T.can_cast(T.bfloat16, T.bfloat16, "no") and not T.can_cast(T.bfloat16, T.float32, "no")
    with pytest.raises(ValueError, match="casting"):
        T.can_cast(T.int8, T.int16, "sideways")


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_parsing_names_numpy_and_python(name):
    d = dt.dtype(name)
    assert d.name == name and dt.dtype(d) is d
    assert getattr(T, name if name != "bool" else "bool_") is d
    if d.np is not None:
        assert dt.dtype(d.np) is d                      # np.dtype
        assert dt.dtype(d.np.type) is d                 # np.float32 and friends
        assert dt.dtype(d.np.str) is d                  # '<f4'
        if d.itemsize > 1:
            assert dt.dtype(d.np.newbyteorder(">")) is d  # byte order does not make a new dtype
        assert d.itemsize == d.np.itemsize and d.kind == d.np.kind
    assert pickle.loads(pickle.dumps(d)) is d
    assert repr(d) == f"tensor.{name}"
    assert d == name and d != ("int8" if name != "int8" else "int16")
    assert hash(d) == hash(dt.dtype(name))


def test_dtype_aliases_and_python_types():
    cases = {"float": "float32", "double": "float64", "half": "float16", "f4": "float32",
             "f8": "float64", "i4": "int32", "i8": "int64", "int": "int64", "u1": "uint8",
             "?": "bool", "bf16": "bfloat16", "short": "int16", "long": "int64", "u2": "uint16",
             "u4": "uint32", "u8": "uint64", "ushort": "uint16", "uint": "uint64"}
    for alias, name in cases.items():
        assert dt.dtype(alias).name == name, alias
    assert dt.dtype(bool) is T.bool_ and dt.dtype(int) is T.int64 and dt.dtype(float) is T.float64
    assert T.bool is T.bool_
    assert T.float32.is_floating_point and T.bfloat16.is_floating_point and not T.int8.is_floating_point
    assert T.int8.is_signed and T.float16.is_signed and not T.uint8.is_signed and not T.bool_.is_signed
    assert [d.bits for d in ALL_DTYPES] == [8, 8, 8, 16, 16, 32, 32, 64, 64, 16, 16, 32, 64]
    assert not any(d.is_signed for d in (T.uint16, T.uint32, T.uint64))


@pytest.mark.parametrize("bad", ["complex256", np.clongdouble, "float128", object,
                                 "foo", None, 3, np.dtype("U3")], ids=repr)
def test_unsupported_dtypes_raise_type_error_naming_them(bad):
    with pytest.raises(TypeError, match="unsupported data type") as ei:
        dt.dtype(bad)
    msg = str(ei.value)
    assert repr(bad) in msg
    assert "float32" in msg and "bfloat16" in msg            # the supported ones are listed
    with pytest.raises(TypeError):
        T.zeros(2, dtype=bad) if bad is not None else dt.dtype(bad)


def test_set_default_dtype_validates():
    with pytest.raises(TypeError, match="float32 or float64"):
        T.set_default_dtype("float16")
    with pytest.raises(TypeError):
        T.set_default_dtype("nonsense")
    assert T.get_default_dtype() is T.float64


def test_dtype_equality_with_other_objects():
    assert T.float32 == np.float32 and T.float32 == np.dtype("float32")
    assert T.float32 != np.float64 and T.float32 != "not a dtype" and T.float32 != 3
    assert len({T.float32, dt.dtype("float"), dt.dtype(np.float32)}) == 1


def test_result_type_of_three_or_more_dtypes_matches_numpy():
    import itertools
    nps = [d for d in dt.ALL if d.np is not None]
    for trio in itertools.product(nps, repeat=3):
        expected = np.result_type(*(d.np for d in trio))
        assert dt.result_type(*trio).name == expected.name, trio


def test_nary_result_type_matches_numpy_for_all_triples():
    """NumPy's n-ary promotion is not pairwise (int8, uint8, float16 -> float16); uint64 with
    any signed int is float64."""
    for a, b, c in itertools.product(NP_DTYPES, repeat=3):
        assert T.result_type(a, b, c).name == np.result_type(a.np, b.np, c.np).name, (a, b, c)


@pytest.mark.parametrize("d", [T.uint16, T.uint32, T.uint64], ids=lambda d: d.name)
def test_unsigned_bounds_and_weak_python_ints(d):
    info = np.iinfo(d.np)
    assert dt.iinfo_bounds(d) == (int(info.min), int(info.max))
    assert T.iinfo(d).max == info.max and T.iinfo(d).min == 0 and T.iinfo(d).bits == info.bits
    x = T.zeros(2, dtype=d)
    assert (x + int(info.max)).tolist() == [int(info.max)] * 2   # the weak int adopts d
    for bad in (-1, int(info.max) + 1):
        with pytest.raises(OverflowError, match=f"Python integer {bad} out of bounds for {d.name}"):
            x + bad


@pytest.mark.parametrize("src", ["float64", "float32", "float16", "complex128"])
def test_float_to_integer_casts_are_defined_everywhere(src):
    """NaN, infinities and out-of-range floats convert by one rule (cuda_src/scalar/types.h's
    sx_f2i64 / sx_f2u64) at every position of a tensor and on every device: truncation where
    the value fits int64, else INT64_MIN, narrower types wrapping that; in-range values as C."""
    big = 1e10 if src != "float16" else 6e4
    vals = [-3.7, -129.0, -big, float("nan"), float("inf"), -float("inf"), 3.9, big]
    x = T.asarray(np.array(vals * 5, dtype=np.dtype(src)))   # SIMD bodies and scalar tails
    i64 = np.array([np.int64(v) if abs(v) < 2.0 ** 63 else np.iinfo(np.int64).min
                    for v in np.array(vals, dtype=np.dtype(src)).real.astype(np.float64)],
                   dtype=np.int64)
    for d in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64"):
        got = x.astype(d).numpy()
        assert np.array_equal(got, np.tile(i64.astype(np.dtype(d)), 5)), d
    got = x.astype("uint64").numpy()[:len(vals)]
    assert got[3] == 2 ** 63 and got[0] == 2 ** 64 - 3 and got[6] == 3


def _round_16(v: float, mant: int) -> float:
    """v rounded to nearest-even with `mant` fraction bits (normal range): exact arithmetic."""
    from fractions import Fraction
    e = Fraction(v).numerator.bit_length() - Fraction(v).denominator.bit_length()
    while Fraction(2) ** e > abs(Fraction(v)):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(Fraction(v)):
        e += 1
    q = Fraction(v) / Fraction(2) ** (e - mant)
    fl = q.numerator // q.denominator
    r = q - fl
    n = fl + (1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl % 2) else 0)
    return float(n * Fraction(2) ** (e - mant))


def test_16_bit_casts_round_once():
    """float64 (and int64) to float16 / bfloat16 round once, to nearest even: through float32
    they rounded twice (1 + 2^-11 + 2^-40 became 1.0 in float16)."""
    vals = [1 + 2**-11 + 2**-40, 1 + 3 * 2**-11 - 2**-40, -(1 + 2**-11 + 2**-45), 1 + 2**-11,
            1 + 2**-8 + 2**-40, 1 + 3 * 2**-8 - 2**-40, -(1 + 2**-8 + 2**-45), 3.14159, 1e-3]
    x = T.asarray(np.array(vals))
    np.testing.assert_array_equal(to_np(x.astype("float16")), np.array(vals).astype(np.float16))
    got = to_np(x.astype("bfloat16").astype("float64"))
    np.testing.assert_array_equal(got, [_round_16(v, 7) for v in vals])
    big = [2**24 + 2**16 + 1, -(2**30 + 2**22 + 3)]            # past float32's 24 bits
    got = to_np(T.asarray(np.array(big)).astype("bfloat16").astype("float64"))
    np.testing.assert_array_equal(got, [_round_16(float(v), 7) for v in big])
