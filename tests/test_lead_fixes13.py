"""Lead fixes of the fourteenth session: the 16-bit stores (cuda_src/scalar/types.h's sx_f2h and
sx_d2f_odd) rewritten with masks so that a loop of them vectorises on the CPU (a float64 ->
float16 cast was 7x slower than needed, branching on each value's sign); their results must
stay the correctly rounded ones, on both devices. T.tensor of Python data copies NumPy's
reading once (it wrapped it, then copied it through the cast kernel)."""
import math
import warnings

import numpy as np
import pytest

import tensor as T

RNG = np.random.default_rng(1314)


def _hard_doubles(n: int) -> np.ndarray:
    """float64 values that stress a rounding to 16 bits: float16 midpoints and their float64
    neighbours (a double rounding through float32 gets these wrong), values around the largest
    float16 and the subnormal range, float32 values and their neighbours, signed zeros, inf,
    NaN, numbers past float32's range and below its subnormals."""
    h = RNG.integers(0, 0x7c00, n, dtype=np.uint16).view(np.float16).astype(np.float64)
    ulp = np.spacing(h.astype(np.float16)).astype(np.float64)
    mid = h + ulp / 2
    near = np.nextafter(mid, np.where(RNG.random(n) < 0.5, -np.inf, np.inf))
    f32 = RNG.standard_normal(n).astype(np.float32).astype(np.float64)
    f32n = np.nextafter(f32, np.where(RNG.random(n) < 0.5, -np.inf, np.inf))
    wide = RNG.standard_normal(n) * 10.0 ** RNG.integers(-50, 50, n)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.99, 65520.0, 1e39, -1e39,
                        2.0 ** -24, 2.0 ** -25, 2.0 ** -25 + 2.0 ** -60, 2.0 ** -14, 1e-320, -1e-320,
                        3.4028235677973366e38, 1 + 2.0 ** -11 + 2.0 ** -40])
    v = np.concatenate([h, mid, near, f32, f32n, wide, special])
    return np.concatenate([v, -v])


def test_float64_to_float16_rounds_once_as_numpy(device):
    v = _hard_doubles(4000 if device == "cpu" else 300)
    got = T.asarray(v, device=device).astype(T.float16).cpu().numpy()
    with np.errstate(over="ignore"):
        want = v.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)], want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()
    # strided and reversed views take the strided loop: the same values
    t = T.asarray(v, device=device)[::-2].astype(T.float16).cpu().numpy()
    np.testing.assert_array_equal(t.astype(np.float64), want[::-2].astype(np.float64))


def test_float32_to_float16_every_exponent_as_numpy(device):
    """Every float32 exponent with random mantissas (subnormal, normal, overflowing results)."""
    n = 64 if device == "cpu" else 8
    bits = np.arange(256, dtype=np.uint32).repeat(n) << 23
    bits |= RNG.integers(0, 1 << 23, 256 * n, dtype=np.uint32)
    bits = np.concatenate([bits, bits | np.uint32(0x80000000)])
    v = bits.view(np.float32)
    got = T.asarray(v, device=device).astype(T.float16).cpu().numpy()
    with np.errstate(over="ignore"):
        want = v.astype(np.float16)
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got.view(np.uint16)[ok], want.view(np.uint16)[ok])
    assert (got.view(np.uint16)[~ok] & 0x7fff == 0x7e00).all()   # one canonical quiet NaN


def _round_once(v: np.ndarray, mant: int, emin: int, top: float) -> np.ndarray:
    """v (finite float64) rounded to nearest, ties to even, onto the grid of a binary format
    with `mant` fraction bits, smallest normal exponent emin and overflow threshold top: the
    grid's spacing at v scales v exactly, NumPy's round is ties-to-even."""
    e = np.frexp(v)[1]                              # v = m * 2**e, 0.5 <= |m| < 1
    ulp = np.ldexp(1.0, np.maximum(e - 1, emin) - mant)
    r = np.round(v / ulp) * ulp
    return np.where(np.abs(r) >= top, np.copysign(np.inf, v), r)


