"""Anomaly detection, PyTorch's: `detect_anomaly()` (a context manager and decorator) and
`set_detect_anomaly(mode)` (a call, or a context manager). While it is on, every node keeps the
Python stack of the forward op that made it (the C fast path steps aside, so every op is
recorded here), an error raised in a backward rule carries that stack as a note, and with
check_nan a rule that returns NaN raises at once, naming the op and where it was called. It
is global (all threads), as PyTorch's, and slow: for debugging.

>>> import tensor as T, autograd
>>> x = T.tensor([0.0, 1.0], requires_grad=True)
>>> with autograd.detect_anomaly():
...     y = T.sqrt(x) * 0.0          # sqrt's derivative at 0 is inf; inf * 0 is NaN
...     try:
...         y.sum().backward()
...     except RuntimeError as e:
...         print(str(e).splitlines()[0])
autograd: function 'sqrt' returned NaN values in its gradient for input 0 (anomaly detection)
"""
from __future__ import annotations

import functools
import numbers
import warnings

import tensor as T
from tensor._tensor import Tensor

from . import graph
from .graph import anomaly


def is_anomaly_enabled() -> bool:
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan


def _apply(enabled: bool, check_nan: bool) -> None:
    changed = enabled != anomaly.enabled
    anomaly.enabled, anomaly.check_nan = enabled, check_nan
    if changed:
        graph.refresh_fast_path()


class detect_anomaly:
    """Anomaly detection while entered (or around a decorated function); restores the mode it
    found on exit."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self._prev = []

    def __enter__(self):
        warnings.warn("autograd: anomaly detection is on: every node keeps its forward trace "
                      "and backward checks for NaN; use it only to debug", UserWarning,
                      stacklevel=2)
        self._prev.append((anomaly.enabled, anomaly.check_nan))
        _apply(True, self.check_nan)
        return self

    def __exit__(self, *exc) -> bool:
        _apply(*self._prev.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Switch anomaly detection on or off at once (as a call); as a context manager, the mode
    it found comes back on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        for name, v in (("mode", mode), ("check_nan", check_nan)):   # (bool("off") is True)
            if not (isinstance(v, numbers.Integral) or type(v).__name__ in ("bool_", "bool")):
                raise TypeError(f"set_detect_anomaly: {name} must be a bool, got {type(v).__name__} "
                                f"{v!r:.40}")
        self._prev = (anomaly.enabled, anomaly.check_nan)
        _apply(bool(mode), bool(check_nan))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        _apply(*self._prev)
        return False


def anomaly_note(node) -> str:
    """Where the forward op of `node` was called (for an error raised in its backward)."""
    if getattr(node, "trace", None) is None:
        return (f"autograd (anomaly detection): no forward trace for {node.op!r} (it was "
                "recorded before anomaly detection was switched on)")
    return (f"autograd (anomaly detection): the forward call of {node.op!r} that made this "
            "node:\n" + "".join(node.trace))


def check_nan(node, grads) -> None:
    """Raise when a backward rule returned NaN (check_nan)."""
    for i, g in enumerate(grads):
        if type(g) is Tensor and g.dtype.kind in "fc" and g.size and bool(T.any(T.isnan(g))):
            raise RuntimeError(f"autograd: function {node.op!r} returned NaN values in its "
                               f"gradient for input {i} (anomaly detection)\n"
                               + anomaly_note(node))
