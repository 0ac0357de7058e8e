"""Values of the round-4 CPU fast paths (benchmarks/cpu_cliffs4.py) against NumPy: the
branch-free searchsorted (keys of the sorted side computed once), the float sort keys without
branches, the radix sort over the bits that vary (11-bit digits for long rows) writing values
from keys, isin's lookup table for integers, histogram's two-search bins, unique from one sort,
nan_to_num's clip, the 1-d nonzero fill, tri from one strided copy and pad's scalar width.
Odd shapes, views, NaN / -0.0 / infinities and empty inputs; no timings."""
import numpy as np
import pytest

import tensor as T

RNG = np.random.default_rng(1234)


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


# ---------------------------------------------------------------- searchsorted


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "uint64", "uint8",
                                   "int32", "bool"])
@pytest.mark.parametrize("n,m", [(0, 5), (1, 300), (2, 7), (17, 3000), (1001, 300), (64, 0)])
def test_searchsorted_matches_numpy(dtype, n, m):
    # n <= m: the sorted side's keys are computed once; n > m: each step keys its element
    a = np.sort(RNG.integers(-5, 5, n).astype(dtype))
    v = RNG.integers(-6, 7, m).astype(dtype)
    if dtype.startswith("float") and n > 2:
        a[0], a[-1] = -np.inf, np.nan
        v[::7], v[1::11] = np.nan, -0.0
        v[2::13] = np.inf
    for side in ("left", "right"):
        got = T.searchsorted(T.from_numpy(a), T.from_numpy(v), side=side).numpy()
        np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))


def test_searchsorted_views_and_extremes():
    a = np.sort(RNG.standard_normal(301)).astype(np.float32)
    v = RNG.standard_normal((40, 9)).astype(np.float32)
    got = T.searchsorted(T.from_numpy(a), T.from_numpy(v).T[::-2], side="right").numpy()
    np.testing.assert_array_equal(got, np.searchsorted(a, v.T[::-2], side="right"))
    u = np.array([0, 5, 2**64 - 1, 2**64 - 1], dtype=np.uint64)   # the largest 64-bit key
    q = np.array([2**64 - 1, 0, 3, 2**64 - 2], dtype=np.uint64)
    for side in ("left", "right"):
        np.testing.assert_array_equal(T.searchsorted(T.from_numpy(u), T.from_numpy(q), side=side).numpy(),
                                      np.searchsorted(u, q, side=side))
    z = np.array([-0.0, 0.0, 0.0, np.nan, np.nan])   # signed zeros equal, NaNs last
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            T.searchsorted(T.from_numpy(z), T.from_numpy(np.array([0.0, -0.0, np.nan])), side=side).numpy(),
            np.searchsorted(z, np.array([0.0, -0.0, np.nan]), side=side))


# ---------------------------------------------------------------- isin


@pytest.mark.parametrize("ed,td", [("int64", "int64"), ("int8", "int64"), ("uint8", "int8"),
                                   ("uint64", "uint64"), ("int16", "uint32"), ("uint32", "int32"),
                                   ("int8", "int8")])
