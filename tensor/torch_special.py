"""PyTorch's igamma / igammac (the regularized lower and upper incomplete gamma functions, SciPy's
gammainc / gammaincc) and mvlgamma (the multivariate log-gamma), in tensor ops.

igamma(a, x) = P(a, x) = gamma(a, x) / Gamma(a), igammac = Q = 1 - P, evaluated in float64: the
power series of P where x < a + 1, the continued fraction of Q (modified Lentz) elsewhere, each
iterated until every element has converged (checked on the host every few steps), so about
1e-13 relative accuracy for a up to ~1e5; from a = 1e5 on (where the iterations would need
~sqrt(a) steps and stopped early: P(1e10, 1e10) came out 0.079 instead of 0.5) Temme's uniform
asymptotic expansion with its first two terms, about 1e-13 there too. Edge values follow
PyTorch's: P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1, P(inf, x) = 0, NaN for a < 0, x < 0,
a = x = 0 or a = x = inf.

Differentiable with respect to x (dP/dx = x^(a-1) e^-x / Gamma(a)) to the second order (third
derivatives come out 0), not a (as PyTorch: a gradient for a is refused with NotImplementedError).

>>> import tensor as T
>>> round(T.igamma(T.tensor(1.0), T.tensor(2.0)).item(), 12)   # 1 - e^-2
0.864664716763
"""
from __future__ import annotations

import math

from . import _hook
from . import dtypes as dt
from . import torch_extra2 as X2
from ._tensor import Tensor
from .convert import asarray
from .creation import full_like
from .optable import T as P  # tensor's public (recorded) functions

_pub = X2._pub
_TINY = 1e-300
_EPS = 2.0 ** -52   # a continued-fraction factor this close to 1 ends it; the series' term / sum
_CHECK_EVERY, _MAX_ITER = 8, 20000


def _operands(a, x, op: str):
    dev = next((v.device for v in (a, x) if isinstance(v, Tensor)), None)
    if dev is None:
        raise TypeError(f"{op}: expects tensors, got {type(a).__name__} and {type(x).__name__}")
    a, x = (v if isinstance(v, Tensor) else asarray(v, device=dev) for v in (a, x))
    if a.device != x.device:
        raise ValueError(f"{op}: tensors are on different devices: {a.device}, {x.device}")
    d = dt.result_type(a, x)
    if d.kind == "c":
        raise TypeError(f"{op}: not defined for complex input ({a.dtype.name}, {x.dtype.name})")
    d = dt.float_of(d) if d.kind != "f" else d
    g = _hook.grad_state
    if a.requires_grad and (g is None or g.grad_enabled or g.fw_level):
        raise NotImplementedError(f"{op}: the derivative with respect to its first argument (a) is not "
                                  "implemented, as PyTorch's; detach a or call it under no_grad")
    a64 = P.astype(a.detach(), dt.float64, False)
    x64 = P.astype(x, dt.float64, False)
    a64, x64 = P.broadcast_arrays(a64, x64)
    return a64, x64, d


def _all(mask: Tensor) -> bool:
    """Whether every element has converged (a host read: the loops check every few steps)."""
    return mask.numel() == 0 or bool(P.all(mask))


def _series(a: Tensor, x: Tensor) -> Tensor:
    """sum_n x^n / (a (a+1) ... (a+n)), for 0 <= x < a + 1 (a > 0)."""
    term = P.reciprocal(a)
    total = term
    an = a
    for i in range(1, _MAX_ITER + 1):
        an = P.add(an, 1.0)
        term = P.multiply(term, P.divide(x, an))
        total = P.add(total, term)
        if i % _CHECK_EVERY == 0 and _all(P.less_equal(P.divide(P.abs(term), P.abs(total)), _EPS / 8)):
            break
    return total


