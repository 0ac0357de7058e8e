"""Linear, Identity, Flatten and ChannelShuffle layers (torch.nn's).

Linear's parameters are float32 unless dtype= says otherwise, initialised as PyTorch's:
weight ~ kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)), bias ~ the same bound.

>>> import tensor as T
>>> _ = T.manual_seed(0)
>>> m = Linear(3, 2)
>>> m.weight.shape, m.bias.shape, m.weight.dtype.name, m(T.ones((5, 3), dtype=T.float32)).shape
((2, 3), (2,), 'float32', (5, 2))
"""
from __future__ import annotations

import tensor as T
from tensor import Tensor

from . import _functional as F
from . import init
from .module import Module, weight_and_bias


class Linear(Module):
    """y = x @ weight.T + bias over any leading dims: x (*, in_features) -> (*, out_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(f"Linear: features must be non-negative, got in_features="
                             f"{in_features}, out_features={out_features}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        weight_and_bias(self, (out_features, in_features), out_features, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's init: kaiming_uniform(a=sqrt(5)) weight, U(-1/sqrt(fan_in), ..) bias."""
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"Linear: expected a Tensor, got {type(input).__name__}")
        if input.ndim == 0 or input.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected input of shape (*, {self.in_features}), got "
                             f"shape {input.shape}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Identity(Module):
    """Returns its input; accepts (and ignores) any constructor arguments, as PyTorch's."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Flatten dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        nd = max(input.ndim, 1)
        s = self.start_dim + nd if self.start_dim < 0 else self.start_dim
        e = self.end_dim + nd if self.end_dim < 0 else self.end_dim
        if not (0 <= s < nd and 0 <= e < nd):
            raise ValueError(f"Flatten: start_dim={self.start_dim}, end_dim={self.end_dim} are "
                             f"out of range for input shape {input.shape} ({input.ndim} dims)")
        if s > e:
            raise ValueError(f"Flatten: start_dim={self.start_dim} comes after end_dim="
                             f"{self.end_dim} for input shape {input.shape}")
        return T.flatten(input, s, e)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the C channels of an (N, C, *) input into `groups` groups and interleave them:
    output channel i * groups + j is input channel j * (C // groups) + i (ShuffleNet's)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"channel_shuffle: expected a Tensor, got {type(input).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"channel_shuffle: groups must be a positive int, got {groups!r}")
    if input.ndim < 3:
        raise ValueError(f"channel_shuffle: expected an (N, C, *) input of 3 or more dims, got "
                         f"shape {tuple(input.shape)}")
    n, c, rest = input.shape[0], input.shape[1], tuple(input.shape[2:])
    if c % groups:
        raise ValueError(f"channel_shuffle: the number of channels ({c}) must be divisible by "
                         f"groups ({groups})")
    x = input.reshape((n, groups, c // groups) + rest)
    return T.swapaxes(x, 1, 2).reshape((n, c) + rest)


class ChannelShuffle(Module):
    """Interleave the channels of an (N, C, *) input in `groups` groups (ShuffleNet's);
    see nn.functional.channel_shuffle."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


__all__ = ["Linear", "Identity", "Flatten", "ChannelShuffle", "channel_shuffle"]
