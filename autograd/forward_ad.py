"""autograd.forward_ad: PyTorch's dual-tensor interface to forward mode (torch.autograd.forward_ad).

Inside a `dual_level()`, `make_dual(x, t)` gives a tensor standing for x that carries the tangent
t; every op on it pushes the tangent forward (its jvp rule, as `autograd.jvp` does, under no_grad
too), and `unpack_dual(y)` returns y's primal and tangent (None where y does not depend on a dual
tensor). Leaving the level drops every tangent it made. One level at a time (nesting raises, as
PyTorch's does); for forward over forward use jacfwd / hessian.

>>> import tensor as T
>>> from autograd import forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(T.tensor([0.0, 1.0]), T.tensor([1.0, 1.0]))
...     y = T.sin(x) * x
...     [round(v, 4) for v in fwAD.unpack_dual(y).tangent.tolist()]   # sin x + x cos x
[0.0, 1.3818]
"""
from __future__ import annotations

import contextlib
import weakref
from collections import namedtuple

from tensor._tensor import Tensor

from .forward import _alias, _check_tangent, _clear_recorded
from .grad_mode import state
from .graph import meta_of

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def _kind(x) -> str:
    return f"{type(x).__module__}.{type(x).__qualname__}"


def _check_level(level, op: str) -> None:
    if level is not None and level != 0:
        raise ValueError(f"{op}: level {level!r} does not exist (only level 0, the one "
                         "enter_dual_level returns, is supported)")


class _Refs(list):
    """state.fw_tensors inside a dual level: the weak references to the tensors given a tangent,
    the dead ones dropped whenever the list has doubled (a level may last a whole training loop:
    one reference per op would otherwise pile up)."""

    def __init__(self):
        super().__init__()
        self.limit = 1024

    def append(self, ref) -> None:
        if len(self) >= self.limit:
            self[:] = [r for r in self if r() is not None]
            self.limit = max(1024, 2 * len(self))
        super().append(ref)


def enter_dual_level() -> int:
    """Start the forward-mode level (returns its number, 0): dual tensors can be made until
    exit_dual_level."""
    if state.fw_level > 0:
        raise RuntimeError("enter_dual_level: a forward-mode level is already active (inside "
                           "dual_level or autograd.jvp); nested forward mode is not supported")
    state.fw_level += 1
    state.fw_tensors = _Refs()
    return 0


def exit_dual_level(*, level=None) -> None:
    """End the level: every tangent made in it is dropped (its tensors keep their values)."""
    _check_level(level, "exit_dual_level")
    if state.fw_level == 0:
        raise RuntimeError("exit_dual_level: no forward-mode level is active")
    state.fw_level -= 1
    _clear_recorded()
    state.fw_tensors = []


class dual_level(contextlib.ContextDecorator):
    """A context manager (or decorator, as PyTorch's) for one forward-mode level:
    enter_dual_level / exit_dual_level."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level=None) -> Tensor:
    """A tensor on `tensor`'s memory (its values; in the reverse-mode graph it stands for
    `tensor`, so gradients still reach it) carrying `tangent` (the shape, device and, after a
    cast, dtype of `tensor`; floating-point or complex)."""
    op = "make_dual"
    _check_level(level, op)
    if state.fw_level == 0:
        raise RuntimeError(f"{op}: no forward-mode level is active; enter one first "
                           "(`with forward_ad.dual_level():`)")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expects a tensor.Tensor, got {_kind(tensor)}")
    if tensor._ag is not None and tensor._ag.tangent is not None:
        raise RuntimeError(f"{op}: the tensor already carries a tangent at this level; making a "
                           "dual of a dual is not supported (unpack_dual(t).primal, or "
                           "t.detach(), first)")
    t = _check_tangent(0, tensor, tangent, op)
    dual = _alias(tensor)
    meta_of(dual).tangent = t
    state.fw_tensors.append(weakref.ref(dual))
    return dual


def unpack_dual(tensor: Tensor, *, level=None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor`: the primal a tensor on its memory without the tangent
    (still in the reverse-mode graph), the tangent None when it has none (or no level is
    active)."""
    op = "unpack_dual"
    _check_level(level, op)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expects a tensor.Tensor, got {_kind(tensor)}")
    m = tensor._ag
    tangent = m.tangent if m is not None and state.fw_level else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)
