"""NumPy's comparison, set, searching and index-helper functions (tensor/numpy_extra.py,
tensor/numpy_extra2.py) against NumPy on both devices (the CUDA cases run on the emulator
without a GPU): random shapes (0-d and empty included), bool / integer / float / complex
dtypes, non-contiguous views, NaN, -0.0 and infinities; PyTorch's same-named functions
(isclose, allclose, unique, isin, bucketize, unravel_index, tril/triu_indices) where installed;
gradients against central differences; errors that name the function.
"""
from __future__ import annotations

import doctest

import numpy as np
import pytest
from helpers import make_tensor, make_view, to_np

import autograd
import tensor as T
from tensor import dtypes as dt
from tensor import numpy_extra, numpy_extra2
from tensor.public import COMPOSITE, PUB

pytestmark = pytest.mark.usefixtures("device")

DTYPES = (dt.bool_, dt.int8, dt.uint8, dt.int64, dt.float16, dt.float32, dt.float64,
          dt.complex128)
NAMES = sorted(numpy_extra.COMPOSITES)
SEEDS = range(3)


def _vals(rng, d: dt.DType, shape, special: bool = True) -> np.ndarray:
    """Values of d with many ties; for floats NaN, +-inf, -0.0 and 0.0 among them."""
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else -3, 4, shape).astype(d.np)
    pool = [1.5, -2.0, 3.0, 0.25, 0.0] + ([np.nan, np.inf, -np.inf, -0.0] if special else [])
    v = np.array(pool)[rng.integers(0, len(pool), shape)]
    if d.kind == "c":
        re, v = v, np.empty(shape, d.np)
        v.real, v.imag = re, np.array(pool)[rng.integers(0, len(pool), shape)]
    return v.astype(d.np)


def _shape(rng, max_dims: int = 3) -> tuple:
    return tuple(int(s) for s in rng.integers(0, 4, int(rng.integers(0, max_dims + 1))))


def _input(rng, d, shape, view=None):
    """(values, tensor): a contiguous tensor or (randomly) a non-contiguous view."""
    a = _vals(rng, d, shape)
    if (rng.random() < 0.5 if view is None else view) and len(shape):
        return make_view(rng, a, d)
    return a, make_tensor(a, d)


def _eq(t, want, what: str = "") -> None:
    """Same dtype, shape and values (NaN equal to NaN, -0.0 to 0.0) and on the test's device."""
    want = np.asarray(want)
    assert isinstance(t, T.Tensor), what
    assert t.device == T.get_default_device(), (what, t.device)
    assert (t.dtype.name, t.shape) == (want.dtype.name, want.shape), (what, t.dtype, t.shape,
                                                                       want.dtype, want.shape)
    np.testing.assert_array_equal(to_np(t), want, err_msg=what)


def _eqs(got, want, what: str = "") -> None:
    got, want = (got,) if isinstance(got, T.Tensor) else got, (
        (want,) if isinstance(want, np.ndarray) else want)
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        _eq(g, w, what)


def _grad_ok(fn, *xs) -> None:
    xs = [T.tensor(x, dtype=T.float64, requires_grad=True) for x in xs]
    assert autograd.gradcheck(fn, tuple(xs))


# ---------------------------------------------------------------- comparison

@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("seed", SEEDS)
def test_isclose_allclose_array_equal(d, seed):
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    a, x = _input(rng, d, shape)
    b = a.copy() if rng.random() < 0.5 else _vals(rng, d, shape)
    if d.kind == "f" and b.size:
        b.reshape(-1)[0] += np.asarray(1e-6, d.np)   # near, not equal
    b2, y = _input(rng, d, shape)
    y = make_tensor(b, d)
    for en in (False, True):
        with np.errstate(all="ignore"):
            want = np.isclose(a, b, equal_nan=en)
        _eq(T.isclose(x, y, equal_nan=en), want, f"isclose {en}")
        assert T.allclose(x, y, equal_nan=en) is bool(np.allclose(a, b, equal_nan=en))
        assert T.array_equal(x, y, equal_nan=en) is np.array_equal(a, b, equal_nan=en)
        assert x.isclose(y, equal_nan=en).shape == x.shape and isinstance(x.allclose(y), bool)
    assert T.array_equal(x, make_tensor(b2[:1], d)) is np.array_equal(a, b2[:1])
    if d.kind == "f":   # weak Python scalars; tolerances in float16 too
        _eq(T.isclose(x, 1.5, rtol=1e-3, atol=0.1), np.isclose(a, 1.5, rtol=1e-3, atol=0.1))
        _eq(T.isclose(0.25, x), np.isclose(0.25, a))
        _eq(T.isclose(x, float("inf")), np.isclose(a, np.inf))


