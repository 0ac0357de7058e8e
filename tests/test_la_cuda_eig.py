"""CUDA eigen- and singular value kernels (tensor/cuda/linalg_eig.py, cuda_src/linalg_eig.cuh)
called directly: eigh, svd, eig against np.linalg and by their residuals (A V - V diag(w),
A - U S Vh, V^H V - I, unit eigenvectors), on random, graded, rank-deficient, repeated-eigenvalue,
zero, 1x1 and 0-size matrices, batched, with row strides > n, float64 and complex128. On the
emulator when there is no GPU, so the sizes stay small (n <= 16). Also: every kernel of the
family compiles with NVRTC for sm_80 / sm_90 / sm_100 (skipped without cuda.bindings.nvrtc).
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT

import tensor as T
import tensor.cuda.linalg_eig as LE  # registers the family "linalg_eig"

EPS = np.finfo(np.float64).eps
cuda = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")


def _mat(rng, shape, cplx):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if cplx else a


def _dev(a, pad=0):
    """a (B, m, n) on the device; with pad > 0 as a view whose row stride is n + pad and whose
    batch stride is larger still."""
    B, m, n = a.shape
    if not pad:
        return T.asarray(np.ascontiguousarray(a), device="cuda")
    big = np.zeros((B, m + 1, n + pad), a.dtype)
    big[:, :m, :n] = a
    return T.asarray(big, device="cuda")[:, :m, :n]


def _out(shape, dtype, pad=0):
    if not pad:
        return T.empty(shape, dtype=dtype, device="cuda")
    B, m, n = shape
    return T.zeros((B, m + 1, n + pad), dtype=dtype, device="cuda")[:, :m, :n]


def _info(B):
    return T.full((B,), -7, dtype=T.int64, device="cuda")


def _graded(rng, n, vals, cplx):
    q, _ = np.linalg.qr(_mat(rng, (n, n), cplx))
    return (q * vals) @ q.conj().T


# ---------------- eigh ----------------

def _eigh(a, vectors=True, pad=0, junk=True):
    """Run the kernel on a (B, n, n) (upper triangle replaced by junk: only the lower is read)."""
    B, n, _ = a.shape
    x = a.copy()
    if junk and n > 1:
        iu = np.triu_indices(n, 1)
        x[:, iu[0], iu[1]] = 1e3
    t = _dev(x, pad)
    w = T.empty((B, n), dtype=T.float64, device="cuda")
    info = _info(B)
    LE.eigh(t, w, vectors, info)
    return w.numpy(), (t.numpy() if vectors else None), info.numpy()


def _check_eigh(a, w, v, info, tol=30.0):
    n = a.shape[-1]
    assert (info == 0).all()
    nrm = max(np.abs(a).max(initial=0.0), 1e-300) * max(n, 1)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=0, atol=tol * n * EPS * nrm)
    assert (np.diff(w, axis=-1) >= 0).all()
    if v is not None and n:
        r = a @ v - v * w[:, None, :]
        assert np.abs(r).max() <= tol * n * EPS * nrm
        e = v.conj().transpose(0, 2, 1) @ v - np.eye(n)
        assert np.abs(e).max() <= tol * n * EPS


@cuda
@pytest.mark.parametrize("cplx", [False, True])
def test_eigh_random_batched_strided(cplx):
    rng = np.random.default_rng(1)
    for n, B, pad in [(1, 2, 0), (2, 3, 2), (5, 2, 0), (8, 3, 3), (13, 2, 1)]:
        a = _mat(rng, (B, n, n), cplx)
        a = a + a.conj().transpose(0, 2, 1)
        w, v, info = _eigh(a, pad=pad)
        _check_eigh(a, w, v, info)
        w2, _, info2 = _eigh(a, vectors=False, pad=pad)
        assert np.array_equal(w, w2) and (info2 == 0).all()


@cuda
@pytest.mark.parametrize("cplx", [False, True])
def test_eigh_special_spectra(cplx):
    """Repeated, graded (1e-12 .. 1, relative accuracy of the small ones), indefinite, zero."""
    rng = np.random.default_rng(2)
    n = 9
    cases = [np.array([1, 1, 1, 2, 2, -3, -3, -3, 0.5]), np.logspace(-12, 0, n),
             np.array([-1e-12, 1e-12, 1, -1, 1e-6, -1e-6, 0, 0, 3])]
    a = np.stack([_graded(rng, n, c, cplx) for c in cases] + [np.zeros((n, n), a_dt := (
        np.complex128 if cplx else np.float64))]).astype(a_dt)
    w, v, info = _eigh(a)
    _check_eigh(a, w, v, info)
    np.testing.assert_allclose(w[1], np.logspace(-12, 0, n), rtol=0, atol=1e-14)
    assert np.array_equal(w[3], np.zeros(n)) and np.array_equal(v[3], np.eye(n))


@cuda
def test_eigh_empty_and_deterministic():
    w = T.empty((0, 3), dtype=T.float64, device="cuda")
    LE.eigh(T.empty((0, 3, 3), dtype=T.float64, device="cuda"), w, True, _info(0))
    for vectors in (True, False):
        info = _info(2)
        LE.eigh(T.empty((2, 0, 0), dtype=T.float64, device="cuda"),
                T.empty((2, 0), dtype=T.float64, device="cuda"), vectors, info)
        assert np.array_equal(info.numpy(), [0, 0])
    rng = np.random.default_rng(3)
    a = _mat(rng, (2, 7, 7), True)
    a = a + a.conj().transpose(0, 2, 1)
    r1, r2 = _eigh(a), _eigh(a)
    assert np.array_equal(r1[0], r2[0]) and np.array_equal(r1[1], r2[1])


# ---------------- svd ----------------

def _svd(a, full, vecs=True, pad=0):
    B, m, n = a.shape
    k = min(m, n)
    t = _dev(a, pad)
    s = T.empty((B, k), dtype=T.float64, device="cuda")
    info = _info(B)
    d = T.complex128 if np.iscomplexobj(a) else T.float64
    u = _out((B, m, m if full else k), d, pad) if vecs else None
    vh = _out((B, n if full else k, n), d, pad) if vecs else None
    LE.svd(t, s, u, vh, info)
    return s.numpy(), (u.numpy() if vecs else None), (vh.numpy() if vecs else None), info.numpy()


def _check_svd(a, s, u, vh, info, tol=30.0):
    B, m, n = a.shape
    k = min(m, n)
    assert (info == 0).all()
    nrm = max(np.abs(a).max(initial=0.0), 1e-300) * max(m, n, 1)
    if k:
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=0,
                                   atol=tol * max(m, n) * EPS * nrm)
        assert (np.diff(s, axis=-1) <= 0).all() and (s >= 0).all()
    if u is None:
        return
    rec = (u[:, :, :k] * s[:, None, :]) @ vh[:, :k, :]
    assert np.abs(rec - a).max(initial=0.0) <= tol * max(m, n) * EPS * nrm
    for q in (u.conj().transpose(0, 2, 1) @ u, vh @ vh.conj().transpose(0, 2, 1)):
        assert np.abs(q - np.eye(q.shape[-1])).max(initial=0.0) <= tol * max(m, n) * EPS


@cuda
@pytest.mark.parametrize("cplx", [False, True])
def test_svd_shapes_full_reduced_strided(cplx):
    rng = np.random.default_rng(4)
    for (m, n), B, pad in [((6, 4), 2, 0), ((4, 6), 2, 2), ((5, 5), 3, 1), ((1, 1), 2, 0),
                           ((1, 5), 1, 1), ((7, 1), 2, 0), ((11, 3), 1, 0)]:
        a = _mat(rng, (B, m, n), cplx)
        for full in (False, True):
            s, u, vh, info = _svd(a, full, pad=pad)
            _check_svd(a, s, u, vh, info)
        s2, _, _, info2 = _svd(a, False, vecs=False, pad=pad)
        np.testing.assert_allclose(s2, s, rtol=1e-13, atol=1e-15)
        again = _svd(a, True, pad=pad)                 # deterministic: bitwise run to run
        assert all(np.array_equal(x, y) for x, y in zip(again, (s, u, vh, info)))


@cuda
@pytest.mark.parametrize("cplx", [False, True])
def test_svd_rank_deficient_graded_zero(cplx):
    """Zero singular values: the left basis is completed to an orthonormal one."""
    rng = np.random.default_rng(5)
    for m, n in [(7, 5), (5, 7)]:
        low = _mat(rng, (m, 2), cplx) @ _mat(rng, (2, n), cplx)
        k = min(m, n)
        ql, _ = np.linalg.qr(_mat(rng, (m, m), cplx))
        qr_, _ = np.linalg.qr(_mat(rng, (n, n), cplx))
        graded = (ql[:, :k] * np.logspace(-12, 0, k)) @ qr_[:k]
        a = np.stack([low, graded, np.zeros((m, n)), np.ones((m, n))]).astype(low.dtype)
        for full in (False, True):
            s, u, vh, info = _svd(a, full)
            _check_svd(a, s, u, vh, info)
        np.testing.assert_allclose(s[1][::-1], np.logspace(-12, 0, k), rtol=0, atol=1e-14)


@cuda
def test_svd_converges_on_many_small_well_conditioned():
    """Pairs whose computed cosine sits at its rounding floor must not keep the sweeps going
    (the CPU's Jacobi reported no convergence for a 3 x 3 that way: test_la_cpu_eig.STALLED)."""
    rng = np.random.default_rng(5)
    for n in (2, 3, 5):
        a = rng.standard_normal((300 // n, n, n)) + 3 * np.eye(n)
        _check_svd(a, *_svd(a, False))


@cuda
def test_svd_empty_spectrum_full_bases():
    for m, n in [(3, 0), (0, 4), (0, 0)]:
        a = np.zeros((2, m, n))
        for full in (False, True):
            assert np.array_equal(_svd(a, full, vecs=False)[3], [0, 0])
            assert np.array_equal(_svd(a, full)[3], [0, 0])
        s, u, vh, info = _svd(a, True)
        assert np.array_equal(u @ u.transpose(0, 2, 1), np.broadcast_to(np.eye(m), (2, m, m)))
        assert np.array_equal(vh @ vh.transpose(0, 2, 1), np.broadcast_to(np.eye(n), (2, n, n)))
    s, u, vh, info = _svd(np.zeros((0, 3, 2)), False)
    assert s.shape == (0, 2)


# ---------------- eig ----------------

def _eig(a, vectors=True, pad=0):
    B, n, _ = a.shape
    t = _dev(a.astype(np.complex128), pad)
    w = T.empty((B, n), dtype=T.complex128, device="cuda")
    v = _out((B, n, n), T.complex128, pad) if vectors else None
    info = _info(B)
    LE.eig(t, w, v, info)
    return w.numpy(), (v.numpy() if vectors else None), info.numpy()


def _match(got, want):
    """Largest distance from each eigenvalue of want to its own nearest unused one in got."""
    got, err = list(got), 0.0
    for z in want:
        i = int(np.argmin([abs(g - z) for g in got]))
        err = max(err, abs(got.pop(i) - z))
    return err


def _check_eig(a, w, v, info, eig_tol=1e-10, tol=50.0):
    B, n, _ = a.shape
    assert (info == 0).all()
    for b in range(B):
        nrm = max(np.abs(a[b]).max() * n, 1e-300)    # >= the 2-norm; no under/overflow
        assert _match(w[b], np.linalg.eigvals(a[b])) <= eig_tol * nrm
        if v is not None and n:
            r = a[b] @ v[b] - v[b] * w[b]
            assert np.abs(r).max() <= tol * n * EPS * nrm, np.abs(r).max()
            np.testing.assert_allclose(np.linalg.norm(v[b], axis=0), 1.0, rtol=1e-13)


@cuda
def test_eig_random_batched_strided():
    rng = np.random.default_rng(6)
    for n, B, pad in [(1, 2, 0), (2, 2, 1), (3, 3, 0), (6, 2, 2), (12, 2, 0)]:
        for a in (_mat(rng, (B, n, n), True), _mat(rng, (B, n, n), False)):
            w, v, info = _eig(a, pad=pad)
            _check_eig(a, w, v, info)
            w2, _, _ = _eig(a, vectors=False, pad=pad)
            assert np.array_equal(w, w2)


@cuda
def test_eig_special():
    """Repeated (diagonalizable) eigenvalues, triangular, zero, a Jordan block, a rotation
    (complex pair from a real matrix), a permutation (unit-circle spectrum)."""
    rng = np.random.default_rng(7)
    n = 6
    s = _mat(rng, (n, n), True)
    rep = s @ np.diag([1, 1, 1, 2, 2, -1j]) @ np.linalg.inv(s)
    tri = np.triu(_mat(rng, (n, n), True))
    jordan = np.eye(n, k=1)
    rot = np.zeros((n, n))
    rot[:2, :2] = [[0, -1], [1, 0]]
    rot[2:, 2:] = np.diag([3.0, 3.0, -2.0, 1e-9])
    perm = np.eye(n)[np.r_[1:n, 0]]
    a = np.stack([rep, tri, np.zeros((n, n)), jordan, rot, perm]).astype(np.complex128)
    w, v, info = _eig(a)
    assert (info == 0).all()
    _check_eig(a[[1, 2, 4, 5]], w[[1, 2, 4, 5]], v[[1, 2, 4, 5]], info[:4])
    assert _match(w[0], [1, 1, 1, 2, 2, -1j]) <= 1e-6    # multiple eigenvalues: ~sqrt(eps)
    r = a[0] @ v[0] - v[0] * w[0]
    assert np.abs(r).max() <= 1e-6
    assert np.array_equal(w[2], np.zeros(n)) and np.allclose(np.abs(w[3]), 0, atol=1e-2)
    assert np.abs(a[3] @ v[3] - v[3] * w[3]).max() <= 1e-2    # defective: v ~ e_0
    np.testing.assert_allclose(np.linalg.norm(v[3], axis=0), 1.0, rtol=1e-13)


@cuda
def test_eig_empty_and_deterministic():
    LE.eig(T.empty((0, 2, 2), dtype=T.complex128, device="cuda"),
           T.empty((0, 2), dtype=T.complex128, device="cuda"), None, _info(0))
    for v in (T.empty((1, 0, 0), dtype=T.complex128, device="cuda"), None):
        info = _info(1)
        LE.eig(T.empty((1, 0, 0), dtype=T.complex128, device="cuda"),
               T.empty((1, 0), dtype=T.complex128, device="cuda"), v, info)
        assert np.array_equal(info.numpy(), [0])
    a = _mat(np.random.default_rng(8), (2, 9, 9), True)
    r1, r2 = _eig(a), _eig(a)
    assert np.array_equal(r1[0], r2[0]) and np.array_equal(r1[1], r2[1])


@cuda
def test_nonfinite_input():
    """NaN / inf in a matrix: eigh gives NaN values and vectors with info 0 (as NumPy), svd NaN
    with info 1 (NumPy raises "did not converge"), eig NaN with info n; the batch's other
    matrices are unaffected."""
    rng = np.random.default_rng(9)
    for bad in (np.nan, np.inf):
        a = _mat(rng, (2, 4, 4), True)
        a[0, 2, 1] = bad
        w, v, info = _eig(a)
        assert info[0] == 4 and np.isnan(w[0]).all() and np.isnan(v[0]).all()
        _check_eig(a[1:], w[1:], v[1:], info[1:])
        h = a + a.conj().transpose(0, 2, 1)
        w, v, info = _eigh(h)
        assert info[0] == 0 and np.isnan(w[0]).all() and np.isnan(v[0]).all()
        _check_eigh(h[1:], w[1:], v[1:], info[1:])
        s, u, vh, info = _svd(a, True)
        assert info[0] == 1 and np.isnan(s[0]).all() and np.isnan(u[0]).all()
        _check_svd(a[1:], s[1:], u[1:], vh[1:], info[1:])


@cuda
@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200])
def test_extreme_scales(scale):
    """Each matrix is scaled by a power of two inside the kernels: no overflow / underflow."""
    rng = np.random.default_rng(10)
    a = _mat(rng, (2, 6, 6), True) * scale
    h = a + a.conj().transpose(0, 2, 1)
    _check_eigh(h, *_eigh(h))
    _check_svd(a[:, :, :4], *_svd(a[:, :, :4], True))
    _check_eig(a, *_eig(a))


@cuda
def test_subnormal_entries():
    """A matrix of subnormal numbers (small integers times 2^-1040, exact; the power-of-two
    scaling is clamped so that it stays finite): finite results, close to the normal matrix's
    results times 2^-1040."""
    rng = np.random.default_rng(11)
    sc = 2.0 ** -1040
    a = rng.integers(-8, 8, (1, 5, 5)) + 1j * rng.integers(-8, 8, (1, 5, 5))
    h = a + a.conj().transpose(0, 2, 1)
    w, v, info = _eigh(h * sc)
    assert (info == 0).all() and np.isfinite(v).all()
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h) * sc, rtol=0, atol=1e-320)
    s, u, vh, info = _svd(a * sc, True)
    assert (info == 0).all() and np.isfinite(u).all()
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False) * sc, rtol=0, atol=1e-320)
    w, v, info = _eig(a * sc)
    assert (info == 0).all() and np.isfinite(v).all()
    assert _match(w[0], np.linalg.eigvals(a[0]) * sc) <= 1e-320
