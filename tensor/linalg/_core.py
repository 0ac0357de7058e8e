"""The recorded linear-algebra primitives: each runs one backend kernel family (la_lu,
la_cholesky, la_trsm, la_lu_solve, la_qr, la_eigh, la_svd, la_eig / la_eig_real) on a work copy
and is one node on the autograd graph (rules: autograd/rules_la.py). Everything else in
tensor.linalg is composed from these and from the other public ops.

Work precision: the kernels run in float64 / complex128 whatever the input (float32 and
16-bit inputs are widened once and their results rounded once, as tensor.fft does), on a
contiguous (B, m, n) copy the kernel may overwrite. Integer and bool inputs give float64
results, as NumPy's linalg.
"""
from __future__ import annotations

from .. import dtypes as dt
from .. import elementwise as ew
from .._hook import differentiable
from .._tensor import Tensor
from ..backend import backend_for
from . import _blocked
from ._names import T


class LinAlgError(ValueError, RuntimeError):
    """A matrix the operation is not defined for (singular, not positive-definite) or an
    iteration that did not converge. A ValueError as NumPy's LinAlgError and a RuntimeError
    as PyTorch's, so either's except clause catches it."""


# ---------------------------------------------------------------- checks and work copies

def as_matrix(x, op: str, square: bool = False) -> Tensor:
    """x as a tensor of at least two dimensions (square ones when asked), float or complex."""
    x = ew.as_tensor(x, f"linalg.{op}")
    if x.ndim < 2:
        raise ValueError(f"linalg.{op}: expected a matrix or a batch of matrices (at least 2 "
                         f"dimensions), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{op}: expected square matrices, got shape {x.shape}")
    return x


def result_dtype(d: dt.DType) -> dt.DType:
    """The dtype of a linalg result for input dtype d (integers and bools: float64)."""
    return d if d.kind in "fc" else dt.float64


def real_dtype(d: dt.DType) -> dt.DType:
    d = result_dtype(d)
    return dt.real_of(d) if d.kind == "c" else d


def work_dtype(d: dt.DType) -> dt.DType:
    return dt.complex128 if d.kind == "c" else dt.float64


def work(x: Tensor, d: dt.DType | None = None) -> Tensor:
    """A fresh contiguous (B, m, n) copy of x (..., m, n) in the work dtype (or d)."""
    d = d or work_dtype(x.dtype)
    m, n = x.shape[-2:]
    b = 1
    for s in x.shape[:-2]:
        b *= s
    out = ew.empty_tensor((b, m, n), d, x.device)
    if out.numel():
        ew.copy_into(out.reshape(x.shape), x)   # casts; C order whatever x's layout
    return out


def batch_count(shape: tuple) -> int:
    b = 1
    for s in shape[:-2]:
        b *= s
    return b


def _new(shape, d, device) -> Tensor:
    return ew.empty_tensor(tuple(shape), d, device)


def _cast(x: Tensor, d: dt.DType, shape: tuple) -> Tensor:
    x = x.reshape(shape)
    return x if x.dtype is d else ew.astype(x, d)


def check_info(info: Tensor, op: str, batch: tuple, what) -> None:
    """Raise LinAlgError for the first matrix whose info is non-zero; what(code) says why."""
    if info.numel() == 0:
        return
    codes = ew.astype(info, dt.int64, copy=False).to_device("cpu").numpy().reshape(-1)
    bad = codes.nonzero()[0]
    if not len(bad):
        return
    i = int(bad[0])
    where = ""
    if batch:
        idx = []
        for s in reversed(batch):
            idx.append(i % s)
            i //= s
        where = f"(Batch element {tuple(reversed(idx)) if len(batch) > 1 else idx[0]}): "
    raise LinAlgError(f"linalg.{op}: {where}{what(int(codes[bad[0]]))}")


def _int(shape, device) -> Tensor:
    return T.zeros(tuple(shape), dtype=dt.int64, device=device)