def test_isclose_promotes_and_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([1, 2, 3], np.int8)
    b = np.array([1.0, 2.00001, 3.1], np.float32)
    _eq(T.isclose(T.tensor(a), T.tensor(b)), np.isclose(a, b))
    _eq(T.isclose(T.tensor(b), T.tensor(a)), np.isclose(b, a))
    _eq(T.isclose(T.tensor(a), 2), np.isclose(a, 2))
    c = np.array([1 + 1j, np.nan + 1j, 2j, np.inf + 0j])
    e = np.array([1 + 1.000001j, np.nan, 2.0001j, np.inf + 0j])
    for en in (False, True):
        want = torch.isclose(torch.tensor(c), torch.tensor(e), equal_nan=en).numpy()
        np.testing.assert_array_equal(want, np.isclose(c, e, equal_nan=en))
        _eq(T.isclose(T.tensor(c), T.tensor(e), equal_nan=en), want)
    assert T.allclose(T.tensor(b), T.tensor(b + 1e-7)) is torch.allclose(
        torch.tensor(b), torch.tensor(b + 1e-7))
    assert T.array_equiv(T.tensor([1, 2]), T.tensor([[1, 2], [1, 2]]))
    assert not T.array_equiv(T.tensor([1, 2]), T.tensor([[1, 2], [1, 3]]))
    assert not T.array_equiv(T.tensor([1, 2]), T.tensor([1, 2, 3]))
    assert T.array_equiv(T.tensor(1.0), T.zeros((2, 0)))


# ---------------------------------------------------------------- unique and sets

@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("seed", SEEDS)
def test_unique(d, seed):
    rng = np.random.default_rng(seed)
    a, x = _input(rng, d, _shape(rng))
    for en in (True, False):
        want = np.unique(a, True, True, True, equal_nan=en)
        got = T.unique(x, True, True, True, equal_nan=en)
        _eqs(got, want, f"unique equal_nan={en}")
        _eq(T.unique(x, equal_nan=en), want[0])
    _eqs(x.unique(return_counts=True, sorted=False), np.unique(a, return_counts=True))
    if d.kind in "fc":   # several NaNs (complex: a NaN in either part), signed zeros, infinities
        f = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf, np.nan, -np.inf, 1.0])
        if d.kind == "c":
            re, f = f, np.empty(f.shape, d.np)
            f.real, f.imag = re, re[::-1]
        f = f.astype(d.np)
        for en in (True, False):
            _eqs(T.unique(make_tensor(f, d)[::-1], True, True, True, equal_nan=en),
                 np.unique(f[::-1], True, True, True, equal_nan=en), f"NaNs, equal_nan={en}")
        g = f[[1, 2, 5]]
        for fn in ("union1d", "setxor1d", "setdiff1d", "intersect1d", "isin"):
            _eq(getattr(T, fn)(make_tensor(f, d), make_tensor(g, d)), getattr(np, fn)(f, g), fn)
    if a.ndim:
        ax = int(rng.integers(-a.ndim, a.ndim))
        if d.kind == "f":   # a NaN slice is distinct from every slice; -0.0 == 0.0 sorts unstably
            a, x = np.abs(np.nan_to_num(a)), make_tensor(np.abs(np.nan_to_num(a)), d)
        want = np.unique(a, True, True, True, axis=ax)
        _eqs(T.unique(x, True, True, True, axis=ax), want, f"unique axis={ax}")
        _eqs(T.unique(x, return_inverse=True, dim=ax), (want[0], want[2]))


