"""Special values of the array API's math ops added from the standard (2024.12): hyperbolic
inverses, copysign, hypot, logaddexp, nextafter, signbit. tests/test_elementwise.py checks every
op of the table against NumPy within a tolerance; here results must equal NumPy's bit for bit
(signed zeros, infinities; NaN where NumPy gives NaN) on the standard's special cases, and
nextafter must step one ulp of the operands' own dtype, float16 and bfloat16 included."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import FLOAT_DTYPES, bf16_round, make_tensor, np_quiet, to_np

import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")

_NAN, _INF = np.nan, np.inf
_NEG_NAN = -np.float64(np.nan)   # a NaN with its sign bit set (the standard's copysign cases)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _assert_same(t, want: np.ndarray, d: dt.DType, what: str, ulps: int = 0) -> None:
    """t holds want bit for bit (bfloat16: as float32, which carries it exactly), except that
    any NaN matches any NaN (the standard leaves NaN payloads and signs open) and that results
    other than zeros and infinities may be `ulps` off (libm and NumPy's SIMD loops round some
    transcendentals differently)."""
    assert t.dtype is d, f"{what}: dtype {t.dtype.name}, expected {d.name}"
    got = to_np(t)
    want = np.asarray(want, got.dtype)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaNs differ\n got {got}\nwant {want}"
    with np.errstate(invalid="ignore", over="ignore"):
        ulp = np.spacing(np.abs(want.astype(np.float16 if d is dt.float16 else want.dtype)))
        if d is dt.bfloat16:
            ulp = ulp * 2.0 ** 16
        near = (want != 0) & np.isfinite(want) & (np.abs(got - want) <= ulps * ulp)
    ok = (_bits(got) == _bits(want)) | near | nan
    assert ok.all(), f"{what}: bits differ\n got {got[~ok]}\nwant {want[~ok]}"


def _bf16(a) -> np.ndarray:
    """a rounded to bfloat16 (as float32), NaNs kept as they are (their sign bits matter)."""
    a = np.asarray(a, np.float32)
    return np.where(np.isnan(a), a, bf16_round(a))


def _ref(fn, d: dt.DType, *arrays):
    """NumPy's fn over the arrays in d (bfloat16: computed in float32 and rounded to bfloat16,
    exact for these cases: their results are representable)."""
    if d is dt.bfloat16:
        return _bf16(np_quiet(fn, *[_bf16(a) for a in arrays]))
    return np_quiet(fn, *[np.asarray(a, d.np) for a in arrays])


def _check(name: str, d: dt.DType, *arrays, ulps: int = 0) -> None:
    args = [make_tensor(np.asarray(a, np.float64), d) for a in arrays]
    _assert_same(getattr(T, name)(*args), _ref(getattr(np, name), d, *arrays), d, f"{name} {d.name}",
                 ulps)


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=lambda d: d.name)
def test_inverse_hyperbolic_special_cases(d):
    """acosh: x < 1 NaN, 1 +0, +inf +inf; asinh and atanh keep the sign of zero; atanh(+-1)
    is +-inf and |x| > 1 NaN; NaN stays NaN."""
    _check("arccosh", d, [_NAN, 0.5, -1.0, 1.0, _INF, -_INF, 2.0, 0.0], ulps=1)
    _check("arcsinh", d, [_NAN, 0.0, -0.0, _INF, -_INF, 1.5, -1.5], ulps=1)
    _check("arctanh", d, [_NAN, 0.0, -0.0, 1.0, -1.0, 1.5, -2.0, _INF, 0.5], ulps=1)
    assert T.acosh is T.arccosh and T.asinh is T.arcsinh and T.atanh is T.arctanh


_X1 = [1.5, -1.5, 0.0, -0.0, _INF, -_INF, _NAN, 2.0, 3.0]
_X2 = [-0.0, 0.0, -2.0, 2.0, -_INF, _INF, 1.0, _NAN, _NEG_NAN]


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=lambda d: d.name)
def test_copysign_takes_the_sign_bit_of_zeros_and_nans(d):
    x1, x2 = np.array(_X1), np.array(_X2)
    _check("copysign", d, x1[:, None], x2[None, :])
    got = to_np(T.copysign(make_tensor([2.0], d), make_tensor([_NEG_NAN], d)))
    assert got[0] == -2.0, "copysign(x, NaN with the sign bit set) is -|x|"


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=lambda d: d.name)
def test_hypot_and_logaddexp_special_cases(d):
    """hypot: an infinity wins over NaN (+inf), +-0, +-0 is +0; logaddexp: NaN with anything is
    NaN, +inf with anything else +inf, -inf is the identity, equal operands add log 2."""
    x1, x2 = np.array(_X1)[:, None], np.array(_X2)[None, :]
    _check("hypot", d, x1, x2, ulps=1)
    _check("logaddexp", d, x1, x2, ulps=1)
    _check("logaddexp", d, [_INF, -_INF, -_INF, 3.0, 1e4, -1e4], [_INF, -_INF, 2.0, 3.0, 1e4, 1.0],
           ulps=1)


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=lambda d: d.name)
def test_signbit_of_zeros_infinities_and_nans(d):
    x = np.array([0.0, -0.0, _INF, -_INF, _NAN, _NEG_NAN, 1.0, -1e-30, 5.0])
    got = T.signbit(make_tensor(x, d))
    want = np.signbit(x)   # every value keeps its sign in every float dtype (-1e-30 -> -0)
    assert got.dtype is dt.bool_ and to_np(got).tolist() == want.tolist(), d.name


def test_signbit_of_integers_and_bools_is_numpys():
    """NumPy takes integer and bool inputs (its float loops; the standard asks for floats):
    x < 0, bool output."""
    for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        a = np.array([0, 1, -1, 127], np.int64).astype(name)
        got = T.signbit(make_tensor(a, dt.dtype(name)))
        assert got.dtype is dt.bool_ and to_np(got).tolist() == np.signbit(a).tolist(), name


def _next_ref(x: np.ndarray, y: np.ndarray, grid: np.ndarray, eq_gives_y: bool) -> np.ndarray:
    """nextafter over a sorted grid of every value of a dtype (no NaN, one zero): the grid's
    next value toward y, or y (C99) or x (NumPy's float16 before 2.5) when they are equal. A
    step onto zero gives x's signed zero (the grid's one zero is either: np.unique's choice
    changed in NumPy 2.4)."""
    up = grid[np.minimum(np.searchsorted(grid, x, "right"), grid.size - 1)]
    down = grid[np.maximum(np.searchsorted(grid, x, "left") - 1, 0)]
    r = np.where(y > x, up, down)
    r = np.where(r == 0, np.copysign(0.0, x), r).astype(r.dtype)   # a step to zero keeps x's sign
    r = np.where(x == y, y if eq_gives_y else x, r)
    return np.where(np.isnan(x) | np.isnan(y), np.nan, r)


def _grid(d: dt.DType) -> tuple[np.ndarray, np.ndarray]:
    """(every non-NaN value of the 16-bit dtype d as float32, sorted, -0 left out; a sample)."""
    bits = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(invalid="ignore"):   # signalling NaNs among the patterns
        vals = ((bits << 16).view(np.float32) if d is dt.bfloat16 else
                bits.astype(np.uint16).view(np.float16).astype(np.float32))
        sample = np.concatenate([vals[::61], vals[:3], vals[0x8000:0x8003], vals[0x7b00:0x7f00:17],
                                 np.array([-0.0, np.nan], np.float32)])
    return np.unique(vals[~np.isnan(vals)]), sample   # np.unique: -0 == 0, one zero


@pytest.mark.parametrize("d", [dt.float16, dt.bfloat16], ids=lambda d: d.name)
def test_nextafter_steps_one_ulp_of_the_16_bit_dtype(d):
    """float16 and bfloat16 step in their own precision (not float32's, which rounds back to
    the operand), equal operands give y as C99's (nextafter(-0, 0) is 0): float16 as NumPy's,
    bit for bit (NumPy before 2.5 gave x there: numpy#31475); bfloat16, which NumPy lacks,
    over its own values."""
    grid, x = _grid(d)
    y = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3e-8, 65504.0], np.float32)
    y = _bf16(y) if d is dt.bfloat16 else y.astype(np.float16).astype(np.float32)
    want = _next_ref(x[:, None], y[None, :], grid, eq_gives_y=True)
    got = T.nextafter(make_tensor(x[:, None], d), make_tensor(y[None, :], d))
    if d is dt.float16:
        with np.errstate(over="ignore"):
            npy = np.nextafter(x.astype(np.float16)[:, None], y.astype(np.float16)[None, :])
        if tuple(int(v) for v in np.__version__.split(".")[:2]) < (2, 5):
            npy = np.where(x[:, None] == y[None, :], y[None, :], npy)   # its old signed zeros
        _assert_same(got, npy, d, "nextafter float16 vs NumPy")
    _assert_same(got, want.astype(np.float32), d, f"nextafter {d.name} vs the grid")
    one = make_tensor([1.0], d)
    assert to_np(T.nextafter(one, 2.0))[0] > 1.0, "a weak scalar operand: still a 16-bit step"


@pytest.mark.parametrize("d", [dt.float32, dt.float64], ids=lambda d: d.name)
def test_nextafter_float32_float64_match_numpy(d):
    tiny = np.finfo(d.np).smallest_subnormal
    big = np.finfo(d.np).max
    x = np.array([0.0, -0.0, 1.0, -1.0, tiny, -tiny, big, -big, _INF, -_INF, _NAN], d.np)
    y = np.array([0.0, -0.0, 2.0, -2.0, _INF, -_INF, _NAN], d.np)
    _check("nextafter", d, x[:, None], y[None, :])


def test_array_api_alias_names():
    """The standard's names of the bitwise ops are NumPy's functions, methods included."""
    assert T.bitwise_invert is T.bitwise_not
    assert T.bitwise_left_shift is T.left_shift and T.bitwise_right_shift is T.right_shift
    x = T.asarray(np.array([1, -2, 5], np.int16))
    assert x.bitwise_invert().tolist() == [-2, 1, -6]
    assert x.bitwise_left_shift(2).tolist() == [4, -8, 20]
    assert x.bitwise_right_shift(1).tolist() == [0, -1, 2]
