"""tensor.linalg's tensorinv, tensorsolve, vander, householder_product and the `_ex` forms
(tensor/linalg/_extra.py); tensor.fft's hfftn / ihfftn / hfft2 / ihfft2 and PyTorch's `dim`
keyword. Against NumPy (and closed forms) always, PyTorch where installed; gradients by gradcheck.
Each test caught the function's absence (AttributeError / TypeError on the old code)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from autograd import gradcheck

RNG = np.random.default_rng(20261128)


def _t(a, device, **kw):
    return T.asarray(np.asarray(a), device=device, **kw)


def _np(t):
    return t.to_device("cpu").numpy()


@pytest.mark.usefixtures("device")
def test_tensorinv_tensorsolve(device):
    a = RNG.standard_normal((4, 6, 8, 3))
    np.testing.assert_allclose(_np(T.linalg.tensorinv(_t(a, device), ind=2)),
                               np.linalg.tensorinv(a, ind=2), rtol=1e-10, atol=1e-12)
    a, b = RNG.standard_normal((6, 4, 2, 3, 4)), RNG.standard_normal((6, 4))
    np.testing.assert_allclose(_np(T.linalg.tensorsolve(_t(a, device), _t(b, device))),
                               np.linalg.tensorsolve(a, b), rtol=1e-9, atol=1e-11)
    a = RNG.standard_normal((2, 3, 4, 6, 4))
    np.testing.assert_allclose(_np(T.linalg.tensorsolve(_t(a, device), _t(b, device), dims=(0, 1))),
                               np.linalg.tensorsolve(a, b, axes=(0, 1)), rtol=1e-9, atol=1e-11)
    with pytest.raises(ValueError, match="tensorinv"):
        T.linalg.tensorinv(_t(RNG.standard_normal((2, 3, 4)), device), ind=1)
    with pytest.raises(ValueError, match="tensorsolve"):
        T.linalg.tensorsolve(_t(RNG.standard_normal((6, 5)), device), _t(np.ones(6), device))


@pytest.mark.usefixtures("device")
def test_vander(device):
    x = RNG.standard_normal((2, 5))
    np.testing.assert_allclose(_np(T.linalg.vander(_t(x, device), N=4)),
                               np.stack([np.vander(r, 4, increasing=True) for r in x]), rtol=1e-14)
    got = T.linalg.vander(_t(np.array([1, 2, 3]), device))
    assert got.dtype == T.int64 and _np(got).tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    with pytest.raises(ValueError, match="greater than 1"):
        T.linalg.vander(_t(x, device), N=1)
    xs = T.tensor(RNG.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda z: T.linalg.vander(z, N=3), (xs,))


def _householder_reference(A, tau):
    m, n = A.shape
    Q = np.eye(m, dtype=A.dtype)
    for i in range(tau.shape[0]):
        v = np.zeros(m, dtype=A.dtype)
        v[i] = 1
        v[i + 1:] = A[i + 1:, i]
        Q = Q @ (np.eye(m) - tau[i] * np.outer(v, v.conj()))
    return Q[:, :n]


@pytest.mark.usefixtures("device")
def test_householder_product(device):
    A, tau = RNG.standard_normal((3, 5, 3)), RNG.standard_normal((3, 2))
    got = _np(T.linalg.householder_product(_t(A, device), _t(tau, device)))
    for b in range(3):
        np.testing.assert_allclose(got[b], _householder_reference(A[b], tau[b]), rtol=1e-12, atol=1e-12)
    # with geqrf's reflectors (from the QR of NumPy's LAPACK) it rebuilds Q
    M = RNG.standard_normal((5, 3)) + 1j * RNG.standard_normal((5, 3))
    h, tau = np.linalg.qr(M, mode="raw")
    Q = _np(T.linalg.householder_product(_t(h.T.copy(), device), _t(tau, device)))
    np.testing.assert_allclose(np.abs(Q.conj().T @ M), np.abs(np.linalg.qr(M)[1]), atol=1e-12)
    with pytest.raises(ValueError, match="householder_product"):
        T.linalg.householder_product(_t(RNG.standard_normal((2, 3)), device), _t(np.ones(1), device))


def test_householder_product_gradients_and_torch():
    A = T.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    tau = T.tensor(RNG.standard_normal(2), requires_grad=True)
    assert gradcheck(T.linalg.householder_product, (A, tau))
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 6, 4)) + 1j * RNG.standard_normal((2, 6, 4))
    t = RNG.standard_normal((2, 3)) + 0j
    np.testing.assert_allclose(T.linalg.householder_product(T.asarray(a), T.asarray(t)).numpy(),
                               torch.linalg.householder_product(torch.tensor(a), torch.tensor(t)).numpy(),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("device")
def test_ex_forms_report_info(device):
    B = np.stack([[[1.0, 2], [2, 1]], [[2.0, 1], [1, 2]], [[-1.0, 0], [0, 1]]])
    r = T.linalg.cholesky_ex(_t(B, device))
    assert _np(r.info).tolist() == [2, 0, 1] and r.info.dtype == T.int32
    np.testing.assert_allclose(_np(r.L)[1], np.linalg.cholesky(B[1]), rtol=1e-14)
    np.testing.assert_allclose(_np(r.L)[0], [[1, 0], [2, -3]])   # as far as it went (LAPACK's)
    assert _np(T.linalg.cholesky_ex(_t(B[1], device), upper=True).L).tolist() == \
        np.linalg.cholesky(B[1]).T.tolist()
    S = np.stack([2 * np.eye(2), np.zeros((2, 2)), [[1.0, 2], [2, 4]]])
    r = T.linalg.inv_ex(_t(S, device))
    assert _np(r.info).tolist() == [0, 1, 2]
    np.testing.assert_allclose(_np(r.inverse)[0], np.eye(2) / 2)
    assert np.isnan(_np(r.inverse)[1:]).all()
    r = T.linalg.solve_ex(_t(S, device), _t(np.ones((3, 2, 1)), device))
    assert _np(r.info).tolist() == [0, 1, 2]
    np.testing.assert_allclose(_np(r.result)[0, :, 0], [0.5, 0.5])
    r = T.linalg.lu_factor_ex(_t(S, device))
    assert _np(r.info).tolist() == [0, 1, 2] and r.pivots.dtype == T.int32
    for fn in (T.linalg.inv_ex, T.linalg.lu_factor_ex, T.linalg.cholesky_ex):
        with pytest.raises(T.linalg.LinAlgError, match="Batch element"):
            fn(_t(S if fn is not T.linalg.cholesky_ex else B[::-1].copy(), device), check_errors=True)
    ok = _t(2 * np.eye(3), device)   # all fine: info zeros, results as the plain functions
    r = T.linalg.inv_ex(ok)
    assert r.info.shape == () and int(r.info) == 0
    np.testing.assert_allclose(_np(r.inverse), np.eye(3) / 2)


def test_ex_forms_keep_gradients_of_the_good_matrices():
    A = T.tensor(np.stack([2 * np.eye(2), np.zeros((2, 2))]), requires_grad=True)
    r = T.linalg.inv_ex(A)
    r.inverse[0].sum().backward()
    np.testing.assert_allclose(A.grad.numpy()[0], np.full((2, 2), -0.25))
    assert (A.grad.numpy()[1] == 0).all()
    torch = pytest.importorskip("torch")
    S = np.stack([2 * np.eye(2), np.zeros((2, 2)), [[1.0, 2], [2, 4]]])
    for name in ("inv_ex", "lu_factor_ex", "cholesky_ex"):
        ours = getattr(T.linalg, name)(T.asarray(S)).info.numpy()
        theirs = getattr(torch.linalg, name)(torch.tensor(S)).info.numpy()
        assert ours.tolist() == theirs.tolist(), name


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_hfftn_ihfftn(device, norm):
    x = RNG.standard_normal((4, 5, 6)) + 1j * RNG.standard_normal((4, 5, 6))
    r = RNG.standard_normal((4, 5, 6))
    for s, axes in [(None, None), ((4, 10), (0, 2)), (None, (1, 2))]:
        # hfftn: the real transform of the Hermitian signal; as NumPy's irfftn of conj(x), rescaled
        want = np.fft.irfftn(np.conj(x), s, axes, norm={"forward": "backward", "ortho": "ortho"}.get(
            norm, "forward"))
        np.testing.assert_allclose(_np(T.fft.hfftn(_t(x, device), s, axes, norm)), want, rtol=1e-10,
                                   atol=1e-10)
        want = np.conj(np.fft.rfftn(r, s, axes, norm={"forward": "backward", "ortho": "ortho"}.get(
            norm, "forward")))
        np.testing.assert_allclose(_np(T.fft.ihfftn(_t(r, device), s, axes, norm)), want, rtol=1e-10,
                                   atol=1e-12)
    np.testing.assert_allclose(_np(T.fft.hfft2(_t(x, device), norm=norm)),
                               _np(T.fft.hfftn(_t(x, device), axes=(-2, -1), norm=norm)))
    np.testing.assert_allclose(_np(T.fft.ihfft2(_t(r, device), norm=norm)),
                               _np(T.fft.ihfftn(_t(r, device), axes=(-2, -1), norm=norm)))


def test_hfftn_matches_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 4, 5)) + 1j * RNG.standard_normal((3, 4, 5))
    r = RNG.standard_normal((3, 4, 5))
    for s, dim in [(None, None), ((3, 8), (0, 2)), ((2, 3, 7), None)]:
        np.testing.assert_allclose(T.fft.hfftn(T.asarray(x), s=s, dim=dim).numpy(),
                                   torch.fft.hfftn(torch.tensor(x), s=s, dim=dim).numpy(), rtol=1e-10)
        np.testing.assert_allclose(T.fft.ihfftn(T.asarray(r), s=s, dim=dim).numpy(),
                                   torch.fft.ihfftn(torch.tensor(r), s=s, dim=dim).numpy(), rtol=1e-10)
    xs = T.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda z: T.fft.ihfft2(z), (xs,))


def test_fft_takes_torchs_dim_keyword():
    r = RNG.standard_normal((4, 6))
    np.testing.assert_allclose(T.fft.fft(T.asarray(r), dim=0).numpy(), np.fft.fft(r, axis=0))
    np.testing.assert_allclose(T.fft.rfftn(T.asarray(r), dim=(0,)).numpy(), np.fft.rfftn(r, axes=(0,)))
    np.testing.assert_allclose(T.fft.fftshift(T.asarray(r), dim=1).numpy(), np.fft.fftshift(r, axes=1))
    with pytest.raises(TypeError, match="both"):
        T.fft.fft(T.asarray(r), axis=0, dim=0)
