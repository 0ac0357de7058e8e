"""The CUDA linear-algebra kernels (tensor/cuda/linalg.py, cuda_src/linalg.cuh: lu, cholesky,
trsm, lu_solve, qr; issue 16's kernel interface) against NumPy, on the cuda device (a GPU, or
the CPU emulator running the same CUDA source): float64 and complex128, batches, matrices that
are views with a row stride past their width and a batch stride past their size (the padding
must stay untouched), the triangle a kernel must not read filled with NaN, 0-size shapes,
singular and non-positive-definite info, and bitwise determinism. Sizes stay small (n <= 12)
for the emulator. The kernels also compile with NVRTC for every CI architecture."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT
from helpers import to_np

import tensor as T
from tensor import dtypes as dt

DTYPES = [dt.float64, dt.complex128]
EPS = np.finfo(np.float64).eps
PAD = -12345.0     # the padding's value: a kernel that writes outside the view changes it

cuda_only = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")


def _L():
    from tensor.cuda import linalg
    return linalg


def _rand(rng, shape, d) -> np.ndarray:
    a = rng.standard_normal(shape)
    if d is dt.complex128:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(d.np)


class _View:
    """a (B, m, n) as a view of a padded cuda buffer (B, m + 1, n + 3): row stride n + 3,
    batch stride (m + 1)(n + 3); values() / padding_ok() read it back."""

    def __init__(self, a: np.ndarray, pad: bool = True):
        B, m, n = a.shape
        self.shape, self.pad = a.shape, pad
        if pad:
            big = np.full((B, m + 1, n + 3), PAD, a.dtype)
            big[:, :m, :n] = a
            self.buf = T.asarray(big).to("cuda")
            self.t = self.buf[:, :m, :n]
        else:
            self.buf = self.t = T.asarray(np.ascontiguousarray(a)).to("cuda")

    def values(self) -> np.ndarray:
        """The view's values, read back whole and sliced on the host (no device copy kernel)."""
        B, m, n = self.shape
        return to_np(self.buf)[:, :m, :n]

    def padding_ok(self) -> bool:
        if not self.pad:
            return True
        B, m, n = self.shape
        big = to_np(self.buf)
        mask = np.ones(big.shape, bool)
        mask[:, :m, :n] = False
        return bool(np.all(big[mask] == PAD))


def _ints(shape, fill=-7):
    return T.asarray(np.full(shape, fill, np.int64)).to("cuda")


def _ref_getf2_piv(a: np.ndarray) -> np.ndarray:
    """LAPACK getf2's pivots (0-based) of one matrix: the first largest |re| + |im|."""
    a = a.astype(np.complex128).copy()
    m, n = a.shape
    piv = []
    for j in range(min(m, n)):
        col = np.abs(a[j:, j].real) + np.abs(a[j:, j].imag)
        p = j + int(np.argmax(col))
        piv.append(p)
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return np.array(piv, np.int64)


def _perm(piv, m) -> np.ndarray:
    p = np.arange(m)
    for j, q in enumerate(piv):
        p[[j, q]] = p[[q, j]]
    return p


def _op(a, trans):
    return a if trans == 0 else (a.T if trans == 1 else a.conj().T)


def _tol(a, n):
    return 50 * max(n, 1) * EPS * max(1.0, float(np.abs(a).max(initial=0.0)))


# ---------------------------------------------------------------- 1. lu

@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("B,m,n", [(1, 1, 1), (3, 5, 5), (2, 7, 4), (2, 4, 7), (5, 12, 12)])
def test_lu(d, B, m, n):
    rng = np.random.default_rng(B * 100 + m * 10 + n)
    a = _rand(rng, (B, m, n), d)
    v = _View(a)
    k = min(m, n)
    piv, info = _ints((B, k)), _ints((B,))
    _L().lu(v.t, piv, info)
    lu, p = v.values(), to_np(piv)
    assert v.padding_ok()
    np.testing.assert_array_equal(to_np(info), 0)
    for b in range(B):
        np.testing.assert_array_equal(p[b], _ref_getf2_piv(a[b]))
        L = np.tril(lu[b], -1)[:, :k] + np.eye(m, k)
        U = np.triu(lu[b])[:k, :]
        np.testing.assert_allclose(L @ U, a[b][_perm(p[b], m)], atol=_tol(a[b], n), rtol=0)


