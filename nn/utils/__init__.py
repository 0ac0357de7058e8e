"""Gradient clipping, as torch.nn.utils: clip_grad_norm_ and clip_grad_value_ (and
nn.utils.rnn: packed and padded variable-length sequences).

Both work on the device: the scale is a 0-d tensor multiplied into every gradient, with no
host round trip (except error_if_nonfinite=True, which reads the norm once).

>>> import tensor as T
>>> from nn.module import Parameter
>>> p = Parameter(T.zeros(2, dtype=T.float32)); p.grad = T.tensor([3.0, 4.0], dtype=T.float32)
>>> float(clip_grad_norm_([p], max_norm=1.0)), [round(v, 4) for v in p.grad.tolist()]
(5.0, [0.6, 0.8])
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import tensor as T
from autograd import no_grad
from tensor import Tensor

from . import rnn  # nn.utils.rnn, as torch.nn.utils.rnn

_Params = Tensor | Iterable[Tensor]


def _grads(parameters: _Params) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(g: Tensor, norm_type: float) -> Tensor:
    """The norm_type-norm of all of g's entries as a 0-d tensor (16-bit floats in float32)."""
    if g.dtype.itemsize < 4:
        g = g.astype(T.float32)
    a = T.abs(g)   # (real: a complex gradient's norm is that of its entries' moduli)
    if norm_type == math.inf:
        return T.max(a) if g.numel() else T.zeros((), dtype=a.dtype, device=g.device)
    if norm_type == 2.0:
        return T.sqrt(T.sum(a * a))
    if norm_type == 1.0:
        return T.sum(a)
    return T.sum(a ** norm_type) ** (1.0 / norm_type)


def get_total_norm(tensors: _Params, norm_type: float = 2.0) -> Tensor:
    """The norm of the concatenation of all tensors' entries: a 0-d tensor of their promoted
    dtype (float32 for 16-bit floats, which are summed in float32)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not (norm_type == math.inf or norm_type > 0):
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    if not tensors:
        return T.zeros((), dtype=T.float32)
    with no_grad():
        norms = [_norm(g, norm_type) for g in tensors]
        dtype = T.result_type(*norms)
        return _norm(T.stack([n.astype(dtype, copy=False) for n in norms]), norm_type)


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients of `parameters` in place so that their total norm (as if all were
    one vector) is at most max_norm; returns the total norm before clipping (a 0-d tensor).

    The scale is min(1, max_norm / (total + 1e-6)), PyTorch's formula."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type)
    if not grads:
        return total
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {float(norm_type)} of the "
                           "gradients is non-finite; set error_if_nonfinite=False to clip anyway")
    with no_grad():
        scale = T.clip(float(max_norm) / (total + 1e-6), None, 1.0)
        for g in grads:
            g.mul_(scale.astype(g.dtype, copy=False))
    return total


def clip_grad_value_(parameters: _Params, clip_value: float) -> None:
    """Clamp every gradient entry into [-clip_value, clip_value], in place."""
    c = float(clip_value)
    if not c >= 0:
        raise ValueError(f"clip_grad_value_: clip_value must be non-negative, got {clip_value}")
    with no_grad():
        for g in _grads(parameters):
            g.clip_(-c, c)


__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "rnn"]
