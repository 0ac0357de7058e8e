"""A recurrent layer's whole time loop (one layer, one direction) as one autograd node.

The per-op recurrence (`_step` below: nn/recurrent.py's fallback) records about fifteen small
ops per time step, each paying Python dispatch and a tape entry, and its backward replays them
node by node. Here the forward runs the loop with autograd off and keeps what the backward
needs (the gate activations, the cell states, the hidden state each step read); the backward
runs the reverse loop by hand, then one product each for W_hh and W_hr over all steps. LSTM
and GRU steps in float32 / float64 run on the backend's fused step kernels (rnn_cell_fwd /
rnn_cell_bwd: tensor/cpu/csrc/nn_rnn.h, cuda_src/nn_rnn.cuh): per step one product and one
kernel call each way; other dtypes and RNN_TANH / RNN_RELU use tensor ops in the same loop.
Without recording (no_grad, or nothing requires grad) the loop runs alone, nothing kept.

The hand-written backward gives first derivatives. Under create_graph (a double backward) it
recomputes the loop op by op from the node's inputs and differentiates that recording, so
higher derivatives stay exact; `usable` sends forward-mode tangents, saved-tensor hooks and
mixed dtypes / devices to the per-op path.
"""
from __future__ import annotations

import itertools

import tensor as T
from autograd import Function
from autograd.grad_mode import state
from tensor import Tensor
from tensor import dtypes as dt
from tensor import elementwise as ew
from tensor.backend import backend_for

from . import _functional as F
from ._fused_ops import _linear

_KERNEL_DTYPES = (dt.float32, dt.float64)   # the backends' rnn_cell_fwd / rnn_cell_bwd


def usable(*tensors) -> bool:
    """Whether the fused loop applies: no forward-mode level or saved-tensor hooks are active
    (they see every step's ops on the per-op path), and every tensor given (None skipped)
    shares one dtype and device."""
    if state.fw_level or state.saved_hooks:
        return False
    ts = [t for t in tensors if t is not None]
    return all(t.dtype == ts[0].dtype and t.device == ts[0].device for t in ts)


def run(mode: str, gx: Tensor, sizes, h0: Tensor, c0, w_hh: Tensor, b_hh, w_hr, reverse: bool):
    """(output, h_n, c_n) of one layer and direction over the projected inputs gx ((L, N, G), or
    packed rows (sum(sizes), G) with batch sizes `sizes`): one graph node when autograd records
    it, else the loop alone."""
    sizes = None if sizes is None else tuple(sizes)
    args = (gx, h0, c0, w_hh, b_hh, w_hr)
    if not (state.grad_enabled and not state.depth
            and any(t is not None and t.requires_grad for t in args)):
        return _forward_loop(mode, gx, sizes, h0, c0, w_hh, b_hh, w_hr, reverse, None)
    out = _Loop.apply(*args, mode, sizes, reverse)
    return out if mode == "LSTM" else (out[0], out[1], None)


def _steps(gx: Tensor, sizes, reverse: bool):
    """(t, rows of step t in gx) in the loop's order."""
    if sizes is None:
        n = gx.shape[0]
        order = range(n - 1, -1, -1) if reverse else range(n)
        return [(t, slice(t, t + 1)) for t in order], n
    starts = [0, *itertools.accumulate(sizes)]
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    return [(t, slice(starts[t], starts[t + 1])) for t in order], len(sizes)


def _rows(x: Tensor, sizes, t: int, sl: slice) -> Tensor:
    return x[t] if sizes is None else x[sl]


def _merge(new: Tensor, old: Tensor) -> Tensor:
    """A packed step updates the first rows of the batch; the rest keep `old`."""
    return new if new.shape[0] == old.shape[0] else T.concat([new, old[new.shape[0]:]])


def _gather(parts: list, sizes) -> Tensor:
    return T.stack(parts) if sizes is None else T.concat(parts)


