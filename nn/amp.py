"""Mixed precision under nn (PyTorch's torch.amp names): autocast regions (tensor/amp.py), the
GradScaler (tensor/grad_scaler.py), the same objects as tensor.autocast and tensor.GradScaler,
and custom_fwd / custom_bwd for the forward and backward of an autograd.Function.

>>> import tensor as T
>>> from autograd import Function
>>> class Mul(Function):
...     @staticmethod
...     @custom_fwd(device_type="cpu", cast_inputs=T.float32)
...     def forward(ctx, a, b):
...         ctx.save_for_backward(a, b)
...         return a @ b                       # float32: autocast is off inside
...     @staticmethod
...     @custom_bwd(device_type="cpu")
...     def backward(ctx, g):
...         a, b = ctx.saved_tensors
...         return g @ b.mT, a.mT @ g
>>> a = T.ones((2, 2), dtype=T.bfloat16)
>>> with T.autocast("cpu"):
...     Mul.apply(a, a).dtype.name
'float32'
"""
from __future__ import annotations

import functools

from tensor import dtypes as _dt
from tensor._tensor import Tensor
from tensor.amp import _DEFAULT, autocast, get_autocast_dtype, is_autocast_enabled
from tensor.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast regions exist for device_type ("cpu" and "cuda")."""
    return device_type in _DEFAULT


def _check_device_type(device_type, op: str) -> None:
    if not isinstance(device_type, str) or device_type not in _DEFAULT:
        raise ValueError(f"{op}: device_type must be 'cpu' or 'cuda', got {device_type!r}")


def _cast_inputs(value, device_type: str, to):
    """value with its floating tensors on device_type (float64 left alone) cast to `to`, looking
    into lists, tuples and dicts, as PyTorch's custom_fwd does."""
    if type(value) is Tensor:
        d = value.dtype
        if d.kind == "f" and d is not _dt.float64 and value.device.type == device_type:
            return value.astype(to)
        return value
    if isinstance(value, dict):
        return {_cast_inputs(k, device_type, to): _cast_inputs(v, device_type, to)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cast_inputs(v, device_type, to) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """PyTorch's decorator for the forward(ctx, ...) of an autograd.Function: records on ctx
    whether an autocast region for device_type was on (and its dtype), for custom_bwd. With
    cast_inputs (a dtype), inside an enabled region the floating tensor arguments on
    device_type are cast to it and forward runs with autocast off; outside one it runs as is."""
    _check_device_type(device_type, "custom_fwd")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    to = None if cast_inputs is None else _dt.dtype(cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx, on = args[0], is_autocast_enabled(device_type)
        ctx._amp_dtype = get_autocast_dtype(device_type)
        if to is None:
            ctx._amp_fwd_enabled = on
            return fwd(*args, **kwargs)
        ctx._amp_fwd_enabled = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(ctx, *_cast_inputs(args[1:], device_type, to),
                       **_cast_inputs(kwargs, device_type, to))
    return forward


def custom_bwd(bwd=None, *, device_type: str):
    """PyTorch's decorator for the backward(ctx, ...) of an autograd.Function whose forward has
    custom_fwd: backward runs under the autocast state its forward ran in (backward otherwise
    runs with autocast off)."""
    _check_device_type(device_type, "custom_bwd")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        if not hasattr(ctx, "_amp_fwd_enabled"):
            raise RuntimeError(f"custom_bwd: {getattr(bwd, '__qualname__', 'backward')}'s forward "
                               "was not decorated with custom_fwd (nothing says how it ran)")
        with autocast(device_type, dtype=ctx._amp_dtype, enabled=ctx._amp_fwd_enabled):
            return bwd(*args, **kwargs)
    return backward
