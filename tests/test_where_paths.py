"""where's unit-stride loops (tensor/cpu/csrc/elementwise.h SX_WHERE: both values loaded, then
a select, so that it vectorises), with a scalar or broadcast value (stride 0) on either side or
both: bit for bit NumPy's where (NaN payloads, -0.0, 16-bit and complex values), on both devices,
along with the strided loop they leave the rest to."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T

pytestmark = pytest.mark.usefixtures("device")

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128", "int8", "uint8",
          "int16", "int32", "int64", "bool"]
RNG = np.random.default_rng(1129)


def _values(dtype: str, n: int) -> T.Tensor:
    """n values of dtype with signed zeros and NaNs with payloads among them (floats)."""
    if dtype == "bool":
        return T.asarray(RNG.random(n) < 0.5)
    if dtype in ("int8", "uint8", "int16", "int32", "int64"):
        return T.asarray(RNG.integers(-100 if dtype[0] == "i" else 0, 100, n).astype(dtype))
    x = RNG.standard_normal(n) * 100
    x[::7] = -0.0
    t = T.asarray(x).astype(dtype)
    if dtype in ("float32", "float64"):   # NaNs with payloads: only a bit copy keeps them
        u = t.view("uint32" if dtype == "float32" else "uint64").numpy().copy()
        u[3::11] |= np.array(0x7fc00123 if dtype == "float32" else 0x7ff8000000000123, u.dtype)
        t = T.asarray(u).view(dtype)
    return t


def _bits(t) -> np.ndarray:
    a = t.numpy() if isinstance(t, T.Tensor) else np.asarray(t)
    if a.dtype.kind == "c":
        a = a.view(a.real.dtype)
    return a.view(f"u{a.itemsize}") if a.dtype.kind in "fc" or a.dtype.itemsize > 1 else a.view("u1")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 64, 1000, 70_001])
def test_where_layouts_bitwise(device, dtype, n):
    if device == "cuda" and n > 1000:
        pytest.skip("the emulator is slow: small sizes on cuda")
    c = T.asarray(RNG.random(n) < 0.4)
    a, b = _values(dtype, n), _values(dtype, n)
    a0, b0 = a[:1].reshape(()), b[:1].reshape(())
    bits = "uint16" if dtype == "bfloat16" else dtype   # (NumPy has no bfloat16: its bits)
    an, bn, cn = a.view(bits).numpy(), b.view(bits).numpy(), c.numpy()
    cases = [(a, b, an, bn), (a, b0, an, bn[:1]), (a0, b, an[:1], bn), (a0, b0, an[:1], bn[:1]),
             (T.broadcast_to(a0, (n,)), b, an[:1], bn)]
    for x, y, xn, yn in cases:
        r = T.where(c, x, y)
        want = np.where(cn, np.broadcast_to(xn.reshape(-1)[:n] if xn.size == n else xn, (n,)),
                        np.broadcast_to(yn if yn.size == n else yn[:1], (n,)))
        got = r.view("uint16") if dtype == "bfloat16" else r
        np.testing.assert_array_equal(_bits(got), _bits(want))
    # the strided loop: a reversed and a stepped operand
    r = T.where(c[::-1], a[::-1], b)
    got = r.view("uint16") if dtype == "bfloat16" else r
    np.testing.assert_array_equal(_bits(got), _bits(np.where(cn[::-1], an[::-1], bn)))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_where_with_python_scalars_and_2d_broadcast(device, dtype):
    x = _values(dtype, 600).reshape(20, 30)
    c = x > 0 if dtype != "int64" else x > 10
    cn, xn = c.numpy(), x.numpy()
    for v in (0, 2):
        np.testing.assert_array_equal(T.where(c, x, v).numpy(), np.where(cn, xn, np.array(v, dtype)))
        np.testing.assert_array_equal(T.where(c, v, x).numpy(), np.where(cn, np.array(v, dtype), xn))
    row = x[:1]   # broadcast along rows: stride 0 on the outer dim only
    np.testing.assert_array_equal(T.where(c, row, x).numpy(), np.where(c.numpy(), row.numpy(), x.numpy()))
