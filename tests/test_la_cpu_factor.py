"""The CPU linear-algebra kernels (tensor/cpu/linalg.py, csrc/linalg.h) called directly:
lu, cholesky, trsm, lu_solve and qr on float64 and complex128 batches, against NumPy
(np.linalg) and by reconstruction residuals. Inputs are row-stride > n views of wider buffers
(whose padding must stay untouched), batched, 0-size, singular / not positive definite,
ill-conditioned, and single matrices big enough to be split over the threads (bitwise the same
on 1 and 2 threads).
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from tensor.cpu import kernels as K
from tensor.cpu import linalg as L

DTYPES = [np.float64, np.complex128]
EPS = np.finfo(np.float64).eps
PAD = 3


def _rand(rng, shape, dt):
    a = rng.standard_normal(shape)
    if dt == np.complex128:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


class View:
    """A (B, m, n) tensor holding `a`: a [::2, :, :n] view of a NaN-padded (2B, m, n + PAD)
    buffer when strided (row stride n + PAD, batch stride 2 m (n + PAD)), else contiguous."""

    def __init__(self, a, strided=True):
        self.strided = strided
        if strided:
            B, m, n = a.shape
            self.buf = np.full((2 * B, m, n + PAD), np.nan, dtype=a.dtype)
            self.buf[::2, :, :n] = a
            self.base = T.asarray(self.buf, copy=True)
            self.t = self.base[::2, :, :n]
        else:
            self.t = T.asarray(a, copy=True)

    def get(self):
        if not self.strided:
            return self.t.numpy()
        full = self.base.numpy()
        n = self.t.shape[2]
        outside = np.ones(full.shape, bool)
        outside[::2, :, :n] = False
        assert np.isnan(full[outside]).all(), "a kernel wrote outside its matrices"
        return full[::2, :, :n]


def _ivec(*shape):
    return T.empty(shape, dtype=T.int64)


def _tol(a, n):
    return 30 * max(n, 1) * EPS * max(1.0, float(np.abs(a).max(initial=0.0)))


def _H(x):
    return np.swapaxes(x, -1, -2).conj()


def _unpivot(lu, piv):
    """P^T L U of lu()'s outputs, one matrix."""
    m, n = lu.shape
    k = min(m, n)
    a = (np.tril(lu, -1)[:, :k] + np.eye(m, k)) @ np.triu(lu)[:k]
    for j in reversed(range(k)):
        a[[j, piv[j]]] = a[[piv[j], j]]
    return a


def _lu(a, strided=True):
    B, m, n = a.shape
    v = View(a, strided)
    piv, info = _ivec(B, min(m, n)), _ivec(B)
    L.lu(v.t, piv, info)
    return v, v.get(), piv, info.numpy()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 4, 4), (3, 8, 8), (4, 7, 3), (2, 3, 9),
                                   (1, 33, 31), (1, 200, 200), (1, 170, 230), (1, 230, 170)])
def test_lu_reconstructs(dt, shape):
    rng = np.random.default_rng(sum(shape))
    a = _rand(rng, shape, dt)
    _, lu, piv, info = _lu(a, strided=shape[0] != 3)
    piv = piv.numpy()
    assert (info == 0).all()
    k = min(shape[1:])
    for b in range(shape[0]):
        assert np.abs(_unpivot(lu[b], piv[b]) - a[b]).max() <= _tol(a[b], k)
        assert (piv[b] >= np.arange(k)).all() and (piv[b] < shape[1]).all()
        # partial pivoting on |re| + |im|: multipliers of modulus <= 1 (real), sqrt(2) (complex)
        bound = 1.0 if dt == np.float64 else np.sqrt(2)
        assert np.abs(np.tril(lu[b], -1)).max(initial=0) <= bound * (1 + 1e-15)


def test_lu_pivots_match_lapack():
    sl = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 12, 12))
    a[1, :, 0] = [1, -2, 2, -2] * 3   # ties: the first one wins (row 1)
    _, lu, piv, _ = _lu(a)
    piv = piv.numpy()
    for b in range(3):
        ref, rp = sl.lu_factor(a[b])
        assert b != 1 or piv[b, 0] == 1
        assert (piv[b] == rp).all()
        np.testing.assert_allclose(lu[b], ref, atol=1e-12)


