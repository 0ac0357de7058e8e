"""The CPU eigen- and singular value kernels (tensor/cpu/linalg_eig.py: eigh, svd, eig) called
directly on (B, m, n) tensors, against numpy.linalg: the values, and the residuals and
orthogonality of the vectors within a small multiple of n * eps * ||A||. Random, batched,
complex, strided (row stride > n) inputs; 0-size and 1 x 1; repeated eigenvalues, zero,
rank-deficient, graded and ill-conditioned matrices; full and reduced SVD, wide and tall;
bitwise-identical results whatever the thread count.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from tensor.cpu import kernels as K
from tensor.cpu import linalg_eig as LE

EPS = np.finfo(np.float64).eps
TD = {np.float64: T.float64, np.complex128: T.complex128}
DTYPES = [np.float64, np.complex128]


def _rand(rng, shape, dt):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if dt == np.complex128 else x


def _herm(x):
    return x + np.conj(np.swapaxes(x, -1, -2))


def _ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _unitary(rng, n, dt):
    q, _ = np.linalg.qr(_rand(rng, (n, n), dt))
    return q


def _view(x, pad=3):
    """x (B, m, n) as a tensor view with row stride n + pad (7.5 in the padding, which
    _padding_intact checks afterwards)."""
    B, m, n = x.shape
    big = np.full((B, m, n + pad), 7.5, dtype=x.dtype)
    big[:, :, :n] = x
    base = T.asarray(big)
    t = base[:, :, :n]
    assert t.strides[1] == n + pad or x.size == 0
    _BASES[id(t)] = (base, n)
    return t


_BASES: dict = {}


def _padding_intact(t) -> None:
    base, n = _BASES.pop(id(t))
    assert np.all(base.numpy()[:, :, n:] == 7.5), "a kernel wrote past a row"


def _norm(x):
    return max(1.0, float(np.abs(x).max(initial=0.0)))


def _ints(B):
    return T.empty((B,), dtype=T.int64)


def run_eigh(h, vectors=True, pad=3):
    """The kernel on h (B, n, n), with the strict upper triangle replaced by garbage."""
    B, n, _ = h.shape
    junk = h.copy()
    iu = np.triu_indices(n, 1)
    junk[:, iu[0], iu[1]] = 1e3
    a = _view(junk, pad)
    w, info = T.empty((B, n), dtype=T.float64), _ints(B)
    LE.eigh(a, w, vectors, info)
    assert not info.numpy().any()
    _padding_intact(a)
    return w.numpy(), (a.numpy() if vectors else None)


def check_eigh(h, tol=30):
    B, n, _ = h.shape
    w, v = run_eigh(h)
    scale = max(n, 1) * EPS * _norm(h)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=0, atol=tol * scale)
    assert np.all(np.diff(w, axis=-1) >= 0)
    assert np.abs(h @ v - v * w[:, None, :]).max(initial=0) <= tol * scale
    assert np.abs(_ct(v) @ v - np.eye(n)).max(initial=0) <= tol * max(n, 1) * EPS
    w2, _ = run_eigh(h, vectors=False, pad=0)
    np.testing.assert_array_equal(w2, w)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 33, 70])
def test_eigh_random(dt, n):
    check_eigh(_herm(_rand(np.random.default_rng(n), (3, n, n), dt)))


@pytest.mark.parametrize("dt", DTYPES)
def test_eigh_special(dt):
    rng = np.random.default_rng(1)
    n = 12
    q = _unitary(rng, n, dt)
    rep = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3, -1, 0, 0], dtype=np.float64)
    cases = [
        (q * rep) @ _ct(q),                                # repeated eigenvalues
        np.zeros((n, n), dt),                              # zero
        np.eye(n, dtype=dt),                               # all equal
        (q * np.logspace(-12, 0, n)) @ _ct(q),             # ill-conditioned
        np.diag(np.arange(n, dtype=np.float64)).astype(dt),   # already diagonal
    ]
    g = np.logspace(0, -8, n)
    cases.append(g[:, None] * _herm(_rand(rng, (n, n), dt)) * g[None, :])   # graded
    cases.append(np.diag(np.ones(n - 1), 1).astype(dt) + np.diag(np.ones(n - 1), -1))
    check_eigh(np.stack([_herm(c) / 2 for c in cases]))


@pytest.mark.parametrize("dt", DTYPES)
def test_eigh_low_rank(dt):
    """X X^H of rank r << n: a cluster of eigenvalues near zero, which a purely relative
    deflation test never splits off (it failed to converge for these, n = 69..120)."""
    rng = np.random.default_rng(17)
    for n, r in ((69, 18), (80, 10), (120, 30)):
        x = _rand(rng, (1, n, r), dt)
        check_eigh(x @ _ct(x))


def test_eigh_empty():
    w, _ = run_eigh(np.zeros((2, 0, 0)))
    assert w.shape == (2, 0)


@pytest.mark.parametrize("scale", [1e-310, 1e-200, 1e200])
def test_tiny_and_huge_entries(scale):
    """Scaled by a power of two inside (subnormal entries included): results scale along
    (up to the subnormal grid of the inputs and outputs)."""
    rng = np.random.default_rng(2)
    x = _rand(rng, (2, 6, 6), np.complex128)
    h = _herm(x)
    w, v = run_eigh(h * scale)
    tol = 1e-13 * scale * 6 + 1e-321
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h) * scale, rtol=0, atol=tol)
    s, _, _ = run_svd(x * scale, None)
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False) * scale, rtol=0, atol=tol)
    we, _ = run_eig(x * scale, vectors=False)
    for b in range(2):
        assert _match(we[b], np.linalg.eigvals(x[b]) * scale) <= 1e-12 * scale * 6 + 1e-321


def run_svd(x, mode, pad=2):
    """mode: None (values only), 'reduced', 'full'."""
    B, m, n = x.shape
    k = min(m, n)
    td = TD[x.dtype.type]
    a = _view(x, pad)
    s, info = T.empty((B, k), dtype=T.float64), _ints(B)
    u = vh = None
    if mode:
        ku, kv = (m, n) if mode == "full" else (k, k)
        u = _view(np.zeros((B, m, ku), x.dtype), 1)
        vh = T.empty((B, kv, n), dtype=td)
    LE.svd(a, s, u, vh, info)
    assert not info.numpy().any()
    _padding_intact(a)
    if u is not None:
        _padding_intact(u)
    return s.numpy(), (u.numpy() if mode else None), (vh.numpy() if mode else None)


def check_svd(x, tol=30):
    B, m, n = x.shape
    k = min(m, n)
    scale = max(m, n, 1) * EPS * _norm(x)
    ref = np.linalg.svd(x, compute_uv=False)
    for mode in (None, "reduced", "full"):
        s, u, vh = run_svd(x, mode)
        np.testing.assert_allclose(s, ref, rtol=0, atol=tol * scale)
        assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)
        if mode is None:
            continue
        ku, kv = (m, n) if mode == "full" else (k, k)
        assert u.shape == (B, m, ku) and vh.shape == (B, kv, n)
        rec = (u[:, :, :k] * s[:, None, :]) @ vh[:, :k, :]
        assert np.abs(rec - x).max(initial=0) <= tol * scale
        orth = tol * max(m, n, 1) * EPS
        assert np.abs(_ct(u) @ u - np.eye(ku)).max(initial=0) <= orth
        assert np.abs(vh @ _ct(vh) - np.eye(kv)).max(initial=0) <= orth


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1), (4, 4), (9, 5), (5, 9), (40, 40),
                                   (70, 13), (13, 70)])
def test_svd_random(dt, shape):
    check_svd(_rand(np.random.default_rng(sum(shape)), (2, *shape), dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(14, 10), (10, 10), (40, 40), (45, 33)])
def test_svd_special(dt, shape):
    """Both algorithms (Jacobi below 32 columns when square; QR + Golub-Kahan otherwise) on
    structured matrices, tall and (transposed) wide."""
    rng = np.random.default_rng(3)
    m, n = shape
    shift = np.eye(m, n, 1, dtype=dt)                                     # zero diagonal
    zcol = _rand(rng, (m, n), dt)
    zcol[:, n // 2] = 0                                                   # a zero column
    cases = [
        _rand(rng, (m, 4), dt) @ _rand(rng, (4, n), dt),                  # rank 4
        np.zeros((m, n), dt),                                             # zero
        (_unitary(rng, m, dt)[:, :n] * np.logspace(-12, 0, n)) @ _unitary(rng, n, dt),
        np.ones((m, n), dt),                                              # rank 1
        np.eye(m, n, dtype=dt) * 3,                                       # repeated values
        shift, shift + 1e-9 * np.eye(m, n), zcol,
    ]
    g = np.logspace(0, -10, m)
    cases.append(g[:, None] * _rand(rng, (m, n), dt))                     # graded rows
    cases.append(_rand(rng, (m, n), dt) * np.logspace(0, -10, n))         # graded columns
    x = np.stack(cases)
    check_svd(x)
    check_svd(np.ascontiguousarray(np.swapaxes(x, 1, 2)))                 # wide versions


@pytest.mark.parametrize("dt", DTYPES)
def test_svd_sparse(dt):
    """Sparse square matrices (zero columns, exact cancellations: Jacobi meets columns that
    shrink into the subnormal range, whose rotations must stay unitary)."""
    rng = np.random.default_rng(123)
    for m in (12, 28, 28, 28, 40):
        x = _rand(rng, (6, m, m), dt) * (rng.random((6, m, m)) < 0.1)
        check_svd(x)


# Jacobi's cosine for one pair of this well-conditioned matrix sat between the rotation
# threshold (sqrt(3) eps / 2) and its own rounding floor, so every sweep rotated it again and
# the SVD reported no convergence after 80 sweeps (a CI failure of cond's gradcheck).
STALLED = np.array([[2.511789949993381, 0.7341609239428352, 1.0834944517952902],
                    [0.14891574213930556, 2.864723740919914, -0.37989046538801907],
                    [0.23314779099292807, -0.6556411219223744, 3.3086185461238076]])


def test_svd_converges_where_the_cosine_sits_at_rounding_level():
    check_svd(STALLED[None])
    rng = np.random.default_rng(5)   # many small well-conditioned ones, each near the floor
    for n in (2, 3, 4, 5):
        check_svd(rng.standard_normal((4000 // n, n, n)) + 3 * np.eye(n))


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0)])
def test_svd_empty(shape):
    m, n = shape
    for mode in (None, "reduced", "full"):
        s, u, vh = run_svd(np.zeros((2, m, n)), mode)
        assert s.shape == (2, 0)
        if mode == "full":
            np.testing.assert_array_equal(u, np.broadcast_to(np.eye(m), (2, m, m)))
            np.testing.assert_array_equal(vh, np.broadcast_to(np.eye(n), (2, n, n)))


def run_eig(x, vectors=True):
    B, n, _ = x.shape
    a = _view(x.astype(np.complex128))
    w, info = T.empty((B, n), dtype=T.complex128), _ints(B)
    v = _view(np.zeros((B, n, n), np.complex128), 2) if vectors else None
    LE.eig(a, w, v, info)
    assert not info.numpy().any()
    _padding_intact(a)
    if v is not None:
        _padding_intact(v)
    return w.numpy(), (v.numpy() if vectors else None)


def _match(w, ref):
    """max over w's entries of the distance to the nearest unused entry of ref."""
    worst, ref = 0.0, list(ref)
    for z in w:
        i = int(np.argmin(np.abs(np.array(ref) - z)))
        worst = max(worst, abs(ref.pop(i) - z))
    return worst


