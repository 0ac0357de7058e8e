"""CPU kernels of one LSTM / GRU time step, forward and backward (tensor/cpu/csrc/nn_rnn.h),
for nn/_rnn_fused.py through the backend interface (rnn_cell_fwd / rnn_cell_bwd). CUDA twin:
tensor/cuda/rnn.py. float32 and float64; the arrays contiguous, of one dtype, allocated by
the caller."""
from __future__ import annotations

from . import kernels as K

_SIGS = (
    "void lstm_fwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int64_t, "
    "int64_t, int);",
    "void lstm_bwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, "
    "int64_t, int64_t, int);",
    "void gru_fwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int64_t, int64_t, int);",
    "void gru_bwd_{s}(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int64_t, "
    "int64_t, int);",
)

K.register_family("nn_rnn", lambda d: (
    f'#include "nn_rnn.h"\nSX_LSTM_FWD({d.sfx})\nSX_LSTM_BWD({d.sfx})\nSX_GRU_FWD({d.sfx})\n'
    f'SX_GRU_BWD({d.sfx})\n', "\n".join(s.format(s=d.sfx) for s in _SIGS)))


def _p(t) -> int:
    return 0 if t is None else t.data_ptr()


def rnn_cell_fwd(mode: str, gx, gh, prev, acts, out, c_out, rows: int, H: int) -> None:
    """One step's forward: mode "LSTM" (prev: the cell state; out: h, c_out: c) or "GRU"
    (prev: the hidden state; out: h; c_out unused)."""
    if mode == "LSTM":
        K.kernel("nn_rnn", gx.dtype, f"lstm_fwd_{gx.dtype.sfx}")(
            _p(gx), _p(gh), _p(prev), _p(acts), _p(c_out), _p(out), rows, H, K._num_threads)
    else:
        K.kernel("nn_rnn", gx.dtype, f"gru_fwd_{gx.dtype.sfx}")(
            _p(gx), _p(gh), _p(prev), _p(acts), _p(out), rows, H, K._num_threads)


def rnn_cell_bwd(mode: str, acts, prev, c, dh, dc, d1, d2, d3, rows: int, H: int) -> None:
    """One step's backward. LSTM: prev the previous cell state, c the new one, dc (not None) its gradient;
    d1 = dpre (rows, 4H), d2 = d(previous cell state). GRU: prev the previous hidden state;
    d1 = dgx, d2 = dgh (rows, 3H), d3 = dh * z."""
    if mode == "LSTM":
        K.kernel("nn_rnn", acts.dtype, f"lstm_bwd_{acts.dtype.sfx}")(
            _p(acts), _p(prev), _p(c), _p(dh), _p(dc), _p(d1), _p(d2), rows, H, K._num_threads)
    else:
        K.kernel("nn_rnn", acts.dtype, f"gru_bwd_{acts.dtype.sfx}")(
            _p(acts), _p(prev), _p(dh), _p(d1), _p(d2), _p(d3), rows, H, K._num_threads)
