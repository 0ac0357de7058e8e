"""Fused scaled-dot-product attention as one recorded op, with its derivative rules, and the
dense (materialising) pieces that the composed path, create_graph and forward mode share.

The fused op `attention(q, k, v, mask, causal, scale, drop)` takes q (*B, L, E), k (*B, S, E),
v (*B, S, Ev) and an additive mask (*B, L, S) of the kernels' compute type (or None), all with
the same batch shape *B; they may be broadcast or strided views (each batch is found through
a small table of element offsets, so a broadcast key or a transposed head layout costs no
copy), only their last dim must be contiguous. It returns (out (*B, L, Ev), lse (*B, L)); the
backend kernels (tensor/cpu/csrc/nn_attn.h, cuda_src/nn_attn.cuh) never hold an L x S matrix.

drop: None, or (thr, dscale, seed, offset): weight (b, i, j) of the flattened batch is kept
when the top 24 bits of value (b * L + i) * S + j of the Philox draw (seed, offset) are >= thr,
and scaled by dscale. `keep_mask` draws the same bits with `Generator.rand`, so the composed
path and the recomputation in backward see the very mask the kernels used.

Backward: the fused kernels when the pass is not recorded; under create_graph the same
FlashAttention-2 formulas (dS = P * (dP - rowsum(P * dP))) in public ops, so higher derivatives
work. Forward mode: composed from public ops (it materialises the weights).

>>> import tensor as T
>>> from nn import _fused_attention as A
>>> q = T.ones((1, 2, 4)); v = T.arange(8.0).reshape(1, 2, 4)
>>> A.attention(q, q, v, None, False, 0.5, None)[0].tolist()
[[[2.0, 3.0, 4.0, 5.0], [2.0, 3.0, 4.0, 5.0]]]
"""
from __future__ import annotations

import math

import numpy as np

import tensor as T
from autograd.grad_mode import is_grad_enabled
from autograd.graph import RULES, Rule
from tensor import convert
from tensor import dtypes as dt
from tensor import elementwise as ew
from tensor import random as _random
from tensor._hook import differentiable
from tensor._tensor import Tensor
from tensor.capture import capturing
from tensor.rowops import softmax

from ._fused import _be, _stat_dtype

FUSED_DTYPES = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
_ATTN_META = ("B", "L", "S", "E", "Ev", "qs", "ks", "vs", "msl", "mss", "causal", "thr", "seed",
              "offset")   # the order of nn_attn.h's meta[]


class AttnArgs:
    """What the backends' sdpa_fwd / sdpa_bwd read besides the tensors: meta (the int64
    parameters of nn_attn.h, in order), the per-batch element offsets of q, k, v and the mask
    (int64 tensors on the device; moff None without a mask), scale and the dropout scale."""

    __slots__ = ("meta", "qoff", "koff", "voff", "moff", "scale", "dscale")

    def rng_draw(self) -> tuple[int, int] | None:
        """(seed, offset) of the dropout's Philox draw, None without dropout (a captured step
        re-bases it at each replay: tensor/capture.py)."""
        if not self.meta[11]:
            return None
        return self.meta[12] % (1 << 64), self.meta[13]

    def with_rng_draw(self, seed: int, offset: int) -> AttnArgs:
        a = AttnArgs()
        for f in self.__slots__:
            setattr(a, f, getattr(self, f))
        seed = seed - (1 << 64) if seed >= 1 << 63 else seed
        a.meta = self.meta[:12] + (seed, int(offset))
        return a


def compute_dtype(d: dt.DType) -> dt.DType:
    """The kernels' arithmetic (and mask, lse) dtype for storage dtype d."""
    return _stat_dtype(d)


def fused_ok(q: Tensor, k: Tensor, v: Tensor) -> bool:
    """Whether the fused kernels take these operands (dtype, sizes, tile memory)."""
    if q.dtype not in FUSED_DTYPES or 0 in q.shape or 0 in k.shape or 0 in v.shape:
        return False
    return _be(q).sdpa_tile(q.dtype, q.shape[-1], v.shape[-1]) > 0


