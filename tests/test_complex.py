"""complex64 and complex128 on every device: promotion, conversion, the op table's complex loops,
casts, parts (views), reductions, matmul, indexing, sorting and DLPack (autograd:
test_complex_autograd.py).

The scalar math itself (special values, accuracy over the range) is checked on the C build of
cuda_src/scalar/complex.h in test_complex_scalar.py; here the same header runs inside the
kernels of both devices, compared with NumPy on non-contiguous views.
"""
import warnings

import numpy as np
import pytest

import tensor as T
from tensor import dtypes as dt
from tensor.optable import BINARY, UNARY

pytestmark = pytest.mark.usefixtures("device")

CX = [np.complex64, np.complex128]
RTOL = {np.complex64: 2e-5, np.complex128: 1e-12}


def _rand(shape, npd, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-scale, scale, shape) + 1j * rng.uniform(-scale, scale, shape)).astype(npd)


def _strided(a):
    """A non-contiguous view of a (every other column, transposed) and its NumPy twin."""
    big = np.repeat(a, 2, axis=-1)
    t = T.asarray(big)[..., ::2]
    return t.mT, big[..., ::2].swapaxes(-1, -2)


def _close(got, want, npd):
    got = got.numpy() if isinstance(got, T.Tensor) else np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=RTOL.get(npd, 1e-5), atol=RTOL.get(npd, 1e-5),
                               equal_nan=True)


# ---------------------------------------------------------------- dtypes

def test_promotion_matches_numpy():
    for a in dt.ALL:
        for b in dt.ALL:
            if a.np is not None and b.np is not None:
                assert dt.promote_types(a, b).np == np.promote_types(a.np, b.np), (a, b)
        if a.np is not None:
            for s in (True, 1, 1.0, 1j):
                assert T.result_type(a, s).np == np.result_type(np.zeros(1, a.np), s), (a, s)
    assert T.result_type(T.bfloat16, 1j) is T.complex64
    assert T.promote_types(T.bfloat16, T.complex128) is T.complex128
    assert T.can_cast(T.float32, T.complex64) and not T.can_cast(T.float64, T.complex64)
    assert not T.can_cast(T.complex64, T.float64) and T.can_cast(T.complex64, T.float64, "unsafe")


def test_inspection():
    assert T.isdtype(T.complex64, "complex floating") and T.isdtype(T.complex128, "numeric")
    assert not T.isdtype(T.complex64, "real floating")
    f = T.finfo(T.complex64)
    assert f.dtype is T.float32 and f.eps == np.finfo(np.complex64).eps and f.bits == 32
    assert T.finfo(T.complex128).dtype is T.float64
    info = T.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] is T.complex128
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert dt.dtype("complex64") is T.complex64 and dt.dtype(np.complex128) is T.complex128
    assert dt.dtype(complex) is T.complex128 and T.complex64.is_complex and T.complex64.itemsize == 8


# ---------------------------------------------------------------- making and reading

def test_conversions(device):
    x = T.asarray([1 + 2j, 3])
    assert x.dtype is T.complex128 and x.device.type == device
    assert x.tolist() == [1 + 2j, 3 + 0j] and complex(x[0]) == 1 + 2j and x[1].item() == 3 + 0j
    assert T.asarray([1, 2.5], dtype=T.complex64).tolist() == [1 + 0j, 2.5 + 0j]
    a = _rand((3, 4), np.complex64)
    np.testing.assert_array_equal(T.asarray(a).numpy(), a)
    np.testing.assert_array_equal(T.asarray(np.clongdouble(1 + 1j)).numpy(), np.complex128(1 + 1j))
    assert T.full((2,), 1 - 1j).tolist() == [1 - 1j] * 2 and T.full((2,), 1 - 1j).dtype is T.complex128
    assert T.ones(2, dtype=T.complex64).tolist() == [1 + 0j] * 2
    assert T.zeros((2, 2), dtype="complex128").sum().item() == 0
    np.testing.assert_allclose(T.linspace(0, 1 + 2j, 5).numpy(), np.linspace(0, 1 + 2j, 5))
    assert "j" in repr(x)
    with pytest.raises(TypeError, match="complex"):
        T.asarray([1 + 2j], dtype=T.float32)
    with pytest.raises(TypeError, match="complex"):
        T.linspace(0, 1j, 3, dtype=T.float64)


def test_from_numpy_shares_and_dlpack(device):
    a = _rand((4,), np.complex128)
    if device == "cpu":
        t = T.from_numpy(a)
        t[0] = 5j
        assert a[0] == 5j
        np.testing.assert_array_equal(np.from_dlpack(t), a)
    t = T.from_dlpack(a) if device == "cpu" else T.asarray(a)
    assert t.dtype is T.complex128
    np.testing.assert_array_equal(t.numpy(), a)


# ---------------------------------------------------------------- the op table's complex loops

_UN = [op for op in UNARY if "c" in op.kinds]
_BIN = [op for op in BINARY if "c" in op.kinds]