def _forward_loop(mode, gx, sizes, h, c, w_hh, b_hh, w_hr, reverse, keep: dict):
    """The recurrence (autograd off or not recording); keep[t] = what step t's backward reads
    (keep None: nothing kept)."""
    order, n = _steps(gx, sizes, reverse)
    if mode in ("LSTM", "GRU") and gx.dtype in _KERNEL_DTYPES:
        return _kernel_forward(mode, ew.contiguous(gx), sizes, order, n, ew.contiguous(h),
                               None if c is None else ew.contiguous(c), w_hh, b_hh, w_hr, keep,
                               reverse)
    w_t = w_hh.T
    wr_t = None if w_hr is None else w_hr.T
    seq = [None] * n
    for t, sl in order:
        g = _rows(gx, sizes, t, sl)
        b = g.shape[0]
        hp = h if b == h.shape[0] else h[:b]
        gh = hp @ w_t
        if b_hh is not None:
            gh = gh + b_hh
        if mode == "LSTM":
            cp = c if b == c.shape[0] else c[:b]
            k = gh.shape[-1] // 4
            s = g + gh
            a = T.sigmoid(s)
            cand = T.tanh(s[:, 2 * k:3 * k])
            i, f, o = a[:, :k], a[:, k:2 * k], a[:, 3 * k:]
            cn = f * cp + i * cand
            tc = T.tanh(cn)
            hh = o * tc
            hn = hh if wr_t is None else hh @ wr_t
            if keep is not None:
                keep[t] = (hp, cp, a, cand, tc, hh)
            c = _merge(cn, c)
        elif mode == "GRU":
            k = gh.shape[-1] // 3
            rz = T.sigmoid(g[:, :2 * k] + gh[:, :2 * k])
            r, z = rz[:, :k], rz[:, k:]
            ghn = gh[:, 2 * k:]
            nn_ = T.tanh(g[:, 2 * k:] + r * ghn)
            hn = nn_ + z * (hp - nn_)
            if keep is not None:
                keep[t] = (hp, rz, nn_, ghn)
        else:
            s = g + gh
            hn = T.tanh(s) if mode == "RNN_TANH" else T.maximum(s, 0.0)
            if keep is not None:
                keep[t] = (hp, hn)
        seq[t] = hn
        h = _merge(hn, h)
    return _gather(seq, sizes), h, c


def _kernel_forward(mode, gx, sizes, order, n, h, c, w_hh, b_hh, w_hr, keep, reverse):
    """_forward_loop on the backend's fused step kernels (LSTM, GRU; float32 / float64): per
    step one product and one kernel call (and the projection's product). A padded batch
    writes every step's states into one buffer per state, (L + 1, N, H) with the initial state
    at the loop's start, so the backward reads each step's previous state, and all of them at
    once for W_hh's gradient, as views (keep["hs"])."""
    be = backend_for(gx.device)
    d, dev = gx.dtype, gx.device
    lstm = mode == "LSTM"
    k = gx.shape[-1] // (4 if lstm else 3)
    hs = cs = hhs = None
    if sizes is None:       # the buffers: step t reads row p(t) and writes row o(t)
        at = n if reverse else 0    # reverse: the initial state at the end
        hs = ew.empty_tensor((n + 1,) + tuple(h.shape), d, dev)
        ew.copy_into(hs[at], h)
        h = hs[at]
        if lstm:
            cs = ew.empty_tensor((n + 1,) + tuple(c.shape), d, dev)
            ew.copy_into(cs[at], c)
            c = cs[at]
            if w_hr is not None:
                hhs = ew.empty_tensor((n,) + (h.shape[0], k), d, dev)
    seq = [None] * n
    for t, sl in order:
        g = _rows(gx, sizes, t, sl)
        b = g.shape[0]
        o = None if hs is None else (t + 1 if at == 0 else t)
        hp = h if b == h.shape[0] else h[:b]
        gh = _linear(hp, w_hh, b_hh)
        acts = ew.empty_tensor((b, 4 * k), d, dev)
        if o is not None and hhs is None:
            hn = hs[o]
        else:
            hn = ew.empty_tensor((b, k), d, dev) if hhs is None else hhs[t]
        if lstm:
            cp = c if b == c.shape[0] else c[:b]
            cn = ew.empty_tensor((b, k), d, dev) if cs is None else cs[o]
            be.rnn_cell_fwd(mode, g, gh, cp, acts, hn, cn, b, k)
            hh = hn
            if w_hr is not None:
                if o is None:
                    hn = _linear(hh, w_hr, None)
                else:
                    hn = hs[o]
                    be.gemm(hh, w_hr.T, hn)
            if keep is not None:
                keep[t] = (hp, cp, acts, cn, None, hh)
            c = _merge(cn, c)
        else:
            be.rnn_cell_fwd(mode, g, gh, hp, acts, hn, None, b, k)
            if keep is not None:
                keep[t] = (hp, acts)
        seq[t] = hn
        h = _merge(hn, h)
    if hs is None:
        return _gather(seq, sizes), h, c
    if keep is not None:    # every step's previous state, in step order
        keep["hs"] = hs[:n] if at == 0 else hs[1:]
        keep["hhs"] = hhs
    # fresh outputs: a caller's in-place change to them must not reach what backward reads
    y = hs[1:] if at == 0 else hs[:n]
    return _copy(y), _copy(h), None if c is None else _copy(c)


