"""PyTorch's and NumPy's remaining tensor.linalg functions, composed from the others (so
differentiable through them): tensorinv, tensorsolve, vander, householder_product, and the
`_ex` forms (cholesky_ex, inv_ex, solve_ex, lu_factor_ex) that report a failure in an `info`
tensor instead of raising.

info follows LAPACK's and PyTorch's codes (int32, one per matrix of the batch): 0 for success;
for cholesky_ex the order of the leading minor that is not positive-definite; for inv_ex,
solve_ex and lu_factor_ex i + 1 where U[i, i] of the LU factorization is exactly zero. Where
info is not 0 the other results are unspecified in PyTorch; here cholesky_ex's L holds the
factorization as far as it went and inv_ex / solve_ex give NaN for those matrices (the others
of the batch are computed as usual, with gradients).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .. import dtypes as dt
from .. import elementwise as ew
from .._tensor import Tensor
from . import _core as C
from ._core import LinAlgError, as_matrix
from ._funcs import cholesky, inv, lu_factor, solve
from ._names import T


class CholeskyExResult(NamedTuple):
    L: Tensor
    info: Tensor


class InvExResult(NamedTuple):
    inverse: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    result: Tensor
    info: Tensor


class LUFactorExResult(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


def _info(batch: tuple, device) -> Tensor:
    return T.zeros(batch, dtype=dt.int32, device=device)


def _zero_pivot(LU: Tensor) -> Tensor:
    """i + 1 for the first exactly zero U[i, i] of each packed LU, 0 where there is none."""
    d = T.diagonal(LU, 0, -2, -1) == 0
    return T.where(T.any(d, axis=-1), T.argmax(d.astype(dt.int32), axis=-1) + 1, 0).astype(dt.int32)


def _patched(A: Tensor, bad: Tensor) -> Tensor:
    """A with the matrices where `bad` holds replaced by the identity (so that the rest of the
    batch can be computed with gradients)."""
    eye = T.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return T.where(bad[..., None, None], eye, A)


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:
    """(L, info): cholesky, with a failure reported in info (the order of the first leading
    minor that is not positive-definite) instead of raised, unless check_errors."""
    A = as_matrix(A, "cholesky_ex", square=True)
    batch = A.shape[:-2]
    try:
        return CholeskyExResult(cholesky(A, upper=upper), _info(batch, A.device))
    except LinAlgError:
        if check_errors:
            raise
    a = C.work(A)
    codes = C._int((a.shape[0],), A.device)
    C._la_cholesky(a, codes)
    info = codes.astype(dt.int32).reshape(batch)
    bad = info != 0
    partial = T.tril(C._cast(a, C.result_dtype(A.dtype), A.shape))
    if upper:
        partial = partial.mT.conj()
    good = cholesky(_patched(A, bad), upper=upper)
    return CholeskyExResult(T.where(bad[..., None, None], partial, good), info)


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:
    """(LU, pivots, info): lu_factor with info (i + 1 for the first exactly zero U[i, i]);
    check_errors raises LinAlgError for a singular matrix instead."""
    LU, piv = lu_factor(A, pivot=pivot)
    info = _zero_pivot(LU) if min(LU.shape[-2:]) else _info(LU.shape[:-2], LU.device)
    if check_errors:
        C.check_info(info, "lu_factor_ex", LU.shape[:-2], C._singular)
    return LUFactorExResult(LU, piv, info)


def _ex(A: Tensor, compute, check_errors: bool):
    """(compute(A), info): when some matrix of the batch is singular (LinAlgError, re-raised
    with check_errors), compute runs again with those replaced and gives NaN in their place."""
    try:
        return compute(A), _info(A.shape[:-2], A.device)
    except LinAlgError:
        if check_errors:
            raise
    info = _zero_pivot(lu_factor(A.detach()).LU)   # (an empty matrix never raised)
    bad = info != 0
    out = compute(_patched(A, bad))
    return T.where(bad.reshape(bad.shape + (1,) * (out.ndim - bad.ndim)), math.nan, out), info


def inv_ex(A, *, check_errors: bool = False) -> InvExResult:
    """(inverse, info): inv with a singular matrix reported in info (i + 1 for the first zero
    U[i, i] of its LU factorization; its inverse NaN) instead of raised, unless check_errors."""
    A = as_matrix(A, "inv_ex", square=True)
    return InvExResult(*_ex(A, inv, check_errors))


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False) -> SolveExResult:
    """(result, info): solve with a singular A reported in info (its solution NaN) instead of
    raised, unless check_errors. A's batch must cover B's (as the result's shape follows A's
    batch for the info)."""
    A = as_matrix(A, "solve_ex", square=True)
    return SolveExResult(*_ex(A, lambda M: solve(M, B, left=left), check_errors))


def householder_product(A, tau) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, with v_i the i-th
    column of A below the diagonal and a 1 on it (LAPACK's orgqr / ungqr, PyTorch's
    householder_product; A (*, m, n), tau (*, k), k <= n <= m)."""
    op = "householder_product"
    A = as_matrix(A, op)
    tau = ew.as_tensor(tau, f"linalg.{op}")
    m, n = A.shape[-2:]
    if n > m:
        raise ValueError(f"linalg.{op}: A must have at least as many rows as columns, got shape {A.shape}")
    if tau.ndim < 1 or tau.shape[-1] > n or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise ValueError(f"linalg.{op}: tau must have shape A.shape[:-2] + (k,) with k <= {n}, got "
                         f"{tau.shape} for A of shape {A.shape}")
    if tau.dtype != A.dtype:
        raise TypeError(f"linalg.{op}: A and tau must have the same dtype, got {A.dtype.name} and "
                        f"{tau.dtype.name}")
    k = tau.shape[-1]
    V = T.tril(A[..., :, :k], -1) + T.eye(m, k, dtype=A.dtype, device=A.device)
    Q = T.broadcast_to(T.eye(m, n, dtype=A.dtype, device=A.device), A.shape)
    for i in reversed(range(k)):   # Q <- H_i Q, from the last reflector to the first
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1, None] * v) @ (v.mT.conj() @ Q)
    return Q


