"""PyTorch's top-level matrix functions that predate torch.linalg and that PyTorch 2 still has: svd
(V, not Vh), triangular_solve (b first; returns the coefficient too), lu (packed LU and 1-based
pivots, optional infos), lu_unpack, lu_solve (b first), frobenius_norm and nuclear_norm (torch.qr
and torch.cholesky are removed there: linalg.qr / linalg.cholesky). Each calls tensor.linalg, so
values, devices and gradients are linalg's.

>>> import tensor as T
>>> U, S, V = T.svd(T.tensor([[3.0, 0.0], [0.0, 4.0]]))
>>> S.tolist()
[4.0, 3.0]
"""
from __future__ import annotations

from typing import NamedTuple

from . import dtypes as dt
from . import torch_extra2 as X2
from ._tensor import Tensor
from .creation import zeros
from .linalg import _funcs as LA  # not the package, whose __getattr__ reaches public.py
from .optable import T as P  # tensor's public (recorded) functions

_pub, _t = X2._pub, X2._tensor


class SVD(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


class TriangularSolve(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


class LUUnpack(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


def _matrix(x, name: str) -> Tensor:
    x = _t(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}: expects a tensor of matrices (rank >= 2), got shape {x.shape}")
    return x


@_pub("svd")
def svd(input, some: bool = True, compute_uv: bool = True) -> SVD:
    """(U, S, V) with input = U diag(S) V^H, S descending (PyTorch's torch.svd: V, not linalg.svd's
    Vh); some=False gives square U and V. compute_uv=False: U and V zero-filled (m, m) and (n, n)."""
    x = _matrix(input, "svd")
    if not compute_uv:
        S = LA.svdvals(x)
        m, n = x.shape[-2:]
        return SVD(zeros(x.shape[:-2] + (m, m), dtype=x.dtype, device=x.device), S,
                   zeros(x.shape[:-2] + (n, n), dtype=x.dtype, device=x.device))
    U, S, Vh = LA.svd(x, full_matrices=not some)
    return SVD(U, S, X2._mh(Vh))   # (Tensor.mH)


@_pub("triangular_solve")
def triangular_solve(input, A, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolve:
    """(X, A's copy) with op(A) X = input, A upper (or lower) triangular, op(A) = A or its
    transpose (not conjugated); batches broadcast. PyTorch's argument order: b first."""
    b, A = _matrix(input, "triangular_solve"), _matrix(A, "triangular_solve")
    coef = P.matrix_transpose(A) if transpose else A
    X = LA.solve_triangular(coef, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolve(X, P.copy(A))


@_pub("lu")
def lu(A, pivot: bool = True, get_infos: bool = False):
    """(LU, pivots) of P A = L U packed as PyTorch's torch.lu (pivots int32, 1-based); with
    get_infos also infos (int32: 0, or the 1-based index of the first zero pivot, a singular
    matrix)."""
    x = _matrix(A, "lu")
    LU, piv = LA.lu_factor(x, pivot=pivot)
    if not get_infos:
        return LU, piv
    d = P.diagonal(LU, 0, -2, -1)
    zero = P.equal(d, 0)
    k = d.shape[-1]
    first = P.argmax(P.astype(zero, dt.int32), axis=-1) if k else zeros(d.shape[:-1], dtype=dt.int64,
                                                                        device=x.device)
    infos = P.where(P.any(zero, axis=-1), P.add(first, 1), 0) if k else first
    return LU, piv, P.astype(infos, dt.int32)


@_pub("lu_unpack", method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True) -> LUUnpack:
    """(P, L, U) from lu's packed factors: A = P L U, L unit lower (m x k), U upper (k x n). A part
    not asked for (unpack_data / unpack_pivots False) is an empty tensor, as PyTorch's."""
    LU = _matrix(LU_data, "lu_unpack")
    piv = _t(LU_pivots, "lu_unpack")
    empty = zeros((0,), dtype=LU.dtype, device=LU.device)
    L, U = LA.lu_parts(LU) if unpack_data else (empty, empty)
    Pm = LA._perm_matrix(piv, LU.shape[-2], LU) if unpack_pivots else empty
    return LUUnpack(Pm, L, U)


@_pub("lu_solve")
def lu_solve(b, LU_data, LU_pivots) -> Tensor:
    """X with A X = b, A given by lu's (LU_data, LU_pivots) (PyTorch's torch.lu_solve: b first)."""
    return LA.lu_solve(_matrix(LU_data, "lu_solve"), _t(LU_pivots, "lu_solve"), _matrix(b, "lu_solve"))


@_pub("frobenius_norm", method=False)
def frobenius_norm(input, dim=(-2, -1), keepdim: bool = False) -> Tensor:
    """The 2-norm of the elements over dim (PyTorch's older frobenius_norm)."""
    x = _t(input, "frobenius_norm")
    return LA.vector_norm(x, axis=(dim,) if isinstance(dim, int) else tuple(dim), keepdims=keepdim)


@_pub("nuclear_norm", method=False)
def nuclear_norm(input, dim=None, keepdim: bool = False) -> Tensor:
    """The sum of the singular values of the matrices over dim (two dims; the last two of a 2-d
    input when None), PyTorch's older nuclear_norm."""
    x = _t(input, "nuclear_norm")
    if isinstance(dim, bool):   # nuclear_norm(input, keepdim) (PyTorch's other overload)
        dim, keepdim = None, dim
    if dim is None:
        if x.ndim != 2:
            raise ValueError(f"nuclear_norm: expects a 2-d input without dim, got shape {x.shape}")
        dim = (0, 1)
    dims = tuple(dim)
    if len(dims) != 2:
        raise ValueError(f"nuclear_norm: dim must name two dims, got {dim}")
    r = LA.matrix_norm(P.moveaxis(x, dims, (-2, -1)), ord="nuc", keepdims=keepdim)
    return P.moveaxis(r, (-2, -1), dims) if keepdim else r