def _flat(x: Tensor) -> Tensor:
    """A contiguous (L, N, k) buffer as (L * N, k)."""
    return x.reshape(-1, x.shape[-1])


def _copy(x: Tensor) -> Tensor:
    out = ew.empty_tensor(tuple(x.shape), x.dtype, x.device)
    ew.copy_into(out, x)
    return out


def _kernel_backward_step(be, mode, kept, dh, dc, gy_t, w_hh, w_hr, outs=None):
    """One step of the reverse loop on the fused kernels: (dh, dc carried to the step before,
    d(gates from x), d(gates from h), d(h before W_hr) or None); outs: where the gates'
    gradients go (LSTM: (dpre,), GRU: (dgx, dgh)), else fresh."""
    hp = kept[0]
    b = hp.shape[0]
    d = dh if b == dh.shape[0] else dh[:b]
    if gy_t is not None:
        d = d + gy_t
    d = ew.contiguous(d)
    dev, dtype = hp.device, hp.dtype
    if mode == "LSTM":
        _, cp, acts, cn, _, _ = kept
        k = cn.shape[-1]
        dhh = None
        if w_hr is not None:
            dhh, d = d, d @ w_hr
        dcb = dc if b == dc.shape[0] else dc[:b]
        dpre = ew.empty_tensor((b, 4 * k), dtype, dev) if outs is None else outs[0]
        dcp = ew.empty_tensor((b, k), dtype, dev)
        be.rnn_cell_bwd(mode, acts, cp, cn, d, ew.contiguous(dcb), dpre, dcp, None, b, k)
        return _merge(dpre @ w_hh, dh), _merge(dcp, dc), dpre, dpre, dhh
    acts = kept[1]
    k = hp.shape[-1]
    if outs is None:
        outs = (ew.empty_tensor((b, 3 * k), dtype, dev), ew.empty_tensor((b, 3 * k), dtype, dev))
    dgx, dgh = outs
    dhp = ew.empty_tensor((b, k), dtype, dev)
    be.rnn_cell_bwd(mode, acts, hp, None, d, None, dgx, dgh, dhp, b, k)
    return _merge(dhp + dgh @ w_hh, dh), dc, dgx, dgh, None


