"""Distributions built as TransformedDistributions of simpler ones, as PyTorch builds them: Gumbel,
HalfNormal, HalfCauchy, Pareto, Weibull, Kumaraswamy, InverseGamma and LogisticNormal. Sampling
(reparameterized) and the generic log_prob / cdf / icdf come from the transforms; closed forms
override them where they are simpler or more accurate."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from ._special import gamma_entropy_parts
from .continuous import Cauchy, Exponential, Normal, Uniform
from .distribution import HALF_LOG_2PI, _shape_of, as_param, broadcast_all
from .gamma import Gamma
from .transforms import AffineTransform, ExpTransform, TransformedDistribution
from .transforms_more import AbsTransform, PowerTransform, StickBreakingTransform

EULER = 0.5772156649015329


class _ParamTransformed(TransformedDistribution):
    """A TransformedDistribution with named parameters (_params, in constructor order)."""
    _params: tuple = ()

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        nb = len(self.batch_shape)
        args = [T.broadcast_to(p, batch_shape + tuple(p.shape[nb:]))
                for p in (getattr(self, n) for n in self._params)]
        new = type(self)(*args, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _val(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, getattr(self, self._params[0]))
        if self._validate_args:
            self._validate_sample(value)
        return value

    def __repr__(self):
        args = []
        for name in self._params:
            v = getattr(self, name)
            args.append(f"{name}: {v if v.numel() == 1 else tuple(v.shape)}")
        return f"{type(self).__name__}({', '.join(args)})"


class Gumbel(_ParamTransformed):
    """The Gumbel (type-I extreme value) distribution: loc - scale log(-log U), U ~ Uniform(0, 1)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        f = T.finfo(self.loc.dtype)
        base = Uniform(T.full_like(self.loc, f.tiny), T.full_like(self.loc, 1 - f.eps), validate_args=False)
        super().__init__(base, [ExpTransform().inv, AffineTransform(0, -1), ExpTransform().inv,
                                AffineTransform(self.loc, -self.scale)], validate_args)

    def log_prob(self, value):
        z = (self.loc - self._val(value)) / self.scale
        return z - T.exp(z) - T.log(self.scale)

    def cdf(self, value):
        return T.exp(-T.exp((self.loc - self._val(value)) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * T.log(-T.log(as_param(value, self.loc)))

    mean = property(lambda self: self.loc + self.scale * EULER)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: self.stddev ** 2)

    def entropy(self):
        return T.log(self.scale) + (1 + EULER)


class _Folded(_ParamTransformed):
    """|X| for X symmetric about 0 with scale `scale`: twice the base density on x >= 0."""
    support = constraints.nonnegative
    arg_constraints = {"scale": constraints.positive}
    _params = ("scale",)

    def log_prob(self, value):
        value = self._val(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return T.where(value >= 0, lp, -math.inf)

    def cdf(self, value):
        value = self._val(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((as_param(prob, self.scale) + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)

    mode = property(lambda self: T.zeros_like(self.scale))


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, scale)."""

    def __init__(self, scale, validate_args=None):
        (self.scale,) = broadcast_all(scale)
        super().__init__(Normal(T.zeros_like(self.scale), self.scale, validate_args=False), [AbsTransform()],
                         validate_args)

    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    variance = property(lambda self: self.scale ** 2 * (1 - 2 / math.pi))


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale): infinite mean and variance."""

    def __init__(self, scale, validate_args=None):
        (self.scale,) = broadcast_all(scale)
        super().__init__(Cauchy(T.zeros_like(self.scale), self.scale, validate_args=False), [AbsTransform()],
                         validate_args)

    mean = property(lambda self: T.full_like(self.scale, math.inf))
    variance = property(lambda self: T.full_like(self.scale, math.inf))


class Pareto(_ParamTransformed):
    """Density alpha scale^alpha / x^(alpha + 1) on x >= scale: scale exp(E), E ~ Exponential(alpha)."""
    arg_constraints = {"scale": constraints.positive, "alpha": constraints.positive}
    _params = ("scale", "alpha")

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=False),
                         [ExpTransform(), AffineTransform(0, self.scale)], validate_args)

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = T.clip(self.alpha, 1.0, None)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = T.clip(self.alpha, 2.0, None)
        return self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))

    def entropy(self):
        return T.log(self.scale / self.alpha) + (1 + 1 / self.alpha)


