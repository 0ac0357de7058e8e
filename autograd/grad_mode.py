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
import inspect
import numbers
import threading
from threading import get_ident


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.depth = 0        # > 0 while a recorded op runs: its inner ops are not recorded
        self.fw_level = 0     # > 0 inside autograd.jvp: tangents are pushed forward
        self.fw_tensors = []  # weak refs to tensors given a tangent (cleared when jvp returns)
        self.saved_hooks = []  # (pack, unpack) of autograd.saved_hooks' contexts, innermost last
        self.sac = None       # a selective checkpoint's op runner (autograd/checkpoint_selective.py)


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


class _GradMode:
    """A context manager and decorator that sets grad mode to `mode` while it is entered (on
    entry, not construction: one instance may be entered again, or nested), restoring the mode
    it found on exit."""
    mode = False

    def __new__(cls, *args, **kwargs):
        # PyTorch's bare decorator: @no_grad (no parentheses) wraps the function directly
        if cls is not set_grad_enabled and len(args) == 1 and not kwargs and callable(args[0]) \
                and not isinstance(args[0], bool):
            return cls()(args[0])
        return super().__new__(cls)

    def __init__(self):
        # the modes found on entry, a stack per thread: one instance (a module-level
        # `NO_GRAD = no_grad()`) may be entered by several threads at once, and each must get
        # its own mode back (one shared stack gave a thread another thread's mode on exit)
        self._prevs: dict[int, list[bool]] = {}

    def _push(self, mode) -> None:
        self._prevs.setdefault(get_ident(), []).append(mode)

    def _pop(self):
        me = get_ident()
        stack = self._prevs[me]
        mode = stack.pop()
        if not stack:
            del self._prevs[me]
        return mode

    def __enter__(self):
        self._push(state.grad_enabled)
        state.grad_enabled = self.mode
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self._pop()
        return False

    def __call__(self, fn):
        make = self.clone
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(fn, make)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_GradMode):
    """Ops inside do not record a graph (inference, parameter updates)."""
    mode = False


class enable_grad(_GradMode):
    """Re-enable recording inside a no_grad block."""
    mode = True


class inference_mode(_GradMode):
    """PyTorch's inference_mode(mode=True): here no_grad (mode=False: no change); tensors made
    inside are ordinary tensors (no inference-tensor restrictions)."""

    def __init__(self, mode: bool = True):
        super().__init__()
        self.mode = False if mode else None   # None: leave grad mode as it is

    def __enter__(self):
        self._push(state.grad_enabled)
        if self.mode is not None:
            state.grad_enabled = self.mode
        return self

    def clone(self):
        return inference_mode(self.mode is not None)


class set_grad_enabled(_GradMode):
    """Enable or disable gradient recording: as a function call it switches at once (PyTorch's);
    as a context manager or decorator it restores the previous mode on exit."""

    def __init__(self, mode: bool):
        super().__init__()
        # PyTorch takes a bool only; ints and NumPy bools are clear too, but bool("no") is True
        if not (isinstance(mode, numbers.Integral) or type(mode).__name__ in ("bool_", "bool")):
            raise TypeError(f"set_grad_enabled: mode must be a bool, got {type(mode).__name__} "
                            f"{mode!r:.40}")
        self.mode = bool(mode)
        self._push(state.grad_enabled)
        state.grad_enabled = self.mode

    def __enter__(self):   # the switch happened at construction
        return self

    def __call__(self, fn):
        state.grad_enabled = self._pop()   # used as a decorator: undo the eager switch
        return super().__call__(fn)

    def clone(self):
        return _Enter(self.mode)


class _Enter(_GradMode):
    def __init__(self, mode: bool):
        super().__init__()
        self.mode = mode


def _wrap_generator(fn, make):
    """A decorated generator function (PyTorch's): the mode holds while the generator's own
    code runs (its creation, each next / send / throw / close), and the caller's mode is back
    between them, so a consumer looping over it keeps its own mode."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make():
            gen = fn(*args, **kwargs)
        try:
            with make():
                value = next(gen)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with make():
                        gen.close()
                    raise
                except BaseException as e:   # thrown in by the caller: into fn, in the mode
                    with make():
                        value = gen.throw(e)
                else:
                    with make():
                        value = gen.send(sent)
        except StopIteration as stop:
            return stop.value
    return wrapper
