"""Pruning, as torch.nn.utils.prune: zero a parameter's entries (or whole channels) through a mask.

Pruning `module.<name>` moves the parameter to `<name>_orig`, registers the float mask as the
buffer `<name>_mask`, and keeps `module.<name>` (a plain attribute) equal to `mask * orig`; a
forward pre-hook (the pruning method itself) recomputes it before each forward, so the optimizer
keeps updating `<name>_orig` while the pruned entries stay out of the forward and get zero
gradient. Pruning the same tensor again combines the methods in a PruningContainer: each new
method only chooses among the entries (or channels) still alive. `remove` makes the pruning
permanent (the parameter `<name>` holds `mask * orig` again, hook, mask and `_orig` gone).

Methods: identity, random_unstructured, l1_unstructured, random_structured, ln_structured,
custom_from_mask, and global_unstructured over many (module, name) pairs at once; `amount` is a
count (int) or a fraction in [0, 1] (rounded as Python's round, as PyTorch). Ties among equal
magnitudes go to the lower index (PyTorch leaves their order unspecified).

>>> import tensor as T, nn
>>> lin = nn.Linear(3, 2)
>>> lin.weight = nn.Parameter(T.asarray([[1.0, -4.0, 2.0], [0.5, 3.0, -0.1]]))
>>> _ = l1_unstructured(lin, "weight", amount=2)
>>> lin.weight_mask.tolist(), list(lin.state_dict())
([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]], ['bias', 'weight_orig', 'weight_mask'])
>>> lin.weight.tolist()
[[1.0, -4.0, 2.0], [0.0, 3.0, -0.0]]
>>> _ = remove(lin, "weight"); list(lin.state_dict())
['bias', 'weight']
"""
from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import tensor as T
from tensor import Tensor

from ..module import Module

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
    "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
    "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
    "custom_from_mask", "remove", "is_pruned",
]


# ---------------------------------------------------------------- amount checks


def _check_amount(amount, op: str) -> None:
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise TypeError(f"{op}: amount must be an int (a count) or a float in [0, 1] (a fraction), "
                        f"got {type(amount).__name__}")
    if isinstance(amount, numbers.Integral):
        if amount < 0:
            raise ValueError(f"{op}: amount={amount} must be a non-negative int")
    elif not 0.0 <= float(amount) <= 1.0:
        raise ValueError(f"{op}: amount={amount} must be a fraction in [0, 1]")


def _count(amount, size: int, op: str, what: str) -> int:
    """How many of `size` entries (or channels) to prune."""
    n = int(amount) if isinstance(amount, numbers.Integral) else round(float(amount) * size)
    if n > size:
        raise ValueError(f"{op}: amount={amount} is more than the {size} {what} of the tensor")
    return n


def _structured_dim(t: Tensor, dim: int, op: str) -> int:
    if t.ndim <= 1:
        raise ValueError(f"{op}: structured pruning needs a tensor of at least 2 dimensions, got "
                         f"shape {tuple(t.shape)} (use an unstructured method)")
    if not -t.ndim <= dim < t.ndim:
        raise IndexError(f"{op}: dim={dim} is out of range for a tensor of shape {tuple(t.shape)}")
    return dim % t.ndim


def _channel_mask(t: Tensor, dim: int, keep: Tensor) -> Tensor:
    """A mask of t's shape: 1 on the channels (along dim) that keep selects, 0 elsewhere."""
    mask = T.zeros(t.shape, dtype=t.dtype, device=t.device)
    key = [slice(None)] * t.ndim
    key[dim] = keep
    mask[tuple(key)] = 1
    return mask


def _flat_set(mask: Tensor, idx: Tensor, value: float) -> Tensor:
    flat = mask.reshape(-1).clone()
    flat[idx] = value
    return flat.reshape(mask.shape)


# ---------------------------------------------------------------- methods


