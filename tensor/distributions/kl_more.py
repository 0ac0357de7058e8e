"""KL divergences (registered with kl.register_kl) for the distributions of transformed.py,
continuous_more.py and mixture.py: PyTorch's registered pairs, each derived as
E_p[log p] - E_p[log q] from the moments of p (E[x], Var[x], E[exp(-x/s)], E[log x]), and +inf where
p puts mass outside q's support."""
from __future__ import annotations

import math

from . import _ops as T
from .continuous import Exponential, Laplace, Normal, Uniform
from .continuous_more import ContinuousBernoulli
from .gamma import Beta, Gamma
from .kl import _kl_mvn_mvn, kl_divergence, register_kl
from .mixture import LowRankMultivariateNormal
from .multivariate import MultivariateNormal
from .transformed import Gumbel, HalfNormal, Pareto
from .transforms import TransformedDistribution

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _inf(p, q):
    """+inf over the broadcast batch shape of p and q."""
    like = next(v for v in (p.mean, q.mean) if isinstance(v, T.Tensor))
    shape = T.broadcast_shapes(p.batch_shape, q.batch_shape)
    return T.full(shape, math.inf, dtype=like.dtype, device=like.device)


def _neg_log_normal(q, mean, var):
    """-E[log q(x)] for q Normal, from x's mean and variance."""
    return T.log(q.scale) + _HALF_LOG_2PI + (var + (mean - q.loc) ** 2) / (2 * q.scale ** 2)


def _neg_log_gumbel(q, mean, exp_neg):
    """-E[log q(x)] for q Gumbel(m, s), from E[x] and exp_neg = E[exp(-x / s)]."""
    return T.log(q.scale) + (mean - q.loc) / q.scale + T.exp(q.loc / q.scale) * exp_neg


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    a = p.scale / q.scale
    # x = m_p - s_p log E, E ~ Exponential(1): E[exp(-x / s_q)] = exp(-m_p / s_q) Gamma(1 + a)
    exp_neg = T.exp(-p.loc / q.scale + T.lgamma(1 + a))
    return -p.entropy() + _neg_log_gumbel(q, p.mean, exp_neg)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    rs = p.rate * q.scale
    return -p.entropy() + _neg_log_gumbel(q, p.mean, rs / (rs + 1))


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    exp_neg = T.exp(-p.concentration * T.log1p(1 / (p.rate * q.scale)))
    return -p.entropy() + _neg_log_gumbel(q, p.mean, exp_neg)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    exp_neg = T.exp(-p.loc / q.scale + 0.5 * (p.scale / q.scale) ** 2)
    return -p.entropy() + _neg_log_gumbel(q, p.loc, exp_neg)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    s = q.scale
    exp_neg = s * (T.exp(-p.low / s) - T.exp(-p.high / s)) / (p.high - p.low)
    return -p.entropy() + _neg_log_gumbel(q, p.mean, exp_neg)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _neg_log_normal(q, p.mean, p.variance)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    r = (p.scale / q.scale) ** 2
    return 0.5 * (r - 1 - T.log(r))


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    ratio = q.alpha / p.alpha
    kl = q.alpha * T.log(p.scale / q.scale) - T.log(ratio) + ratio - 1
    return T.where(p.scale < q.scale, math.inf, kl)


def _pareto_mean_log(p):
    return T.log(p.scale) + 1 / p.alpha


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    kl = -p.entropy() - T.log(q.rate) + q.rate * p.mean
    return T.where(p.alpha <= 1, math.inf, kl)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    a, r = q.concentration, q.rate
    kl = -p.entropy() - a * T.log(r) + T.lgamma(a) - (a - 1) * _pareto_mean_log(p) + r * p.mean
    return T.where(p.alpha <= 1, math.inf, kl)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    kl = -p.entropy() + _neg_log_normal(q, p.mean, p.variance)
    return T.where(p.alpha <= 2, math.inf, kl)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    a, b = p.low, p.high
    lo = T.clip(a, T.finfo(a.dtype).tiny, None)
    mean_log = (b * T.log(b) - b - lo * T.log(lo) + lo) / (b - lo)
    kl = -p.entropy() - T.log(q.alpha) - q.alpha * T.log(q.scale) + (q.alpha + 1) * mean_log
    return T.where(a < q.scale, math.inf, kl)


def _cb_neg_log(q, mean):
    """-E[log q(x)] for q ContinuousBernoulli, from E[x]."""
    return -mean * q.logits - T.log1p(-q.probs) - q._log_normalizer()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    return -p.entropy() + _cb_neg_log(q, p.mean)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p, q):
    return -p.entropy() + _cb_neg_log(q, p.mean)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    kl = -p.entropy() + _cb_neg_log(q, p.mean)
    return T.where((p.low < 0) | (p.high > 1), math.inf, kl)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p, q):
    return -p.entropy() - T.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p, q):
    return -p.entropy() + _neg_log_normal(q, p.mean, p.variance)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p, q):
    kl = -p.entropy() + T.log(q.high - q.low)
    return T.where((q.low > 0) | (q.high < 1), math.inf, kl)


for _p, _q in [(Gumbel, Beta), (Gumbel, ContinuousBernoulli), (Gumbel, Exponential), (Gumbel, Gamma),
               (Gumbel, Pareto), (Gumbel, Uniform), (Exponential, Pareto), (Gamma, Pareto), (Beta, Pareto),
               (Normal, Pareto), (Laplace, Pareto), (ContinuousBernoulli, Pareto), (Pareto, Beta),
               (Pareto, Uniform), (Pareto, ContinuousBernoulli), (Exponential, ContinuousBernoulli),
               (Gamma, ContinuousBernoulli), (Laplace, ContinuousBernoulli), (Normal, ContinuousBernoulli)]:
    register_kl(_p, _q)(_inf)


def _as_mvn(d):
    if isinstance(d, MultivariateNormal):
        return d
    return MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix, validate_args=False)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    return _kl_mvn_mvn(_as_mvn(p), _as_mvn(q))


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    return _kl_mvn_mvn(p, _as_mvn(q))


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    return _kl_mvn_mvn(_as_mvn(p), q)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """KL is invariant under a shared bijection: the bases' KL, where the transforms are equal."""
    if p.transforms != q.transforms:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different transforms "
                                  f"({p.transforms!r} and {q.transforms!r}) are not supported")
    if p.event_shape != q.event_shape:
        raise NotImplementedError(f"kl_divergence: TransformedDistributions of different event shapes "
                                  f"{p.event_shape} and {q.event_shape}")
    kl = kl_divergence(p.base_dist, q.base_dist)
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return kl.sum(axis=tuple(range(-extra, 0))) if extra > 0 else kl