@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_lu_singular_info_and_ties(d):
    a = np.zeros((4, 3, 3), d.np)
    a[0] = [[1, 2, 3], [2, 4, 5], [4, 8, 1]]      # U[1, 1] = 0 after the first step
    a[1] = 0                                      # zero matrix: info 1, no swaps
    a[2] = [[1, 5, 0], [1, 7, 0], [-1, 2, 0]]     # ties in |a|: the first row; last column 0
    a[3] = np.eye(3)
    piv, info = _ints((4, 3)), _ints((4,))
    v = _View(a, pad=False)
    _L().lu(v.t, piv, info)
    np.testing.assert_array_equal(to_np(info), [2, 1, 3, 0])
    p = to_np(piv)
    np.testing.assert_array_equal(p[1], [0, 1, 2])
    np.testing.assert_array_equal(p[2], _ref_getf2_piv(a[2]))
    assert p[2][0] == 0
    lu = v.values()
    for b in range(4):
        L = np.tril(lu[b], -1) + np.eye(3)
        np.testing.assert_allclose(L @ np.triu(lu[b]), a[b][_perm(p[b], 3)], atol=1e-13)


@cuda_only
def test_lu_ties_within_a_thread():
    """Ties between rows that one thread scans (rows 128 apart): the first one wins."""
    m = 262
    a = np.zeros((1, m, 2))
    a[0, :, 0] = np.where(np.arange(m) % 3 == 0, 1.0, -1.0)   # all tie: row 0
    a[0, :, 1] = 2.0 * a[0, :, 0]
    a[0, 0, 1] = 0.0
    a[0, [5, 133, 261], 1] += 3.0 * a[0, [5, 133, 261], 0]    # |.| = 3 after step 0, at 5 first
    piv = _ints((1, 2))
    _L().lu(_View(a).t, piv, _ints((1,)))
    np.testing.assert_array_equal(to_np(piv)[0], [0, 5])


@cuda_only
def test_lu_zero_sizes_and_determinism():
    L = _L()
    for B, m, n in [(0, 3, 3), (2, 0, 3), (2, 3, 0), (2, 0, 0)]:
        info = _ints((B,))
        L.lu(T.asarray(np.zeros((B, m, n))).to("cuda"), _ints((B, min(m, n))), info)
        np.testing.assert_array_equal(to_np(info), 0)
    a = _rand(np.random.default_rng(5), (3, 9, 9), dt.complex128)
    outs = []
    for _ in range(2):
        v, piv = _View(a), _ints((3, 9))
        L.lu(v.t, piv, _ints((3,)))
        outs.append((v.values().view(np.uint64), to_np(piv)))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


# ---------------------------------------------------------------- 3. trsm

def _tri(rng, B, n, d, lower, unit):
    """A well-conditioned triangular matrix with NaN in the triangle (and, if unit, on the
    diagonal) that trsm must not read."""
    a = _rand(rng, (B, n, n), d) * 0.3 + 3 * np.eye(n)
    keep = np.tril(np.ones((n, n), bool), -1 if unit else 0)
    if not lower:
        keep = keep.T
    ref = np.where(keep, a, 0) + (np.eye(n) if unit else 0)
    return np.where(keep, a, np.nan).astype(d.np), ref.astype(d.np)


@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_trsm(d, lower, unit, trans):
    rng = np.random.default_rng(7 + trans + 3 * lower + 6 * unit)
    B, n, k = 3, 6, 4
    a, ref = _tri(rng, B, n, d, lower, unit)
    b = _rand(rng, (B, n, k), d)
    va, vb = _View(a), _View(b)
    _L().trsm(va.t, vb.t, lower, unit, trans)
    x = vb.values()
    assert vb.padding_ok()
    for i in range(B):
        np.testing.assert_allclose(x[i], np.linalg.solve(_op(ref[i], trans), b[i]), atol=1e-12, rtol=1e-12)


@cuda_only
def test_trsm_sizes():
    L = _L()
    rng = np.random.default_rng(3)
    for B, n, k in [(1, 1, 1), (2, 5, 1), (1, 2, 300), (1, 0, 3), (2, 3, 0), (0, 2, 2)]:
        a, ref = _tri(rng, B, n, dt.float64, True, False)
        b = rng.standard_normal((B, n, k))
        vb = _View(b)
        L.trsm(T.asarray(a).to("cuda"), vb.t, True, False, 0)
        if B and n and k:
            np.testing.assert_allclose(vb.values(), np.linalg.solve(ref, b), rtol=1e-12, atol=1e-12)
        assert vb.padding_ok()


