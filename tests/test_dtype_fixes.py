"""dtype corners that hunt 4 found wrong: 64-bit integers cast to bfloat16 rounded twice,
NumPy bool arrays holding bytes other than 0 and 1 taken as they were, and randint into a
float dtype too narrow for its range filling the tensor with inf."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import to_np

import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def _round_int(v: int, bits: int) -> float:
    """v rounded once (to nearest, ties to even) to `bits` significant bits (no exponent limit:
    the values below are far inside bfloat16's range)."""
    a = abs(v)
    sh = a.bit_length() - bits
    if sh <= 0:
        return float(v)
    q, r = divmod(a, 1 << sh)
    if r > 1 << (sh - 1) or (r == 1 << (sh - 1) and q & 1):
        q += 1
    return float(q << sh) * (-1 if v < 0 else 1)


def _near_ties() -> list[int]:
    """int64 values at, just below and just above midpoints of the bfloat16 grid, and others."""
    vals = []
    for k in (25, 40, 54, 55, 60, 62):
        base = 0b10110011 << (k - 8)
        half = 1 << (k - 9)
        vals += [base + half - 1, base + half, base + half + 1, base + 1, base - 1]
    vals += [2**63 - 1, 2**24 + 1, 12345, 0, 1]
    return vals + [-v for v in vals[:10]]


@pytest.mark.parametrize("src", ["int64", "uint64"])
def test_64bit_ints_round_once_to_bfloat16(src):
    """Caught: int64 -> double -> bfloat16 lost the bits past 53 before the last rounding, so
    2**60 + 2**52 + 1 (just above a midpoint) became 2**60 instead of 2**60 + 2**53 (int32 and
    smaller, exact in double, were right)."""
    vals = [v for v in _near_ties() if src == "int64" or v >= 0]
    if src == "uint64":
        vals += [2**64 - 1, 2**63 + 2**55 + 1, 2**63 + 2**55]
    x = T.asarray(np.array(vals, dtype=src))
    got = to_np(x.astype("bfloat16")).astype(np.float64)
    np.testing.assert_array_equal(got, [_round_int(v, 8) for v in vals])
    # float32 and float64 keep C's single rounding; float16 of these is inf or exact
    np.testing.assert_array_equal(to_np(x.astype("float32")), np.array(vals, dtype=src).astype(np.float32))
    small = T.asarray(np.array([2047, 2049, 4097, 65519, 65520, 7], dtype=src))
    with np.errstate(over="ignore"):     # 65520 is past float16's range: inf
        want16 = np.array([2047, 2049, 4097, 65519, 65520, 7]).astype(np.float16)
    np.testing.assert_array_equal(to_np(small.astype("float16")), want16)


def test_python_int_to_bfloat16_rounds_once():
    """Caught: a Python int filled or combined as bfloat16 went through float(v) (nearest,
    53 bits) before bfloat16, the same double rounding as the cast."""
    w = 2**60 + 2**52 + 1
    for v in (w, -w, np.int64(w), 2**100 + 2**92 + 1, 2**24 + 1, 7):
        want = _round_int(int(v), 8)
        assert T.full((2,), v, dtype="bfloat16").astype("float64").tolist() == [want, want]
    z = T.zeros(1, dtype="bfloat16")
    assert (z + w).astype("float64").item() == 2**60 + 2**53
    assert T.asarray(np.array([w])).astype("bfloat16").astype("float64").item() == 2**60 + 2**53


def _loose_bools() -> np.ndarray:
    return np.array([0, 1, 2, 255, 4, 0, 128], np.uint8).view(np.bool_)


def test_bool_arrays_with_bytes_past_one_are_read_as_numpy_reads_them():
    """Caught: a uint8 buffer viewed as bool went in as it was, and every kernel saw 2, 255...:
    astype(int8) gave [0, 1, 2, -1, 4, 0, -128], sum 390, (t == True) and all() wrong."""
    b = _loose_bools()
    for t in (T.asarray(b), T.tensor(b), T.asarray(b, copy=True), T.tensor([b, b])[0],
              T.asarray(b[::2])):
        ref = b if t.shape == b.shape else b[::2]
        np.testing.assert_array_equal(to_np(t.astype("int8")), ref.astype(np.int8))
        assert t.sum().item() == ref.sum()
        np.testing.assert_array_equal(to_np(t == True), ref == True)  # noqa: E712
        assert t.all().item() == ref.all() and t.any().item() == ref.any()
        np.testing.assert_array_equal(to_np(t & T.ones(ref.shape, dtype="bool")), ref & True)
    assert T.asarray(b, dtype="float32").tolist() == b.astype(np.float32).tolist()
    assert _loose_bools().view(np.uint8)[2] == 2          # the caller's array is left alone


def test_bool_arrays_with_bytes_past_one_cannot_be_shared():
    b = _loose_bools()
    with pytest.raises(ValueError, match="from_numpy: .*bytes other than 0 and 1"):
        T.from_numpy(b)
    with pytest.raises(ValueError, match="asarray: copy=False but this bool array holds bytes"):
        T.asarray(b, copy=False)
    ok = np.array([True, False, True])
    t = T.from_numpy(ok)
    assert t.tolist() == [True, False, True]
    if t.device.type == "cpu":
        assert t.data_ptr() == ok.ctypes.data               # canonical bools are still shared


@pytest.mark.parametrize("d,low,high", [("float16", 0, 2**20), ("float16", -70000, 0),
                                        ("bfloat16", 0, 2**62), ("float32", 0, 2**63 - 1)])
def test_randint_into_a_float_dtype_too_narrow_raises(d, low, high):
    """Caught: randint(0, 2**20, dtype=float16) drew in int64 and cast: every value past
    65504 became inf (PyTorch refuses the bounds). bfloat16 / float32 reach past 2**62."""
    g = T.random.Generator(3)
    if d == "float16":
        with pytest.raises(ValueError, match=rf"randint: range \[{low}, {high}\) does not fit float16, "
                                             r"whose largest finite value is 65504"):
            g.randint(low, high, (4,), dtype=d)
        assert g.get_state() == (3, 0)                     # nothing drawn
    else:
        r = to_np(g.randint(low, high, (64,), dtype=d)).astype(np.float64)
        assert np.isfinite(r).all() and (r >= low).all()
    # the largest finite value is a valid bound (each draw then rounds to the float16 grid)
    top = to_np(g.randint(65000, 65505, (200,), dtype="float16")).astype(np.float64)
    assert np.isfinite(top).all() and top.min() >= 64992 and top.max() == 65504