def _step(mode: str, gx: Tensor, h: Tensor, c, w_hh: Tensor, b_hh, w_hr=None):
    """One time step, op by op (nn/recurrent.py's per-op path and the cells', and what
    _recorded_vjp differentiates): gx = x_t @ w_ih.T + b_ih (N, gates * H), h (N, H_out), c
    (N, H) for an LSTM. Returns (h', c')."""
    gh = F.linear(h, w_hh, b_hh)
    if mode == "GRU":
        n3 = gx.shape[-1] // 3
        r = T.sigmoid(gx[..., :n3] + gh[..., :n3])
        z = T.sigmoid(gx[..., n3:2 * n3] + gh[..., n3:2 * n3])
        n = T.tanh(gx[..., 2 * n3:] + r * gh[..., 2 * n3:])
        return n + z * (h - n), None          # (1 - z) * n + z * h
    g = gx + gh
    if mode == "RNN_TANH":
        return T.tanh(g), None
    if mode == "RNN_RELU":
        return F.relu(g), None
    n4 = g.shape[-1] // 4
    i, f = T.sigmoid(g[..., :n4]), T.sigmoid(g[..., n4:2 * n4])
    cell, o = T.tanh(g[..., 2 * n4:3 * n4]), T.sigmoid(g[..., 3 * n4:])
    c = f * c + i * cell
    h = o * T.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


class _Loop(Function):
    @staticmethod
    def forward(ctx, gx, h0, c0, w_hh, b_hh, w_hr, mode, sizes, reverse):
        ctx.set_materialize_grads(False)
        keep: dict = {}
        y, h, c = _forward_loop(mode, gx, sizes, h0, c0, w_hh, b_hh, w_hr, reverse, keep)
        ctx.save_for_backward(gx, h0, c0, w_hh, b_hh, w_hr)
        ctx.keep, ctx.conf = keep, (mode, sizes, reverse)
        return (y, h, c) if mode == "LSTM" else (y, h)

    @staticmethod
    def backward(ctx, gy, gh_n, gc_n=None):
        gx, h0, c0, w_hh, b_hh, w_hr = ctx.saved_tensors
        mode, sizes, reverse = ctx.conf
        if state.grad_enabled:      # create_graph: differentiate the per-op recording instead
            return _recorded_vjp(ctx, (gy, gh_n, gc_n))
        return _backward_loop(ctx, gy, gh_n, gc_n) + (None, None, None)


def _zeros_like(t: Tensor) -> Tensor:
    return T.zeros(t.shape, dtype=t.dtype, device=t.device)