class Weibull(_ParamTransformed):
    """Density (k / scale) (x / scale)^(k-1) exp(-(x / scale)^k) on x > 0 (k = concentration):
    scale E^(1/k), E ~ Exponential(1)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    _params = ("scale", "concentration")

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        super().__init__(Exponential(T.ones_like(self.scale), validate_args=False),
                         [PowerTransform(1 / self.concentration), AffineTransform(0, self.scale)],
                         validate_args)

    mean = property(lambda self: self.scale * T.exp(T.lgamma(1 + 1 / self.concentration)))

    @property
    def mode(self):
        """scale ((k - 1) / k)^(1/k) for k > 1, else 0 (where the density is largest or unbounded)."""
        k = self.concentration
        m = self.scale * (T.clip(k - 1, 0.0, None) / k) ** (1 / k)
        return T.where(k > 1, m, 0.0)

    @property
    def variance(self):
        k = self.concentration
        return self.scale ** 2 * (T.exp(T.lgamma(1 + 2 / k)) - T.exp(2 * T.lgamma(1 + 1 / k)))

    def log_prob(self, value):
        value = self._val(value)
        k, s = self.concentration, self.scale
        z = value / s
        return T.log(k / s) + T.xlogy(k - 1, z) - z ** k

    def cdf(self, value):
        return -T.expm1(-(self._val(value) / self.scale) ** self.concentration)

    def icdf(self, value):
        return self.scale * (-T.log1p(-as_param(value, self.scale))) ** (1 / self.concentration)

    def entropy(self):
        k = self.concentration
        return EULER * (1 - 1 / k) + T.log(self.scale / k) + 1


def _kumaraswamy_moment(a, b, n):
    """E[X^n] = b B(1 + n/a, b)."""
    t = 1 + n / a
    return T.exp(T.log(b) + T.lgamma(t) + T.lgamma(b) - T.lgamma(t + b))


class Kumaraswamy(_ParamTransformed):
    """Density a b x^(a-1) (1 - x^a)^(b-1) on (0, 1) (a = concentration1, b = concentration0):
    (1 - U^(1/b))^(1/a), U ~ Uniform(0, 1)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    _params = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        a, b = self.concentration1, self.concentration0
        base = Uniform(T.zeros_like(a), T.ones_like(a), validate_args=False)
        super().__init__(base, [PowerTransform(1 / b), AffineTransform(1.0, -1.0), PowerTransform(1 / a)],
                         validate_args)

    def log_prob(self, value):
        value = self._val(value)
        a, b = self.concentration1, self.concentration0
        # (b - 1) log(1 - x^a), 1 - x^a as -expm1(a log x); xlogy, whose gradient in b is right at
        # b = 1 (special.xlog1py's is 0 there)
        return T.log(a) + T.log(b) + T.xlogy(a - 1, value) + T.xlogy(b - 1, -T.expm1(a * T.log(value)))

    mean = property(lambda self: _kumaraswamy_moment(self.concentration1, self.concentration0, 1))

    @property
    def mode(self):
        """((a - 1) / (a b - 1))^(1/a) where a, b >= 1 (NaN elsewhere, as PyTorch)."""
        a, b = self.concentration1, self.concentration0
        m = (T.clip(a - 1, 0.0, None) / T.clip(a * b - 1, T.finfo(a.dtype).tiny, None)) ** (1 / a)
        return T.where((a < 1) | (b < 1), math.nan, m)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - _kumaraswamy_moment(a, b, 1) ** 2

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = T.digamma(b + 1) + EULER
        return (1 - 1 / b) + (1 - 1 / a) * harmonic_b - T.log(a) - T.log(b)


class InverseGamma(_ParamTransformed):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(Gamma(self.concentration, self.rate, validate_args=False), [PowerTransform(-1.0)],
                         validate_args)

    @property
    def mean(self):
        a = self.concentration
        return T.where(a > 1, self.rate / T.where(a > 1, a - 1, 1.0), math.inf)

    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def variance(self):
        a = self.concentration
        v = self.rate ** 2 / (T.where(a > 2, (a - 1) ** 2 * (a - 2), 1.0))
        return T.where(a > 2, v, math.inf)

    def log_prob(self, value):
        value = self._val(value)
        a, r = self.concentration, self.rate
        return T.xlogy(a, r) - T.lgamma(a) - T.xlogy(a + 1, value) - r / value

    def cdf(self, value):
        return T.special.gammaincc(self.concentration, self.rate / self._val(value))

    def entropy(self):
        a = self.concentration
        direct = a + T.log(self.rate) + T.lgamma(a) - (1 + a) * T.digamma(a)
        big = a >= 30
        if not bool(T.any(big)):
            return direct
        a_s = T.where(big, a, 30.0)
        half_log_a, gap = gamma_entropy_parts(a_s)   # (1 + a) / (2a) + (1 + a) gap: digamma's rest
        stable = (HALF_LOG_2PI + half_log_a - 2 * T.log(a_s) + T.log(self.rate)
                  + (1 + a_s) * (0.5 / a_s + gap))
        return T.where(big, stable, direct)


class LogisticNormal(_ParamTransformed):
    """StickBreakingTransform of Normal(loc, scale) draws: a distribution on the K-simplex for loc
    and scale of last dim K - 1 (event_shape (K,))."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all(loc, scale)
        if loc.ndim == 0:
            loc, scale = loc.reshape((1,)), scale.reshape((1,))
        self.loc, self.scale = loc, scale
        super().__init__(Normal(loc, scale, validate_args=False), [StickBreakingTransform()], validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        k = self.loc.shape[-1]
        new = LogisticNormal(T.broadcast_to(self.loc, batch_shape + (k,)),
                             T.broadcast_to(self.scale, batch_shape + (k,)), validate_args=False)
        new._validate_args = self._validate_args
        return new
