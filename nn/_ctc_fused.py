"""The CTC loss's recursions as one autograd node (see nn/ctc.py).

The per-op recursion (nn/ctc.py's _reference_ll) records about twenty small ops per time step
and its backward replays them node by node. Here the forward runs the whole alpha recursion in
one backend call (ctc_fwd: tensor/cpu/csrc/nn_ctc.h, cuda_src/nn_ctc.cuh) and the backward
the beta recursion, which gives d ll / d log_probs directly (ctc_bwd). float32 / float64
log-probabilities; others, forward-mode tangents and saved-tensor hooks take the per-op path.
Under create_graph (a double backward) the backward differentiates the per-op recording, so
higher derivatives stay exact.
"""
from __future__ import annotations

import numpy as np

import tensor as T
from autograd import Function
from autograd.grad_mode import state
from tensor import Tensor
from tensor import dtypes as dt
from tensor import elementwise as ew
from tensor.backend import backend_for

_KERNEL_DTYPES = (dt.float32, dt.float64)


def usable(log_probs: Tensor) -> bool:
    """Whether the fused kernels apply to log_probs."""
    return log_probs.dtype in _KERNEL_DTYPES and not state.fw_level and not state.saved_hooks


def _ints(a, dev) -> Tensor:
    return T.asarray(np.ascontiguousarray(a, dtype=np.int64), device=dev)


def log_likelihood(log_probs: Tensor, ext, il, tl, reference) -> Tensor:
    """ll (N,): the log-probability of each entry's target (ext: (N, W) extended targets, il /
    tl: host int64 lengths); reference(log_probs) is the per-op recursion, for double
    backward."""
    dev = log_probs.device
    ints = (_ints(ext, dev), _ints(il, dev), _ints(tl, dev))
    if not (state.grad_enabled and not state.depth and log_probs.requires_grad):
        return _forward(ew.contiguous(log_probs), *ints)[0]
    return _CTC.apply(log_probs, ints, reference)


def _forward(lp: Tensor, ext: Tensor, il: Tensor, tl: Tensor):
    steps, n, _ = lp.shape
    alpha = T.empty((steps, n, ext.shape[1]), dtype=dt.float64, device=lp.device)
    ll = T.empty((n,), dtype=lp.dtype, device=lp.device)
    backend_for(lp.device).ctc_fwd(lp, ext, il, tl, alpha, ll)
    return ll, alpha


class _CTC(Function):
    @staticmethod
    def forward(ctx, log_probs, ints, reference):
        lp = ew.contiguous(log_probs)
        ll, alpha = _forward(lp, *ints)
        ctx.save_for_backward(log_probs)
        ctx.keep = (lp, ints, alpha, ll, reference)
        return ll

    @staticmethod
    def backward(ctx, gll):
        lp, ints, alpha, ll, reference = ctx.keep
        if state.grad_enabled:   # create_graph: differentiate the per-op recording instead
            import autograd
            x = ctx.saved_tensors[0] * 1.0
            (g,) = autograd.grad([reference(x)], [x], [gll], create_graph=True)
            return g, None, None
        ext, il, tl = ints
        grad = T.empty(lp.shape, dtype=lp.dtype, device=lp.device)
        scratch = T.empty((lp.shape[1], 2 * ext.shape[1]), dtype=dt.float64, device=lp.device)
        backend_for(lp.device).ctc_bwd(lp, ext, il, tl, alpha, ll,
                                       ew.contiguous(gll.astype(lp.dtype)), grad, scratch)
        return grad, None, None
