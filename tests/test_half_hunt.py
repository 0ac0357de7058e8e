"""float16 / bfloat16 numerics against NumPy's float16 and PyTorch's CPU bfloat16, bit for bit.

NumPy computes a float16 ufunc in float32 and rounds once, and so do our kernels: every float16
value through every unary op NumPy has gives NumPy's bits, on both devices. PyTorch's CPU
bfloat16 ops do the same in float32. Where a result must round once (a Python int into
bfloat16, std of 16-bit values), the reference is exact integer / float64 arithmetic.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from tensor.optable import BINARY, UNARY

ALL_F16 = np.arange(65536, dtype=np.uint16).view(np.float16)


def _bits_equal(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Elementwise: the same bits, or both NaN (NaN payloads and signs are not compared)."""
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[ours.itemsize]
    return (ours.view(u) == ref.view(u)) | (np.isnan(ours) & np.isnan(ref))


def _first_bad(x, ours, ref, eq):
    i = np.flatnonzero(~eq)[:3]
    return [(x[k], ours[k], ref[k]) for k in i]


_NUMPY_UNARY = [op for op in UNARY if "f" in op.kinds and isinstance(op.ref, np.ufunc)]


@pytest.mark.parametrize("op", _NUMPY_UNARY, ids=lambda op: op.name)
def test_float16_unary_every_value_is_numpys(op, device):
    """All 65536 float16 patterns (subnormals, +-0, the largest finite, inf, NaN): NumPy's bits."""
    with np.errstate(all="ignore"):
        ref = np.asarray(op.ref(ALL_F16))
    ours = getattr(T, op.name)(T.asarray(ALL_F16, device=device)).cpu().numpy()
    if ref.dtype.kind == "b":
        eq = ours == ref
    else:
        eq = _bits_equal(ours, ref)
    assert eq.all(), f"{op.name}: {int((~eq).sum())} differ, e.g. {_first_bad(ALL_F16, ours, ref, eq)}"


# maximum / minimum of +0 and -0, nextafter onto an equal value: NumPy 2.4's float16 loops keep
# the first operand, ours (and C99, NumPy >= 2.5's nextafter) the second; both are zeros
_ZERO_SIGN = {"maximum", "minimum", "nextafter", "fmax", "fmin"}
_NUMPY_BINARY = [op for op in BINARY if "f" in op.kinds and isinstance(op.ref, np.ufunc)]


@pytest.mark.parametrize("op", _NUMPY_BINARY, ids=lambda op: op.name)
def test_float16_binary_random_patterns_are_numpys(op):
    rng = np.random.default_rng(12)
    a = rng.integers(0, 65536, 60000, dtype=np.uint16)
    near = (a.astype(np.int32) + rng.integers(-24, 24, a.size)).clip(0, 65535).astype(np.uint16)
    b = np.concatenate([rng.integers(0, 65536, a.size, dtype=np.uint16), near])
    x, y = np.concatenate([a, a]).view(np.float16), b.view(np.float16)
    with np.errstate(all="ignore"):
        ref = np.asarray(op.ref(x, y))
    ours = getattr(T, op.name)(T.asarray(x), T.asarray(y)).numpy()
    eq = ours == ref if ref.dtype.kind == "b" else _bits_equal(ours, ref)
    if op.name in _ZERO_SIGN:
        eq |= (x == 0) & (y == 0)
    bad = [(x[i], y[i], ours[i], ref[i]) for i in np.flatnonzero(~eq)[:3]]
    assert eq.all(), f"{op.name}: {int((~eq).sum())} differ, e.g. {bad}"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_logaddexp2_rounds_its_product_as_numpy(dtype, device):
    """a + log2e * log1p(exp2(-d)) with the product rounded (NumPy's npy_logaddexp2, and the
    CUDA kernels, built without contraction): the CPU's gcc had fused it into an FMA, 1 in 20
    float32 results an ulp off, float16 ones off NumPy's and the other device's."""
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(20000) * 3).astype(dtype)
    b = np.concatenate([(rng.standard_normal(10000) * 3).astype(dtype), a[:10000] + dtype_eps(dtype)])
    ref = np.logaddexp2(a, b)
    ours = T.logaddexp2(T.asarray(a, device=device), T.asarray(b, device=device)).cpu().numpy()
    eq = _bits_equal(ours, ref)
    assert eq.all(), _first_bad(a, ours, ref, eq)
    # the cases that had moved on the CPU (float16 inputs, NumPy's float16 loop)
    x = np.float16([0.00333404541015625, 3.439188003540039e-05, 0.1925048828125])
    y = np.float16([-0.0004069805145263672, 0.000942230224609375, 0.1912841796875])
    got = T.logaddexp2(T.asarray(x, device=device), T.asarray(y, device=device)).cpu().numpy()
    assert _bits_equal(got, np.logaddexp2(x, y)).all(), (got, np.logaddexp2(x, y))


