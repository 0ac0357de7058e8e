"""kl_divergence(p, q) = E_p[log p - log q], in closed form for the pairs registered with
register_kl (PyTorch's set among the distributions here). Lookup takes the most specific
registered pair of (type(p), type(q)) in method resolution order."""
from __future__ import annotations

import math

from . import _ops as T
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Gamma
from .multivariate import Independent, MultivariateNormal, _batch_mahalanobis

_EULER = 0.5772156649015329
_KL_REGISTRY: dict = {}
_KL_MEMO: dict = {}


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for p an instance of type_p and q of type_q."""
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl: expects subclasses of Distribution, got {t!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMO.clear()
        return fn
    return decorator


def _dispatch(tp, tq):
    if (tp, tq) in _KL_MEMO:
        return _KL_MEMO[tp, tq]
    best, rank = None, None
    for (sp, sq), fn in _KL_REGISTRY.items():
        if issubclass(tp, sp) and issubclass(tq, sq):
            r = (tp.__mro__.index(sp), tq.__mro__.index(sq))
            if rank is None or r < rank:
                best, rank = fn, r
    _KL_MEMO[tp, tq] = best
    return best


def kl_divergence(p, q):
    """KL(p || q), over the broadcast batch shape of p and q."""
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"kl_divergence: no KL is registered for the pair "
                                  f"({type(p).__name__}, {type(q).__name__}); add one with "
                                  f"@register_kl({type(p).__name__}, {type(q).__name__})")
    return fn(p, q)


def _inf_where(cond, x):
    return T.where(cond, math.inf, x)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - T.log(var_ratio))


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    out = T.log((q.high - q.low) / (p.high - p.low))
    return _inf_where((q.low > p.low) | (q.high < p.high), out)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common = q.scale * math.sqrt(2 * math.pi) / (p.high - p.low)
    t1 = T.log(common)
    t2 = ((p.high - q.loc) ** 3 - (p.low - q.loc) ** 3) / (6 * (p.high - p.low) * q.scale ** 2)
    return t1 + t2


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - T.log(ratio)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale ** 2
    rate_sqr = p.rate ** 2
    t1 = 0.5 * T.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = 1 / rate_sqr
    t3 = q.loc / p.rate
    t4 = q.loc ** 2 * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = T.abs(p.loc - q.loc)
    t1 = -T.log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * T.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = T.log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2)
    t2 = T.log(4 * p.scale * q.scale)
    return t1 - t2


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    def softplus(x):
        return T.logaddexp(x, 0.0)
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = T.where(q.probs == 0, math.inf, t1)
    t1 = T.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = T.where(q.probs == 1, math.inf, t2)
    t2 = T.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = T.where(q.probs == 0, math.inf, t)
    t = T.where(p.probs == 0, 0.0, t)
    return t.sum(axis=-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """Finite in closed form for equal total counts; infinite where p's count exceeds q's (p puts
    mass where q has none); not implemented where it is below (PyTorch's rule)."""
    if bool(T.any(p.total_count < q.total_count)):
        raise NotImplementedError("kl_divergence: Binomial with p.total_count < q.total_count is not "
                                  "implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + T.log1p(-p.probs) - T.log1p(-q.probs))
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - T.log1p(-q.probs) / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (T.log(p.rate) - T.log(q.rate)) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"kl_divergence: MultivariateNormals of different event shapes {p.event_shape} "
                         f"and {q.event_shape}")
    n = p.event_shape[0]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_logdet = (T.log(T.diagonal(Lq, 0, -2, -1)).sum(axis=-1)
                   - T.log(T.diagonal(Lp, 0, -2, -1)).sum(axis=-1))
    shape = T.broadcast_shapes(Lq.shape, Lp.shape)
    # trace(Sigma_q^-1 Sigma_p) = |Lq^-1 Lp|_F^2
    M = T.linalg.solve_triangular(T.broadcast_to(Lq, shape), T.broadcast_to(Lp, shape), upper=False)
    trace = (M * M).sum(axis=(-2, -1))
    maha = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_logdet + 0.5 * (trace + maha - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence: Independents with different reinterpreted_batch_ndims")
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * T.log(p.rate / q.rate)
    t2 = T.lgamma(q.concentration) - T.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * T.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    """a log(lambda / r) - 1 + (a - 1) gamma_E + r / lambda + lgamma(a), E[log x] = -gamma_E - log lambda."""
    a, r = q.concentration, q.rate
    return a * T.log(p.rate / r) - 1 + (a - 1) * _EULER + r / p.rate + T.lgamma(a)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - T.log(q.rate) + q.rate * p.concentration / p.rate


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    sp, sq = a1 + b1, a2 + b2
    t1 = T.lgamma(a2) + T.lgamma(b2) + T.lgamma(sp)
    t2 = T.lgamma(a1) + T.lgamma(b1) + T.lgamma(sq)
    return t1 - t2 + (a1 - a2) * T.digamma(a1) + (b1 - b2) * T.digamma(b1) + (sq - sp) * T.digamma(sp)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    cp, cq = p.concentration, q.concentration
    sp, sq = cp.sum(axis=-1), cq.sum(axis=-1)
    t1 = T.lgamma(sp) - T.lgamma(sq)
    t2 = (T.lgamma(cp) - T.lgamma(cq)).sum(axis=-1)
    t3 = ((cp - cq) * (T.digamma(cp) - T.digamma(sp)[..., None])).sum(axis=-1)
    return t1 - t2 + t3