def _mT(x: Tensor) -> Tensor:
    return x.swapaxes(-1, -2)


def broadcast_batch(a: Tensor, b: Tensor, op: str) -> tuple:
    """The common batch shape of matrices a (..., m, n) and b (..., p, q)."""
    try:
        return T.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"linalg.{op}: the batch dimensions of shapes {a.shape} and {b.shape} "
                         "do not broadcast") from None


def same_device(a: Tensor, b: Tensor, op: str) -> None:
    if a.device != b.device:
        raise ValueError(f"linalg.{op}: tensors are on different devices: {a.device} and {b.device}")


def _pair(A, B, left: bool, op: str) -> tuple:
    """Work copies (a (b, n, n), b (b, n, k)) of a system A X = B (left) or X A = B (as
    A^T X^T = B^T: b holds B^T), broadcast to their common batch; with the batch and the
    result dtype."""
    n = A.shape[-1]
    if B.ndim < 2 or B.shape[-2 if left else -1] != n:
        raise ValueError(f"linalg.{op}: shapes {A.shape} and {B.shape} do not match "
                         f"(B needs {n} {'rows' if left else 'columns'})")
    batch = broadcast_batch(A, B, op)
    d = result_dtype(dt.result_type(A, B))
    Bt = B if left else _mT(B)
    a = work(T.broadcast_to(A, batch + (n, n)), work_dtype(d))
    b = work(T.broadcast_to(Bt, batch + (n, Bt.shape[-1])), work_dtype(d))
    return a, b, batch, d


# ---------------------------------------------------------------- LU

def _la_lu(a, piv, info) -> None:
    (_blocked.lu if _blocked.wanted(a) else backend_for(a.device).la_lu)(a, piv, info)


def _la_cholesky(a, info) -> None:
    (_blocked.cholesky if _blocked.wanted(a) else backend_for(a.device).la_cholesky)(a, info)


def _lu_factor_raw(A):
    """(LU, pivots): P A = L U packed (L unit lower below the diagonal, U upper), pivots int32,
    1-based as LAPACK's and PyTorch's (row i was swapped with row pivots[i] - 1)."""
    A = as_matrix(A, "lu_factor")
    m, n = A.shape[-2:]
    k = min(m, n)
    a = work(A)
    piv = _int((a.shape[0], k), A.device)
    info = _int((a.shape[0],), A.device)
    if a.numel():
        _la_lu(a, piv, info)
    lu = _cast(a, result_dtype(A.dtype), A.shape)
    return lu, ew.astype(piv + 1, dt.int32).reshape(A.shape[:-2] + (k,))


lu_factor_op = differentiable("linalg_lu_factor", _lu_factor_raw)


def _singular(code):
    return (f"the solver failed because the input matrix is singular (U[{code - 1}, {code - 1}] "
            "of its LU factorization is exactly zero)")


def _solve_raw(A, B, left=True):
    """X with A X = B (left) or X A = B; A (..., n, n), B (..., n, k) or 1-D (n,), batches
    broadcast. Raises LinAlgError when some A is singular."""
    A = as_matrix(A, "solve", square=True)
    B = ew.as_tensor(B, "linalg.solve")
    same_device(A, B, "solve")
    n = A.shape[-1]
    vec = B.ndim == 1
    if vec:
        if B.shape[0] != n:
            raise ValueError(f"linalg.solve: shapes {A.shape} and {B.shape} do not match "
                             f"(the vector needs {n} elements)")
        B = B.reshape((n, 1) if left else (1, n))
    a, b, batch, d = _pair(A, B, left, "solve")
    k = b.shape[-1]
    piv = _int((a.shape[0], n), A.device)
    info = _int((a.shape[0],), A.device)
    be = backend_for(A.device)
    if a.numel():
        _la_lu(a, piv, info)
        check_info(info, "solve", batch, _singular)
        if b.numel():
            be.la_lu_solve(a, piv, b, 0 if left else 1)
    X = _cast(b, d, batch + (n, k))
    if not left:
        X = _mT(X)
    return X.reshape(batch + (n,)) if vec else X


