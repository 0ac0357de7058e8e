"""Causal attention biases, as torch.nn.attention.bias: `causal_upper_left(L, S)` (query i sees
keys j <= i: is_causal=True's mask) and `causal_lower_right(L, S)` (query i sees keys
j <= i + S - L: the last query sees every key, as when new queries follow S - L cached keys).
Pass one as scaled_dot_product_attention's attn_mask: upper-left (or L == S) runs as
is_causal=True, lower-right as its bool mask. Query rows that see no key (lower-right with
L > S) give 0, as every fully masked row here (PyTorch warns that its kernels may give NaN).

>>> import tensor as T
>>> from nn.sdpa import scaled_dot_product_attention
>>> q = T.ones((1, 2, 4)); v = T.arange(12.0).reshape(1, 3, 4)
>>> scaled_dot_product_attention(q, T.ones((1, 3, 4)), v,
...                              attn_mask=causal_lower_right(2, 3)).tolist()
[[[2.0, 3.0, 4.0, 5.0], [4.0, 5.0, 6.0, 7.0]]]
"""
from __future__ import annotations

import warnings
from enum import IntEnum

import tensor as T
from tensor._tensor import Tensor

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(IntEnum):
    """Which corner the causal triangle is aligned to (PyTorch's values)."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of (seq_len_q, seq_len_kv) that scaled_dot_product_attention reads without
    materialising it where is_causal does the same (upper-left, or a square one)."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise TypeError(f"CausalBias: variant must be a CausalVariant, got {variant!r}")
        for name, n in (("seq_len_q", seq_len_q), ("seq_len_kv", seq_len_kv)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"CausalBias: {name} must be a non-negative int, got {n!r}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant is CausalVariant.LOWER_RIGHT:
            warnings.warn(f"CausalBias: a lower-right causal bias with seq_len_q ({seq_len_q}) > "
                          f"seq_len_kv ({seq_len_kv}) leaves the first {seq_len_q - seq_len_kv} "
                          "query rows no key (they give 0 here; NaN in some of PyTorch's "
                          "kernels)", UserWarning, stacklevel=3)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.seq_len_q, self.seq_len_kv)

    def _materialize(self, device=None) -> Tensor:
        """The (seq_len_q, seq_len_kv) bool mask, True where a query may attend."""
        off = 0 if self.variant is CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        ones = T.ones(self.shape, dtype=T.bool_, device=device)
        return T.tril(ones, off)

    def _sdpa_operands(self, is_causal: bool, device) -> tuple[Tensor | None, bool]:
        """(attn_mask, is_causal) that scaled_dot_product_attention runs this bias as."""
        if is_causal:
            raise ValueError("scaled_dot_product_attention: a CausalBias attn_mask should not be "
                             "used with is_causal=True")
        if self.variant is CausalVariant.UPPER_LEFT or self.seq_len_q == self.seq_len_kv:
            return None, True
        return self._materialize(device), False

    def __repr__(self) -> str:
        return (f"CausalBias({self.variant.name}, seq_len_q={self.seq_len_q}, "
                f"seq_len_kv={self.seq_len_kv})")


def _size(size, op: str) -> tuple[int, int]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if len(size) != 2:
        raise ValueError(f"{op}: takes the two sizes (seq_len_q, seq_len_kv), got {size!r}")
    return size


def causal_upper_left(*size) -> CausalBias:
    """The causal bias aligned to the upper-left corner (is_causal=True's): causal_upper_left(L, S).

    >>> causal_upper_left(2, 3)._materialize().tolist()
    [[True, False, False], [True, True, False]]
    """
    return CausalBias(CausalVariant.UPPER_LEFT, *_size(size, "causal_upper_left"))


def causal_lower_right(*size) -> CausalBias:
    """The causal bias aligned to the lower-right corner: causal_lower_right(L, S).

    >>> causal_lower_right(2, 3)._materialize().tolist()
    [[True, True, False], [True, True, True]]
    """
    return CausalBias(CausalVariant.LOWER_RIGHT, *_size(size, "causal_lower_right"))
