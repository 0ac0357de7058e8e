"""KL divergences between distributions of different families (registered with kl.register_kl):
the rest of PyTorch's registered pairs, each E_p[log p] - E_p[log q] from p's entropy and the moments
of p that log q needs (E[x], Var[x], E[log x], E[|x - m|]), and +inf where p puts mass outside q's
support. Categorical against OneHotCategorical (a subclass here, not in PyTorch) is refused: their
values differ (an index, a one-hot vector), as PyTorch has no KL for the pair."""
from __future__ import annotations

import math

from . import _ops as T
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .gamma import Beta, Gamma
from .kl import register_kl
from .kl_more import _inf, _neg_log_normal

_SQRT2 = math.sqrt(2.0)


def _beta_mean_log(p):
    """E[log x] for x ~ Beta(a, b): digamma(a) - digamma(a + b)."""
    return T.digamma(p.concentration1) - T.digamma(p.concentration1 + p.concentration0)


def _neg_log_gamma(q, mean, mean_log):
    """-E[log q(x)] for q Gamma(a, r), from E[x] and E[log x]."""
    a, r = q.concentration, q.rate
    return -T.xlogy(a, r) + T.lgamma(a) - (a - 1) * mean_log + r * mean


def _uniform_mean_log(lo, hi):
    """E[log x] for x ~ Uniform(lo, hi), 0 <= lo < hi: (hi log hi - hi - lo log lo + lo) / (hi - lo)."""
    return (T.xlogy(hi, hi) - hi - T.xlogy(lo, lo) + lo) / (hi - lo)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, s^2), d = mu - m: s sqrt(2/pi) exp(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2))
    d, s = p.loc - q.loc, p.scale
    abs_dev = s * math.sqrt(2 / math.pi) * T.exp(-0.5 * (d / s) ** 2) + d * T.erf(d / (s * _SQRT2))
    return -p.entropy() + T.log(2 * q.scale) + abs_dev / q.scale


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _neg_log_normal(q, p.loc, 2 * p.scale ** 2)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _neg_log_normal(q, p.mean, p.variance)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _neg_log_normal(q, p.mean, p.variance)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - T.log(q.rate) + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() + _neg_log_gamma(q, p.mean, _beta_mean_log(p))


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    kl = -p.entropy() + T.log(q.high - q.low)
    return T.where((q.low > 0) | (q.high < 1), math.inf, kl)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    lo, hi = p.low, p.high
    inside = (lo >= 0) & (hi <= 1)
    lo_s, hi_s = T.where(inside, lo, 0.0), T.where(inside, hi, 1.0)   # (log of the outside is not used)
    mean_log = _uniform_mean_log(lo_s, hi_s)
    mean_log1m = _uniform_mean_log(1 - hi_s, 1 - lo_s)
    a, b = q.concentration1, q.concentration0
    lbeta = T.lgamma(a) + T.lgamma(b) - T.lgamma(a + b)
    kl = -p.entropy() - (a - 1) * mean_log - (b - 1) * mean_log1m + lbeta
    return T.where(inside, kl, math.inf)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    kl = -p.entropy() - T.log(q.rate) + q.rate * p.mean
    return T.where(p.low < 0, math.inf, kl)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    inside = p.low >= 0
    lo = T.where(inside, p.low, 0.0)
    kl = -p.entropy() + _neg_log_gamma(q, p.mean, _uniform_mean_log(lo, T.where(inside, p.high, 1.0)))
    return T.where(inside, kl, math.inf)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # log q(0) = -rate, log q(1) = log(rate) - rate
    return -p.entropy() + q.rate - T.xlogy(p.probs, q.rate)


# p's support reaches where q has no mass: unbounded or negative values against a bounded or
# nonnegative support, counts past 1 (or past total_count) against Bernoulli (Binomial)
for _p, _q in [(Normal, Beta), (Normal, Exponential), (Normal, Gamma), (Normal, Uniform),
               (Laplace, Beta), (Laplace, Exponential), (Laplace, Gamma), (Laplace, Uniform),
               (Exponential, Beta), (Exponential, Uniform), (Gamma, Beta), (Gamma, Uniform),
               (Poisson, Bernoulli), (Poisson, Binomial)]:
    register_kl(_p, _q)(_inf)


def _refuse(p, q):
    raise NotImplementedError(f"kl_divergence: no KL between {type(p).__name__} and {type(q).__name__} "
                              f"(one takes category indices, the other one-hot vectors); convert one "
                              f"of them first")


register_kl(Categorical, OneHotCategorical)(_refuse)
register_kl(OneHotCategorical, Categorical)(_refuse)
