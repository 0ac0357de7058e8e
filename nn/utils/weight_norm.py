"""The older weight normalization, as torch.nn.utils.weight_norm: a forward pre-hook.

weight_norm(module) replaces the parameter `weight` by `weight_g` (its norms along dim) and
`weight_v` (its direction), and recomputes module.weight = g * v / ||v|| before every forward
(module.weight is a plain attribute, not in state_dict). remove_weight_norm undoes it.
PyTorch deprecates this API for nn.utils.parametrizations.weight_norm; both are here.

>>> import tensor as T
>>> from nn.linear import Linear
>>> m = weight_norm(Linear(3, 2))
>>> sorted(name for name, _ in m.named_parameters())
['bias', 'weight_g', 'weight_v']
>>> m.weight_g.shape, "weight" in m.state_dict()
((2, 1), False)
>>> sorted(name for name, _ in remove_weight_norm(m).named_parameters())
['bias', 'weight']
"""
from __future__ import annotations

from typing import Any

from autograd import no_grad

from ..module import Module, Parameter
from ._weight_ops import norm_except_dim, remove_hook, weight_norm_fn


class WeightNorm:
    """The forward pre-hook: module.<name> = weight_norm_fn(<name>_v, <name>_g, dim)."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module):
        return weight_norm_fn(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                              self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"weight_norm: cannot register two weight_norm hooks on the "
                                   f"same parameter {name!r}")
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"weight_norm: module {module._get_name()} has no parameter "
                             f"named {name!r}")
        fn = WeightNorm(name, dim)
        del module._parameters[name]
        with no_grad():
            g = norm_except_dim(weight, 2, fn.dim)
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace module.<name> by <name>_g and <name>_v (see the module docstring); dim=None
    normalizes the whole tensor. Returns module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo weight_norm: module.<name> is a parameter again, holding g * v / ||v||."""
    return remove_hook(module, WeightNorm, name, "remove_weight_norm", "weight_norm")


__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]
