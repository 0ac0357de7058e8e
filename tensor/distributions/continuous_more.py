"""More univariate continuous distributions (PyTorch's names, parameters and formulas):
FisherSnedecor, GeneralizedPareto, VonMises and ContinuousBernoulli."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from ._special import lbeta
from .continuous import _Univariate
from .discrete import _bce_with_logits, _one_of
from .distribution import (
    ExponentialFamily,
    _shape_of,
    as_param,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    uniform01,
)
from .gamma import rsample_standard_gamma


class FisherSnedecor(_Univariate):
    """The F distribution: (X1 / df1) / (X2 / df2) for independent X1 ~ Chi2(df1), X2 ~ Chi2(df2)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    _params = ("df1", "df2")

    def __init__(self, df1, df2, validate_args=None):
        self._init_params((df1, df2), validate_args)

    @property
    def mean(self):
        d2 = self.df2
        return T.where(d2 > 2, d2 / T.where(d2 > 2, d2 - 2, 1.0), math.nan)

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        m = (d1 - 2) / d1 * d2 / (d2 + 2)
        return T.where(d1 > 2, m, math.nan)

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        den = T.where(d2 > 4, d1 * (d2 - 2) ** 2 * (d2 - 4), 1.0)
        return T.where(d2 > 4, 2 * d2 ** 2 * (d1 + d2 - 2) / den, math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = rsample_standard_gamma(T.broadcast_to(0.5 * self.df1, shape)) / self.df1
        x2 = rsample_standard_gamma(T.broadcast_to(0.5 * self.df2, shape)) / self.df2
        tiny = T.finfo(x1.dtype).tiny
        return T.clip(x1, tiny, None) / T.clip(x2, tiny, None)

    def log_prob(self, value):
        value = self._value(value)
        h1, h2 = 0.5 * self.df1, 0.5 * self.df2
        ratio = self.df1 / self.df2
        return (h1 * T.log(ratio) + T.xlogy(h1 - 1, value) - (h1 + h2) * T.log1p(ratio * value)
                - lbeta(h1, h2))


class GeneralizedPareto(_Univariate):
    """Density (1/scale) (1 + c z)^(-1/c - 1), z = (x - loc) / scale, c = concentration (for c = 0,
    exp(-z) / scale), on x >= loc, and x <= loc - scale / c when c < 0."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    _params = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._init_params((loc, scale, concentration), validate_args)

    @property
    def support(self):
        c = self.concentration
        upper = T.where(c < 0, self.loc - self.scale / T.where(c < 0, c, -1.0), math.inf)
        return constraints.interval(self.loc, upper)

    def _z(self, value):
        return (value - self.loc) / self.scale

    @property
    def _zero(self):
        """Where the exponential limit is used: |concentration| <= 1e-8 (as PyTorch's isclose)."""
        return T.abs(self.concentration) <= 1e-8

    @property
    def _c_safe(self):
        return T.where(self._zero, 1.0, self.concentration)

    def rsample(self, sample_shape=()):
        u = uniform01(self._extended_shape(sample_shape), self.loc, tiny=True)
        return self.icdf(u)

    def log_prob(self, value):
        z = self._z(self._value(value))
        c, cs = self.concentration, self._c_safe
        lp = T.where(self._zero, -z, -(1 / cs + 1) * T.log1p(cs * z))
        inside = (z >= 0) & ((c >= 0) | (z <= -1 / cs))
        return T.where(inside, lp - T.log(self.scale), -math.inf)

    def cdf(self, value):
        z = T.clip(self._z(self._value(value)), 0.0, None)
        cs = self._c_safe
        tail = T.where(self._zero, -z, -T.log1p(T.clip(cs * z, -1.0, None)) / cs)
        return -T.expm1(tail)

    def icdf(self, value):
        p = as_param(value, self.loc)
        cs = self._c_safe
        log_tail = T.log1p(-p)
        z = T.where(self._zero, -log_tail, T.expm1(-cs * log_tail) / cs)
        return self.loc + self.scale * z

    @property
    def mean(self):
        c = self.concentration
        return T.where(c < 1, self.loc + self.scale / T.where(c < 1, 1 - c, 1.0), math.inf)

    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        c = self.concentration
        den = T.where(c < 0.5, (1 - c) ** 2 * (1 - 2 * c), 1.0)
        return T.where(c < 0.5, self.scale ** 2 / den, math.nan)   # (PyTorch's NaN where infinite)

    def entropy(self):
        return T.log(self.scale) + self.concentration + 1


class VonMises(_Univariate):
    """The von Mises (circular normal) distribution on [-pi, pi): density exp(k cos(x - loc)) /
    (2 pi I0(k)), k = concentration. sample() by Best and Fisher's rejection sampler (1979); no
    rsample."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.interval(-math.pi, math.pi)
    has_rsample = False
    _params = ("loc", "concentration")

    def __init__(self, loc, concentration, validate_args=None):
        self._init_params((loc, concentration), validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        """The circular variance 1 - I1(k) / I0(k)."""
        k = self.concentration
        return 1 - T.special.i1e(k) / T.special.i0e(k)

    def log_prob(self, value):
        value = self._value(value)
        k = self.concentration
        return k * (T.cos(value - self.loc) - 1) - math.log(2 * math.pi) - T.log(T.special.i0e(k))

    def entropy(self):
        k = self.concentration
        return math.log(2 * math.pi) + T.log(T.special.i0e(k)) + k * (1 - T.special.i1e(k) / T.special.i0e(k))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        loc = self.loc.detach()
        k = T.broadcast_to(self.concentration.detach(), shape).astype(T.float64)
        # the wrapped-Cauchy envelope's r = (1 + rho^2) / (2 rho), rho written without cancellation
        s = T.sqrt(1 + 4 * k * k)
        tau = 1 + s
        rho = 2 * k * tau / ((s + 1) * (tau + T.sqrt(2 * tau)))
        r = (1 + rho * rho) / (2 * rho)
        out = T.zeros(shape, dtype=T.float64, device=loc.device)
        todo = k == k   # (all True: k is finite)
        like = out
        for _ in range(1000):   # each round accepts with probability > 0.65 everywhere
            if not bool(T.any(todo)):
                break
            u1, u2, u3 = (uniform01(shape, like, tiny=True) for _ in range(3))
            z = T.cos(math.pi * u1)
            f = (1 + r * z) / (r + z)
            c = k * (r - f)
            ok = todo & (((c * (2 - c) - u2) > 0) | ((T.log(c / u2) + 1 - c) >= 0))
            theta = T.where(u3 > 0.5, 1.0, -1.0) * T.arccos(T.clip(f, -1.0, 1.0))
            out = T.where(ok, theta, out)
            todo = todo & ~ok
        out = out.astype(loc.dtype) + loc
        return T.remainder(out + math.pi, 2 * math.pi) - math.pi


class ContinuousBernoulli(_Univariate, ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem and Cunningham, 2019): density
    C(p) p^x (1 - p)^(1 - x), C(p) its normalizer, parameterized by probs or logits. Near p = 1/2
    (within lims) the normalizer and moments use their Taylor expansions."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _params = ()

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of("ContinuousBernoulli", probs, logits)
        name = "probs" if probs is not None else "logits"
        (p,) = broadcast_all(probs if probs is not None else logits)
        if name == "probs" and bool(T.all((p >= 0) & (p <= 1))):
            p = clamp_probs(p)
        self.__dict__[name] = p
        self._lims = (float(lims[0]), float(lims[1]))
        super(_Univariate, self).__init__(p.shape, (), validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def _ref(self):
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    def _value(self, value):
        value = as_param(value, self._ref) if not isinstance(value, T.Tensor) else value
        if self._validate_args:
            self._validate_sample(value)
        return value

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("probs", "logits"))

    @property
    def _outside(self):
        p = self.probs
        return (p <= self._lims[0]) | (p > self._lims[1])

    @property
    def _cut(self):
        """probs, with those near 1/2 replaced by lims[0] (so the unstable branch stays finite)."""
        return T.where(self._outside, self.probs, self._lims[0])

    def _log_ratio(self, p):
        return T.log1p(-p) - T.log(p)   # log((1 - p) / p)

    def _log_normalizer(self):
        p, cut = self.probs, self._cut
        exact = T.log(T.abs(self._log_ratio(cut))) - T.log(T.abs(1 - 2 * cut))
        x = (p - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return T.where(self._outside, exact, taylor)

    @property
    def mean(self):
        p, cut = self.probs, self._cut
        exact = cut / (2 * cut - 1) + 1 / self._log_ratio(cut)
        x = p - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x * x) * x
        return T.where(self._outside, exact, taylor)

    @property
    def variance(self):
        p, cut = self.probs, self._cut
        exact = cut * (cut - 1) / (1 - 2 * cut) ** 2 + 1 / self._log_ratio(cut) ** 2
        x = (p - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return T.where(self._outside, exact, taylor)

    @property
    def mode(self):
        p = self.probs
        return T.where(p > 0.5, 1.0, T.where(p < 0.5, 0.0, math.nan)).astype(p.dtype)

    def log_prob(self, value):
        value = self._value(value)
        return -_bce_with_logits(self.logits, value) + self._log_normalizer()

    def cdf(self, value):
        value = self._value(value)
        cut = self._cut
        exact = (cut ** value * (1 - cut) ** (1 - value) + cut - 1) / (2 * cut - 1)
        inner = T.where(self._outside, exact, value)
        return T.where(value <= 0, 0.0, T.where(value >= 1, 1.0, inner))

    def icdf(self, value):
        value = as_param(value, self._ref)
        cut = self._cut
        exact = (T.log1p(-cut + value * (2 * cut - 1)) - T.log1p(-cut)) / (T.log(cut) - T.log1p(-cut))
        return T.where(self._outside, exact, value)

    def rsample(self, sample_shape=()):
        u = uniform01(_shape_of(sample_shape) + self.batch_shape, self._ref)
        return self.icdf(u)

    def entropy(self):
        lp0, lp1 = T.log1p(-self.probs), T.log(self.probs)
        return self.mean * (lp0 - lp1) - self._log_normalizer() - lp0