def test_unique_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[3, 1, 3], [0, 1, 0], [3, 1, 3]])
    for kw in ({}, {"dim": 0}, {"dim": 1}):
        want = torch.unique(torch.tensor(a), sorted=True, return_inverse=True,
                            return_counts=True, **kw)
        got = T.unique(T.tensor(a), sorted=True, return_inverse=True, return_counts=True, **kw)
        _eqs(got, tuple(w.numpy() for w in want), str(kw))


@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("seed", SEEDS)
def test_isin_and_set_ops(d, seed):
    rng = np.random.default_rng(seed)
    a, x = _input(rng, d, _shape(rng))
    b, y = _input(rng, d, _shape(rng, 2))
    for inv in (False, True):
        _eq(T.isin(x, y, invert=inv), np.isin(a, b, invert=inv), "isin")
    _eq(T.union1d(x, y), np.union1d(a, b), "union1d")
    _eq(T.setdiff1d(x, y), np.setdiff1d(a, b), "setdiff1d")
    _eq(T.setxor1d(x, y), np.setxor1d(a, b), "setxor1d")
    _eqs(T.intersect1d(x, y, return_indices=True), np.intersect1d(a, b, return_indices=True))
    _eq(T.intersect1d(x, y), np.intersect1d(a, b), "intersect1d")
    ua, ub = np.unique(a), np.unique(b)   # assume_unique: NumPy's results on unique input
    if d.kind not in "fc":
        ux, uy = make_tensor(ua, d), make_tensor(ub, d)
        _eqs(T.intersect1d(ux, uy, True, True), np.intersect1d(ua, ub, True, True))
        _eq(T.setdiff1d(ux, uy, True), np.setdiff1d(ua, ub, True))
        _eq(T.setxor1d(ux, uy, True), np.setxor1d(ua, ub, True))
        _eq(T.isin(ux, uy, assume_unique=True, kind="sort"), np.isin(ua, ub, assume_unique=True))


def test_set_ops_mixed_dtypes_scalars_and_torch():
    torch = pytest.importorskip("torch")
    a = np.array([1, -2, 300], np.int16)
    b = np.array([1.0, 300.0, np.nan], np.float32)
    _eq(T.isin(T.tensor(a), T.tensor(b)), np.isin(a, b))
    _eq(T.union1d(T.tensor(a), T.tensor(b)), np.union1d(a, b))
    _eq(T.intersect1d(T.tensor(a), T.tensor(b)), np.intersect1d(a, b))
    _eq(T.isin(T.tensor(a), 1), np.isin(a, 1))
    _eq(T.isin(T.tensor(a), []), np.isin(a, []))
    e, t = torch.tensor([[1, 5], [2, 0]]), torch.tensor([0, 2])
    _eq(T.isin(elements=T.tensor(e.numpy()), test_elements=T.tensor(t.numpy()), invert=True),
        torch.isin(e, t, invert=True).numpy())
    z = np.array([-0.0, 0.0, np.nan])
    _eq(T.isin(T.tensor(z), T.tensor([0.0, np.nan])), np.isin(z, [0.0, np.nan]))


# ---------------------------------------------------------------- sorting and searching

@pytest.mark.parametrize("d", (dt.bool_, dt.int8, dt.uint8, dt.float16, dt.float64, dt.complex128),
                         ids=str)
def test_lexsort_and_sort_complex(d):
    rng = np.random.default_rng(1)
    shape = (3, 4)
    k1, t1 = _input(rng, d, shape)
    k2, t2 = _input(rng, dt.int8, shape)
    for ax in (0, -1):
        _eq(T.lexsort([t1, t2], axis=ax), np.lexsort([k1, k2], axis=ax))
        _eq(T.lexsort((t2, t1), axis=ax), np.lexsort((k2, k1), axis=ax))
    _eq(T.lexsort(T.stack([t2, t2 * 2])), np.lexsort(np.stack([k2, k2 * 2])))
    _eq(T.sort_complex(t1), np.sort_complex(k1))   # complex NaNs in NumPy's order too
    c = np.array([2 + 1j, 1 + 3j, 2 - 1j, -1 + 0j])
    _eq(T.sort_complex(T.tensor(c)[::-1]), np.sort_complex(c[::-1]))
    for d2 in (dt.int16, dt.uint8, dt.float32, dt.int64):
        a = np.array([3, 1, 2]).astype(d2.np)
        _eq(T.sort_complex(make_tensor(a, d2)), np.sort_complex(a))


