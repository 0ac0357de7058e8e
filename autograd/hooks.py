"""Tensor hooks: register_hook and retain_grad."""
from __future__ import annotations

import weakref

from .graph import edge_of


class RemovableHandle:
    def __init__(self, lst, fn):
        self._lst, self._fn = lst, fn

    def remove(self):
        if self._fn in self._lst:
            self._lst.remove(self._fn)


def register_hook(t, fn):
    if not t.requires_grad:
        raise RuntimeError("register_hook: cannot register a hook on a tensor that does not "
                           "require grad")
    node, nr = edge_of(t)
    if node.hooks is None:
        node.hooks = {}
    lst = node.hooks.setdefault(nr, [])
    lst.append(fn)
    return RemovableHandle(lst, fn)


def retain_grad(t):
    if t.grad_fn is None:
        return  # leaves keep .grad anyway
    ref = weakref.ref(t)

    def keep(g):
        x = ref()
        if x is not None:
            g = g.detach()
            x.grad = (g if g.flags.writeable else g.copy()) if x.grad is None else x.grad + g
    register_hook(t, keep)