def dtype_eps(dtype: str):
    return np.finfo(dtype).eps * 4


def _bf16_of_int(v: int) -> float:
    """v rounded to bfloat16 (8 significant bits, to nearest, ties to even), exactly."""
    m = abs(v)
    if m < 2 ** 8:
        return float(v)
    sh = m.bit_length() - 8
    q, r = divmod(m, 1 << sh)
    if 2 * r > 1 << sh or (2 * r == 1 << sh and q & 1):
        q += 1
    out = float(q << sh)
    return -out if v < 0 else out


def test_python_ints_round_once_into_bfloat16():
    """Python ints past 2**53 were read as float64 (one rounding) and cast to bfloat16 (a
    second): 2**60 + 2**52 + 1 gave 2**60, not 2**60 + 2**53."""
    rng = np.random.default_rng(3)
    ints = [2 ** 60 + 2 ** 52 + 1, -(2 ** 60 + 2 ** 52 + 1), 2 ** 63 + 2 ** 55 + 1, 2 ** 54 + 2 ** 46 + 1,
            2 ** 62 + 2 ** 54, 2 ** 62 + 3 * 2 ** 54]   # the last two: exact ties, to even
    ints += [int(v) for v in rng.integers(-2 ** 62, 2 ** 62, 300)]
    want = [_bf16_of_int(v) for v in ints]
    assert T.tensor(ints, dtype=T.bfloat16).astype(T.float64).tolist() == want
    assert T.asarray(ints, dtype=T.bfloat16).astype(T.float64).tolist() == want
    # mixed with floats (read as float64 together), nested, scalars, NumPy integers
    mixed = T.tensor([[ints[0], 0.5], [ints[2], -1.25]], dtype=T.bfloat16).astype(T.float64).tolist()
    assert mixed == [[want[0], 0.5], [want[2], -1.25]]
    assert T.tensor(ints[0], dtype=T.bfloat16).astype(T.float64).item() == want[0]
    assert T.tensor([np.int64(ints[0]), 0.25], dtype=T.bfloat16).astype(T.float64).tolist() == [want[0], 0.25]
    # past the largest bfloat16: inf, as the float64 reading gives
    assert T.tensor([3 * 2 ** 127, -(3 * 2 ** 127)], dtype=T.bfloat16).astype(T.float64).tolist() == [
        float("inf"), float("-inf")]
    # the same values cast from int64 tensors already rounded once
    small = [i for i, v in enumerate(ints) if -2 ** 63 <= v < 2 ** 63]
    got = T.asarray(np.array([ints[i] for i in small], np.int64)).astype(T.bfloat16)
    assert got.astype(T.float64).tolist() == [want[i] for i in small]


def _round16(v: np.ndarray, dtype) -> np.ndarray:
    """float64 values rounded once to float16 (NumPy) or bfloat16 (as float32 values)."""
    if dtype is T.float16:
        return v.astype(np.float16)
    v = np.asarray(v, np.float64)
    f = v.astype(np.float32)    # rounded to odd (toward zero, the last bit set when inexact), so
    back = f.astype(np.float64)  # that the rounding to bfloat16 below is the only one
    u = f.view(np.uint32).astype(np.uint64)
    inexact = back != v
    u = np.where(inexact & (np.abs(back) > np.abs(v)), u - 1, u)
    u = np.where(inexact, u | 1, u)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("dtype", [T.float16, T.bfloat16], ids=["float16", "bfloat16"])
def test_std_of_16bit_rounds_once(dtype, device):
    """std computes the float32 variance's square root and rounds it once (it had rounded the
    variance to 16 bits first: 1 ulp off in ~15% of results, against NumPy's float64 and
    PyTorch's bfloat16)."""
    rng = np.random.default_rng(5)
    x32 = (rng.standard_normal((37, 129)) * 3).astype(np.float32)
    t = T.asarray(x32, device=device).astype(dtype)
    x = t.astype(T.float64).cpu().numpy()
    # float64 reference, exact in the 16-bit values; the rounding of a float32 accumulation
    # differs from it only where the 16-bit grid's midpoint is closer than float32's error
    for axis, ddof in ((None, 0), (0, 0), (1, 1), (0, 1)):
        ref = _round16(np.asarray(np.std(x, axis=axis, ddof=ddof)), dtype)
        got = T.std(t, axis=axis, ddof=ddof).astype(T.float32).cpu().numpy()
        assert np.array_equal(got.astype(np.float32), np.asarray(ref, np.float32)), (axis, ddof)
    # a non-contiguous view, and var still rounds once too
    v = t[::2, 1::3]
    xv = x[::2, 1::3]
    assert np.array_equal(T.std(v, axis=0).astype(T.float32).cpu().numpy(),
                          np.asarray(_round16(np.std(xv, axis=0), dtype), np.float32))
    assert np.array_equal(T.var(v, axis=1).astype(T.float32).cpu().numpy(),
                          np.asarray(_round16(np.var(xv, axis=1), dtype), np.float32))


