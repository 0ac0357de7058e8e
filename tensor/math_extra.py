"""Elementwise math not covered elsewhere, built from the public (recorded) ops, so autograd
records every step and they need no derivative rule of their own (public.py's COMPOSITE):
NumPy's ldexp, float_power, modf, frexp, nan_to_num, isneginf, isposinf, isreal, iscomplex and
PyTorch's logit. (The table's sgn, fix, degrees and radians are aliases: tensor/optable.py.)

>>> import tensor as T
>>> [t.tolist() for t in T.frexp(T.asarray([8.0, -0.375, 0.0]))]
[[0.5, -0.75, 0.0], [4, -1, 0]]
>>> T.ldexp(T.asarray([0.75]), 3).tolist()
[6.0]
"""
from __future__ import annotations

import math

from . import dtypes as dt
from ._tensor import Tensor, tracked
from .array_api import finfo
from .axes import as_int
from .convert import asarray
from .creation import ones_like, zeros_like
from .optable import OPS, loop_dtype
from .optable import T as P  # tensor's public (recorded) functions


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else asarray(x)


def _real_float(x: Tensor, name: str) -> Tensor:
    """x in NumPy's float-only loop dtype (int8 -> float16, int64 -> float64); complex refused."""
    if x.dtype.kind == "c":
        raise TypeError(f"{name}: not supported for complex tensors ({x.dtype.name})")
    ld = loop_dtype(OPS["erf"], x.dtype)
    return x if ld is x.dtype else P.astype(x, ld)


def _scale2(w: Tensor, e: Tensor) -> Tensor:
    """w * 2**e for integer-valued float e: in float64 for the narrower floats (exact there, so
    one rounding to w's dtype); in float64 itself in three factors, none of which overflows."""
    if w.dtype is not dt.float64:
        e = P.astype(P.clip(e, -400, 400), dt.float64)
        return P.astype(P.astype(w, dt.float64) * P.exp2(e), w.dtype)
    e = P.astype(P.clip(e, -2200, 2200), dt.float64)
    e1 = P.trunc(e / 3.0)
    e2 = P.trunc((e - e1) / 2.0)
    return w * P.exp2(e1) * P.exp2(e2) * P.exp2(e - e1 - e2)


def ldexp(x1, x2) -> Tensor:
    """x1 * 2**x2 for an integer x2 (NumPy's ldexp: x1's float dtype; a float x2 is a
    TypeError). Exact but for results below the smallest normal float64, which may round
    twice (one ulp of a subnormal)."""
    x1, x2 = _t(x1), _t(x2)
    if x2.dtype.kind not in "biu" or x2.dtype is dt.uint64:   # NumPy: no safe cast to int64
        raise TypeError(f"ldexp: the exponent must be an integer tensor (not uint64), got "
                        f"{x2.dtype.name}")
    return _scale2(_real_float(x1, "ldexp"), x2)


def float_power(x1, x2) -> Tensor:
    """x1 ** x2 in float64, or complex128 when either is complex (NumPy's float_power)."""
    cplx = any(isinstance(v, complex) or (isinstance(v, Tensor) and v.dtype.kind == "c")
               for v in (x1, x2))
    d = dt.complex128 if cplx else dt.float64
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        x1 = asarray(x1, dtype=d)
    a, b = (P.astype(v, d) if isinstance(v, Tensor) and v.dtype is not d else v for v in (x1, x2))
    return P.power(a, b)


def logit(x, eps: float | None = None) -> Tensor:
    """log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps is given (PyTorch's logit,
    whose gradient is 0 outside that interval and passes on its ends)."""
    z = _real_float(_t(x), "logit")
    if eps is not None:
        z = P.where(z < eps, eps, P.where(z > 1.0 - eps, 1.0 - eps, z))
    return P.log(z / (1.0 - z))


def isneginf(x) -> Tensor:
    """x == -inf, elementwise (integers: all False; complex: TypeError, as NumPy and PyTorch)."""
    x = _t(x)
    if x.dtype.kind == "c":
        raise TypeError(f"isneginf: not supported for complex tensors ({x.dtype.name})")
    return P.logical_and(P.isinf(x), P.signbit(x))


def isposinf(x) -> Tensor:
    """x == +inf, elementwise (integers: all False; complex: TypeError)."""
    x = _t(x)
    if x.dtype.kind == "c":
        raise TypeError(f"isposinf: not supported for complex tensors ({x.dtype.name})")
    return P.logical_and(P.isinf(x), P.logical_not(P.signbit(x)))


def isreal(x) -> Tensor:
    """Whether each element has a zero imaginary part (all True for a real dtype)."""
    x = _t(x)
    if x.dtype.kind == "c":
        return P.equal(P.imag(x), 0)
    return ones_like(x, dtype=dt.bool_)


