"""CPU kernels of the CTC loss's alpha / beta recursions (tensor/cpu/csrc/nn_ctc.h), for
nn/_ctc_fused.py through the backend interface (ctc_fwd / ctc_bwd). CUDA twin:
tensor/cuda/ctc.py. float32 and float64 log-probabilities; every array contiguous and
allocated by the caller (alpha and scratch float64, ext / il / tl int64)."""
from __future__ import annotations

from . import kernels as K

_SIGS = (
    "void ctc_fwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int64_t, "
    "int64_t, int64_t, int64_t, int);",
    "void ctc_bwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, "
    "intptr_t, intptr_t, int64_t, int64_t, int64_t, int64_t, int);",
)

K.register_family("nn_ctc", lambda d: (
    f'#include "nn_ctc.h"\nSX_CTC_FWD({d.sfx})\nSX_CTC_BWD({d.sfx})\n',
    "\n".join(s.format(s=d.sfx) for s in _SIGS)))


def ctc_fwd(lp, ext, il, tl, alpha, ll) -> None:
    """alpha (steps, N, W) and the log-likelihoods ll (N,) of log-probabilities lp (steps, N, C)
    against the extended targets ext (N, W) with lengths il / tl (N,)."""
    steps, n, c = lp.shape
    K.kernel("nn_ctc", lp.dtype, f"ctc_fwd_{lp.dtype.sfx}")(
        lp.data_ptr(), ext.data_ptr(), il.data_ptr(), tl.data_ptr(), alpha.data_ptr(),
        ll.data_ptr(), steps, n, c, ext.shape[1], K._num_threads)


def ctc_bwd(lp, ext, il, tl, alpha, ll, gll, grad, scratch) -> None:
    """grad (steps, N, C) = gll[n] * d ll[n] / d lp; scratch (N, 2 W) float64."""
    steps, n, c = lp.shape
    K.kernel("nn_ctc", lp.dtype, f"ctc_bwd_{lp.dtype.sfx}")(
        lp.data_ptr(), ext.data_ptr(), il.data_ptr(), tl.data_ptr(), alpha.data_ptr(),
        ll.data_ptr(), gll.data_ptr(), grad.data_ptr(), scratch.data_ptr(), steps, n, c,
        ext.shape[1], K._num_threads)
