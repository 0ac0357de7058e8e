"""CUDA eigen- and singular value kernels (family "linalg_eig", cuda_src/linalg_eig.cuh): the
backend's eigh, svd and eig (issue 16's kernel interface, the same names and signatures as the
CPU's), in double precision, real and complex (eig: complex; eig_real: real). One block per
matrix (eig_real: one thread), the grid capped at a few blocks per SM and looping over the
batch; each block (thread) works on a copy of its matrix in its own area of a device work
tensor.

  eigh  parallel cyclic two-sided Jacobi (round-robin ordering: the n/2 rotations of a round are
        disjoint and applied together), eigenvalues ascending
  svd   one-sided (Hestenes) Jacobi on the columns (of A^H when wide), s descending, the left
        basis completed by Gram-Schmidt against standard basis vectors for full / rank-deficient
  eig   Householder Hessenberg reduction, complex single-shift QR with deflation, eigenvectors
        by back substitution on the Schur form, unit 2-norm
  eig_real  (float64 input, cuda_src/linalg_eig_real.cuh) one thread per matrix running the
        CPU's sequential real algorithm (scalar/linalg_eig_real.h): Hessenberg reduction,
        Francis double-shift QR to the real Schur form, exact conjugate pairs

Matrix arguments: (B, m, n) with unit last stride; their row and batch strides go to the
kernel. Launches are asynchronous; results and info land in the given tensors."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK

BLOCK = 128   # LE_BLOCK
WORK_BUDGET = 1 << 30   # bytes of work area a launch may take: fewer blocks for big matrices


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    T = f"sx_{s}::T"
    x = 'extern "C" __global__ void __launch_bounds__(LE_BLOCK) '
    out = {
        f"la_eigh_{s}": (f"{x}la_eigh_{s}({T} *a, int64_t bs, int64_t lda, double *w, char *work, "
                      "int64_t ws, int64_t *info, int64_t batch, int64_t n, int vectors) "
                      f"{{ le_eigh<{T}>(a, bs, lda, w, work, ws, info, batch, n, vectors); }}"),
        f"la_svd_{s}": (f"{x}la_svd_{s}({T} *a, int64_t bs, int64_t lda, double *s, {T} *u, int64_t ubs, "
                     f"int64_t ldu, int64_t ku, {T} *vh, int64_t vbs, int64_t ldv, int64_t kv, "
                     "char *work, int64_t ws, int64_t *info, int64_t batch, int64_t m, int64_t n, "
                     f"int vecs) {{ le_svd<{T}>(a, bs, lda, s, u, ubs, ldu, ku, vh, vbs, ldv, kv, "
                     "work, ws, info, batch, m, n, vecs); }"),
    }
    if d is dt.complex128:
        out["la_eig_c128"] = (f"{x}la_eig_c128(sx_cd *a, int64_t bs, int64_t lda, sx_cd *w, sx_cd *v, "
                           "int64_t vbs, int64_t ldv, char *work, int64_t ws, int64_t *info, "
                           "int64_t batch, int64_t n, int vecs) "
                           "{ le_eig(a, bs, lda, w, v, vbs, ldv, work, ws, info, batch, n, vecs); }")
    if d is dt.float64:
        out["la_eig_real_f64"] = (
            'extern "C" __global__ void la_eig_real_f64(const double *a, int64_t bs, int64_t lda, '
            "sx_cd *w, sx_cd *v, int64_t vbs, int64_t ldv, char *work, int64_t ws, int64_t *info, "
            "int64_t batch, int64_t n, int vecs) "
            "{ le_eig_real(a, bs, lda, w, v, vbs, ldv, work, ws, info, batch, n, vecs); }")
        return '#include "linalg_eig.cuh"\n#include "linalg_eig_real.cuh"\n', out
    return '#include "linalg_eig.cuh"\n', out


CK.register_family("linalg_eig", entries, [dt.float64, dt.complex128])


def _ptr(t):
    return C.c_void_p(0 if t is None else t.data_ptr())


def _i(v: int):
    return C.c_int64(int(v))


def _launch(name: str, d, device, batch: int, per_block: int, *args):
    """Launch `name` on min(batch, 4 per SM, what WORK_BUDGET allows) blocks, each with a work
    area of per_block bytes; args: the kernel's, with the work pointer and its stride (bytes
    between the blocks' areas) given as None, None."""
    from . import runtime as R
    per = (max(per_block, 16) + 15) // 16 * 16
    grid = max(1, min(batch, R.device_state(device.index or 0).sm_count * 4, WORK_BUDGET // per))
    work = empty((grid * per // 8,), dt.float64, device)
    args = list(args)
    i = args.index(None)
    args[i:i + 2] = [_ptr(work), _i(per)]
    R.kernel("linalg_eig", d, name, device)(grid, BLOCK, *args)


def eigh(a, w, vectors, info) -> None:
    """Eigenvalues (ascending, into w (B, n) float64) and, if vectors, the orthonormal
    eigenvectors as the columns of a, of the Hermitian a (B, n, n) (lower triangle read)."""
    B, n = a.shape[0], a.shape[-1]
    if B == 0:   # n == 0 still launches: info is written (zeros)
        return
    d, isz, h = a.dtype, a.dtype.itemsize, (n + 1) // 2
    per = ((2 if vectors else 1) * n * n + h) * isz + 3 * h * 8 + n * 8
    _launch(f"la_eigh_{d.sfx}", d, a.device, B, per, _ptr(a), _i(a.strides[0]), _i(a.strides[1]),
            _ptr(w), None, None, _ptr(info), _i(B), _i(n), C.c_int(1 if vectors else 0))


def svd(a, s, u, vh, info) -> None:
    """Singular values of a (B, m, n) (descending, into s (B, k) float64) and, when u / vh are
    given, the singular vectors: u (B, m, ku), vh (B, kv, n), ku / kv = k or full."""
    B, m, n = a.shape
    if B == 0:
        return
    k = min(m, n)     # k == 0 still launches: info (zeros) and any full bases are written
    d, isz = a.dtype, a.dtype.itemsize
    M, N = max(m, n), k
    vecs = u is not None
    ku, kv = (u.shape[2], vh.shape[1]) if vecs else (0, 0)
    kw = (ku if m >= n else kv) if vecs else 0
    per = (M * N + ((N * N + M * kw + kw) if vecs else 0)) * isz + 2 * N * 8
    z = _i(0)
    _launch(f"la_svd_{d.sfx}", d, a.device, B, per, _ptr(a), _i(a.strides[0]), _i(a.strides[1]),
            _ptr(s), _ptr(u), _i(u.strides[0]) if vecs else z, _i(u.strides[1]) if vecs else z,
            _i(ku), _ptr(vh), _i(vh.strides[0]) if vecs else z, _i(vh.strides[1]) if vecs else z,
            _i(kv), None, None, _ptr(info), _i(B), _i(m), _i(n), C.c_int(1 if vecs else 0))


def eig(a, w, v, info) -> None:
    """Eigenvalues (into w (B, n) complex128, any order) and, when v is given, unit-norm right
    eigenvectors (the columns of v (B, n, n)) of the complex128 a (B, n, n)."""
    B, n = a.shape[0], a.shape[-1]
    if B == 0:   # n == 0 still launches: info is written (zeros)
        return
    vecs = v is not None
    per = ((3 if vecs else 1) * n * n + 2 * n) * 16 + n * 8
    z = _i(0)
    _launch("la_eig_c128", a.dtype, a.device, B, per, _ptr(a), _i(a.strides[0]), _i(a.strides[1]),
            _ptr(w), _ptr(v), _i(v.strides[0]) if vecs else z, _i(v.strides[1]) if vecs else z,
            None, None, _ptr(info), _i(B), _i(n), C.c_int(1 if vecs else 0))


REAL_BLOCK = 64   # threads per block of eig_real (one matrix a thread)


def eig_real(a, w, v, info) -> None:
    """Eigenvalues (into w (B, n) complex128, in the order of the real Schur form's diagonal:
    real ones with imag 0, conjugate pairs adjacent, positive imaginary part first) and, when v
    is given, unit-norm right eigenvectors (v's columns, complex128) of the float64 a (B, n, n),
    which is only read."""
    from . import runtime as R
    B, n = a.shape[0], a.shape[-1]
    if B == 0:   # n == 0 still launches: info is written (zeros)
        return
    per = max(16, (8 * (2 * n * n + 6 * n) + 15) // 16 * 16)   # LR_WORK(n) doubles, aligned
    threads = max(1, min(B, R.device_state(a.device.index or 0).sm_count * 4 * REAL_BLOCK,
                         WORK_BUDGET // per))
    block = min(REAL_BLOCK, threads)
    grid = (threads + block - 1) // block
    work = empty((grid * block * per // 8,), dt.float64, a.device)
    vecs = v is not None
    z = _i(0)
    R.kernel("linalg_eig", a.dtype, "la_eig_real_f64", a.device)(
        grid, block, _ptr(a), _i(a.strides[0]), _i(a.strides[1]), _ptr(w), _ptr(v),
        _i(v.strides[0]) if vecs else z, _i(v.strides[1]) if vecs else z, _ptr(work), _i(per),
        _ptr(info), _i(B), _i(n), C.c_int(1 if vecs else 0))