def vander(x, *, N: int | None = None) -> Tensor:
    """PyTorch's linalg.vander: x (*, n) to (*, n, N) with columns x^0, x^1, ..., x^(N-1)
    (increasing powers; NumPy's np.vander is T.vander). N defaults to n; x's dtype."""
    x = ew.as_tensor(x, "linalg.vander")
    if x.ndim < 1:
        raise ValueError(f"linalg.vander: x must have at least one dimension, got shape {x.shape}")
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise ValueError(f"linalg.vander: N must be greater than 1, got {N}")
    ones = T.ones(x.shape + (1,), dtype=x.dtype, device=x.device)
    powers = T.cumprod(T.broadcast_to(x[..., None], x.shape + (N - 1,)), axis=-1)
    return T.concatenate([ones, powers], axis=-1)


def tensorinv(a, ind: int = 2) -> Tensor:
    """The inverse of a with respect to tensordot over ind axes (NumPy's and PyTorch's):
    shape a.shape[ind:] + a.shape[:ind]; prod(a.shape[:ind]) must equal prod(a.shape[ind:])."""
    a = ew.as_tensor(a, "linalg.tensorinv")
    if not isinstance(ind, int) or ind <= 0:
        raise ValueError(f"linalg.tensorinv: ind must be a positive integer, got {ind!r}")
    rows, cols = math.prod(a.shape[:ind]), math.prod(a.shape[ind:])
    if rows != cols:
        raise ValueError(f"linalg.tensorinv: the product of the first {ind} dimensions of shape "
                         f"{a.shape} ({rows}) must equal the product of the rest ({cols})")
    return inv(a.reshape((rows, cols))).reshape(a.shape[ind:] + a.shape[:ind])


def tensorsolve(a, b, dims=None) -> Tensor:
    """x with tensordot(a, x, x.ndim) == b (NumPy's tensorsolve; PyTorch names `axes` dims):
    the axes of a in dims are moved to its end first; x has shape a.shape[b.ndim:]."""
    a = ew.as_tensor(a, "linalg.tensorsolve")
    b = ew.as_tensor(b, "linalg.tensorsolve")
    if dims is not None:
        order = [i for i in range(a.ndim) if i not in {d % a.ndim for d in dims}]
        a = T.permute_dims(a, tuple(order) + tuple(d % a.ndim for d in dims))
    xshape = a.shape[b.ndim:]
    n = math.prod(xshape)
    if math.prod(a.shape[:b.ndim]) != n or math.prod(b.shape) != n:
        raise ValueError(f"linalg.tensorsolve: a of shape {a.shape} does not fit b of shape {b.shape} "
                         f"(a's first {b.ndim} dimensions, its others and b must each hold as many "
                         "elements)")
    return solve(a.reshape((n, n)), b.reshape((n,))).reshape(xshape)