def iscomplex(x) -> Tensor:
    """Whether each element has a nonzero imaginary part (all False for a real dtype)."""
    x = _t(x)
    if x.dtype.kind == "c":
        return P.not_equal(P.imag(x), 0)
    return zeros_like(x, dtype=dt.bool_)


def _replace_nonfinite(x: Tensor, nan, posinf, neginf) -> Tensor:
    fi = finfo(x.dtype)
    hi = fi.max if posinf is None else posinf
    lo = fi.min if neginf is None else neginf
    if posinf is None and neginf is None and not tracked(x):
        # the default infinities: clipping to the finite range replaces them and moves no
        # finite value (3 passes where the selects below take 6; 3.4x NumPy's time)
        return P.where(P.isnan(x), nan, P.clip(x, lo, hi))
    # Each where keeps a tensor of x's dtype as one branch: two Python-float branches would
    # build a float64 tensor and promote the result.
    y = P.where(P.isnan(x), nan, x)
    y = P.where(isposinf(x), hi, y)
    return P.where(isneginf(x), lo, y)


def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None, *,
               copy: bool = True) -> Tensor:
    """NaN -> nan, +inf -> posinf, -inf -> neginf (default: the dtype's largest and smallest
    finite values), in both parts of a complex tensor; integers and bools come back as a copy
    (NumPy's and PyTorch's; copy=False writes the result into x, as NumPy)."""
    x = _t(x)
    if x.dtype.kind == "c":
        parts = [_replace_nonfinite(p, nan, posinf, neginf) for p in (P.real(x), P.imag(x))]
        r = P.complex(*parts)
    elif x.dtype.kind == "f":
        r = _replace_nonfinite(x, nan, posinf, neginf)
    else:
        r = P.copy(x)
    if not copy:
        P.copy_(x, r)
        return x
    return r


def modf(x) -> tuple[Tensor, Tensor]:
    """(fractional part, integral part), both with x's sign (NumPy's modf: modf(-inf) is
    (-0.0, -inf)); the fractional part's derivative is 1, the integral part's 0."""
    x = _real_float(_t(x), "modf")
    i = P.trunc(x)
    f = x - i
    zero = P.logical_or(f == 0, P.isinf(x))
    return P.where(zero, P.copysign(0.0, x), f), i


def frexp(x) -> tuple[Tensor, Tensor]:
    """(mantissa, exponent): x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1, exponent int32
    (NumPy's and PyTorch's; 0, inf and NaN give (x, 0)). The mantissa's derivative is 2**-e."""
    x = _real_float(_t(x), "frexp")
    w = x if x.dtype is dt.float64 else P.astype(x, dt.float32)   # 16-bit floats: exact in float32
    ok = P.logical_and(P.isfinite(w), w != 0)
    a = P.abs(P.where(ok, w, 1.0))
    e = P.floor(P.log2(a if w.dtype is dt.float64 else P.astype(a, dt.float64))) + 1.0
    m = P.abs(_scale2(P.where(ok, w, 1.0), -e))        # log2 may round across a power of two
    e = e + (m >= 1.0) * 1.0 - (m < 0.5) * 1.0
    e = P.where(ok, e, 0.0)
    mant = _scale2(w, -e)
    return (mant if mant.dtype is x.dtype else P.astype(mant, x.dtype)), P.astype(e, dt.int32)


def polygamma(n: int, x) -> Tensor:
    """PyTorch's polygamma: the n-th derivative of digamma, (-1)^(n+1) n! zeta(n + 1, x) for
    n >= 1 (differentiable in x through zeta); digamma for n = 0.

    >>> import tensor as T
    >>> round(T.polygamma(1, T.asarray([1.0])).item(), 12)   # pi^2 / 6
    1.644934066848
    """
    n = as_int(n, "n", "polygamma")
    if n < 0:
        raise ValueError(f"polygamma: n must be non-negative, got {n}")
    x = _real_float(_t(x), "polygamma")
    if n == 0:
        return P.digamma(x)
    # n! overflows a double past 170 (the values overflow too, as PyTorch's); the exact factorial
    # of a huge n was computed first and took forever
    scale = float(math.factorial(n)) if n <= 170 else math.inf
    return P.zeta(float(n + 1), x) * (scale if n % 2 else -scale)


COMPOSITES: dict = {f.__name__: f for f in (
    ldexp, float_power, logit, isneginf, isposinf, isreal, iscomplex, nan_to_num, modf, frexp,
    polygamma)}
# functions only: NumPy has no ndarray.modf / iscomplex, PyTorch no Tensor.modf / iscomplex;
# Tensor.polygamma(n) takes n after self (METHODS)
NOT_METHODS: set = {"modf", "iscomplex", "polygamma"}
METHODS: dict = {"polygamma": lambda self, n: polygamma(n, self)}