def _fraction(a: Tensor, x: Tensor) -> Tensor:
    """The continued fraction whose product with x^a e^-x / Gamma(a) is Q(a, x), for x >= a + 1."""
    b = P.subtract(P.add(x, 1.0), a)
    c = full_like(x, 1.0 / _TINY)
    d = P.reciprocal(b)
    h = d
    done = P.isnan(h)   # (all False: h is finite, the regular elements' only)
    for i in range(1, _MAX_ITER + 1):
        an = P.multiply(P.subtract(a, i), float(i))   # -i (i - a)
        b = P.add(b, 2.0)
        d = P.add(P.multiply(an, d), b)
        d = P.where(P.less(P.abs(d), _TINY), _TINY, d)
        c = P.add(b, P.divide(an, c))
        c = P.where(P.less(P.abs(c), _TINY), _TINY, c)
        d = P.reciprocal(d)
        delta = P.multiply(d, c)
        # converged elements keep their h: more factors of delta ~ 1 only add rounding
        h = P.where(done, h, P.multiply(h, delta))
        done = P.logical_or(done, P.less_equal(P.abs(P.subtract(delta, 1.0)), _EPS))
        if i % _CHECK_EVERY == 0 and _all(done):
            break
    return h


# Stirling's series of lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2): 1/(12a) - 1/(360a^3) ...
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)
_BIG_A = 20.0   # past it the series' next term is below 1e-17


def _prefactor(a: Tensor, x: Tensor) -> Tensor:
    """x^a e^-x / Gamma(a) (a > 0, x > 0). For large a as sqrt(a / 2 pi) exp(a (log1p(t) - t) - S(a)),
    t = (x - a) / a and S Stirling's series, which avoids the cancellation of a log x - x - lgamma(a)
    (its terms near 1e3 lose ~1e-13 absolute)."""
    direct = P.exp(P.subtract(P.subtract(P.multiply(a, P.log(x)), x), P.lgamma(a)))
    big = P.greater_equal(a, _BIG_A)
    ab = P.where(big, a, _BIG_A)
    t = P.divide(P.subtract(x, ab), ab)
    inv2 = P.reciprocal(P.multiply(ab, ab))
    ser = full_like(ab, _STIRLING[-1])
    for c in _STIRLING[-2::-1]:
        ser = P.add(P.multiply(ser, inv2), c)
    ser = P.divide(ser, ab)
    expo = P.subtract(P.multiply(ab, P.subtract(P.log1p(t), t)), ser)
    stirling = P.multiply(P.sqrt(P.divide(ab, 2 * math.pi)), P.exp(expo))
    return P.where(big, stirling, direct)


def _upper_small(a: Tensor, x: Tensor) -> Tensor:
    """Q(a, x) for 0 < a < 1, 0 < x <= 1.5 without cancellation: with u = x^a / Gamma(a + 1),
    P = u (1 + S), S = sum_{n>=1} (-x)^n a / (n! (a + n)) (the series of gamma(a, x) in powers of
    x), so Q = -expm1(log u) - u S; 30 terms reach x^n / n! < 1e-20."""
    log_u = P.subtract(P.multiply(a, P.log(x)), P.lgamma(P.add(a, 1.0)))
    term = full_like(x, 1.0)   # (-x)^n / n!
    total = P.multiply(x, 0.0)
    for n in range(1, 31):
        term = P.multiply(term, P.divide(P.negative(x), float(n)))
        total = P.add(total, P.divide(P.multiply(term, a), P.add(a, float(n))))
    return P.subtract(P.negative(P.expm1(log_u)), P.multiply(P.exp(log_u), total))


# Temme's expansion: Q(a, x) = erfc(eta sqrt(a / 2)) / 2 + e^(-a eta^2 / 2) / sqrt(2 pi a) (C0(eta)
# + C1(eta) / a + ...), with lam = x / a, eta = sign(lam - 1) sqrt(2 (lam - 1 - log lam)),
# C0 = 1 / (lam - 1) - 1 / eta and C1 = 1 / eta^3 - 1 / (lam - 1)^3 - 1 / (lam - 1)^2 - 1 / (12 (lam - 1)).
# Both cancel badly near eta = 0; there (|eta| <= 1/2) they come from these polynomials in eta
# (ascending powers; Chebyshev fits on [-1/2, 1/2] made with mpmath, error below 1e-17). The
# next term, C2 / a^2 ~ 1e-3 / a^2, is below 1e-13 of the result from _TEMME_A on.
_TEMME_A = 1e5
_C0 = (-0.33333333333333333, 0.083333333333333333, -0.014814814814817331, 0.0011574074074074198,
       0.00035273368622823026, -0.00017875514403377316, 3.9192627908869864e-5, -2.1854484873977422e-6,
       -1.8540177632753458e-6, 8.2967081068994443e-7, -1.7692183018860628e-7, 6.7103595171062433e-9,
       1.1034174615399223e-8, -4.3930248959572795e-9)
