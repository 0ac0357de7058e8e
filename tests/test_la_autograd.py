"""Derivatives of tensor.linalg (autograd/rules_la.py) on both devices: reverse mode against
float64 / complex128 central differences (gradcheck), second order for a few, forward mode
(jvp) against directional differences, and the gradients against PyTorch's where it is
installed. Spectral functions are checked through gauge-invariant functions of their results
(|V|^2, |U|^2...), and Hermitian inputs through (A + A^H) / 2, as PyTorch's own tests do."""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import autograd
import tensor as T

L = T.linalg
pytestmark = pytest.mark.usefixtures("device")


def _sym(a):
    return (a + a.mT.conj()) / 2


def _pd(a):
    return T.matmul(a, a.mT.conj()) + 3 * T.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _abs2(x):
    return T.real(x * x.conj()) if x.dtype.kind == "c" else x * x


# name: (fn of the inputs, their shapes; square ones are made well conditioned)
CASES = {
    "solve": (lambda a, b: L.solve(a, b), [(3, 3), (3, 2)]),
    "solve_right": (lambda a, b: L.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "solve_vector": (lambda a, b: L.solve(a, b), [(3, 3), (3,)]),
    "inv": (lambda a: L.inv(a), [(2, 3, 3)]),
    "det": (lambda a: L.det(a), [(3, 3)]),
    "slogdet": (lambda a: L.slogdet(a).logabsdet, [(3, 3)]),
    "solve_triangular": (lambda a, b: L.solve_triangular(a, b, upper=True), [(3, 3), (3, 2)]),
    "solve_triangular_right_unit": (lambda a, b: L.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True), [(3, 3), (2, 3)]),
    "lu_factor": (lambda a: L.lu_factor(a).LU, [(3, 3)]),
    "lu": (lambda a: L.lu(a).U, [(3, 3)]),
    "lu_solve": (lambda a, b: L.lu_solve(*L.lu_factor(a), b), [(3, 3), (3, 2)]),
    "cholesky": (lambda a: L.cholesky(_pd(a)), [(3, 3)]),
    "cholesky_upper": (lambda a: L.cholesky(_pd(a), upper=True), [(3, 3)]),
    "qr_tall": (lambda a: tuple(_abs2(x) for x in L.qr(a)), [(4, 3)]),
    "qr_wide": (lambda a: tuple(_abs2(x) for x in L.qr(a)), [(2, 4)]),
    "eigh": (lambda a: (L.eigh(_sym(a))[0], _abs2(L.eigh(_sym(a))[1])), [(3, 3)]),
    "eigvalsh": (lambda a: L.eigvalsh(_sym(a)), [(3, 3)]),
    "svd": (lambda a: (L.svd(a, full_matrices=False).S,
                       _abs2(L.svd(a, full_matrices=False).U),
                       _abs2(L.svd(a, full_matrices=False).Vh)), [(4, 3)]),
    "svd_wide": (lambda a: _abs2(L.svd(a, full_matrices=False).Vh), [(2, 4)]),
    "svdvals": (lambda a: L.svdvals(a), [(3, 4)]),
    "pinv": (lambda a: L.pinv(a), [(4, 3)]),
    "lstsq": (lambda a, b: L.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    "eig": (lambda a: (L.eig(a)[0], _abs2(L.eig(a)[1])), [(3, 3)]),
    "eigvals": (lambda a: L.eigvals(a), [(3, 3)]),
    "vector_norm": (lambda a: L.vector_norm(a, axis=-1), [(3, 4)]),
    "vector_norm_3": (lambda a: L.vector_norm(a, ord=3), [(3, 4)]),
    "vector_norm_inf": (lambda a: L.vector_norm(a, ord=math.inf, axis=0), [(3, 4)]),
    "matrix_norm_nuc": (lambda a: L.matrix_norm(a, ord="nuc"), [(3, 4)]),
    "matrix_norm_2": (lambda a: L.matrix_norm(a, ord=2), [(3, 4)]),
    "norm_fro": (lambda a: L.norm(a), [(3, 4)]),
    "cond": (lambda a: L.cond(a), [(3, 3)]),
    "matrix_power": (lambda a: L.matrix_power(a, -2), [(3, 3)]),
    "multi_dot": (lambda a, b: L.multi_dot([a, b, a.mT]), [(3, 4), (4, 4)]),
    "cross": (lambda a, b: L.cross(a, b), [(2, 3), (2, 3)]),
    "trace": (lambda a: L.trace(a), [(3, 3)]),
    "matrix_exp": (lambda a: L.matrix_exp(a), [(2, 3, 3)]),
    "matrix_exp_squared": (lambda a: L.matrix_exp(4 * a), [(3, 3)]),   # squarings on the path
}
SECOND = {"solve", "inv", "cholesky", "eigvalsh", "det", "svdvals", "vector_norm", "matrix_exp"}


def _inputs(rng, shapes, cplx):
    out = []
    for s in shapes:
        a = rng.standard_normal(s)
        if cplx:
            a = a + 1j * rng.standard_normal(s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + 3 * np.eye(s[-1])     # well conditioned and away from repeated eigenvalues
        out.append(a)
    return out


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_jvp(name, cplx):
    if cplx and name in ("cross",):
        pytest.skip("real-only case")
    fn, shapes = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    vals = _inputs(rng, shapes, cplx)
    xs = [T.asarray(v).requires_grad_() for v in vals]
    assert autograd.gradcheck(fn, tuple(xs), atol=1e-6, rtol=1e-4)
    if name in SECOND and not cplx:
        assert autograd.gradgradcheck(fn, tuple(xs), atol=1e-5, rtol=1e-3)
    tans = _inputs(rng, shapes, cplx)
    out, tan = autograd.jvp(fn, tuple(T.asarray(v) for v in vals), tuple(T.asarray(t) for t in tans))
    eps = 1e-6
    hi = fn(*[T.asarray(v + eps * t) for v, t in zip(vals, tans)])
    lo = fn(*[T.asarray(v - eps * t) for v, t in zip(vals, tans)])
    hi, lo, tan = [x if isinstance(x, tuple) else (x,) for x in (hi, lo, tan)]
    for t, h, lw in zip(tan, hi, lo):
        num = (h.numpy() - lw.numpy()) / (2 * eps)
        assert np.abs(t.numpy() - num).max() <= 1e-5 * max(1.0, np.abs(num).max()), name


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    if T.get_default_device().type != "cpu":
        pytest.skip("PyTorch's CPU build is the reference; the CUDA device is covered by gradcheck")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)) + 3 * np.eye(4)
    for ours, theirs in [
        (lambda x: L.det(x), lambda x: torch.linalg.det(x)),
        (lambda x: L.svdvals(x).sum(), lambda x: torch.linalg.svdvals(x).sum()),
        (lambda x: L.inv(x), lambda x: torch.linalg.inv(x)),
        (lambda x: L.eigvals(x), lambda x: torch.linalg.eigvals(x)),
        (lambda x: L.matrix_exp(x), lambda x: torch.linalg.matrix_exp(x)),
        (lambda x: L.cholesky(_pd(x)), lambda x: torch.linalg.cholesky(
            x @ x.mH + 3 * torch.eye(4, dtype=x.dtype))),
    ]:
        w = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
        x = T.asarray(a).requires_grad_()
        y = ours(x)
        wy = T.asarray(w[:y.shape[0], :] if y.ndim == 2 else w[0, :y.shape[0]] if y.ndim else w[0, 0])
        loss = T.sum(T.real(y * wy.conj()) if y.dtype.kind == "c" else y * T.real(wy))
        (g,) = autograd.grad(loss, [x])
        tx = torch.tensor(a, requires_grad=True)
        ty = theirs(tx)
        tw = torch.tensor(wy.numpy())
        tl = torch.sum(torch.real(ty * tw.conj()) if ty.is_complex() else ty * torch.real(tw))
        (tg,) = torch.autograd.grad(tl, [tx])
        np.testing.assert_allclose(g.numpy(), tg.resolve_conj().numpy(), rtol=1e-9, atol=1e-10)


