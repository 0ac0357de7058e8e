"""tensor.linalg's functions composed from the recorded primitives (tensor/linalg/_core.py) and
the other public ops: differentiable through them, with no rule of their own, except det and
pinv (tensor/linalg/_pinv_det.py), whose rules stay finite where the compositions' were not."""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

from .. import _hook
from .. import dtypes as dt
from .. import elementwise as ew
from .._tensor import Tensor
from ..axes import norm_axis
from . import _core as C
from . import _pinv_det as _pd
from ._core import LinAlgError, as_matrix
from ._names import T
from ._pinv_det import det_op, pinv_op


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class LUResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


class LUFactorResult(NamedTuple):
    LU: Tensor
    pivots: Tensor


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def _wants_grad(*xs) -> bool:
    """Whether a result must carry a gradient or a tangent (else the value-only kernels run)."""
    state = _hook.autograd().grad_mode.state
    for x in xs:
        if type(x) is Tensor and ((x.requires_grad and state.grad_enabled)
                                  or (x._ag is not None and x._ag.tangent is not None)):
            return True
    return False


def _eye_like(A: Tensor, n: int, m: int | None = None) -> Tensor:
    return T.eye(n, m, dtype=C.result_dtype(A.dtype), device=A.device)


# ---------------------------------------------------------------- solves and inverses

def solve(x1, x2, /, *, left: bool = True) -> Tensor:
    """X with x1 X = x2 (left) or X x1 = x2; x2 a vector when 1-D (NumPy 2 and the standard),
    batches broadcast. LinAlgError when x1 is singular."""
    return C.solve_op(x1, x2, left)


def inv(x, /) -> Tensor:
    """The inverse of each square matrix (LinAlgError when singular)."""
    A = as_matrix(x, "inv", square=True)
    try:
        return C.solve_op(A, T.broadcast_to(_eye_like(A, A.shape[-1]), A.shape), True)
    except LinAlgError as e:
        raise LinAlgError(str(e).replace("linalg.solve", "linalg.inv", 1)) from None