@pytest.mark.parametrize("npd", CX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", _UN, ids=lambda op: op.name)
def test_unary_ops(op, npd):
    a = _rand((3, 5), npd, seed=1)
    t, ref_in = _strided(a)
    with np.errstate(all="ignore"):
        want = op.ref(ref_in)
    got = getattr(T, op.name)(t)
    if op.name == "sign":   # NumPy 2's sign of complex is z / |z|, the standard's too
        want = (ref_in / np.abs(ref_in)).astype(npd)
    _close(got, want, npd)


@pytest.mark.parametrize("npd", CX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", _BIN, ids=lambda op: op.name)
def test_binary_ops(op, npd):
    a, b = _rand((3, 5), npd, seed=2), _rand((3,), npd, seed=3)
    t, ref_in = _strided(a)
    with np.errstate(all="ignore"):
        want = op.ref(ref_in, b)       # b broadcasts over the view
        got = getattr(T, op.name)(t, T.asarray(b))
        _close(got, want, npd)
        for s in (2, -1.5, 0.5 - 2j):   # Python scalars: weak, they take the tensor's dtype
            _close(getattr(T, op.name)(t, s), op.ref(ref_in, npd(s) if isinstance(s, complex) else s), npd)


def test_mixed_dtypes_and_scalars():
    f = T.asarray(np.array([1.0, -2.0], np.float32))
    assert (f * 1j).dtype is T.complex64 and (f * 1j).tolist() == [1j, -2j]
    assert (T.asarray([1, 2]) + 0.5j).dtype is T.complex128
    c = T.asarray(np.array([1 + 1j], np.complex64))
    assert (c + T.asarray([1.0], dtype=T.float64)).dtype is T.complex128
    assert (c + T.asarray([1], dtype=T.int8)).dtype is T.complex64
    w = T.asarray([1 + 1j, 2 - 1j])          # complex128: its scalars are 16 bytes wide
    assert (w * (2 - 3j)).tolist() == [(1 + 1j) * (2 - 3j), (2 - 1j) * (2 - 3j)]
    assert (w + 1.5).tolist() == [2.5 + 1j, 3.5 - 1j]
    assert T.where(T.asarray([True, False]), w, 7j).tolist() == [1 + 1j, 7j]
    w += 1j
    assert w.tolist() == [1 + 2j, 2 + 0j]
    assert (abs(w).dtype, T.angle(w).dtype) == (T.float64, T.float64)
    with pytest.raises(TypeError, match="complex"):
        T.floor(w)
    with pytest.raises(TypeError, match="complex"):
        T.maximum(w, w)
    with pytest.raises(TypeError, match="complex"):
        T.ones(2)[0:1].__setitem__(0, 1j)


@pytest.mark.parametrize("src", [d for d in dt.ALL if d.np is not None], ids=lambda d: d.name)
def test_casts_to_and_from_complex(src):
    rng = np.random.default_rng(4)
    a = rng.uniform(-50, 50, 7).astype(src.np)
    if src.kind == "c":   # real parts >= 0: a negative float into an unsigned dtype is undefined in C
        a = (rng.uniform(0, 50, 7) + 1j * rng.uniform(-50, 50, 7)).astype(src.np)
    x = T.asarray(a)[::-1]
    for dst in dt.ALL:
        if dst.np is None or src.kind != "c" and dst.kind != "c":
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # NumPy's ComplexWarning and overflow warnings
            want = a[::-1].astype(dst.np)
        got = x.astype(dst).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{src.name} -> {dst.name}")


# ---------------------------------------------------------------- parts, views

def test_parts_are_views():
    a = _rand((2, 3), np.complex64)
    x = T.asarray(a)
    re, im = x.real, x.imag
    assert re.dtype is T.float32 and T.shares_memory(re, x)
    np.testing.assert_array_equal(re.numpy(), a.real)
    np.testing.assert_array_equal(im.numpy(), a.imag)
    im[0] = 7.0                       # writes go through to the complex tensor
    assert (x[0].imag == 7.0).all().item()
    np.testing.assert_array_equal(T.real(x.T).numpy(), a.T.real)
    r = T.view_as_real(x)
    assert r.shape == (2, 3, 2) and T.shares_memory(r, x)
    assert T.view_as_complex(r).tolist() == x.tolist()
    np.testing.assert_array_equal(T.conj(x).numpy(), np.conj(x.numpy()))
    with pytest.raises(ValueError, match="view_as_complex"):
        T.view_as_complex(T.ones((3, 3)))
    with pytest.raises(TypeError, match="view_as_real"):
        T.view_as_real(T.ones(3))
    # a real tensor's attributes, as NumPy's: .real is the tensor (writes reach it), .imag
    # read-only zeros (a write could not); T.real(x) stays the standard's copy
    y = T.arange(3.0)
    y.real[0] = 9.0
    y.real[...] += 1.0
    assert y.tolist() == [10.0, 2.0, 3.0] and T.real(y) is not y
    assert y.imag.tolist() == [0.0, 0.0, 0.0] and not y.imag.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        y.imag[0] = 5.0


# ---------------------------------------------------------------- reductions, products

@pytest.mark.parametrize("npd", CX, ids=lambda d: np.dtype(d).name)
def test_reductions(npd):
    a = _rand((4, 3, 5), npd, seed=5, scale=1.2)
    t, ref = _strided(a)
    for axis in (None, 0, (1, 2), -1):
        _close(T.sum(t, axis=axis), np.sum(ref, axis=axis), npd)
        _close(T.prod(t, axis=axis), np.prod(ref, axis=axis), npd)
        _close(T.mean(t, axis=axis), np.mean(ref, axis=axis), npd)
        _close(T.var(t, axis=axis), np.var(ref, axis=axis), npd)
        _close(T.std(t, axis=axis, keepdims=True), np.std(ref, axis=axis, keepdims=True), npd)
        np.testing.assert_array_equal(T.any(t, axis=axis).numpy(), np.any(ref, axis=axis))
    for axis in (0, 1, 2):
        _close(T.cumsum(t, axis=axis), np.cumsum(ref, axis=axis), npd)
        _close(T.cumprod(t, axis=axis), np.cumprod(ref, axis=axis), npd)
    e = T.zeros((0, 3), dtype=npd)
    assert e.sum(0).tolist() == [0j] * 3 and e.prod(0).tolist() == [1 + 0j] * 3
    for bad in (T.max, T.argmin):
        with pytest.raises(TypeError, match="complex"):
            bad(t)


@pytest.mark.parametrize("npd", CX, ids=lambda d: np.dtype(d).name)
def test_matmul_and_vecdot(npd):
    a, b = _rand((2, 4, 3), npd, seed=6), _rand((3, 5), npd, seed=7)
    _close(T.asarray(a) @ T.asarray(b), a @ b, npd)
    _close(T.asarray(a).mT @ T.asarray(a), a.swapaxes(-1, -2) @ a, npd)
    _close(T.asarray(b[:, 0]) @ T.asarray(b), b[:, 0] @ b, npd)
    _close(T.asarray(a) @ T.asarray(b.real.copy()), a @ b.real, npd)
    _close(T.vecdot(T.asarray(a), T.asarray(a)), np.vecdot(a, a), npd)
    _close(T.tensordot(T.asarray(a), T.asarray(b), 1), np.tensordot(a, b, 1), npd)


# ---------------------------------------------------------------- moving elements

@pytest.mark.parametrize("npd", CX, ids=lambda d: np.dtype(d).name)
def test_indexing_and_manipulation(npd):
    a = _rand((4, 5), npd, seed=8)
    x = T.asarray(a)
    idx = np.array([3, 0, 0, 2])
    np.testing.assert_array_equal(x[T.asarray(idx)].numpy(), a[idx])
    np.testing.assert_array_equal(x[:, ::-2][T.asarray(idx)].numpy(), a[:, ::-2][idx])
    m = a.real > 0
    np.testing.assert_array_equal(x[T.asarray(m)].numpy(), a[m])
    np.testing.assert_array_equal(T.take(x, T.asarray([7, 1]), axis=None).numpy(), np.take(a, [7, 1]))
    np.testing.assert_array_equal(T.concat([x, x.T.T[::-1]]).numpy(), np.concatenate([a, a[::-1]]))
    np.testing.assert_array_equal(T.roll(T.flip(x, 0), 2, 1).numpy(), np.roll(np.flip(a, 0), 2, 1))
    y, b = T.asarray(a.copy()), a.copy()
    y[T.asarray(idx[:2])] = 1 - 1j
    b[idx[:2]] = 1 - 1j
    y[T.asarray(m)] = T.asarray(a)[T.asarray(m)] * 2
    b[m] = a[m] * 2
    np.testing.assert_array_equal(y.numpy(), b)
    z, c = T.zeros((3, 5), dtype=npd), np.zeros((3, 5), npd)
    z.index_add_(0, T.asarray([0, 2, 0, 1]), x)
    np.add.at(c, [0, 2, 0, 1], a)
    _close(z, c, npd)


def test_sorting_is_lexicographic():
    a = np.array([3 + 1j, 1 + 2j, 1 - 1j, np.nan, 2 + 0j, 1 + 2j, -0.5j], np.complex64)
    x = T.asarray(a)
    np.testing.assert_array_equal(T.sort(x).numpy(), np.sort(a))
    np.testing.assert_array_equal(T.argsort(x).numpy(), np.argsort(a, stable=True))
    np.testing.assert_array_equal(T.unique_values(x).numpy(), np.unique(a))
    np.testing.assert_array_equal(T.sort(x, descending=True).numpy()[1:], np.sort(a)[::-1][1:])


def test_round_with_decimals_rounds_the_parts():
    """NumPy rounds a complex number's parts one by one: inf + 0j stays inf + 0j (a complex
    product by 10**decimals had made its imaginary part inf * 0 = NaN)."""
    a = np.array([[np.inf + 0j, 1.25 + 2.35j], [np.nan + 1j, -0.15 - 0.25j]])
    for dtype in (np.complex64, np.complex128):
        for d in (1, -1, 2):
            got = T.round(T.asarray(a.astype(dtype)).T, d)
            assert got.dtype.name == np.dtype(dtype).name
            np.testing.assert_array_equal(np.asarray(got.to("cpu")), np.round(a.astype(dtype).T, d))
