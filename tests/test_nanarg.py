"""nanargmax / nanargmin in one pass (tensor/redtable.py INTERNAL; reduce_ops.h SX_NANARGMAXF,
reduce.h's arg template with its NaN-skipping vector fold and BETTER##_FIX, reduce.cuh's
sx_nanarg_op), complex nanmax / nanmin / nanargmax / nanargmin in NumPy's order, and out= of
the four: against NumPy on every dtype, odd shapes, views (transposed, negative-step, stepped,
broadcast), NaN placements (none, first, last, all, scattered), ties, +-0.0, +-inf; the short,
vector-fold, multi-chunk and strided paths; NumPy's errors (All-NaN slice, empty, out=).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensor as T
from tensor.redtable import INTERNAL, KERNELS, RED, REDUCTIONS

pytestmark = pytest.mark.usefixtures("device")

ARGS = ("nanargmax", "nanargmin")
FLOATS = ("float16", "float32", "float64")


def _data(shape, dtype, place: str, rng) -> np.ndarray:
    """Values with ties, +-0.0 and +-inf; NaNs: none, first / last of each last-axis row, all,
    or scattered (a short row may be all NaN: _check expects NumPy's ValueError there)."""
    a = np.array(rng.integers(-6, 7, shape) / 4.0, dtype)
    if a.size:
        for v in (np.inf, -np.inf, -0.0):
            a.flat[rng.integers(0, a.size, 2)] = v
    if place == "first" and a.ndim:
        a[..., 0] = np.nan
    elif place == "last" and a.ndim:
        a[..., -1] = np.nan
    elif place == "all":
        a[...] = np.nan
    elif place == "scattered":
        a[rng.random(shape) < 0.4] = np.nan
    return a


def _views(a: np.ndarray):
    yield a, lambda t: t
    if a.ndim >= 2:
        yield a.T, lambda t: t.T
        yield a[::2, ::-1], lambda t: t[::2, ::-1]
    if a.ndim >= 1:
        yield a[::-1], lambda t: t[::-1]
        yield np.broadcast_to(a[None], (2,) + a.shape), lambda t: T.broadcast_to(t[None], (2,) + a.shape)


def _check(op, a: np.ndarray, x: T.Tensor, **kw):
    """Our op on x against NumPy's on a: the same indices, or both ValueError (all-NaN)."""
    try:
        want = getattr(np, op)(a, **kw)
    except ValueError:
        with pytest.raises(ValueError, match=f"{op}: All-NaN slice encountered"):
            getattr(T, op)(x, **kw)
        return
    got = getattr(T, op)(x, **kw)
    assert got.dtype == T.int64 and got.shape == np.shape(want), (op, kw, got.shape)
    np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{op} {kw} {a.dtype} {a.shape}")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("place", ["none", "first", "last", "all", "scattered"])
@pytest.mark.parametrize("op", ARGS)
def test_matches_numpy_on_views_axes_and_placements(device, op, place, dtype):
    rng = np.random.default_rng(0)
    shapes = [(), (1,), (7,), (17,), (5, 33), (33, 5), (3, 4, 5)]
    for shape in shapes if device == "cpu" else [(), (7,), (5, 33)]:
        a = _data(shape, dtype, place, rng)
        for v, f in _views(a):
            x = f(T.asarray(a))
            for axis in [None] + list(range(-v.ndim, v.ndim)):
                _check(op, v, x, axis=axis)
                _check(op, v, x, axis=axis, keepdims=True)


@pytest.mark.parametrize("op", ARGS)
def test_long_rows_every_path(device, op):
    """Rows past the vector fold's 8 groups, several 4096-element chunks, a tail: ties, +-0.0,
    rows of -inf and NaN only, NaN first, an all-NaN row; along the rows and the columns."""
    rng = np.random.default_rng(1)
    n = 9001 if device == "cpu" else 1500
    for dtype in FLOATS:
        a = np.array(rng.integers(-3, 4, (6, n)), dtype)
        a[rng.random(a.shape) < 0.3] = np.nan
        a[1] = np.where(rng.random(n) < 0.5, np.nan, -np.inf if op == "nanargmax" else np.inf)
        a[2] = rng.choice([-0.0, 0.0, np.nan], n)
        a[3, : n // 2] = np.nan
        a[4] = np.nan
        a[4, -1] = 1.0
        x = T.asarray(a)
        for axis in (None, 0, 1):
            _check(op, a, x, axis=axis)
        _check(op, a[:5], x[:5], axis=1)
        a[5] = np.nan
        _check(op, a, T.asarray(a), axis=1)   # one all-NaN row: ValueError
        _check(op, a.T[::-1], T.asarray(a).T[::-1], axis=0)


@pytest.mark.parametrize("op", ARGS)
def test_numpy_edge_answers(device, op):
    far = -np.inf if op == "nanargmax" else np.inf
    f = getattr(T, op)
    for row, want in [([np.nan, far], 0), ([np.nan, far, far], 0), ([far, np.nan], 0),
                      ([np.nan, np.nan, 2.0], 2), ([-0.0, 0.0], 0), ([0.0, -0.0], 0),
                      ([np.nan, 1.0, 1.0], 1), ([far, far, -np.sign(far) * 5.0], 2)]:
        for dtype in FLOATS:
            a = np.array(row, dtype)
            assert getattr(np, op)(a) == want, (row, dtype)
            assert f(T.asarray(a)).item() == want, (op, row, dtype)
    with pytest.raises(ValueError, match=f"{op}: All-NaN slice encountered"):
        f(T.asarray(np.full((2, 3), np.nan, np.float32)), axis=0)
    with pytest.raises(ValueError, match=f"{op}: attempt to get"):
        f(T.zeros((2, 0)), axis=1)
    with pytest.raises(ValueError, match=f"{op}: attempt to get"):
        f(T.zeros((0,)))
    assert f(T.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(T.AxisError, match=op):
        f(T.zeros((2, 3)), axis=2)


@pytest.mark.parametrize("op", ARGS)
def test_bfloat16_and_integers(device, op):
    rng = np.random.default_rng(2)
    a = np.array(rng.integers(-5, 6, (4, 40)), np.float32)
    a[rng.random(a.shape) < 0.3] = np.nan
    got = getattr(T, op)(T.asarray(a).astype(T.bfloat16), axis=1)   # values exact in bfloat16
    np.testing.assert_array_equal(got.numpy(), getattr(np, op)(a, axis=1))
    for dtype in ("int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "bool"):
        b = (rng.integers(0, 2, (5, 37)) if dtype == "bool" else rng.integers(0, 100, (5, 37))).astype(dtype)
        for axis in (None, 0, 1):
            _check(op, b, T.asarray(b), axis=axis)


@pytest.mark.parametrize("op", ARGS)
def test_out(device, op):
    a = np.array([[1.0, np.nan, 3.0], [np.nan, -2.0, -2.0]], np.float32)
    x, f = T.asarray(a), getattr(T, op)
    want = getattr(np, op)(a, axis=1)
    for dtype in (T.int64, T.int32):
        o = T.zeros(2, dtype=dtype)
        assert f(x, axis=1, out=o) is o
        np.testing.assert_array_equal(o.numpy(), want)
    o = T.zeros((2, 1), dtype=T.int64)
    f(x, axis=1, keepdims=True, out=o)
    np.testing.assert_array_equal(o.numpy(), want[:, None])
    o = T.zeros((), dtype=T.int64)
    assert f(x, out=o).item() == getattr(np, op)(a)
    big = T.zeros((2, 4), dtype=T.int64)   # a strided out
    f(x, axis=1, out=big[:, 1])
    np.testing.assert_array_equal(big.numpy()[:, 1], want)
    with pytest.raises(ValueError, match=f"{op}: output of shape \\(3,\\)"):
        f(x, axis=1, out=T.zeros(3, dtype=T.int64))
    with pytest.raises(ValueError, match=op):
        f(x, axis=1, keepdims=True, out=T.zeros(2, dtype=T.int64))
    with pytest.raises(TypeError, match=f"{op}: out= must have an integer dtype, got float64"):
        f(x, axis=1, out=T.zeros(2, dtype=T.float64))
    with pytest.raises(TypeError, match=op):
        f(x, axis=1, out=np.zeros(2, np.int64))
    o = T.full(3, 7, dtype=T.int64)
    with pytest.raises(ValueError, match="All-NaN"):
        f(T.asarray(np.full((2, 3), np.nan)), axis=0, out=o)


def _cdata(shape, rng) -> np.ndarray:
    """Complex values with real-part ties, NaN in either part, infinities and signed zeros."""
    re = rng.integers(-2, 3, shape) / 2.0
    im = rng.integers(-2, 3, shape) / 2.0
    a = (re + 1j * im).astype(np.complex128)
    if a.size:
        a.flat[rng.integers(0, a.size, 3)] = complex(np.nan, 1.0)
        a.flat[rng.integers(0, a.size, 3)] = complex(1.0, np.nan)
        a.flat[rng.integers(0, a.size, 2)] = complex(-np.inf, -np.inf)
        a.flat[rng.integers(0, a.size, 2)] = complex(-0.0, 0.0)
    return a


def _np_quiet(op, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, op)(a, **kw)


@pytest.mark.parametrize("op", ["nanmax", "nanmin"])
def test_complex_extremes_as_numpy(device, op):
    rng = np.random.default_rng(3)
    f = getattr(T, op)
    for shape in [(1,), (9,), (4, 7), (3, 4, 5)] if device == "cpu" else [(9,), (4, 7)]:
        for dtype in ("complex64", "complex128"):
            a = _cdata(shape, rng).astype(dtype)
            a[(0,) * (a.ndim - 1)] = complex(np.nan, 2.0)   # an all-NaN slice (along the last axis)
            if a.shape[-1] > 1:
                a[(0,) * (a.ndim - 1) + (1,)] = complex(3.0, np.nan)
            for v, g in _views(a):
                axes = [None, -1] + ([(0, v.ndim - 1)] if v.ndim > 1 else [])
                for axis in axes:
                    for keep in (False, True):
                        want = _np_quiet(op, v, axis=axis, keepdims=keep)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", RuntimeWarning)
                            got = f(g(T.asarray(a)), axis=axis, keepdims=keep)
                        assert got.dtype == getattr(T, dtype) and got.shape == np.shape(want)
                        w, r = np.asarray(want), got.numpy()
                        np.testing.assert_array_equal(np.isnan(r), np.isnan(w))
                        ok = ~np.isnan(w)
                        np.testing.assert_array_equal(r[ok], w[ok])
                        # the sign bits of the picked element's zeros, as NumPy's (the first tie)
                        np.testing.assert_array_equal(np.signbit(r.real[ok]), np.signbit(w.real[ok]))
                        np.testing.assert_array_equal(np.signbit(r.imag[ok]), np.signbit(w.imag[ok]))
    c = T.asarray(np.array([[complex(np.nan, 1), complex(2, np.nan)], [1 + 1j, 1 + 2j]]))
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        r = f(c, axis=1)
    assert np.isnan(r.numpy()[0]) and r.numpy()[1] == _np_quiet(op, c.numpy(), axis=1)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(c, axis=0)


@pytest.mark.parametrize("op", ARGS)
def test_complex_args_as_numpy(device, op):
    rng = np.random.default_rng(4)
    for dtype in ("complex64", "complex128"):
        a = _cdata((4, 9), rng).astype(dtype)
        a[1] = [complex(np.nan, 0), complex(-np.inf, 0), complex(-np.inf, -1)] * 3
        for v, g in _views(a):
            for axis in (None, 0, -1):
                _check(op, v, g(T.asarray(a)), axis=axis)
        a[2] = complex(np.nan, np.nan)
        _check(op, a, T.asarray(a), axis=1)   # ValueError


@pytest.mark.parametrize("op", ["nanmax", "nanmin"])
def test_extreme_out(device, op):
    a = np.array([[1.0, np.nan, 3.0], [np.nan, -2.0, 5.0]], np.float32)
    x, f = T.asarray(a), getattr(T, op)
    want = getattr(np, op)(a, axis=0)
    for dtype in (T.float32, T.float64):
        o = T.zeros(3, dtype=dtype)
        assert f(x, axis=0, out=o) is o
        np.testing.assert_array_equal(o.numpy(), want.astype(o.numpy().dtype))
    o = T.zeros((1, 3))
    f(x, axis=0, keepdims=True, out=o)
    np.testing.assert_array_equal(o.numpy(), want[None])
    o = T.zeros(())
    assert f(x, out=o).item() == getattr(np, op)(a)
    big = T.zeros((3, 2))   # a transposed, strided out
    f(x, axis=0, out=big[:, 0])
    np.testing.assert_array_equal(big.numpy()[:, 0], want)
    o = T.zeros(2, dtype=T.int32)   # integers into a wider integer out
    f(T.asarray(np.array([[1, 5], [3, 2]], np.int16)), axis=1, out=o)
    np.testing.assert_array_equal(o.numpy(), getattr(np, op)(np.array([[1, 5], [3, 2]]), axis=1))
    with pytest.raises(TypeError, match=f"{op}: cannot cast the result dtype float32 to the output "
                                        "dtype int64"):
        f(x, axis=0, out=T.zeros(3, dtype=T.int64))
    with pytest.raises(TypeError, match=f"{op}: cannot cast the result dtype complex128"):
        f(T.asarray(np.array([1 + 1j, 2 + 0j])), out=T.zeros(()))
    with pytest.raises(ValueError, match=f"{op}: output of shape \\(2,\\) cannot hold the result of "
                                         "shape \\(3,\\)"):
        f(x, axis=0, out=T.zeros(2))
    with pytest.raises(ValueError, match=op):
        f(x, axis=0, out=T.zeros((1, 3)))
    with pytest.raises(TypeError, match=op):
        f(x, axis=0, out=[0.0, 0.0, 0.0])
    o = T.zeros(2)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        f(T.asarray(np.array([[np.nan, np.nan], [np.nan, 1.0]])), axis=1, out=o)
    assert np.isnan(o.numpy()[0]) and o.numpy()[1] == 1.0


def test_table_holds_the_arg_folds():
    """The kernel-only entries: nanmax / nanmin folds, nanargmax / nanargmin arg forms, none
    public nor differentiable, all in the kernels both devices build."""
    names = [r.name for r in INTERNAL]
    assert names == ["nanmax", "nanmin", "nanargmax", "nanargmin"] and KERNELS == REDUCTIONS + INTERNAL
    assert not set(names) & {r.name for r in REDUCTIONS}
    for r in INTERNAL:
        assert RED[r.name] is r and not r.grad
    for n in ARGS:
        r = RED[n]
        assert r.form == "arg" and r.out_dtype(T.float16).name == "int64"
        assert r.macro(T.float32) == f"SX_NAN{n[3:].upper()}F" and r.macro(T.int8) == f"SX_{n[3:].upper()}I"
        assert r.functor(T.float32) == f"sx_nanarg_op<sx_f32, {'true' if n == 'nanargmax' else 'false'}>"


@pytest.mark.filterwarnings("ignore:tensor.compile")
@pytest.mark.parametrize("op", ARGS)
def test_all_nan_slice_raises_in_a_compiled_step(device, op):
    """The all-NaN check reads on the host, which a capture cannot: the compiled step stays
    eager and raises as NumPy, never hands back -1 (an index that would read the last element)."""
    f = T.compile(lambda x: getattr(T, op)(x, axis=1) + 0)
    ok = T.asarray(np.array([[1.0, np.nan, 3.0], [2.0, 0.5, np.nan]], np.float32))
    bad = T.asarray(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], np.float32))
    for _ in range(3):
        np.testing.assert_array_equal(f(ok).numpy(), getattr(np, op)(ok.numpy(), axis=1))
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            f(bad)