_C1 = (-0.0018518518518518599, -0.0034722222222222191, 0.0026455026455058011, -0.00099022633744977166,
       0.00020576131667066456, -4.0187749444285564e-7, -1.8098545501429988e-5, 7.6491590540303023e-6,
       -1.6121451373718676e-6, 4.6684138138429174e-9, 1.3818429286686968e-7, -5.7650386481223233e-8,
       1.1030246554223966e-8, 3.4615835645140127e-10)


def _poly(coeffs, e: Tensor) -> Tensor:
    r = full_like(e, coeffs[-1])
    for c in coeffs[-2::-1]:
        r = P.add(P.multiply(r, e), c)
    return r


def _temme(a: Tensor, x: Tensor, upper: bool) -> Tensor:
    """P(a, x) (or Q) for large a (>= _TEMME_A) by Temme's expansion (see _C0)."""
    mu = P.divide(P.subtract(x, a), a)   # lam - 1
    # d = mu - log1p(mu) = eta^2 / 2 without cancellation for |mu| < 1/2: with w = mu / (2 + mu),
    # log1p(mu) = 2 atanh(w), so d = mu w - 2 w^3 (1/3 + w^2/5 + w^4/7 + ...), w^2 < 1/25
    w = P.divide(mu, P.add(mu, 2.0))
    w2 = P.multiply(w, w)
    s = full_like(w, 1.0 / 27)
    for k in range(11, -1, -1):
        s = P.add(P.multiply(s, w2), 1.0 / (2 * k + 3))
    near_d = P.subtract(P.multiply(mu, w), P.multiply(P.multiply(w, w2), P.multiply(s, 2.0)))
    d = P.where(P.less(P.abs(mu), 0.5), near_d, P.subtract(mu, P.log1p(mu)))
    eta = P.multiply(P.sign(mu), P.sqrt(P.multiply(P.maximum(d, 0.0), 2.0)))
    near = P.less_equal(P.abs(eta), 0.5)
    en = P.where(near, eta, 0.0)
    ef = P.where(near, 1.0, eta)
    mf = P.reciprocal(P.where(near, 1.0, mu))   # 1 / (lam - 1)
    c0 = P.where(near, _poly(_C0, en), P.subtract(mf, P.reciprocal(ef)))
    far1 = P.subtract(P.reciprocal(P.multiply(P.multiply(ef, ef), ef)),
                      P.multiply(mf, P.add(P.multiply(mf, P.add(mf, 1.0)), 1.0 / 12)))
    c1 = P.where(near, _poly(_C1, en), far1)
    r = P.multiply(P.divide(P.exp(P.negative(P.multiply(a, d))), P.sqrt(P.multiply(a, 2 * math.pi))),
                   P.add(c0, P.divide(c1, a)))
    z = P.multiply(eta, P.sqrt(P.multiply(a, 0.5)))
    if upper:
        return P.add(P.multiply(P.erfc(z), 0.5), r)
    return P.subtract(P.multiply(P.erfc(P.negative(z)), 0.5), r)


