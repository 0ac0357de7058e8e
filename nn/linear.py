"""Linear, Identity and Flatten layers (torch.nn's).

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

    def forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"Linear: expected a Tensor, got {type(x).__name__}")
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected input of shape (*, {self.in_features}), got "
                             f"shape {x.shape}")
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Identity(Module):
    """Returns its input; accepts (and ignores) any constructor arguments, as PyTorch's."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Flatten(Module):
    """Flatten dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        nd = max(x.ndim, 1)
        s = self.start_dim + nd if self.start_dim < 0 else self.start_dim
        e = self.end_dim + nd if self.end_dim < 0 else self.end_dim
        if not (0 <= s < nd and 0 <= e < nd):
            raise ValueError(f"Flatten: start_dim={self.start_dim}, end_dim={self.end_dim} are "
                             f"out of range for input shape {x.shape} ({x.ndim} dims)")
        if s > e:
            raise ValueError(f"Flatten: start_dim={self.start_dim} comes after end_dim="
                             f"{self.end_dim} for input shape {x.shape}")
        return T.flatten(x, s, e)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


__all__ = ["Linear", "Identity", "Flatten"]
