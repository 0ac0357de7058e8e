"""tensor.linalg: the array API standard's linear-algebra extension and PyTorch's common
extras (with the `_ex` forms, householder_product, vander, tensorinv and tensorsolve), on both
devices, differentiable.

>>> import tensor as T
>>> A = T.asarray([[4.0, 1.0], [1.0, 3.0]])
>>> T.linalg.solve(A, T.asarray([1.0, 2.0])).tolist()
[0.09090909090909091, 0.6363636363636364]
>>> [round(v, 6) for v in T.linalg.eigvalsh(A).tolist()]
[2.381966, 4.618034]

The kernels are our own (tensor/cpu/csrc/linalg*.h, cuda_src/linalg*.cuh), computing in
float64 / complex128: LU with partial pivoting, Cholesky, triangular solves, Householder QR,
the Hermitian eigensolver, the SVD and the general eigensolver (DESIGN.md says which
algorithms and how accurate). Eight primitives, and det and pinv, are recorded ops with
derivative rules (autograd/rules_la.py); the rest (slogdet, inv, lstsq, norms, ...) are
compositions.
Errors follow PyTorch: LinAlgError for a singular or non-positive-definite input, naming the
batch element.
"""
from __future__ import annotations

from ._core import LinAlgError
from ._extra import (
    CholeskyExResult,
    InvExResult,
    LUFactorExResult,
    SolveExResult,
    cholesky_ex,
    householder_product,
    inv_ex,
    lu_factor_ex,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
)
from ._funcs import (
    EighResult,
    EigResult,
    LstsqResult,
    LUFactorResult,
    LUResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    cond,
    cross,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    lstsq,
    lu,
    lu_factor,
    lu_solve,
    matrix_exp,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
    trace,
    vector_norm,
)
from ._ldl import LDLFactorExResult, LDLFactorResult, ldl_factor, ldl_factor_ex, ldl_solve
from ._polar import PolarResult, matrix_sqrth, polar
from ._vecdot import vecdot


def __getattr__(name):
    # the products and transpose are the top-level public ops (recorded once, under their names)
    if name in ("matmul", "tensordot", "matrix_transpose"):
        from ..public import PUB
        return PUB[name]
    raise AttributeError(f"module 'tensor.linalg' has no attribute {name!r}")


__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "inv", "lstsq", "lu", "lu_factor", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer", "pinv",
           "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "tensordot", "trace",
           "vecdot", "vector_norm", "EigResult", "EighResult", "LstsqResult", "LUFactorResult",
           "LUResult", "QRResult", "SlogdetResult", "SVDResult", "cholesky_ex", "inv_ex", "solve_ex",
           "lu_factor_ex", "householder_product", "vander", "tensorinv", "tensorsolve",
           "CholeskyExResult", "InvExResult", "SolveExResult", "LUFactorExResult", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "LDLFactorResult", "LDLFactorExResult", "polar", "PolarResult",
           "matrix_sqrth"]
