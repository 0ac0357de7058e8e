"""The univariate continuous distributions: Normal, Uniform, Exponential, Laplace, Cauchy,
LogNormal (PyTorch's names, parameters and formulas). Each samples with reparameterization
(rsample): a draw is a differentiable function of the parameters and parameter-free noise."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import (
    HALF_LOG_2PI,
    Distribution,
    ExponentialFamily,
    as_param,
    broadcast_all,
    standard_normal,
    uniform01,
)

_SQRT2 = math.sqrt(2.0)


class _Univariate(Distribution):
    """Shared plumbing: parameters broadcast together; values checked and made tensors."""
    has_rsample = True
    _params: tuple = ()

    def _init_params(self, values, validate_args):
        tensors = broadcast_all(*values)
        for name, t in zip(self._params, tensors):
            setattr(self, name, t)
        super().__init__(tensors[0].shape, (), validate_args)

    def _value(self, value):
        ref = getattr(self, self._params[0])
        value = as_param(value, ref) if not isinstance(value, T.Tensor) else value
        if self._validate_args:
            self._validate_sample(value)
        return value

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, self._params)

    @property
    def _ref(self):
        return getattr(self, self._params[0])

    def _full(self, fill):
        return T.full(self.batch_shape, fill, dtype=self._ref.dtype, device=self._ref.device)


class Normal(_Univariate, ExponentialFamily):
    """N(loc, scale^2)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._init_params((loc, scale), validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale * self.scale)

    def rsample(self, sample_shape=()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = self._value(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - T.log(self.scale) - HALF_LOG_2PI

    def cdf(self, value):
        value = self._value(value)
        return 0.5 * (1 + T.erf((value - self.loc) / (self.scale * _SQRT2)))

    def icdf(self, value):
        return self.loc + self.scale * T.erfinv(2 * as_param(value, self.loc) - 1) * _SQRT2

    def entropy(self):
        return 0.5 + HALF_LOG_2PI + T.log(self.scale)


class Uniform(_Univariate):
    """Uniform on [low, high)."""
    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    _params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self._init_params((low, high), validate_args)
        if self._validate_args and not bool(T.all(self.low < self.high)):
            raise ValueError(f"Uniform: needs low < high everywhere, got low={self.low}, high={self.high}")

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: self._full(math.nan))
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low) ** 2 / 12)

    def rsample(self, sample_shape=()):
        u = uniform01(self._extended_shape(sample_shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        value = self._value(value)
        inside = ((self.low <= value) & (value < self.high)).astype(self.low.dtype)
        return T.log(inside) - T.log(self.high - self.low)

    def cdf(self, value):
        value = self._value(value)
        return T.clip((value - self.low) / (self.high - self.low), 0.0, 1.0)

    def icdf(self, value):
        return as_param(value, self.low) * (self.high - self.low) + self.low

    def entropy(self):
        return T.log(self.high - self.low)


class Exponential(_Univariate, ExponentialFamily):
    """rate * exp(-rate x) on x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    _params = ("rate",)

    def __init__(self, rate, validate_args=None):
        self._init_params((rate,), validate_args)

    mean = property(lambda self: 1 / self.rate)
    mode = property(lambda self: T.zeros_like(self.rate))
    stddev = property(lambda self: 1 / self.rate)
    variance = property(lambda self: self.rate ** -2)

    def rsample(self, sample_shape=()):
        u = uniform01(self._extended_shape(sample_shape), self.rate)
        return -T.log1p(-u) / self.rate

    def log_prob(self, value):
        value = self._value(value)
        return T.log(self.rate) - self.rate * value

    def cdf(self, value):
        value = self._value(value)
        return 1 - T.exp(-self.rate * value)

    def icdf(self, value):
        return -T.log1p(-as_param(value, self.rate)) / self.rate

    def entropy(self):
        return 1.0 - T.log(self.rate)


class Laplace(_Univariate):
    """exp(-|x - loc| / scale) / (2 scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._init_params((loc, scale), validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: _SQRT2 * self.scale)
    variance = property(lambda self: 2 * self.scale ** 2)

    def rsample(self, sample_shape=()):
        eps = T.finfo(self.loc.dtype).eps
        u = uniform01(self._extended_shape(sample_shape), self.loc) * (2 - eps) + (eps - 1)   # (-1, 1)
        return self.loc - self.scale * T.sign(u) * T.log1p(-T.abs(u))

    def log_prob(self, value):
        value = self._value(value)
        return -T.log(2 * self.scale) - T.abs(value - self.loc) / self.scale

    # cdf and icdf as two branches (each fed only its own side, so neither overflows): written with
    # sign() and abs(), their gradients came out 0 at value == loc / 1/2 instead of the density's
    def cdf(self, value):
        z = (self._value(value) - self.loc) / self.scale
        left = z < 0
        lo, hi = T.where(left, z, 0.0), T.where(left, 0.0, z)
        return T.where(left, 0.5 * T.exp(lo), -0.5 * T.expm1(-hi) + 0.5)

    def icdf(self, value):
        t = as_param(value, self.loc) - 0.5
        left = t < 0
        lo, hi = T.where(left, t, 0.0), T.where(left, 0.0, t)
        return self.loc + self.scale * T.where(left, T.log1p(2 * lo), -T.log1p(-2 * hi))

    def entropy(self):
        return 1 + T.log(2 * self.scale)


class Cauchy(_Univariate):
    """The Cauchy (Lorentz) distribution: no mean, infinite variance."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._init_params((loc, scale), validate_args)

    mean = property(lambda self: self._full(math.nan))
    mode = property(lambda self: self.loc)
    variance = property(lambda self: self._full(math.inf))

    def rsample(self, sample_shape=()):
        u = uniform01(self._extended_shape(sample_shape), self.loc)
        return self.loc + self.scale * T.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        value = self._value(value)
        return -math.log(math.pi) - T.log(self.scale) - T.log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value):
        value = self._value(value)
        return T.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return T.tan(math.pi * (as_param(value, self.loc) - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + T.log(self.scale)


class LogNormal(_Univariate):
    """exp(X) for X ~ Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._init_params((loc, scale), validate_args)

    @property
    def base_dist(self):
        return Normal(self.loc, self.scale, validate_args=False)

    mean = property(lambda self: T.exp(self.loc + self.scale ** 2 / 2))
    mode = property(lambda self: T.exp(self.loc - self.scale ** 2))
    variance = property(lambda self: T.expm1(self.scale ** 2) * T.exp(2 * self.loc + self.scale ** 2))

    def rsample(self, sample_shape=()):
        return T.exp(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        value = self._value(value)
        y = T.log(value)
        return self.base_dist.log_prob(y) - y

    def cdf(self, value):
        value = self._value(value)
        return self.base_dist.cdf(T.log(value))

    def icdf(self, value):
        return T.exp(self.base_dist.icdf(value))

    def entropy(self):
        return self.base_dist.entropy() + self.loc