@pytest.mark.parametrize("dt", DTYPES)
def test_lu_singular_info(dt):
    rng = np.random.default_rng(2)
    a = _rand(rng, (4, 6, 6), dt)
    a[0, :, 2] = 0                        # column 2 zero: U[2, 2] == 0
    a[1] = 0                              # all zero: first pivot
    a[2, :, 5] = a[2, :, 0] * 0           # last column zero
    _, lu, piv, info = _lu(a)
    piv = piv.numpy()
    assert info.tolist() == [3, 1, 6, 0]
    for b in range(4):   # factoring went on past the zero pivot
        assert np.abs(_unpivot(lu[b], piv[b]) - a[b]).max() <= _tol(a[b], 6)
    assert (lu[1] == 0).all() and (piv[1] == np.arange(6)).all()


@pytest.mark.parametrize("dt", DTYPES)
def test_lu_zero_pivot_in_a_later_panel(dt):
    """The kernel factors LA_NB = 8 columns at a time: a zero pivot past the first panel, in a
    wide and a tall matrix."""
    rng = np.random.default_rng(12)
    for shape in [(2, 20, 23), (2, 23, 20)]:
        a = _rand(rng, shape, dt)
        a[0, :, 11] = 0
        a[1, :, 17] = 0
        a[1, :, 19] = 0
        _, lu, piv, info = _lu(a)
        assert info.tolist() == [12, 18]
        for b in range(2):
            assert np.abs(_unpivot(lu[b], piv.numpy()[b]) - a[b]).max() <= _tol(a[b], 20)


@pytest.mark.parametrize("dt", DTYPES)
def test_lu_ill_conditioned(dt):
    rng = np.random.default_rng(3)
    n = 60
    u, _ = np.linalg.qr(_rand(rng, (n, n), dt))
    w, _ = np.linalg.qr(_rand(rng, (n, n), dt))
    a = (u * np.logspace(0, -12, n)) @ w
    _, lu, piv, info = _lu(a[None])
    assert info[0] == 0
    assert np.abs(_unpivot(lu[0], piv.numpy()[0]) - a).max() <= _tol(a, n)


def _hpd(rng, B, n, dt):
    x = _rand(rng, (B, n, n), dt)
    return x @ _H(x) + n * np.eye(n)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("B,n", [(1, 1), (6, 5), (3, 8), (2, 40), (1, 220)])
def test_cholesky_matches_numpy(dt, B, n):
    rng = np.random.default_rng(n)
    h = _hpd(rng, B, n, dt)
    g = np.tril(h) + np.triu(np.full_like(h, np.nan), 1)   # only the lower triangle is read
    v = View(g, strided=B != 3)
    info = _ivec(B)
    L.cholesky(v.t, info)
    got = v.get()
    assert (info.numpy() == 0).all()
    assert (np.triu(got, 1) == 0).all()
    np.testing.assert_allclose(got, np.linalg.cholesky(h), atol=_tol(h, n))
    assert np.abs(got @ _H(got) - h).max() <= _tol(h, n)


@pytest.mark.parametrize("dt", DTYPES)
def test_cholesky_not_positive_definite(dt):
    rng = np.random.default_rng(4)
    h = _hpd(rng, 5, 6, dt)
    h[0] = np.diag([1.0, 2.0, -1.0, 1.0, 1.0, 1.0])   # third pivot < 0
    h[1] = 0                                          # first pivot 0
    h[2, 4, 4] = np.nan                               # NaN pivot
    h[3, 5, 5] = 1e-3                                 # last pivot (almost surely) <= 0
    info = _ivec(5)
    v = View(h)
    L.cholesky(v.t, info)
    got = info.numpy().tolist()
    assert got[:3] == [3, 1, 5] and got[4] == 0
    try:
        np.linalg.cholesky(h[3])
        assert got[3] == 0
    except np.linalg.LinAlgError:
        assert got[3] == 6


@pytest.mark.parametrize("dt", DTYPES)
def test_cholesky_fails_in_a_later_panel(dt):
    rng = np.random.default_rng(13)
    h = _hpd(rng, 3, 20, dt)
    h[0, 13, 13] = -1e3
    h[1, 19, 19] = -1e3
    v = View(h)
    info = _ivec(3)
    L.cholesky(v.t, info)
    assert info.numpy().tolist() == [14, 20, 0]
    got = v.get()
    np.testing.assert_allclose(got[2], np.linalg.cholesky(h[2]), atol=_tol(h, 20))
    np.testing.assert_allclose(got[0][:13, :13], np.linalg.cholesky(h[0][:13, :13]),
                               atol=_tol(h, 20))