# ---------------------------------------------------------------- 4. lu_solve

@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve(d, trans):
    rng = np.random.default_rng(11 + trans)
    B, n, k = 4, 7, 3
    a = _rand(rng, (B, n, n), d) + 2 * np.eye(n)
    b = _rand(rng, (B, n, k), d)
    va, vb = _View(a), _View(b)
    piv, info = _ints((B, n)), _ints((B,))
    L = _L()
    L.lu(va.t, piv, info)
    L.lu_solve(va.t, piv, vb.t, trans)
    x = vb.values()
    assert vb.padding_ok() and va.padding_ok()
    for i in range(B):
        ref = np.linalg.solve(_op(a[i], trans), b[i])
        np.testing.assert_allclose(x[i], ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
        r = _op(a[i], trans) @ x[i] - b[i]
        assert np.abs(r).max() < 100 * n * EPS * np.abs(a[i]).max() * np.abs(x[i]).max()


# ---------------------------------------------------------------- 2. cholesky

def _hpd(rng, B, n, d):
    g = _rand(rng, (B, n, n), d)
    return (g @ np.conj(np.swapaxes(g, 1, 2)) + n * np.eye(n)).astype(d.np)


@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("B,n", [(1, 1), (3, 5), (2, 12)])
def test_cholesky(d, B, n):
    rng = np.random.default_rng(n)
    a = _hpd(rng, B, n, d)
    inp = np.where(np.tril(np.ones((n, n), bool)), a, np.nan).astype(d.np)   # upper not read
    v, info = _View(inp), _ints((B,))
    _L().cholesky(v.t, info)
    got = v.values()
    assert v.padding_ok()
    np.testing.assert_array_equal(to_np(info), 0)
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-12, atol=1e-12 * n)
    assert np.all(np.triu(got, 1) == 0)
    assert np.all(np.diagonal(got, axis1=1, axis2=2).imag == 0)


@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_cholesky_info(d):
    rng = np.random.default_rng(1)
    a = _hpd(rng, 5, 4, d)
    a[1, 2, 2] = -100.0                          # not positive at j = 2 (after updates)
    a[2] = 0                                     # zero: j = 0
    a[3, 3, 3] = np.nan                          # NaN pivot: j = 3
    a[4] = np.diag([4.0, 1.0, 0.0, 1.0])          # zero pivot at j = 2
    v, info = _View(a), _ints((5,))
    _L().cholesky(v.t, info)
    got = to_np(info)
    np.testing.assert_array_equal(got, [0, 3, 1, 4, 3])
    assert np.all(np.diagonal(v.values()[4], 0)[:2] == [2, 1])
    assert np.all(np.triu(v.values(), 1) == 0)
    info0 = _ints((0,))
    _L().cholesky(T.asarray(np.zeros((0, 3, 3), d.np)).to("cuda"), info0)
    info2 = _ints((2,))
    _L().cholesky(T.asarray(np.zeros((2, 0, 0), d.np)).to("cuda"), info2)
    np.testing.assert_array_equal(to_np(info2), 0)


# ---------------------------------------------------------------- 5. qr

def _qr_check(a, q, r, k):
    m, n = a.shape
    tol = _tol(a, max(m, n))
    assert np.all(np.tril(r, -1) == 0)
    if q is None:
        return
    np.testing.assert_allclose(q[:, :k] @ r[:k], a, atol=tol, rtol=0)
    np.testing.assert_allclose(np.conj(q.T) @ q, np.eye(q.shape[1]), atol=50 * m * EPS, rtol=0)
    np.testing.assert_allclose(q @ r, a, atol=tol, rtol=0)


