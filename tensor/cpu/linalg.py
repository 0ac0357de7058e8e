"""CPU linear-algebra kernels (tensor/cpu/csrc/linalg.h): LU, Cholesky, triangular solve, LU
solve and Householder QR of batches of matrices, float64 and complex128. The op layer
(tensor/linalg/) converts dtypes, checks shapes and blocks big matrices around these.

Matrix arguments are (B, m, n) tensors whose last stride is 1; their row and batch strides
are free (panel views of a bigger matrix work). Vector outputs (piv, info) are contiguous
int64. Every function works in place and returns None; a failed work-buffer allocation raises
tensor.memory.OutOfMemoryError."""
from __future__ import annotations

from . import kernels as K

_SFX = ("f64", "c128")


def _cdef(s: str) -> str:
    return "\n".join([
        f"int la_lu_{s}(intptr_t a, int64_t B, int64_t m, int64_t n, int64_t bs, int64_t lda, "
        "intptr_t piv, intptr_t info, int nthreads);",
        f"int la_cholesky_{s}(intptr_t a, int64_t B, int64_t n, int64_t bs, int64_t lda, "
        "intptr_t info, int nthreads);",
        f"int la_trsm_{s}(intptr_t a, int64_t B, int64_t n, int64_t bsa, int64_t lda, intptr_t b, "
        "int64_t k, int64_t bsb, int64_t ldb, int lower, int unit, int trans, int nthreads);",
        f"int la_lu_solve_{s}(intptr_t a, int64_t B, int64_t n, int64_t bsa, int64_t lda, "
        "intptr_t piv, intptr_t b, int64_t k, int64_t bsb, int64_t ldb, int trans, int nthreads);",
        f"int la_qr_{s}(intptr_t a, int64_t B, int64_t m, int64_t n, int64_t bsa, int64_t lda, "
        "intptr_t q, int64_t kq, int64_t bsq, int64_t ldq, intptr_t r, int64_t kr, int64_t bsr, "
        "int64_t ldr, intptr_t info, int nthreads);",
    ])


K.register_family("linalg", lambda d: (
    f'#define LA_COMPLEX {int(d.sfx == "c128")}\n#define LA_S {d.sfx}\n#include "linalg.h"\n',
    _cdef(d.sfx)))


def _fn(t, name: str):
    s = t.dtype.sfx
    if s not in _SFX:
        raise TypeError(f"linalg.{name}: the CPU kernels take float64 or complex128, got {t.dtype}")
    return K.kernel("linalg", t.dtype, f"la_{name}_{s}")


def _mat(t, name: str, what: str, dtype=None):
    """(pointer, batch stride, row stride) of a (B, rows, cols) matrix argument."""
    if t.ndim != 3 or (t.shape[2] > 1 and t.strides[2] != 1):
        raise ValueError(f"linalg.{name}: {what} must be (B, rows, cols) with unit last stride, "
                         f"got shape {t.shape} strides {t.strides}")
    if dtype is not None and t.dtype != dtype:
        raise TypeError(f"linalg.{name}: {what} has dtype {t.dtype}, expected {dtype}")
    return t.data_ptr(), t.strides[0], max(t.strides[1], t.shape[2])


def _trans(trans, name: str) -> int:
    if trans not in (0, 1, 2):
        raise ValueError(f"linalg.{name}: trans must be 0 (A), 1 (A^T) or 2 (A^H), got {trans!r}")
    return int(trans)


def _shape(t, name: str, what: str, shape: tuple) -> None:
    if tuple(t.shape) != shape:
        raise ValueError(f"linalg.{name}: {what} has shape {tuple(t.shape)}, expected {shape}")


def _ivec(t, name: str, what: str, shape: tuple) -> int:
    """Pointer of a contiguous int64 output of the given shape (piv, info)."""
    if t.dtype.sfx != "i64" or tuple(t.shape) != shape or not t.is_contiguous():
        raise ValueError(f"linalg.{name}: {what} must be a contiguous int64 tensor of shape "
                         f"{shape}, got {t.dtype} {tuple(t.shape)}")
    return t.data_ptr()


def _oom(rc: int, name: str, shape) -> None:
    if rc:
        from ..memory import OutOfMemoryError
        raise OutOfMemoryError(f"linalg.{name}: could not allocate the work buffer for {tuple(shape)}")


