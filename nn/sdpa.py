"""scaled_dot_product_attention: PyTorch's function, on fused kernels where they apply.

softmax(query key^T * scale + mask) value over the last two dims of query (..., L, E), key
(..., S, E) and value (..., S, Ev), batch dims broadcast. attn_mask broadcasts to
(..., L, S): bool (True = may attend, as PyTorch's SDPA: the opposite of MultiheadAttention's
masks) or floating (added to the scores). is_causal: keys j <= i only (the top-left aligned
lower triangle, as PyTorch's; not together with attn_mask; for the lower-right one pass
attn_mask=nn.attention.bias.causal_lower_right(L, S)). enable_gqa: key and value have
fewer heads (dim -3) than query, each shared by query.shape[-3] // key.shape[-3] consecutive
query heads (PyTorch's repeat_interleave). dropout_p: weights dropped after the softmax and the
rest scaled by 1 / (1 - p), drawn from tensor.random's default generator (always, as PyTorch's
SDPA: pass 0.0 for evaluation).

Rows whose every score is -inf (a fully masked query) give 0 and zero gradients, as PyTorch's
math and fused kernels do since 2.5 (its safe softmax), not NaN.

Paths: the fused kernels (nn/_fused_attention.py; float16, bfloat16 computing in float32,
float32, float64) when they apply; otherwise, and always for a floating mask that requires a
gradient (or carries a forward-mode tangent), a composition of public ops that materialises
the L x S weights. Both give the same values (tests/test_sdpa.py checks them against each
other, against PyTorch and against NumPy) and draw the same dropout bits.

>>> import tensor as T
>>> q = T.ones((1, 2, 4)); v = T.arange(8.0).reshape(1, 2, 4)
>>> scaled_dot_product_attention(q, q, v, is_causal=True).tolist()
[[[0.0, 1.0, 2.0, 3.0], [2.0, 3.0, 4.0, 5.0]]]
"""
from __future__ import annotations

import contextlib
import enum
import math
import numbers

import tensor as T
from autograd.grad_mode import is_grad_enabled
from tensor import random as _random
from tensor._tensor import Tensor
from tensor.amp import autocast_op

from . import _fused_attention as FA

OP = "scaled_dot_product_attention"


class SDPBackend(enum.IntEnum):
    """PyTorch's torch.nn.attention.SDPBackend. Here MATH is the composition of public ops and
    the fused kernels stand for the three fused backends (FLASH_ATTENTION, EFFICIENT_ATTENTION,
    CUDNN_ATTENTION: allowing any of them allows the fused path)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FUSED = frozenset({SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                    SDPBackend.CUDNN_ATTENTION})
_allowed = [frozenset(SDPBackend) - {SDPBackend.ERROR}]   # process-wide, as PyTorch's flags


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Within the block, scaled_dot_product_attention may use only `backends` (an SDPBackend or
    a list of them), as torch.nn.attention.sdpa_kernel: [SDPBackend.MATH] forces the composed
    path; fused backends only force the fused kernels, and a call they cannot take raises
    RuntimeError instead of falling back. set_priority (the order to try them in) is accepted;
    there is one fused path here, tried first."""
    items = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in items:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: backends must be SDPBackend members, got {b!r}")
    if not isinstance(set_priority, bool):
        raise TypeError(f"sdpa_kernel: set_priority must be a bool, got {set_priority!r}")
    _allowed.append(frozenset(items))
    try:
        yield
    finally:
        _allowed.pop()


def _path(path: str, fused_ok: bool, op: str) -> str:
    """The path sdpa_kernel's backends leave for `path` ("auto" picks by fused_ok)."""
    allowed = _allowed[-1]
    math_ok, fused_allowed = SDPBackend.MATH in allowed, bool(allowed & _FUSED)
    if path != "auto" or (math_ok and fused_allowed):
        return path
    if fused_allowed and fused_ok:
        return "fused"
    if math_ok:
        return "composed"
    names = sorted(b.name for b in allowed) or ["none"]
    raise RuntimeError(f"{op}: no available kernel: sdpa_kernel allows only {', '.join(names)}, "
                       "and " + ("the fused kernels do not take these operands (dtype, shapes, a "
                                 "mask that requires grad)" if fused_allowed else
                                 "those backends do not exist here"))


