"""linalg.eig / eigvals of REAL matrices through the real Schur form (cuda_src/scalar/
linalg_eig_real.h, run by the CPU kernel and the CUDA one): LAPACK dgeev's conventions, which the
complex QR the real input went through before did not give. Caught (hunt 10, both devices): real
eigenvalues came back with tiny imaginary parts (-1.7e-16j), complex ones not in exact conjugate
pairs, and their eigenvectors not conjugate, so `w[w.imag == 0]` or pairing conjugates silently
went wrong.

Checked against numpy.linalg.eig (the same dgeev): eigenvalues as sorted multisets, eigenvectors
up to a unit phase, residuals A V - V diag(w) within a small multiple of n eps |A|, and exactly:
real eigenvalues have imag 0 and real eigenvectors; a complex pair is adjacent, positive
imaginary part first, its second eigenvalue and eigenvector the exact conjugates of the first.
Random (1..40, batched, float32, transposed views, row strides > n), and known spectra: rotation
blocks, triangular, diagonal, zero, symmetric, companion matrices with repeated roots, a Jordan
block, a graded matrix; non-finite input; the eig gradient of a real input. The "cuda" device is
the emulator without a GPU: its sizes stay small."""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import tensor as T
from tensor.backend import backend_for
from tensor.linalg._core import LinAlgError

EPS = np.finfo(np.float64).eps


def _np(x):
    return x.to_device("cpu").numpy()


def _eig(a, device):
    w, v = T.linalg.eig(T.asarray(a, device=device))
    return _np(w), _np(v)


def _structure(w, v=None):
    """The dgeev conventions, exactly (w (n,), v (n, n) or None)."""
    i = 0
    while i < len(w):
        if w[i].imag == 0:
            if v is not None:
                assert np.all(v[:, i].imag == 0), f"eigenvector {i} of a real eigenvalue is not real"
            i += 1
            continue
        assert w[i].imag > 0, f"pair at {i}: negative imaginary part first: {w[i]}"
        assert i + 1 < len(w) and w[i + 1] == np.conj(w[i]), f"no exact conjugate after {w[i]}"
        if v is not None:
            assert np.array_equal(v[:, i + 1], np.conj(v[:, i])), f"vectors {i}, {i + 1} not conjugate"
        i += 2


def _check(a, w, v, tol_w=1e-12, tol_r=20.0):
    """w, v of the real a (n, n) against NumPy and by residual."""
    n = a.shape[-1]
    wn = np.linalg.eigvals(a)
    scale = max(1.0, np.abs(a).max())
    assert np.abs(np.sort_complex(w) - np.sort_complex(wn)).max() <= tol_w * scale
    # eigenvalues real for NumPy are exactly real here
    real = np.abs(wn.imag) <= 1e-9 * scale
    assert (w.imag == 0).sum() == real.sum()
    _structure(w, v)
    if v is not None:
        assert np.abs(np.linalg.norm(v, axis=0) - 1).max() <= 10 * n * EPS
        assert np.abs(a @ v - v * w).max() <= tol_r * n * EPS * scale


def _phase_match(v, vn):
    """|<vn_k, v_k>| == 1 for each column: equal up to a unit phase."""
    return np.abs(np.abs(np.sum(np.conj(vn) * v, axis=0)) - 1).max()


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_random_matches_numpy(device, batch):
    rng = np.random.default_rng(1)
    sizes = range(1, 41) if device == "cpu" else (1, 2, 3, 5, 8)
    for n in sizes:
        a = rng.standard_normal(batch + (n, n))
        w, v = _eig(a, device)
        assert w.dtype == np.complex128 and v.dtype == np.complex128
        w2, v2 = w.reshape(-1, n), v.reshape(-1, n, n)
        for k, ak in enumerate(a.reshape(-1, n, n)):
            _check(ak, w2[k], v2[k])
            wn, vn = np.linalg.eig(ak)
            # match each eigenvector to NumPy's of the same eigenvalue (distinct for these)
            idx = [int(np.abs(wn - x).argmin()) for x in w2[k]]
            assert sorted(idx) == list(range(n))
            assert _phase_match(v2[k], vn[:, idx]) <= 1e-8
        wv = _np(T.linalg.eigvals(T.asarray(a, device=device)))
        assert np.array_equal(wv, w)   # eigvals: the same values, in the same order


def test_report_repro_exact_structure(device):
    # the hunt's repro: NumPy's 5 x 5 has one real eigenvalue and two pairs
    a = np.random.default_rng(0).standard_normal((5, 5))
    w, v = _eig(a, device)
    assert (w.imag == 0).sum() == 1
    _check(a, w, v)