solve_op = differentiable("linalg_solve", _solve_raw)


# ---------------------------------------------------------------- triangular

def _solve_triangular_raw(A, B, upper, left=True, unitriangular=False):
    """X with op A X = B (left) or X A = B for triangular A (the other triangle not read)."""
    A = as_matrix(A, "solve_triangular", square=True)
    B = as_matrix(B, "solve_triangular")
    same_device(A, B, "solve_triangular")
    n = A.shape[-1]
    a, b, batch, d = _pair(A, B, left, "solve_triangular")
    k = b.shape[-1]
    if b.numel():
        backend_for(A.device).la_trsm(a, b, not upper, bool(unitriangular), 0 if left else 1)
    X = _cast(b, d, batch + (n, k))
    return X if left else _mT(X)


solve_triangular_op = differentiable("linalg_solve_triangular", _solve_triangular_raw)


# ---------------------------------------------------------------- Cholesky

def _not_pd(code):
    return ("the factorization could not be completed because the input is not positive-"
            f"definite (the leading minor of order {code} is not positive-definite)")


def _cholesky_raw(A, upper=False):
    """L (lower, A = L L^H) or U = L^H (upper); only A's lower triangle is read."""
    A = as_matrix(A, "cholesky", square=True)
    a = work(A)
    info = _int((a.shape[0],), A.device)
    if a.numel():
        _la_cholesky(a, info)
        check_info(info, "cholesky", A.shape[:-2], _not_pd)
    L = _cast(a, result_dtype(A.dtype), A.shape)
    return ew.contiguous(_mT(L).conj()) if upper else L


cholesky_op = differentiable("linalg_cholesky", _cholesky_raw)


# ---------------------------------------------------------------- QR