def _check_operands(query, key, value) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{OP}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(f"{OP}: {name} must have at least 2 dims (..., seq, features), got "
                             f"shape {tuple(t.shape)}")
    if not (query.dtype is key.dtype is value.dtype) or query.dtype.kind != "f":
        raise TypeError(f"{OP}: query, key and value must have one real floating dtype, got "
                        f"{query.dtype.name}, {key.dtype.name}, {value.dtype.name}")
    if not (query.device == key.device == value.device):
        raise ValueError(f"{OP}: query, key and value must be on one device, got {query.device}, "
                         f"{key.device}, {value.device}")
    shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"{OP}: query and key must have the same last dim (E); got {shapes}")
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(f"{OP}: key and value must have the same sequence length (dim -2); got "
                         f"{shapes}")


def _batch(query, key, value, enable_gqa: bool):
    """(bs, heads, q, k, v): the batch shape the kernels see and the three operands as views of
    it; heads = (Hk, g) when query heads share key/value heads (GQA), else None."""
    shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
    qb, kb, vb = query.shape[:-2], key.shape[:-2], value.shape[:-2]
    gqa = enable_gqa and min(query.ndim, key.ndim, value.ndim) >= 3 and qb[-1] != kb[-1]
    if enable_gqa and min(query.ndim, key.ndim, value.ndim) >= 3 and kb[-1] != vb[-1]:
        raise ValueError(f"{OP}: with enable_gqa, key and value must have the same number of "
                         f"heads (dim -3); got {shapes}")
    if gqa and (kb[-1] == 0 or qb[-1] % kb[-1]):
        raise ValueError(f"{OP}: with enable_gqa, query's heads (dim -3) must be a multiple of "
                         f"key's; got {shapes}")
    try:
        outer = T.broadcast_shapes(*(s[:-1] if gqa else s for s in (qb, kb, vb)))
    except ValueError:
        hint = "" if enable_gqa else " (pass enable_gqa=True for grouped-query heads)"
        raise ValueError(f"{OP}: the batch dims of {shapes} do not broadcast{hint}") from None
    if not gqa:
        return tuple(outer), None, *(t if t.shape[:-2] == outer else
                                     T.broadcast_to(t, (*outer, *t.shape[-2:]))
                                     for t in (query, key, value))
    hk, g = kb[-1], qb[-1] // kb[-1]
    bs = (*outer, hk, g)
    q = T.broadcast_to(query.reshape(*qb[:-1], hk, g, *query.shape[-2:]), (*bs, *query.shape[-2:]))
    k, v = (T.broadcast_to(T.expand_dims(t, -3), (*bs, *t.shape[-2:])) for t in (key, value))
    return bs, (hk, g), q, k, v


def _mask(attn_mask, is_causal, out_bs, bs, L, S, dtype):
    """attn_mask as an additive mask of dtype viewed as (*bs, L, S), or None."""
    if attn_mask is None:
        return None
    if is_causal:
        raise ValueError(f"{OP}: attn_mask and is_causal=True cannot both be given (got a mask of "
                         f"shape {tuple(attn_mask.shape)})")
    if not isinstance(attn_mask, Tensor):
        raise TypeError(f"{OP}: attn_mask must be a Tensor, got {type(attn_mask).__name__}")
    if attn_mask.dtype.kind not in "bf":
        raise TypeError(f"{OP}: attn_mask must be bool or floating, got {attn_mask.dtype.name}")
    full = (*out_bs, L, S)
    try:
        if attn_mask.ndim > len(full) or T.broadcast_shapes(attn_mask.shape, full) != full:
            raise ValueError
    except ValueError:
        raise ValueError(f"{OP}: attn_mask of shape {tuple(attn_mask.shape)} does not broadcast "
                         f"to the attention weights' shape {full}") from None
    if attn_mask.dtype.kind == "b":
        m = T.where(attn_mask, 0.0, -math.inf).astype(dtype)
    else:
        m = attn_mask.astype(dtype, copy=False)
    m = T.broadcast_to(m, full)
    return m if tuple(bs) == tuple(out_bs) else m.reshape(*bs, L, S)