@pytest.mark.parametrize("d", (dt.int8, dt.uint8, dt.int64, dt.float16, dt.float32, dt.float64),
                         ids=str)
def test_digitize_bucketize(d):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a, x = _input(rng, d, (3, 4))
    bins = np.array([-2, 0, 1, 1, 3]).astype(d.np if d.kind != "u" else np.int16)
    bt = make_tensor(bins, dt.dtype(bins.dtype.name))
    for right in (False, True):
        _eq(T.digitize(x, bt, right=right), np.digitize(a, bins, right=right))
        _eq(T.digitize(x, T.flip(bt, 0), right=right), np.digitize(a, bins[::-1], right=right))
        if d is not dt.float16:
            want = torch.bucketize(torch.tensor(a), torch.tensor(bins), right=right)
            _eq(T.bucketize(x, bt, right=right), want.numpy())
    _eq(T.digitize(x, T.tensor([], dtype=x.dtype)), np.digitize(a, np.array([], a.dtype)))
    _eq(T.bucketize(2, bt, out_int32=True), torch.bucketize(2, torch.tensor(bins),
                                                            out_int32=True).numpy())


@pytest.mark.parametrize("seed", SEEDS)
def test_interp(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    xp = np.sort(rng.integers(-4, 5, n)).astype(np.float32)
    fp = rng.normal(size=n)
    x = np.concatenate([rng.uniform(-6, 6, 7), xp, [np.nan, np.inf, -np.inf]])
    _eq(T.interp(T.tensor(x), T.tensor(xp), T.tensor(fp)), np.interp(x, xp, fp))
    _eq(T.interp(T.tensor(x[:10]).reshape(2, 5)[:, ::2], T.tensor(xp), T.tensor(fp), left=-7,
                 right=T.tensor(9.5)),
        np.interp(x[:10].reshape(2, 5)[:, ::2], xp, fp, left=-7, right=9.5))
    fc = fp + 1j * rng.normal(size=n)
    _eq(T.interp(T.tensor(x), T.tensor(xp), T.tensor(fc), left=1j), np.interp(x, xp, fc, left=1j))
    xi = rng.integers(-8, 8, 6)
    xu = np.unique(xp % 3.5)   # distinct modulo the period: NumPy's order of ties is unstable
    _eq(T.interp(T.tensor(xi), T.tensor(xu), T.tensor(fp[:xu.size]), period=-3.5),
        np.interp(xi, xu, fp[:xu.size], period=-3.5))
    _eq(T.interp(2.0, [1, 3], [0.0, 1.0]), np.asarray(np.interp(2.0, [1, 3], [0.0, 1.0])))
    with np.errstate(all="ignore"):   # infinite samples: NumPy's NaN fallbacks
        xq, fq = np.array([0.0, 1.0, 2.0]), np.array([np.inf, np.inf, 1.0])
        _eq(T.interp(T.tensor([0.5, 1.5]), T.tensor(xq), T.tensor(fq)), np.interp([0.5, 1.5], xq, fq))


def test_interp_gradients():
    xp = [0.0, 1.0, 2.5, 4.0]
    _grad_ok(lambda x, f: T.interp(x, T.tensor(xp, dtype=T.float64), f), [-1.0, 0.3, 1.7, 3.9, 5.0],
             [1.0, -2.0, 0.5, 3.0])
    _grad_ok(lambda q: T.interp(T.tensor([0.2, 1.1, 3.0], dtype=T.float64), q,
                                T.tensor([1.0, 3.0, -1.0, 2.0], dtype=T.float64)), xp)
    _grad_ok(lambda f: T.interp(T.tensor([0.2, 6.1], dtype=T.float64), T.tensor(xp, dtype=T.float64),
                                f, period=5.0), [1.0, -2.0, 0.5, 3.0])


# ---------------------------------------------------------------- index helpers

def test_unravel_ravel_multi_index():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for shape in ((3, 4), (2, 1, 5), (7,), (4, 0, 2)):
        size = int(np.prod(shape))
        flat = rng.integers(0, max(size, 1), (2, 3)) if size else np.zeros((0,), np.int64)
        for order in ("C", "F"):
            want = np.unravel_index(flat, shape, order=order)
            got = T.unravel_index(T.tensor(flat)[:, ::-1] if flat.ndim == 2 else T.tensor(flat),
                                  shape, order=order)
            _eqs(got, np.unravel_index(flat[:, ::-1] if flat.ndim == 2 else flat, shape,
                                       order=order))
            _eq(T.ravel_multi_index(tuple(T.tensor(w) for w in want), shape, order=order), flat)
        if size:
            _eqs(T.unravel_index(T.tensor(flat), shape),
                 tuple(t.numpy() for t in torch.unravel_index(torch.tensor(flat), shape)))
    mi = (np.array([-1, 3, 7]), np.array([[2], [9]]))
    for mode in ("wrap", "clip", ("clip", "wrap")):
        _eq(T.ravel_multi_index(tuple(map(T.tensor, mi)), (4, 5), mode=mode),
            np.ravel_multi_index(mi, (4, 5), mode=mode))
    _eqs(T.unravel_index(5, (2, 3)), tuple(np.asarray(v) for v in np.unravel_index(5, (2, 3))))


def test_grids_and_triangles():
    torch = pytest.importorskip("torch")
    a = T.zeros((3, 3, 3))
    _eqs(T.diag_indices_from(a), np.diag_indices_from(np.zeros((3, 3, 3))))
    _eqs(T.diag_indices(4, 3), np.diag_indices(4, 3))
    for dims in ((2, 3), (0, 2), (), (1, 2, 2)):
        _eq(T.indices(dims), np.indices(dims))
        _eqs(T.indices(dims, sparse=True), np.indices(dims, sparse=True))
    _eq(T.indices((2, 2), dtype=T.int8), np.indices((2, 2), dtype=np.int8))
    for n, k, m in ((4, 0, None), (3, -1, 5), (5, 2, 2), (0, 0, 3), (3, 9, None)):
        _eqs(T.tril_indices(n, k, m), np.tril_indices(n, k, m))
        _eqs(T.triu_indices(n, k, m), np.triu_indices(n, k, m))
        x = np.zeros((n, n if m is None else m))
        _eqs(T.tril_indices_from(T.tensor(x), k), np.tril_indices_from(x, k))
        _eqs(T.triu_indices_from(T.tensor(x).T.T, k), np.triu_indices_from(x, k))
        cols = n if m is None else m
        _eq(T.stack(T.tril_indices(n, k, m)), torch.tril_indices(n, cols, k).numpy())
        _eq(T.stack(T.triu_indices(row=n, col=cols, offset=k)), torch.triu_indices(n, cols, k).numpy())
    ix = PUB["ix_"]   # T.ix_: tensor/__init__.py leaves out the names ending in "_"
    args = ([0, 2], np.array([True, False, True, True]), np.array([], np.int8),
            np.array([3, 1], np.int8))
    _eqs(ix(*[T.tensor(v) if not isinstance(v, list) else v for v in args]), np.ix_(*args))
    x = np.arange(24).reshape(4, 6)
    _eq(T.tensor(x)[ix([0, 3], [1, 5])], x[np.ix_([0, 3], [1, 5])])


@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_pickers(d):
    rng = np.random.default_rng(4)
    a, x = _input(rng, d, (3, 4), view=True)
    c, cond = _input(rng, dt.bool_, (3, 4))
    _eq(T.flatnonzero(x), np.flatnonzero(a))
    _eq(T.extract(cond, x), np.extract(c, a))
    _eq(T.extract(T.tensor([1, 0, 2]), x), np.extract([1, 0, 2], a))
    for axis in (None, 0, 1, -1):
        k = 3 if axis is None else a.shape[axis]
        sel = rng.random(k) < 0.5
        _eq(T.compress(T.tensor(sel), x, axis=axis), np.compress(sel, a, axis=axis))
        _eq(T.compress(T.tensor(sel[:-1]), x, axis), np.compress(sel[:-1], a, axis))
    b, y = _input(rng, d, (4,))
    idx = rng.integers(-1, 3, (3, 4))
    for mode in ("wrap", "clip"):
        _eq(T.choose(T.tensor(idx), [x, y, x], mode=mode), np.choose(idx, [a, b, a], mode=mode))
    _eq(T.choose(T.tensor(np.abs(idx) % 2), T.stack([x, T.zeros_like(x)])),
        np.choose(np.abs(idx) % 2, np.stack([a, np.zeros_like(a)])))
    _eq(x.choose([y, y], mode="clip") if d.kind in "iu" else T.choose(cond.astype(T.int8), [x, y]),
        np.choose(a, [b, b], mode="clip") if d.kind in "iu" else np.choose(c.astype(np.int8), [a, b]))
    conds = [c, a != a[0]]
    want = np.select(conds, [a, b], default=a[0, 0]) if d.kind != "c" else None
    if want is not None:
        got = T.select([cond, x != x[0]], [x, y], default=T.tensor(a[0, 0]))
        _eq(got, want)
    _eq(T.select([cond], [1.5], 2), np.select([c], [1.5], 2))
    if d.kind != "u":   # NumPy's select fails to cast the int64 it makes of 3 into uint8
        _eq(T.select([cond, ~cond], [x, 3]), np.select([c, ~c], [a, 3]))


def test_pickers_gradients():
    _grad_ok(lambda a, b: T.choose(T.tensor([[0, 1], [1, 0]]), [a, b]), [[1.0, 2.0], [3.0, 4.0]],
             [5.0, 6.0])
    _grad_ok(lambda a, b: T.select([T.tensor([True, False, False]), T.tensor([True, True, False])],
                                   [a, b], default=a * 2), [1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    _grad_ok(lambda a: T.compress([True, False, True], a, axis=1), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _grad_ok(lambda a: T.extract(T.tensor([[True, False], [False, True]]), a), [[1.0, 2.0], [3.0, 4.0]])
    _grad_ok(lambda a: T.piecewise(a, [a < 0, a > 1], [lambda v: v * v, T.exp, 0.5]),
             [-1.5, 0.3, 2.0, -0.2])


def test_in_place_writers():
    rng = np.random.default_rng(5)
    for d in (dt.int8, dt.float32, dt.complex128):
        a = _vals(rng, d, (4, 6), special=False)
        m = rng.random((6, 4)).T < 0.5
        for fn, vals in ((np.place, [7, 8, 9]), (np.putmask, np.array([-1, -2, -3], np.int8))):
            x = make_tensor(np.zeros((6, 8), d.np), d)
            view = x[1:5, ::-1][:, 2:].T.T  # a stepped, reversed view: writes must go through
            view.copy_(make_tensor(a, d))
            want = a.copy()
            fn(want, m, vals)
            arg = T.tensor(vals) if isinstance(vals, np.ndarray) else vals
            assert getattr(T, fn.__name__)(view, T.tensor(m), arg) is None
            _eq(view, want, fn.__name__)
            np.testing.assert_array_equal(to_np(x)[1:5, ::-1][:, 2:], want)
        for shape, wrap in (((5, 3), False), ((7, 3), True), ((3, 5), False), ((3, 3, 3), False)):
            want = np.zeros(shape, d.np)
            np.fill_diagonal(want, [1, 2], wrap=wrap)
            x = T.zeros(shape, dtype=d)
            T.fill_diagonal(x, T.tensor([1, 2]), wrap=wrap)
            _eq(x, want, f"fill_diagonal {shape}")
    xs = T.zeros((3, 3), dtype=T.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        T.fill_diagonal(xs, 1.0)
    w = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = w * 1.0
    T.putmask(y, T.tensor([True, False, True]), T.tensor([5.0], dtype=T.float64))
    y.sum().backward()
    np.testing.assert_array_equal(to_np(w.grad), [0.0, 1.0, 0.0])


@pytest.mark.parametrize("seed", SEEDS)
def test_trim_zeros_piecewise_apply(seed):
    rng = np.random.default_rng(seed)
    a = (rng.random((4, 5)) < 0.25) * rng.integers(1, 5, (4, 5))
    for trim in ("fb", "f", "B"):
        for axis in (None, 0, -1, (1, 0)):
            _eq(T.trim_zeros(T.tensor(a), trim, axis), np.trim_zeros(a, trim, axis))
        _eq(T.trim_zeros(T.tensor(a[0])[::-1], trim), np.trim_zeros(a[0][::-1], trim))
    _eq(T.trim_zeros(T.zeros(3)), np.trim_zeros(np.zeros(3)))
    _eq(T.trim_zeros(T.zeros((2, 3)), "f", 1), np.trim_zeros(np.zeros((2, 3)), "f", 1))
    x = rng.normal(size=(3, 4))
    conds = [x < -0.5, x > 0.5]
    funcs = [lambda v, k: v * k, lambda v, k: v + k, 9.0]
    _eq(T.piecewise(T.tensor(x), [T.tensor(c) for c in conds], funcs, 2),
        np.piecewise(x, conds, funcs, 2))
    _eq(T.piecewise(T.tensor(x[0]), T.tensor(x[0] > 0), [T.sin, T.cos]),   # one condition
        np.piecewise(x[0], x[0] > 0, [np.sin, np.cos]))
    xi = np.arange(5)
    _eq(T.piecewise(T.tensor(xi), [xi < 2], [lambda v: v * 10]), np.piecewise(xi, [xi < 2],
                                                                              [lambda v: v * 10]))
    a3 = rng.integers(-8, 8, (2, 3, 4)) / 4   # exact sums
    for axis in (0, 1, -1):
        _eq(T.apply_along_axis(T.sum, axis, T.tensor(a3)), np.apply_along_axis(np.sum, axis, a3))
        _eq(T.apply_along_axis(lambda r: T.stack([r[0], r[-1]]), axis, T.tensor(a3)),
            np.apply_along_axis(lambda r: np.stack([r[0], r[-1]]), axis, a3))
    _eq(T.apply_along_axis(lambda r: T.outer(r, r), 1, T.tensor(a3[0])),
        np.apply_along_axis(lambda r: np.outer(r, r), 1, a3[0]))
    for axes in (0, [0, 2], (-1, 1)):
        _eq(T.apply_over_axes(T.sum, T.tensor(a3), axes), np.apply_over_axes(np.sum, a3, axes))


# ---------------------------------------------------------------- errors, publication

def test_errors_name_the_function():
    x = T.tensor([[1, 2], [3, 4]])
    cases = [
        (ValueError, "unravel_index: index 6 is out of bounds", T.unravel_index, (6, (2, 3))),
        (TypeError, "unravel_index: indices must hold integers", T.unravel_index, (1.5, (2,))),
        (ValueError, "ravel_multi_index: invalid entry", T.ravel_multi_index, (([0, 2],), (2,))),
        (ValueError, "ravel_multi_index: parameter multi_index", T.ravel_multi_index,
         (([0],), (2, 2))),
        (ValueError, "choose: invalid entry in choice array", T.choose, (x, [x, x])),
        (TypeError, "choose: a must hold integers", T.choose, (x * 1.0, [x, x])),
        (ValueError, "select: list of cases", T.select, ([x > 1], [x, x])),
        (ValueError, "select: select with an empty condition list", T.select, ([], [])),
        (TypeError, "select: invalid entry 0 in condlist", T.select, ([x], [x])),
        (ValueError, "digitize: bins must be monotonically", T.digitize, (x, T.tensor([1, 3, 2]))),
        (TypeError, "digitize: complex", T.digitize, (T.tensor([1j]), T.tensor([1.0]))),
        (ValueError, "bucketize: boundaries must be 1-d", T.bucketize, (x, x)),
        (ValueError, "interp: fp and xp are not of the same length", T.interp, (1.0, [1, 2], [1])),
        (ValueError, "interp: array of sample points is empty", T.interp, (1.0, [], [])),
        (ValueError, "interp: period must be a non-zero value", T.interp,
         (1.0, [1, 2], [1, 2], None, None, 0)),
        (TypeError, "interp: xp must be real", T.interp, (1.0, [1j], [1.0])),
        (ValueError, "compress: condition must be a 1-d array", T.compress, (x > 1, x)),
        (IndexError, "compress: index 2 is out of bounds for axis 0", T.compress,
         ([0, 0, 1], x, 0)),
        (ValueError, "fill_diagonal: array must be at least 2-d", T.fill_diagonal,
         (T.zeros(3), 1)),
        (ValueError, "fill_diagonal: All dimensions", T.fill_diagonal, (T.zeros((2, 2, 3)), 1)),
        (ValueError, "place: Cannot insert from an empty array", T.place, (x, x > 1, [])),
        (ValueError, "putmask: mask and data must be the same size", T.putmask,
         (x, T.tensor([True]), 1)),
        (TypeError, "place: the array written into must be a tensor", T.place, ([1], [True], [2])),
        (ValueError, "trim_zeros: unexpected character", T.trim_zeros, (x, "x")),
        (ValueError, "piecewise: with 2 condition", T.piecewise, (x, [x > 1, x > 2], [1])),
        (ValueError, "apply_along_axis: Cannot apply_along_axis", T.apply_along_axis,
         (T.sum, 1, T.zeros((0, 2)))),
        (ValueError, "apply_over_axes: function is not returning", T.apply_over_axes,
         (lambda v, a: T.sum(v), T.zeros((2, 2, 2)), [0])),
        (ValueError, "lexsort: all keys need to be the same shape", T.lexsort,
         ([T.zeros(2), T.zeros(3)],)),
        (TypeError, "lexsort: needs a sequence of keys", T.lexsort, ([],)),
        (ValueError, "diag_indices_from: input array must be at least 2-d", T.diag_indices_from,
         (T.zeros(3),)),
        (ValueError, "tril_indices_from: input array must be 2-d", T.tril_indices_from,
         (T.zeros(3),)),
        (TypeError, "unique: return_index must be a bool", T.unique, (x, 1)),
        (TypeError, "unique: give axis or dim", T.unique, (x, False, False, False, 0),
         {"dim": 0}),
        (TypeError, "isin: give element or elements", T.isin, (x, x), {"elements": x}),
        (ValueError, "isin: kind must be", T.isin, (x, x), {"kind": "hash"}),
        (TypeError, "isclose: equal_nan must be a bool", T.isclose, (x, x), {"equal_nan": 1}),
        (ValueError, "sort_complex: axis -1 is out of bounds", T.sort_complex, (T.tensor(1.0),)),
        (ValueError, "ix_: Cross index must be 1 dimensional", PUB["ix_"], (x,)),
        (TypeError, "tril_indices: give n or PyTorch's row", T.tril_indices, (2,), {"row": 2}),
    ]
    for case in cases:
        err, msg, fn, args = case[:4]
        with pytest.raises(err, match=msg):
            fn(*args, **(case[4] if len(case) > 4 else {}))


def test_published_as_composites_and_methods():
    for n in NAMES:
        fn = getattr(PUB[n], "__spelled__", PUB[n])   # (under PyTorch's spellings: dim=)
        assert fn is numpy_extra.COMPOSITES[n] and n in COMPOSITE and PUB[n].__doc__, n
        assert n == "ix_" or getattr(T, n) is PUB[n], n
        # methods of their own (tensor/torch_methods.py): ndarray.compress(condition, axis) and
        # PyTorch's x.select(dim, index), not the functions np.compress / np.select
        assert hasattr(T.Tensor, n) == (n not in numpy_extra.NOT_METHODS or n in ("compress", "select")), n
    assert set(NAMES) - numpy_extra.NOT_METHODS == {"isclose", "allclose", "unique", "choose"}
    assert numpy_extra.NOT_METHODS <= set(NAMES)
    x = T.tensor([3, 1, 3])
    _eqs(x.unique(return_inverse=True), np.unique([3, 1, 3], return_inverse=True))


def test_docstring_examples():
    for mod in (numpy_extra, numpy_extra2):
        assert doctest.testmod(mod).failed == 0
