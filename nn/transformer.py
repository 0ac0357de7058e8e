"""Transformer modules as torch.nn's: TransformerEncoderLayer, TransformerDecoderLayer,
TransformerEncoder, TransformerDecoder and Transformer, with PyTorch's constructor arguments,
forward signatures and parameter names (so a state_dict copies across by name).

Each layer is self-attention (and, in the decoder, attention over the encoder's memory) and a
two-layer feed-forward block, each inside a residual connection with a LayerNorm after it
(post-norm, the default) or before it (norm_first=True). Everything is composed from
MultiheadAttention, Linear, LayerNorm and Dropout, so autograd differentiates it. PyTorch's
fused inference fast path and nested tensors are not reproduced: the results are the same,
except at padded positions (src_key_padding_mask True) in eval mode under no_grad, where
PyTorch's nested tensor path returns 0 and these layers the values computed there.

>>> import tensor as T
>>> _ = T.manual_seed(0)
>>> model = Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
...                     dim_feedforward=16, batch_first=True).eval()
>>> src, tgt = T.ones((2, 5, 8), dtype=T.float32), T.ones((2, 3, 8), dtype=T.float32)
>>> model(src, tgt, tgt_mask=Transformer.generate_square_subsequent_mask(3)).shape
(2, 3, 8)
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable

import tensor as T
from tensor._tensor import Tensor

from . import _functional as F
from . import init
from .containers import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .multihead_attention import MultiheadAttention
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


# ---------------------------------------------------------------- helpers

def _activation(activation, op: str) -> Callable[[Tensor], Tensor]:
    """'relu' / 'gelu' as nn.functional's relu / gelu; a callable (a function or a Module) as
    it is."""
    if isinstance(activation, str):
        fn = {"relu": F.relu, "gelu": F.gelu}.get(activation)
        if fn is None:
            raise ValueError(f"{op}: activation should be 'relu', 'gelu' or a callable, got "
                             f"{activation!r}")
        return fn
    if not callable(activation):
        raise TypeError(f"{op}: activation should be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__}")
    return activation


def _check_heads(d_model: int, nhead: int, op: str) -> None:
    if d_model <= 0 or nhead <= 0 or d_model % nhead:
        raise ValueError(f"{op}: d_model ({d_model}) must be positive and divisible by nhead "
                         f"({nhead})")


def _check_input(x, name: str, seq: str, d_model: int, batch_first: bool, op: str) -> None:
    """x (seq, N, E), (N, seq, E) where batch_first, or unbatched (seq, E), with E == d_model."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected {name} to be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3) or x.shape[-1] != d_model:
        lay = f"(N, {seq}, {d_model})" if batch_first else f"({seq}, N, {d_model})"
        raise ValueError(f"{op}: expected {name} of shape {lay} or ({seq}, {d_model}), got "
                         f"{tuple(x.shape)}")


def _check_pair(a, b, names: tuple[str, str], batch_first: bool, op: str) -> None:
    """Two inputs that go through one model: both batched (3-D) or both unbatched, with the
    same batch size."""
    if a.ndim != b.ndim:
        raise ValueError(f"{op}: {names[0]} {tuple(a.shape)} and {names[1]} {tuple(b.shape)} "
                         "must both be batched (3-D) or both unbatched (2-D)")
    ax = 0 if batch_first else 1
    if a.ndim == 3 and a.shape[ax] != b.shape[ax]:
        raise ValueError(f"{op}: the batch sizes of {names[0]} ({a.shape[ax]}) and {names[1]} "
                         f"({b.shape[ax]}) must be equal, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")


def _seq_len(x: Tensor, batch_first: bool) -> int:
    """The sequence length of (S, N, E), (N, S, E) where batch_first, or unbatched (S, E)."""
    return x.shape[1] if batch_first and x.ndim == 3 else x.shape[0]


