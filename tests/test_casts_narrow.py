"""Float -> integer casts of 4 bytes or fewer (tensor/optable.py cast_expr: sx_f2lo8f, sx_f2lo16f,
sx_f2lo32f of cuda_src/scalar/types.h, computed in float): the low bits of sx_f2i64, the
library's definition (truncation toward zero where the value fits int64, else INT64_MIN,
wrapped to the target's width), on special and random values of every magnitude, through the
vectorised contiguous loop, its scalar tail and the strided path; NumPy's results where NumPy
defines them (values that fit the target). The forms were checked against the definition for
all 2^32 float32 inputs outside the suite (scalar and vectorised loops).
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T

pytestmark = pytest.mark.usefixtures("device")

TARGETS = ("int8", "uint8", "int16", "uint16", "int32", "uint32")


def _definition(x: np.ndarray, target: str) -> np.ndarray:
    """sx_f2i64 (truncation in int64; NaN, inf and |x| >= 2^63: INT64_MIN), wrapped to target."""
    with np.errstate(invalid="ignore"):   # (signalling NaNs among the random bit patterns)
        x64 = x.astype(np.float64)
        i = np.where(np.abs(x64) < 2.0 ** 63, x64, -(2.0 ** 63)).astype(np.int64)
    return i.astype(target)


def _specials() -> np.ndarray:
    """Zeros, NaNs, infinities, the edges of every width (2^7 ... 2^63 and their neighbours),
    halves, the float32 grid's limits and subnormals."""
    v = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 0.5, -0.5, 0.99999994, -0.99999994, 1.5,
         -1.5, 1e-45, -1e-45, 1.1754944e-38, 3.4028235e38, -3.4028235e38]
    for e in (7, 8, 15, 16, 23, 24, 31, 32, 39, 40, 47, 55, 62, 63, 64, 100):
        p = np.float32(2.0 ** e)
        for b in (p, np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf))):
            v += [float(b), -float(b), float(b) + 0.5, -float(b) - 0.5]
    v += [127.9, 128.0, -128.9, -129.0, 255.5, 256.0, 32767.9, 32768.0, -32768.9, 65535.99,
          65536.0, 2147483520.0, -2147483648.0, 4294967040.0, 2.0 ** 39 - 2.0 ** 15,
          2.0 ** 62 * 1.5, -(2.0 ** 31 + 256.0), 2.0 ** 24 + 2, 9.2233715e18, -9.2233715e18]
    return np.array(v, np.float32)


def _random(n: int, rng) -> np.ndarray:
    """Random bit patterns (every exponent) and values at every power-of-two scale."""
    bits = rng.integers(0, 2 ** 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    scaled = (rng.standard_normal(n - n // 2) * 2.0 ** rng.integers(-4, 70, n - n // 2))
    return np.concatenate([bits, scaled.astype(np.float32)])


@pytest.mark.parametrize("target", TARGETS)
def test_float32_matches_the_definition(device, target):
    rng = np.random.default_rng(TARGETS.index(target))
    n = 200_003 if device == "cpu" else 3_001
    x = np.concatenate([_specials(), _random(n, rng)])
    got = T.asarray(x).astype(getattr(T, target)).numpy()
    np.testing.assert_array_equal(got, _definition(x, target), err_msg=target)
    # the strided path and the scalar tail of the contiguous loop (odd lengths, offsets)
    xs = x[::-3]
    np.testing.assert_array_equal(T.asarray(x)[::-3].astype(getattr(T, target)).numpy(),
                                  _definition(xs, target))
    for k in (1, 7, 33):
        np.testing.assert_array_equal(T.asarray(x[k:k + 45]).astype(getattr(T, target)).numpy(),
                                      _definition(x[k:k + 45], target))


@pytest.mark.parametrize("target", TARGETS)
def test_numpy_where_it_defines_the_result(device, target):
    """Values that fit the target: NumPy's cast (truncation) exactly."""
    info = np.iinfo(target)
    rng = np.random.default_rng(7)
    x = np.concatenate([_specials(), _random(50_000 if device == "cpu" else 2_000, rng)])
    x = x[np.isfinite(x)]
    with np.errstate(invalid="ignore"):
        tx = np.trunc(x.astype(np.float64))
    x = x[(tx >= info.min) & (tx <= info.max)]
    assert x.size > 100
    got = T.asarray(x).astype(getattr(T, target)).numpy()
    np.testing.assert_array_equal(got, x.astype(target))


@pytest.mark.parametrize("source", ["float16", "bfloat16"])
def test_16_bit_floats_compute_in_float(device, source):
    rng = np.random.default_rng(3)
    x = np.concatenate([_specials(), _random(20_000 if device == "cpu" else 1_000, rng)])
    t = T.asarray(x).astype(getattr(T, source))
    xf = t.astype(T.float32).numpy()   # the 16-bit values, exactly
    for target in TARGETS:
        np.testing.assert_array_equal(t.astype(getattr(T, target)).numpy(), _definition(xf, target),
                                      err_msg=f"{source} -> {target}")


def test_the_cast_expression_names_the_narrow_forms():
    from tensor import dtypes as dt
    from tensor.optable import cast_expr
    for target, form in [(dt.int8, "sx_f2lo8f"), (dt.uint8, "sx_f2lo8f"), (dt.int16, "sx_f2lo16f"),
                         (dt.uint16, "sx_f2lo16f"), (dt.int32, "sx_f2lo32f"), (dt.uint32, "sx_f2lo32f")]:
        for source in (dt.float16, dt.bfloat16, dt.float32):
            assert cast_expr(source, target) == f"{form}(a)"
        assert cast_expr(dt.float64, target) == "sx_f2i64(a)"
    assert cast_expr(dt.float32, dt.int64) == "sx_f2i64(a)"
    assert cast_expr(dt.float32, dt.uint64) == "sx_f2u64(a)"
