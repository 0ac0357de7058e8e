"""Order statistics and counting (tensor/statistics.py, tensor/histograms.py).

Against NumPy on both devices (the CUDA cases run on the emulator without a GPU): median,
nanmedian, quantile, nanquantile, percentile, nanpercentile (all 13 of NumPy's methods, q as
a Python number, a sequence, a 2-d sequence or a tensor), on random shapes (0-d and empty
included), axes (None, negative, tuples), keepdims, non-contiguous views, values full of ties
and NaNs, every dtype kind (bfloat16 against a float32 reference over the same values);
bincount, histogram (values exactly on the edges, given edges with repeats, ranges, weights,
densities); PyTorch's kthvalue and histc against PyTorch where it is installed. Gradients by
finite differences (float64), forward mode against central differences; errors that name the
function.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_close, make_tensor, make_view, np_quiet, seeds, shapes, storage_np, to_np
from hypothesis import given
from hypothesis import strategies as st

import autograd
import tensor as T
from tensor import dtypes as dt
from tensor.statistics import METHODS

pytestmark = pytest.mark.usefixtures("device")

DTYPES = (dt.bool_, dt.int8, dt.uint16, dt.int64, dt.float16, dt.bfloat16, dt.float32, dt.float64)


def _values(rng, d: dt.DType, shape, nan: float = 0.15) -> np.ndarray:
    """Values of d with many ties (and NaNs, +-inf for floats), exact in d (float32 carries
    bfloat16)."""
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    v = rng.integers(0 if d.kind == "u" else -20, 20, shape)
    if d.kind != "f":
        return v.astype(d.np)
    v = v / 4.0
    v = np.where(rng.random(shape) < nan, np.nan, v)
    v = np.where(rng.random(shape) < nan / 4, np.inf, v)
    return np.asarray(v, storage_np(d))


def _input(rng, d: dt.DType, shape, view: bool, nan: float = 0.15):
    a = _values(rng, d, shape, nan)
    return make_view(rng, a, d) if view and len(shape) else (a, make_tensor(a, d))


@st.composite
def _axis_cases(draw):
    """(shape, axis, keepdims): axis None, an int (negative too) or a tuple in any order."""
    shape = draw(shapes(max_dims=3))
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"] if nd else ["none"]))
    if kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    elif kind == "tuple":
        axis = tuple(draw(st.permutations(range(nd)))[:draw(st.integers(0, nd))])
    else:
        axis = None
    return shape, axis, draw(st.booleans())


def _np_call(fn, a, *args, axis, keepdims: bool, **kw):
    """fn(a, *args, axis=axis, keepdims=keepdims) in NumPy. A tuple axis goes in as one last
    axis (NumPy's own reshape for it fails on empty arrays, axis=() included)."""
    if isinstance(axis, tuple):
        axes = tuple(i % a.ndim for i in axis)
        kept = [i for i in range(a.ndim) if i not in axes]
        b = np.transpose(a, kept + list(axes)).reshape(
            [a.shape[i] for i in kept] + [int(np.prod([a.shape[i] for i in axes]))])
        r = np.asarray(np_quiet(fn, b, *args, axis=-1, **kw))
        if keepdims:
            r = r.reshape(r.shape[:r.ndim - len(kept)] + tuple(
                1 if i in axes else n for i, n in enumerate(a.shape)))
        return r
    return np.asarray(np_quiet(fn, a, *args, axis=axis, keepdims=keepdims, **kw))


def _expected_dtype(d: dt.DType, fn, *args, **kw) -> str:
    """NumPy's result dtype for fn over d: fn run on zeros (the nan- forms' dtype follows their
    first slice's: float16 where it is all NaN), float16 standing in for bfloat16."""
    name = _np_call(fn, np.zeros((1,), np.float16 if d is dt.bfloat16 else storage_np(d)), *args,
                    **kw).dtype.name
    return "bfloat16" if d is dt.bfloat16 and name == "float16" else name


def _tol(d: dt.DType, a) -> dict:
    """bfloat16 results round each step of the interpolation: a few ulp of the largest value."""
    if d is not dt.bfloat16:
        return {}
    fin = np.abs(np.asarray(a, np.float64)[np.isfinite(a)])
    return {"rtol": 2e-2, "atol": 2e-2 * max(float(fin.max()) if fin.size else 1.0, 1.0)}


# ---------------------------------------------------------------- median, nanmedian

@given(case=_axis_cases(), d=st.sampled_from(DTYPES), seed=seeds(), view=st.booleans())
def test_median_nanmedian_match_numpy(case, d, seed, view):
    shape, axis, keepdims = case
    a, x = _input(np.random.default_rng(seed), d, shape, view)
    for name in ("median", "nanmedian"):
        want = _np_call(getattr(np, name), a, axis=axis, keepdims=keepdims)
        got = getattr(T, name)(x, axis=axis, keepdims=keepdims)
        assert_close(got, want, dtype=_expected_dtype(d, getattr(np, name), axis=None,
                                                      keepdims=False),
                     what=f"{name} {d} {shape} {axis}", **_tol(d, a))


def test_median_slices_with_nans_and_dim_alias():
    a = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [4.0, 1.0, 2.0, 8.0]])
    x = T.asarray(a)
    np.testing.assert_array_equal(to_np(T.median(x, axis=1)), [np.nan, np.nan, 3.0])
    # dim= is PyTorch's form: (values, indices), the lower middle value (tests/test_torch_spelling.py)
    assert to_np(T.median(x, dim=1).values)[2] == 2.0
    np.testing.assert_array_equal(to_np(T.nanmedian(x, axis=-1)), [2.0, np.nan, 3.0])
    assert T.median(T.tensor([1, 2, 3, 4], dtype=T.int32)).dtype is dt.float64
    assert to_np(x.median(axis=0, keepdims=True)).shape == (1, 4)
    assert x.nanmedian().item() == 2.0


