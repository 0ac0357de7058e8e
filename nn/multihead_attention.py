"""Multi-head attention: multi_head_attention_forward and the MultiheadAttention module, with
PyTorch's parameterization (in_proj_weight (3E, E) or q/k/v_proj_weight when kdim/vdim differ,
in_proj_bias (3E,), out_proj a Linear), masks and returned weights.

softmax((q W_q)(k W_k)^T / sqrt(head_dim) + masks) (v W_v), per head, then out_proj. With
need_weights=False (as PyTorch) the heads run through scaled_dot_product_attention's fused
kernels, which never store the (N*H, L, S) weights; with need_weights=True they are composed
from public ops (matmul, softmax, dropout) and returned. Autograd differentiates both.

>>> import tensor as T
>>> mha = MultiheadAttention(8, 2, batch_first=True)
>>> x = T.ones((3, 5, 8), dtype=T.float32)
>>> out, w = mha(x, x, x)
>>> out.shape, w.shape
((3, 5, 8), (3, 5, 5))
"""
from __future__ import annotations

import math
import warnings

import tensor as T
from tensor._tensor import Tensor

from . import _functional as F
from . import init
from .linear import Linear
from .module import Module, Parameter
from .sdpa import scaled_dot_product_attention


def _float_mask(mask: Tensor, dtype, op: str, what: str) -> Tensor:
    """A bool mask (True = may not attend) as 0 / -inf; a float mask as is, in dtype."""
    if mask.dtype.kind == "b":
        return T.where(mask, -math.inf, 0.0).astype(dtype)
    if mask.dtype.kind != "f":
        raise TypeError(f"{op}: {what} must be bool or floating, got {mask.dtype.name}")
    return mask.astype(dtype, copy=False)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """One more key position (bias_k or a zero key), which every query may attend."""
    if mask is None:
        return None
    return T.pad(mask, ((0, 0),) * (mask.ndim - 1) + ((0, 1),))


def _check_shapes(query, key, value, e, op, bf=False):
    """(L, N, E) query and (S, N, E_k/E_v) key, value; (N, L, E), (N, S, E_k) where bf."""
    lay = "(N, {0}, {1})" if bf else "({0}, N, {1})"
    if query.ndim not in (2, 3) or query.shape[-1] != e:
        raise ValueError(f"{op}: expected query of shape {lay.format('L', e)} or (L, {e}), got "
                         f"{tuple(query.shape)}")
    nax, sax = (0, 1) if bf and query.ndim == 3 else (1, 0)
    for name, t in (("key", key), ("value", value)):
        if t.ndim != query.ndim or (t.ndim == 3 and t.shape[nax] != query.shape[nax]):
            kind = lay.format("S", f"E_{name[0]}") if query.ndim == 3 else f"(S, E_{name[0]})"
            raise ValueError(f"{op}: expected {name} of shape {kind} to match query "
                             f"{tuple(query.shape)}, got {tuple(t.shape)}")
    if key.shape[sax] != value.shape[sax]:
        raise ValueError(f"{op}: key {tuple(key.shape)} and value {tuple(value.shape)} differ in "
                         "sequence length")


def _attn_mask(attn_mask, lq, s, n, h, dtype, is_causal, op, device=None):
    """attn_mask as a float (L, S) or (N, H, L, S) tensor, or None."""
    if attn_mask is None:
        if not is_causal:
            return None
        attn_mask = T.triu(T.ones((lq, s), dtype=T.bool_, device=device), 1)
    m = _float_mask(attn_mask, dtype, op, "attn_mask")
    if m.ndim == 2 and tuple(m.shape) == (lq, s):
        return m
    if m.ndim == 3 and tuple(m.shape) == (n * h, lq, s):
        return m.reshape(n, h, lq, s)
    raise ValueError(f"{op}: attn_mask must have shape ({lq}, {s}) or ({n * h}, {lq}, {s}), got "
                     f"{tuple(attn_mask.shape)}")