# ---------------------------------------------------------------- the fused op

def _rows_view(t: Tensor) -> Tensor:
    """t with a contiguous last dim (a copy only when it is not)."""
    return t if t.shape[-1] <= 1 or t.strides[-1] == 1 else ew.contiguous(t)


# (device, batch shape, batch strides) -> its offsets: read-only tensors, shared by the calls
# of a model (a step's attention layers have a handful of layouts); not filled while a step is
# captured, whose tensors belong to its memory plan
_OFFSETS: dict = {}
_OFFSETS_MAX = 64


def _offsets(t: Tensor, device) -> Tensor:
    """int64 element offset (from t's first element) of each batch of t (*B, R, C)."""
    key = (device, t.shape[:-2], t.strides[:-2])
    hit = _OFFSETS.get(key)
    if hit is not None:
        return hit
    off = np.zeros((), dtype=np.int64)
    for n, s in zip(t.shape[:-2], t.strides[:-2]):
        off = off[..., None] + np.arange(n, dtype=np.int64) * s
    off = convert.asarray(np.ascontiguousarray(off.reshape(-1)), device=device)
    if not capturing():
        if len(_OFFSETS) >= _OFFSETS_MAX:
            _OFFSETS.clear()
        _OFFSETS[key] = off
    return off


def _args(q, k, v, mask, causal, scale, drop) -> AttnArgs:
    a = AttnArgs()
    *bs, L, E = q.shape
    S, Ev = k.shape[-2], v.shape[-1]
    thr, dscale, seed, offset = drop if drop is not None else (0, 1.0, 0, 0)
    ms = mask.strides[-2:] if mask is not None else (0, 0)
    seed = seed - (1 << 64) if seed >= 1 << 63 else seed   # the int64 bits of the uint64 seed
    a.meta = (math.prod(bs), L, S, E, Ev, q.strides[-2], k.strides[-2], v.strides[-2], ms[0],
              ms[1], int(bool(causal)), int(thr), seed, int(offset))
    dev = q.device
    a.qoff, a.koff, a.voff = _offsets(q, dev), _offsets(k, dev), _offsets(v, dev)
    a.moff = _offsets(mask, dev) if mask is not None else None
    a.scale, a.dscale = float(scale), float(dscale)
    return a


def _attention(q: Tensor, k: Tensor, v: Tensor, mask, causal: bool, scale: float, drop):
    """(out, lse) of the fused kernels (not recorded: `attention` is the recorded op)."""
    q, k, v = _rows_view(q), _rows_view(k), _rows_view(v)
    *bs, L, _ = q.shape
    out = ew.empty_tensor((*bs, L, v.shape[-1]), q.dtype, q.device)
    lse = ew.empty_tensor((*bs, L), compute_dtype(q.dtype), q.device)
    _be(q).sdpa_fwd(q, k, v, mask, out, lse, _args(q, k, v, mask, causal, scale, drop))
    return out, lse


attention = differentiable("scaled_dot_product_attention", _attention)


def _fused_bwd(q, k, v, mask, causal, scale, drop, out, lse, g):
    """(dq, dk, dv), contiguous, shaped like q, k, v (the broadcast batch): the fused backward."""
    q, k, v = _rows_view(q), _rows_view(k), _rows_view(v)
    g = ew.contiguous(ew.astype(g, q.dtype, copy=False))
    dq = ew.empty_tensor(q.shape, q.dtype, q.device)
    dk = ew.empty_tensor(k.shape, q.dtype, q.device)
    dv = ew.empty_tensor(v.shape, q.dtype, q.device)
    dsum = ew.empty_tensor(lse.shape, lse.dtype, q.device)
    _be(q).sdpa_bwd(q, k, v, mask, out, lse, g, dsum, dq, dk, dv,
                    _args(q, k, v, mask, causal, scale, drop))
    return dq, dk, dv


# ---------------------------------------------------------------- dense pieces (public ops)

