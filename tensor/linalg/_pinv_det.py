"""det and pinv as recorded ops ("linalg_det", "linalg_pinv"; rules in autograd/rules_la.py).

Composed from lu_factor and svd, their gradients went through those ops' rules, which divide
by zero pivots and by singular-value gaps: NaN for det at any singular matrix and for pinv
(and lstsq) at any matrix with a repeated singular value, the identity included. Their own
rules use closed forms instead: the adjugate for det, the Golub-Pereyra derivative for pinv.
"""
from __future__ import annotations

from .. import dtypes as dt
from .._hook import differentiable
from .._tensor import Tensor
from . import _core as C
from ._core import as_matrix
from ._names import T


def _perm_sign(piv, d):
    n = piv.shape[-1]
    swaps = T.sum(piv != T.arange(1, n + 1, dtype=piv.dtype, device=piv.device), axis=-1)
    return (1 - 2 * (swaps % 2)).astype(d)


def _det_raw(A):
    A = as_matrix(A, "det", square=True)
    n = A.shape[-1]
    if n == 0:
        return T.ones(A.shape[:-2], dtype=C.result_dtype(A.dtype), device=A.device)
    LU, piv = C._lu_factor_raw(A)
    d = T.prod(T.diagonal(LU, 0, -2, -1), axis=-1)
    return d * _perm_sign(piv, LU.dtype)


det_op = differentiable("linalg_det", _det_raw)


def tolerance(S, m: int, n: int, rtol, atol):
    """The cutoff max(atol, rtol * largest singular value) (rtol default: max(m, n) * eps, or
    0 when a positive atol is given)."""
    smax = T.max(S, axis=-1, keepdims=True) if S.shape[-1] else T.zeros(
        S.shape[:-1] + (1,), dtype=S.dtype, device=S.device)
    rtol, atol = _per_matrix(rtol, S), _per_matrix(atol, S)
    if rtol is None:
        rtol = 0.0 if atol is not None and bool(T.any(atol > 0)) else max(m, n) * T.finfo(S.dtype).eps
    cut = rtol * smax
    if atol is not None:
        cut = T.maximum(cut, T.zeros_like(cut) + atol)
    return cut


def _per_matrix(v, S):
    """A tolerance as a number, or as a tensor (..., 1) against S's (..., k) (a Tensor, a
    NumPy array or scalar: one value per matrix of the batch)."""
    if v is None or (isinstance(v, int | float) and not isinstance(v, bool)):
        return v
    t = v if isinstance(v, Tensor) else T.asarray(v, device=S.device)
    return T.expand_dims(t, -1)


def _pinv_raw(A, rtol=None, atol=None):
    A = as_matrix(A, "pinv")
    m, n = A.shape[-2:]
    U, S, Vh = C._svd_raw(A, False)
    keep = ~(S <= tolerance(S, m, n, rtol, atol))     # (NaN stays: a NaN input gives NaN, not 0)
    sinv = T.where(keep, 1 / T.where(keep, S, T.ones_like(S)), T.zeros_like(S))
    return T.matmul(Vh.mT.conj() * T.expand_dims(sinv, -2).astype(Vh.dtype), U.mT.conj())


pinv_op = differentiable("linalg_pinv", _pinv_raw)


def adjugate_h(A, d):
    """adj(A)^H (= conj(det A) A^-H where A is invertible) of square A (..., n, n) with
    determinants d; differentiable. Singular matrices (d == 0) through the SVD A = U S Vh:
    adj(A)^H = conj(det U det Vh) U diag(prod_{j != i} s_j) Vh."""
    n = A.shape[-1]
    rd = C.result_dtype(A.dtype)
    if n == 0:
        return T.zeros(A.shape, dtype=rd, device=A.device)
    eye = T.eye(n, dtype=rd, device=A.device)
    sing = d == 0
    mask = T.expand_dims(T.expand_dims(sing, -1), -1)
    safe = T.where(mask, eye, A)
    inv = C.solve_op(safe, T.broadcast_to(eye, A.shape), True)
    out = T.expand_dims(T.expand_dims(d.conj(), -1), -1) * inv.mT.conj()
    if not bool(T.any(sing)):
        return out
    U, S, Vh = C.svd_op(A, False)
    row = T.expand_dims(S, -2)
    others = T.prod(T.where(T.eye(n, dtype=dt.bool_, device=A.device), T.ones_like(row), row), axis=-1)
    ph = (det_op(U) * det_op(Vh)).conj()
    sv = T.matmul(U * T.expand_dims(others, -2).astype(U.dtype), Vh)
    sv = T.expand_dims(T.expand_dims(ph, -1), -1) * sv
    return T.where(mask, sv.astype(rd), out)
