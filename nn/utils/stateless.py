"""Run a module with other tensors in place of its parameters and buffers, as
torch.func.functional_call (and torch.nn.utils.stateless.functional_call).

The named tensors are swapped in, the module is called, and its own tensors are put back
afterwards, also when the call raises: the module is left as it was. Gradients flow to the
tensors passed in, which makes a module a function of its parameters (meta-learning,
per-sample gradients, ensembles).

>>> import tensor as T
>>> from nn.linear import Linear
>>> m = Linear(2, 1)
>>> w = T.tensor([[1.0, 2.0]], dtype=T.float32)
>>> functional_call(m, {"weight": w, "bias": T.zeros(1, dtype=T.float32)},
...                 (T.ones((1, 2), dtype=T.float32),)).tolist()
[[3.0]]
>>> m.weight is w
False
"""
from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any

import tensor as T
from tensor import Tensor

from ..module import Module
from .parametrize import is_parametrized

_MISSING = object()


def _named_tensors(module: Module) -> dict[str, Tensor]:
    out = dict(module.named_parameters(remove_duplicate=False))
    out.update(module.named_buffers(remove_duplicate=False))
    return out


def _untie(module: Module, given: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Give every name tied to a given name (the same tensor under several names) its value;
    several different values for one tied group are an error."""
    groups: dict[int, set] = {}
    for name, t in _named_tensors(module).items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: g for g in groups.values() if len(g) > 1 for n in g}
    out = dict(given)
    for name in given:
        if name in tied:
            names = tied[name]
            values = {id(given[n]) for n in names if n in given}
            if len(values) > 1:
                raise ValueError(f"functional_call: got several values for keys {sorted(names)}, "
                                 "which are tied; pass tie_weights=False to set them apart")
            for n in names:
                out[n] = given[name]
    return out


def _swap(module: Module, name: str, value):
    """Put value at module's dotted name; returns what was there (_MISSING if nothing)."""
    path, _, attr = name.rpartition(".")
    m = module.get_submodule(path)
    if is_parametrized(m, attr):
        raise ValueError(f"functional_call: {name!r} is parametrized; pass its original "
                         f"({path + '.' if path else ''}parametrizations.{attr}.original) instead")
    for d in (m._parameters, m._buffers):
        if attr in d:
            old = d[attr]
            if value is _MISSING:
                del d[attr]
            else:
                d[attr] = value
            return old
    old = m.__dict__.get(attr, _MISSING)
    if value is _MISSING:
        m.__dict__.pop(attr, None)
    else:
        m.__dict__[attr] = value
    return old


@contextmanager
def _reparametrize_module(module: Module, tensors: Mapping[str, Tensor], tie_weights: bool = True,
                          strict: bool = False):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        own = _named_tensors(module)
        unexpected = [k for k in tensors if k not in own]
        missing = [k for k in own if k not in tensors]
        msgs = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected else []) \
            + ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing else [])
        if msgs:
            raise RuntimeError(f"functional_call: error(s) in reparametrizing for "
                               f"{module._get_name()}:\n\t" + "\n\t".join(msgs))
    saved: list[tuple[str, Any]] = []
    try:
        for name, value in tensors.items():
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"functional_call: {name!r} must be a Tensor or None, got "
                                f"{type(value).__name__}")
            saved.append((name, _swap(module, name, value)))
        yield
    finally:
        for name, old in reversed(saved):
            _swap(module, name, old)


def _merged(given) -> Mapping[str, Tensor]:
    """One mapping of names to tensors from a mapping or a tuple / list of them (as
    torch.func.functional_call: a name may appear in only one of them)."""
    if isinstance(given, Mapping):
        return given
    if not isinstance(given, tuple | list) or not all(isinstance(d, Mapping) for d in given):
        raise TypeError("functional_call: parameters_and_buffers must be a mapping of names to "
                        f"tensors or a tuple of them, got {type(given).__name__}")
    out: dict[str, Tensor] = {}
    for d in given:
        twice = sorted(k for k in d if k in out)
        if twice:
            raise ValueError(f"functional_call: {twice} appeared in more than one of the "
                             "dictionaries of parameters_and_buffers")
        out.update(d)
    return out


def functional_call(module: Module, parameters_and_buffers: Mapping[str, Tensor],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """module(*args, **kwargs) with the tensors of parameters_and_buffers (keyed by qualified
    name, as in state_dict; or a tuple of such dicts, merged) in place of the module's own,
    restored afterwards.

    args: a tuple of positional arguments, or one argument. tie_weights=True: a tensor the
    module holds under several names (tied weights) takes the given value under all of them.
    strict=True: the keys must be exactly the module's parameters and buffers."""
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: expected a Module, got {type(module).__name__}")
    parameters_and_buffers = _merged(parameters_and_buffers)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers) of a list of modules of one architecture, each name's tensors stacked
    along a new leading dim, as torch.func.stack_module_state: for ensembling with
    functional_call (under vmap); `models` a list or a ModuleList of them. The stacked parameters
    are new leaves (requiring grad when the models' do: all of them or none), detached from the
    models; buffers are stacked as they are.

    >>> import tensor as T
    >>> from nn.linear import Linear
    >>> params, buffers = stack_module_state([Linear(3, 2), Linear(3, 2)])
    >>> params["weight"].shape, params["weight"].requires_grad, buffers
    ((2, 2, 3), True, {})
    """
    op = "stack_module_state"
    # a ModuleList (or Sequential) is the list of models, as PyTorch's; another Module is one
    models = [models] if isinstance(models, Module) and not hasattr(models, "__iter__") \
        else list(models)
    if not models:
        raise RuntimeError(f"{op}: expected at least one model, got 0")
    for i, m in enumerate(models):
        if not isinstance(m, Module):
            raise TypeError(f"{op}: models[{i}] is a {type(m).__name__}, not a Module")
    if len({m.training for m in models}) > 1:
        raise RuntimeError(f"{op}: expected all models to have the same training/eval mode")
    first = models[0]

    def stacked(named, what):
        names = [n for n, _ in named(first)]
        per = []
        for i, m in enumerate(models):
            d = dict(named(m))
            if list(d) != names:
                raise RuntimeError(f"{op}: models[{i}] has {what} {sorted(d)}, models[0] "
                                   f"{sorted(names)}: the models must share one architecture")
            per.append(d)
        return {n: T.stack([d[n] for d in per]) for n in names}, per

    params, per = stacked(lambda m: m.named_parameters(), "parameters")
    for n, t in params.items():
        flags = {bool(d[n].requires_grad) for d in per}
        if len(flags) > 1:
            raise RuntimeError(f"{op}: parameter {n!r} requires grad in some models and not in "
                               "others; expected the same .requires_grad in every model")
        params[n] = t.detach().requires_grad_(flags.pop())
    buffers, _ = stacked(lambda m: m.named_buffers(), "buffers")
    return params, buffers


__all__ = ["functional_call", "stack_module_state"]