def test_norm_subgradient_at_zero_is_zero():
    x = T.zeros((2, 3)).requires_grad_()
    L.vector_norm(x).backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2
    y = T.asarray([1.0, -3.0, 3.0]).requires_grad_()
    L.vector_norm(y, ord=math.inf).backward()          # ties share the gradient
    assert y.grad.tolist() == [0.0, -0.5, 0.5]


def test_not_differentiable_modes_raise():
    a = T.asarray(np.random.default_rng(1).standard_normal((4, 2))).requires_grad_()
    q, r = L.qr(a, mode="complete")
    with pytest.raises(NotImplementedError, match="linalg.qr: mode='complete' is not differentiable"):
        T.sum(q).backward()
    b = T.asarray(np.random.default_rng(1).standard_normal((3, 4))).requires_grad_()
    with pytest.raises(NotImplementedError, match="rectangular LU"):
        T.sum(L.lu_factor(b).LU).backward()


def test_phase_dependent_losses_raise():
    """A loss that depends on the arbitrary phase of complex eigen/singular vectors has no
    gradient: PyTorch's error, not a silent answer."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    x = T.asarray(a).requires_grad_()
    for f, op in [(lambda: T.real(L.eigh(_sym(x)).eigenvectors).sum(), "eigh"),
                  (lambda: T.real(L.eig(x).eigenvectors).sum(), "eig"),
                  (lambda: T.real(L.svd(x).U).sum() + T.real(L.svd(x).Vh).sum(), "svd")]:
        with pytest.raises(RuntimeError, match=f"linalg.{op}: the loss depends on the phase"):
            f().backward()
    T.real(L.svd(x).U * L.svd(x).U.conj()).sum().backward()   # |U|^2 is phase free: fine
