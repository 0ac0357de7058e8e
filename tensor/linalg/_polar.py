"""The polar decomposition A = U H and the principal square root of Hermitian positive-(semi)
definite matrices (PyTorch 2.14's linalg.polar and linalg.matrix_sqrth), from the SVD / the
Hermitian eigendecomposition, differentiable.

Values come from one SVD (polar: U = W V^H, H = V diag(s) V^H for A = W diag(s) V^H) or one
eigh (matrix_sqrth: V diag(sqrt(max(w, 0))) V^H). Derivatives do not go through those
factorizations (whose rules divide by s_i^2 - s_j^2 and w_i - w_j, undefined at repeated values,
which orthogonal and identity-like inputs have): the result is the value plus a term that is
exactly zero but carries the derivative, the second-order expansion of X^2 = A about the
computed root X0,

    X(A0 + E) = X0 + E1 - S^-1(E1 E1) + O(|E|^3),   E1 = S^-1(E),   S(Y) = X0 Y + Y X0,

S^-1 solved in X0's eigenbasis (denominators r_i + r_j, zero only where X0 is singular). So
first and second derivatives are exact (forward and reverse mode), defined wherever A has full
column rank (polar) or is positive-definite (matrix_sqrth); third and higher derivatives are
not. At rank-deficient points the derivative terms that divide by zero are dropped (PyTorch
leaves the gradient undefined there).
"""
from __future__ import annotations

from typing import NamedTuple

from .. import dtypes as dt
from .._tensor import Tensor
from ._core import as_matrix
from ._funcs import _wants_grad, eigh, svd
from ._names import T


class PolarResult(NamedTuple):
    U: Tensor
    H: Tensor


def _H(x: Tensor) -> Tensor:
    return x.mT.conj() if x.dtype.kind == "c" else x.mT


def _herm(x: Tensor) -> Tensor:
    return (x + _H(x)) / 2


def _check_float(A: Tensor, op: str) -> Tensor:
    if A.dtype.kind not in "fc":   # as PyTorch (its float / complex dtypes only)
        raise TypeError(f"linalg.{op}: expected a floating point or complex tensor, got {A.dtype.name}")
    return A


def _safe_inv(x: Tensor) -> Tensor:
    """1 / x where x != 0, 0 where it is."""
    zero = x == 0
    return T.where(zero, T.zeros_like(x), 1 / T.where(zero, T.ones_like(x), x))


class _Root:
    """X0 = V diag(r) V^H (r >= 0, constants) and the solver of X0 Y + Y X0 = E."""

    def __init__(self, V: Tensor, r: Tensor):
        self.V, self.Vh = V, _H(V)
        self.Q = _safe_inv(r[..., :, None] + r[..., None, :]).astype(V.dtype)

    def sylv(self, E: Tensor) -> Tensor:
        return T.matmul(self.V, T.matmul(self.Q * T.matmul(self.Vh, T.matmul(E, self.V)), self.Vh))

    def delta(self, G: Tensor) -> Tensor:
        """sqrt(G) - X0 to second order in G - G0 (G Hermitian, its value G0 = X0^2): a tensor
        that is exactly zero and carries the first and second derivatives."""
        E1 = self.sylv(G - G.detach())
        return E1 - self.sylv(T.matmul(E1, E1))


def _lower_hermitian(A: Tensor) -> Tensor:
    """The Hermitian matrix whose lower triangle (real diagonal) is A's."""
    low = T.tril(A, -1)
    dg = T.diagonal(A, 0, -2, -1)
    if A.dtype.kind == "c":
        dg = T.real(dg).astype(A.dtype)
    eye = T.eye(A.shape[-1], dtype=dt.bool_, device=A.device)
    return T.where(eye, dg[..., None, :], low + _H(low))


def matrix_sqrth(A) -> Tensor:
    """The principal square root X (X X = A, X Hermitian positive-semidefinite) of symmetric /
    Hermitian positive-definite matrices (PyTorch's linalg.matrix_sqrth): only A's lower
    triangle is read (as eigh); negative eigenvalues are taken as zero (as PyTorch). Batches;
    float / complex only. Differentiable (module docstring: first and second derivatives exact
    where A is positive-definite; the gradient is Hermitian, as eigh's)."""
    op = "matrix_sqrth"
    A = _check_float(as_matrix(A, op, square=True), op)
    if A.shape[-1] == 0:
        return T.zeros(A.shape, dtype=A.dtype, device=A.device) + 0 * A
    w, V = eigh(_lower_hermitian(A.detach()))
    r = T.sqrt(T.where(w > 0, w, T.zeros_like(w)))
    X0 = _herm(T.matmul(V * r.astype(V.dtype)[..., None, :], _H(V)))
    if not _wants_grad(A):
        return X0
    D = A - A.detach()                       # exactly zero, the derivative of A
    return X0 + _Root(V, r).delta(_herm(D))


def polar(A) -> PolarResult:
    """(U, H) with A = U H for A (*, m, n), m >= n: U (m x n) with orthonormal columns (the
    nearest to A in the Frobenius norm), H (n x n) Hermitian positive-semidefinite (PyTorch's
    linalg.polar, SciPy's linalg.polar with side='right'), from the SVD. Batches; float /
    complex only. Differentiable (module docstring: first and second derivatives exact where A
    has full column rank)."""
    op = "polar"
    A = _check_float(as_matrix(A, op), op)
    m, n = A.shape[-2:]
    if m < n:
        raise ValueError(f"linalg.{op}: A must have at least as many rows as columns (m >= n), "
                         f"got shape {A.shape}")
    if n == 0:
        z = 0 * T.sum(A)
        return PolarResult(T.zeros(A.shape, dtype=A.dtype, device=A.device) + z,
                           T.zeros(A.shape[:-2] + (0, 0), dtype=A.dtype, device=A.device) + z)
    W, s, Vh = svd(A.detach(), full_matrices=False)
    V = _H(Vh)
    U0 = T.matmul(W, Vh)
    H0 = _herm(T.matmul(V * s.astype(V.dtype)[..., None, :], Vh))
    if not _wants_grad(A):
        return PolarResult(U0, H0)
    root = _Root(V, s)
    dH = root.delta(T.matmul(_H(A), A))           # H = sqrt(A^H A), to second order
    P = T.matmul(V * _safe_inv(s).astype(V.dtype)[..., None, :], Vh)   # H0^-1 (pinv)
    PdH = T.matmul(P, dH)
    Hinv = P - T.matmul(PdH, P) + T.matmul(PdH, T.matmul(PdH, P))    # (H0 + dH)^-1, 2nd order
    Uf = T.matmul(A, Hinv)
    return PolarResult(U0 + (Uf - Uf.detach()), H0 + dH)


__all__ = ["PolarResult", "matrix_sqrth", "polar"]
