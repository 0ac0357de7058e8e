"""CUDA kernels of one LSTM / GRU time step, forward and backward (cuda_src/nn_rnn.cuh): the
CPU's tensor/cpu/rnn.py on a CUDA device, same functions and arguments. Family "nn_rnn",
float32 and float64; the device's sigmoid / tanh, so results equal the CPU's to rounding."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from . import kernels as CK

BLOCK = 256   # RN_BLOCK

_KERNELS = {
    "lstm_fwd": ("const {T} *gx, const {T} *gh, const {T} *cp, {T} *acts, {T} *c, {T} *h, "
                 "int64_t rows, int64_t H", "rn_lstm_fwd(gx, gh, cp, acts, c, h, rows, H)"),
    "lstm_bwd": ("const {T} *acts, const {T} *cp, const {T} *c, const {T} *dh, const {T} *dc, "
                 "{T} *dpre, {T} *dcp, int64_t rows, int64_t H",
                 "rn_lstm_bwd(acts, cp, c, dh, dc, dpre, dcp, rows, H)"),
    "gru_fwd": ("const {T} *gx, const {T} *gh, const {T} *hp, {T} *acts, {T} *h, int64_t rows, "
                "int64_t H", "rn_gru_fwd(gx, gh, hp, acts, h, rows, H)"),
    "gru_bwd": ("const {T} *acts, const {T} *hp, const {T} *dh, {T} *dgx, {T} *dgh, {T} *dhp, "
                "int64_t rows, int64_t H", "rn_gru_bwd(acts, hp, dh, dgx, dgh, dhp, rows, H)"),
}


CK.register_table("nn_rnn", "nn_rnn.cuh", "RN_BLOCK", _KERNELS, [dt.float32, dt.float64])


def _p(t) -> C.c_void_p:
    return C.c_void_p(0 if t is None else t.data_ptr())


def _launch(t, name: str, rows: int, H: int, *ptrs) -> None:
    from . import runtime as R
    k = R.kernel("nn_rnn", t.dtype, f"{name}_{t.dtype.sfx}", t.device)
    k(R.blocks_for(rows * H, BLOCK, t.device), BLOCK, *[_p(p) for p in ptrs], C.c_int64(rows),
      C.c_int64(H))


def rnn_cell_fwd(mode: str, gx, gh, prev, acts, out, c_out, rows: int, H: int) -> None:
    """The CPU's rnn_cell_fwd (tensor/cpu/rnn.py) on CUDA."""
    if mode == "LSTM":
        _launch(gx, "lstm_fwd", rows, H, gx, gh, prev, acts, c_out, out)
    else:
        _launch(gx, "gru_fwd", rows, H, gx, gh, prev, acts, out)


def rnn_cell_bwd(mode: str, acts, prev, c, dh, dc, d1, d2, d3, rows: int, H: int) -> None:
    """The CPU's rnn_cell_bwd on CUDA."""
    if mode == "LSTM":
        _launch(acts, "lstm_bwd", rows, H, acts, prev, c, dh, dc, d1, d2)
    else:
        _launch(acts, "gru_bwd", rows, H, acts, prev, dh, d1, d2, d3)