def _dropout(p, bs, L, S):
    """None, or the draw (thr, dscale, seed, offset) of dropout_p over the weights (*bs, L, S),
    taken from the default generator (it advances as rand(*bs, L, S) would)."""
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{OP}: dropout_p must be in [0, 1], got {p!r}")
    if p == 0.0:
        return None
    gen = _random.default_generator
    n = math.prod(bs) * L * S
    seed, offset = gen.seed, gen._take(n, 4)
    return (math.ceil(p * 2 ** 24), 0.0 if p == 1.0 else 1.0 / (1.0 - p), seed, offset)


def _differentiable(m) -> bool:
    if m is None:
        return False
    ag = getattr(m, "_ag", None)
    return (m.requires_grad and is_grad_enabled()) or (ag is not None and ag.tangent is not None)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """PyTorch's torch.nn.functional.scaled_dot_product_attention (see the module docstring).

    >>> import tensor as T
    >>> q = T.zeros((2, 3, 8)); v = T.ones((2, 5, 4))
    >>> scaled_dot_product_attention(q, q[:, :1].repeat(5, axis=1), v).shape
    (2, 3, 4)
    """
    return sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
         enable_gqa=False, path: str = "auto") -> Tensor:
    """scaled_dot_product_attention with the path chosen: "auto", "fused" (an error where the
    kernels do not apply) or "composed" (public ops only; what the fused path is tested
    against)."""
    _check_operands(query, key, value)
    if attn_mask is not None and hasattr(attn_mask, "_sdpa_operands") \
            and not isinstance(attn_mask, Tensor):   # a CausalBias (nn/attention/bias.py)
        attn_mask, is_causal = attn_mask._sdpa_operands(is_causal, query.device)
    bs, heads, q, k, v = _batch(query, key, value, enable_gqa)
    L, E, S, Ev = *query.shape[-2:], *value.shape[-2:]
    out_bs = bs if heads is None else (*bs[:-2], bs[-2] * bs[-1])
    kernels_take = FA.fused_ok(q, k, v)
    auto_fused = kernels_take and not _differentiable(attn_mask)
    path = _path(path, auto_fused, OP)
    fused = path == "fused" or (path == "auto" and auto_fused)
    if path == "fused" and not kernels_take:
        raise ValueError(f"{OP}: the fused kernels do not take {query.dtype.name} operands of "
                         f"shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    mdt = FA.compute_dtype(query.dtype) if fused else query.dtype
    if isinstance(attn_mask, Tensor) and attn_mask.device != query.device:
        # (the fused kernels would read a host mask through a device pointer)
        raise ValueError(f"{OP}: attn_mask is on {attn_mask.device} but query is on "
                         f"{query.device}; move it to one device")
    mask = _mask(attn_mask, is_causal, out_bs, bs, L, S, mdt)
    # E == 0: every score is an empty sum, 0, whatever the scale (PyTorch: the mask's softmax)
    s = (1.0 / math.sqrt(E) if E else 1.0) if scale is None else float(scale)
    drop = _dropout(dropout_p, bs, L, S)
    causal = bool(is_causal)
    if fused:
        out = FA.attention(q, k, v, mask, causal, s, drop)[0]
    else:
        w = FA.dense_weights(q, k, mask, causal, s)
        if drop is not None:
            w = w * FA.keep_mask(drop, w.shape, w.dtype, w.device)
        out = T.matmul(w, v)
    return out if heads is None else out.reshape(*out_bs, L, Ev)


__all__ = ["scaled_dot_product_attention", "sdpa_kernel", "SDPBackend"]
