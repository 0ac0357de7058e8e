"""NumPy names that NumPy scripts use around the arithmetic, not ops of their own:
errstate / seterr / geterr (floating-point error handling: tensor's kernels never warn nor
raise on 0/0 or overflow, they give NumPy's values, inf and nan, so these record the setting
and change nothing), vectorize (a Python function applied element by element on the host, as
NumPy's: a loop), ndarray (the Tensor type, for isinstance checks), dtype, and the dtypes'
scalar constructors (np.float32(1.5): a 0-d tensor).

>>> import tensor as T
>>> with T.errstate(divide="ignore", invalid="ignore"):
...     (T.asarray([1.0, 0.0]) / 0).tolist()
[inf, nan]
>>> T.vectorize(lambda a, b: a if a > b else b)(T.asarray([1, 5]), 3).tolist()
[3, 5]
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray

_MODES = ("ignore", "warn", "raise", "call", "print", "log")
_KINDS = ("divide", "over", "under", "invalid")
_STATE = {k: "warn" for k in _KINDS}
_STATE["under"] = "ignore"
_CALL = [None]


def geterr() -> dict:
    """The floating-point error settings (NumPy's geterr; recorded only: see the module)."""
    return dict(_STATE)


def seterr(all=None, divide=None, over=None, under=None, invalid=None) -> dict:  # noqa: A002
    """Records NumPy's floating-point error settings and returns the previous ones. tensor's
    kernels neither warn nor raise (they give inf and nan, as NumPy's values): "ignore", "warn",
    "print" and "log" are recorded (the result is NumPy's either way); "raise" and "call", whose
    exception or callback a script would rely on, are refused with NotImplementedError."""
    old = geterr()
    given = {k: v if v is not None else all for k, v in
             (("divide", divide), ("over", over), ("under", under), ("invalid", invalid))}
    given = {k: v for k, v in given.items() if v is not None}
    for k, v in given.items():   # (all checked before any is set)
        if v not in _MODES:
            raise ValueError(f"seterr: {k} must be one of {_MODES}, got {v!r}")
        if v in ("raise", "call"):   # (a script relying on the exception must not run on silently)
            raise NotImplementedError(
                f"seterr: {k}={v!r} cannot be honoured: tensor's kernels do not detect floating-"
                "point errors (they give inf and nan, NumPy's values); test T.isfinite(result)")
    _STATE.update(given)
    return old


def geterrcall():
    return _CALL[0]


def seterrcall(func):
    old, _CALL[0] = _CALL[0], func
    return old


class errstate(contextlib.ContextDecorator):  # noqa: N801  (NumPy's name)
    """NumPy's errstate: seterr(**kwargs) inside the with block (or the decorated function), the
    previous settings restored after; `call` sets the error callback. No effect on results."""

    def __init__(self, *, call=None, all=None, divide=None, over=None, under=None,  # noqa: A002
                 invalid=None):
        self._call, self._kw = call, dict(all=all, divide=divide, over=over, under=under,
                                          invalid=invalid)
        self._saved = None

    def __enter__(self):
        self._saved = (seterr(**self._kw), seterrcall(self._call) if self._call is not None else None)
        return self

    def __exit__(self, *exc):
        old, oldcall = self._saved
        _STATE.update(old)
        if self._call is not None:
            seterrcall(oldcall)
        return False


def _host(v):
    return v.numpy() if isinstance(v, Tensor) else v


class vectorize:  # noqa: N801  (NumPy's name)
    """NumPy's vectorize: pyfunc applied to each element of its broadcast arguments (tensors
    are read on the host), by NumPy's vectorize (its otypes, excluded, signature and cache
    arguments); the results as tensors on the first tensor argument's device. A Python loop,
    as NumPy's: for speed, write the function with tensor ops instead."""

    def __init__(self, pyfunc=None, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None):
        if pyfunc is None:   # used as @vectorize(otypes=...)
            self._partial = dict(otypes=otypes, doc=doc, excluded=excluded, cache=cache,
                                 signature=signature)
            self._np = None
            return
        self._partial = None
        self.pyfunc = pyfunc
        self._np = np.vectorize(pyfunc, otypes=otypes, doc=doc, excluded=excluded, cache=cache,
                                signature=signature)
        functools.update_wrapper(self, pyfunc)

    def __call__(self, *args, **kwargs):
        if self._np is None:
            return vectorize(args[0], **self._partial)
        dev = next((a.device for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)),
                   None)
        r = self._np(*[_host(a) for a in args], **{k: _host(v) for k, v in kwargs.items()})

        def back(v):
            return asarray(np.ascontiguousarray(v), device=dev)
        return tuple(back(v) for v in r) if isinstance(r, tuple) else back(r)


def _scalar(self: dt.DType, value=0) -> Tensor:
    """NumPy's scalar constructors (np.float32(1.5), np.uint8(3), np.int64(x)): value as a
    tensor of this dtype, 0-d for a scalar (a string is parsed as the dtype's kind)."""
    if isinstance(value, str):
        parse = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[self.kind]
        value = parse(value.strip()) if self.kind != "b" else bool(value)
    return asarray(value, dtype=self)


dt.DType.__call__ = _scalar   # (here, not in dtypes.py, which the conversions import)
ndarray = Tensor