@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
@pytest.mark.parametrize("B,m,n", [(1, 1, 1), (3, 6, 4), (2, 4, 6), (2, 9, 9), (1, 3, 131)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(d, B, m, n, mode):
    rng = np.random.default_rng(m * 10 + n)
    a = _rand(rng, (B, m, n), d)
    k = min(m, n)
    kq = {"reduced": k, "complete": m, "r": None}[mode]
    kr = kq if kq is not None else k
    va = _View(a)
    vq = _View(np.zeros((B, m, kq), d.np)) if kq is not None else None
    vr = _View(np.full((B, kr, n), np.nan, d.np))
    info = _ints((B,))
    _L().qr(va.t, None if vq is None else vq.t, vr.t, info)
    np.testing.assert_array_equal(to_np(info), 0)
    r = vr.values()
    assert vr.padding_ok() and va.padding_ok() and (vq is None or vq.padding_ok())
    q = None if vq is None else vq.values()
    for b in range(B):
        _qr_check(a[b], None if q is None else q[b], r[b], k)
        # |R| agrees with NumPy's up to the signs of the rows
        rn = np.linalg.qr(a[b], mode="r")
        np.testing.assert_allclose(np.abs(r[b][:k]), np.abs(rn[:k]), atol=_tol(a[b], m), rtol=0)


@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_qr_special(d):
    rng = np.random.default_rng(2)
    m, n = 6, 5
    a = np.zeros((4, m, n), d.np)
    a[1] = _rand(rng, (m, 2), d) @ _rand(rng, (2, n), d)            # rank 2
    u, _, vh = np.linalg.svd(_rand(rng, (m, n), d), full_matrices=False)
    a[2] = (u * np.logspace(0, -12, n)) @ vh                         # graded
    a[3] = np.triu(_rand(rng, (m, n), d))                            # already triangular
    a[3, 0, 0] = 0
    for kq in (n, m):
        va, vq, vr = _View(a), _View(np.zeros((4, m, kq), d.np)), _View(np.zeros((4, kq, n), d.np))
        _L().qr(va.t, vq.t, vr.t, _ints((4,)))
        q, r = vq.values(), vr.values()
        for b in range(4):
            _qr_check(a[b], q[b], r[b], n)
    # 0-size shapes
    for B, m0, n0 in [(0, 3, 3), (2, 0, 3), (2, 3, 0)]:
        q0 = T.asarray(np.zeros((B, m0, m0), d.np)).to("cuda")
        r0 = T.asarray(np.full((B, m0, n0), np.nan, d.np)).to("cuda")
        info = _ints((B,))
        _L().qr(T.asarray(np.zeros((B, m0, n0), d.np)).to("cuda"), q0, r0, info)
        np.testing.assert_array_equal(to_np(info), 0)
        np.testing.assert_array_equal(to_np(r0), 0)
        np.testing.assert_array_equal(to_np(q0), np.broadcast_to(np.eye(m0), (B, m0, m0)))


@cuda_only
def test_qr_deterministic():
    a = _rand(np.random.default_rng(9), (3, 8, 6), dt.complex128)
    outs = []
    for _ in range(2):
        q = T.asarray(np.zeros((3, 8, 6), np.complex128)).to("cuda")
        r = T.asarray(np.zeros((3, 6, 6), np.complex128)).to("cuda")
        _L().qr(T.asarray(a).to("cuda"), q, r, _ints((3,)))
        outs.append((to_np(q).view(np.uint64), to_np(r).view(np.uint64)))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


# ---------------------------------------------------------------- many matrices per block

@cuda_only
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_batch_past_the_grid(d):
    """More matrices than the grid has blocks (the emulator's: 2 SMs x 4): every kernel's
    grid-stride loop over the batch, each block reusing its work area."""
    rng = np.random.default_rng(4)
    B, n = 19, 3
    L = _L()
    a = _rand(rng, (B, n, n), d) + 2 * np.eye(n)
    b = _rand(rng, (B, n, 2), d)
    va, vb, piv, info = _View(a), _View(b), _ints((B, n)), _ints((B,))
    L.lu(va.t, piv, info)
    L.lu_solve(va.t, piv, vb.t, 0)
    np.testing.assert_allclose(vb.values(), np.linalg.solve(a, b), rtol=1e-11, atol=1e-11)
    vb = _View(b)
    L.trsm(T.asarray(np.triu(a)).to("cuda"), vb.t, False, False, 1)
    np.testing.assert_allclose(vb.values(), np.linalg.solve(np.swapaxes(np.triu(a), 1, 2), b),
                               rtol=1e-11, atol=1e-11)
    h = _hpd(rng, B, n, d)
    vh = _View(h)
    L.cholesky(vh.t, info)
    np.testing.assert_allclose(vh.values(), np.linalg.cholesky(h), rtol=1e-12, atol=1e-12)
    m = 5
    g = _rand(rng, (B, m, n), d)
    vq, vr = _View(np.zeros((B, m, m), d.np)), _View(np.zeros((B, m, n), d.np))
    L.qr(_View(g).t, vq.t, vr.t, info)
    q, r = vq.values(), vr.values()
    for i in range(B):
        _qr_check(g[i], q[i], r[i], n)
