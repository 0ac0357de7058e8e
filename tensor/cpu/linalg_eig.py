"""CPU eigen- and singular value kernels (tensor/cpu/csrc/linalg_eig*.h, each algorithm
written once for float64 and complex128): eigh (Householder tridiagonalisation + implicit QL),
svd (one-sided Jacobi for small square matrices; QR + Golub-Kahan bidiagonal QR otherwise) and
eig (complex128: Hessenberg + single-shift complex QR + back substitution) and eig_real
(float64: Hessenberg + Francis double-shift QR to the real Schur form). The op layer is
tensor/linalg/.

Matrices are (B, m, n) tensors whose last stride is 1 (row and batch strides free); vector
outputs and info are contiguous. Each function returns None and writes info[b] > 0 for a
matrix whose iteration did not converge.

>>> import numpy as np, tensor
>>> a = tensor.asarray(np.array([[[2.0, 1.0], [1.0, 2.0]]]))
>>> w, info = tensor.empty((1, 2), dtype=tensor.float64), tensor.empty((1,), dtype=tensor.int64)
>>> eigh(a, w, False, info); w.numpy().round(12).tolist()
[[1.0, 3.0]]
"""
from __future__ import annotations

from . import kernels as K

_CPLX = {"f64": 0, "c128": 1}
_P = "intptr_t"
_I = "int64_t"

K.register_family("linalg_eig", lambda d: (
    f'#define LE_CPLX {_CPLX[d.sfx]}\n#include "linalg_eig.h"\n'
    + ('#include "linalg_eig_real.h"\n' if d.sfx == "f64" else ""),
    f"int linalg_eigh_{d.sfx}({_P}, {_I}, {_I}, {_I}, {_I}, {_P}, int, {_P}, int);\n"
    f"int linalg_svd_{d.sfx}({_P}, {_I}, {_I}, {_I}, {_I}, {_I}, {_P}, {_P}, {_I}, {_I}, "
    f"{_I}, {_P}, {_I}, {_I}, {_I}, {_P}, int);\n"
    + (f"int linalg_eig_c128({_P}, {_I}, {_I}, {_I}, {_I}, {_P}, {_P}, {_I}, {_I}, {_P}, int);"
       if d.sfx == "c128" else
       f"int linalg_eig_real_f64({_P}, {_I}, {_I}, {_I}, {_I}, {_P}, {_P}, {_I}, {_I}, {_P}, int);")))


def _check(rc: int, op: str, shape) -> None:
    if rc:
        from ..memory import OutOfMemoryError
        raise OutOfMemoryError(f"{op}: could not allocate the work space of a {shape} matrix")


def eigh(a, w, vectors: bool, info) -> None:
    """Eigenvalues (ascending, into w (B, n) float64) of the Hermitian a (B, n, n), of which
    only the lower triangle is read; with vectors, a is overwritten with the orthonormal
    eigenvectors as columns, else it is scratch."""
    B, n, _ = a.shape
    if B == 0:
        return
    fn = K.kernel("linalg_eig", a.dtype, f"linalg_eigh_{a.dtype.sfx}")
    _check(fn(a.data_ptr(), B, n, a.strides[0], a.strides[1], w.data_ptr(), int(bool(vectors)),
              info.data_ptr(), K._num_threads), "eigh", (n, n))


def svd(a, s, u, vh, info) -> None:
    """Singular values of a (B, m, n) (scratch) into s (B, k) descending, k = min(m, n); with
    u (B, m, k or m) and vh (B, k or n, n), the singular vectors: A = U[:, :k] diag(s) Vh[:k],
    orthonormal columns of u and rows of vh (complete bases when u is m x m, vh n x n)."""
    B, m, n = a.shape
    if B == 0:
        return
    fn = K.kernel("linalg_eig", a.dtype, f"linalg_svd_{a.dtype.sfx}")
    vec = u is not None
    _check(fn(a.data_ptr(), B, m, n, a.strides[0], a.strides[1], s.data_ptr(),
              u.data_ptr() if vec else 0, u.strides[0] if vec else 0, u.strides[1] if vec else 0,
              u.shape[2] if vec else 0, vh.data_ptr() if vec else 0,
              vh.strides[0] if vec else 0, vh.strides[1] if vec else 0,
              vh.shape[1] if vec else 0, info.data_ptr(), K._num_threads), "svd", (m, n))


def eig(a, w, v, info) -> None:
    """Eigenvalues of the general complex128 a (B, n, n) (overwritten) into w (B, n), in no
    particular order; with v (B, n, n), the right eigenvectors as unit-norm columns."""
    _eig(a, w, v, info, "linalg_eig_c128")


def eig_real(a, w, v, info) -> None:
    """Eigenvalues of the general float64 a (B, n, n) (scratch) into w (B, n) complex128, in the
    order of its real Schur form's diagonal (real ones with imag 0, a complex pair adjacent,
    positive imaginary part first, exact conjugates); with v (B, n, n) complex128, the right
    eigenvectors as unit-norm columns (real for a real eigenvalue, a pair's conjugate)."""
    _eig(a, w, v, info, "linalg_eig_real_f64")


def _eig(a, w, v, info, name: str) -> None:
    B, n, _ = a.shape
    if B == 0:
        return
    fn = K.kernel("linalg_eig", a.dtype, name)
    vec = v is not None
    _check(fn(a.data_ptr(), B, n, a.strides[0], a.strides[1], w.data_ptr(),
              v.data_ptr() if vec else 0, v.strides[0] if vec else 0,
              v.strides[1] if vec else 0, info.data_ptr(), K._num_threads), "eig", (n, n))


__all__ = ["eigh", "svd", "eig", "eig_real"]
