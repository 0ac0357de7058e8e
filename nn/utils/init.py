"""skip_init, as torch.nn.utils.skip_init: build a module without initialising its parameters.

The module is constructed with every reset_parameters() (and _reset_parameters()) turned into a
no-op for the duration, so its parameters hold whatever T.empty gave them; use it before
loading a checkpoint or running a custom initialisation. (PyTorch builds on the "meta" device
and then allocates; there is no meta device here, so the layer's allocations do happen.)

>>> from nn.linear import Linear
>>> m = skip_init(Linear, 5, 1)
>>> m.weight.shape, m.weight.requires_grad
((1, 5), True)
"""
from __future__ import annotations

import threading

from ..module import Module

_LOCK = threading.RLock()
_NAMES = ("reset_parameters", "_reset_parameters")


def _subclasses(cls: type) -> list[type]:
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def _skip(self, *args, **kwargs) -> None:
    return None


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """module_cls(*args, **kwargs) with parameter initialisation skipped (see the module
    docstring); any module class, its submodules' classes included."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"skip_init: expected a Module subclass, got {module_cls!r}")
    with _LOCK:
        saved = [(c, n, c.__dict__[n]) for c in _subclasses(Module) for n in _NAMES
                 if n in c.__dict__]
        try:
            for c, n, _ in saved:
                setattr(c, n, _skip)
            return module_cls(*args, **kwargs)
        finally:
            for c, n, f in saved:
                setattr(c, n, f)


__all__ = ["skip_init"]