# ---------------------------------------------------------------- quantile & co

_Q_FORMS = ("float", "list", "list2d", "tensor", "int")


def _q(form: str, rng, scale: float):
    """(q for NumPy, q for us) of one form."""
    if form == "float":
        v = float(rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]))
        return v * scale, v * scale
    if form == "int":
        v = int(rng.integers(0, 2)) * int(scale)
        return v, v
    q = rng.random(3 if form != "list2d" else (2, 2))
    q.flat[0] = 1.0
    q = (q * scale).tolist()
    if form == "tensor":
        q = np.asarray(q, np.float32)
        return q, T.asarray(q)
    return q, q


@given(case=_axis_cases(), d=st.sampled_from(DTYPES), seed=seeds(), view=st.booleans(),
       method=st.sampled_from(METHODS), form=st.sampled_from(_Q_FORMS),
       name=st.sampled_from(["quantile", "nanquantile", "percentile", "nanpercentile"]))
def test_quantile_family_matches_numpy(case, d, seed, view, method, form, name):
    shape, axis, keepdims = case
    rng = np.random.default_rng(seed)
    a, x = _input(rng, d, shape, view)
    qn, qt = _q(form, rng, 100.0 if "percentile" in name else 1.0)
    ours = getattr(T, name)
    what = f"{name} {d} {shape} axis={axis} {method} q={qn!r}"
    try:
        want = _np_call(getattr(np, name), a, qn, axis=axis, keepdims=keepdims, method=method)
    except (IndexError, TypeError) as e:   # an empty axis; bool input that must interpolate
        with pytest.raises(type(e), match=name):
            ours(x, qt, axis=axis, keepdims=keepdims, method=method)
        return
    got = ours(x, qt, axis=axis, keepdims=keepdims, method=method)
    if a.size == 0 and name.startswith("nan"):   # NumPy gives nanmean's result, without q's axes
        assert got.shape == np.shape(qn) + want.shape[np.ndim(want) - got.ndim + np.ndim(qn):]
        assert got.dtype.kind == "f" and np.isnan(to_np(got)).all(), what
        return
    d_want = _expected_dtype(d, getattr(np, name), qn, axis=None, keepdims=False, method=method)
    assert_close(got, want, dtype=d_want, what=what, **_tol(d, a))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_on_known_rows(method):
    """All 13 methods on rows of 1 to 9 elements (every position case: the first, the last,
    between, exactly on an element), with PyTorch's interpolation= for its five."""
    qs = [0.0, 0.1, 0.25, 0.3, 0.5, 2 / 3, 0.75, 0.9, 1.0]
    for n in range(1, 10):
        a = np.arange(n) ** 2 / 3.0
        x = T.asarray(a[::-1].copy())   # unsorted input
        assert_close(T.quantile(x, qs, method=method), np.quantile(a, qs, method=method),
                     what=f"{method} n={n}")
    if method in ("linear", "lower", "higher", "midpoint", "nearest"):
        torch = pytest.importorskip("torch")
        a = np.array([[3.0, 1.0, 7.0, 2.0], [0.5, 9.0, 4.0, 4.0]])
        want = torch.quantile(torch.tensor(a), torch.tensor(qs, dtype=torch.float64), dim=1,
                              interpolation=method).numpy()
        assert_close(T.quantile(T.asarray(a), qs, dim=1, interpolation=method), want)