class BasePruningMethod(ABC):
    """A pruning method: compute_mask(t, default_mask) gives the new mask; applied to a module it
    is also that module's forward pre-hook (recomputing `<name>` = mask * `<name>_orig`)."""

    PRUNING_TYPE = "unstructured"   # "unstructured", "structured" or "global"
    _tensor_name: str | None = None

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for t, given the mask already in place (default_mask)."""

    def apply_mask(self, module: Module) -> Tensor:
        """mask * orig for this method's tensor of module."""
        name = self._tensor_name
        if name is None:
            raise ValueError(f"{type(self).__name__}: the method is not attached to a tensor "
                             "(apply it to a module first)")
        orig = getattr(module, name + "_orig")
        mask = getattr(module, name + "_mask")
        return mask.astype(orig.dtype, copy=False) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None,
              **kwargs):
        """Prune module.<name> with cls(*args, **kwargs) (combined with the pruning already on
        that tensor) and return the method (a PruningContainer when combined)."""
        if not isinstance(module, Module):
            raise TypeError(f"prune: module must be an nn.Module, got {type(module).__name__}")
        old_keys = [k for k, h in module._forward_pre_hooks.items()
                    if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        old = module._forward_pre_hooks[old_keys[0]] if old_keys else None
        orig = getattr(module, name, None)   # (pruned before: the masked tensor)
        if not isinstance(orig, Tensor):
            raise AttributeError(f"prune: {type(module).__name__} has no tensor {name!r} to prune")
        if old is None and name not in module._parameters:
            raise ValueError(f"prune: {name!r} of {type(module).__name__} is not a parameter")
        if importance_scores is None:
            importance_scores = orig
        elif tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(f"prune: importance_scores of shape {tuple(importance_scores.shape)} "
                             f"do not match {name!r} of shape {tuple(orig.shape)}")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old is not None:
            if isinstance(old, PruningContainer):
                old.add_pruning_method(method)
                method = old
            else:
                method = PruningContainer(old, method)
        fresh = not isinstance(method, PruningContainer)
        if fresh:
            del module._parameters[name]
            module.register_parameter(name + "_orig", orig)
            default_mask = T.ones(orig.shape, dtype=orig.dtype, device=orig.device)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
        except BaseException:
            if fresh:   # leave the module as it was
                module._buffers.pop(name + "_mask", None)
                module.__dict__.pop(name, None)
                del module._parameters[name + "_orig"]
                module.register_parameter(name, orig)
            elif method is old:   # the container in place drops the method just added
                method._pruning_methods = method._pruning_methods[:-1]
            raise
        for k in old_keys:
            del module._forward_pre_hooks[k]
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """t with this method's mask applied (the module is not touched)."""
        scores = t if importance_scores is None else importance_scores
        if default_mask is None:
            default_mask = T.ones(t.shape, dtype=t.dtype, device=t.device)
        return t * self.compute_mask(scores.detach(), default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: module.<name> becomes a parameter holding mask * orig."""
        name = self._tensor_name
        if name is None:
            raise ValueError(f"{type(self).__name__}: the method is not attached to a tensor")
        weight = self.apply_mask(module)
        module.__dict__.pop(name, None)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.detach()
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """Successive pruning methods on one tensor: each new one prunes among what is left."""

    def __init__(self, *methods: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if len(methods) == 1 and not isinstance(methods[0], BasePruningMethod):
            methods = tuple(methods[0])   # an iterable of methods
        for m in methods:
            self.add_pruning_method(m)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"PruningContainer: {type(method).__name__} is not a pruning method")
        if method is None:
            return
        if self._tensor_name is None:
            self._tensor_name = method._tensor_name
        elif method._tensor_name != self._tensor_name:
            raise ValueError(f"PruningContainer: cannot combine a method on {method._tensor_name!r} "
                             f"with those on {self._tensor_name!r}")
        self._pruning_methods = self._pruning_methods + (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, i):
        return self._pruning_methods[i]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask computed on the part of t that default_mask keeps (the alive
        entries, the alive channels, or all of t for a global method), merged into it."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.astype(t.dtype)   # a copy: written below
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            alive = default_mask == 1
            part = method.compute_mask(t[alive], default_mask=default_mask[alive])
            new_mask[alive] = part.astype(new_mask.dtype)
            return new_mask
        if kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(f"{type(method).__name__}: a structured pruning method needs "
                                     "a `dim` attribute")
            dim = _structured_dim(t, method.dim, type(method).__name__)
            others = tuple(d for d in range(t.ndim) if d != dim)
            keep = default_mask.sum(axis=others) != 0
            key = [slice(None)] * t.ndim
            key[dim] = keep
            key = tuple(key)
        elif kind == "global":
            key = (slice(None),) * t.ndim
        else:
            raise ValueError(f"PruningContainer: unknown PRUNING_TYPE {kind!r} of "
                             f"{type(method).__name__}")
        part = method.compute_mask(t[key], default_mask=default_mask[key])
        new_mask[key] = part.astype(new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones): useful to get the `_orig` / `_mask` layout."""

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries chosen uniformly at random."""

    def __init__(self, amount) -> None:
        _check_amount(amount, "RandomUnstructured")
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.size, "RandomUnstructured", "entries")
        mask = default_mask.clone()
        if k:
            prob = T.rand(t.shape, device=t.device)
            idx = T.argsort(prob.reshape(-1), stable=True)[-k:]
            mask = _flat_set(mask, idx, 0)
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest magnitude (of the importance scores)."""

    def __init__(self, amount) -> None:
        _check_amount(amount, "L1Unstructured")
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.size, "L1Unstructured", "entries")
        mask = default_mask.clone()
        if k:
            idx = T.argsort(T.abs(t).reshape(-1), stable=True)[:k]
            mask = _flat_set(mask, idx, 0)
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels along dim, chosen uniformly at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _check_amount(amount, "RandomStructured")
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        dim = _structured_dim(t, self.dim, "RandomStructured")
        size = t.shape[dim]
        k = _count(self.amount, size, "RandomStructured", f"channels along dim {self.dim}")
        if k == 0:
            return default_mask
        prob = T.rand(size, device=t.device)
        keep = T.zeros(size, dtype=T.bool, device=t.device)
        keep[T.argsort(prob, stable=True)[k:]] = True
        return _channel_mask(t, dim, keep) * default_mask.astype(t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


def _norm_over_others(t: Tensor, n, dim: int) -> Tensor:
    """The n-norm of each channel of t along dim (over all the other dimensions)."""
    others = tuple(d for d in range(t.ndim) if d != dim)
    if n == "fro":
        n = 2
    if n == "nuc":
        if len(others) != 2:
            raise ValueError(f"LnStructured: n='nuc' needs a 3-D tensor (a matrix per channel), "
                             f"got shape {tuple(t.shape)}")
        return T.linalg.matrix_norm(T.moveaxis(t, dim, 0), ord="nuc")
    if not isinstance(n, numbers.Real) or isinstance(n, bool):
        raise TypeError(f"LnStructured: n must be a number, inf, -inf, 'fro' or 'nuc', got {n!r}")
    return T.linalg.vector_norm(t, ord=float(n), axis=others)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along dim of smallest n-norm (PyTorch's torch.norm p=n)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _check_amount(amount, "LnStructured")
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        dim = _structured_dim(t, self.dim, "LnStructured")
        size = t.shape[dim]
        k = _count(self.amount, size, "LnStructured", f"channels along dim {self.dim}")
        if k == 0:
            return default_mask
        norm = _norm_over_others(t, self.n, dim)
        keep = T.zeros(size, dtype=T.bool, device=t.device)
        keep[T.argsort(-norm, stable=True)[:size - k]] = True
        return _channel_mask(t, dim, keep) * default_mask.astype(t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise ValueError(f"CustomFromMask: mask of shape {tuple(self.mask.shape)} does not "
                             f"match the tensor's shape {tuple(default_mask.shape)}")
        return default_mask * T.asarray(self.mask, device=default_mask.device).astype(default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# ---------------------------------------------------------------- functions


def identity(module: Module, name: str) -> Module:
    """Reparametrize module.<name> with a mask of ones (prunes nothing)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prune `amount` random entries of module.<name>."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    """Prune the `amount` entries of module.<name> of smallest |importance| (default: |value|)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prune `amount` random channels of module.<name> along dim."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores=None) -> Module:
    """Prune the `amount` channels of module.<name> along dim of smallest n-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune module.<name> where mask is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the (module, name) pairs of parameters together, as one vector: e.g. the 20% of
    smallest magnitude over all of them (pruning_method=L1Unstructured, amount=0.2)."""
    pairs = list(parameters)
    if not pairs or not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
        raise TypeError("global_unstructured: parameters must be a non-empty iterable of "
                        "(module, name) tuples")
    importance_scores = importance_scores or {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured: importance_scores must be a dict keyed by "
                        f"(module, name), got {type(importance_scores).__name__}")
    tensors = [getattr(m, n) for m, n in pairs]
    scores = T.concatenate([importance_scores.get((m, n), t).detach().reshape(-1)
                            for (m, n), t in zip(pairs, tensors)])
    masks = [getattr(m, n + "_mask", None) for m, n in pairs]
    default_mask = T.concatenate([(T.ones(t.shape, dtype=t.dtype, device=t.device) if k is None
                                   else k.astype(t.dtype)).reshape(-1)
                                  for t, k in zip(tensors, masks)])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError("global_unstructured: only unstructured pruning methods can prune "
                        f"globally, got {type(method).__name__} ({method.PRUNING_TYPE})")
    method._tensor_name = "temp"
    final = PruningContainer(method).compute_mask(scores, default_mask)
    start = 0
    for (m, n), t in zip(pairs, tensors):
        size = math.prod(t.shape)
        custom_from_mask(m, n, final[start:start + size].reshape(t.shape))
        start += size


def remove(module: Module, name: str) -> Module:
    """Make the pruning of module.<name> permanent (drops the hook, the mask and `<name>_orig`)."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"prune.remove: parameter {name!r} of {type(module).__name__} has to be pruned "
                     "before its pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether module or any of its submodules has a pruned tensor."""
    return any(isinstance(h, BasePruningMethod)
               for m in module.modules() for h in m._forward_pre_hooks.values())