def lu(a, piv, info) -> None:
    """In place P A = L U with partial pivoting; piv (B, min(m, n)) 0-based row swaps (LAPACK's
    ipiv - 1); info (B,) 0 or j + 1 for the first exactly-zero pivot U[j, j]."""
    B, m, n = a.shape
    if B == 0:
        return
    pa, bs, lda = _mat(a, "lu", "a")
    pp = _ivec(piv, "lu", "piv", (B, min(m, n)))
    rc = _fn(a, "lu")(pa, B, m, n, bs, lda, pp, _ivec(info, "lu", "info", (B,)), K._num_threads)
    _oom(rc, "lu", a.shape)


def cholesky(a, info) -> None:
    """In place A = L L^H from the lower triangle of Hermitian positive definite a (B, n, n); the
    strict upper triangle is zeroed. info (B,) 0 or j + 1 for the first pivot not > 0."""
    B, n, _ = a.shape
    _shape(a, "cholesky", "a", (B, n, n))
    if B == 0:
        return
    pa, bs, lda = _mat(a, "cholesky", "a")
    pi = _ivec(info, "cholesky", "info", (B,))
    rc = _fn(a, "cholesky")(pa, B, n, bs, lda, pi, K._num_threads)
    _oom(rc, "cholesky", a.shape)


def trsm(a, b, lower: bool, unit: bool, trans: int) -> None:
    """Solve op(A) X = B in place in b (B, n, k); a (B, n, n) triangular (the `lower` or upper
    triangle is read), trans 0: A, 1: A^T, 2: A^H; unit: the diagonal taken as 1."""
    B, n, k = b.shape
    trans = _trans(trans, "trsm")
    _shape(a, "trsm", "a", (B, n, n))
    if B == 0 or n == 0 or k == 0:
        return
    pa, bsa, lda = _mat(a, "trsm", "a", b.dtype)
    pb, bsb, ldb = _mat(b, "trsm", "b")
    rc = _fn(b, "trsm")(pa, B, n, bsa, lda, pb, k, bsb, ldb, int(bool(lower)), int(bool(unit)),
                        trans, K._num_threads)
    _oom(rc, "trsm", b.shape)


def lu_solve(lu, piv, b, trans: int) -> None:
    """Solve op(A) X = B in place in b (B, n, k), A given by lu() as lu (B, n, n) and piv."""
    B, n, k = b.shape
    trans = _trans(trans, "lu_solve")
    _shape(lu, "lu_solve", "lu", (B, n, n))
    if B == 0 or n == 0 or k == 0:
        return
    pa, bsa, lda = _mat(lu, "lu_solve", "lu", b.dtype)
    pb, bsb, ldb = _mat(b, "lu_solve", "b")
    pp = _ivec(piv, "lu_solve", "piv", (B, n))
    rc = _fn(b, "lu_solve")(pa, B, n, bsa, lda, pp, pb, k, bsb, ldb, trans, K._num_threads)
    _oom(rc, "lu_solve", b.shape)


def qr(a, q, r, info) -> None:
    """Householder A = Q R of a (B, m, n) (overwritten). q None or (B, m, kq), kq in
    {min(m, n), m}, orthonormal columns; r (B, kr, n) upper triangular (rows >= min(m, n)
    zero); info (B,) zeros."""
    B, m, n = a.shape
    if B == 0:
        return
    pa, bsa, lda = _mat(a, "qr", "a")
    k = min(m, n)
    pr, bsr, ldr = _mat(r, "qr", "r", a.dtype)
    if q is None:
        pq, kq, bsq, ldq = 0, 0, 0, 0
        _shape(r, "qr", "r", (B, k, n))
    else:
        pq, bsq, ldq = _mat(q, "qr", "q", a.dtype)
        kq = q.shape[2]
        if kq not in (k, m):
            raise ValueError(f"linalg.qr: q has {kq} columns, expected {k} or {m}")
        _shape(q, "qr", "q", (B, m, kq))
        _shape(r, "qr", "r", (B, kq, n))
    pi = _ivec(info, "qr", "info", (B,))
    rc = _fn(a, "qr")(pa, B, m, n, bsa, lda, pq, kq, bsq, ldq, pr, r.shape[1], bsr, ldr, pi,
                      K._num_threads)
    _oom(rc, "qr", a.shape)


__all__ = ["cholesky", "lu", "lu_solve", "qr", "trsm"]
