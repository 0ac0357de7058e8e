"""CUDA kernels of 2-D grid_sample's bilinear / nearest sampling (cuda_src/nn_grid.cuh): the
CPU's tensor/cpu/grid.py on a CUDA device, same functions and arguments. Family "nn_grid",
float32 and float64."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from . import kernels as CK

BLOCK = 128   # GS_BLOCK

_DIMS = "int64_t N, int64_t C, int64_t H, int64_t W, int64_t P, int nearest"
_KERNELS = {
    "gs2d_fwd": ("const {T} *in, const {T} *gx, const {T} *gy, {T} *out, " + _DIMS,
                 "gs2d_fwd(in, gx, gy, out, N, C, H, W, P, nearest)"),
    "gs2d_bwd_input": ("const {T} *gx, const {T} *gy, const {T} *g, {T} *ginp, " + _DIMS,
                       "gs2d_bwd_input(gx, gy, g, ginp, N, C, H, W, P, nearest)"),
    "gs2d_bwd_coords": ("const {T} *in, const {T} *gx, const {T} *gy, const {T} *g, {T} *gix, "
                        "{T} *giy, " + _DIMS,
                        "gs2d_bwd_coords(in, gx, gy, g, gix, giy, N, C, H, W, P, nearest)"),
}


CK.register_table("nn_grid", "nn_grid.cuh", "GS_BLOCK", _KERNELS, [dt.float32, dt.float64])


def _launch(inp, name: str, items: int, ptrs, p: int, nearest: bool) -> None:
    from . import runtime as R
    n, c, h, w = inp.shape
    k = R.kernel("nn_grid", inp.dtype, f"{name}_{inp.dtype.sfx}", inp.device)
    k(R.blocks_for(max(items, 1), BLOCK, inp.device), BLOCK,
      *[C.c_void_p(t.data_ptr()) for t in ptrs], C.c_int64(n), C.c_int64(c), C.c_int64(h),
      C.c_int64(w), C.c_int64(p), C.c_int(int(nearest)))


def grid_sample2d_fwd(inp, ix, iy, out, nearest: bool) -> None:
    """The CPU's grid_sample2d_fwd (tensor/cpu/grid.py) on CUDA."""
    n, c = inp.shape[:2]
    _launch(inp, "gs2d_fwd", n * c * ix.shape[1], (inp, ix, iy, out), ix.shape[1], nearest)


def grid_sample2d_bwd(inp, ix, iy, gout, ginp, gix, giy, nearest: bool) -> None:
    """The CPU's grid_sample2d_bwd on CUDA."""
    n, c = inp.shape[:2]
    p = ix.shape[1]
    if ginp is not None:
        _launch(inp, "gs2d_bwd_input", n * c, (ix, iy, gout, ginp), p, nearest)
    if gix is not None:
        _launch(inp, "gs2d_bwd_coords", n * p, (inp, ix, iy, gout, gix, giy), p, nearest)
