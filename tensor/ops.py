"""Public elementwise functions, generated from the op table, plus a few composites.

>>> import tensor as T
>>> T.exp(T.zeros(2)).tolist(), T.maximum(T.arange(3), 1).tolist()
([1.0, 1.0], [1, 1, 2])
"""
from __future__ import annotations

import operator

import numpy as np

from . import dtypes as dt
from . import elementwise as ew
from .convert import asarray
from .optable import BINARY, OPS, UNARY


def _ones(name):  # an example input the op accepts: ints for bitwise/shift ops, else floats
    return "T.ones({}, dtype='int64')" if "f" not in OPS[name].kinds else "T.ones({})"


# the table's ops NumPy lacks that PyTorch has at its top level (the others: torch.special's)
_TORCH_TOP = {"erf", "erfc", "erfinv", "sigmoid", "lgamma", "digamma", "rsqrt", "frac", "xlogy"}


def _ref(name: str) -> str:
    """Whose function the op follows, for its docstring."""
    if hasattr(np, name):
        return f"NumPy's `numpy.{name}`"
    return f"PyTorch's `torch.{'' if name in _TORCH_TOP else 'special.'}{name}`"


def _make_unary(name, doc_ref):
    def f(x, out=None):
        return ew.unary(name, x, out=out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as {doc_ref}.\n\n>>> import tensor as T\n" \
                f">>> T.{name}({_ones(name).format(2)}).shape\n(2,)\n"
    return f


def _make_binary(name, doc_ref):
    def f(a, b, out=None):
        return ew.binary(name, a, b, out=out)
    f.__name__ = f.__qualname__ = name
    args = f"{_ones(name).format(2)}, {_ones(name).format('(3, 1)')}"
    f.__doc__ = f"Elementwise {name} with broadcasting, as {doc_ref}.\n\n" \
                f">>> import tensor as T\n>>> T.{name}({args}).shape\n(3, 2)\n"
    return f


FUNCS = {}
for _op in UNARY:
    FUNCS[_op.name] = _make_unary(_op.name, _ref(_op.name))
for _op in BINARY:
    FUNCS[_op.name] = _make_binary(_op.name, _ref(_op.name))
for _op in UNARY + BINARY:
    for _al in _op.aliases:
        FUNCS[_al] = FUNCS[_op.name]
globals().update(FUNCS)


def round(x, decimals: int = 0, out=None):  # noqa: A001 - NumPy's name
    """Round half to even, as NumPy's round/around (and with its arithmetic, so results match
    bit for bit): x * 10**decimals is rounded and scaled back (divide first for negative
    decimals). Integers come back unchanged for decimals >= 0; negative decimals round them in
    float64 and cast back.

    >>> import tensor as T
    >>> T.round(T.tensor([0.5, 1.5, 2.25]), 1).tolist(), T.round(T.tensor([15, 25]), -1).tolist()
    ([0.5, 1.5, 2.2], [20, 20])
    """
    x = ew.as_tensor(x)
    try:
        decimals = operator.index(decimals)   # (1.5 rounded to 1.2333 places, silently)
    except TypeError:
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}") from None
    is_int = x.dtype.kind in "iu"
    if is_int and decimals >= 0:
        return x.copy() if out is None else ew._finish("round", x, out)
    if decimals == 0:
        return ew.unary("rint", x, out=out)
    if x.dtype.kind == "b":
        raise TypeError("round: decimals != 0 is not supported for bool tensors (as NumPy)")
    if x.dtype.kind == "c":   # the parts one by one (a complex product by 10**d made inf * 0)
        from .views import view_as_complex, view_as_real
        r = view_as_complex(round(view_as_real(x), decimals))
        return r if out is None else ew._finish("round", r, out)
    if decimals > 308:   # 10**decimals is past float64: every float is already rounded there
        return x.copy() if out is None else ew._finish("round", x, out)
    if decimals < -308:  # every finite value rounds to (signed) zero (NumPy: NaN, from inf / inf)
        r = ew.binary("multiply", x, 0.0)
    else:
        f = 10.0 ** (decimals if decimals > 0 else -decimals)  # not abs(): this module's abs is the op
        scale, unscale = ("multiply", "true_divide") if decimals > 0 else ("true_divide", "multiply")
        r = ew.binary(unscale, ew.unary("rint", ew.binary(scale, x, f)), f)
    if is_int:
        r = ew.astype(r, x.dtype)
    return r if out is None else ew._finish("round", r, out)


around = round


def clip(x, min=None, max=None, out=None, a_min=None, a_max=None):  # noqa: A002
    """Limit values to [min, max] (either may be None; both None: a copy of x), as the array
    API standard's clip; NumPy's a_min / a_max are accepted for min / max (not keyword-only,
    so autograd records a tensor bound given either way).

    >>> import tensor as T
    >>> T.clip(T.tensor([1, 5, 9]), min=2, max=6).tolist()
    [2, 5, 6]
    """
    a_min, a_max = bounds(min, max, a_min, a_max)
    if out is not None:   # checked as clip's (a tensor, writable, same_kind) before either step
        ew._check_out_first("clip", out)
        xt = x if isinstance(x, ew.Tensor) else asarray(x)
        ew._check_out_type("clip", out, dt.result_type(*(v for v in (xt, a_min, a_max) if v is not None)),
                           xt.device)
    if a_min is None and a_max is None:
        xt = x if isinstance(x, ew.Tensor) else asarray(x)
        return ew.copy(xt) if out is None else ew._finish("clip", xt, out)
    if isinstance(x, ew.Tensor) and x.dtype.kind in "iu":
        # NumPy 2: a Python int bound past the dtype's range that cannot bind is no bound
        # (int8 clip(-1000, 1000) is fine); one that would bind still raises OverflowError.
        lo, hi = dt.iinfo_bounds(x.dtype)
        if _is_pyint(a_min) and a_min < lo:
            a_min = lo
        if _is_pyint(a_max) and a_max > hi:
            a_max = hi
    r = x
    if a_min is not None:
        r = ew.binary("maximum", r, a_min, out=None if a_max is not None else out)
    if a_max is not None:
        r = ew.binary("minimum", r, a_max, out=out)
    return r


clamp = clip


def bounds(lo, hi, a_min, a_max) -> tuple:
    """clip's (lower, upper) bound from the standard's min/max or NumPy's a_min/a_max."""
    if a_min is not None:
        if lo is not None:
            raise TypeError("clip: give min or a_min, not both")
        lo = a_min
    if a_max is not None:
        if hi is not None:
            raise TypeError("clip: give max or a_max, not both")
        hi = a_max
    return lo, hi


def _is_pyint(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def __getattr__(name):
    raise AttributeError(f"module 'tensor.ops' has no attribute {name!r}")