def test_isin_integer_table(ed, td):
    ii = np.iinfo(td)
    tv = RNG.integers(max(ii.min, -120), min(ii.max, 120), 9).astype(td)
    if td == "uint64":
        tv = np.array([2**64 - 5, 2**64 - 1, 2**64 - 3, 7], dtype=np.uint64)   # values past int64
    e_ii = np.iinfo(ed)
    ev = RNG.integers(e_ii.min // 2 if e_ii.min else 0, e_ii.max // 2, (6, 7)).astype(ed)
    ev.flat[:3] = np.concatenate([tv, tv])[:3].astype(ed)   # some hits
    if ed == "uint64":
        ev.flat[4] = 2**64 - 1
    for invert in (False, True):
        for view in (ev, ev.T[::-1]):
            got = T.isin(T.from_numpy(view), T.from_numpy(tv), invert=invert).numpy()
            np.testing.assert_array_equal(got, np.isin(view, tv, invert=invert))


def test_isin_table_edges():
    big = np.array([np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max])   # a range past the table
    e = np.array([[np.iinfo(np.int64).min, 3], [np.iinfo(np.int64).max, 0]])
    np.testing.assert_array_equal(T.isin(T.from_numpy(e), T.from_numpy(big)).numpy(), np.isin(e, big))
    t = np.array([5, 6, 9], dtype=np.int64)   # elements far outside the table's range
    e = np.array([np.iinfo(np.int64).min, 4, 5, 9, 10, np.iinfo(np.int64).max], dtype=np.int64)
    np.testing.assert_array_equal(T.isin(T.from_numpy(e), T.from_numpy(t)).numpy(), np.isin(e, t))
    assert T.isin(T.tensor(5), T.tensor([5, 7])).numpy().shape == ()
    assert T.isin(T.tensor(np.zeros(0, np.int64)), T.tensor([1])).shape == (0,)
    assert not T.isin(T.tensor([1, 2]), T.tensor(np.zeros(0, np.int64))).numpy().any()
    e, t = np.arange(-3, 8), np.array([-3, 2, 2, 7])
    for kind in (None, "sort", "table"):
        np.testing.assert_array_equal(T.isin(T.from_numpy(e), T.from_numpy(t), kind=kind).numpy(),
                                      np.isin(e, t))


# ---------------------------------------------------------------- sort


def _sample(dtype, L, kind):
    if dtype == "bool":
        a = RNG.random(L) < 0.5
    elif dtype.startswith("float"):
        a = RNG.standard_normal(L).astype(dtype)
        if kind == "small":
            a = np.round(a).astype(dtype)
        a[::13], a[::17], a[::19], a[::23], a[::29] = np.nan, -0.0, 0.0, np.inf, -np.inf
        if dtype == "float32" and L > 40:
            a.view(np.uint32)[31] = 0xFFC00123   # a negative NaN with a payload
    else:
        ii = np.iinfo(dtype)
        a = (RNG.integers(ii.min, ii.max, L, dtype=dtype, endpoint=True) if kind == "wide"
             else RNG.integers(0, min(ii.max, 100), L).astype(dtype))
    if kind == "one-bit" and L > 3:   # one key differs from the rest in a single bit
        base = a[1]
        a = np.full(L, base)
        if dtype == "bool":
            a[L // 2] = not base
        elif a.dtype.kind in "iu":
            a[L // 2] = int(base) ^ 64
        else:
            a.view(f"u{a.itemsize}")[L // 2] ^= 1 << (8 * a.itemsize - 5)   # an exponent bit
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8", "uint64",
                                   "uint16", "bool"])
@pytest.mark.parametrize("L", [1, 600, 32767, 32768])   # 8-bit digits below 32768, 11-bit from it
@pytest.mark.parametrize("kind", ["wide", "small", "one-bit"])
def test_sort_radix_values_and_order(dtype, L, kind):
    a = _sample(dtype, L, kind)
    ta = T.from_numpy(a)
    order = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(T.argsort(ta).numpy(), order)
    assert (_bits(T.sort(ta).numpy()) == _bits(a[order])).all()   # NaN payloads, signed zeros
    inv = np.unique(a, return_inverse=True)[1].reshape(-1)   # the stable descending sort
    down = np.argsort(-inv.astype(np.int64), kind="stable")
    np.testing.assert_array_equal(T.argsort(ta, descending=True).numpy(), down)
    assert (_bits(T.sort(ta, descending=True).numpy()) == _bits(a[down])).all()


def test_sort_rows_views_and_empty():
    m = RNG.standard_normal((37, 1100)).astype(np.float32)
    m[::5, ::7] = np.nan
    for view, axis in ((m, -1), (m.T, 0), (m[::-2, 3:], 1), (m.T[::3], 1)):
        got = T.sort(T.from_numpy(view), axis=axis).numpy()
        assert (_bits(got) == _bits(np.sort(view, axis=axis, kind="stable"))).all()
    assert T.sort(T.from_numpy(np.zeros((3, 0), np.float64))).shape == (3, 0)
    assert T.sort(T.tensor(2.5)).tolist() == 2.5


# ---------------------------------------------------------------- histogram / bincount


def test_histogram_two_search_bins():
    a = RNG.standard_normal(5000).astype(np.float32)
    a[::50], a[1::70], a[2::90] = np.nan, np.inf, -np.inf
    a[3], a[4] = -1.5, 1.5   # on the outer edges of range=(-1.5, 1.5)
    for kw in ({"bins": 64, "range": (-1.5, 1.5)}, {"bins": [-2.0, -0.0, 0.5, 1.5]},
               {"bins": 7, "range": (-1.5, 1.5), "weights": np.arange(5000.0)}):
        w = kw.get("weights")
        tk = dict(kw, weights=None if w is None else T.from_numpy(w))
        h, e = T.histogram(T.from_numpy(a), **tk)
        hn, en = np.histogram(a, **kw)
        np.testing.assert_array_equal(h.numpy(), hn)
        np.testing.assert_array_equal(e.numpy(), en)
    ints = RNG.integers(-5, 30, (20, 13))
    h, e = T.histogram(T.from_numpy(ints).T[::-1], bins=6)
    hn, en = np.histogram(ints.T[::-1], bins=6)
    np.testing.assert_array_equal(h.numpy(), hn)
    np.testing.assert_allclose(e.numpy(), en)
    h, _ = T.histogram(T.from_numpy(np.zeros(0, np.float32)), bins=3)
    np.testing.assert_array_equal(h.numpy(), [0, 0, 0])
    v = np.array([0.0, 1.0, 2.0, 3.0, np.nan])   # edges holding NaN compare as floats
    h, _ = T.histogram(T.from_numpy(v), bins=T.from_numpy(np.array([0.0, 1.0, np.nan])))
    np.testing.assert_array_equal(h.numpy(), [0, 0])


def test_bincount_broadcast_ones():
    x = RNG.integers(0, 40, 999)
    np.testing.assert_array_equal(T.bincount(T.from_numpy(x)).numpy(), np.bincount(x))
    np.testing.assert_array_equal(T.bincount(T.from_numpy(x[::-3]), minlength=50).numpy(),
                                  np.bincount(x[::-3], minlength=50))
    assert T.bincount(T.from_numpy(np.zeros(0, np.int64)), minlength=2).tolist() == [0, 0]


# ---------------------------------------------------------------- unique


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "bool", "complex64"])
@pytest.mark.parametrize("L", [0, 1, 2, 10, 1000])
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_from_one_sort(dtype, L, equal_nan):
    a = RNG.integers(-3, 3, L).astype(dtype)
    if a.dtype.kind in "fc" and L:
        a[::3], a[::4] = np.nan, -0.0
        if a.dtype.kind == "c" and L > 5:
            a[5] = complex(1, np.nan)
    got = T.unique(T.from_numpy(a), return_index=True, return_inverse=True, return_counts=True,
                   equal_nan=equal_nan)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def test_unique_all_nan_and_grad():
    a = np.full(6, np.nan)
    np.testing.assert_array_equal(T.unique(T.from_numpy(a)).numpy(), np.unique(a))
    x = T.tensor([3.0, 1.0, 3.0, float("nan")], requires_grad=True)
    u = T.unique(x)   # [1, 3, nan]: values gathered by the sort's order, differentiable
    (u[:2] * T.tensor([2.0, 5.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 2.0, 0.0, 0.0])


# ---------------------------------------------------------------- nan_to_num / nonzero / tri


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(0,), (), (5, 7)])
def test_nan_to_num_clip_path(dtype, shape):
    a = RNG.standard_normal(shape)
    if a.ndim:
        a.flat[::3], a.flat[1::4], a.flat[2::5] = np.nan, np.inf, -np.inf
        a.flat[4::9] = np.finfo(np.float16).max if dtype == "float16" else 1e30
    if dtype.startswith("complex"):
        c = np.empty(np.shape(a), dtype)
        c.real, c.imag = a, (a[::-1] if a.ndim else np.inf)
        a = c
    a = np.asarray(a).astype(dtype)
    got = T.nan_to_num(T.from_numpy(a)).numpy()
    assert got.dtype == a.dtype and got.tobytes() == np.nan_to_num(a).tobytes()
    if a.ndim == 2:
        got = T.nan_to_num(T.from_numpy(a).T[::-1], nan=-1.0, posinf=3.0).numpy()
        assert got.tobytes() == np.nan_to_num(a.T[::-1], nan=-1.0, posinf=3.0).tobytes()


