"""CUDA sparse kernels (family "sparse", cuda_src/sparse.cuh): the backend's spmm_csr (a
warp-per-row kernel, or for skewed rows an nnz-balanced segmented kernel plus a fix-up pass
that sums the parts of rows crossing segments in a fixed order) and sddmm_csr (a warp per
nonzero), float32 / float64, deterministic. The op layer is tensor/sparse."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK

BLOCK = 256   # SSP_BLOCK
SEG = 256     # SSP_SEG
_T = "sx_{s}::T"


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    T = _T.format(s=s)
    head = 'extern "C" __global__ void __launch_bounds__(SSP_BLOCK) '
    csr = "const int64_t *crow, const int64_t *col"
    return '#include "sparse.cuh"\n', {
        f"spmm_warp_{s}": (
            f"{head}spmm_warp_{s}({csr}, const {T} *val, const {T} *b, {T} *c, int64_t m, "
            f"int64_t n) {{ ssp_spmm_warp<sx_{s}>(crow, col, val, b, c, m, n); }}"),
        f"spmm_seg_{s}": (
            f"{head}spmm_seg_{s}({csr}, const {T} *val, const {T} *b, {T} *c, {T} *part, "
            f"int64_t m, int64_t n, int64_t nseg) "
            f"{{ ssp_spmm_seg<sx_{s}>(crow, col, val, b, c, part, m, n, nseg); }}"),
        f"spmm_fix_{s}": (
            f"{head}spmm_fix_{s}(const int64_t *crow, {T} *c, const {T} *part, int64_t m, "
            f"int64_t n) {{ ssp_spmm_fix<sx_{s}>(crow, c, part, m, n); }}"),
        f"sddmm_{s}": (
            f"{head}sddmm_{s}({csr}, const {T} *sv, const {T} *x, const {T} *y, {T} *out, "
            f"int64_t m, int64_t d, double beta, double alpha) "
            f"{{ ssp_sddmm<sx_{s}>(crow, col, sv, x, y, out, m, d, beta, alpha); }}"),
    }


CK.register_family("sparse", entries, [dt.float32, dt.float64])

_p = lambda t: C.c_void_p(t.data_ptr())   # noqa: E731


def spmm_csr(crow, col, values, b, out, balanced: bool = False) -> None:
    """out (m, n) = A @ b on CUDA tensors (asynchronous); balanced: rows are skewed, use the
    nnz-balanced segmented kernel."""
    from . import runtime as R
    m, n = out.shape
    if m == 0 or n == 0:
        return
    d, s, dev = out.dtype, out.dtype.sfx, out.device
    nnz = values.shape[0]
    if not balanced or nnz == 0:
        k = R.kernel("sparse", d, f"spmm_warp_{s}", dev)
        k(R.blocks_for(m * 32, BLOCK, dev), BLOCK, _p(crow), _p(col), _p(values), _p(b), _p(out),
          C.c_int64(m), C.c_int64(n))
        return
    nseg = (nnz + SEG - 1) // SEG
    part = empty((2 * nseg, n), d, dev)
    k = R.kernel("sparse", d, f"spmm_seg_{s}", dev)
    k(R.blocks_for(nseg * 32, BLOCK, dev), BLOCK, _p(crow), _p(col), _p(values), _p(b), _p(out),
      _p(part), C.c_int64(m), C.c_int64(n), C.c_int64(nseg))
    k = R.kernel("sparse", d, f"spmm_fix_{s}", dev)
    k(R.blocks_for(m * 32, BLOCK, dev), BLOCK, _p(crow), _p(out), _p(part), C.c_int64(m),
      C.c_int64(n))


def sddmm_csr(crow, col, s, x, y, out, beta: float, alpha: float) -> None:
    """out[j] = beta * s[j] + alpha * dot(x[row j], y[col j]) on CUDA tensors (asynchronous)."""
    from . import runtime as R
    nnz = out.shape[0]
    if nnz == 0:
        return
    d, dev = out.dtype, out.device
    m = crow.shape[0] - 1
    k = R.kernel("sparse", d, f"sddmm_{d.sfx}", dev)
    k(R.blocks_for(nnz * 32, BLOCK, dev), BLOCK, _p(crow), _p(col), _p(s), _p(x), _p(y), _p(out),
      C.c_int64(m), C.c_int64(x.shape[1]), C.c_double(beta), C.c_double(alpha))


__all__ = ["spmm_csr", "sddmm_csr"]