def _tri(rng, B, n, dt, lower, unit):
    """A well-conditioned triangular matrix (the one op() applies to) and its stored form:
    NaN in the triangle not read, and on the diagonal when unit."""
    a = _rand(rng, (B, n, n), dt) / np.sqrt(n) + 2 * np.eye(n)
    full = np.tril(a) if lower else np.triu(a)
    if unit:
        full[:, np.arange(n), np.arange(n)] = 1
    ones = np.ones((n, n), bool)
    keep = np.tril(ones, -1 if unit else 0) if lower else np.triu(ones, 1 if unit else 0)
    return np.where(keep, full, np.nan).astype(dt), full


def _op(a, trans):
    return a if trans == 0 else (np.swapaxes(a, -1, -2) if trans == 1 else _H(a))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_trsm(dt, lower, unit, trans):
    rng = np.random.default_rng(10 * lower + 2 * unit + trans)
    for B, n, k in [(3, 7, 4), (2, 1, 3), (1, 30, 1)]:
        stored, full = _tri(rng, B, n, dt, lower, unit)
        rhs = _rand(rng, (B, n, k), dt)
        a, x = View(stored), View(rhs)
        L.trsm(a.t, x.t, lower, unit, trans)
        got = x.get()
        np.testing.assert_allclose(got, np.linalg.solve(_op(full, trans), rhs), atol=1e-12 * n)
        assert np.isnan(a.get()[np.isnan(stored)]).all()


@pytest.mark.parametrize("dt", DTYPES)
def test_trsm_big_split_over_columns(dt):
    rng = np.random.default_rng(5)
    n, k = 200, 160
    for lower, trans in [(True, 0), (False, 2)]:
        stored, full = _tri(rng, 1, n, dt, lower, False)
        rhs = _rand(rng, (1, n, k), dt)
        x = View(rhs)
        L.trsm(View(stored).t, x.t, lower, False, trans)
        resid = _op(full, trans) @ x.get() - rhs
        assert np.abs(resid).max() <= _tol(rhs, n) * 10


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("B,n,k", [(4, 6, 1), (3, 9, 5), (1, 1, 2), (1, 200, 150), (2, 64, 3)])
def test_lu_solve_matches_numpy(dt, B, n, k):
    rng = np.random.default_rng(n * k)
    a = _rand(rng, (B, n, n), dt)
    v, _, piv, info = _lu(a)
    assert (info == 0).all()
    for trans in (0, 1, 2):
        rhs = _rand(rng, (B, n, k), dt)
        x = View(rhs)
        L.lu_solve(v.t, piv, x.t, trans)
        want = np.linalg.solve(_op(a, trans), rhs)
        np.testing.assert_allclose(x.get(), want, atol=1e-9 * max(1.0, np.abs(want).max()))


def _qr(a, mode, strided=True):
    B, m, n = a.shape
    k = min(m, n)
    kq = {"reduced": k, "complete": m, "r": None}[mode]
    v = View(a, strided)
    q = None if kq is None else View(np.zeros((B, m, kq), a.dtype), strided)
    r = View(np.zeros((B, k if kq is None else kq, n), a.dtype), strided)
    info = _ivec(B)
    L.qr(v.t, None if q is None else q.t, r.t, info)
    assert (info.numpy() == 0).all()
    return (None if q is None else q.get()), r.get()


def _check_qr(a, q, r):
    m, n = a.shape[1:]
    k = min(m, n)
    tol = _tol(a, max(m, n))
    assert (np.tril(r, -1) == 0).all() and (r[:, k:] == 0).all()
    if q is not None:
        assert np.abs(q @ r - a).max() <= tol
        assert np.abs(_H(q) @ q - np.eye(q.shape[2])).max() <= 30 * max(m, 1) * EPS


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1, 1), (4, 6, 6), (3, 9, 4), (2, 4, 9), (1, 200, 200),
                                   (1, 230, 170), (1, 170, 230)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(dt, shape, mode):
    rng = np.random.default_rng(sum(shape))
    a = _rand(rng, shape, dt)
    q, r = _qr(a, mode, strided=shape[0] != 3)
    _check_qr(a, q, r)
    k = min(shape[1:])
    want = np.linalg.qr(a, mode="r")   # the same R up to the signs of its rows
    np.testing.assert_allclose(np.abs(r[:, :k]), np.abs(want[:, :k]), atol=_tol(a, max(shape)))