def test_float64_to_bfloat16_rounds_once(device):
    """torch's double -> bfloat16 goes through float32 (two roundings: 6 in 24036 of these
    values one ulp off), so the reference is the grid rounding above."""
    v = _hard_doubles(2000 if device == "cpu" else 200)
    got = T.asarray(v, device=device).astype(T.bfloat16).astype(T.float64).cpu().numpy()
    fin = np.isfinite(v)
    np.testing.assert_array_equal(got[fin], _round_once(v[fin], 7, -126, 2.0 ** 128))
    np.testing.assert_array_equal(got[~fin], v[~fin])
    # the same reference gives NumPy's float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(_round_once(v[fin], 10, -14, 65520.0), v[fin].astype(np.float16))


def test_16bit_results_of_float64_ops_round_once(device):
    """An op computed in float64 stored into a float16 out= (the store rounds to odd first)."""
    a = _hard_doubles(500)
    a = a[np.isfinite(a) & (np.abs(a) < 1e4)]
    out = T.empty(a.shape, dtype=T.float16, device=device)
    T.multiply(T.asarray(a, device=device), 1.0, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), a.astype(np.float16))


# ---------------------------------------------------------------- T.tensor of Python data: one copy

class _ArrayLike:
    """An object NumPy reads through __array__ (here a transposed, non-contiguous view)."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16", "bfloat16", "int8", "uint64",
                                   "complex64", "bool"])
def test_tensor_of_python_data_copies_once_with_numpys_values(dtype):
    """T.tensor of Python data copies NumPy's reading byte for byte into a fresh tensor (a cast
    on the host where NumPy's equals the kernels'); bfloat16 (NumPy has none: its dtype would
    compare equal to float64) and bools keep the kernels' cast."""
    data = [[0.1, -2.5, 1e-310], [3.0, 2.0 ** 24 + 1, 7.0]]
    if dtype == "bool":
        data = [[True, False], [False, False]]
    if dtype in ("int8", "uint64"):
        data = [[1, 2, 3], [4, 5, 127]]
    t = T.tensor(data, dtype=dtype)
    want = T.asarray(np.asarray(data)).astype(dtype or "float64")   # the kernels' cast
    assert t.dtype is want.dtype and t.shape == want.shape
    assert t.astype("complex128" if t.dtype.kind == "c" else "float64").tolist() == \
        want.astype("complex128" if t.dtype.kind == "c" else "float64").tolist()
    t[0] = t[1]                 # a fresh, writable tensor of our own memory
    assert T.tensor(data, dtype=dtype)[0].tolist() != t[0].tolist() or data[0] == data[1]


def test_tensor_of_python_data_edge_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # an overflow to inf warns in NumPy's cast, not here
        prev = T.get_default_dtype()
        T.set_default_dtype(T.float32)
        try:
            t = T.tensor([1e300, -1e300, 0.1])
            assert t.dtype is T.float32 and t.tolist()[:2] == [math.inf, -math.inf]
            assert T.tensor([1 + 2j]).dtype is T.complex64
        finally:
            T.set_default_dtype(prev)
    a = np.arange(6.0).reshape(2, 3)
    for x in (_ArrayLike(a.T), _ArrayLike(a[:, ::-1]), a.T, a[::-1]):   # strided readings: copied by value
        src = x.a if isinstance(x, _ArrayLike) else x
        assert T.tensor(x).tolist() == src.tolist()
    for x in ([], [[]], 5, 2.5, [np.float16(1.5)], [2 ** 63]):
        assert T.tensor(x).tolist() == np.asarray(x).tolist()
    # inside a captured step the data is a constant of the step
    f = T.compile(lambda y: y + T.tensor([1.0, 2.0]))
    for _ in range(3):
        np.testing.assert_array_equal(f(T.ones(2)).numpy(), [2.0, 3.0])