def test_nan_to_num_grad_unchanged():
    x = T.tensor([np.nan, 2.0, np.inf, -np.inf, -1.0], requires_grad=True)
    T.nan_to_num(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("L", [0, 1, 7, 8, 9, 63, 64, 65, 1000])
@pytest.mark.parametrize("p", [0.0, 0.01, 0.5, 1.0])
def test_nonzero_1d_fill(L, p):
    a = RNG.random(L) < p
    for view in (a, a[::-1], a[1::3]):
        np.testing.assert_array_equal(T.nonzero(T.from_numpy(view))[0].numpy(), np.nonzero(view)[0])
    m = RNG.random((3, L)) < p   # the general path, unchanged
    for g, w in zip(T.nonzero(T.from_numpy(m)), np.nonzero(m)):
        np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("N,M", [(0, None), (1, None), (5, 0), (5, 3), (2, 9), (7, 7)])
def test_tri_strided_copy(N, M):
    for k in (-10, -3, -1, 0, 1, 4, 10, 2**62, -2**62):
        for d in (None, T.int8, T.bool, T.float32):
            got = T.tri(N, M, k, dtype=d)
            want = np.tri(N, M, k, dtype=float if d is None else d.np)
            assert got.is_contiguous() and got.numpy().dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)


def test_pad_scalar_width_fast_path():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    for width, kw in ((3, {}), (0, {}), (2, {"constant_values": 2.5}), (1, {"constant_values": 7}),
                      (2, {"mode": "edge"}), (3, {"mode": "reflect"})):
        for view in (a, a.T[::-1]):
            got = T.pad(T.from_numpy(view), width, **kw).numpy()
            np.testing.assert_array_equal(got, np.pad(view, width, **kw))
    assert T.pad(T.tensor(5.0), 2).tolist() == 5.0
    with pytest.raises(ValueError, match="negative"):
        T.pad(T.from_numpy(a), -1)
    for bad in (2.5, True):   # a float or a bool width is not an integer
        with pytest.raises(TypeError, match="integers"):
            T.pad(T.from_numpy(a), bad)


def test_index_offsets_contiguous_run():
    m = RNG.standard_normal((64, 5))
    idx = RNG.integers(-64, 64, 300)   # negative indices wrap
    np.testing.assert_array_equal(T.from_numpy(m)[T.from_numpy(idx)].numpy(), m[idx])
    np.testing.assert_array_equal(T.from_numpy(m)[T.from_numpy(idx[::-2])].numpy(), m[idx[::-2]])
    got = T.index_add(T.zeros(5), 0, T.tensor([0, -1, 4, 0]), T.ones(4)).numpy()
    np.testing.assert_array_equal(got, [2.0, 0.0, 0.0, 0.0, 2.0])
    for bad in (64, -65):   # the first bad index is the one reported, nothing is written
        b = idx.copy()
        b[[7, 200]] = bad, 70
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
            T.from_numpy(m)[T.from_numpy(b)]
    np.testing.assert_array_equal(T.bincount(T.from_numpy(idx % 64)).numpy(), np.bincount(idx % 64))
