"""tensor.linalg against NumPy on both devices (CUDA: cuda_src/linalg*.cuh, on the emulator or a
GPU): every function, batched, float32/float64/complex64/complex128, transposed and strided
inputs, residual and orthogonality checks within a small multiple of n * eps * ||A|| (random
and ill-conditioned matrices), shapes 0 and 1, and the errors (LinAlgError naming the batch
element). Gradients: tests/test_la_autograd.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as T

L = T.linalg
pytestmark = pytest.mark.usefixtures("device")
DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def _eps(d) -> float:
    return float(np.finfo(d).eps)


def _rand(rng, shape, d, cond=None):
    """Random matrices of dtype d (with singular values graded from 1 to 1/cond when asked)."""
    a = rng.standard_normal(shape)
    if np.dtype(d).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    if cond is not None:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        k = min(shape[-2:])
        s = np.logspace(0, -math.log10(cond), k)
        a = (u * s[..., None, :]) @ vh
    return a.astype(d)


def _herm(rng, n, d, batch=()):
    a = _rand(rng, batch + (n, n), d)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(d)


def _np(t):
    return t.numpy() if isinstance(t, T.Tensor) else np.asarray(t)


def _strided(a, kind):
    """A tensor holding a's values: contiguous, transposed (a transposed copy viewed back), or
    a column slice of a wider buffer (row stride > n)."""
    if kind == "T":
        return T.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT
    if kind == "wide":
        big = np.zeros(a.shape[:-1] + (a.shape[-1] + 3,), a.dtype)
        big[..., 1:1 + a.shape[-1]] = a
        return T.asarray(big)[..., 1:1 + a.shape[-1]]
    return T.asarray(a)


def _tol(d, n, norm=1.0, k=30.0):
    return k * max(n, 1) * _eps(d) * max(norm, 1.0)


def _fro(x):
    return np.linalg.norm(x.reshape(-1, *x.shape[-2:]), axis=(-2, -1)).max(initial=0.0)


@pytest.mark.parametrize("d", DTYPES)
@pytest.mark.parametrize("kind", ["C", "T", "wide"])
def test_solve_inv_det(d, kind):
    rng = np.random.default_rng(0)
    a = _rand(rng, (3, 5, 5), d) + 3 * np.eye(5, dtype=d)
    b = _rand(rng, (3, 5, 2), d)
    A = _strided(a, kind)
    x = _np(L.solve(A, T.asarray(b)))
    assert x.dtype == d
    assert _fro(a @ x - b) <= _tol(d, 5, _fro(a) * _fro(x))
    np.testing.assert_allclose(_np(L.inv(A)), np.linalg.inv(a), rtol=1e3 * _eps(d), atol=1e3 * _eps(d))
    np.testing.assert_allclose(_np(L.det(A)), np.linalg.det(a), rtol=1e3 * _eps(d))
    s, ld = L.slogdet(A)
    s0, ld0 = np.linalg.slogdet(a)
    np.testing.assert_allclose(_np(s), s0, rtol=1e3 * _eps(d), atol=1e3 * _eps(d))
    np.testing.assert_allclose(_np(ld), ld0, rtol=1e3 * _eps(d), atol=1e3 * _eps(d))
    v = _rand(rng, (5,), d)                        # a 1-D right-hand side is a vector
    np.testing.assert_allclose(_np(L.solve(A[0], T.asarray(v))), np.linalg.solve(a[0], v),
                               rtol=1e3 * _eps(d), atol=1e3 * _eps(d))
    xr = _np(L.solve(A, T.asarray(_rand(rng, (3, 2, 5), d)), left=False))
    assert xr.shape == (3, 2, 5)


def test_solve_broadcasts_batches_and_ill_conditioned():
    rng = np.random.default_rng(1)
    a = _rand(rng, (2, 1, 6, 6), np.float64, cond=1e10)
    b = _rand(rng, (3, 6, 4), np.float64)
    x = _np(L.solve(T.asarray(a), T.asarray(b)))
    assert x.shape == (2, 3, 6, 4)
    # backward stable: the residual is small relative to ||A|| ||x||
    r = np.abs(a @ x - b).max() / (np.abs(a).max() * np.abs(x).max())
    assert r < 1e3 * _eps(np.float64)


@pytest.mark.parametrize("d", DTYPES)
def test_cholesky(d):
    rng = np.random.default_rng(2)
    a = _herm(rng, 6, d, (2,))
    low = _np(L.cholesky(T.asarray(a)))
    np.testing.assert_allclose(low, np.linalg.cholesky(a), rtol=1e3 * _eps(d), atol=1e3 * _eps(d) * 6)
    up = _np(L.cholesky(T.asarray(a), upper=True))
    np.testing.assert_allclose(up, np.conj(np.swapaxes(low, -1, -2)), rtol=1e-6)
    # only the lower triangle is read
    junk = a + np.triu(_rand(rng, a.shape, d), 1)
    np.testing.assert_allclose(_np(L.cholesky(T.asarray(junk))), low, rtol=1e-12 if d == np.float64 else 1e-5)


@pytest.mark.parametrize("d", DTYPES)
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (5, 5), (2, 6, 3)])
def test_qr(d, shape):
    rng = np.random.default_rng(3)
    a = _rand(rng, shape, d)
    m, n = shape[-2:]
    for mode in ("reduced", "complete"):
        q, r = (_np(x) for x in L.qr(T.asarray(a), mode=mode))
        k = min(m, n) if mode == "reduced" else m
        assert q.shape == shape[:-2] + (m, k) and r.shape == shape[:-2] + (k, n)
        assert _fro(q @ r - a) <= _tol(d, max(m, n), _fro(a))
        qhq = np.conj(np.swapaxes(q, -1, -2)) @ q
        assert _fro(qhq - np.eye(k)) <= _tol(d, m)
        assert np.abs(np.tril(r, -1)).max(initial=0) == 0
    q_none, r_only = L.qr(T.asarray(a), mode="r")
    assert q_none.shape == (0,)   # PyTorch's empty Q
    np.testing.assert_allclose(np.abs(_np(r_only)), np.abs(np.linalg.qr(a, mode="r")),
                               rtol=1e3 * _eps(d), atol=1e3 * _eps(d) * max(m, n))


@pytest.mark.parametrize("d", DTYPES)
def test_eigh(d):
    rng = np.random.default_rng(4)
    a = _rand(rng, (3, 6, 6), d)
    a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    w, v = (_np(x) for x in L.eigh(T.asarray(a)))
    w0 = np.linalg.eigvalsh(a)
    assert w.dtype == np.finfo(d).dtype
    np.testing.assert_allclose(w, w0, atol=_tol(d, 6, np.abs(w0).max()))
    assert _fro(a @ v - v * w[..., None, :]) <= _tol(d, 6, _fro(a))
    assert _fro(np.conj(np.swapaxes(v, -1, -2)) @ v - np.eye(6)) <= _tol(d, 6)
    np.testing.assert_allclose(_np(L.eigvalsh(T.asarray(a))), w0, atol=_tol(d, 6, np.abs(w0).max()))
    wu = _np(L.eigvalsh(T.asarray(a), UPLO="U"))
    np.testing.assert_allclose(wu, w0, atol=_tol(d, 6, np.abs(w0).max()))


def test_eigh_repeated_eigenvalues():
    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    w0 = np.array([1, 1, 1, 2, 2, 5, 5, 5.0])
    a = (q * w0) @ q.T
    w, v = (_np(x) for x in L.eigh(T.asarray(a)))
    np.testing.assert_allclose(w, w0, atol=1e-13)
    assert np.abs(a @ v - v * w).max() < 1e-13
    assert np.abs(v.T @ v - np.eye(8)).max() < 1e-13


@pytest.mark.parametrize("d", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (2, 7, 3)])
def test_svd(d, shape):
    rng = np.random.default_rng(6)
    a = _rand(rng, shape, d)
    m, n = shape[-2:]
    k = min(m, n)
    s0 = np.linalg.svd(a, compute_uv=False)
    for full in (False, True):
        u, s, vh = (_np(x) for x in L.svd(T.asarray(a), full_matrices=full))
        assert u.shape[-2:] == ((m, m) if full else (m, k))
        assert vh.shape[-2:] == ((n, n) if full else (k, n))
        np.testing.assert_allclose(s, s0, atol=_tol(d, max(m, n), s0.max()))
        assert _fro((u[..., :k] * s[..., None, :]) @ vh[..., :k, :] - a) <= _tol(d, max(m, n), _fro(a))
        for x in (u, np.conj(np.swapaxes(vh, -1, -2))):
            assert _fro(np.conj(np.swapaxes(x, -1, -2)) @ x - np.eye(x.shape[-1])) <= _tol(d, max(m, n))
    np.testing.assert_allclose(_np(L.svdvals(T.asarray(a))), s0, atol=_tol(d, max(m, n), s0.max()))


def test_svd_rank_deficient_and_graded():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 3)) @ rng.standard_normal((3, 6))     # rank 3
    s = _np(L.svdvals(T.asarray(a)))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-13 * s[0])
    assert int(L.matrix_rank(T.asarray(a))) == 3
    g = _rand(rng, (7, 7), np.float64, cond=1e12)
    u, s, vh = (_np(x) for x in L.svd(T.asarray(g)))
    assert np.abs((u * s) @ vh - g).max() < 1e-14 * 7 * 10
    np.testing.assert_allclose(s, np.linalg.svd(g, compute_uv=False), atol=1e-14 * 7 * 10)


@pytest.mark.parametrize("d", [np.float64, np.complex128, np.float32])
def test_eig(d):
    rng = np.random.default_rng(8)
    a = _rand(rng, (2, 6, 6), d)
    w, v = (_np(x) for x in L.eig(T.asarray(a)))
    assert w.dtype.kind == "c" and v.dtype.kind == "c"
    w0 = np.linalg.eigvals(a)
    for i in range(2):
        _same_set(w[i], w0[i], _tol(d, 6, np.abs(w0).max(), 300))
    assert _fro(a @ v - v * w[..., None, :]) <= _tol(d, 6, _fro(a), 300)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e3 * _eps(d))
    _same_set(_np(L.eigvals(T.asarray(a)))[0], w0[0], _tol(d, 6, np.abs(w0).max(), 300))


def _same_set(a, b, tol):
    """The complex numbers a and b are the same multiset to tol (each one near the other's)."""
    dist = np.abs(a[:, None] - b[None, :])
    assert dist.min(axis=1).max() <= tol and dist.min(axis=0).max() <= tol, (a, b)


def test_lu_family():
    rng = np.random.default_rng(9)
    for shape in [(5, 5), (2, 6, 4), (4, 6)]:
        a = _rand(rng, shape, np.float64)
        p, low, up = (_np(x) for x in L.lu(T.asarray(a)))
        np.testing.assert_allclose(p @ low @ up, a, atol=1e-13)
        assert np.all(np.abs(np.tril(low, -1)) <= 1 + 1e-15)      # partial pivoting
    a = _rand(rng, (3, 5, 5), np.complex128)
    lu, piv = L.lu_factor(T.asarray(a))
    assert piv.dtype == T.int32 and int(T.min(piv)) >= 1
    b = _rand(rng, (3, 5, 2), np.complex128)
    for adjoint in (False, True):
        x = _np(L.lu_solve(lu, piv, T.asarray(b), adjoint=adjoint))
        m = np.conj(np.swapaxes(a, -1, -2)) if adjoint else a
        np.testing.assert_allclose(m @ x, b, atol=1e-12)
    x = _np(L.lu_solve(lu, piv, T.asarray(np.swapaxes(b, -1, -2)), left=False))
    np.testing.assert_allclose(x @ a, np.swapaxes(b, -1, -2), atol=1e-12)


@pytest.mark.parametrize("d", [np.float64, np.complex64])
def test_solve_triangular(d):
    rng = np.random.default_rng(10)
    a = _rand(rng, (2, 5, 5), d) + 4 * np.eye(5, dtype=d)
    b = _rand(rng, (2, 5, 3), d)
    tol = 1e3 * _eps(d)
    for upper in (True, False):
        t = np.triu(a) if upper else np.tril(a)
        x = _np(L.solve_triangular(T.asarray(a), T.asarray(b), upper=upper))
        np.testing.assert_allclose(t @ x, b, atol=tol * 10)
        xu = _np(L.solve_triangular(T.asarray(a), T.asarray(b), upper=upper, unitriangular=True))
        tu = np.triu(a, 1) if upper else np.tril(a, -1)
        np.testing.assert_allclose((tu + np.eye(5)) @ xu, b, atol=tol * 100)
        xr = _np(L.solve_triangular(T.asarray(a), T.asarray(np.swapaxes(b, -1, -2)), upper=upper,
                                    left=False))
        np.testing.assert_allclose(xr @ t, np.swapaxes(b, -1, -2), atol=tol * 10)


def test_pinv_lstsq_rank_cond():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 4))
    np.testing.assert_allclose(_np(L.pinv(T.asarray(a))), np.linalg.pinv(a), atol=1e-13)
    r = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 5))
    np.testing.assert_allclose(_np(L.pinv(T.asarray(r))), np.linalg.pinv(r), atol=1e-12)
    b = rng.standard_normal((6, 3))
    got = L.lstsq(T.asarray(a), T.asarray(b))
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(_np(got.solution), want[0], atol=1e-13)
    np.testing.assert_allclose(_np(got.residuals), want[1], rtol=1e-12)
    assert int(got.rank) == want[2]
    np.testing.assert_allclose(_np(got.singular_values), want[3], rtol=1e-13)
    got = L.lstsq(T.asarray(r), T.asarray(b))           # rank deficient: the minimum-norm one
    np.testing.assert_allclose(_np(got.solution), np.linalg.lstsq(r, b, rcond=None)[0], atol=1e-12)
    assert int(L.matrix_rank(T.asarray(r))) == 2
    np.testing.assert_allclose(float(L.cond(T.asarray(a))), np.linalg.cond(a), rtol=1e-12)
    np.testing.assert_allclose(float(L.cond(T.asarray(a[:4]), "fro")), np.linalg.cond(a[:4], "fro"),
                               rtol=1e-12)
    # a singular batch element: cond inf there (not an error from inv), the others as NumPy's
    sg = np.stack([np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[2.0, 1.0], [1.0, 3.0]])])
    for p in ("fro", 1, -1, math.inf, "nuc"):
        got = _np(L.cond(T.asarray(sg), p))
        assert got[0] == math.inf and got[1] == pytest.approx(np.linalg.cond(sg[1], p), rel=1e-13)
    # rcond < 0: machine precision (NumPy's), not a negative cutoff that inverts zeros
    rd = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    got = L.lstsq(T.asarray(rd), T.asarray([1.0, 2.0, 3.0]), rcond=-1)
    np.testing.assert_allclose(_np(got.solution), [0.2, 0.4], rtol=1e-13)
    assert int(got.rank) == 1


