"""Gradient clipping, as torch.nn.utils: clip_grad_norm_, clip_grad_value_, get_total_norm and
clip_grads_with_norm_; and the rest of torch.nn.utils from its submodules: rnn (packed and padded
sequences), prune (magnitude / random / structured pruning through masks), parametrize and
parametrizations (weight_norm, spectral_norm, orthogonal), the older
hook-based weight_norm / spectral_norm, fusion (conv/linear + batch norm), stateless
(functional_call), convert_parameters and skip_init.

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
import warnings
from collections.abc import Iterable

import tensor as T
from autograd import no_grad
from tensor import Tensor

from . import (  # as torch.nn.utils.<name>
    convert_parameters,
    fusion,
    parametrizations,
    parametrize,
    prune,
    rnn,
    stateless,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

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
    if norm_type == -math.inf:   # PyTorch's vector_norm: the smallest magnitude
        if not g.numel():
            raise ValueError("clip_grad_norm_: norm_type -inf of an empty gradient (no minimum)")
        return T.min(a)
    if norm_type == 0.0:   # PyTorch's vector_norm: the count of non-zeros, in a's dtype
        return T.sum((a != 0).astype(a.dtype))
    if norm_type == 2.0:
        return T.sqrt(T.sum(a * a))
    if norm_type == 1.0:
        return T.sum(a)
    return T.sum(a ** norm_type) ** (1.0 / norm_type)


def _check_foreach(foreach: bool | None, fn: str) -> None:
    """foreach (PyTorch's choice of its multi-tensor kernels) is accepted for compatibility:
    every gradient here is scaled by one device-side multiply either way."""
    if foreach not in (None, True, False):
        raise TypeError(f"{fn}: foreach must be None or a bool, got {foreach!r}")


def get_total_norm(tensors: _Params, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of the concatenation of all tensors' entries: a 0-d tensor of their promoted
    dtype (float32 for 16-bit floats, which are summed in float32)."""
    _check_foreach(foreach, "get_total_norm")
    total = _total_norm(tensors, norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"get_total_norm: the total norm of order {float(norm_type)} is "
                           "non-finite; set error_if_nonfinite=False to return it anyway")
    return total


def _total_norm(tensors: _Params, norm_type: float) -> Tensor:
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if math.isnan(norm_type):
        raise ValueError(f"clip_grad_norm_: norm_type must be a number or +-inf, got {norm_type}")
    if not tensors:
        return T.zeros((), dtype=T.float32)
    with no_grad():
        norms = [_norm(g, norm_type) for g in tensors]
        dtype, device = T.result_type(*norms), norms[0].device
        # (each norm on its tensor's device; the total on the first one's, as PyTorch's)
        norms = [n if n.device == device else n.to(device) for n in norms]
        return _norm(T.stack([n.astype(dtype, copy=False) for n in norms]), norm_type)


def clip_grads_with_norm_(parameters: _Params, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients of `parameters` in place by min(1, max_norm / (total_norm + 1e-6)),
    total_norm computed beforehand (get_total_norm): clip_grad_norm_'s second half."""
    _check_foreach(foreach, "clip_grads_with_norm_")
    grads = _grads(parameters)
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        total_norm = T.asarray(float(total_norm), device=grads[0].device)
    with no_grad():
        scale = T.clip(float(max_norm) / (total_norm + 1e-6), None, 1.0)
        for g in grads:
            s = scale if scale.device == g.device else scale.to(g.device)
            g.mul_(s.astype(g.dtype, copy=False))


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients of `parameters` in place so that their total norm (as if all were
    one vector) is at most max_norm; returns the total norm before clipping (a 0-d tensor).

    The scale is min(1, max_norm / (total + 1e-6)), PyTorch's formula."""
    _check_foreach(foreach, "clip_grad_norm_")
    if not isinstance(parameters, Tensor):
        parameters = list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type)
    if not grads:
        return total
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {float(norm_type)} of the "
                           "gradients is non-finite; set error_if_nonfinite=False to clip anyway")
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated spelling of clip_grad_norm_ (warns FutureWarning, as PyTorch's)."""
    warnings.warn("nn.utils.clip_grad_norm is deprecated in favor of nn.utils.clip_grad_norm_",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient entry into [-clip_value, clip_value], in place."""
    _check_foreach(foreach, "clip_grad_value_")
    c = float(clip_value)
    if not c >= 0:
        raise ValueError(f"clip_grad_value_: clip_value must be non-negative, got {clip_value}")
    with no_grad():
        for g in _grads(parameters):
            g.clip_(-c, c)


__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "convert_parameters",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "fusion", "get_total_norm", "parameters_to_vector",
           "parametrizations", "parametrize", "prune", "remove_spectral_norm", "remove_weight_norm", "rnn",
           "skip_init", "spectral_norm", "stateless", "vector_to_parameters", "weight_norm"]