def check_eig(x, tol=30, values=True):
    B, n, _ = x.shape
    w, v = run_eig(x)
    scale = max(n, 1) * EPS * _norm(x)
    assert np.abs(x @ v - v * w[:, None, :]).max(initial=0) <= tol * scale
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=0, atol=tol * n * EPS)
    w2, _ = run_eig(x, vectors=False)
    ref = np.linalg.eigvals(x)
    for b in range(B):
        if values:
            assert _match(w[b], ref[b]) <= 1e3 * tol * scale
            assert _match(w2[b], ref[b]) <= 1e3 * tol * scale
        assert abs(w2[b].sum() - np.trace(x[b])) <= tol * n * scale


@pytest.mark.parametrize("n", [1, 2, 3, 7, 30, 64])
def test_eig_random(n):
    rng = np.random.default_rng(n)
    check_eig(_rand(rng, (2, n, n), np.complex128))
    check_eig(rng.standard_normal((2, n, n)).astype(np.complex128))   # conjugate pairs


def test_eig_special():
    rng = np.random.default_rng(4)
    n = 10
    p = _rand(rng, (n, n), np.complex128)
    d = np.array([1, 1, 1, 2, 2, 3j, 3j, 0, 0, -1], dtype=np.complex128)
    cases = [
        (p * d) @ np.linalg.inv(p),                                   # repeated, diagonalizable
        np.triu(_rand(rng, (n, n), np.complex128)),                   # already triangular
        np.zeros((n, n), np.complex128),
        np.eye(n, dtype=np.complex128) * (2 - 1j),
        np.diag(np.ones(n - 1), 1).astype(np.complex128),             # nilpotent Jordan block
        np.roll(np.eye(n), 1, axis=0).astype(np.complex128),          # cyclic permutation
        _herm(_rand(rng, (n, n), np.complex128)),
    ]
    g = np.logspace(0, -6, n)
    cases.append(g[:, None] * _rand(rng, (n, n), np.complex128) / g[None, :])   # graded
    x = np.stack(cases)
    check_eig(x[[0, 1, 2, 3, 5, 6]])
    check_eig(x[[4, 7]], values=False)   # defective / badly balanced: residuals only
    w, _ = run_eig(x[[4]])
    assert np.abs(w).max() <= 1e-1   # n-th root of eps-sized perturbations of 0


