"""Fold an eval-mode batch norm into the convolution or linear layer before it, as
torch.nn.utils.fusion: one layer computing what conv -> bn (or linear -> bn) computes.

With s = bn.weight / sqrt(running_var + eps), the fused weight is w * s (per output channel)
and the fused bias (b - running_mean) * s + bn.bias.

>>> import tensor as T
>>> from nn.linear import Linear
>>> from nn.normalization import BatchNorm1d
>>> lin, bn = Linear(3, 2).eval(), BatchNorm1d(2).eval()
>>> _ = bn.running_mean.copy_(T.tensor([1.0, -1.0], dtype=T.float32))
>>> x = T.ones((4, 3), dtype=T.float32)
>>> float(T.max(T.abs(fuse_linear_bn_eval(lin, bn)(x) - bn(lin(x))))) < 1e-5
True
"""
from __future__ import annotations

import copy

import tensor as T
from tensor import Tensor

from ..module import Module, Parameter


def _check_eval(a: Module, bn: Module, fn: str) -> None:
    if a.training or bn.training:
        raise ValueError(f"{fn}: fusion is only for eval mode (call .eval() on both modules)")
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError(f"{fn}: the batch norm tracks no running statistics "
                         "(track_running_stats=False)")


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Tensor, Tensor]:
    """(fused weight, fused bias) as Parameters; transpose=True for a transposed convolution
    (output channels on dim 1 of its weight, per group: grouped ones are fused too, where
    PyTorch's raises)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    conv_b = T.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = T.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = T.zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = 1.0 / T.sqrt(bn_rv + bn_eps)
    scale = bn_w * rsqrt
    kernel = (1,) * (conv_w.ndim - 2)
    if not transpose:
        w = conv_w * scale.reshape((-1, 1) + kernel)
    else:   # weight (in, out / groups, *k): input block g feeds output channels g * per + j
        per, out = conv_w.shape[1], scale.shape[0]
        groups = out // per if per and out % per == 0 else 0
        if groups < 1 or conv_w.shape[0] % groups:
            raise ValueError(f"fuse_conv_bn_weights: a transposed convolution weight of shape "
                             f"{conv_w.shape} does not match a batch norm of {out} channels")
        blocks = conv_w.reshape((groups, conv_w.shape[0] // groups) + conv_w.shape[1:])
        w = (blocks * scale.reshape((groups, 1, per) + kernel)).reshape(conv_w.shape)
    w = w.astype(w_dtype, copy=False)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).astype(b_dtype, copy=False)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of conv (eval mode) whose output equals bn(conv(x)) with bn in eval mode."""
    _check_eval(conv, bn, "fuse_conv_bn_eval")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor | None,
                           bn_b: Tensor | None) -> tuple[Tensor, Tensor]:
    """(fused weight, fused bias) as Parameters for linear -> bn."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    linear_b = T.zeros_like(bn_rm) if linear_b is None else linear_b
    bn_w = T.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = T.zeros_like(bn_rm) if bn_b is None else bn_b
    scale = bn_w / T.sqrt(bn_rv + bn_eps)
    w = linear_w * scale[:, None].astype(w_dtype, copy=False)
    b = ((linear_b - bn_rm) * scale + bn_b).astype(b_dtype, copy=False)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of linear (eval mode) whose output equals bn(linear(x)) with bn in eval mode;
    bn.num_features must be linear.out_features (or 1)."""
    _check_eval(linear, bn, "fuse_linear_bn_eval")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise ValueError("fuse_linear_bn_eval: linear.out_features must equal bn.num_features "
                         f"(or bn.num_features == 1), got {linear.out_features} and "
                         f"{bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]