def _is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int) -> bool:
    """PyTorch's rule: an explicit is_causal wins; with is_causal=None, a mask equal to
    generate_square_subsequent_mask(size) (bool True above the diagonal, or float -inf there
    and 0 elsewhere) is detected as causal. The check reads the mask on the host (on a GPU, a
    synchronization, as PyTorch's): pass is_causal to skip it; the hint only picks the
    attention kernel's path, the result is the same."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    if tuple(mask.shape) != (size, size):
        return False
    causal = T.triu(T.ones((size, size), dtype=T.bool_, device=mask.device), 1)
    if mask.dtype.kind == "b":
        return bool(T.all(mask == causal))
    if mask.dtype.kind != "f":
        return False      # (MultiheadAttention says what is wrong with such a mask)
    return bool(T.all(mask == T.where(causal, -math.inf, 0.0).astype(mask.dtype)))


def _stack_causal(stack, x, name: str, mask, is_causal) -> bool:
    """A stack's (TransformerEncoder / Decoder) check of its input x and the causal hint its
    layers get: is_causal, or whether mask is the causal mask over x's sequence (the first
    layer's self_attn says the layout; False for layers without one)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{type(stack).__name__}: expected {name} to be a Tensor, got "
                        f"{type(x).__name__}")
    attn = getattr(stack.layers[0], "self_attn", None) if len(stack.layers) else None
    return _is_causal_mask(mask, is_causal, _seq_len(x, bool(getattr(attn, "batch_first", False))))


def _clones(layer: Module, num_layers: int, op: str) -> ModuleList:
    if not isinstance(layer, Module):
        raise TypeError(f"{op}: expected a Module as the layer to repeat, got "
                        f"{type(layer).__name__}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 0:
        raise ValueError(f"{op}: num_layers must be a non-negative int, got {num_layers!r}")
    return ModuleList(copy.deepcopy(layer) for _ in range(num_layers))


class _LayerBase(Module):
    """What the encoder and decoder layers share: their submodules, in PyTorch's order and
    names, and the self-attention and feed-forward blocks."""

    _decoder = False   # the decoder layer's attention over the memory (multihead_attn)

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        decoder = self._decoder
        op = type(self).__name__
        _check_heads(d_model, nhead, op)
        if dim_feedforward <= 0:
            raise ValueError(f"{op}: dim_feedforward must be positive, got {dim_feedforward}")
        act = _activation(activation, op)
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        if decoder:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        n_norms = 3 if decoder else 2
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, n_norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = act
        self.d_model = d_model

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal, out_dropout):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return out_dropout(x)

    def _ff_block(self, x, out_dropout):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return out_dropout(x)


# ---------------------------------------------------------------- layers

class TransformerEncoderLayer(_LayerBase):
    """Self-attention and a feed-forward block, as torch.nn.TransformerEncoderLayer.

    post-norm (default):  x = norm1(x + sa(x));  x = norm2(x + ff(x))
    norm_first=True:      x = x + sa(norm1(x));  x = x + ff(norm2(x))
    with ff(x) = linear2(dropout(activation(linear1(x)))); sa and ff each end in a dropout.

    forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False): src (S, N, E),
    (N, S, E) where batch_first, or unbatched (S, E); src_mask (S, S) or (N*nhead, S, S) and
    src_key_padding_mask (N, S) as MultiheadAttention's (bool True = may not attend, or float
    added to the scores); is_causal says src_mask is the causal mask (or, without a mask,
    asks for one).

    >>> import tensor as T
    >>> layer = TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(T.ones((5, 3, 8), dtype=T.float32)).shape
    (5, 3, 8)
    """

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        _check_input(src, "src", "S", self.d_model, self.self_attn.batch_first,
                     type(self).__name__)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal,
                                   self.dropout1)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal,
                                          self.dropout1))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_LayerBase):
    """Self-attention, attention over the encoder's memory and a feed-forward block, as
    torch.nn.TransformerDecoderLayer.

    post-norm (default):  x = norm1(x + sa(x));  x = norm2(x + mha(x, memory));
                          x = norm3(x + ff(x))
    norm_first=True:      x = x + sa(norm1(x));  x = x + mha(norm2(x), memory);
                          x = x + ff(norm3(x))

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False): tgt (T, N, E)
    and memory (S, N, E) (or (N, T, E), (N, S, E) where batch_first; or unbatched); tgt_mask
    (T, T), memory_mask (T, S), tgt_key_padding_mask (N, T), memory_key_padding_mask (N, S).

    >>> import tensor as T
    >>> layer = TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(T.ones((3, 4, 8), dtype=T.float32), T.ones((3, 6, 8), dtype=T.float32)).shape
    (3, 4, 8)
    """

    _decoder = True

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(x)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        op, bf = type(self).__name__, self.self_attn.batch_first
        _check_input(tgt, "tgt", "T", self.d_model, bf, op)
        _check_input(memory, "memory", "S", self.d_model, bf, op)
        _check_pair(tgt, memory, ("tgt", "memory"), bf, op)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal, self.dropout1)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal,
                                          self.dropout1))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x, self.dropout3))


