"""nanmax / nanmin by the kernel-only NaN-skipping folds (tensor/redtable.py INTERNAL; reduce.h's
SX_NANMAXF and vector folds, reduce.cuh's sx_nanext_op): NumPy's values bit for bit on every
dtype, odd shapes, views (transposed, negative-step, stepped, broadcast), NaN placements (none,
first, last, all, scattered) over the short-row, vector-fold, multi-chunk and column paths;
NumPy's "All-NaN slice encountered" RuntimeWarning exactly when a slice is all NaN (pointing
at the caller); signed zeros as NumPy's two-element answers; the gradient path unchanged.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensor as T
from tensor import dtypes as dt
from tensor.redtable import INTERNAL, KERNELS, RED, REDUCTIONS

pytestmark = pytest.mark.usefixtures("device")

OPS = ("nanmax", "nanmin")
FLOATS = ("float16", "float32", "float64")


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


def _same(got: T.Tensor, want: np.ndarray, what: str = "") -> None:
    """Equal bit for bit (NaN: any NaN; the sign of a zero only where NumPy's is fixed by the
    order, which the callers check themselves)."""
    g = got.numpy()
    want = np.asarray(want)
    assert g.dtype == want.dtype and g.shape == want.shape, (what, g.dtype, g.shape, want.shape)
    nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
    np.testing.assert_array_equal(np.isnan(g) if g.dtype.kind == "f" else nan, nan, err_msg=what)
    keep = ~nan & (want != 0)
    np.testing.assert_array_equal(_bits(g[keep]), _bits(want[keep]), err_msg=what)
    np.testing.assert_array_equal(g[want == 0], 0, err_msg=what)


def _np(op, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(np, op)(a, **kw), a.dtype)


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*a, **kw)


def _data(shape, dtype: str, place: str, rng) -> np.ndarray:
    """Values with ties and +-0.0, +-inf, and NaNs placed: none, first / last of every last-axis
    row, all, or scattered (an all-NaN row among them)."""
    a = np.array(rng.integers(-40, 41, shape) / 8.0, dtype)
    if a.size:
        a.flat[rng.integers(0, a.size, 3)] = np.inf
        a.flat[rng.integers(0, a.size, 3)] = -np.inf
        a.flat[rng.integers(0, a.size, 3)] = -0.0
    if place == "first" and a.ndim:
        a[..., 0] = np.nan
    elif place == "last" and a.ndim:
        a[..., -1] = np.nan
    elif place == "all":
        a[...] = np.nan
    elif place == "scattered":
        a[rng.random(shape) < 0.3] = np.nan
        if a.ndim:
            a[(0,) * (a.ndim - 1)] = np.nan
    return a


def _views(a: np.ndarray):
    """(name, NumPy view, the same view of a tensor)."""
    yield "plain", a, lambda t: t
    if a.ndim >= 2:
        yield "transposed", a.T, lambda t: t.T
        yield "stepped", a[::2, ::-1], lambda t: t[::2, ::-1]
    if a.ndim >= 1:
        yield "negative", a[::-1], lambda t: t[::-1]
        yield "broadcast", np.broadcast_to(a[None], (3,) + a.shape), \
            lambda t: T.broadcast_to(t[None], (3,) + tuple(t.shape))


SHAPES = [(), (1,), (2,), (7,), (17,), (5, 33), (33, 5), (3, 4, 5), (2, 300)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("place", ["none", "first", "last", "all", "scattered"])
@pytest.mark.parametrize("op", OPS)
def test_nan_folds_match_numpy_on_views_and_axes(device, op, place, dtype):
    rng = np.random.default_rng(len(op) * 7 + len(place) * 3 + len(dtype))
    for shape in SHAPES if device == "cpu" else [(), (7,), (5, 33), (3, 4, 5)]:
        a = _data(shape, dtype, place, rng)
        for vname, v, view in _views(a):
            t = view(T.asarray(a))
            axes = [None] + list(range(-v.ndim, v.ndim)) + ([(0, v.ndim - 1)] if v.ndim >= 2 else [])
            for ax in axes:
                if ax is not None and any(v.shape[i] == 0 for i in np.atleast_1d(ax)):
                    continue
                for keep in (False, True):
                    what = f"{op} {dtype} {shape} {vname} axis={ax} keepdims={keep}"
                    ref = _np(op, v, axis=ax, keepdims=keep)
                    _same(_quiet(getattr(T, op), t, axis=ax, keepdims=keep), ref, what)


@pytest.mark.parametrize("op", OPS)
def test_long_rows_every_path(device, op):
    """Rows long enough for the vector fold's four parts (>= 8 groups of 16), several chunks of
    4096, a tail past the last group; a NaN first, last, alone among numbers, or everywhere; the
    column path (the kept axis contiguous) and one thread against two."""
    rng = np.random.default_rng(11)
    n = 9000 if device == "cpu" else 1500
    for dtype in ("float32", "float64"):
        base = rng.standard_normal(n).astype(dtype)
        cases = {"none": base.copy(), "first": base.copy(), "last": base.copy(),
                 "one number": np.full(n, np.nan, dtype), "all": np.full(n, np.nan, dtype)}
        cases["first"][0] = np.nan
        cases["last"][-1] = np.nan
        cases["one number"][n - 37] = -3.5
        for name, a in cases.items():
            for x, v in ((T.asarray(a), a), (T.asarray(a)[1::3], a[1::3]),
                         (T.asarray(a)[::-1], a[::-1])):
                _same(_quiet(getattr(T, op), x), _np(op, v), f"{op} {dtype} {name}")
        m = rng.standard_normal((n // 16, 16)).astype(dtype)
        m[rng.random(m.shape) < 0.5] = np.nan
        m[:, 3] = np.nan
        tm = T.asarray(m)
        for ax in (0, 1):
            _same(_quiet(getattr(T, op), tm, axis=ax), _np(op, m, axis=ax), f"{op} {dtype} axis={ax}")
    if device == "cpu":
        big = rng.standard_normal((2, 200_000)).astype(np.float32)
        big[0, ::3] = np.nan
        t, old = T.asarray(big), T.get_num_threads()
        try:
            T.set_num_threads(1)
            one = getattr(T, op)(t, axis=1).numpy()
            T.set_num_threads(2)
            two = getattr(T, op)(t, axis=1).numpy()
        finally:
            T.set_num_threads(old)
        np.testing.assert_array_equal(_bits(one), _bits(two))
        np.testing.assert_array_equal(one, _np(op, big, axis=1))


@pytest.mark.parametrize("op", OPS)
def test_every_dtype(device, op):
    """Integers and bools fold as max / min (NumPy's nanmax of them); bfloat16 as its float32
    values (NumPy has none); the result keeps the input's dtype."""
    rng = np.random.default_rng(5)
    a = rng.integers(-9, 10, (4, 21))
    for d in dt.REAL:
        if d is dt.bfloat16:
            f = (a / 4.0).astype(np.float32)
            f[1] = np.nan
            f[2, ::2] = np.nan
            got = _quiet(getattr(T, op), T.asarray(f).astype(T.bfloat16), axis=1)
            assert got.dtype is T.bfloat16
            _same(got.astype(T.float32), _np(op, f, axis=1), "bfloat16")
            continue
        v = (a > 0) if d.kind == "b" else (np.abs(a) if d.kind == "u" else a).astype(d.np)
        for ax in (None, 0, 1):
            got = getattr(T, op)(T.asarray(v), axis=ax)
            assert got.dtype is d
            _same(got, _np(op, v, axis=ax), f"{op} {d.name} axis={ax}")


@pytest.mark.parametrize("op", OPS)
def test_signed_zeros_as_numpy_two_element_rows(device, op):
    """NumPy's nanmax / nanmin (fmax.reduce / fmin.reduce) keep the first of -0.0 and 0.0:
    np.nanmax([-0.0, 0.0]) is -0.0 and np.nanmax([0.0, -0.0]) is 0.0 (longer rows: NumPy's
    own answer depends on its SIMD layout, ours on the fixed lane tree). A NaN after them
    changes nothing."""
    for dtype in FLOATS:
        for row in ([-0.0, 0.0], [0.0, -0.0], [-0.0, 0.0, np.nan], [0.0, -0.0, np.nan]):
            a = np.array(row, dtype)
            want = _np(op, a)
            got = getattr(T, op)(T.asarray(a)).numpy()
            assert np.signbit(got) == np.signbit(want), (op, dtype, row)
            rows = np.array([row[:2], row[1::-1]], dtype)
            got = getattr(T, op)(T.asarray(rows), axis=1).numpy()
            np.testing.assert_array_equal(np.signbit(got), np.signbit(_np(op, rows, axis=1)))


@pytest.mark.parametrize("op", OPS)
def test_all_nan_slices_warn_exactly_then(device, op):
    f = getattr(T, op)
    a = np.array([[1.0, np.nan], [np.nan, np.nan], [np.nan, -2.0]], np.float32)
    x = T.asarray(a)
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered") as rec:
        r = f(x, axis=1)
    assert len(rec) == 1 and rec[0].filename == __file__   # the caller's line, as NumPy's
    np.testing.assert_array_equal(r.numpy(), _np(op, a, axis=1))
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        f(T.asarray(np.full(5, np.nan, np.float64)))
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        x.nanmax(dim=1) if op == "nanmax" else x.nanmin(dim=1)
    with pytest.warns(RuntimeWarning, match="All-NaN"):   # the gradient path too
        f(T.asarray(a).requires_grad_(True), axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no warning: every slice holds a number
        f(x, axis=0)
        f(x)
        f(T.asarray(a[[0, 2]]), axis=1)
        f(T.asarray(np.array([[1, 2], [3, 4]], np.int32)), axis=1)
        f(T.asarray(np.array([np.inf, -np.inf], np.float16)))
        f(T.asarray(np.zeros((0, 3), np.float32)), axis=1)


@pytest.mark.parametrize("op", OPS)
def test_errors_name_the_op(device, op):
    f = getattr(T, op)
    with pytest.raises(ValueError, match=f"{op}: zero-size reduction over axes \\(0,\\) of shape"):
        f(T.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match=op):
        f(T.zeros((2, 0)))
    assert f(T.zeros((0, 3)), axis=1).shape == (0,)
    assert f(T.asarray(np.array([1 + 2j, np.nan]))).item() == 1 + 2j   # complex: NumPy's order
    with pytest.raises(T.AxisError, match=op):
        f(T.zeros((2, 3)), axis=2)
    with pytest.raises(TypeError, match=f"{op}: give axis or dim"):
        f(T.zeros((2, 3)), axis=0, dim=0)


@pytest.mark.parametrize("op", OPS)
def test_gradient_path_gives_the_fold_values(device, op):
    """A tensor that needs a gradient takes the recorded where + max path: the same values
    (bits where nonzero) and the gradient on the first / every extreme position of the rule."""
    rng = np.random.default_rng(2)
    a = _data((6, 40), "float64", "scattered", rng)
    fast = _quiet(getattr(T, op), T.asarray(a), axis=1)
    x = T.asarray(a).requires_grad_(True)
    slow = _quiet(getattr(T, op), x, axis=1)
    _same(slow.detach(), fast.numpy())
    slow.sum().backward()
    g = x.grad.numpy()
    assert np.all(g[np.isnan(a)] == 0) and np.all(g[1:].sum(axis=1)[np.isfinite(fast.numpy()[1:])] == 1)


def test_table_keeps_the_kernel_only_folds_out_of_the_public_entries():
    names = [r.name for r in INTERNAL]
    assert names == ["nanmax", "nanmin", "nanargmax", "nanargmin"] and KERNELS == REDUCTIONS + INTERNAL
    assert all(RED[n] is r for n, r in zip(names, INTERNAL))
    assert not set(names) & {r.name for r in REDUCTIONS}
    for r in INTERNAL:
        assert r.form == ("arg" if r.name.startswith("nanarg") else "reduce") and not r.grad
        assert r.macro(dt.float16).startswith("SX_NAN")
        if r.form == "reduce":
            assert r.init_c(dt.float32) == f"{r.identity}_f32" and r.identity in ("NLO", "NHI")
            assert r.out_dtype(dt.int8) is dt.int8 and r.macro(dt.int32) in ("SX_MAXI", "SX_MINI")
        else:   # nanargmax / nanargmin: tensor/nanfuncs.py sends integers to argmax / argmin
            assert r.out_dtype(dt.int8) is dt.int64 and r.macro(dt.int32) in ("SX_ARGMAXI", "SX_ARGMINI")


@pytest.mark.parametrize("op", OPS)
def test_fold_selects_what_max_over_the_filled_input_selects(device, op):
    """The NaN-skipping fold (vector fold, its four parts, chunks) picks the element that max /
    min pick over x with NaN replaced by -inf / inf (the gradient path): the same bits, the sign
    of a zero included, wherever a slice holds a number."""
    rng = np.random.default_rng(8)
    n = 20_000 if device == "cpu" else 2_000
    for dtype in ("float32", "float64", "float16"):
        a = rng.choice(np.array([-0.0, 0.0, -1.0, np.nan], dtype), size=(3, n), p=[.3, .3, .1, .3])
        a[1, : n // 2] = np.nan
        a[2] = np.where(rng.random(n) < 0.5, -0.0, 0.0)
        fill = -np.inf if op == "nanmax" else np.inf
        for v in (a, a[:, ::-1], a[:, 5:]):
            x = T.asarray(np.ascontiguousarray(v))
            got = getattr(T, op)(x, axis=1).numpy()
            ref = getattr(T, op[3:])(T.asarray(np.where(np.isnan(v), fill, v).astype(dtype)), axis=1)
            np.testing.assert_array_equal(_bits(got), _bits(ref.numpy()), err_msg=f"{op} {dtype}")


def test_a_compiled_step_captures_and_replays_the_fold(device):
    """Under tensor.compile the capture reads nothing on the host (a host read makes it give up
    with a warning): the NaN check is skipped there, and the replays give the eager values."""
    a = np.array([[1.0, np.nan, 3.0], [np.nan, -2.0, np.nan]], np.float32)
    f = T.compile(lambda x: T.nanmax(x, axis=1) * 2.0 + T.nanmin(x))
    x = T.asarray(a)
    want = _np("nanmax", a, axis=1) * 2.0 + np.nanmin(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # neither NumPy's warning (no all-NaN slice) nor a give-up
        for _ in range(4):   # eager, captured, replayed
            np.testing.assert_array_equal(f(x).numpy(), want)


@pytest.mark.parametrize("d", [dt.bool_, dt.uint8, dt.int8, dt.float32], ids=lambda d: d.name)
def test_any_all_of_bytes_along_every_axis(device, d):
    """any / all keep a byte accumulator for 1-byte inputs (redtable.acc_c): the row-block
    ("outer") path, the lane path and the vector fold of bools, against NumPy, with a single
    True / False placed first, last and in the middle (a column wider than one block too)."""
    rng = np.random.default_rng(4)
    shapes = [(300, 40), (3, 17000), (1000, 3)] if device == "cpu" else [(40, 33), (5, 300)]
    for shape in shapes:
        for fill, spot in ((False, True), (True, False)):
            a = np.full(shape, fill)
            for i, j in ((0, 0), (-1, -1), (shape[0] // 2, shape[1] // 2)):
                a[i, j] = spot
            a[1] = rng.random(shape[1]) < 0.5
            v = a.astype(d.np)
            t = T.asarray(v)
            for x, w in ((t, v), (t.T, v.T), (t[::-1], v[::-1])):
                for ax in (None, 0, 1):
                    for op in ("any", "all"):
                        got = getattr(T, op)(x, axis=ax).numpy()
                        np.testing.assert_array_equal(got, getattr(np, op)(w, axis=ax), f"{op} {shape}")