@pytest.mark.parametrize("d", [np.float64, np.complex128, np.float32])
def test_norms(d):
    rng = np.random.default_rng(12)
    a = _rand(rng, (3, 4, 5), d)
    tol = dict(rtol=1e2 * _eps(d), atol=1e2 * _eps(d))
    for o in (2, 1, 3, 0.5, math.inf, -math.inf, 0):
        got = _np(L.vector_norm(T.asarray(a), ord=o, axis=-1))
        np.testing.assert_allclose(got, np.linalg.norm(a, ord=o, axis=-1), **tol)
    np.testing.assert_allclose(_np(L.vector_norm(T.asarray(a))), np.linalg.norm(a.ravel()), **tol)
    got = _np(L.vector_norm(T.asarray(a), axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(got, np.sqrt((np.abs(a) ** 2).sum(axis=(0, 2), keepdims=True)), **tol)
    for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        np.testing.assert_allclose(_np(L.matrix_norm(T.asarray(a), ord=o)),
                                   np.linalg.norm(a, ord=o, axis=(-2, -1)), **tol)
        np.testing.assert_allclose(_np(L.norm(T.asarray(a[0]), o)), np.linalg.norm(a[0], o), **tol)
    np.testing.assert_allclose(_np(L.norm(T.asarray(a))), np.linalg.norm(a), **tol)
    np.testing.assert_allclose(_np(L.norm(T.asarray(a), axis=1)), np.linalg.norm(a, axis=1), **tol)
    assert L.matrix_norm(T.asarray(a), keepdims=True).shape == (3, 1, 1)


@pytest.mark.parametrize("d", ["float16", "bfloat16"])
def test_16_bit_norms_accumulate_in_float32(d):
    """The squares were taken in float16: 1000 x 300 gave inf, 100 x 1e-4 gave 0."""
    for v, n in ((300.0, 1000), (1e-4, 100)):
        x = T.full((n,), v, dtype=d)
        exact = float(x[0].item()) * math.sqrt(n)
        for got in (L.vector_norm(x), L.norm(x), L.matrix_norm(x.reshape(10, -1)),
                    L.vector_norm(x, ord=3) * (n ** (1 / 2 - 1 / 3))):
            assert got.dtype.name == d
            assert abs(float(got.item()) - exact) <= 1e-2 * exact, (d, v, got)


def test_products_and_the_rest():
    rng = np.random.default_rng(13)
    a = rng.standard_normal((4, 4))
    np.testing.assert_allclose(_np(L.matrix_power(T.asarray(a), 5)), np.linalg.matrix_power(a, 5),
                               rtol=1e-12)
    np.testing.assert_allclose(_np(L.matrix_power(T.asarray(a), -2)), np.linalg.matrix_power(a, -2),
                               rtol=1e-10)
    np.testing.assert_allclose(_np(L.matrix_power(T.asarray(a), 0)), np.eye(4))
    xs = [rng.standard_normal(s) for s in [(3,), (3, 10), (10, 2), (2, 5), (5,)]]
    np.testing.assert_allclose(_np(L.multi_dot([T.asarray(x) for x in xs])), np.linalg.multi_dot(xs),
                               rtol=1e-12)
    u, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(_np(L.cross(T.asarray(u), T.asarray(v))), np.cross(u, v), rtol=1e-12)
    np.testing.assert_allclose(_np(L.cross(T.asarray(u.swapaxes(1, 2)), T.asarray(v.T), axis=-2)),
                               np.cross(u.swapaxes(1, 2), v.T, axis=-2), rtol=1e-12)
    b = rng.standard_normal((2, 3, 5, 5))
    np.testing.assert_allclose(_np(L.trace(T.asarray(b), offset=1)), np.trace(b, 1, -2, -1), rtol=1e-12)
    np.testing.assert_allclose(_np(L.diagonal(T.asarray(b), offset=-1)), np.diagonal(b, -1, -2, -1))
    np.testing.assert_allclose(_np(L.outer(T.asarray(u[0, 0]), T.asarray(v[0]))), np.outer(u[0, 0], v[0]))
    np.testing.assert_allclose(_np(L.matmul(T.asarray(a), T.asarray(a))), a @ a, rtol=1e-12)
    np.testing.assert_allclose(_np(L.vecdot(T.asarray(u), T.asarray(v))), (u * v).sum(-1), rtol=1e-12)
    assert L.matrix_transpose(T.asarray(b)).shape == (2, 3, 5, 5)
    assert L.tensordot(T.asarray(a), T.asarray(a), axes=1).shape == (4, 4)


def test_integer_input_gives_float64():
    a = T.asarray([[2, 1], [1, 3]])
    assert L.inv(a).dtype == T.float64
    assert L.det(a).dtype == T.float64
    np.testing.assert_allclose(float(L.det(a)), 5.0)
    for o in ("fro", 1, -1, math.inf, -math.inf, 2, "nuc"):   # NumPy: float64 for every ord
        assert L.matrix_norm(a, ord=o).dtype == T.float64
    # matrix_power keeps the dtype for every n >= 0 (NumPy's), 0 included
    assert L.matrix_power(a, 0).dtype == L.matrix_power(a, 2).dtype == a.dtype
    assert L.matrix_power(a, 0).tolist() == [[1, 0], [0, 1]]


def test_empty_and_one_by_one():
    for f in (L.inv, L.cholesky, L.det, L.eigvalsh, L.svdvals):
        r = f(T.zeros((2, 0, 0)))
        assert r.shape[0] == 2
    assert float(L.det(T.zeros((0, 0)))) == 1.0
    u, s, vh = L.svd(T.zeros((3, 0)))
    assert u.shape == (3, 3) and s.shape == (0,) and vh.shape == (0, 0)
    q, r = L.qr(T.zeros((3, 0)), mode="complete")
    assert q.shape == (3, 3) and r.shape == (3, 0)
    np.testing.assert_allclose(_np(q), np.eye(3))
    np.testing.assert_allclose(_np(L.inv(T.asarray([[4.0]]))), [[0.25]])
    w, v = L.eigh(T.asarray([[3.0]]))
    assert w.tolist() == [3.0] and abs(v.tolist()[0][0]) == 1.0
    assert L.eig(T.asarray([[2.0]])).eigenvalues.tolist() == [2 + 0j]


def test_errors():
    sing = T.asarray([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    with pytest.raises(L.LinAlgError, match=r"linalg.inv: \(Batch element 0\).*singular"):
        L.inv(sing)
    with pytest.raises(L.LinAlgError, match=r"linalg.solve: .*singular"):
        L.solve(sing[0], T.ones(2))
    with pytest.raises(np.linalg.LinAlgError.__mro__[1]):     # a ValueError, as NumPy's
        L.inv(sing[0])
    with pytest.raises(RuntimeError):                         # a RuntimeError, as PyTorch's
        L.inv(sing[0])
    npd = T.asarray([[[2.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(L.LinAlgError, match=r"linalg.cholesky: \(Batch element 1\).*order 2 is not "
                                            "positive-definite"):
        L.cholesky(npd)
    with pytest.raises(ValueError, match=r"linalg.inv: expected square matrices, got shape \(2, 3\)"):
        L.inv(T.ones((2, 3)))
    with pytest.raises(ValueError, match="linalg.det: expected a matrix"):
        L.det(T.ones(3))
    with pytest.raises(ValueError, match=r"linalg.solve: shapes \(3, 3\) and \(2,\) do not match"):
        L.solve(T.eye(3), T.ones(2))
    with pytest.raises(ValueError, match="linalg.qr: mode must be"):
        L.qr(T.eye(3), mode="full")
    with pytest.raises(ValueError, match="linalg.eigh: UPLO must be"):
        L.eigh(T.eye(3), UPLO="X")
    with pytest.raises(ValueError, match="linalg.cross: axis -1 must have size 3"):
        L.cross(T.ones(2), T.ones(2))
    with pytest.raises(ValueError, match="linalg.matrix_norm: unsupported ord"):
        L.matrix_norm(T.eye(2), ord=3)
    # nothing broken afterwards
    np.testing.assert_allclose(_np(L.inv(T.eye(2) * 2)), np.eye(2) / 2)


@pytest.mark.parametrize("d", [np.float64, np.complex128])
def test_blocked_lu_and_cholesky(d, monkeypatch):
    """The blocked drivers (tensor/linalg/_blocked.py: panels by the kernels, trailing updates by
    our GEMM), which CUDA takes for large matrices, forced on small ones here."""
    from tensor.linalg import _blocked
    dev = T.get_default_device().type
    monkeypatch.setattr(_blocked, "NB", 4)
    monkeypatch.setattr(_blocked, "MIN_N", {dev: 6})
    rng = np.random.default_rng(14)
    a = _rand(rng, (2, 11, 11), d)
    lu, piv = L.lu_factor(T.asarray(a))
    p, low, up = (_np(x) for x in L.lu(T.asarray(a)))
    np.testing.assert_allclose(p @ low @ up, a, atol=1e-13)
    bound = 1 if d == np.float64 else math.sqrt(2)    # pivots by |re| + |im|, as LAPACK's
    assert np.all(np.abs(np.tril(low, -1)) <= bound + 1e-15)
    b = _rand(rng, (2, 11, 3), d)
    np.testing.assert_allclose(a @ _np(L.solve(T.asarray(a), T.asarray(b))), b, atol=1e-12)
    for shape in [(9, 13), (13, 9)]:
        r = _rand(rng, shape, d)
        p, low, up = (_np(x) for x in L.lu(T.asarray(r)))
        np.testing.assert_allclose(p @ low @ up, r, atol=1e-13)
    h = _herm(rng, 11, d, (2,))
    np.testing.assert_allclose(_np(L.cholesky(T.asarray(h))), np.linalg.cholesky(h), atol=1e-12)
    h[1, 7, 7] = -100.0
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\).*order 8 is not positive"):
        L.cholesky(T.asarray(h))
    s = a.copy()
    s[0, :, 6] = 0                             # singular: U[6, 6] is exactly 0
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 0\).*singular"):
        L.solve(T.asarray(s), T.asarray(b))


def test_large_matrices_on_cuda_run_the_cpu_kernels_on_a_host_copy(monkeypatch):
    """On CUDA, qr / eigh / svd / eig of HOST_LINALG (64) rows or more run the CPU backend's
    kernels on a host copy (one block a matrix on one SM is 10-1000x slower there): strided
    inputs are read and outputs written back in place; below it, or with the threshold
    raised, the device kernels run, with the same results."""
    if T.get_default_device().type != "cuda":
        pytest.skip("the CUDA backend's dispatch")
    from tensor.backend import cpu as host
    from tensor.backend import cuda as dev
    calls = []
    for name in ("la_qr", "la_eigh", "la_svd", "la_eig"):
        fn = getattr(host, name)
        monkeypatch.setattr(host, name, lambda *a, _f=fn, _n=name: (calls.append(_n), _f(*a))[1])
    rng = np.random.default_rng(7)
    a = _herm(rng, 70, np.float64, (2,))
    big = T.asarray(np.stack([a, -a], axis=-1).reshape(2, 70, 140))[..., ::2]   # strided: a
    results = []
    for threshold in (64, 10 ** 9):
        monkeypatch.setattr(dev, "HOST_LINALG", threshold)
        w, v = L.eigh(big)
        q, r = L.qr(big[:, :, :40])
        s = L.svdvals(big)
        e = L.eigvals(T.asarray(a[0] + 0j))
        results.append([x.numpy() for x in (w, abs(v), abs(q), abs(r), s)] + [np.sort_complex(e.numpy())])
    assert sorted(calls) == ["la_eig", "la_eigh", "la_qr", "la_svd"], calls   # (the first pass)
    np.testing.assert_allclose(results[0][0], np.linalg.eigvalsh(a), rtol=1e-12, atol=1e-10)
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9)


def test_edge_inputs_as_numpy():
    """Zero, empty and NaN matrices (a differential hunt against NumPy found these); the CPU's
    SVD and eigh meet a NaN as the CUDA kernels do."""
    LA = T.linalg
    for p in (None, 2, -2):            # 0 / 0 is inf, as NumPy's
        assert LA.cond(T.zeros((2, 2)), p).item() == np.linalg.cond(np.zeros((2, 2)), p) == math.inf
    assert LA.cond(T.asarray([[1.0, 0.0], [0.0, 0.0]]), -2).item() == 0.0
    with pytest.raises(LA.LinAlgError, match="linalg.cond: not defined on empty matrices"):
        LA.cond(T.zeros((2, 0, 0)))
    for shape, ord in (((3, 0), 2), ((3, 0), 1), ((0, 3), math.inf)):
        assert LA.norm(T.zeros(shape), ord).item() == np.linalg.norm(np.zeros(shape), ord) == 0.0
    assert LA.matrix_norm(T.zeros((2, 0, 0)), ord=1, keepdims=True).numpy().tolist() == [[[0.0]], [[0.0]]]
    nan = T.asarray([[math.nan, 1.0], [1.0, 1.0]])
    for f in (LA.pinv, LA.matrix_rank, LA.svdvals, LA.cond):   # NumPy: "SVD did not converge"
        with pytest.raises(LA.LinAlgError, match="failed to converge"):
            f(nan)       # (they had dropped the NaN singular value: rank 0, a zero pinv)
    assert np.isnan(LA.eigvalsh(nan).numpy()).all() and np.isnan(LA.eigh(nan)[1].numpy()).all()
    with pytest.raises(TypeError, match="roll: shift must be an int or a tuple of ints, got 1.5"):
        T.roll(T.arange(3), 1.5)
    with pytest.raises(ZeroDivisionError, match="fftfreq: the sample spacing d must not be 0"):
        T.fft.fftfreq(3, d=0)


def _expm_ref(a: np.ndarray) -> np.ndarray:
    """exp(a) in float64 / complex128, matrix by matrix: a 30-term Taylor series of m / 2**s
    (||m / 2**s||_1 < 1/4), squared s times: the test's own reference (NumPy has none)."""
    a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    out = np.empty_like(a)
    for i in np.ndindex(a.shape[:-2]):
        norm = np.abs(a[i]).sum(0).max()
        s = max(0, math.ceil(math.log2(norm * 4))) if norm > 0.25 else 0
        x = a[i] / 2.0 ** s
        e = term = np.eye(a.shape[-1], dtype=a.dtype)
        for k in range(1, 31):
            term = term @ x / k
            e = e + term
        for _ in range(s):
            e = e @ e
        out[i] = e
    return out


@pytest.mark.parametrize("d", DTYPES)
def test_matrix_exp(d):
    """Padé 13 with per-matrix scaling: a batch mixing tiny and large norms (different numbers of
    squarings), transposed input; exact on nilpotent and diagonal matrices."""
    rng = np.random.default_rng(3)
    scales = np.array([1e-3, 0.5, 3.0, 20.0])[:, None, None]
    a = (_rand(rng, (4, 5, 5), d) * scales).astype(d)
    for x in (a, np.swapaxes(a, -1, -2)):
        ours = L.matrix_exp(T.asarray(a).mT if x is not a else T.asarray(a))
        assert ours.dtype == T.asarray(a).dtype and ours.shape == a.shape
        ref = _expm_ref(x)
        scale = np.abs(ref).max(axis=(-2, -1), keepdims=True)
        tol = 200 * _eps(d) * (1 + np.abs(x).sum(-2).max(-1)[:, None, None])
        assert (np.abs(ours.numpy() - ref) <= tol * scale).all()
    sym = _herm(rng, 4, np.float64)           # exp of a symmetric matrix through its eigenbasis
    w, v = np.linalg.eigh(sym / 4)
    np.testing.assert_allclose(L.matrix_exp(T.asarray(sym / 4)).numpy(), (v * np.exp(w)) @ v.T,
                               rtol=1e-12)
    np.testing.assert_array_equal(L.matrix_exp(T.asarray([[0.0, 1e30], [0.0, 0.0]])).numpy(),
                                  [[1.0, 1e30], [0.0, 1.0]])
    np.testing.assert_allclose(L.matrix_exp(T.asarray(np.diag([-40.0, 0.0, 30.0]))).numpy(),
                               np.diag(np.exp([-40.0, 0.0, 30.0])), rtol=1e-13)


def test_matrix_exp_dtypes_and_edges():
    ints = L.matrix_exp(T.asarray([[1, 2], [3, 4]]))           # integers: float64, as det / inv
    assert ints.dtype == T.float64
    np.testing.assert_allclose(ints.numpy(), _expm_ref(np.array([[1.0, 2.0], [3.0, 4.0]])), rtol=1e-13)
    half = L.matrix_exp(T.asarray([[0.0, 1.0], [-1.0, 0.0]], dtype=T.float16))
    assert half.dtype == T.float16                               # computed in float32
    np.testing.assert_allclose(half.numpy().astype(np.float64),
                               [[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]], atol=1e-3)
    assert L.matrix_exp(T.zeros((0, 0))).shape == (0, 0)
    assert L.matrix_exp(T.zeros((3, 0, 2, 2))).shape == (3, 0, 2, 2)
    both = L.matrix_exp(T.asarray([[[math.nan, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]]]))
    assert np.isnan(both.numpy()[0]).all()                       # a NaN spoils its own matrix only
    np.testing.assert_array_equal(both.numpy()[1], [[1.0, 1.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"linalg.matrix_exp: expected square matrices, got shape \(2, 3\)"):
        L.matrix_exp(T.zeros((2, 3)))
    with pytest.raises(ValueError, match="linalg.matrix_exp: expected a matrix"):
        L.matrix_exp(T.zeros(3))
