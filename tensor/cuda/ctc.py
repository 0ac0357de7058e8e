"""CUDA kernels of the CTC loss's alpha / beta recursions (cuda_src/nn_ctc.cuh): the CPU's
tensor/cpu/ctc.py on a CUDA device, same functions and arguments. Family "nn_ctc", float32 and
float64; one thread per batch entry."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from . import kernels as CK

BLOCK = 64   # CTC_BLOCK

_KERNELS = {
    "ctc_fwd": ("const {T} *lp, const int64_t *ext, const int64_t *il, const int64_t *tl, "
                "double *alpha, {T} *ll, int64_t steps, int64_t N, int64_t C, int64_t W",
                "ctc_fwd(lp, ext, il, tl, alpha, ll, steps, N, C, W)"),
    "ctc_bwd": ("const {T} *lp, const int64_t *ext, const int64_t *il, const int64_t *tl, "
                "const double *alpha, const {T} *ll, const {T} *gll, {T} *grad, double *scratch, "
                "int64_t steps, int64_t N, int64_t C, int64_t W",
                "ctc_bwd(lp, ext, il, tl, alpha, ll, gll, grad, scratch, steps, N, C, W)"),
}


CK.register_table("nn_ctc", "nn_ctc.cuh", "CTC_BLOCK", _KERNELS, [dt.float32, dt.float64])


def _launch(lp, name: str, *ptrs) -> None:
    from . import runtime as R
    steps, n, c = lp.shape
    w = ptrs[1].shape[1]
    k = R.kernel("nn_ctc", lp.dtype, f"{name}_{lp.dtype.sfx}", lp.device)
    k(R.blocks_for(max(n, 1), BLOCK, lp.device), BLOCK, *[C.c_void_p(p.data_ptr()) for p in ptrs],
      C.c_int64(steps), C.c_int64(n), C.c_int64(c), C.c_int64(w))


def ctc_fwd(lp, ext, il, tl, alpha, ll) -> None:
    """The CPU's ctc_fwd (tensor/cpu/ctc.py) on CUDA."""
    _launch(lp, "ctc_fwd", lp, ext, il, tl, alpha, ll)


def ctc_bwd(lp, ext, il, tl, alpha, ll, gll, grad, scratch) -> None:
    """The CPU's ctc_bwd on CUDA."""
    _launch(lp, "ctc_bwd", lp, ext, il, tl, alpha, ll, gll, grad, scratch)