def test_std_against_torch_bfloat16():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((23, 65)) * 5 + 2).astype(np.float32)
    tb = torch.from_numpy(x).bfloat16()
    ours = T.asarray(x).astype(T.bfloat16)
    for dim in (0, 1):
        got = T.std(ours, dim=dim).astype(T.float32).numpy()   # PyTorch's spelling: unbiased
        assert np.array_equal(got, tb.std(dim=dim).float().numpy()), dim


def test_bfloat16_unary_every_value_is_torchs():
    """All 65536 bfloat16 patterns through the ops PyTorch's CPU computes in float32 the same way."""
    torch = pytest.importorskip("torch")
    bits = np.arange(65536, dtype=np.uint16)
    tt = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
    ours_in = T.asarray(bits).view(T.bfloat16)
    names = {"negative": "neg", "abs": "abs", "exp": "exp", "expm1": "expm1", "log": "log",
             "log1p": "log1p", "log2": "log2", "log10": "log10", "sqrt": "sqrt", "square": "square",
             "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
             "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
             "arctanh": "atanh", "tanh": "tanh", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
             "rint": "round", "exp2": "exp2", "rsqrt": "rsqrt", "frac": "frac", "erfc": "erfc",
             "erfinv": "erfinv", "digamma": "digamma", "deg2rad": "deg2rad", "rad2deg": "rad2deg"}
    for ours_name, torch_name in names.items():
        ref = getattr(torch, torch_name)(tt).view(torch.int16).numpy().view(np.uint16)
        got = getattr(T, ours_name)(ours_in).view(T.uint16).numpy()
        nan = lambda u: (u & 0x7FFF) > 0x7F80   # noqa: E731
        eq = (got == ref) | (nan(got) & nan(ref))
        assert eq.all(), f"{ours_name}: {int((~eq).sum())} differ at bits {bits[~eq][:4]}"


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
def test_reduction_into_a_wider_out_computes_in_its_dtype(name, device):
    """NumPy's add.reduce / multiply.accumulate (and PyTorch's out=) compute in out's dtype when
    no dtype is given: the float16 result widened into a float32 out had rounded each value to
    float16 first (5000 x 1.1 summed to 5500, not 5498.047)."""
    n = 40 if "prod" in name else 5000
    x = np.full(n, 1.1, np.float16)
    x[::7] = np.float16(0.9)
    for od in (np.float32, np.float64):
        shape = x.shape if name.startswith("cum") else ()
        ref = getattr(np, name)(x.astype(od))        # (the float32 prod: NumPy's own order)
        out = T.empty(shape, dtype=getattr(T, np.dtype(od).name), device=device)
        r = getattr(T, name)(T.asarray(x, device=device), out=out)
        assert r is out
        np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=16 * np.finfo(od).eps)
        half = getattr(np, name)(x.astype(np.float32)).astype(np.float16).astype(od)
        assert not np.array_equal(out.cpu().numpy(), half)   # not the 16-bit result widened
    # a dtype given wins over out's; an integer out keeps the integer sum (NumPy's rule alike)
    out = T.empty((), dtype=T.float32, device=device)
    if name == "sum":
        T.sum(T.asarray(x, device=device), dtype=T.float16, out=out)
        assert out.item() == float(np.sum(x, dtype=np.float16))
        i8 = np.arange(300).astype(np.int8)
        o = T.empty((), dtype=T.int8, device=device)
        T.sum(T.asarray(i8, device=device), out=o)
        assert o.item() == np.sum(i8, out=np.empty((), np.int8))


def test_complex_sum_into_a_real_out_stays_refused():
    """out='s dtype becomes the sum's dtype only where the cast is safe: a complex x summed
    into a float out is refused (it would drop the imaginary part silently)."""
    x = T.asarray(np.array([1 + 2j, 3 + 4j]))
    with pytest.raises(TypeError, match="cannot cast"):
        T.sum(x, out=T.zeros((), dtype=T.float64))
    o = T.zeros((), dtype=T.complex128)
    T.sum(T.asarray(np.array([1.5, 2.0], np.float32)), out=o)
    assert complex(o.item()) == 3.5 + 0j