def keep_mask(drop, shape, dtype, device) -> Tensor:
    """The dropout factors (dscale where kept, else 0; dtype) of draw `drop` over shape
    (*B, L, S): the bits the kernels test, drawn by a Generator put at (seed, offset)."""
    thr, dscale, seed, offset = drop
    g = _random.Generator(seed)
    g.set_state((seed, offset))
    u = g.rand(*shape, dtype=T.float32, device=device)
    return (u >= thr * 2.0 ** -24).astype(dtype) * dscale   # thr / 2^24 is exact in float32


def dense_weights(q, k, mask, causal: bool, scale: float) -> Tensor:
    """softmax(q k^T * scale + mask) over the keys, rows whose every score is -inf giving 0
    (PyTorch's safe softmax: no NaN, and zero gradients, for a fully masked row)."""
    s = T.matmul(q * scale, T.matrix_transpose(k))
    if mask is not None:
        s = s + mask.astype(s.dtype, copy=False)
    if causal:
        L, S = s.shape[-2:]
        s = T.where(T.tril(T.ones((L, S), dtype=T.bool_, device=s.device)), s, -math.inf)
    dead = T.all(s == -math.inf, axis=-1, keepdims=True)
    return T.where(dead, 0.0, softmax(T.where(dead, 0.0, s), -1))


def _dense_vjp(q, k, v, mask, causal, scale, drop, g):
    """(dq, dk, dv) in public ops (recorded under create_graph)."""
    p = dense_weights(q, k, mask, causal, scale)
    z = keep_mask(drop, p.shape, p.dtype, p.device) if drop is not None else None
    pz = p if z is None else p * z
    dv = T.matmul(T.matrix_transpose(pz), g)
    dp = T.matmul(g, T.matrix_transpose(v))
    if z is not None:
        dp = dp * z
    ds = p * (dp - T.sum(p * dp, axis=-1, keepdims=True))
    return T.matmul(ds, k) * scale, T.matmul(T.matrix_transpose(ds), q) * scale, dv


# ---------------------------------------------------------------- derivative rules

def _vjp(ctx, gs):
    q, k, v, mask, causal, scale, drop = ctx.args
    g = gs[0]
    if gs[1] is not None:   # lse is internal: nothing outside this module can reach it
        raise NotImplementedError("scaled_dot_product_attention: no gradient through the lse")
    if g is None:
        return (None,) * 7
    if is_grad_enabled():
        dq, dk, dv = _dense_vjp(q, k, v, mask, causal, scale, drop, g)
    else:
        out, lse = ctx.out
        dq, dk, dv = _fused_bwd(q, k, v, mask, causal, scale, drop, out, lse, g)
    n = ctx.needs
    return (dq if n[0] else None, dk if n[1] else None, dv if n[2] else None) + (None,) * 4


def _jvp(ctx, tans):
    q, k, v, mask, causal, scale, drop = ctx.args
    tq, tk, tv = tans[:3]
    if tq is None and tk is None and tv is None:
        return None
    p = dense_weights(q, k, mask, causal, scale)
    ts = None
    if tq is not None:
        ts = T.matmul(tq * scale, T.matrix_transpose(k))
    if tk is not None:
        t = T.matmul(q * scale, T.matrix_transpose(tk))
        ts = t if ts is None else ts + t
    z = keep_mask(drop, p.shape, p.dtype, p.device) if drop is not None else None
    pz = p if z is None else p * z
    to, tlse = None, None
    if ts is not None:
        tlse = T.sum(p * ts, axis=-1)
        tp = p * (ts - T.expand_dims(tlse, -1))
        to = T.matmul(tp if z is None else tp * z, v)
        tlse = tlse.astype(ctx.out[1].dtype, copy=False)
    if tv is not None:
        t = T.matmul(pz, tv)
        to = t if to is None else to + t
    return [to, tlse]


RULES["scaled_dot_product_attention"] = Rule("scaled_dot_product_attention", _vjp, _jvp,
                                             (0, 1, 2, 3, "out"))

__all__ = ["attention", "AttnArgs", "FUSED_DTYPES", "compute_dtype", "fused_ok", "keep_mask",
           "dense_weights"]