def test_float32_transposed_and_strided(device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((7, 7)).astype(np.float32)
    w, v = T.linalg.eig(T.asarray(a, device=device))
    assert w.dtype == T.complex64 and v.dtype == T.complex64
    _structure(_np(w), _np(v))
    a64 = a.astype(np.float64)
    assert np.abs(np.sort_complex(_np(w)) - np.sort_complex(np.linalg.eigvals(a64))).max() <= 1e-5
    b = rng.standard_normal((9, 9))
    t = T.asarray(b, device=device).mT   # a transposed (non-contiguous) view
    w, v = T.linalg.eig(t)
    _check(b.T, _np(w), _np(v))


def test_kernel_row_strides(device):
    """la_eig_real called directly on a view with row stride n + 3 and a larger batch stride."""
    rng = np.random.default_rng(3)
    B, n = 3, 6
    a = rng.standard_normal((B, n, n))
    big = np.full((B + 1, n, n + 3), 7.5)
    big[:B, :, :n] = a
    base = T.asarray(big, device=device)
    view = base[:B, :, :n]
    w = T.empty((B, n), dtype=T.complex128, device=device)
    v = T.empty((B, n, n), dtype=T.complex128, device=device)
    info = T.zeros((B,), dtype=T.int64, device=device)
    backend_for(view.device).la_eig_real(view, w, v, info)
    assert not _np(info).any()
    for k in range(B):
        _check(a[k], _np(w)[k], _np(v)[k])
    assert np.all(_np(base)[:, :, n:] == 7.5) and np.all(_np(base)[B] == 7.5)


def test_known_spectra(device):
    rng = np.random.default_rng(4)
    # rotation blocks: pure imaginary pairs, exactly +-1j
    rot = np.kron(np.eye(3), np.array([[0.0, 1.0], [-1.0, 0.0]]))
    w, v = _eig(rot, device)
    assert np.array_equal(w, np.array([1j, -1j] * 3))
    _check(rot, w, v)
    # a rotation by 0.7: cos 0.7 +- i sin 0.7
    c, s = np.cos(0.7), np.sin(0.7)
    w, v = _eig(np.array([[c, -s], [s, c]]), device)
    assert np.abs(w - np.array([c + 1j * s, c - 1j * s])).max() <= 2 * EPS
    # diagonal: exactly its entries, in order; triangular: its diagonal
    d = np.array([3.0, -1.0, 2.0, -1.0, 0.5])
    w, v = _eig(np.diag(d), device)
    assert np.array_equal(w, d.astype(complex))
    assert np.array_equal(np.abs(v), np.eye(5))
    tri = np.triu(rng.standard_normal((6, 6)))
    w, v = _eig(tri, device)
    assert np.array_equal(np.sort(w.real), np.sort(np.diag(tri))) and np.all(w.imag == 0)
    _check(tri, w, v)
    # zero
    w, v = _eig(np.zeros((4, 4)), device)
    assert np.all(w == 0) and np.abs(np.linalg.norm(v, axis=0) - 1).max() <= EPS
    # symmetric: all eigenvalues (and vectors) exactly real
    s = rng.standard_normal((7, 7))
    w, v = _eig(s + s.T, device)
    assert np.all(w.imag == 0) and np.all(v.imag == 0)
    _check(s + s.T, w, v)


def test_companion_repeated_roots_and_jordan(device):
    # repeated real roots 1 (x2), 2 (x3), -1 and the repeated pair +-i (x2): the computed
    # roots of a multiple-k root are only eps^(1/k) accurate
    for roots, tol in (([1, 1, 2, 2, 2, -1], 1e-4), ([1j, -1j, 1j, -1j, 2], 1e-6)):
        c = np.polynomial.polynomial.polycompanion(np.real(np.poly(roots))[::-1])
        w, v = _eig(c, device)
        _structure(w, v)
        ref = np.array(roots, dtype=complex)
        assert max(np.abs(ref - x).min() for x in w) <= tol   # (sorting would pair them wrongly)
        assert max(np.abs(w - x).min() for x in ref) <= tol
        assert np.abs(c @ v - v * w).max() <= 100 * EPS * np.abs(c).max()
    # a Jordan block (defective): the eigenvalue only; the vectors stay finite
    J = 2.0 * np.eye(5) + np.eye(5, k=1)
    w, v = _eig(J, device)
    assert np.array_equal(w, np.full(5, 2.0 + 0j)) and np.isfinite(v).all()


def test_graded_and_extreme_scales(device):
    # caught while building: the double shift's products of a window of ~1e-170 underflowed to
    # zero and the iteration never moved (LinAlgError "failed to converge")
    rng = np.random.default_rng(8)
    n = 40 if device == "cpu" else 12
    A = rng.standard_normal((n, n)) * (10.0 ** (-np.arange(n) * 3.0))[:, None]
    w, v = _eig(A, device)
    _structure(w, v)
    assert np.abs(A @ v - v * w).max() <= 1e-13 * n
    for f in (1e-200, 1e200):
        a = rng.standard_normal((5, 5))
        w, v = _eig(a * f, device)
        _check(a, w / f, v)


def test_nonfinite_input_raises(device):
    for bad in (np.nan, np.inf, -np.inf):
        a = np.eye(3)
        a[1, 2] = bad
        with pytest.raises(LinAlgError, match="non-finite"):
            T.linalg.eig(T.asarray(a, device=device))
        with pytest.raises(LinAlgError, match=r"Batch element 1\): the input contains non-finite"):
            T.linalg.eigvals(T.asarray(np.stack([np.eye(3), a]), device=device))


def test_complex_input_nonfinite_raises(device):
    # caught (CPU, complex path; real input took it before too): a NaN above the diagonal of a
    # triangular matrix gave its diagonal as the eigenvalues and an inf gave NaN, both with no
    # error (NumPy and PyTorch raise)
    for bad in (np.nan, np.inf, complex(0, np.nan)):
        a = np.eye(3, dtype=complex)
        a[1, 2] = bad
        with pytest.raises(LinAlgError, match="non-finite"):
            T.linalg.eigvals(T.asarray(a, device=device))


@pytest.mark.parametrize("cplx", [False, True])
def test_zero_eigenvalue_vectors_stay_finite(device, cplx):
    # caught (CPU, the complex path and the real one at first): the eigenvector of an exact
    # zero eigenvalue above a 1e-90 diagonal entry divided ~1e90 by the perturbed divisor
    # (~1e-291): inf, then NaN columns in V (NumPy: finite, residual ~1e-16)
    a = np.array([[0.0, 1.0, 1.0], [0.0, 1e-90, 1.0], [0.0, 0.0, 0.0]])
    w, v = _eig(a.astype(complex) if cplx else a, device)
    assert np.isfinite(v).all() and np.isfinite(w).all()
    assert np.abs(np.linalg.norm(v, axis=0) - 1).max() <= 4 * EPS
    assert np.abs(a @ v - v * w).max() <= 4 * EPS


@pytest.mark.parametrize("cplx", [False, True])
def test_small_subdiagonal_with_large_mirror_is_not_deflated(device, cplx):
    # caught (all three QR iterations: real, complex CPU, complex CUDA): [[a, b], [c, a]] with
    # |c| < eps |a| but |b c| >> (eps a)^2 was split at c, both eigenvalues a: a relative error
    # of 1e-10 (first) and lost imaginary parts +-1.4e-16j (second); NumPy is exact to eps
    ms = [np.array([[3.5403468650946994e27, -1.0490882757418588e26],
                    [-1518515776.5894508, 3.5403468650946994e27]]),
          np.array([[0.01065129657910144, -1.66999033805386e-11],
                    [1.1122903361014518e-21, 0.01065129657910144]])]
    for m in ms:
        ref = np.linalg.eigvals(m)
        w, v = _eig(m.astype(complex) if cplx else m, device)
        assert max(np.abs(ref - x).min() for x in w) <= 4 * EPS * np.abs(m).max()
        assert max(np.abs(w - x).min() for x in ref) <= 4 * EPS * np.abs(m).max()
        if not cplx:
            _structure(w, v)
        assert np.abs(m @ v - v * w).max() <= 4 * EPS * np.abs(m).max()


def test_empty_and_1x1(device):
    w, v = T.linalg.eig(T.zeros((2, 0, 0), device=device))
    assert w.shape == (2, 0) and v.shape == (2, 0, 0) and w.dtype == T.complex128
    a = T.empty((2, 0, 0), dtype=T.float64, device=device)   # the kernel itself: info zeroed
    info = T.full((2,), 5, dtype=T.int64, device=device)
    backend_for(a.device).la_eig_real(a, T.empty((2, 0), dtype=T.complex128, device=device),
                                      T.empty((2, 0, 0), dtype=T.complex128, device=device), info)
    assert _np(info).tolist() == [0, 0]
    w, v = _eig(np.array([[-2.5]]), device)
    assert w.tolist() == [-2.5 + 0j] and v.tolist() == [[1 + 0j]]


def test_host_path_size(device):
    """n >= the CUDA backend's HOST_LINALG: solved by the CPU kernel on a host copy."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((65, 65))
    w, v = _eig(a, device)
    _check(a, w, v)


def test_gradient_of_real_input_matches_differences(device):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 4)) + 2 * np.eye(4)

    def f(x):
        w, v = T.linalg.eig(x)
        return (T.real(w) ** 3 + T.imag(w) ** 2).sum() + (T.abs(v) ** 2 * T.arange(4.0)).sum()

    x = T.asarray(a, device=device)
    x.requires_grad = True
    (g,) = ag.grad(f(x), x)
    assert g.dtype == T.float64
    g = _np(g)
    h = 1e-6
    num = np.zeros_like(a)
    for i in range(4):
        for j in range(4):
            e = np.zeros_like(a)
            e[i, j] = h
            num[i, j] = (_np(f(T.asarray(a + e, device=device))).item()
                         - _np(f(T.asarray(a - e, device=device))).item()) / (2 * h)
    assert np.abs(g - num).max() <= 1e-6 * max(1.0, np.abs(num).max())
