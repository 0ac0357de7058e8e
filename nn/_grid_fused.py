"""2-D grid_sample's bilinear / nearest interpolation as one autograd node (see nn/grid.py).

The per-op path gathers the input once per tap through a (N, C, P) broadcast index, and its
backward scatters once per tap. Here one backend call samples every tap (grid_sample2d_fwd:
tensor/cpu/csrc/nn_grid.h, cuda_src/nn_grid.cuh) and one gives the input's and the pixel
coordinates' gradients (grid_sample2d_bwd); the coordinates' unnormalisation and padding stay
tensor ops in nn/grid.py, so autograd carries their gradient on to the grid. float32 / float64;
other dtypes, forward-mode tangents and saved-tensor hooks take the per-op path. Under
create_graph (a double backward) the backward differentiates the per-op recording, so higher
derivatives stay exact.
"""
from __future__ import annotations

import tensor as T
from autograd import Function
from autograd.grad_mode import state
from tensor import Tensor
from tensor import dtypes as dt
from tensor import elementwise as ew
from tensor.backend import backend_for

_KERNEL_DTYPES = (dt.float32, dt.float64)


def usable(input: Tensor) -> bool:
    """Whether the fused kernels apply to input (and its grid, of the same dtype)."""
    return input.dtype in _KERNEL_DTYPES and not state.fw_level and not state.saved_hooks


def sample2d(input: Tensor, ix: Tensor, iy: Tensor, nearest: bool, reference) -> Tensor:
    """(N, C, P): input (N, C, H, W) at pixel coordinates ix, iy (N, P); reference(input, ix,
    iy) is the per-op sampling (for double backward)."""
    if not (state.grad_enabled and not state.depth
            and (input.requires_grad or ix.requires_grad or iy.requires_grad)):
        return _forward(ew.contiguous(input), ew.contiguous(ix), ew.contiguous(iy), nearest)
    return _Sample2d.apply(input, ix, iy, nearest, reference)


def _forward(inp: Tensor, ix: Tensor, iy: Tensor, nearest: bool) -> Tensor:
    n, c = inp.shape[:2]
    out = T.empty((n, c, ix.shape[1]), dtype=inp.dtype, device=inp.device)
    backend_for(inp.device).grid_sample2d_fwd(inp, ix, iy, out, nearest)
    return out


class _Sample2d(Function):
    @staticmethod
    def forward(ctx, input, ix, iy, nearest, reference):
        inp, cx, cy = ew.contiguous(input), ew.contiguous(ix), ew.contiguous(iy)
        ctx.save_for_backward(input, ix, iy)
        ctx.keep = (inp, cx, cy, nearest, reference)
        return _forward(inp, cx, cy, nearest)

    @staticmethod
    def backward(ctx, gout):
        inp, cx, cy, nearest, reference = ctx.keep
        want = ctx.needs_input_grad[:3]
        if state.grad_enabled:   # create_graph: differentiate the per-op recording instead
            import autograd
            xs = [t * 1.0 for t in ctx.saved_tensors]
            idx = [i for i in range(3) if want[i]]
            got = autograd.grad([reference(*xs)], [xs[i] for i in idx], [gout],
                                create_graph=True, allow_unused=True)
            res = [None] * 5
            for i, g in zip(idx, got):
                res[i] = g
            return tuple(res)
        g = ew.contiguous(gout.astype(inp.dtype))
        ginp = T.empty(inp.shape, dtype=inp.dtype, device=inp.device) if want[0] else None
        gix = giy = None
        if want[1] or want[2]:
            gix = T.empty(cx.shape, dtype=inp.dtype, device=inp.device)
            giy = T.empty(cy.shape, dtype=inp.dtype, device=inp.device)
        backend_for(inp.device).grid_sample2d_bwd(inp, cx, cy, g, ginp, gix, giy, nearest)
        return (ginp, gix if want[1] else None, giy if want[2] else None, None, None)
