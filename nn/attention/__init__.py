"""nn.attention, as torch.nn.attention: `sdpa_kernel` / `SDPBackend` to choose
scaled_dot_product_attention's path, and `flex_attention` (nn.attention.flex_attention) for
attention with user-written score and mask functions, `bias` (nn.attention.bias:
causal_upper_left / causal_lower_right, causal masks scaled_dot_product_attention takes as
attn_mask); MultiheadAttention and
multi_head_attention_forward (nn/multihead_attention.py) are here too, where this package's
module used to hold them.

>>> import tensor as T
>>> from nn.attention import SDPBackend, sdpa_kernel
>>> from nn.sdpa import scaled_dot_product_attention
>>> q = T.ones((1, 2, 4))
>>> with sdpa_kernel([SDPBackend.MATH]):    # the composition of public ops, not the fused kernels
...     scaled_dot_product_attention(q, q, q).shape
(1, 2, 4)
"""
from __future__ import annotations

from ..multihead_attention import MultiheadAttention, multi_head_attention_forward
from ..sdpa import SDPBackend, scaled_dot_product_attention, sdpa_kernel
from . import bias, flex_attention  # noqa: F401  (nn.attention.bias / .flex_attention, as PyTorch's)

__all__ = ["SDPBackend", "sdpa_kernel", "MultiheadAttention", "multi_head_attention_forward",
           "scaled_dot_product_attention"]