def _qr_raw(A, mode="reduced"):
    """(Q, R) of A = Q R by Householder reflections; complex R has a real diagonal."""
    A = as_matrix(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = A.shape[-2:]
    k = min(m, n)
    kq = m if mode == "complete" else k
    a = work(A)
    B = a.shape[0]
    wd = a.dtype
    q = None if mode == "r" else _new((B, m, kq), wd, A.device)
    r = _new((B, kq, n), wd, A.device)
    if a.numel():
        backend_for(A.device).la_qr(a, q, r, _int((B,), A.device))
    else:   # an empty A: Q the identity's columns, R zeros
        if q is not None and q.numel():
            ew.copy_into(q, T.broadcast_to(T.eye(m, kq, dtype=wd, device=A.device), q.shape))
        if r.numel():
            ew.copy_into(r, T.zeros(r.shape, dtype=wd, device=A.device))
    if wd.kind == "c" and k:   # the phases of R's diagonal moved into Q: a real diagonal
        dg = T.diagonal(r, 0, -2, -1)[..., :k]
        mag = T.abs(dg)
        ph = T.where(mag == 0, T.ones_like(dg), dg / T.where(mag == 0, T.ones_like(mag), mag))
        rk = r[..., :k, :]
        ew.copy_into(rk, rk * T.expand_dims(ph.conj(), -1))
        if q is not None:
            qk = q[..., :k]
            ew.copy_into(qk, qk * T.expand_dims(ph, -2))
    d = result_dtype(A.dtype)
    R = _cast(r, d, A.shape[:-2] + (kq, n))
    if q is None:   # PyTorch's empty Q of shape (0,)
        return _new((0,), d, A.device), R
    return _cast(q, d, A.shape[:-2] + (m, kq)), R


qr_op = differentiable("linalg_qr", _qr_raw)


# ---------------------------------------------------------------- eigenproblems and SVD

def _not_converged(code):
    return (f"the algorithm failed to converge (error code {code}): the input may be "
            "ill-conditioned or hold non-finite values")


def _eigh_raw(A, UPLO="L", vectors=True):
    """(w, V): eigenvalues ascending (real) and orthonormal eigenvectors (columns) of the
    Hermitian A, read from its lower (UPLO='L') or upper triangle."""
    A = as_matrix(A, "eigh", square=True)
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    a = work(_mT(A).conj() if UPLO == "U" else A)
    n = A.shape[-1]
    w = _new((a.shape[0], n), dt.float64, A.device)
    info = _int((a.shape[0],), A.device)
    if a.numel():
        backend_for(A.device).la_eigh(a, w, bool(vectors), info)
        check_info(info, "eigh", A.shape[:-2], _not_converged)
    wr = _cast(w, real_dtype(A.dtype), A.shape[:-1])
    if not vectors:
        return wr
    return wr, _cast(a, result_dtype(A.dtype), A.shape)


eigh_op = differentiable("linalg_eigh", _eigh_raw)


def _svd_raw(A, full_matrices=True, vectors=True):
    """(U, S, Vh) with A = U[..., :k] diag(S) Vh[..., :k, :], S descending; S alone when
    vectors=False."""
    A = as_matrix(A, "svd")
    m, n = A.shape[-2:]
    k = min(m, n)
    a = work(A)
    B = a.shape[0]
    s = _new((B, k), dt.float64, A.device)
    ku, kv = (m, n) if full_matrices else (k, k)
    u = vh = None
    if vectors:
        u, vh = _new((B, m, ku), a.dtype, A.device), _new((B, kv, n), a.dtype, A.device)
    info = _int((B,), A.device)
    if a.numel():
        backend_for(A.device).la_svd(a, s, u, vh, info)
        check_info(info, "svd", A.shape[:-2], _not_converged)
    elif vectors:   # empty: identity bases
        for t, r, c in ((u, m, ku), (vh, kv, n)):
            if t.numel():
                ew.copy_into(t, T.broadcast_to(T.eye(r, c, dtype=a.dtype, device=A.device), t.shape))
    S = _cast(s, real_dtype(A.dtype), A.shape[:-2] + (k,))
    if not vectors:
        return S
    d = result_dtype(A.dtype)
    return (_cast(u, d, A.shape[:-2] + (m, ku)), S, _cast(vh, d, A.shape[:-2] + (kv, n)))


svd_op = differentiable("linalg_svd", _svd_raw)


def _eig_failed(n: int):
    """la_eig_real's info codes: n + 1 for a non-finite input, else no convergence."""
    return lambda code: ("the input contains non-finite values (inf or nan)" if code == n + 1
                         else _not_converged(code))


def _eig_raw(A, vectors=True):
    """(w, V): eigenvalues and unit-norm right eigenvectors (columns) of a general square A,
    always complex (PyTorch's convention). A real A gets LAPACK's dgeev conventions: real
    eigenvalues with imag exactly 0 and real eigenvectors, complex ones in adjacent exactly
    conjugate pairs (positive imaginary part first) with conjugate eigenvectors."""
    A = as_matrix(A, "eig", square=True)
    n = A.shape[-1]
    real = not A.dtype.is_complex   # real input: the real Schur form (conjugate pairs exact)
    a = work(A, dt.float64 if real else dt.complex128)
    B = a.shape[0]
    w = _new((B, n), dt.complex128, A.device)
    v = _new((B, n, n), dt.complex128, A.device) if vectors else None
    info = _int((B,), A.device)
    if a.numel():
        be = backend_for(A.device)
        (be.la_eig_real if real else be.la_eig)(a, w, v, info)
        check_info(info, "eig", A.shape[:-2], _eig_failed(n) if real else _not_converged)
    cd = dt.complex64 if result_dtype(A.dtype) in (dt.float32, dt.complex64, dt.float16,
                                                   dt.bfloat16) else dt.complex128
    W = _cast(w, cd, A.shape[:-1])
    return (W, _cast(v, cd, A.shape)) if vectors else W


eig_op = differentiable("linalg_eig", _eig_raw)
