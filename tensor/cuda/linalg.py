"""CUDA linear-algebra kernels (family "linalg", cuda_src/linalg.cuh): lu, cholesky, trsm, lu_solve
and qr with the CPU module's signatures (the issue 16 kernel interface), for float64 and
complex128. Matrices are (B, m, n) tensors whose last stride is 1; their row stride
(``strides[1]``) and batch stride (``strides[0]``) go to the kernel as they are, so a panel view
of a bigger matrix is factored in place. Vector outputs (piv, info) are contiguous int64.

One block per matrix (the grid capped at a few blocks per SM, looping over the batch), its
threads cooperating on each elimination step. Every launch is asynchronous on the current
stream. The kernels are unblocked (LAPACK's level-2 algorithms): right for the batched small
matrices they are meant for; a large matrix wants a blocked algorithm (a panel factored by these
kernels, the trailing matrix updated by tensor/cuda/gemm.py), which is not done here.
"""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK

BLOCK = 128   # LA_BLOCK
DTYPES = (dt.float64, dt.complex128)
_EXTERN = 'extern "C" __global__ void __launch_bounds__(LA_BLOCK)'


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    T = f"sx_{s}::T"
    i = "int64_t"
    return '#include "linalg.cuh"\n', {
        f"la_lu_{s}": (
            f"{_EXTERN} la_lu_{s}({T} *a, {i} *piv, {i} *info, {i} batch, {i} m, {i} n, {i} ld, "
            f"{i} bs) {{ la_lu(a, piv, info, batch, m, n, ld, bs); }}"),
        f"la_cholesky_{s}": (
            f"{_EXTERN} la_cholesky_{s}({T} *a, {i} *info, {i} batch, {i} n, {i} ld, {i} bs) "
            "{ la_cholesky(a, info, batch, n, ld, bs); }"),
        f"la_trsm_{s}": (
            f"{_EXTERN} la_trsm_{s}(const {T} *a, {T} *b, {i} batch, {i} n, {i} k, {i} lda, "
            f"{i} bsa, {i} ldb, {i} bsb, int lower, int unit, int trans) "
            "{ la_trsm(a, b, batch, n, k, lda, bsa, ldb, bsb, lower, unit, trans); }"),
        f"la_lu_solve_{s}": (
            f"{_EXTERN} la_lu_solve_{s}(const {T} *lu, const {i} *piv, {T} *b, {i} batch, {i} n, "
            f"{i} k, {i} lda, {i} bsa, {i} ldb, {i} bsb, int trans) "
            "{ la_lu_solve(lu, piv, b, batch, n, k, lda, bsa, ldb, bsb, trans); }"),
        f"la_qr_{s}": (
            f"{_EXTERN} la_qr_{s}({T} *a, {T} *q, {T} *r, {i} *info, {T} *work, {i} batch, {i} m, "
            f"{i} n, {i} lda, {i} bsa, {i} kq, {i} ldq, {i} bsq, {i} kr, {i} ldr, {i} bsr) "
            "{ la_qr(a, q, r, info, work, batch, m, n, lda, bsa, kq, ldq, bsq, kr, ldr, bsr); }"),
    }


CK.register_family("linalg", entries, list(DTYPES))


def _ptr(t) -> C.c_void_p:
    return C.c_void_p(0 if t is None else t.data_ptr())


def _i(v: int) -> C.c_int64:
    return C.c_int64(int(v))


def _grid(t, batch: int) -> int:
    """Blocks of a launch over `batch` matrices: one each, at most a few per SM."""
    from . import runtime as R
    return max(1, min(batch, R.device_state(t.device.index or 0).sm_count * 4))


def _launch(name: str, t, batch: int, *args) -> None:
    from . import runtime as R
    if t.dtype not in DTYPES:
        raise TypeError(f"linalg.{name}: dtype {t.dtype} is not float64 or complex128")
    R.kernel("linalg", t.dtype, f"la_{name}_{t.dtype.sfx}", t.device)(_grid(t, batch), BLOCK, *args)


def _strides(t) -> tuple[C.c_int64, C.c_int64]:
    """(row stride, batch stride) of a (B, m, n) matrix tensor, in elements."""
    if t.shape[2] > 1 and t.strides[2] != 1:
        raise ValueError("linalg: a matrix argument's last stride must be 1")
    return _i(t.strides[1]), _i(t.strides[0])


def lu(a, piv, info) -> None:
    """P A = L U in place (partial pivoting); piv (B, min(m, n)) 0-based row swaps, info (B,)."""
    B, m, n = a.shape
    if B == 0:
        return
    ld, bs = _strides(a)
    _launch("lu", a, B, _ptr(a), _ptr(piv), _ptr(info), _i(B), _i(m), _i(n), ld, bs)


def cholesky(a, info) -> None:
    """A = L L^H in the lower triangle of a (B, n, n), the strict upper zeroed; info (B,)."""
    B, n, _ = a.shape
    if B == 0:
        return
    ld, bs = _strides(a)
    _launch("cholesky", a, B, _ptr(a), _ptr(info), _i(B), _i(n), ld, bs)


def trsm(a, b, lower: bool, unit: bool, trans: int) -> None:
    """op(A) X = B in place in b (B, n, k); a (B, n, n) triangular; trans 0: A, 1: A^T, 2: A^H."""
    B, n, k = b.shape
    if B == 0 or n == 0 or k == 0:
        return
    lda, bsa = _strides(a)
    ldb, bsb = _strides(b)
    _launch("trsm", b, B, _ptr(a), _ptr(b), _i(B), _i(n), _i(k), lda, bsa, ldb, bsb,
            C.c_int(1 if lower else 0), C.c_int(1 if unit else 0), C.c_int(int(trans)))


def lu_solve(lu, piv, b, trans: int) -> None:
    """op(A) X = B in place in b (B, n, k), A given by lu() as (lu, piv)."""
    B, n, k = b.shape
    if B == 0 or n == 0 or k == 0:
        return
    lda, bsa = _strides(lu)
    ldb, bsb = _strides(b)
    _launch("lu_solve", b, B, _ptr(lu), _ptr(piv), _ptr(b), _i(B), _i(n), _i(k), lda, bsa,
            ldb, bsb, C.c_int(int(trans)))


def qr(a, q, r, info) -> None:
    """Householder A = Q R; a (B, m, n) overwritten; q None or (B, m, kq); r (B, kr, n)."""
    B, m, n = a.shape
    if B == 0:
        return
    k = min(m, n)
    lda, bsa = _strides(a)
    kq, ldq, bsq = 0, _i(0), _i(0)
    if q is not None:
        kq = q.shape[2]
        ldq, bsq = _strides(q)
    kr = r.shape[1]
    ldr, bsr = _strides(r)
    grid = _grid(a, B)
    work = empty((max(1, grid * (k + max(n, kq))),), a.dtype, a.device)
    _launch("qr", a, B, _ptr(a), _ptr(q), _ptr(r), _ptr(info), _ptr(work), _i(B), _i(m), _i(n),
            lda, bsa, _i(kq), ldq, bsq, _i(kr), ldr, bsr)