def _backward_loop(ctx, gy, gh_n, gc_n):
    gx, h0, c0, w_hh, b_hh, w_hr = ctx.saved_tensors
    mode, sizes, reverse = ctx.conf
    keep = ctx.keep
    order, n = _steps(gx, sizes, reverse)
    dh = _zeros_like(h0) if gh_n is None else ew.contiguous(gh_n)
    dc = None
    if mode == "LSTM":
        dc = _zeros_like(c0) if gc_n is None else ew.contiguous(gc_n)
    dgx, dgh = [None] * n, [None] * n     # per step: d(gates from x), d(gates from h)
    dhh_all = [None] * n                  # LSTM with projection: d(h before W_hr)
    fast = mode in ("LSTM", "GRU") and gx.dtype in _KERNEL_DTYPES
    be = backend_for(gx.device) if fast else None
    bufs = None
    if "hs" in keep:        # a padded batch on the kernels: the gates' gradients in buffers
        shape = (n,) + tuple(dh.shape[:1]) + (gx.shape[-1],)
        bufs = [ew.empty_tensor(shape, gx.dtype, gx.device) for _ in range(1 if mode == "LSTM" else 2)]
    for t, sl in reversed(order):
        hp = keep[t][0]
        if fast:
            dh, dc, dgx[t], dgh[t], dhh_all[t] = _kernel_backward_step(
                be, mode, keep[t], dh, dc, None if gy is None else _rows(gy, sizes, t, sl),
                w_hh, w_hr, None if bufs is None else [bf[t] for bf in bufs])
            continue
        b = hp.shape[0]
        d = dh if b == dh.shape[0] else dh[:b]
        if gy is not None:
            d = d + _rows(gy, sizes, t, sl)
        if mode == "LSTM":
            _, cp, a, cand, tc, hh = keep[t]
            k = cand.shape[-1]
            if w_hr is not None:
                dhh_all[t] = d
                d = d @ w_hr
            i, f, o = a[:, :k], a[:, k:2 * k], a[:, 3 * k:]
            dcb = dc if b == dc.shape[0] else dc[:b]
            dcn = dcb + d * o * (1.0 - tc * tc)
            dpre = T.concat([dcn * cand * i * (1.0 - i), dcn * cp * f * (1.0 - f),
                             dcn * i * (1.0 - cand * cand), d * tc * o * (1.0 - o)], axis=-1)
            dgx[t] = dgh[t] = dpre
            dc = _merge(dcn * f, dc)
            dprev = dpre @ w_hh
        elif mode == "GRU":
            _, rz, nn_, ghn = keep[t]
            k = nn_.shape[-1]
            r, z = rz[:, :k], rz[:, k:]
            dan = d * (1.0 - z) * (1.0 - nn_ * nn_)
            dar = dan * ghn * r * (1.0 - r)
            daz = d * (hp - nn_) * z * (1.0 - z)
            dgx[t] = T.concat([dar, daz, dan], axis=-1)
            dgh[t] = T.concat([dar, daz, dan * r], axis=-1)
            dprev = d * z + dgh[t] @ w_hh
        else:
            hn = keep[t][1]
            dpre = d * (1.0 - hn * hn) if mode == "RNN_TANH" else d * (hn > 0.0)
            dgx[t] = dgh[t] = dpre
            dprev = dpre @ w_hh
        dh = _merge(dprev, dh)
    need = ctx.needs_input_grad
    # the weights' gradients: one product over every step's rows
    if bufs is not None:
        d_gx, flat = bufs[0], _flat(bufs[-1])
        hprev = _flat(keep["hs"])
    else:
        d_gx, flat = (_gather(dgx, sizes) if need[0] else None), T.concat(dgh)
        hprev = T.concat([keep[t][0] for t in range(n)])
    d_whh = flat.T @ hprev if need[3] else None
    d_bhh = None
    if b_hh is not None and need[4]:    # column sums as a product (a strided sum is slower)
        d_bhh = (flat.T @ T.ones((flat.shape[0], 1), dtype=flat.dtype, device=flat.device)).reshape(-1)
    d_whr = None
    if w_hr is not None and need[5]:
        hh = _flat(keep["hhs"]) if bufs is not None else T.concat([keep[t][5] for t in range(n)])
        d_whr = T.concat(dhh_all).T @ hh
    return (d_gx, dh if need[1] else None, dc if c0 is not None and need[2] else None,
            d_whh, d_bhh, d_whr)


def _recorded_vjp(ctx, grads):
    """The vector-Jacobian product through the op-by-op recording of the loop (differentiable
    again: used under create_graph)."""
    import autograd

    mode, sizes, reverse = ctx.conf
    # each input through a fresh identity node: the gradient for one input must be the
    # node's partial derivative, not also the paths through another input computed from it
    # (an LSTM cell's c and h, where h = o tanh(c) of the step before)
    inputs = tuple(x * 1.0 if x is not None and x.requires_grad else x for x in ctx.saved_tensors)
    gx, h0, c0, w_hh, b_hh, w_hr = inputs
    order, _ = _steps(gx, sizes, reverse)
    seq, h, c = [None] * len(order), h0, c0
    for t, sl in order:
        g = _rows(gx, sizes, t, sl)
        b = g.shape[0]
        hb, cb = _step(mode, g, h[:b], None if c is None else c[:b], w_hh, b_hh, w_hr)
        seq[t] = hb
        h, c = _merge(hb, h), (None if c is None else _merge(cb, c))
    outs = [_gather(seq, sizes), h] + ([c] if mode == "LSTM" else [])
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    want = [i for i, x in enumerate(inputs) if x is not None and ctx.needs_input_grad[i]]
    got = autograd.grad([o for o, _ in pairs], [inputs[i] for i in want],
                        [g for _, g in pairs], create_graph=True, allow_unused=True)
    res = [None] * 9
    for i, g in zip(want, got):
        res[i] = g
    return tuple(res)