def _lower_upper(a: Tensor, x: Tensor, upper: bool) -> Tensor:
    """P(a, x) (or Q when upper) in float64, a and x (float64, one shape) free of the graph."""
    nan = P.logical_or(P.logical_or(P.isnan(a), P.isnan(x)), P.logical_or(P.less(a, 0), P.less(x, 0)))
    nan = P.logical_or(nan, P.logical_and(P.equal(a, 0), P.equal(x, 0)))
    nan = P.logical_or(nan, P.logical_and(P.isinf(a), P.isinf(x)))
    one = P.logical_or(P.logical_and(P.equal(a, 0), P.greater(x, 0)), P.isinf(x))   # P = 1
    zero = P.logical_or(P.equal(x, 0), P.isinf(a))                                  # P = 0
    regular = P.logical_not(P.logical_or(nan, P.logical_or(one, zero)))
    big = P.logical_and(regular, P.greater_equal(a, _TEMME_A))
    regular = P.logical_and(regular, P.logical_not(big))   # the iterations' elements
    a_ = P.where(regular, a, 1.0)
    x_ = P.where(regular, x, 1.0)
    ser = P.less(x_, P.add(a_, 1.0))
    pre = _prefactor(a_, x_)
    p_ser = P.multiply(pre, _series(a_, P.where(ser, x_, 0.0)))
    q_cf = P.multiply(pre, _fraction(a_, P.where(ser, P.add(a_, 1.0), x_)))
    if upper:
        # a < 1, x <= 1.5: P is near 1, so 1 - P would lose Q's digits; Q directly instead
        small = P.logical_and(P.less(a_, 1.0), P.less_equal(x_, 1.5))
        q_ser = P.where(small, _upper_small(P.where(small, a_, 0.5), P.where(small, x_, 1.0)),
                        P.subtract(1.0, p_ser))
        r = P.where(ser, q_ser, q_cf)
        edge_one, edge_zero = 0.0, 1.0
    else:
        r = P.where(ser, p_ser, P.subtract(1.0, q_cf))
        edge_one, edge_zero = 1.0, 0.0
    r = P.where(big, _temme(P.where(big, a, _TEMME_A), P.where(big, x, _TEMME_A), upper), r)
    r = P.where(one, edge_one, P.where(zero, edge_zero, r))
    return P.where(nan, math.nan, r)


def _incomplete(a, x, op: str, upper: bool) -> Tensor:
    a64, x64, d = _operands(a, x, op)
    val = _lower_upper(a64, x64.detach(), upper)
    if x64.requires_grad:
        # the value plus a term that is zero but whose first two derivatives in x are P's: with
        # D = dP/dx and s = x - x.detach() (0), D(x) s - D'(x) s^2 / 2, the start of the Taylor
        # series of the integral of D from x - s to x. Where D or D' is not finite (x = 0) the
        # term is dropped (a zero gradient there).
        xs = P.where(P.greater(x64.detach(), 0), x64, 1.0)
        dens = P.exp(P.subtract(P.subtract(P.multiply(P.subtract(a64, 1.0), P.log(xs)), xs), P.lgamma(a64)))
        slope = P.multiply(dens, P.subtract(P.divide(P.subtract(a64, 1.0), xs), 1.0))   # D'
        s = P.subtract(x64, x64.detach())
        step = P.subtract(P.multiply(dens, s), P.multiply(P.multiply(slope, P.multiply(s, s)), 0.5))
        ok = P.logical_and(P.isfinite(slope.detach()), P.greater(x64.detach(), 0))
        step = P.where(ok, step, 0.0)
        val = P.subtract(val, step) if upper else P.add(val, step)
    return P.astype(val, d, False)


@_pub("igamma")
def igamma(input, other) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other) (SciPy's gammainc)."""
    return _incomplete(input, other, "igamma", False)


@_pub("igammac")
def igammac(input, other) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (SciPy's gammaincc)."""
    return _incomplete(input, other, "igammac", True)


@_pub("mvlgamma")
def mvlgamma(input, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: sum_{i<p} lgamma(input - i/2) + p(p-1)/4 log(pi);
    every element must exceed (p - 1) / 2 (a ValueError otherwise, as PyTorch's)."""
    x = X2._tensor(input, "mvlgamma")
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise ValueError(f"mvlgamma: p must be an int >= 1, got {p!r}")
    if x.dtype.kind not in "fiub":
        raise TypeError(f"mvlgamma: expects a real tensor, got {x.dtype.name}")
    if x.dtype.kind != "f":
        x = P.astype(x, dt.get_default_dtype(), False)
    if x.numel() and not bool(P.all(P.greater(x.detach(), (p - 1) / 2))):
        raise ValueError(f"mvlgamma: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    r = P.lgamma(x)
    for i in range(1, p):
        r = P.add(r, P.lgamma(P.subtract(x, i / 2)))
    return P.add(r, p * (p - 1) / 4 * math.log(math.pi))