def test_quantile_dtypes_follow_numpy():
    f16 = T.tensor([1.0, 4.0], dtype=T.float16)
    assert T.quantile(f16, 0.3).dtype is dt.float16              # a Python q is weak
    assert T.quantile(f16, [0.3]).dtype is dt.float64             # a list is float64
    assert T.quantile(f16, T.tensor([0.3], dtype=T.float32)).dtype is dt.float32
    assert T.quantile(T.tensor([1, 4]), 0.3).dtype is dt.float64
    assert T.quantile(T.tensor([1, 4], dtype=T.int8), 1).dtype is dt.int8   # a position
    assert T.quantile(T.tensor([1, 4]), 0.3, method="nearest").dtype is dt.int64
    r = T.quantile(T.tensor([True, False, True]), 0.5, method="lower")
    assert r.dtype is dt.bool_ and r.item() is True
    assert T.quantile(T.tensor([1.0, 3.0], dtype=T.bfloat16), 0.5).dtype is dt.bfloat16


# ---------------------------------------------------------------- kthvalue

def _stable_kth(a: np.ndarray, k: int, dim: int) -> np.ndarray:
    return np.take(np.argsort(a, axis=dim, kind="stable"), k - 1, axis=dim)


@pytest.mark.parametrize("d", [dt.int16, dt.uint8, dt.float16, dt.bfloat16, dt.float32, dt.float64],
                         ids=str)
def test_kthvalue_is_the_stable_kth(d):
    rng = np.random.default_rng(3)
    for shape in [(9,), (4, 7), (2, 3, 5)]:
        for dim in range(-len(shape), len(shape)):
            a, x = _input(rng, d, shape, view=True, nan=0.2)
            k = int(rng.integers(1, shape[dim] + 1))
            keep = bool(rng.random() < 0.5)
            v, i = T.kthvalue(x, k, dim, keepdim=keep)
            want = _stable_kth(a, k, dim)
            if keep:
                want = np.expand_dims(want, dim)
            np.testing.assert_array_equal(to_np(i), want, err_msg=f"{d} {shape} {dim} {k}")
            np.testing.assert_array_equal(to_np(v), np.take_along_axis(a, want, dim % len(shape))
                                          if keep else np.take_along_axis(
                                              a, np.expand_dims(want, dim), dim).squeeze(dim))
    r = T.kthvalue(T.tensor(5.0), 1)
    assert r.values.item() == 5.0 and r.indices.item() == 0 and r.indices.dtype is dt.int64


