"""CPU sparse kernels (family "sparse", tensor/cpu/csrc/sparse.h): the backend's spmm_csr and
sddmm_csr for float32 / float64 CSR matrices, row-parallel (OpenMP) over chunks of rows
balanced by nnz. The op layer is tensor/sparse."""
from __future__ import annotations

from . import kernels as K

_C = {"f32": "float", "f64": "double"}

K.register_family("sparse", lambda d: (
    f'#include "sparse.h"\nSX_SPARSE({d.sfx}, {_C[d.sfx]})\n',
    f"void spmm_csr_{d.sfx}(intptr_t crow, intptr_t col, intptr_t val, intptr_t b, intptr_t c, "
    "int64_t m, int64_t n, int nthreads);\n"
    f"void sddmm_csr_{d.sfx}(intptr_t crow, intptr_t col, intptr_t s, intptr_t x, intptr_t y, "
    "intptr_t out, int64_t m, int64_t d, double beta, double alpha, int nthreads);"))


def spmm_csr(crow, col, values, b, out, balanced: bool = False) -> None:
    """out (m, n) = A @ b, A = CSR (crow, col, values), b (k, n) and out contiguous; balanced
    (a hint for skewed rows) is not needed here: chunks are balanced by nnz anyway."""
    m, n = out.shape
    if m == 0 or n == 0:
        return
    d = values.dtype
    K.kernel("sparse", d, f"spmm_csr_{d.sfx}")(
        crow.data_ptr(), col.data_ptr(), values.data_ptr(), b.data_ptr(), out.data_ptr(), m, n,
        K._num_threads)


def sddmm_csr(crow, col, s, x, y, out, beta: float, alpha: float) -> None:
    """out[j] = beta * s[j] + alpha * dot(x[row j], y[col j]) over the nonzeros of the CSR
    pattern (crow, col); x (m, d), y (ncols, d), s and out (nnz,), all contiguous."""
    m = crow.shape[0] - 1
    if out.shape[0] == 0:
        return
    d = out.dtype
    K.kernel("sparse", d, f"sddmm_csr_{d.sfx}")(
        crow.data_ptr(), col.data_ptr(), s.data_ptr(), x.data_ptr(), y.data_ptr(), out.data_ptr(),
        m, x.shape[1], float(beta), float(alpha), K._num_threads)


__all__ = ["spmm_csr", "sddmm_csr"]