def test_eig_empty():
    w, v = run_eig(np.zeros((3, 0, 0)))
    assert w.shape == (3, 0) and v.shape == (3, 0, 0)


def test_deterministic_across_threads():
    """Inner-matrix threading (B == 1) splits only independent work: bitwise equal."""
    rng = np.random.default_rng(5)
    h = _herm(rng.standard_normal((1, 140, 140)))
    x = rng.standard_normal((1, 140, 130))
    sq = rng.standard_normal((1, 100, 100)) + 1j * rng.standard_normal((1, 100, 100))
    old = K.get_num_threads()
    out = []
    try:
        for nt in (1, 2, 1):
            K.set_num_threads(nt)
            out.append((run_eigh(h), run_svd(x, "reduced") + run_svd(sq, "full")))
    finally:
        K.set_num_threads(old)
    for o in out[1:]:
        for a, b in zip(o[0] + o[1], out[0][0] + out[0][1]):
            np.testing.assert_array_equal(a, b)


def test_workspace_failure_raises_out_of_memory():
    """A matrix whose work space cannot be allocated (a zero-stride view of a huge one):
    OutOfMemoryError, before anything is read."""
    from tensor.memory import OutOfMemoryError
    n = 2 ** 21
    for td in (T.float64, T.complex128):
        a = T.as_strided(T.asarray(np.zeros(n, dtype=td.name)), (1, n, n), (0, 0, 1))
        w, info = T.empty((1, n), dtype=T.float64), _ints(1)
        with pytest.raises(OutOfMemoryError, match="eigh"):
            LE.eigh(a, w, True, info)
        with pytest.raises(OutOfMemoryError, match="svd"):
            LE.svd(a, w, None, None, info)
    a = T.as_strided(T.asarray(np.zeros(n, np.complex128)), (1, n, n), (0, 0, 1))
    with pytest.raises(OutOfMemoryError, match="eig"):
        LE.eig(a, T.empty((1, n), dtype=T.complex128), None, _ints(1))
