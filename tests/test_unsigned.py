"""uint16/32/64 corners NumPy 2 defines and the generated op tests do not reach: exact
comparisons of signed ints with uint64 (which promote to float64), Python ints past int64,
sums of unsigned ints (uint64), wrapping negation, uint64 index arrays and random integers."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import synced, to_np

import tensor as T

pytestmark = pytest.mark.usefixtures("device")

CMP = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
BIG = np.array([0, 1, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1], np.uint64)
SIGNED = np.array([0, 1, 2**53, -1, 2**63 - 1, -(2**63)], np.int64)


@pytest.mark.parametrize("name", CMP)
@pytest.mark.parametrize("sd", [np.int8, np.int64], ids=lambda d: np.dtype(d).name)
def test_signed_vs_uint64_comparisons_are_exact(name, sd):
    """int64 and uint64 promote to float64 (2**53 + 1 would round), but NumPy compares them
    exactly: so do we, both orders, broadcast."""
    s = SIGNED.astype(sd)[:, None]
    u = BIG[None, :]
    fn, ref = getattr(T, name), getattr(np, name)
    assert (T.asarray(s) + T.asarray(u)).dtype is T.float64
    np.testing.assert_array_equal(to_np(fn(T.asarray(s), T.asarray(u))), ref(s, u))
    np.testing.assert_array_equal(to_np(fn(T.asarray(u), T.asarray(s))), ref(u, s))


def test_python_ints_beyond_the_dtype_in_comparisons():
    u = T.asarray(BIG)
    i = T.asarray(SIGNED)
    for x, xs in ((u, BIG), (i, SIGNED)):
        for v in (-1, -(2**63) - 1, 2**63, 2**64, 2**70):
            for name in CMP:
                np.testing.assert_array_equal(to_np(getattr(T, name)(x, v)), getattr(np, name)(xs, v))


def test_sums_of_unsigned_are_uint64_and_wrap():
    for d in (np.uint8, np.uint16, np.uint32, np.uint64):
        a = np.array([np.iinfo(d).max, 3, 7], d)
        for fn in ("sum", "prod", "cumsum", "cumprod"):
            r, want = getattr(T, fn)(T.asarray(a)), getattr(np, fn)(a)
            assert r.dtype is T.uint64 and want.dtype == np.uint64
            np.testing.assert_array_equal(to_np(r), want)
    big = np.array([2**64 - 1, 2], np.uint64)
    assert T.sum(T.asarray(big)).item() == int(np.sum(big))   # wraps, as NumPy
    for d in ("bool", "int8", "int32"):
        assert T.sum(T.ones(3, dtype=d)).dtype is T.int64


def test_negative_and_abs_of_unsigned_wrap():
    for d in (np.uint16, np.uint32, np.uint64):
        a = np.array([0, 1, 5, np.iinfo(d).max], d)
        np.testing.assert_array_equal(to_np(-T.asarray(a)), -a)
        np.testing.assert_array_equal(to_np(abs(T.asarray(a))), abs(a))
        np.testing.assert_array_equal(to_np(T.asarray(a) * T.asarray(a)), a * a)


def test_uint64_index_arrays_past_int64_are_out_of_bounds():
    x = T.arange(10)
    for k in (np.array([2**64 - 1], np.uint64), np.array([2**63], np.uint64)):
        with pytest.raises(IndexError):
            synced(x[k])
        with pytest.raises(IndexError):
            synced(x[T.asarray(k)])
    k = np.array([3, 9, 0], np.uint64)
    assert x[k].tolist() == [3, 9, 0] and x[T.asarray(k.astype(np.uint32))].tolist() == [3, 9, 0]


def test_randint_over_unsigned_ranges():
    g = T.random.Generator(7)
    for d, lo, hi in (("uint16", 0, 2**16), ("uint32", 5, 2**32), ("uint64", 0, 2**63),
                      ("uint64", 2**63 - 3, 2**64 - 1)):
        r = g.randint(lo, hi, size=4000, dtype=d)
        v = to_np(r).astype(object)
        assert r.dtype == d and v.min() >= lo and v.max() < hi
    top = to_np(g.randint(2**64 - 2**20, 2**64 - 1, size=2000, dtype="uint64"))
    assert top.min() >= 2**64 - 2**20 and len(np.unique(top)) > 1900
    full = to_np(g.randint(0, 2**64, size=4000, dtype="uint64")).astype(object)
    assert full.min() < 2**62 and full.max() >= 3 * 2**62   # both halves: the raw 64-bit words
    with pytest.raises(ValueError, match=r"randint: range \[0, 18446744073709551617\) does not fit uint64"):
        g.randint(0, 2**64 + 1, dtype="uint64")
    with pytest.raises(ValueError, match="does not fit"):
        g.randint(-1, 5, dtype="uint32")


def test_creation_and_conversion():
    assert T.asarray([2**63, 2**64 - 1]).tolist() == [2**63, 2**64 - 1]
    assert T.arange(5, dtype="uint32").tolist() == list(range(5))
    assert T.full((2,), 2**64 - 1, dtype="uint64").tolist() == [2**64 - 1] * 2
    a = np.array([0.0, 1.0, 65535.0, 2.0**32 - 1, 2.0**63])   # in-range floats cast exactly
    for d in (np.uint16, np.uint32, np.uint64):
        ok = a[a <= np.iinfo(d).max]
        np.testing.assert_array_equal(to_np(T.asarray(ok).astype(d)), ok.astype(d))
    x = T.asarray(np.array([1, 2**63], np.uint64)).astype("float64")
    assert x.tolist() == [1.0, 2.0**63]
