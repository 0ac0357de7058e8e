"""Gradient mode: no_grad / enable_grad / set_grad_enabled, as context managers and decorators.

>>> import tensor as T, autograd
>>> x = T.ones(2).requires_grad_()
>>> with autograd.no_grad():
...     y = x * 2
>>> y.requires_grad
False
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.depth = 0        # > 0 while a recorded op runs: its inner ops are not recorded
        self.fw_level = 0     # > 0 inside autograd.jvp: tangents are pushed forward
        self.fw_tensors = []  # weak refs to tensors given a tangent (cleared when jvp returns)


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


class set_grad_enabled:
    """Enable or disable gradient recording (a function call, context manager or decorator)."""

    def __init__(self, mode: bool):
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self.prev
        return False

    def __call__(self, fn):
        mode = self.mode
        state.grad_enabled = self.prev  # used as a decorator: undo the eager switch

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class no_grad(set_grad_enabled):
    """Ops inside do not record a graph (inference, parameter updates)."""

    def __init__(self):
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Re-enable recording inside a no_grad block."""

    def __init__(self):
        super().__init__(True)
