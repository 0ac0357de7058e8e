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
import warnings

import numpy as np

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


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    """fan_in or fan_out of a weight, by `mode` (any case), as PyTorch's."""
    m = mode.lower() if isinstance(mode, str) else mode
    if m not in ("fan_in", "fan_out"):
        raise ValueError(f"init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if m == "fan_in" else fan_out


_fan = _calculate_correct_fan


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
    _floating(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)   # (first, as PyTorch: 1-D raises)
    if _empty(tensor, "xavier_uniform_"):
        return tensor
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """Glorot: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    _floating(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)   # (first, as PyTorch: 1-D raises)
    if _empty(tensor, "xavier_normal_"):
        return tensor
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


def _real(tensor: Tensor, op: str) -> bool:
    """_empty, for the initialisers PyTorch allows on real tensors only."""
    if _empty(tensor, op):
        return True
    if tensor.dtype.kind != "f":
        raise TypeError(f"{op}: tensor must be a real floating tensor, got {tensor.dtype.name}")
    return False


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b] (absolute bounds, not in units of std), by
    PyTorch's inverse-CDF sampling: U(2 cdf(a') - 1, 2 cdf(b') - 1) mapped through erfinv,
    scaled, shifted and clamped to [a, b]. Warns when mean is more than 2 std outside [a, b].

    >>> import tensor as T
    >>> w = trunc_normal_(T.empty(1000), std=0.02, a=-0.04, b=0.04, generator=T.random.Generator(0))
    >>> bool(abs(w).max() <= 0.04)
    True
    """
    if _real(tensor, "trunc_normal_"):
        return tensor
    if not std > 0:
        raise ValueError(f"trunc_normal_: std must be positive, got {std}")
    if not a <= b:
        raise ValueError(f"trunc_normal_: the bounds need a <= b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("trunc_normal_: mean is more than 2 std from [a, b]; the distribution of "
                      "values may be incorrect", stacklevel=2)
    g = generator or default_generator
    d = tensor.dtype if tensor.dtype in (T.float32, T.float64) else T.float32   # 16-bit: in float32

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = 2 * cdf((a - mean) / std) - 1, 2 * cdf((b - mean) / std) - 1
    u = g.uniform(lo, hi, tensor.shape, dtype=d, device=tensor.device)
    v = T.clip(T.erfinv(u) * (std * math.sqrt(2.0)) + mean, a, b)
    return _write(tensor, v)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix (Saxe et al.), times gain, as PyTorch's: the Q of the QR
    decomposition of a standard normal (rows, numel / rows) matrix (transposed when wider than
    tall), each column's sign fixed by R's diagonal so that Q is uniformly (Haar) distributed.
    Dimensions past the second are flattened.

    >>> import tensor as T
    >>> q = orthogonal_(T.empty(4, 4, dtype=T.float64), generator=T.random.Generator(0))
    >>> bool(abs(q @ q.T - T.eye(4, dtype=T.float64)).max() < 1e-12)
    True
    """
    _floating(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {tensor.shape}")
    if tensor.numel() == 0:
        return tensor
    if tensor.dtype.kind != "f":
        raise TypeError(f"orthogonal_: tensor must be a real floating tensor, got "
                        f"{tensor.dtype.name}")
    g = generator or default_generator
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    d = tensor.dtype if tensor.dtype in (T.float32, T.float64) else T.float32
    flat = g.normal(0.0, 1.0, (rows, cols), dtype=d, device=tensor.device)
    if rows < cols:
        flat = flat.T
    q, r = T.linalg.qr(flat)
    q = q * T.sign(T.diagonal(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """A 2-D tensor drawn from N(0, std^2) with ceil(sparsity * rows) zeros in every column, at
    random rows (Martens, 2010), as PyTorch's."""
    _floating(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape "
                         f"{tensor.shape}")
    if tensor.numel() == 0:
        return tensor
    g = generator or default_generator
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    normal_(tensor, 0.0, std, g)
    # each column's zero rows: the num_zeros smallest of iid uniforms, a uniform random subset
    keys = g.uniform(0.0, 1.0, (rows, cols), dtype=T.float64, device=tensor.device)
    rank = T.argsort(T.argsort(keys, axis=0), axis=0)
    return _write(tensor, T.where(rank < num_zeros, T.zeros((), dtype=tensor.dtype,
                                                             device=tensor.device), tensor))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a 3-, 4- or 5-D convolution weight (out, in, *kernel): a convolution
    with it keeps its input's channels (the first min(out / groups, in) of each group), as
    PyTorch's."""
    _floating(tensor, "dirac_")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got "
                         f"shape {tensor.shape}")
    out_ch = tensor.shape[0]
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or out_ch % groups:
        raise ValueError(f"dirac_: dim 0 ({out_ch}) must be divisible by groups ({groups!r})")
    per = out_ch // groups
    values = np.zeros(tensor.shape, dtype=np.float64)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for grp in range(groups):
        for d in range(min(per, tensor.shape[1])):
            values[(grp * per + d, d) + centre] = 1.0
    return _write(tensor, T.asarray(values, dtype=tensor.dtype, device=tensor.device))


__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "orthogonal_", "sparse_", "dirac_"]


def _deprecated_alias(fn):
    """PyTorch's old spellings without the trailing underscore (init.xavier_uniform(w), still in
    many older scripts): the same in-place initialiser, with PyTorch's FutureWarning."""
    old, new = fn.__name__[:-1], fn.__name__

    def alias(*args, **kwargs):
        warnings.warn(f"nn.init.{old} is deprecated in favor of nn.init.{new}", FutureWarning,
                      stacklevel=2)
        return fn(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated spelling of {new} (warns FutureWarning)."
    return alias


uniform, normal, constant, eye, dirac, xavier_uniform, xavier_normal, kaiming_uniform, \
    kaiming_normal, orthogonal, sparse = map(_deprecated_alias, (
        uniform_, normal_, constant_, eye_, dirac_, xavier_uniform_, xavier_normal_,
        kaiming_uniform_, kaiming_normal_, orthogonal_, sparse_))


def default_layer_init_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's Linear/Conv reset_parameters: kaiming_uniform_(a=sqrt(5)) weight and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias (fan_in from the weight's shape)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = _calculate_fan_in_and_fan_out(weight)[0] if weight.numel() else 0
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound)
