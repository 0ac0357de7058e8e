"""log B(a, b) without the cancellation of lgamma(a) + lgamma(b) - lgamma(a + b): for large
arguments those terms are ~a log a and their difference loses everything (StudentT's df = 1e15 in
float64, or 1e6 in float32, came out wrong by units). Stirling's series takes the large parts out
analytically; what is left is well conditioned."""
from __future__ import annotations

import math

from . import _ops as T

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_BIG = 30.0   # from here the series' next term (1 / (1188 x^9)) is below float64 rounding


def _stirling_error(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), for x > 0."""
    big = x >= _BIG
    xb = T.where(big, x, _BIG)
    r = 1 / xb
    r2 = r * r
    series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 / 1680)))
    xs = T.where(big, 1.0, x)   # (the direct form only where it is exact enough)
    direct = T.lgamma(xs) - ((xs - 0.5) * T.log(xs) - xs + _HALF_LOG_2PI)
    return T.where(big, series, direct)


def _log_share(a, total, other):
    """log(a / total) for total = a + other: log1p(-other / total) where a dominates (the ratio is
    then close to 1 and its log small)."""
    return T.where(a < other, T.log(a / total), T.log1p(-other / total))


def lbeta(a, b):
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b) for a, b > 0, accurate for large ones."""
    if not isinstance(a, T.Tensor):   # (a number takes the other's dtype: where() of floats is float64)
        a = T.full((), a, dtype=b.dtype, device=b.device)
    if not isinstance(b, T.Tensor):
        b = T.full((), b, dtype=a.dtype, device=a.device)
    total = a + b
    return (_HALF_LOG_2PI + (a - 0.5) * _log_share(a, total, b) + (b - 0.5) * _log_share(b, total, a)
            - 0.5 * T.log(total) + _stirling_error(a) + _stirling_error(b) - _stirling_error(total))


def digamma_half_step(x):
    """digamma(x + 1/2) - digamma(x) for x > 0, without the cancellation of the two (~log x) terms:
    from 30 on from digamma's asymptotic series, the differences of its terms written out."""
    big = x >= 100.0
    xb = T.where(big, x, 100.0)
    h = xb + 0.5
    series = (T.log1p(0.5 / xb) + 1 / (4 * xb * h) + (xb + 0.25) / (12 * (xb * h) ** 2)
              + (1 / h ** 4 - 1 / xb ** 4) / 120 - (1 / h ** 6 - 1 / xb ** 6) / 252
              + (1 / h ** 8 - 1 / xb ** 8) / 240)
    xs = T.where(big, 1.0, x)
    return T.where(big, series, T.digamma(xs + 0.5) - T.digamma(xs))


def _phi(y):
    """y - 1 - log(y) for y > 0 without cancellation near y = 1 (a series in t = y - 1 there)."""
    t = y - 1
    near = T.abs(t) < 0.1
    tn = T.where(near, t, 0.0)
    acc = 0.0
    for j in range(16, 1, -1):   # t^2 (1/2 - t/3 + t^2/4 - ...)
        acc = (1.0 if j % 2 == 0 else -1.0) / j + tn * acc
    tf = T.where(near, 1.0, t)
    return T.where(near, tn * tn * acc, tf - T.log1p(tf))


def log_gamma_density(a, rate_x, x):
    """log of the Gamma(a, rate) density at x > 0 (rate_x = rate * x) for a >= 30, as
    -a phi(rate x / a) + log(a) / 2 - log(x) - log(2 pi) / 2 - stirling_error(a): the terms
    a log(rate x) and lgamma(a), each ~a log a, no longer cancel (float32 lost units at a = 1e6)."""
    return (-a * _phi(rate_x / a) + 0.5 * T.log(a) - T.log(x) - _HALF_LOG_2PI - _stirling_error(a))


def log_poisson_pmf(k, rate):
    """log of the Poisson(rate) pmf at k >= 30, rate > 0, as -k phi(rate / k) - log(2 pi k) / 2 -
    stirling_error(k): k log(rate) and lgamma(k + 1) no longer cancel."""
    return -k * _phi(rate / k) - 0.5 * T.log(k) - _HALF_LOG_2PI - _stirling_error(k)


def gamma_entropy_parts(a):
    """(log(a) / 2 + stirling_error(a), log(a) - 1 / (2 a) - digamma(a)) for a >= 30: lgamma(a) and
    digamma(a) with their large parts (a log a - a, log a) taken out, which the entropies of Gamma
    and InverseGamma cancel analytically (directly they lost units in float32 at a = 1e6)."""
    r2 = 1 / (a * a)
    gap = r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 / 240)))
    return 0.5 * T.log(a) + _stirling_error(a), gap


def log_binomial_pmf(k, n, p, q):
    """log of the Binomial(n, p) pmf at 1 <= k <= n - 1 (q = 1 - p, both > 0; n may be real), as
    Loader's saddle point form -bd0(k, n p) - bd0(n - k, n q) - log(2 pi k (n - k) / n) / 2
    + stirling_error(n) - stirling_error(k) - stirling_error(n - k), bd0(x, m) = x log(x / m) + m - x
    = x phi(m / x): the lgammas and k log p + (n - k) log q, each ~n log n, no longer cancel."""
    j = n - k
    return (-k * _phi(n * p / k) - j * _phi(n * q / j) - 0.5 * T.log(k * j / n) - _HALF_LOG_2PI
            + _stirling_error(n) - _stirling_error(k) - _stirling_error(j))