def test_kthvalue_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = _values(rng, dt.float32, (5, 8), nan=0.2)
    for dim in (0, 1):
        for k in range(1, a.shape[dim] + 1):
            tv = torch.kthvalue(torch.tensor(a), k, dim).values.numpy()
            v = T.asarray(a).kthvalue(k, dim).values
            np.testing.assert_array_equal(to_np(v), tv)


# ---------------------------------------------------------------- bincount

def test_bincount_matches_numpy():
    rng = np.random.default_rng(5)
    for n in (0, 1, 17, 60):
        for d in (dt.uint8, dt.int32, dt.int64, dt.bool_):
            a = rng.integers(0, 2 if d is dt.bool_ else 12, n).astype(d.np)
            a, x = make_view(rng, a, d) if n and rng.random() < 0.5 else (a, make_tensor(a, d))
            m = int(rng.integers(0, 20))
            assert_close(T.bincount(x, minlength=m), np.bincount(a, minlength=m))
            w = rng.random(n) * 4 - 1
            assert_close(T.bincount(x, weights=T.asarray(w), minlength=m),   # NumPy: int64
                         np.bincount(a, weights=w, minlength=m), dtype="float64")  # when empty
            w32 = w.astype(np.float32)   # the weights' float dtype, as PyTorch (NumPy: float64)
            assert_close(x.bincount(T.asarray(w32)), np.bincount(a, w32), dtype="float32")
            wi = rng.integers(-3, 4, n).astype(np.int16)
            assert_close(T.bincount(x, T.asarray(wi)), np.bincount(a, wi), dtype="float64")


# ---------------------------------------------------------------- histogram, histc

def _hist_inputs(rng):
    edges = np.linspace(-1.0, 2.0, 7)
    yield np.concatenate([edges, rng.uniform(-1, 2, 30)]), {"bins": 6}     # values on the edges
    yield np.concatenate([edges, rng.uniform(-2, 3, 20)]), {"bins": 6, "range": (-1.0, 2.0)}
    yield np.linspace(0.1, 0.7, 13).astype(np.float32), {"bins": 12, "range": (0.1, 0.7)}
    yield rng.integers(-5, 9, 40), {"bins": 7}                             # float64 edges
    yield rng.integers(0, 9, 25).astype(np.uint8), {"bins": 4, "range": (1, 6)}
    yield (rng.random(30) * 3).astype(np.float16), {"bins": 5}
    yield rng.random(40), {"bins": [0.0, 0.25, 0.25, 0.5, 1.0]}               # a repeated edge
    yield rng.random(30) * 2 - 0.5, {"bins": np.array([0.0, 0.1, 0.7, 1.0])}
    yield np.array([3.0, 3.0]), {"bins": 3}                                   # a widened range
    yield np.zeros(0), {"bins": 4}
    yield np.array([True, False, True]), {"bins": 2}
    yield np.arange(12.0).reshape(3, 4)[:, ::2], {"bins": 3}                  # flattened 2-d


