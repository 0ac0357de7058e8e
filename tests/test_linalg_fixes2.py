"""Regression tests for linalg bugs found by differential testing against NumPy / PyTorch
(hunt 4): underflow in the eigen- and singular value iterations, subnormal LU pivots, and
gradients of pinv / lstsq / det at repeated singular values and singular matrices. Each test
says what it caught. Small sizes: the "cuda" device is the emulator without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def _np(x):
    return x.to_device("cpu").numpy()


def _nearest(w, ref):
    """The largest distance from an eigenvalue in w to the nearest one of ref (both ways)."""
    return max(max(np.abs(ref - x).min() for x in w), max(np.abs(w - x).min() for x in ref))


def _leaf(a, device):
    x = T.asarray(a, device=device)
    x.requires_grad = True
    return x


def test_eig_shift_of_a_tiny_complex_pair(device):
    # caught: the Wilkinson shift's hh^2 + bc underflowed for a 2x2 block of ~1e-163, so the
    # complex pair got a real shift forever: LinAlgError "failed to converge" (both devices)
    A = np.zeros((3, 3))
    A[0, 0] = 1.0
    A[1:, 1:] = 1e-163 * np.array([[1e-3, 1.0], [-1.0, 1e-3]])
    w = _np(T.linalg.eigvals(T.asarray(A, device=device)))
    ref = np.linalg.eigvals(A)
    assert _nearest(w, ref) <= 1e-178
    assert np.sort(np.abs(w.imag))[-1] == pytest.approx(1e-163, rel=1e-12)


def test_eig_graded_real_matrix(device):
    # caught (CPU): this 59x59 matrix with rows scaled 10^-3i stalled for the same reason
    if device == "cuda":
        pytest.skip("too large for the emulator")
    rng = np.random.default_rng(8)
    n = 59
    A = rng.standard_normal((n, n)) * (10.0 ** (-np.arange(n) * 3.0))[:, None]
    w, V = T.linalg.eig(T.asarray(A))
    w, V = _np(w), _np(V)
    assert np.abs(A @ V - V * w).max() <= 1e-13 * n


def test_reflector_of_a_tiny_complex_column(device):
    # caught (CPU): the Householder reflector of a column of ~1e-170 with a complex leading
    # entry had |alpha|^2 + |x|^2 = 0 and tau = NaN: eigvalsh returned a NaN silently
    t = 1e-170
    H = np.diag([1.0, 2.0, 0.0, t]).astype(complex)
    H[2, 3], H[3, 2] = t * (1 + 1j), t * (1 - 1j)
    H[0, 3], H[3, 0] = t * 1j, -t * 1j
    H[0, 2], H[2, 0] = t * 1j, -t * 1j
    w, V = T.linalg.eigh(T.asarray(H, device=device))
    w, V = _np(w), _np(V)
    assert np.isfinite(w).all() and np.isfinite(V).all()
    np.testing.assert_allclose(w, np.linalg.eigvalsh(H), rtol=0, atol=4e-15)
    assert np.abs(H @ V - V * w).max() <= 4e-15
    np.testing.assert_allclose(_np(T.linalg.svdvals(T.asarray(H, device=device))),
                               np.linalg.svd(H, compute_uv=False), rtol=0, atol=4e-15)
    we, Ve = T.linalg.eig(T.asarray(H, device=device))
    assert np.abs(H @ _np(Ve) - _np(Ve) * _np(we)).max() <= 4e-15


def test_complex_graded_eig(device):
    if device == "cuda":
        pytest.skip("too large for the emulator")
    # caught (CPU): the same NaN reflector made eig of a complex graded 58x58 fail to converge
    rng = np.random.default_rng(7)
    n = 58
    A = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))) \
        * (10.0 ** (-np.arange(n) * 3.0))[:, None]
    w, V = T.linalg.eig(T.asarray(A))
    assert np.abs(A @ _np(V) - _np(V) * _np(w)).max() <= 1e-13 * n


@pytest.mark.parametrize("scale", [1e-140, 1e-158, 1e-162])
def test_eig_tiny_first_column(device, scale):
    # caught (CUDA): the Hessenberg reflector of a column of ~1e-158 had a subnormal u^H u and
    # 2 / u^H u overflowed: LinAlgError "failed to converge"
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    A[1:, 0] = scale * rng.standard_normal(4)
    w = _np(T.linalg.eigvals(T.asarray(A, device=device)))
    assert _nearest(w, np.linalg.eigvals(A)) <= 1e-13


@pytest.mark.parametrize("cplx", [False, True])
def test_svd_tiny_columns(device, cplx):
    # caught (CUDA): one-sided Jacobi with columns of ~1e-170 beside O(1) ones: their squared
    # norms underflowed to 0, every pair test asked for a rotation each sweep: "failed to
    # converge" after 60 sweeps
    rng = np.random.default_rng(3)
    A = rng.standard_normal((6, 5)) + (1j * rng.standard_normal((6, 5)) if cplx else 0)
    A[:, 3:] *= 1e-170
    U, S, Vh = (_np(x) for x in T.linalg.svd(T.asarray(A, device=device), full_matrices=False))
    ref = np.linalg.svd(A, compute_uv=False)
    np.testing.assert_allclose(S[:3], ref[:3], rtol=1e-13)
    # (columns under ~1e-146 of the largest count as zero: absolute accuracy, by design)
    assert np.abs(S[3:]).max() <= 1e-14 * S[0]
    assert np.abs((U * S) @ Vh - A).max() <= 1e-14


@pytest.mark.parametrize("shape, part", [((5, 8), np.s_[3:, :]), ((8, 5), np.s_[:, 3:]),
                                         ((6, 6), np.s_[:, 4:])])
def test_svd_full_bases_with_tiny_directions(device, shape, part):
    # caught (CUDA): columns of W of ~1e-250 counted as nonzero singular directions, but their
    # dot products fell under the rotation floor: "failed to converge", or U / Vh silently not
    # orthogonal (errors up to 0.9 in a random hunt)
    rng = np.random.default_rng(0)
    A = rng.standard_normal(shape)
    A[part] *= 1e-250 * rng.standard_normal(A[part].shape)
    U, S, Vh = (_np(x) for x in T.linalg.svd(T.asarray(A, device=device)))
    assert np.abs(U.T @ U - np.eye(shape[0])).max() <= 1e-14
    assert np.abs(Vh @ Vh.T - np.eye(shape[1])).max() <= 1e-14
    k = min(shape)
    assert np.abs((U[:, :k] * S) @ Vh[:k] - A).max() <= 1e-14 * S[0]


@pytest.mark.parametrize("cplx", [False, True])
def test_qr_subnormal_columns(device, cplx):
    # caught (CUDA): the reflector of a column of subnormals (alone, or below an O(1) row)
    # took 1 / (alpha - beta) = inf: NaN in Q; with an inexact tau Q was not orthogonal
    ph = (0.6 + 0.8j) if cplx else 1.0
    for A in (np.array([[3e-316], [4e-316]]) * ph, np.array([[1.0, 2.0], [0.0, 3e-311], [0.0, 4e-311]]) * ph,
              np.random.default_rng(1).standard_normal((4, 3)) * 1e-312 * ph):
        for mode in ("reduced", "complete"):
            Q, R = (_np(x) for x in T.linalg.qr(T.asarray(A, device=device), mode=mode))
            assert np.isfinite(Q).all() and np.isfinite(R).all()
            assert np.abs(Q.conj().T @ Q - np.eye(Q.shape[1])).max() <= 1e-14
            assert np.abs(Q @ R - A).max() <= 1e-14 * np.abs(A).max() + 1e-320
            np.testing.assert_allclose(np.abs(np.diagonal(R)), np.abs(np.diagonal(np.linalg.qr(A)[1])),
                                       rtol=1e-6, atol=1e-322)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lu_subnormal_pivot(device, dtype):
    # caught (CPU): LU multiplied by 1 / pivot, inf for a subnormal pivot: 0 * inf = NaN in
    # det, slogdet and solve
    ph = 1 + 1j if dtype is np.complex128 else 1.0
    A = (np.diag([1e-310, 1e-310]) * ph).astype(dtype)
    assert _np(T.linalg.det(T.asarray(A, device=device))) == 0
    s, la = T.linalg.slogdet(T.asarray(A, device=device))
    rs, rla = np.linalg.slogdet(A)
    np.testing.assert_allclose(_np(s), rs, rtol=1e-15)
    np.testing.assert_allclose(_np(la), rla, rtol=1e-15)
    B = np.array([[1e-310, 1.0], [0.0, 1.0]]).astype(dtype)
    b = np.array([1e-310, 0.0]).astype(dtype)
    np.testing.assert_allclose(_np(T.linalg.solve(T.asarray(B, device=device), T.asarray(b, device=device))),
                               [1.0, 0.0], rtol=1e-15)
    X = _np(T.linalg.solve_triangular(T.asarray(B, device=device),
                                      T.asarray(np.tile(b[:, None], (1, 5)), device=device), upper=True))
    np.testing.assert_allclose(X, np.tile([[1.0], [0.0]], (1, 5)), rtol=1e-15)


@pytest.mark.parametrize("a", [np.eye(3), np.diag([2.0, 2.0, 1.0]), np.zeros((2, 2))])
def test_pinv_lstsq_grad_repeated_singular_values(device, a):
    # caught: the gradients of pinv and lstsq went through the SVD's rule, which divides by the
    # gaps between singular values: NaN for the identity (PyTorch: finite)
    x = _leaf(a, device)
    T.linalg.pinv(x).sum().backward()
    P = np.linalg.pinv(a)
    g = np.ones_like(a)
    I_m = np.eye(a.shape[0])
    expect = -P.T @ g @ P.T + (I_m - a @ P) @ g.T @ P @ P.T + P.T @ P @ g.T @ (I_m - P @ a)
    np.testing.assert_allclose(_np(x.grad), expect, rtol=1e-13, atol=1e-14)
    y = _leaf(a, device)
    T.linalg.lstsq(y, T.ones((a.shape[0], 1), dtype=y.dtype, device=device))[0].sum().backward()
    assert np.isfinite(_np(y.grad)).all()
    if a.any():
        ag.gradcheck(lambda t: T.linalg.pinv(t), [_leaf(a, device)])


def test_pinv_lstsq_grad_match_torch(device):
    torch = pytest.importorskip("torch")
    if device == "cuda":
        pytest.skip("PyTorch's CPU build is the reference")
    for a in (np.eye(3), np.diag([2.0, 2.0, 1.0])[:, :2], np.diag([3.0, 1.0, 1.0])):
        x = _leaf(a, "cpu")
        T.linalg.lstsq(x, T.asarray(np.arange(1.0, a.shape[0] + 1)[:, None]))[0].sum().backward()
        tx = torch.tensor(a, requires_grad=True)
        torch.linalg.lstsq(tx, torch.arange(1.0, a.shape[0] + 1, dtype=torch.float64)[:, None],
                           driver="gelsd")[0].sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
        x = _leaf(a, "cpu")
        w = np.arange(a.size, dtype=float).reshape(a.T.shape)
        (T.linalg.pinv(x) * T.asarray(w)).sum().backward()
        tx = torch.tensor(a, requires_grad=True)
        (torch.linalg.pinv(tx) * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cplx", [False, True])
def test_pinv_det_gradcheck(device, cplx):
    rng = np.random.default_rng(5)
    shapes = [(2, 3, 3), (3, 2)] if device == "cpu" else [(2, 2)]
    for shape in shapes:
        a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
        ag.gradcheck(lambda t: T.linalg.pinv(t), [_leaf(a, device)])
        if shape[-1] == shape[-2]:
            ag.gradcheck(lambda t: T.linalg.det(t), [_leaf(a, device)])


def _adjugate(a):
    n = a.shape[0]
    C = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            C[i, j] = (-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
    return C.T


@pytest.mark.parametrize("a", [np.array([[1.0, 2.0], [2.0, 4.0]]), np.diag([1.0, 2.0, 0.0]),
                               np.diag([1.0, 0.0, 0.0]), np.zeros((2, 2)),
                               np.outer([1.0, 2.0, 3j], [1.0, 1j, 2.0])])
def test_det_grad_at_singular_matrices(device, a):
    # caught: det's gradient went through lu_factor's rule, which divides by the zero pivot:
    # NaN. d det / dA is the adjugate's transpose (conjugated: PyTorch's convention)
    x = _leaf(a, device)
    T.real(T.linalg.det(x)).backward()
    np.testing.assert_allclose(_np(x.grad), _adjugate(a).T.conj(), rtol=1e-12, atol=1e-13)
    if device == "cpu":
        ag.gradcheck(lambda t: T.linalg.det(t), [_leaf(a, device)])


def test_det_jvp(device):
    torch = pytest.importorskip("torch")
    if device == "cuda":
        pytest.skip("PyTorch's CPU build is the reference")
    rng = np.random.default_rng(1)
    a, t = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    _, tan = ag.functional.jvp(lambda x: T.linalg.det(x), (T.asarray(a),), (T.asarray(t),))
    ref = torch.func.jvp(torch.linalg.det, (torch.tensor(a),), (torch.tensor(t),))[1].item()
    assert float(tan) == pytest.approx(ref, rel=1e-12)
    s = np.array([[1.0, 2.0], [2.0, 4.0]])   # singular: tr(adj(A) t)
    _, tan = ag.functional.jvp(lambda x: T.linalg.det(x), (T.asarray(s),), (T.asarray(np.eye(2)),))
    assert float(tan) == pytest.approx(5.0, rel=1e-12)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0, 0)])
def test_lu_empty(device, shape):
    # caught: lu of an empty matrix raised a ValueError from a reshape of the pivots
    P, L, U = T.linalg.lu(T.zeros(shape, device=device))
    m, n = shape[-2:]
    k = min(m, n)
    assert P.shape == shape[:-2] + (m, m) and L.shape == shape[:-2] + (m, k)
    assert U.shape == shape[:-2] + (k, n)


def test_lstsq_batched_residuals(device):
    # caught: a batch got empty residuals; PyTorch (gelsd) gives (batch, k) when every matrix
    # has full column rank
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    r = T.linalg.lstsq(T.asarray(A, device=device), T.asarray(B, device=device))
    expect = [np.linalg.lstsq(A[i], B[i], rcond=None)[1] for i in range(2)]
    np.testing.assert_allclose(_np(r.residuals), expect, rtol=1e-12)
    A[1, :, 2] = A[1, :, 1]   # rank-deficient: none, as NumPy's and PyTorch's
    r = T.linalg.lstsq(T.asarray(A, device=device), T.asarray(B, device=device))
    assert r.residuals.shape == (0,) and _np(r.rank).tolist() == [3, 2]


def test_tolerances_per_matrix(device):
    # NumPy arrays and scalars as per-matrix tolerances, as NumPy's and PyTorch's
    A = np.random.default_rng(0).standard_normal((2, 3, 3))
    x = T.asarray(A, device=device)
    assert _np(T.linalg.matrix_rank(x, rtol=np.array([0.1, 0.5]))).tolist() == \
        np.linalg.matrix_rank(A, rtol=np.array([0.1, 0.5])).tolist()
    assert _np(T.linalg.matrix_rank(x, atol=T.asarray([0.1, 1.5], device=device))).tolist() == \
        np.linalg.matrix_rank(A, tol=np.array([0.1, 1.5])).tolist()
    np.testing.assert_allclose(_np(T.linalg.pinv(x, rtol=np.float64(0.3))), np.linalg.pinv(A, rtol=0.3),
                               rtol=1e-12, atol=1e-14)
