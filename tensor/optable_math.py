"""The op table's special and NaN-aware math (NumPy's and PyTorch's): exp2, cbrt, erfc, erfinv,
lgamma, digamma, the modified Bessel functions i0, i0e, i1, i1e, rsqrt, frac, spacing,
deg2rad / rad2deg, bitwise_count; zeta, gcd, lcm, fmax, fmin, heaviside, logaddexp2, xlogy.
Entries as tensor/optable.py's (which appends these to UNARY / BINARY); the C helpers they call
are cuda_src/scalar/special.h (erfinv, digamma, the Bessel functions, zeta), scalar/float_ops.h
and intops.h, shared by both devices. Where NumPy has no function, `ref` is this module's own,
in float64 from NumPy and Python's math module, rounded to the float dtype NumPy's float-only
ufuncs would use.

>>> import tensor as T
>>> T.gcd(T.asarray([12, -18, 0]), 8).tolist()
[4, 2, 8]
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as dt
from .opdefs import _2_SQRTPI, _LN2, NONE, OUT, ZERO, Op, T, X, _f, _float_loop, d1, d2, one_at_zero

_SQRTPI_2 = math.sqrt(math.pi) / 2


def _in_float64(fn):
    """A unary reference: fn over float64 values, rounded to x's float loop dtype."""
    def ref(x):
        x = np.asarray(x)
        ft = _float_loop(x)
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.astype(ft).astype(np.float64))).astype(ft).reshape(x.shape)
    return ref


def _lgamma64(v):
    return np.vectorize(lambda t: math.inf if t <= 0 and (math.isinf(t) or t == math.floor(t))
                        else math.lgamma(t), otypes=[np.float64])(v)


def _digamma64(x):
    """psi by a route of its own: reflection through sin / cos, recurrence to x >= 20, five
    terms of the asymptotic series."""
    x = np.array(x, np.float64, ndmin=1)
    out = np.full(x.shape, np.nan)
    r = np.zeros(x.shape)
    neg = x < 0
    pole = neg & (x == np.floor(x))
    fl = x - np.round(x)
    with np.errstate(all="ignore"):
        r = np.where(neg & ~pole, -np.pi * np.cos(np.pi * fl) / np.sin(np.pi * fl), r)
    y = np.where(neg, 1.0 - x, x)
    for _ in range(25):
        small = y < 20
        r = np.where(small, r - 1.0 / np.where(small, y, 1.0), r)
        y = np.where(small, y + 1.0, y)
    with np.errstate(all="ignore"):
        z = 1.0 / (y * y)
    s = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z / 132))))
    ok = np.isfinite(x) & ~pole & (x != 0)
    out[ok] = (r + np.log(y) - 0.5 / y - s)[ok]
    out[x == np.inf] = np.inf
    out[x == 0] = np.where(np.signbit(x[x == 0]), np.inf, -np.inf)
    return out


def _erfinv64(y):
    """Newton's method from Winitzki's approximation, on erf (|y| <= 1/2) or erfc."""
    y = np.array(y, np.float64, ndmin=1)
    ay = np.abs(y)
    a = 0.147
    ln = np.log1p(-np.minimum(ay, 0.999999) ** 2)
    x = np.sqrt(np.sqrt((2 / (np.pi * a) + ln / 2) ** 2 - ln / a) - (2 / (np.pi * a) + ln / 2))
    erf, erfc = (np.vectorize(f, otypes=[np.float64]) for f in (math.erf, math.erfc))
    t = 1.0 - ay
    for _ in range(60):
        f = np.where(ay <= 0.5, erf(x) - ay, t - erfc(x))
        x = x - f / (_2_SQRTPI * np.exp(-x * x))
    x = np.where(ay == 1, np.inf, np.where(ay > 1, np.nan, x))
    return np.where(np.isnan(y), y, np.where(y == 0, y, np.copysign(x, y)))


def _i0_ref(x):
    """np.i0 in float64, in NumPy's result dtype, infinite at +-inf (NumPy's gives NaN)."""
    x = np.asarray(x)
    want = np.i0(np.zeros(1, x.dtype)).dtype
    with np.errstate(all="ignore"):
        r = np.i0(x.astype(np.float64))
    return np.where(np.isinf(x), np.inf, r).astype(want)