def test_histogram_matches_numpy():
    rng = np.random.default_rng(6)
    for a, kw in _hist_inputs(rng):
        kt = {k: T.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        for extra in ({}, {"density": True}, {"weights": rng.random(a.shape)},
                      {"weights": rng.integers(0, 5, a.shape).astype(np.int32)}):
            ke = {k: T.asarray(v) if isinstance(v, np.ndarray) else v for k, v in extra.items()}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # bool -> uint8, 0/0 density
                want = np.histogram(a, **kw, **extra)
            got = T.histogram(T.asarray(a), **kt, **ke)
            what = f"{a.dtype} {kw} {list(extra)}"
            assert_close(got.hist, want[0], what=what)
            assert_close(got.bin_edges, want[1], what=what)
            if not extra:
                assert_close(T.histogram_bin_edges(T.asarray(a), **kt), want[1], what=what)


def test_histogram_bfloat16_against_its_rounded_edges():
    rng = np.random.default_rng(7)
    a = np.asarray(T.asarray(rng.random(40) * 4).astype(T.bfloat16).astype(T.float32).numpy())
    h, e = T.histogram(make_tensor(a, dt.bfloat16), bins=6)
    assert e.dtype is dt.bfloat16
    want = np.histogram(a, bins=to_np(e))[0]
    np.testing.assert_array_equal(to_np(h), want)


def test_histc_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for a in (rng.random(50).astype(np.float32), np.linspace(0.0, 1.0, 11),
              np.linspace(0.1, 0.7, 13).astype(np.float32), np.array([5.0, 5.0]), np.zeros(0),
              np.concatenate([rng.normal(size=30), [np.nan, np.inf]])):
        for kw in ({}, {"bins": 5}, {"bins": 7, "min": 0.1, "max": 0.9},
                   {"bins": 6, "min": 0.1, "max": 0.7}):
            if not np.isfinite(a).all() and "min" not in kw:
                continue
            want = torch.histc(torch.tensor(a), **kw).numpy()
            got = T.asarray(a).histc(**kw)
            assert got.dtype.name == want.dtype.name
            np.testing.assert_array_equal(to_np(got), want, err_msg=f"{a} {kw}")


# ---------------------------------------------------------------- gradients

def test_gradients():
    rng = np.random.default_rng(9)
    x = T.asarray(rng.permutation(12).reshape(2, 3, 2) / 7.0).requires_grad_()   # no ties
    fns = [lambda t: T.median(t, axis=(0, 2)), lambda t: T.median(t, axis=1),
           lambda t: T.nanmedian(t, axis=-1),
           lambda t: T.quantile(t, [0.1, 0.5, 0.77], axis=2),
           lambda t: T.nanpercentile(t, 30.0, axis=None, method="hazen"),
           lambda t: T.quantile(t, 0.4, axis=0, method="midpoint", keepdims=True),
           lambda t: T.kthvalue(t, 2, dim=1).values]
    for i, f in enumerate(fns):
        assert autograd.gradcheck(f, (x,)), i
    w = T.asarray(rng.random(6)).requires_grad_()
    idx = T.tensor([0, 2, 2, 1, 0, 5])
    assert autograd.gradcheck(lambda w: T.bincount(idx, weights=w), (w,))
    assert autograd.gradcheck(lambda w: T.histogram(T.tensor([0.0, 2, 2, 1, 0, 5]), bins=3,
                                                    weights=w, density=True).hist, (w,))
    assert not T.kthvalue(x, 1).indices.requires_grad


def test_forward_mode_quantile():
    rng = np.random.default_rng(10)
    x = T.asarray(rng.permutation(12).reshape(3, 4) / 5.0)
    v = T.asarray(rng.random((3, 4)))
    f = lambda t: T.quantile(t, [0.25, 0.6], axis=1)   # noqa: E731
    _, jv = autograd.jvp(f, (x,), (v,))
    fd = (to_np(f(x + 1e-6 * v)) - to_np(f(x - 1e-6 * v))) / 2e-6
    np.testing.assert_allclose(to_np(jv), fd, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- errors, methods, doctests

def test_errors_name_the_function():
    c = T.tensor([1 + 1j, 2j])
    for name in ("median", "nanmedian", "quantile", "percentile", "kthvalue", "histogram"):
        args = (c, 0.5) if "quantile" in name else (c, 50) if "percentile" in name else \
            (c, 1) if name == "kthvalue" else (c,)
        with pytest.raises(TypeError, match=f"{name}: complex"):
            getattr(T, name)(*args)
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    cases = [
        (ValueError, "quantile: q must be in", lambda: T.quantile(x, 1.5)),
        (ValueError, "percentile: q must be in", lambda: T.percentile(x, [-1, 50])),
        (ValueError, "nanquantile: q must be in", lambda: T.nanquantile(x, float("nan"))),
        (ValueError, "quantile: 'cubic' is not a valid method", lambda: T.quantile(x, 0.5, method="cubic")),
        (ValueError, "quantile: interpolation", lambda: T.quantile(x, 0.5, interpolation="hazen")),
        (TypeError, "quantile: give method or interpolation",
         lambda: T.quantile(x, 0.5, method="lower", interpolation="higher")),
        (TypeError, "quantile: method 'linear' interpolates", lambda: T.quantile(T.tensor([True]), 0.5)),
        (IndexError, "quantile: cannot take a quantile of zero", lambda: T.quantile(T.zeros((2, 0)), 0.5, 1)),
        (IndexError, "median: axis 2", lambda: T.median(x, axis=2)),
        (ValueError, "median: repeated axis", lambda: T.median(x, axis=(0, 0))),
        (TypeError, "median: give axis or dim", lambda: T.median(x, axis=0, dim=0)),
        (ValueError, "kthvalue: k 3 is out of range", lambda: T.kthvalue(x, 3)),
        (ValueError, "kthvalue: k 0", lambda: T.kthvalue(x, 0)),
        (TypeError, "kthvalue: k must be an integer", lambda: T.kthvalue(x, 1.0)),
        (ValueError, "bincount: x must be non-negative, found -1", lambda: T.bincount(T.tensor([1, -1]))),
        (TypeError, "bincount: x must hold non-negative integers, got tensor.float64",
         lambda: T.bincount(x[0])),
        (ValueError, "bincount: x must be 1-d", lambda: T.bincount(T.zeros((2, 2), dtype=T.int64))),
        (ValueError, "bincount: minlength", lambda: T.bincount(T.tensor([1]), minlength=-1)),
        (ValueError, "bincount: weights of shape", lambda: T.bincount(T.tensor([1]), T.ones(2))),
        (ValueError, "histogram: bins must be positive", lambda: T.histogram(x, bins=0)),
        (TypeError, "histogram: bins must be an integer", lambda: T.histogram(x, bins=2.5)),
        (ValueError, "histogram: bins must increase", lambda: T.histogram(x, bins=[0, 2, 1])),
        (ValueError, "histogram: bins must be 1-d", lambda: T.histogram(x, bins=[[0, 1]])),
        (ValueError, "histogram: .foo. is not a valid estimator", lambda: T.histogram(x, bins="foo")),
        (ValueError, "histogram: max must be larger", lambda: T.histogram(x, range=(2, 1))),
        (ValueError, "histogram: supplied range", lambda: T.histogram(x, range=(0, float("inf")))),
        (ValueError, "histogram: autodetected range", lambda: T.histogram(T.tensor([1.0, float("nan")]))),
        (ValueError, "histogram: weights of shape", lambda: T.histogram(x, weights=T.ones(3))),
        (ValueError, "histogram_bin_edges: too many bins",
         lambda: T.histogram_bin_edges(T.tensor([1.0, 1.0 + 2**-10], dtype=T.float16), bins=64)),
        (TypeError, "histc: expected a floating-point tensor", lambda: T.histc(T.tensor([1, 2]))),
        (ValueError, "histc: range of", lambda: T.histc(T.tensor([1.0, float("nan")]))),
        (ValueError, "histc: max must be larger", lambda: T.histc(x, min=3, max=1)),
        (ValueError, "histc: bins must be > 0", lambda: T.histc(x, bins=0)),
    ]
    for exc, msg, fn in cases:
        with pytest.raises(exc, match=msg):
            fn()


def test_methods_and_namespace():
    x = T.tensor([[3.0, 1.0], [2.0, 5.0]])
    assert x.median().item() == 2.5 and x.quantile(0.5, axis=0).tolist() == [2.5, 3.0]
    assert x.kthvalue(1).values.tolist() == [1.0, 2.0]
    assert x.nanquantile([1.0]).tolist() == [5.0]
    assert T.tensor([0, 2]).bincount().tolist() == [1, 0, 1]
    for name in ("percentile", "nanpercentile", "histogram", "histogram_bin_edges"):
        assert hasattr(T, name) and not hasattr(x, name), name


def test_doctests():
    import doctest

    from tensor import histograms, statistics
    assert doctest.testmod(statistics).failed == 0
    assert doctest.testmod(histograms).failed == 0
