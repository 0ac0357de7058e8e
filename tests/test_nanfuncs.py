"""NaN-skipping reductions and scans, running extremes, cov & co (tensor/nanfuncs.py), and the
two-axis FFTs (tensor/fft.py).

Against NumPy on both devices (the CUDA cases run on the emulator without a GPU): nansum,
nanprod, nanmean, nanvar, nanstd, nanmax, nanmin, nanargmax, nanargmin, nancumsum, nancumprod on
random shapes (0-d and empty included), axes (None, negative, tuples), keepdims, non-contiguous
views, NaNs and infinities anywhere (all-NaN slices included), integer, bool and float dtypes;
cov, corrcoef, average, trapezoid with their options; partition and argpartition by their
contract; fft2, ifft2, rfft2, irfft2. cummax, cummin and logcumsumexp against PyTorch (values,
indices, ties, NaNs). Gradients against torch.nansum / torch.nanmean / PyTorch's scans and
cov / corrcoef / trapezoid, and against central differences; forward mode against central
differences; errors that name the function.
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, make_tensor, make_view, np_quiet, seeds, shapes, to_np
from hypothesis import given
from hypothesis import strategies as st

import autograd
import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")


def _torch():
    """PyTorch for the tests that compare with it (the rest run without it, as in CI)."""
    return pytest.importorskip("torch")

DTYPES = (dt.bool_, dt.int8, dt.uint16, dt.int64, dt.float16, dt.float32, dt.float64)
REDUCE = ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin")


def _values(rng, d: dt.DType, shape, nan: float = 0.25) -> np.ndarray:
    """Values of d with ties, NaNs (whole slices of them too) and a few infinities for floats;
    float magnitudes <= 1.5 so that products of up to 81 stay finite in float16."""
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    if d.kind != "f":
        return rng.integers(0 if d.kind == "u" else -9, 9, shape).astype(d.np)
    v = rng.integers(-6, 7, shape) / 4.0
    v = np.where(rng.random(shape) < nan, np.nan, v)
    if v.size and rng.random() < 0.5:   # an all-NaN slice
        v[(0,) * (len(shape) - 1)] = np.nan
    v = np.where(rng.random(shape) < 0.03, np.inf, v)
    return np.asarray(v, d.np)


def _input(rng, d, shape, view: bool, nan: float = 0.25):
    a = _values(rng, d, shape, nan)
    return make_view(rng, a, d) if view and len(shape) else (a, make_tensor(a, d))


def _ref(fn, a, d: dt.DType, **kw):
    """NumPy's result: float16 computed from the same values in float64, then rounded (NumPy's
    own float16 loops round every step; ours accumulate in float32)."""
    r = np.asarray(np_quiet(fn, a, **kw))
    if d is dt.float16:
        return np.asarray(np_quiet(fn, a.astype(np.float64), **kw)).astype(r.dtype)
    return r


def _close(t, want, rtol: float = 1e-10, atol: float = 1e-12, what: str = "") -> None:
    """Complex (and real) results: dtype, shape, values within tolerance (NaN equal to NaN)."""
    want = np.asarray(want)
    assert t.dtype.name == want.dtype.name and t.shape == want.shape, (what, t.dtype, t.shape)
    np.testing.assert_allclose(to_np(t), want, rtol=rtol, atol=atol, err_msg=what)


@st.composite
def _axis_cases(draw, tuples: bool = True):
    """(shape, axis, keepdims): axis None, an int (negative too) or a tuple in any order."""
    shape = draw(shapes(max_dims=3))
    nd = len(shape)
    kinds = (["none", "int", "tuple"] if tuples else ["none", "int"]) if nd else ["none"]
    kind = draw(st.sampled_from(kinds))
    axis = None
    if kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    elif kind == "tuple":
        axis = tuple(draw(st.permutations(range(nd)))[:draw(st.integers(0, nd))])
    return shape, axis, draw(st.booleans())


# ---------------------------------------------------------------- nan- reductions

@given(case=_axis_cases(), d=st.sampled_from(DTYPES), seed=seeds(), view=st.booleans(),
       name=st.sampled_from(REDUCE), ddof=st.sampled_from([0, 1, 2]))
def test_nan_reductions_match_numpy(case, d, seed, view, name, ddof):
    shape, axis, keepdims = case
    a, x = _input(np.random.default_rng(seed), d, shape, view)
    kw = {"axis": axis, "keepdims": keepdims}
    if name in ("nanvar", "nanstd"):
        kw["ddof"] = ddof
    what = f"{name} {d} {shape} {kw}"
    try:
        want = _ref(getattr(np, name), a, d, **kw)
    except ValueError:   # nanmax / nanmin of a zero-size slice
        with pytest.raises(ValueError, match=name):
            getattr(T, name)(x, **kw)
        return
    got = getattr(T, name)(x, **kw)
    tol = {"rtol": 2e-3, "atol": 1e-3} if d is dt.float16 else {}
    assert_close(got, want, what=what, **tol)


def test_nan_reductions_known_rows():
    a = np.array([[1.0, np.nan, 3.0], [np.nan] * 3, [2.0, 5.0, -1.0], [np.nan, 4.0, np.nan]])
    x = T.asarray(a)
    assert to_np(T.nansum(x, axis=1)).tolist() == [4.0, 0.0, 6.0, 4.0]
    assert to_np(T.nanprod(x, dim=1)).tolist() == [3.0, 1.0, -10.0, 4.0]
    np.testing.assert_array_equal(to_np(T.nanmean(x, axis=1)), [2.0, np.nan, 2.0, 4.0])
    np.testing.assert_array_equal(to_np(T.nanvar(x, axis=1, ddof=1)), [2.0, np.nan, 9.0, np.nan])
    np.testing.assert_array_equal(to_np(T.nanvar(x, axis=1, correction=1)),
                                  to_np(T.nanvar(x, axis=1, ddof=1)))
    np.testing.assert_array_equal(to_np(T.nanmax(x, axis=1)), [3.0, np.nan, 5.0, 4.0])
    np.testing.assert_array_equal(to_np(T.nanmin(x, axis=1, keepdims=True)),
                                  [[1.0], [np.nan], [-1.0], [4.0]])
    assert T.nansum(x).item() == 14.0 and T.nanmax(x).item() == 5.0
    assert T.nanmean(x, axis=0).tolist() == [1.5, 4.5, 1.0]
    empty = T.zeros((0, 3))
    assert T.nansum(empty, axis=0).tolist() == [0.0] * 3
    assert np.isnan(to_np(T.nanmean(empty, axis=0))).all()
    with pytest.raises(ValueError, match="nanmax: zero-size"):
        T.nanmax(empty, axis=0)
    assert T.nanmax(empty, axis=1).shape == (0,)


def test_nan_reduction_dtypes_follow_numpy():
    i8, u8, b = T.tensor([1, 2], dtype=T.int8), T.tensor([1, 2], dtype=T.uint8), T.tensor([True])
    assert (T.nansum(i8).dtype, T.nansum(u8).dtype, T.nanprod(b).dtype) == (T.int64, T.uint64,
                                                                           T.int64)
    assert (T.nanmean(i8).dtype, T.nanvar(b).dtype, T.nanstd(u8).dtype) == (T.float64,) * 3
    assert (T.nanmax(i8).dtype, T.nanmin(b).dtype) == (T.int8, T.bool_)
    h = T.tensor([1.0, float("nan"), 2.0], dtype=T.float16)
    assert T.nanmean(h).dtype is T.float16 and T.nanmean(h).item() == 1.5
    assert T.nanmean(h, dtype=T.float32).dtype is T.float32
    assert T.nansum(h, dtype=T.int64).item() == 3
    bf = T.tensor([1.0, float("nan"), 2.0], dtype=T.bfloat16)
    assert T.nanvar(bf).dtype is T.bfloat16 and T.nanvar(bf).item() == 0.25
    with pytest.raises(TypeError, match="nanmean: dtype must be inexact"):
        T.nanmean(h, dtype=T.int32)
    c = np.array([1 + 1j, np.nan + 0j, 2j, 3 - 1j])
    _close(T.nansum(T.asarray(c)), np.nansum(c))
    _close(T.nanmean(T.asarray(c)), np.nanmean(c))
    assert_close(T.nanvar(T.asarray(c), ddof=1), np.nanvar(c, ddof=1))


# ---------------------------------------------------------------- nanargmax, nanargmin

@given(case=_axis_cases(tuples=False), d=st.sampled_from(DTYPES), seed=seeds(),
       view=st.booleans(), name=st.sampled_from(["nanargmax", "nanargmin"]))
def test_nan_argextremes_match_numpy(case, d, seed, view, name):
    shape, axis, keepdims = case
    a, x = _input(np.random.default_rng(seed), d, shape, view, nan=0.3)
    try:
        want = np.asarray(getattr(np, name)(a, axis=axis, keepdims=keepdims))
    except ValueError:   # an all-NaN slice, or an empty one
        with pytest.raises(ValueError, match=name):
            getattr(T, name)(x, axis=axis, keepdims=keepdims)
        return
    assert_close(getattr(T, name)(x, axis=axis, keepdims=keepdims), want, dtype="int64",
                 what=f"{name} {d} {shape} {axis}")


def test_nan_argextremes_known_rows():
    a = np.array([[np.nan, 2.0, 5.0, 5.0], [-np.inf, np.nan, -np.inf, 1.0]])
    assert T.nanargmax(T.asarray(a), axis=1).tolist() == [2, 3]
    assert T.nanargmin(T.asarray(a), dim=1, keepdims=True).tolist() == [[1], [0]]
    assert T.nanargmax(T.asarray(a)).item() == 2
    assert T.nanargmax(T.asarray(np.array([np.nan, -np.inf]))).item() == 0   # NumPy's answer
    with pytest.raises(ValueError, match="nanargmin: All-NaN slice"):
        T.nanargmin(T.asarray(np.array([[1.0, np.nan], [np.nan, np.nan]])), axis=1)
    with pytest.raises(ValueError, match="nanargmax: attempt to get argmax of an empty"):
        T.nanargmax(T.zeros((2, 0)), axis=1)
    assert T.nanargmax(T.zeros((0, 3)), axis=1).shape == (0,)


# ---------------------------------------------------------------- nancumsum, nancumprod

@given(case=_axis_cases(tuples=False), d=st.sampled_from(DTYPES), seed=seeds(),
       view=st.booleans(), name=st.sampled_from(["nancumsum", "nancumprod"]),
       dtype=st.sampled_from([None, "float64", "int64"]))
def test_nan_scans_match_numpy(case, d, seed, view, name, dtype):
    shape, axis, _ = case
    a, x = _input(np.random.default_rng(seed), d, shape, view)
    if dtype == "int64" and d.kind == "f":
        a = np.where(np.isinf(a), np.nan, a)    # NaN is 0 (1) before the cast; inf is not
        x = T.where(T.isinf(x), float("nan"), x)
    want = _ref(getattr(np, name), a, d, axis=axis, dtype=dtype)
    tol = {"rtol": 2e-3, "atol": 1e-3} if d is dt.float16 and dtype is None else {}
    assert_close(getattr(T, name)(x, axis=axis, dtype=dtype), want, what=f"{name} {d} {shape}",
                 **tol)


# ---------------------------------------------------------------- cummax, cummin, logcumsumexp

@pytest.mark.parametrize("d", [dt.bool_, dt.int16, dt.uint8, dt.float32, dt.float64], ids=str)
def test_cummax_cummin_match_torch(d):
    torch = _torch()
    rng = np.random.default_rng(1)
    for shape in [(9,), (4, 7), (2, 3, 5), (3, 0), (0,)]:
        for dim in range(-len(shape), len(shape)):
            a, x = _input(rng, d, shape, view=True, nan=0.2)
            for name in ("cummax", "cummin"):
                want = getattr(torch, name)(torch.from_numpy(a.copy()), dim)
                got = getattr(T, name)(x, dim)
                what = f"{name} {d} {shape} {dim}"
                assert_close(got.values, want.values.numpy(), what=what)
                assert_close(got.indices, want.indices.numpy(), what=what)
    r = T.cummax(T.tensor(3.0), 0)
    assert r.values.item() == 3.0 and r.indices.item() == 0 and r.indices.dtype is dt.int64
    v, i = T.cummin(T.tensor([[2, 1, 1, 3]]), axis=-1)   # unpacks as torch's named tuple
    assert v.tolist() == [[2, 1, 1, 1]] and i.tolist() == [[0, 1, 2, 2]]


def test_logcumsumexp_matches_torch():
    torch = _torch()
    rng = np.random.default_rng(2)
    for shape, dim in [((7,), 0), ((3, 9), 1), ((3, 9), 0), ((2, 3, 4), -2), ((0, 4), 1), ((), 0)]:
        for d in (np.float32, np.float64):
            a = np.asarray(rng.normal(size=shape) * 30, d)
            if a.size > 2:
                a.flat[1], a.flat[-1] = -np.inf, -1e4    # a far-away prefix stays exact
            a, x = make_view(rng, a, dt.dtype(d)) if a.ndim else (a, T.asarray(a))
            want = torch.logcumsumexp(torch.from_numpy(a), dim).numpy()
            assert_close(T.logcumsumexp(x, dim), want, what=f"{shape} {dim} {d}")
    assert_close(T.logcumsumexp(T.asarray(np.array([-1000.0, 0.0, np.nan, 1.0])), dim=0),
                 [-1000.0, 0.0, np.nan, np.nan])
    h = np.array([1.0, 2.0, -3.0, 0.5], np.float16)
    assert_close(T.logcumsumexp(T.asarray(h), 0), torch.logcumsumexp(torch.from_numpy(h), 0).numpy())
    i = np.array([[1, 5, 2], [0, 0, 3]])
    assert_close(T.logcumsumexp(T.asarray(i), 1),
                 torch.logcumsumexp(torch.from_numpy(i).double(), 1).numpy())


# ---------------------------------------------------------------- average, cov, corrcoef

def test_average_matches_numpy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 4, 5))
    cases = [({}, None), ({"axis": 1}, None), ({"axis": (2, 0)}, None),
             ({"axis": 1}, rng.random(4)), ({"axis": (2, 0)}, rng.random((5, 3))),
             ({}, rng.random((3, 4, 5))), ({"axis": -1}, rng.integers(1, 4, 5)),
             ({"axis": (0, 2)}, rng.random((3, 5)))]
    for kw, w in cases:
        for keepdims in (False, True):
            for view in (False, True):
                aa, x = make_view(rng, a, dt.float64) if view else (a, T.asarray(a))
                wt = None if w is None else T.asarray(w)
                want = np.average(aa, weights=w, returned=True, keepdims=keepdims, **kw)
                got = T.average(x, weights=wt, returned=True, keepdims=keepdims, **kw)
                assert_close(got[0], want[0], what=f"{kw} {keepdims}")
                assert_close(got[1], want[1], what=f"{kw} {keepdims} scl")
    i = np.arange(6, dtype=np.int16).reshape(2, 3)
    assert_close(T.average(T.asarray(i), axis=1, weights=[1, 2, 3]),
                 np.average(i, axis=1, weights=[1, 2, 3]))
    f32 = rng.random((2, 3)).astype(np.float32)
    assert_close(T.average(T.asarray(f32), axis=0), np.average(f32, axis=0))
    assert_close(T.average(T.asarray(f32), axis=1, weights=T.asarray(np.float32([1, 2, 3]))),
                 np.average(f32, axis=1, weights=np.float32([1, 2, 3])))
    with pytest.raises(ZeroDivisionError, match="average: weights sum to zero"):
        T.average(T.asarray(i), axis=1, weights=[1.0, -1.0, 0.0])
    with pytest.raises(TypeError, match="average: axis must be given"):
        T.average(T.asarray(i), weights=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="average: shape of weights"):
        T.average(T.asarray(i), axis=0, weights=[1.0, 2.0, 3.0])


def test_cov_corrcoef_match_numpy():
    rng = np.random.default_rng(4)
    m = rng.normal(size=(3, 6))
    y = rng.normal(size=(2, 6))
    fw, aw = rng.integers(0, 4, 6), rng.random(6)
    cases = [{}, {"bias": True}, {"ddof": 3}, {"fweights": fw}, {"aweights": aw},
             {"fweights": fw, "aweights": aw}, {"fweights": fw, "aweights": aw, "ddof": 0},
             {"fweights": fw, "aweights": aw, "bias": True}, {"ddof": 7}]
    for kw in cases:
        for view in (False, True):
            mm, x = make_view(rng, m, dt.float64) if view else (m, T.asarray(m))
            kt = {k: T.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
            assert_close(T.cov(x, **kt), np_quiet(np.cov, mm, **kw), what=str(kw))
            assert_close(T.cov(x.T, rowvar=False, **kt), np_quiet(np.cov, mm.T, rowvar=False, **kw))
            assert_close(T.cov(x, T.asarray(y), **kt), np_quiet(np.cov, mm, y, **kw))
    assert_close(T.cov(T.asarray(m), correction=0), np.cov(m, ddof=0))
    f32 = m.astype(np.float32)
    assert_close(T.cov(T.asarray(f32)), np.cov(f32))                   # float64, as NumPy
    assert_close(T.cov(T.asarray(f32), dtype=T.float32), np.cov(f32, dtype=np.float32))
    assert_close(T.cov(T.asarray(m[0])), np.cov(m[0]))                 # one variable: 0-d
    assert_close(T.cov(T.asarray(np.arange(5)), T.asarray(np.arange(5) ** 2)),
                 np.cov(np.arange(5), np.arange(5) ** 2))
    c = m[:2] + 1j * y
    _close(T.cov(T.asarray(c)), np.cov(c))
    _close(T.corrcoef(T.asarray(c)), np.corrcoef(c))
    assert_close(T.cov(T.zeros((0, 4))), np.zeros((0, 0)))
    for rowvar in (True, False):
        assert_close(T.corrcoef(T.asarray(m), T.asarray(y), rowvar=rowvar) if rowvar else
                     T.corrcoef(T.asarray(m.T), T.asarray(y.T), rowvar=False),
                     np.corrcoef(m, y))
    assert_close(T.corrcoef(T.asarray(m[0])), np.corrcoef(m[0]))
    with pytest.raises(ValueError, match="cov: fweights cannot be negative"):
        T.cov(T.asarray(m), fweights=T.asarray(-fw - 1))
    with pytest.raises(TypeError, match="cov: fweights must be integer"):
        T.cov(T.asarray(m), fweights=T.asarray(aw))
    with pytest.raises(ValueError, match="cov: incompatible numbers of samples"):
        T.cov(T.asarray(m), aweights=T.asarray(aw[:4]))
    with pytest.raises(TypeError, match="cov: give ddof or correction, not both"):
        T.cov(T.asarray(m), ddof=1, correction=1)
    with pytest.raises(ValueError, match="cov: m has more than 2 dimensions"):
        T.cov(T.zeros((2, 2, 2)))


# ---------------------------------------------------------------- trapezoid

def test_trapezoid_matches_numpy():
    rng = np.random.default_rng(5)
    y = rng.normal(size=(3, 5))
    xs = np.sort(rng.random(5))
    xfull = np.sort(rng.random((3, 5)), axis=1)
    for kw_np, kw in [({}, {}), ({"dx": 0.5}, {"dx": 0.5}), ({"x": xs}, {"x": T.asarray(xs)}),
                      ({"x": xfull}, {"x": T.asarray(xfull)})]:
        for view in (False, True):
            yy, t = make_view(rng, y, dt.float64) if view else (y, T.asarray(y))
            assert_close(T.trapezoid(t, **kw), np.trapezoid(yy, **kw_np), what=str(kw_np))
    assert_close(T.trapezoid(T.asarray(y), x=T.asarray(xs[:3]), axis=0),
                 np.trapezoid(y, x=xs[:3], axis=0))
    for a in (np.array([1, 4, 9], np.int8), np.array([True, True, False]),
              np.array([1.0, 2.0], np.float32), np.zeros(0), np.zeros((2, 0))):
        assert_close(T.trapezoid(T.asarray(a), axis=0), np.trapezoid(a, axis=0), what=str(a))


# ---------------------------------------------------------------- partition, argpartition

@given(shape=shapes(min_dims=1, max_dims=3), d=st.sampled_from(DTYPES), seed=seeds(),
       view=st.booleans(), flat=st.booleans())
def test_partition_contract(shape, d, seed, view, flat):
    rng = np.random.default_rng(seed)
    a, x = _input(rng, d, shape, view)
    axis = None if flat else int(rng.integers(-len(shape), len(shape)))
    n = a.size if flat else shape[axis]
    kth = [int(k) for k in rng.integers(-n, n, size=int(rng.integers(1, 3)))] if n else [0]
    want = np.partition(a, kth, axis=axis)
    got, idx = T.partition(x, kth, axis=axis), T.argpartition(x, kth, axis=axis)
    ax = 0 if flat else axis
    if a.size:   # NumPy's contract: each segment between kth positions holds the sort's multiset
        srt = np.sort(a.reshape(-1) if flat else a, axis=ax)
        g = np.moveaxis(to_np(got), ax, -1)
        s = np.moveaxis(srt, ax, -1)
        n_ = s.shape[-1]
        ks = sorted({k % n_ for k in kth})
        bounds = [0] + [b for k in ks for b in (k, k + 1)] + [n_]
        for lo, hi in zip(bounds[::2], bounds[1::2]):
            np.testing.assert_array_equal(np.sort(g[..., lo:hi], axis=-1), s[..., lo:hi])
    if a.size:   # the kth elements are NumPy's; argpartition's indices pick got's values
        np.testing.assert_array_equal(np.take(to_np(got), kth, axis=ax), np.take(want, kth, axis=ax))
        src = a.reshape(-1) if flat else a
        np.testing.assert_array_equal(np.take_along_axis(src, to_np(idx), ax), to_np(got))


def test_partition_kth_errors_and_nans():
    x = T.tensor([3.0, float("nan"), 1.0, 2.0])
    assert np.isnan(T.partition(x, -1)[-1].item()) and T.partition(x, 0)[0].item() == 1.0
    assert T.argpartition(x, [1, 2]).tolist() == [2, 3, 0, 1]
    for kth, err, msg in [(4, ValueError, r"kth\(=4\) out of bounds \(4\)"),
                          (-5, ValueError, r"kth\(=-1\) out of bounds"),
                          (True, ValueError, "booleans unacceptable"),
                          (1.0, TypeError, "must be integer"), ([[1]], ValueError, "1-d")]:
        for name in ("partition", "argpartition"):
            with pytest.raises(err, match=f"{name}: .*{msg}"):
                getattr(T, name)(x, kth)
    assert T.partition(T.zeros((3, 0)), 5, axis=1).shape == (3, 0)   # NumPy checks no kth there
    assert T.partition(T.tensor([[4, 1], [0, 2]]), 3, axis=None).tolist() == [0, 1, 2, 4]
    with pytest.raises(T.AxisError):
        T.partition(T.tensor(3.0), 0)


# ---------------------------------------------------------------- fft2 family

def test_fft2_family_matches_numpy():
    rng = np.random.default_rng(6)
    r = rng.normal(size=(2, 4, 6))
    c = r + 1j * rng.normal(size=r.shape)
    for kw in ({}, {"s": (3, 8)}, {"axes": (0, 2)}, {"norm": "ortho"}, {"s": (2, 5), "axes": (2, 1)}):
        _close(T.fft.fft2(T.asarray(c), **kw), np.fft.fft2(c, **kw), what=str(kw))
        _close(T.fft.ifft2(T.asarray(c), **kw), np.fft.ifft2(c, **kw), what=str(kw))
        _close(T.fft.rfft2(T.asarray(r), **kw), np.fft.rfft2(r, **kw), what=str(kw))
        _close(T.fft.irfft2(T.asarray(c), **kw), np.fft.irfft2(c, **kw), what=str(kw))
    f32 = r.astype(np.float32)
    assert T.fft.rfft2(T.asarray(f32)).dtype is dt.complex64
    assert_close(T.fft.irfft2(T.fft.rfft2(T.asarray(r)), s=r.shape[1:]), r)


# ---------------------------------------------------------------- gradients

def _torch_grad(fn, a, *args):
    t = _torch().tensor(a, requires_grad=True)
    fn(t, *args).sum().backward()
    return t.grad.numpy()


def _our_grad(fn, a, *args):
    x = T.asarray(a).requires_grad_()
    fn(x, *args).sum().backward()
    return to_np(x.grad)


def test_gradients_against_torch():
    torch = _torch()
    rng = np.random.default_rng(7)
    a = rng.normal(size=(3, 4))
    a[0, 1] = a[2, 3] = a[1, 0] = np.nan
    for ours, theirs in [(lambda t: T.nansum(t, axis=1), lambda t: torch.nansum(t, 1)),
                         (lambda t: T.nanmean(t, axis=0), lambda t: torch.nanmean(t, 0)),
                         (lambda t: T.nanmean(t), torch.nanmean),
                         (lambda t: T.cummax(t, 1).values, lambda t: torch.cummax(t, 1).values),
                         (lambda t: T.cummin(t, 0).values, lambda t: torch.cummin(t, 0).values),
                         (lambda t: T.logcumsumexp(t, 1), lambda t: torch.logcumsumexp(t, 1))]:
        b = a if "nan" in ours.__code__.co_names else np.nan_to_num(a)
        np.testing.assert_allclose(_our_grad(ours, b), _torch_grad(theirs, b), rtol=1e-12,
                                   atol=1e-14)
    ties = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [np.nan, 1.0, np.nan, 0.0, 2.0]])
    for name in ("cummax", "cummin"):
        np.testing.assert_array_equal(
            _our_grad(lambda t, n=name: getattr(T, n)(t, 1).values, ties),
            _torch_grad(lambda t, n=name: getattr(torch, n)(t, 1).values, ties))
    m, fw, aw = rng.normal(size=(3, 6)), rng.integers(1, 4, 6), rng.random(6)
    np.testing.assert_allclose(
        _our_grad(lambda t: T.cov(t, fweights=T.asarray(fw), aweights=T.asarray(aw)), m),
        _torch_grad(lambda t: torch.cov(t, fweights=torch.tensor(fw), aweights=torch.tensor(aw)),
                    m), rtol=1e-10)
    np.testing.assert_allclose(_our_grad(T.corrcoef, m), _torch_grad(torch.corrcoef, m),
                               rtol=1e-8, atol=1e-12)
    xs = np.sort(rng.random(6))
    np.testing.assert_allclose(_our_grad(lambda t: T.trapezoid(t, x=T.asarray(xs)), m),
                               _torch_grad(lambda t: torch.trapezoid(t, torch.tensor(xs)), m))


def test_nan_positions_get_zero_gradient():
    a = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 2.0]])
    for f in (T.nansum, T.nanmean, T.nanvar, T.nanstd, T.nanmax, T.nanmin, T.nanprod):
        g = _our_grad(lambda t, f=f: f(t, axis=1), a)
        assert np.isfinite(g).all() and (g[np.isnan(a)] == 0).all(), f.__name__
        picked = {T.nanmax: [2], T.nanmin: [0]}.get(f, [0, 2])
        assert (g[1, picked] != 0).all() and g[1].tolist().count(0.0) == 3 - len(picked), f
    for f in (T.nancumsum, T.nancumprod):
        g = _our_grad(lambda t, f=f: f(t, axis=1), a)
        # [1, nan, 2] -> cumsum [x0, x0, x0 + x2], cumprod [x0, x0, x0 x2]
        assert g.tolist() == [[0.0] * 3, [3.0, 0.0, 1.0] if f is T.nancumsum else [4.0, 0.0, 1.0]]


def test_gradients_by_central_differences():
    rng = np.random.default_rng(8)
    a = rng.permutation(12).reshape(3, 4) / 7.0 + 0.1   # no ties
    a[0, 2] = a[2, 1] = np.nan
    x = T.asarray(a).requires_grad_()
    fns = [lambda t: T.nanvar(t, axis=1, ddof=1), lambda t: T.nanstd(t, axis=(0, 1)),
           lambda t: T.nanmax(t, axis=0), lambda t: T.nanmin(t, axis=1, keepdims=True),
           lambda t: T.nanprod(t, axis=0), lambda t: T.nancumsum(t, axis=1),
           lambda t: T.nancumprod(t, axis=0),
           lambda t: T.average(T.where(T.isnan(t), 0.0, t), axis=1,
                               weights=T.asarray([1.0, 2.0, 0.5, 1.0])),
           lambda t: T.partition(T.where(T.isnan(t), 0.0, t), 1, axis=1)]
    for i, f in enumerate(fns):
        assert autograd.gradcheck(f, (x,)), i
    w = T.asarray(rng.random(4) + 0.5).requires_grad_()
    y = T.asarray(np.nan_to_num(a))
    assert autograd.gradcheck(lambda w: T.average(y, axis=1, weights=w), (w,))
    assert autograd.gradcheck(lambda w: T.cov(y, aweights=w), (w,))


def test_forward_mode():
    rng = np.random.default_rng(9)
    a = rng.normal(size=(3, 5))
    a[1, 2] = np.nan
    x, v = T.asarray(a), T.asarray(rng.normal(size=(3, 5)))
    clean = T.asarray(np.nan_to_num(a))
    for f, at in [(lambda t: T.nanmean(t, axis=1), x), (lambda t: T.nanvar(t, axis=0), x),
                  (lambda t: T.logcumsumexp(t, 1), clean), (lambda t: T.cummax(t, 0).values, clean),
                  (lambda t: T.corrcoef(t), clean)]:
        _, jv = autograd.jvp(f, (at,), (v,))
        fd = (to_np(f(at + 1e-6 * v)) - to_np(f(at - 1e-6 * v))) / 2e-6
        np.testing.assert_allclose(to_np(jv), np.nan_to_num(fd), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- surface, errors, doctests

NAMES = REDUCE + ("nanargmax", "nanargmin", "nancumsum", "nancumprod", "cummax", "cummin",
                  "logcumsumexp", "cov", "corrcoef", "average", "trapezoid", "partition",
                  "argpartition")


def test_published_as_composites():
    from tensor.public import COMPOSITE, PUB
    for n in NAMES:
        assert getattr(T, n) is PUB[n] and n in COMPOSITE and PUB[n].__doc__, n
    for n in ("fft2", "ifft2", "rfft2", "irfft2"):
        assert n in T.fft.__all__ and callable(getattr(T.fft, n))
    x = T.tensor([1.0, float("nan"), 3.0], requires_grad=True)
    assert T.nanmean(x).grad_fn is not None and T.nanmean(x).grad_fn.op != "nanmean"


def test_errors_name_the_function():
    x = T.ones((2, 3))
    for n in REDUCE + ("nanargmax", "nanargmin", "nancumsum", "nancumprod"):
        with pytest.raises(T.AxisError, match=n):
            getattr(T, n)(x, axis=2)
    for n in ("cummax", "cummin", "logcumsumexp"):
        with pytest.raises(TypeError, match=f"{n}: missing the dim"):
            getattr(T, n)(x)
        with pytest.raises(TypeError, match=f"{n}: complex"):
            getattr(T, n)(T.tensor([1j]), 0)
        with pytest.raises(T.AxisError, match=n):
            getattr(T, n)(x, 2)
    with pytest.raises(TypeError, match="nansum: give axis or dim"):
        T.nansum(x, axis=0, dim=0)


def test_doctests():
    import doctest

    from tensor import nanfuncs
    r = doctest.testmod(nanfuncs)
    assert r.attempted >= 20 and r.failed == 0


def test_cov_numpy2_rowvar_rule_and_complex_weights():
    """NumPy 2 transposes a 2-d m with rowvar=False even when it is one row (one observation
    of each column's variable: a 4 x 4 matrix, all NaN); complex data with weights (the weight
    sum is real) as NumPy."""
    rng = np.random.default_rng(11)
    one = np.array([[1.0, 2.0, 4.0, 7.0]])
    for f in (np.cov, np.corrcoef):
        want = np_quiet(f, one, rowvar=False)
        got = to_np(getattr(T, f.__name__)(T.asarray(one), rowvar=False))
        assert got.shape == want.shape == (4, 4)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    m, y = rng.normal(size=(4, 2)), rng.normal(size=(4, 1))
    assert_close(T.cov(T.asarray(m), T.asarray(y), rowvar=False), np.cov(m, y, rowvar=False))
    c = rng.normal(size=(2, 5)) + 1j * rng.normal(size=(2, 5))
    fw, aw = np.array([1, 2, 1, 3, 1]), rng.random(5)
    assert_close(T.cov(T.asarray(c), fweights=T.asarray(fw), aweights=T.asarray(aw)),
                 np.cov(c, fweights=fw, aweights=aw))


def test_nanstd_of_a_constant_slice_has_zero_gradient():
    x = T.asarray(np.array([[1.0, 1.0, 1.0], [1.0, 2.0, np.nan]])).requires_grad_()
    T.nanstd(x, axis=1).sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [[0.0, 0.0, 0.0], [-0.5, 0.5, 0.0]])
    _, tan = autograd.jvp(lambda t: T.nanstd(t, axis=1), T.asarray(np.ones((2, 3))),
                          T.asarray(np.arange(6.0).reshape(2, 3)))
    np.testing.assert_array_equal(to_np(tan), [0.0, 0.0])


def test_logaddexp_gradients_at_infinity():
    """d logaddexp(a, b) / da is sigmoid(a - b): 1 and 0 where a = +inf (exp(a - y) was
    exp(inf - inf)), so logcumsumexp past an infinity passes gradients (torch: NaN, then 0)."""
    x = T.asarray(np.array([1.0, np.inf, 1.0])).requires_grad_()
    T.logcumsumexp(x, 0).sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [1.0, 2.0, 0.0])
    for f in (T.logaddexp, T.logaddexp2):
        a, b = T.asarray([np.inf, 2.0]).requires_grad_(), T.asarray([1.0, 2.0]).requires_grad_()
        f(a, b).sum().backward()
        np.testing.assert_array_equal(to_np(a.grad), [1.0, 0.5])
        np.testing.assert_array_equal(to_np(b.grad), [0.0, 0.5])
