"""Weight initialisation, as torch.nn.init: in place, without recording, from tensor's random
generator (tensor.manual_seed(s) makes it reproducible; or pass generator=).

>>> import tensor as T
>>> from nn import init
>>> w = T.empty(64, 32, dtype=T.float32)
>>> _ = T.manual_seed(0); a = init.kaiming_uniform_(w, a=5 ** 0.5).numpy().copy()
>>> bound = (6 / ((1 + 5) * 32)) ** 0.5          # PyTorch's nn.Linear bound: 1/sqrt(fan_in)
>>> bool(abs(a).max() <= bound), round(bound * 32 ** 0.5, 6)
(True, 1.0)
"""
from __future__ import annotations

import math

import tensor as T
from autograd import no_grad
from tensor import Tensor
from tensor.random import Generator, default_generator

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid", "identity")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table): linear/conv/sigmoid 1,
    tanh 5/3, relu sqrt(2), leaky_relu sqrt(2 / (1 + slope^2)) (slope default 0.01), selu 3/4."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, int | float) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight (out, in, *kernel): in * prod(kernel), out * prod(kernel)."""
    if tensor.ndim < 2:
        raise ValueError(f"init: fan in and fan out need a tensor with at least 2 dimensions, "
                         f"got shape {tensor.shape}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _floating(tensor: Tensor, op: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    if tensor.dtype.kind not in "fc":
        raise TypeError(f"{op}: tensor must be floating or complex, got {tensor.dtype.name}")


def _draw(tensor: Tensor, fill) -> Tensor:
    """fill(shape, dtype) written into tensor; a complex tensor's real and imaginary parts are
    drawn as a real (..., 2) tensor, as PyTorch draws them (independently)."""
    if tensor.dtype.kind == "c":
        real = T.dtypes.real_of(tensor.dtype)
        return _write(tensor, T.view_as_complex(fill(tensor.shape + (2,), real)))
    return _write(tensor, fill(tensor.shape, tensor.dtype))


def _empty(tensor: Tensor, op: str) -> bool:
    _floating(tensor, op)
    return tensor.numel() == 0  # as PyTorch: initialising a zero-element tensor is a no-op


def _write(tensor: Tensor, values: Tensor) -> Tensor:
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """Fill with U(a, b) (complex: both parts)."""
    if _empty(tensor, "uniform_"):
        return tensor
    g = generator or default_generator
    return _draw(tensor, lambda shape, d: g.uniform(a, b, shape, dtype=d, device=tensor.device))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2) (complex: each part N(mean, std^2 / 2), as PyTorch)."""
    if _empty(tensor, "normal_"):
        return tensor
    g = generator or default_generator
    sd = std / math.sqrt(2.0) if tensor.dtype.kind == "c" else std
    return _draw(tensor, lambda shape, d: g.normal(mean, sd, shape, dtype=d, device=tensor.device))


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    """The identity in a 2-D tensor."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tensor.shape}")
    return _write(tensor, T.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """Glorot: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    if _empty(tensor, "xavier_uniform_"):
        return tensor
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """Glorot: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    if _empty(tensor, "xavier_normal_"):
        return tensor
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """He: U(-b, b), b = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a)."""
    if _empty(tensor, "kaiming_uniform_"):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """He: N(0, std^2), std = gain / sqrt(fan)."""
    if _empty(tensor, "kaiming_normal_"):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def default_layer_init_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's Linear/Conv reset_parameters: kaiming_uniform_(a=sqrt(5)) weight and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias (fan_in from the weight's shape)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = _calculate_fan_in_and_fan_out(weight)[0] if weight.numel() else 0
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound)