# ---------------------------------------------------------------- stacks

class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer applied in turn (`layers`, a ModuleList), then
    norm if given, as torch.nn.TransformerEncoder. enable_nested_tensor is accepted and ignored
    (padding is masked, never packed); mask_check is kept for PyTorch's signature.

    forward(src, mask=None, src_key_padding_mask=None, is_causal=None): is_causal=None detects
    a causal mask (one equal to generate_square_subsequent_mask(S), or its bool form).

    >>> import tensor as T
    >>> enc = TransformerEncoder(TransformerEncoderLayer(8, 2, 16), num_layers=2)
    >>> len(enc.layers), enc(T.ones((5, 3, 8), dtype=T.float32)).shape
    (2, (5, 3, 8))
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers, type(self).__name__)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.use_nested_tensor = enable_nested_tensor, False
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        is_causal = _stack_causal(self, src, "src", mask, is_causal)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=is_causal)
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer applied in turn (`layers`, a ModuleList), each
    attending over the same memory, then norm if given, as torch.nn.TransformerDecoder.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
    tgt_is_causal=None detects a causal tgt_mask.

    >>> import tensor as T
    >>> dec = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), num_layers=2)
    >>> dec(T.ones((4, 3, 8), dtype=T.float32), T.ones((6, 3, 8), dtype=T.float32)).shape
    (4, 3, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers, type(self).__name__)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        tgt_is_causal = _stack_causal(self, tgt, "tgt", tgt_mask, tgt_is_causal)
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


# ---------------------------------------------------------------- the model

class Transformer(Module):
    """An encoder-decoder Transformer as torch.nn.Transformer: `encoder` (num_encoder_layers
    TransformerEncoderLayers then a LayerNorm) and `decoder` (num_decoder_layers
    TransformerDecoderLayers then a LayerNorm), or custom_encoder / custom_decoder. Every
    parameter with more than one dimension is re-initialised with xavier_uniform_, as PyTorch.

    forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False): src (S, N, E) and
    tgt (T, N, E) (or (N, S, E), (N, T, E) where batch_first; or unbatched (S, E), (T, E))
    -> (T, N, E) (or (N, T, E), or (T, E)). The encoder's output is the decoder's memory.

    >>> import tensor as T
    >>> Transformer.generate_square_subsequent_mask(3).tolist()
    [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        op = type(self).__name__
        _check_heads(d_model, nhead, op)
        _activation(activation, op)      # (an error names this class, not the layer)
        kw = {"device": device, "dtype": dtype}
        layer_kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                        layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                        norm_first=norm_first, bias=bias, **kw)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer_kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer_kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        op, e = type(self).__name__, self.d_model
        for name, x in (("src", src), ("tgt", tgt)):
            if not isinstance(x, Tensor):
                raise TypeError(f"{op}: expected {name} to be a Tensor, got {type(x).__name__}")
        if src.shape[-1:] != (e,) or tgt.shape[-1:] != (e,):
            raise ValueError(f"{op}: the feature sizes of src {tuple(src.shape)} and tgt "
                             f"{tuple(tgt.shape)} must both equal d_model ({e})")
        _check_pair(src, tgt, ("src", "tgt"), self.batch_first, op)
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The (sz, sz) causal mask: -inf above the diagonal (position i may not attend to
        j > i), 0.0 elsewhere; float32 unless dtype says otherwise, on device (the default
        device when None).

        >>> Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        if isinstance(sz, bool) or not isinstance(sz, int) or sz < 0:
            raise ValueError(f"generate_square_subsequent_mask: sz must be a non-negative int, "
                             f"got {sz!r}")
        d = T.float32 if dtype is None else dtype
        return T.triu(T.full((sz, sz), -math.inf, dtype=d, device=device), 1)