@pytest.mark.parametrize("dt", DTYPES)
def test_qr_hard_inputs(dt):
    rng = np.random.default_rng(6)
    n = 50
    u, _ = np.linalg.qr(_rand(rng, (n, n), dt))
    w, _ = np.linalg.qr(_rand(rng, (n, n), dt))
    graded = (u * np.logspace(0, -12, n)) @ w
    rank3 = _rand(rng, (n, 3), dt) @ _rand(rng, (3, n), dt)
    zero = np.zeros((n, n), dt)
    rep = np.repeat(_rand(rng, (n, 1), dt), n, axis=1)   # identical columns
    a = np.stack([graded, rank3, zero, rep])
    for mode in ("reduced", "complete"):
        q, r = _qr(a, mode)
        _check_qr(a, q, r)


@pytest.mark.parametrize("dt", DTYPES)
def test_zero_sizes(dt):
    for B, m, n in [(0, 3, 3), (2, 0, 3), (2, 3, 0), (2, 0, 0)]:
        a = np.zeros((B, m, n), dt)
        _, _, piv, info = _lu(a)
        assert piv.shape == (B, min(m, n)) and (info == 0).all()
        q, r = _qr(a, "complete")
        assert q.shape == (B, m, m) and (q == np.eye(m)).all() and (r == 0).all()
        q, r = _qr(a, "reduced")
        assert q.shape == (B, m, min(m, n)) and r.shape == (B, min(m, n), n)
        if m == n:
            info = _ivec(B)
            L.cholesky(View(a).t, info)
            assert (info.numpy() == 0).all()
            rhs = View(np.ones((B, n, 2), dt))
            L.trsm(View(a).t, rhs.t, True, False, 0)
            L.lu_solve(View(a).t, piv, rhs.t, 1)
        x = View(np.ones((B, 2, 0), dt))
        L.trsm(View(np.eye(2, dtype=dt)[None].repeat(B, 0)).t, x.t, False, True, 2)


def test_one_and_two_threads_bitwise_equal():
    """The big single-matrix paths split the work over the threads; the result must not
    depend on how."""
    rng = np.random.default_rng(7)
    a = _rand(rng, (1, 210, 190), np.complex128)
    h = _hpd(rng, 1, 210, np.float64)
    rhs = _rand(rng, (1, 190, 170), np.complex128)
    keep = K.get_num_threads()
    out = []
    try:
        for nt in (1, 2):
            K.set_num_threads(nt)
            _, lu, piv, _ = _lu(a)
            piv = piv.numpy()
            q, r = _qr(a, "complete")
            c = View(h)
            L.cholesky(c.t, _ivec(1))
            sq = View(a[:, :190, :190])
            p2 = _ivec(1, 190)
            L.lu(sq.t, p2, _ivec(1))
            x = View(rhs)
            L.lu_solve(sq.t, p2, x.t, 2)
            out.append([lu, piv, q, r, c.get(), x.get()])
    finally:
        K.set_num_threads(keep)
    for one, two in zip(*out):
        assert np.array_equal(one, two, equal_nan=True)


def test_rejects_bad_arguments():
    eye = np.eye(3)[None]
    with pytest.raises(TypeError):
        L.cholesky(T.asarray(eye.astype(np.float32)), _ivec(1))
    with pytest.raises(ValueError):
        L.cholesky(T.asarray(np.ones((1, 3, 4))), _ivec(1))
    with pytest.raises(ValueError):   # piv of the wrong shape / dtype
        L.lu(T.asarray(eye, copy=True), _ivec(1, 2), _ivec(1))
    with pytest.raises(ValueError):
        L.lu(T.asarray(eye, copy=True), T.empty((1, 3), dtype=T.float64), _ivec(1))
    with pytest.raises(ValueError):
        L.trsm(T.asarray(eye), T.asarray(np.ones((1, 3, 2)), copy=True), True, False, 3)
    with pytest.raises(ValueError):
        L.trsm(T.asarray(np.eye(4)[None]), T.asarray(np.ones((1, 3, 2)), copy=True), True, False, 0)
    with pytest.raises(ValueError):   # q with neither k nor m columns
        L.qr(T.asarray(np.ones((1, 5, 3)), copy=True), T.empty((1, 5, 4), dtype=T.float64),
             T.empty((1, 4, 3), dtype=T.float64), _ivec(1))
