"""Public elementwise functions, generated from the op table, plus a few composites.

>>> import tensor as T
>>> T.exp(T.zeros(2)).tolist(), T.maximum(T.arange(3), 1).tolist()
([1.0, 1.0], [1, 1, 2])
"""
from __future__ import annotations

from . import elementwise as ew
from .optable import BINARY, UNARY


def _make_unary(name, doc_ref):
    def f(x, out=None):
        return ew.unary(name, x, out=out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as NumPy's `{doc_ref}`.\n\n>>> import tensor as T\n" \
                f">>> T.{name}(T.ones(2)).shape\n(2,)\n"
    return f


def _make_binary(name, doc_ref):
    def f(a, b, out=None):
        return ew.binary(name, a, b, out=out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting, as NumPy's `{doc_ref}`.\n\n" \
                f">>> import tensor as T\n>>> T.{name}(T.ones(2), T.ones((3, 1))).shape\n(3, 2)\n"
    return f


FUNCS = {}
for _op in UNARY:
    FUNCS[_op.name] = _make_unary(_op.name, f"numpy.{_op.name}")
for _op in BINARY:
    FUNCS[_op.name] = _make_binary(_op.name, f"numpy.{_op.name}")
for _op in UNARY + BINARY:
    for _al in _op.aliases:
        FUNCS[_al] = FUNCS[_op.name]
globals().update(FUNCS)


def round(x, decimals: int = 0, out=None):  # noqa: A001 - NumPy's name
    """Round half to even (NumPy's round/around); decimals scales by 10**decimals first."""
    if decimals == 0:
        return ew.unary("rint", x, out=out)
    x = ew.as_operand(x)
    if x.dtype.kind != "f":
        if decimals >= 0:
            return x.copy() if out is None else ew._finish("round", x, out)
        raise ValueError("round: negative decimals on integer tensors are not supported")
    s = 10.0 ** decimals
    return ew.binary("true_divide", ew.unary("rint", ew.binary("multiply", x, s)), s, out=out)


around = round


def clip(x, a_min=None, a_max=None, out=None):
    """Limit values to [a_min, a_max] (either may be None), as NumPy's clip."""
    if a_min is None and a_max is None:
        raise ValueError("clip: at least one of a_min and a_max must be given")
    r = x
    if a_min is not None:
        r = ew.binary("maximum", r, a_min, out=None if a_max is not None else out)
    if a_max is not None:
        r = ew.binary("minimum", r, a_max, out=out)
    return r


clamp = clip


def __getattr__(name):
    raise AttributeError(f"module 'tensor.ops' has no attribute {name!r}")
