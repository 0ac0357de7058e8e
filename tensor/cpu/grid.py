"""CPU kernels of 2-D grid_sample's bilinear / nearest sampling (tensor/cpu/csrc/nn_grid.h),
for nn/_grid_fused.py through the backend interface (grid_sample2d_fwd / grid_sample2d_bwd).
CUDA twin: tensor/cuda/grid.py. float32 and float64; every array contiguous, of one dtype,
allocated by the caller."""
from __future__ import annotations

from . import kernels as K

_SIGS = (
    "void gs2d_fwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, int64_t, int64_t, int64_t, "
    "int64_t, int64_t, int, int);",
    "void gs2d_bwd_input_{s}(intptr_t, intptr_t, intptr_t, intptr_t, int64_t, int64_t, int64_t, "
    "int64_t, int64_t, int, int);",
    "void gs2d_bwd_coords_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, "
    "int64_t, int64_t, int64_t, int64_t, int64_t, int, int);",
)

K.register_family("nn_grid", lambda d: (
    f'#include "nn_grid.h"\nSX_GS2D({d.sfx})\n', "\n".join(s.format(s=d.sfx) for s in _SIGS)))


def _fn(d, name: str):
    return K.kernel("nn_grid", d, f"{name}_{d.sfx}")


def grid_sample2d_fwd(inp, ix, iy, out, nearest: bool) -> None:
    """out (N, C, P) = inp (N, C, H, W) sampled at pixel coordinates ix, iy (N, P)."""
    n, c, h, w = inp.shape
    _fn(inp.dtype, "gs2d_fwd")(inp.data_ptr(), ix.data_ptr(), iy.data_ptr(), out.data_ptr(), n,
                               c, h, w, ix.shape[1], int(nearest), K._num_threads)


def grid_sample2d_bwd(inp, ix, iy, gout, ginp, gix, giy, nearest: bool) -> None:
    """The gradients of grid_sample2d_fwd's input (ginp, when not None) and coordinates (gix,
    giy, when not None) from gout (N, C, P); every result overwritten."""
    n, c, h, w = inp.shape
    p = ix.shape[1]
    if ginp is not None:
        _fn(inp.dtype, "gs2d_bwd_input")(ix.data_ptr(), iy.data_ptr(), gout.data_ptr(),
                                         ginp.data_ptr(), n, c, h, w, p, int(nearest),
                                         K._num_threads)
    if gix is not None:
        _fn(inp.dtype, "gs2d_bwd_coords")(inp.data_ptr(), ix.data_ptr(), iy.data_ptr(),
                                          gout.data_ptr(), gix.data_ptr(), giy.data_ptr(), n, c,
                                          h, w, p, int(nearest), K._num_threads)