def _bessel_ie64(n: int, x: float) -> float:
    """I_n(x) e^-|x| (n = 0, 1) by a route of their own: the power series below |x| = 1, the
    trapezoidal rule on (1/pi) int_0^pi e^(|x| (cos t - 1)) cos(n t) dt above (periodic and
    analytic: it converges geometrically). Past |x| = 160 the integrand is negligible beyond
    t = 40 / sqrt|x| (e^-800), where it and its derivatives vanish as at the even end t = 0:
    400 points on [0, 40 / sqrt|x|] keep that rate (and the work bounded)."""
    ax = abs(x)
    if math.isnan(x) or math.isinf(x):
        return x if math.isnan(x) else 0.0
    if ax < 1.0:
        h, s, t = ax / 2, 0.0, (ax / 2) ** n / math.factorial(n)
        for k in range(1, 40):
            s += t
            t *= h * h / (k * (k + n))
        r = s * math.exp(-ax)
    else:
        top = min(math.pi, 40.0 / math.sqrt(ax))
        m = 400 if top < math.pi else 48 + int(2 * ax)
        th = np.linspace(0.0, top, m + 1)
        f = np.exp(-2.0 * ax * np.sin(0.5 * th) ** 2) * np.cos(n * th)   # cos t - 1, exactly
        r = float((f.sum() - 0.5 * (f[0] + f[-1])) * top / (m * math.pi))
    return -r if n == 1 and x < 0 else r


def _bessel_ref(n: int, scaled: bool):
    """A reference for i0e / i1 / i1e: NumPy's result dtype of np.i0 (integers: float64)."""
    def ref(x):
        x = np.asarray(x)
        want = np.i0(np.zeros(1, x.dtype)).dtype
        v = x.astype(want).astype(np.float64).ravel()
        out = np.empty(v.shape)
        for i, t in enumerate(v.tolist()):
            r = _bessel_ie64(n, t)
            if not scaled:
                with np.errstate(all="ignore"):   # (inf past |x| ~ 713, as I1 itself)
                    r = t if math.isinf(t) and n == 1 else (
                        math.inf if math.isinf(t) else float(r * np.exp(abs(t))))
            out[i] = r
        with np.errstate(all="ignore"):
            return out.astype(want).reshape(x.shape)
    return ref


_BERN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)   # B_2 .. B_14


def _zeta64(s: float, q: float) -> float:
    """Hurwitz zeta by a route of its own: terms summed to q + k >= 60, then seven terms of
    Euler-Maclaurin's tail (Cephes' and PyTorch's domain: see SX_ZETA)."""
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s == 1:
        return math.inf
    if s < 1 or (q <= 0 and q != np.floor(q) and s != np.floor(s)):
        return math.nan
    if q <= 0 and q == np.floor(q):   # the poles, and -inf
        return math.inf
    if math.isinf(q):
        return 0.0
    if math.isinf(s):   # q^-inf: 1 at q == 1, inf below; NaN above (Cephes', SciPy's, PyTorch's)
        return 1.0 if q == 1 else math.inf if q < 1 else math.nan
    if q < 0:   # its n negative terms by symmetry: (-1)^s (zeta(s, r) - zeta(s, r + n))
        n = math.floor(-q) + 1
        r = -(q + (n - 1))
        neg = _zeta64(s, r) - _zeta64(s, r + n)
        return (neg if s % 2 == 0 else -neg) + _zeta64(s, q + n)
    total, a, s = 0.0, np.float64(q), np.float64(s)   # NumPy's powers overflow to inf
    while a < 60:
        total += a ** -s
        a += 1.0
    total += a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    f = s * a ** (-s - 1)
    for j, b in enumerate(_BERN):
        total += b / math.factorial(2 * j + 2) * f
        f *= (s + 2 * j + 1) * (s + 2 * j + 2) / (a * a)
    return total


def _zeta_ref(a, b):
    with np.errstate(all="ignore"):
        ft = np.arctan2(a, b).dtype
    av, bv = (np.broadcast_to(np.asarray(v, ft).astype(np.float64), np.broadcast_shapes(
        np.shape(a), np.shape(b))) for v in (a, b))
    with np.errstate(all="ignore"):
        out = np.array([_zeta64(x, y) for x, y in zip(av.ravel().tolist(), bv.ravel().tolist())])
        return out.reshape(av.shape).astype(ft)