def solve_triangular(A, B, /, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (left) or X A = B for upper or lower triangular A (PyTorch's)."""
    return C.solve_triangular_op(A, B, upper, left, unitriangular)


def cholesky(x, /, *, upper: bool = False) -> Tensor:
    """L with x = L L^H (or U = L^H with upper=True); x's lower triangle is read."""
    return C.cholesky_op(x, upper)


def lu_factor(A, *, pivot: bool = True) -> LUFactorResult:
    """(LU, pivots) of P A = L U, PyTorch's packed form (pivots 1-based, int32)."""
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: pivot=False is not supported (partial "
                                  "pivoting is always used)")
    return LUFactorResult(*C.lu_factor_op(A))


def _perm_matrix(pivots: Tensor, m: int, like: Tensor) -> Tensor:
    """P (..., m, m) with P^T A = the rows of A swapped in pivot order: P A_perm = A."""
    import numpy as np
    p = ew.astype(pivots, dt.int64, copy=False).to_device("cpu").numpy() - 1
    batch = p.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    nb = math.prod(batch)   # (explicit: reshape(-1, 0) of an empty pivots array is ambiguous)
    flat_p, flat_perm = p.reshape(nb, p.shape[-1]), perm.reshape(nb, m)
    for b in range(flat_p.shape[0]):
        for i, j in enumerate(flat_p[b]):
            flat_perm[b, [i, j]] = flat_perm[b, [j, i]]
    P = np.zeros(batch + (m, m))
    np.put_along_axis(P, perm[..., None], 1.0, axis=-1)     # row i of P^T is e_perm[i]
    return T.asarray(np.swapaxes(P, -1, -2).copy(), dtype=C.result_dtype(like.dtype),
                     device=like.device)


def lu(A, *, pivot: bool = True) -> LUResult:
    """(P, L, U) with A = P L U: L unit lower (m x k), U upper (k x n), k = min(m, n)."""
    A = as_matrix(A, "lu")
    LU, piv = lu_factor(A, pivot=pivot)
    L, U = lu_parts(LU)
    return LUResult(_perm_matrix(piv, A.shape[-2], LU), L, U)


def lu_parts(LU: Tensor) -> tuple:
    """(L, U) of lu_factor's packed LU (m x n): L unit lower (m x k), U upper (k x n),
    k = min(m, n)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    return T.tril(LU[..., :, :k], -1) + _eye_like(LU, m, k), T.triu(LU[..., :k, :])


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with A X = B (A^H X = B when adjoint; X A = B when not left), A given by lu_factor."""
    LU = as_matrix(LU, "lu_solve", square=True)
    n = LU.shape[-1]
    P = _perm_matrix(pivots, n, LU)
    if not left:   # X A = B  <=>  A^H X^H = B^H
        return lu_solve(LU, pivots, B.mT.conj(), adjoint=not adjoint).mT.conj()
    if adjoint:    # A^H = U^H L^H P^T
        y = solve_triangular(LU.mT.conj(), B, upper=False)
        y = solve_triangular(LU.mT.conj(), y, upper=True, unitriangular=True)
        return T.matmul(P, y)
    y = T.matmul(P.mT, B)
    y = solve_triangular(LU, y, upper=False, unitriangular=True)
    return solve_triangular(LU, y, upper=True)


def det(x, /) -> Tensor:
    """The determinant of each square matrix (through its LU factorization); its gradient is
    the adjugate, singular matrices included (tensor/linalg/_pinv_det.py)."""
    return det_op(x)


def _perm_sign(piv: Tensor, d) -> Tensor:
    return _pd._perm_sign(piv, d)


def slogdet(x, /) -> SlogdetResult:
    """(sign, log|det|): sign 0 and logabsdet -inf for a singular matrix; for complex input the
    sign is the unit complex number det / |det|."""
    A = as_matrix(x, "slogdet", square=True)
    rd = C.real_dtype(A.dtype)
    if A.shape[-1] == 0:
        return SlogdetResult(T.ones(A.shape[:-2], dtype=C.result_dtype(A.dtype), device=A.device),
                             T.zeros(A.shape[:-2], dtype=rd, device=A.device))
    LU, piv = lu_factor(A)
    dg = T.diagonal(LU, 0, -2, -1)
    mag = T.abs(dg)
    logabs = T.sum(T.log(mag), axis=-1)
    unit = dg / T.where(mag == 0, T.ones_like(mag), mag)
    sign = T.prod(unit, axis=-1) * _perm_sign(piv, LU.dtype)
    sign = T.where(T.isinf(logabs) & (logabs < 0), T.zeros_like(sign), sign)
    return SlogdetResult(sign, logabs)


# ---------------------------------------------------------------- factorizations

def qr(x, /, *, mode: str = "reduced") -> QRResult:
    """(Q, R) with x = Q R (mode 'reduced', 'complete', or 'r': R only, Q empty)."""
    return QRResult(*C.qr_op(x, mode))


def eigh(x, /, UPLO: str = "L") -> EighResult:
    """(eigenvalues ascending, orthonormal eigenvectors as columns) of Hermitian matrices."""
    return EighResult(*C.eigh_op(x, UPLO))


def eigvalsh(x, /, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of Hermitian matrices."""
    if _wants_grad(x):
        return C.eigh_op(x, UPLO)[0]
    return C._eigh_raw(x, UPLO, False)


def svd(x, /, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False, *,
        driver=None):
    """(U, S, Vh) with x = U diag(S) Vh, S descending. NumPy's compute_uv=False gives S alone;
    hermitian=True (x Hermitian: only its lower triangle is read) takes the eigendecomposition:
    S = |eigenvalues|, U the eigenvectors in S's order, Vh = (U sign(eigenvalues))^H. PyTorch's
    driver (a cuSOLVER choice) is accepted and has no effect here."""
    if driver not in (None, "gesvd", "gesvdj", "gesvda"):
        raise ValueError(f"svd: driver must be None, 'gesvd', 'gesvdj' or 'gesvda', got {driver!r}")
    if hermitian:
        w, v = eigh(x)
        order = T.flip(T.argsort(T.abs(w), axis=-1, stable=True), axis=-1)
        sv = T.take_along_axis(T.abs(w), order, axis=-1)
        if not compute_uv:
            return sv
        u = T.take_along_axis(v, T.expand_dims(order, -2), axis=-1)
        # +-1 (NumPy's copysign): a zero eigenvalue's sign 0 would zero its row of Vh
        wd = w.detach()
        sgn = T.take_along_axis(T.copysign(T.ones_like(wd), wd), order, axis=-1).astype(u.dtype)
        return SVDResult(u, sv, T.conj(u * T.expand_dims(sgn, -2)).mT)
    if not compute_uv:
        return svdvals(x)
    return SVDResult(*C.svd_op(x, full_matrices))


def svdvals(x, /) -> Tensor:
    """The singular values, descending."""
    if _wants_grad(x):
        return C.svd_op(x, False)[1]
    return C._svd_raw(x, False, False)


def eig(A, /) -> EigResult:
    """(eigenvalues, unit-norm right eigenvectors as columns) of general square matrices, both
    complex."""
    return EigResult(*C.eig_op(A))


def eigvals(A, /) -> Tensor:
    """The eigenvalues of general square matrices (complex)."""
    if _wants_grad(A):
        return C.eig_op(A)[0]
    return C._eig_raw(A, False)


# ---------------------------------------------------------------- from the SVD

def pinv(x, /, *, rtol=None, atol=None, hermitian: bool = False, rcond=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, singular values below max(atol, rtol * largest)
    dropped (rtol default max(m, n) * eps; NumPy's rcond is rtol). Its gradient is the
    closed form of Golub and Pereyra (finite at repeated singular values)."""
    if rcond is not None:
        rtol = rcond
    return pinv_op(x, rtol, atol)


def matrix_rank(x, /, *, rtol=None, atol=None, hermitian: bool = False, tol=None) -> Tensor:
    """The number of singular values above max(atol, rtol * largest) (int64)."""
    A = as_matrix(x, "matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    S = svdvals(A)
    return T.sum(S > _pd.tolerance(S, *A.shape[-2:], rtol, atol), axis=-1).astype(dt.int64)


def lstsq(a, b, rcond=None, *, driver=None) -> LstsqResult:
    """The minimum-norm least-squares solution of a x = b (through the SVD, as NumPy's):
    (solution, residuals: squared 2-norms of b - a x per column when a has full column rank
    and more rows than columns (else empty), rank, singular values)."""
    A = as_matrix(a, "lstsq")
    B = ew.as_tensor(b, "linalg.lstsq")
    if B.ndim == 0:
        raise ValueError(f"linalg.lstsq: b must be a vector or a matrix, got a 0-d tensor (a of "
                         f"shape {A.shape})")
    vec = B.ndim == 1
    Bm = T.expand_dims(B, -1) if vec else B
    m, n = A.shape[-2:]
    if Bm.shape[-2] != m:
        raise ValueError(f"linalg.lstsq: shapes {A.shape} and {B.shape} do not match "
                         f"(b needs {m} rows)")
    grad = _wants_grad(A, Bm)
    if grad:   # x = pinv(A) B: pinv's rule is finite at repeated singular values, svd's is not
        S = svdvals(A)
    else:
        U, S, Vh = svd(A, full_matrices=False)
    if rcond is None:
        rcond = max(m, n) * T.finfo(S.dtype).eps
    elif not isinstance(rcond, Tensor) and rcond < 0:   # NumPy's: machine precision
        rcond = T.finfo(S.dtype).eps
    keep = S.detach() > _pd.tolerance(S.detach(), m, n, rcond, None)
    d = dt.result_type(C.result_dtype(A.dtype), Bm)
    if grad:
        x = T.matmul(pinv_op(A, rcond, None).astype(d), Bm.astype(d))
    else:
        sinv = T.where(keep, 1 / T.where(keep, S, T.ones_like(S)), T.zeros_like(S))
        x = T.matmul(Vh.mT.conj().astype(d), T.expand_dims(sinv, -1).astype(d)
                     * T.matmul(U.mT.conj().astype(d), Bm.astype(d)))
    rank = T.sum(keep, axis=-1).astype(dt.int64)
    if m > n and bool(T.all(rank == n)):   # full column rank (every matrix of a batch)
        r = Bm.astype(d) - T.matmul(A.astype(d), x)
        res = T.sum(T.abs(r) ** 2, axis=-2)
    else:
        res = T.zeros((0,), dtype=C.real_dtype(d), device=A.device)
    return LstsqResult(x[..., 0] if vec else x, res, rank, S)


def cond(x, p=None) -> Tensor:
    """The condition number in norm p (None or 2: largest / smallest singular value)."""
    A = as_matrix(x, "cond")
    if p in (None, 2, -2):
        S = svdvals(A)
        if S.shape[-1] == 0:
            raise LinAlgError(f"linalg.cond: not defined on empty matrices (shape "
                              f"{tuple(A.shape)})")
        big, small = S[..., 0], S[..., -1]
        r = big / small if p != -2 else small / big
        # 0 / 0 (a zero matrix) is inf, as NumPy's; a NaN of the input stays NaN
        return T.where(T.isnan(r) & ~T.isnan(big), math.inf, r)
    A = as_matrix(x, "cond", square=True)
    # a singular matrix (a zero pivot) has cond inf, as NumPy's and PyTorch's: its inverse
    # is taken of the identity instead, and the result replaced
    lu = C.lu_factor_op(A.detach())[0]   # (it only tells which elements are singular)
    sing = T.any(T.diagonal(lu, 0, -2, -1) == 0, axis=-1)
    safe = T.where(T.expand_dims(T.expand_dims(sing, -1), -1), _eye_like(A, A.shape[-1]), A)
    r = matrix_norm(A, ord=p) * matrix_norm(inv(safe), ord=p)
    return T.where(sing, math.inf, r)


# ---------------------------------------------------------------- norms

def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2, dtype=None, dim=None,
                keepdim=None) -> Tensor:
    """The p-norm over `axis` (all axes when None): ord inf / -inf max / min |x|, 0 the number
    of non-zeros, else (sum |x|^p)^(1/p). Real results for complex input. PyTorch's dim= /
    keepdim= are axis / keepdims."""
    from ._norm import vector_norm_op
    axis, keepdims = _torch_axes("linalg.vector_norm", axis, dim, keepdims, keepdim)
    x = ew.as_tensor(x, "linalg.vector_norm")
    if dtype is not None:
        x = x.astype(dtype)
    return vector_norm_op(x, ord, axis, keepdims)


def _torch_axes(op: str, axis, dim, keepdims, keepdim):
    """(axis, keepdims) from the standard's names or PyTorch's dim= / keepdim= (not both)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{op}: got both dim= (PyTorch's) and axis=")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    return axis, keepdims


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro", dim=None, keepdim=None) -> Tensor:
    """'fro', 'nuc', inf, -inf, 1, -1, 2, -2 norms of the matrices over the last two axes
    (PyTorch's dim=(i, j) names two others, keepdim= is keepdims)."""
    dim, keepdims = _torch_axes("linalg.matrix_norm", None, dim, keepdims, keepdim)
    if dim is not None and tuple(dim) != (-2, -1):
        xt = ew.as_tensor(x, "matrix_norm")
        a = [norm_axis(d, xt.ndim, "matrix_norm") for d in dim]
        if len(a) != 2 or a[0] == a[1]:
            raise ValueError(f"linalg.matrix_norm: dim must name two different axes, got {dim!r}")
        r = matrix_norm(T.moveaxis(xt, a, (-2, -1)), ord=ord)
        return T.expand_dims(r, tuple(sorted(a))) if keepdims else r
    A = as_matrix(x, "matrix_norm")
    if A.dtype.kind in "iub":   # integers (and bools) give float64, as NumPy's
        A = A.astype(C.result_dtype(A.dtype))
    if ord == "fro":
        r = vector_norm(A, axis=(-2, -1), keepdims=keepdims)
    elif min(A.shape[-2:]) == 0 and ord in (2, 1, math.inf):
        r = vector_norm(A, axis=(-2, -1), keepdims=keepdims)   # the largest of no sums: 0
    elif ord in ("nuc", 2, -2):
        S = svdvals(A)
        r = T.sum(S, axis=-1) if ord == "nuc" else (T.max if ord == 2 else T.min)(S, axis=-1)
        if keepdims:
            r = T.expand_dims(T.expand_dims(r, -1), -1)
    elif ord in (1, -1, math.inf, -math.inf):
        ax = -2 if ord in (1, -1) else -1
        s = T.sum(T.abs(A), axis=ax, keepdims=True)
        r = (T.max if ord > 0 else T.min)(s, axis=-1 if ax == -2 else -2, keepdims=True)
        if not keepdims:
            r = r.reshape(r.shape[:-2])
    else:
        raise ValueError(f"linalg.matrix_norm: unsupported ord {ord!r} (use 'fro', 'nuc', "
                         "inf, -inf, 1, -1, 2 or -2)")
    return r


def norm(x, ord=None, axis=None, keepdims: bool = False, *, dim=None, keepdim=None) -> Tensor:
    """NumPy's / PyTorch's linalg.norm: a vector norm of 1-D input or over one axis, a matrix
    norm of 2-D input or over two axes; ord=None gives the 2-norm of everything (or 'fro')."""
    x = ew.as_tensor(x, "linalg.norm")
    axis = dim if dim is not None else axis
    keepdims = keepdim if keepdim is not None else keepdims
    if isinstance(axis, int):
        axis = (axis,)
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims) if not keepdims else \
                vector_norm(x, axis=tuple(range(x.ndim)), keepdims=True)
        axis = tuple(range(x.ndim))
    axis = tuple(operator.index(a) for a in axis)
    if len(axis) == 1:
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) != 2:
        raise ValueError(f"linalg.norm: ord={ord!r} needs one or two axes, got {axis}")
    a0, a1 = (a % x.ndim for a in axis)
    xm = T.moveaxis(x, (a0, a1), (-2, -1))
    r = matrix_norm(xm, ord="fro" if ord is None else ord, keepdims=keepdims)
    if keepdims:
        r = T.moveaxis(r, (-2, -1), (a0, a1))
    return r


# ---------------------------------------------------------------- products and the rest

def matrix_power(x, n: int, /) -> Tensor:
    """x @ x @ ... (n times) by repeated squaring; n = 0 the identity, n < 0 powers of inv(x)."""
    A = as_matrix(x, "matrix_power", square=True)
    n = operator.index(n)
    if n == 0:   # the identity, of A's own dtype (as NumPy's, as any positive power)
        return T.broadcast_to(T.eye(A.shape[-1], dtype=A.dtype, device=A.device),
                              A.shape) + T.zeros_like(A)
    if n < 0:
        A, n = inv(A), -n
    result = None
    while n:
        if n & 1:
            result = A if result is None else T.matmul(result, A)
        n >>= 1
        if n:
            A = T.matmul(A, A)
    return result


# the degree-13 Pade approximant's coefficients b_k / b_0 (b_k = (26 - k)! 13! / (26! k! (13 - k)!)
# times 26! / 13!), and the largest 1-norm it serves to double precision (Higham 2005)
_PADE13 = tuple(c / 64764752532480000 for c in (
    64764752532480000, 32382376266240000, 7771770303897600, 1187353796428800, 129060195264000,
    10559470521600, 670442572800, 33522128640, 1323241920, 40840800, 960960, 16380, 182, 1))
_THETA13 = 5.371920351148152


def matrix_exp(x, /) -> Tensor:
    """exp(x) of a (batch of) square matrices by scaling and squaring: each matrix is scaled by
    its own 2**-s so that its 1-norm is at most theta_13, the degree-13 Pade approximant
    (V - U)^-1 (V + U) is evaluated with 6 products and one solve, and squared s times.
    Differentiable through those ops. One host read: the largest s (the number of squarings).
    16-bit inputs compute in float32."""
    A = as_matrix(x, "matrix_exp", square=True)
    out = C.result_dtype(A.dtype)
    wd = dt.float32 if out.itemsize < 4 else out
    X = A if A.dtype == wd else T.astype(A, wd)
    n = X.shape[-1]
    if X.numel() == 0:
        return T.astype(X, out, copy=True)
    norm = T.max(T.sum(T.abs(X.detach()), axis=-2), axis=-1)
    s = T.clip(T.ceil(T.log2(norm / _THETA13)), 0, 1100)
    s = T.where(T.isfinite(s), s, T.zeros_like(s))   # NaN / inf entries: the result is NaN
    squarings = int(T.max(s))
    if squarings:
        X = X * T.astype(T.pow(0.5, s), X.dtype)[..., None, None]
    b = _PADE13
    eye = T.eye(n, dtype=wd, device=X.device)
    X2 = T.matmul(X, X)
    X4 = T.matmul(X2, X2)
    X6 = T.matmul(X4, X2)
    U = T.matmul(X, T.matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2)
                 + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = T.matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 \
        + b[2] * X2 + b[0] * eye
    E = solve(V - U, V + U)
    for k in range(squarings):
        E = T.where((s > k)[..., None, None], T.matmul(E, E), E)
    return E if E.dtype == out else T.astype(E, out)


def multi_dot(arrays, /) -> Tensor:
    """The product of a chain of matrices in the cheapest order (the first may be a row vector,
    the last a column vector, 1-D)."""
    xs = [ew.as_tensor(a, "linalg.multi_dot") for a in arrays]
    if len(xs) < 2:
        raise ValueError("linalg.multi_dot: expected at least two tensors")
    first, last = xs[0].ndim == 1, xs[-1].ndim == 1
    if first:
        xs[0] = T.expand_dims(xs[0], 0)
    if last:
        xs[-1] = T.expand_dims(xs[-1], -1)
    for i, a in enumerate(xs):
        if a.ndim != 2:
            raise ValueError(f"linalg.multi_dot: tensor {i} has shape {a.shape}: only the first "
                             "and last may be 1-D, the others must be 2-D")
    dims = [xs[0].shape[0]] + [a.shape[1] for a in xs]
    r = _chain(xs, _chain_order(dims), 0, len(xs) - 1)
    if first:
        r = r[0]
    if last:
        r = r[..., 0]
    return r


def _chain_order(p: list) -> list:
    k = len(p) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for ln in range(1, k):
        for i in range(k - ln):
            j = i + ln
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + p[i] * p[s + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _chain(xs, split, i, j):
    if i == j:
        return xs[i]
    s = split[i][j]
    return T.matmul(_chain(xs, split, i, s), _chain(xs, split, s + 1, j))


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along `axis` (broadcasting the others)."""
    a, b = ew.as_tensor(x1, "linalg.cross"), ew.as_tensor(x2, "linalg.cross")
    for t in (a, b):   # an axis out of range is the axis' error, not an IndexError of a tuple
        norm_axis(axis, t.ndim, "linalg.cross")
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"linalg.cross: axis {axis} must have size 3 in both inputs, got "
                         f"shapes {a.shape} and {b.shape}")
    a, b = T.moveaxis(a, axis, -1), T.moveaxis(b, axis, -1)
    c = [a[..., (i + 1) % 3] * b[..., (i + 2) % 3] - a[..., (i + 2) % 3] * b[..., (i + 1) % 3]
         for i in range(3)]
    return T.moveaxis(T.stack(c, axis=-1), -1, axis)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of each matrix's diagonal `offset` (over the last two axes)."""
    A = as_matrix(x, "trace")
    # (positional: a call with keywords takes autograd's slower Python record)
    return T.sum(T.diagonal(A, offset, -2, -1), -1, dtype)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """The diagonal `offset` of each matrix over the last two axes (a view)."""
    return T.diagonal(as_matrix(x, "diagonal"), offset, -2, -1)


def outer(x1, x2, /) -> Tensor:
    """The outer product of two 1-D tensors."""
    a, b = ew.as_tensor(x1, "linalg.outer"), ew.as_tensor(x2, "linalg.outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"linalg.outer: expected 1-D tensors, got shapes {a.shape} and {b.shape}")
    return T.outer(a, b)