def _heads(t, h, bf):
    """(L, N, E) (or (N, L, E) where bf) -> (N, H, L, E // H), a view."""
    t = t.reshape(t.shape[0], t.shape[1], h, t.shape[2] // h)   # (no -1: N or L may be 0)
    return T.permute(t, (0, 2, 1, 3) if bf else (1, 2, 0, 3))


def _project(query, key, value, e, h, bf, in_proj_weight, in_proj_bias, separate, qw, kw, vw):
    """q, k, v projected and split into heads: (N, H, L or S, E // H) each."""
    if not separate and query is key and key is value:   # self-attention: one GEMM, three views
        qkv = F.linear(query, in_proj_weight, in_proj_bias)
        qkv = qkv.reshape(qkv.shape[0], qkv.shape[1], 3, h, e // h)
        return T.unbind(T.permute(qkv, (2, 0, 3, 1, 4) if bf else (2, 1, 3, 0, 4)), 0)
    if separate:
        ws = (qw, kw, vw)
    else:
        ws = (in_proj_weight[:e], in_proj_weight[e:2 * e], in_proj_weight[2 * e:])
    bs = (None,) * 3 if in_proj_bias is None else \
        (in_proj_bias[:e], in_proj_bias[e:2 * e], in_proj_bias[2 * e:])
    return tuple(_heads(F.linear(x, w, b), h, bf) for x, w, b in zip((query, key, value), ws, bs))


def _out_proj(o, e, weight, bias, batched, bf):
    """(N, H, L, hd) head outputs -> (L, N, E) (or (N, L, E) where bf, or (L, E)) through
    out_proj."""
    o = T.permute(o, (0, 2, 1, 3) if bf else (2, 0, 1, 3))
    out = F.linear(o.reshape(o.shape[0], o.shape[1], e), weight, bias)
    return out if batched else out[:, 0]


def _warn_mixed_masks(key_padding_mask, attn_mask) -> None:
    """PyTorch's deprecation warning for a key_padding_mask and an attn_mask of two dtypes (the
    result is the same: both become additive masks)."""
    if key_padding_mask is None or attn_mask is None:
        return
    if key_padding_mask.dtype is not attn_mask.dtype:
        warnings.warn(f"Support for mismatched key_padding_mask ({key_padding_mask.dtype.name}) and "
                      f"attn_mask ({attn_mask.dtype.name}) is deprecated. Use same type for both "
                      "instead.", UserWarning, stacklevel=3)


def _static_kv(k, v, static_k, static_v, n, h, hd, dtype, has_bias_kv, op):
    """k, v (N, H, S, hd) with static_k / static_v ((N*H, S', hd), PyTorch's layout: already
    projected and split into heads) put in their place, and the keys' length."""
    if has_bias_kv:
        raise ValueError(f"{op}: bias_k / bias_v cannot be added to a static key / value")
    out = []
    for name, t, st in (("static_k", k, static_k), ("static_v", v, static_v)):
        if st is None:
            out.append(t)
            continue
        if not isinstance(st, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(st).__name__}")
        if st.ndim != 3 or st.shape[0] != n * h or st.shape[2] != hd:
            raise ValueError(f"{op}: {name} must have shape (N*num_heads, S, head_dim) = "
                             f"({n * h}, S, {hd}), got {tuple(st.shape)}")
        if st.dtype is not dtype:
            raise TypeError(f"{op}: {name} is {st.dtype.name} but query is {dtype.name}")
        out.append(st.reshape(n, h, st.shape[1], hd))
    if out[0].shape[2] != out[1].shape[2]:
        raise ValueError(f"{op}: keys and values differ in length ({out[0].shape[2]} and "
                         f"{out[1].shape[2]}) with static_k / static_v")
    return out[0], out[1], out[0].shape[2]


def _append_key(t, extra):
    """t (N, H, S, hd) with one more key position, extra (N, H, 1, hd), at the end."""
    return T.concatenate([t, extra], axis=2)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False, _op: str = "multi_head_attention_forward",
        _batch_first: bool = False):
    """PyTorch's functional multi-head attention over (L, N, E) query and (S, N, E_k/E_v) key
    and value (or unbatched (L, E), (S, E)). Masks: attn_mask (L, S) or (N*H, L, S), bool
    (True = may not attend) or float (added to the scores); key_padding_mask (N, S) likewise.
    is_causal (as PyTorch's) says that attn_mask is the causal mask: with need_weights=False
    and no key_padding_mask the kernels then skip the masked keys without reading a mask.
    static_k / static_v: keys / values already projected and split into heads, (N*H, S, E // H)
    as PyTorch's, used in place of key's / value's projections (masks then fit their S).
    Returns (output (L, N, E), weights (N, L, S) averaged over heads or (N, H, L, S), or None).
    (_batch_first: batched inputs and output are (N, L, E), as MultiheadAttention's.)

    The heads run as (N, H, L, E // H) views of the projections (one GEMM for q, k and v when
    query, key and value are one tensor): no copies until the output projection.

    >>> import tensor as T
    >>> x, w = T.ones((2, 1, 4)), T.eye(4)
    >>> out, a = multi_head_attention_forward(x, x, x, 4, 2, T.concatenate([w, w, w]), None,
    ...                                       None, None, False, 0.0, w, None)
    >>> out.shape, a.tolist()
    ((2, 1, 4), [[[0.5, 0.5], [0.5, 0.5]]])
    """
    op = _op
    e, h = embed_dim_to_check, num_heads
    _check_shapes(query, key, value, e, op, _batch_first)
    if h < 1 or e % h:
        raise ValueError(f"{op}: embed_dim {e} must be divisible by num_heads {h}")
    for what, t in (("query", query), ("key", key), ("value", value)):
        if t.dtype.kind != "f":
            raise TypeError(f"{op}: expected a floating-point {what}, got {t.dtype.name}")
    if not query.dtype is key.dtype is value.dtype:   # (PyTorch raises too, in its projections)
        raise TypeError(f"{op}: query, key and value must have one dtype, got {query.dtype.name}, "
                        f"{key.dtype.name}, {value.dtype.name}")
    _warn_mixed_masks(key_padding_mask, attn_mask)
    batched = query.ndim == 3
    bf = _batch_first and batched
    if not batched:
        sk = tuple(getattr(static_k, "shape", ()))   # (a bad static_k is named further on)
        ks = sk[1] if len(sk) == 3 else key.shape[0]
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (ks,):
            raise ValueError(f"{op}: key_padding_mask must have shape ({ks},) for unbatched "
                             f"input, got {tuple(key_padding_mask.shape)}")
        same = query is key, key is value
        query, key, value = (T.expand_dims(t, 1) for t in (query, key, value))
        key = query if same[0] else key      # self-attention stays recognisable
        value = key if same[1] else value
        if key_padding_mask is not None:
            key_padding_mask = T.expand_dims(key_padding_mask, 0)
    n, lq = (query.shape[0], query.shape[1]) if bf else (query.shape[1], query.shape[0])
    s, hd, dtype = key.shape[1 if bf else 0], e // h, query.dtype
    q, k, v = _project(query, key, value, e, h, bf, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    if static_k is not None or static_v is not None:
        k, v, s = _static_kv(k, v, static_k, static_v, n, h, hd, dtype, bias_k is not None, op)
    # as PyTorch: is_causal goes to the kernels as is_causal (attn_mask, if given, taken for the
    # causal mask and not read; keys that bias_k or add_zero_attn append come after every query)
    causal = not need_weights and is_causal and key_padding_mask is None
    mask = None if causal else _attn_mask(attn_mask, lq, s, n, h, dtype, is_causal, op,
                                          query.device)
    kpm = None
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (n, s):
            raise ValueError(f"{op}: key_padding_mask must have shape ({n}, {s}), got "
                             f"{tuple(key_padding_mask.shape)}")
        kpm = _float_mask(key_padding_mask, dtype, op, "key_padding_mask")
    if bias_k is not None and bias_v is not None:
        k = _append_key(k, T.broadcast_to(bias_k.reshape(1, h, 1, hd), (n, h, 1, hd)))
        v = _append_key(v, T.broadcast_to(bias_v.reshape(1, h, 1, hd), (n, h, 1, hd)))
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    elif bias_k is not None or bias_v is not None:
        raise ValueError(f"{op}: bias_k and bias_v must be given together")
    if add_zero_attn:
        k = _append_key(k, T.zeros((n, h, 1, hd), dtype=k.dtype, device=k.device))
        v = _append_key(v, T.zeros((n, h, 1, hd), dtype=v.dtype, device=v.device))
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    if kpm is not None:  # (N, S) -> (N, 1, 1, S): the same keys hidden from every head and query
        kpm = kpm.reshape(n, 1, 1, kpm.shape[-1])
        mask = kpm if mask is None else mask + kpm
    if not need_weights:   # as PyTorch: the fused kernels, no (N, H, L, S) weights stored
        o = scaled_dot_product_attention(q, k, v, mask, dropout_p if training else 0.0, causal)
        return _out_proj(o, e, out_proj_weight, out_proj_bias, batched, bf), None
    scores = T.matmul(q * (1.0 / math.sqrt(hd)), T.matrix_transpose(k))
    if mask is not None:
        scores = scores + mask
    weights = F.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, training)
    out = _out_proj(T.matmul(weights, v), e, out_proj_weight, out_proj_bias, batched, bf)
    if average_attn_weights:
        weights = T.mean(weights, axis=1)
    return out, (weights if batched else weights[0])


class MultiheadAttention(Module):
    """Multi-head attention as torch.nn.MultiheadAttention: in_proj_weight (3E, E) (or
    q_proj_weight, k_proj_weight (E, kdim), v_proj_weight (E, vdim) when kdim/vdim differ from
    E), in_proj_bias (3E,), out_proj Linear(E, E); xavier_uniform_ projections, zero biases.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None); inputs
    (L, N, E) or with batch_first=True (N, L, E), or unbatched (L, E).

    >>> import tensor as T
    >>> mha = MultiheadAttention(4, 2)
    >>> q = T.ones((3, 2, 4), dtype=T.float32)
    >>> out, w = mha(q, q, q, need_weights=False)
    >>> out.shape, w
    ((3, 2, 4), None)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be positive and "
                             f"divisible by num_heads ({num_heads})")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim, self.batch_first, self.add_zero_attn = (embed_dim // num_heads,
                                                               batch_first, add_zero_attn)
        d = T.float32 if dtype is None else dtype

        def param(*shape):
            return Parameter(T.empty(shape, dtype=d, device=device))
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                     "in_proj_bias", "bias_k", "bias_v"):
            self.register_parameter(name, None)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=d)
        if add_bias_kv:
            self.bias_k, self.bias_v = param(1, 1, embed_dim), param(1, 1, embed_dim)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight,
                  self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        for b in (self.in_proj_bias, self.out_proj.bias):
            if b is not None:
                init.zeros_(b)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False):
        name = type(self).__name__
        e = self.embed_dim
        if query.ndim not in (2, 3) or query.shape[-1] != e:
            lay = "(N, L, {0})" if self.batch_first else "(L, N, {0})"
            raise ValueError(f"{name}: expected query of shape {lay.format(e)} or (L, {e}), got "
                             f"{tuple(query.shape)}")
        if self.batch_first and query.ndim == 3 and (key.ndim != 3 or value.ndim != 3):
            raise ValueError(f"{name}: expected key and value of shape (N, S, E) as query "
                             f"{tuple(query.shape)}, got {tuple(key.shape)} and "
                             f"{tuple(value.shape)}")
        for what, t, dim in (("key", key, self.kdim), ("value", value, self.vdim)):
            if t.ndim == 0 or t.shape[-1] != dim:
                raise ValueError(f"{name}: expected {what} with last dim {dim}, got shape "
                                 f"{tuple(t.shape)}")
        out, w = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, self.training, key_padding_mask,
            need_weights, attn_mask, not self._qkv_same_embed_dim, self.q_proj_weight,
            self.k_proj_weight, self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal, _op=name, _batch_first=self.batch_first)
        return out, w

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")
