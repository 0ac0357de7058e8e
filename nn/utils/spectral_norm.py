"""The older spectral normalization, as torch.nn.utils.spectral_norm: a forward pre-hook.

spectral_norm(module) renames the parameter `weight` to `weight_orig`, adds the buffers
`weight_u` and `weight_v` (unit vectors of the power method) and, before every forward, sets
module.weight = weight_orig / sigma with sigma = u . (W v), after n_power_iterations steps
(v first, then u) in training mode only. remove_spectral_norm undoes it. PyTorch prefers
nn.utils.parametrizations.spectral_norm; both are here.

>>> import tensor as T
>>> from nn.linear import Linear
>>> m = spectral_norm(Linear(4, 3))
>>> list(m.state_dict())
['bias', 'weight_orig', 'weight_u', 'weight_v']
>>> sorted(remove_spectral_norm(m).state_dict())
['bias', 'weight']
"""
from __future__ import annotations

from typing import Any

import tensor as T
from autograd import no_grad
from tensor import Tensor

from ..module import Module, Parameter
from ._weight_ops import normalize, power_iteration_, remove_hook, weight_to_matrix
from .parametrizations import _default_dim


class SpectralNorm:
    """The forward pre-hook (see the module docstring)."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("spectral_norm: n_power_iterations must be positive, got "
                             f"{n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        return weight_to_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        w = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                power_iteration_(w.detach(), u, v, self.n_power_iterations, self.eps,
                                 v_first=True)
            u, v = T.clone(u), T.clone(v)   # (the next step writes the buffers in place)
        return weight / T.sum(u * (w @ v))

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"spectral_norm: cannot register two spectral_norm hooks on "
                                   f"the same parameter {name!r}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"spectral_norm: module {module._get_name()} has no parameter "
                             f"named {name!r} (or it is None)")
        if not -weight.ndim <= dim < weight.ndim:
            raise IndexError(f"spectral_norm: dim {dim} is out of range for a weight of "
                             f"{weight.ndim} dims")
        with no_grad():
            h, k = fn.reshape_weight_to_matrix(weight).shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            u, v = normalize(T.randn(h, **kw), eps), normalize(T.randn(k, **kw), eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Apply the spectral-norm hook to module.<name> (see the module docstring); dim defaults
    to 0, 1 for the transposed convolutions. Returns module."""
    SpectralNorm.apply(module, name, n_power_iterations, _default_dim(module, dim), eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo spectral_norm: module.<name> is a parameter again, holding weight_orig / sigma
    (sigma from the current u, v: no further power iteration)."""
    return remove_hook(module, SpectralNorm, name, "remove_spectral_norm", "spectral_norm")


__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]