def _zeta_ds(a, b, y):
    raise NotImplementedError("zeta: the derivative with respect to x (the exponent) is not "
                              "implemented (nor is it in PyTorch); q's is")


def _rsqrt_ref(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return 1 / np.sqrt(x)
    return _in_float64(lambda v: 1 / np.sqrt(v))(x)


def _xlogy_ref(a, b):
    with np.errstate(all="ignore"):
        ft = np.arctan2(a, b).dtype   # a float-only binary ufunc's loop (NEP 50 scalars included)
        # the operands in the loop's dtype first (a Python float too: 1e-149 is 0 in float16)
        a64, b64 = (np.asarray(v, ft).astype(np.float64) for v in (a, b))
        r = np.where(np.isnan(b64), b64, np.where(a64 == 0, 0.0, a64 * np.log(b64)))
    return r.astype(ft)


def _xlogy_da(a, b, y):
    """log b, and 0 where a == 0 and b <= 0 (PyTorch's: xlogy(g, b) masked there); b is read
    as 1 under the mask, so no derivative of this one meets log 0 either."""
    if not hasattr(b, "dtype"):
        from .convert import asarray
        b = asarray(b, dtype=a.dtype, device=a.device)
    mask = T.logical_and(a == 0, b <= 0)
    return T.where(mask, 0.0, T.log(T.where(mask, 1.0, b)))


def _spacing_ref(x):
    """np.spacing, but float16 as float32 / float64: the step away from zero (NumPy's float16
    loop gives +2**-11 for -1.0, the step below |x| with a positive sign)."""
    x = np.asarray(x)
    x = x.astype(_float_loop(x))
    if x.dtype != np.float16:
        return np.spacing(x)
    inf = np.float16(np.inf)
    return np.where(x >= 0, np.nextafter(x, inf) - x, np.nextafter(x, -inf) - x)


def _is_nan(v):
    return T.isnan(v) if hasattr(v, "dtype") else math.isnan(v)


def _nan_max(greater: bool):
    """fmax / fmin: a takes g where it is picked (a > b, or b is NaN), half of it at a tie
    (a == b, as maximum / minimum and PyTorch's fmax / fmin), b the rest. Where one operand is
    NaN the other, picked, takes all of g (PyTorch gives g to both there)."""
    def w(a, b):
        return (a > b if greater else a < b) * 1.0 + (a == b) * 0.5 + _is_nan(b) * 1.0
    return d2(lambda a, b, y: w(a, b), lambda a, b, y: 1.0 - w(a, b), 0, 1)


def _at_zero(a):
    return float(a == 0) if not hasattr(a, "dtype") else (a == 0) * 1.0


UNARY = [
    Op("exp2", 1, "fc", _f("exp2", "sx_cexp2(a)"), np.exp2, domain="exp",
       grad=d1(lambda x, y: y * _LN2, OUT)),
    Op("cbrt", 1, "f", _f("cbrt"), np.cbrt, grad=d1(lambda x, y: 1.0 / (3.0 * (y * y)), OUT)),
    Op("deg2rad", 1, "f", {"f": "SX_DEG2RAD(a)"}, np.deg2rad, aliases=("radians",),
       grad=d1(math.pi / 180, inplace=True)),
    Op("rad2deg", 1, "f", {"f": "SX_RAD2DEG(a)"}, np.rad2deg, aliases=("degrees",),
       grad=d1(180 / math.pi, inplace=True)),
    Op("erfc", 1, "f", _f("erfc"), _in_float64(np.vectorize(math.erfc, otypes=[np.float64])),
       grad=d1(lambda x, y: -_2_SQRTPI * T.exp(-(x * x)), X)),
    Op("erfinv", 1, "f", {"f": "SX_ERFINV(a)"}, _in_float64(_erfinv64), domain="unit",
       grad=d1(lambda x, y: _SQRTPI_2 * T.exp(y * y), OUT)),
    Op("lgamma", 1, "f", _f("lgamma"), _in_float64(_lgamma64), domain="positive",
       grad=d1(lambda x, y: T.digamma(x), X)),
    # its derivative, trigamma: polygamma(1, x) = zeta(2, x)
    Op("digamma", 1, "f", {"f": "SX_DIGAMMA(a)"}, _in_float64(_digamma64), domain="positive",
       grad=d1(lambda x, y: T.zeta(2.0, x), X)),
    # the modified Bessel functions (NumPy's i0 takes integers to float64, and so do the others);
    # i0e, i1e are PyTorch's scaled ones, I(x) e^-|x|. I1' = I0 - I1 / x, 1/2 at 0
    Op("i0", 1, "f", {"f": "SX_I0(a)"}, _i0_ref, int_to=dt.float64, domain="exp",
       grad=d1(lambda x, y: T.i1(x), X)),
    Op("i0e", 1, "f", {"f": "SX_I0E(a)"}, _bessel_ref(0, True), int_to=dt.float64,
       grad=d1(lambda x, y: T.i1e(x) - T.sign(x) * y, X, OUT)),
    Op("i1", 1, "f", {"f": "SX_I1(a)"}, _bessel_ref(1, False), int_to=dt.float64, domain="exp",
       grad=d1(lambda x, y: T.where(x == 0, 0.5, T.i0(x) - y / one_at_zero(x)), X, OUT)),
    Op("i1e", 1, "f", {"f": "SX_I1E(a)"}, _bessel_ref(1, True), int_to=dt.float64,
       grad=d1(lambda x, y: T.where(x == 0, 0.5, T.i0e(x) - y * (T.sign(x) + 1.0 / one_at_zero(x))),
               X, OUT)),
    Op("rsqrt", 1, "fc", {"c": "sx_crsqrt(a)", "f": "1 / SX_F1(sqrt, a)"}, _rsqrt_ref,
       domain="positive", grad=d1(lambda x, y: -0.5 * (y * y * y), OUT)),
    # PyTorch's: x - trunc(x), NaN at +-inf
    Op("frac", 1, "f", {"f": "a - SX_F1(trunc, a)"}, _in_float64(lambda v: v - np.trunc(v)),
       grad=d1(1.0, inplace=True)),
    Op("spacing", 1, "f", {"f": "SX_SPACING(a)", "f16": "sx_spacing_f16(a)",
                           "bf16": "sx_spacing_bf16(a)"}, _spacing_ref, grad=ZERO),
    # NumPy 2's: the 1 bits of |x|, as uint8
    Op("bitwise_count", 1, "biu", {"b": "a", "i": "sx_popcount(SX_UABS(a))", "*": "sx_popcount(a)"},
       np.bitwise_count, out_to=dt.uint8, grad=NONE),
]

BINARY = [
    # Hurwitz's: d/dq zeta(s, q) = -s zeta(s + 1, q); none in s
    Op("zeta", 2, "f", {"f": "SX_ZETA(a, b)"}, _zeta_ref, domain="ge1",
       grad=d2(_zeta_ds, lambda a, b, y: -a * T.zeta(a + 1.0, b), 0, 1)),
    Op("gcd", 2, "iu", {"*": "SX_GCD(a, b)"}, np.gcd, no_bool=True, grad=NONE),
    Op("lcm", 2, "iu", {"*": "SX_LCM(a, b)"}, np.lcm, no_bool=True, grad=NONE),
    # NumPy's NaN-ignoring extremes: the other operand where one is NaN
    Op("fmax", 2, "biuf", {"f": "((a >= b || b != b) ? a : b)", "*": "(a > b ? a : b)"}, np.fmax,
       grad=_nan_max(True)),
    Op("fmin", 2, "biuf", {"f": "((a <= b || b != b) ? a : b)", "*": "(a < b ? a : b)"}, np.fmin,
       grad=_nan_max(False)),
    # b where a == 0: its partial there is 1 (PyTorch has no derivative for heaviside)
    Op("heaviside", 2, "f", {"f": "(a != a ? a : (a == 0 ? b : (a > 0 ? 1 : 0)))"}, np.heaviside,
       grad=d2(0.0, lambda a, b, y: _at_zero(a), 0)),
    Op("logaddexp2", 2, "f", {"f": "SX_LOGADDEXP2(a, b)"}, np.logaddexp2,
       grad=d2(lambda a, b, y: T.sigmoid((a - b) * _LN2), lambda a, b, y: T.sigmoid((b - a) * _LN2),
               0, 1)),
    # PyTorch's: 0 where a == 0 (b 0 or inf too), NaN where b is
    Op("xlogy", 2, "f", {"f": "(b != b ? b : (a == 0 ? 0 : a * SX_F1(log, b)))"}, _xlogy_ref,
       grad=d2(_xlogy_da, lambda a, b, y: a / b, 0, 1)),
]
