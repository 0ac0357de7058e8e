"""The gamma family: Gamma, Chi2, Beta, Dirichlet and StudentT (PyTorch's names and formulas).

Draws start from standard gamma variates of tensor.random (standard_gamma, tensor/random_extra.py);
rsample differentiates them by the implicit reparameterization gradient: for x = F^-1(u; alpha),
dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha), F the regularized lower incomplete gamma function
(tensor.special.gammainc, its alpha-derivative by a central difference in float64) and f the
density. The draw enters the graph as x + (alpha - stop_gradient(alpha)) dx/dalpha: its value is x,
its derivative in alpha that gradient (first order only)."""
from __future__ import annotations

import importlib
import math

from . import _ops as T
from . import constraints
from ._special import digamma_half_step, gamma_entropy_parts, lbeta, log_gamma_density
from .distribution import (
    HALF_LOG_2PI,
    Distribution,
    ExponentialFamily,
    as_param,
    broadcast_all,
    standard_normal,
)


def _sampler():
    fn = getattr(T.random, "standard_gamma", None)
    if fn is None:
        try:   # (loaded by name: an optional module of the library)
            importlib.import_module("tensor.random_extra")
        except ImportError:
            pass
        fn = getattr(T.random, "standard_gamma", None)
    if fn is None:
        raise NotImplementedError("gamma-family sampling needs tensor.random.standard_gamma "
                                  "(tensor/random_extra.py), which this build lacks")
    return fn


def _standard_gamma_grad(alpha, x):
    """dx/dalpha of a Gamma(alpha, 1) draw x, holding its quantile fixed (detached, float64)."""
    a = alpha.detach().astype(T.float64)
    x = x.detach().astype(T.float64)
    x = T.clip(x, T.finfo(T.float64).tiny, None)
    h = 1e-5 * a
    dF = (T.special.gammainc(a + h, x) - T.special.gammainc(a - h, x)) / (2 * h)
    log_f = (a - 1) * T.log(x) - x - T.lgamma(a)
    g = -dF * T.exp(-log_f)
    return T.where(T.isfinite(g), g, 0.0).astype(alpha.dtype)


def rsample_standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape, differentiable in alpha (implicit reparameterization)."""
    x = _sampler()(alpha.detach())
    if tuple(x.shape) != tuple(alpha.shape):
        x = T.broadcast_to(x, alpha.shape)
    x = T.clip(x.astype(alpha.dtype), T.finfo(alpha.dtype).tiny, None)
    if not alpha.requires_grad:
        return x
    return x + (alpha - alpha.detach()) * _standard_gamma_grad(alpha, x)


class Gamma(ExponentialFamily):
    """rate^a x^(a-1) exp(-rate x) / Gamma(a) on x >= 0 (a = concentration)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("concentration", "rate"))

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: T.clip((self.concentration - 1) / self.rate, 0.0, None))
    variance = property(lambda self: self.concentration / self.rate ** 2)

    def _value(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self._like)
        if self._validate_args:
            self._validate_sample(value)
        return value

    _like = property(lambda self: self.rate)   # (the parameter a number value takes dtype and device of)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = rsample_standard_gamma(T.broadcast_to(self.concentration, shape)) / self.rate
        return T.clip(x, T.finfo(x.dtype).tiny, None)

    def log_prob(self, value):
        value = self._value(value)
        a, r = self.concentration, self.rate
        direct = T.xlogy(a, r) + T.xlogy(a - 1, value) - r * value - T.lgamma(a)
        big = (a >= 30) & (value > 0)   # (there the direct form's large terms cancel)
        if not bool(T.any(big)):
            return direct
        a_s, x_s = T.where(big, a, 30.0), T.where(big, value, 1.0)
        return T.where(big, log_gamma_density(a_s, r * x_s, x_s), direct)

    def cdf(self, value):
        value = self._value(value)
        return T.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        direct = a - T.log(self.rate) + T.lgamma(a) + (1.0 - a) * T.digamma(a)
        big = a >= 30
        if not bool(T.any(big)):
            return direct
        a_s = T.where(big, a, 30.0)
        half_log_a, gap = gamma_entropy_parts(a_s)   # (a - 1) / (2a) + (a - 1) gap: digamma's rest
        stable = HALF_LOG_2PI + half_log_a - T.log(self.rate) + (a_s - 1) * (0.5 / a_s + gap)
        return T.where(big, stable, direct)


class Chi2(Gamma):
    """The chi-squared distribution with df degrees of freedom: Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, T.full_like(df, 0.5), validate_args)

    @property
    def df(self):
        return self.concentration * 2


class Beta(ExponentialFamily):
    """x^(a-1) (1-x)^(b-1) / B(a, b) on [0, 1] (a = concentration1, b = concentration0)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("concentration1", "concentration0"))

    _value = Gamma._value
    _like = property(lambda self: self.concentration1)

    mean = property(lambda self: self.concentration1 / (self.concentration1 + self.concentration0))

    @property
    def mode(self):
        """(a - 1) / (a + b - 2), the concentrations below 1 taken as 1, and at the end of the
        larger one where both are below 1 (PyTorch's, as a two-category Dirichlet's)."""
        a, b = self.concentration1, self.concentration0
        am1, bm1 = T.clip(a - 1, 0.0, None), T.clip(b - 1, 0.0, None)
        corner = (a >= b).astype(a.dtype)
        return T.where((a < 1) & (b < 1), corner, am1 / (am1 + bm1))

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = rsample_standard_gamma(T.broadcast_to(self.concentration1, shape))
        y = rsample_standard_gamma(T.broadcast_to(self.concentration0, shape))
        tiny = T.finfo(x.dtype).tiny
        eps = T.finfo(x.dtype).eps
        return T.clip(x / (x + y), tiny, 1 - eps)

    def log_prob(self, value):
        value = self._value(value)
        a, b = self.concentration1, self.concentration0
        return T.xlogy(a - 1, value) + T.xlogy(b - 1, 1 - value) - lbeta(a, b)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        return lbeta(a, b) - (a - 1) * T.digamma(a) - (b - 1) * T.digamma(b) + (a + b - 2) * T.digamma(a + b)


class Dirichlet(ExponentialFamily):
    """Over the probability simplex of K = concentration.shape[-1] categories."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        (c,) = broadcast_all(concentration)
        if c.ndim < 1:
            raise ValueError("Dirichlet: concentration must have at least one dim (K categories), "
                             "got a scalar")
        self.concentration = c
        super().__init__(c.shape[:-1], c.shape[-1:], validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("concentration",))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(axis=-1, keepdims=True)

    @property
    def mode(self):
        c = self.concentration
        cm1 = T.clip(c - 1, 0.0, None)
        mode = cm1 / cm1.sum(axis=-1, keepdims=True)
        # all concentrations below 1: the density peaks at the corner of the largest (PyTorch's)
        corner = (T.arange(c.shape[-1], device=c.device) == T.argmax(c, axis=-1)[..., None]).astype(c.dtype)
        return T.where((c < 1).all(axis=-1)[..., None], corner, mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(axis=-1, keepdims=True)
        return c * (c0 - c) / (c0 ** 2 * (c0 + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = rsample_standard_gamma(T.broadcast_to(self.concentration, shape))
        return T.clip(g / g.sum(axis=-1, keepdims=True), T.finfo(g.dtype).tiny, None)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.concentration)
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (T.xlogy(c - 1, value).sum(axis=-1) + T.lgamma(c.sum(axis=-1))
                - T.lgamma(c).sum(axis=-1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        c0 = c.sum(axis=-1)
        return (T.lgamma(c).sum(axis=-1) - T.lgamma(c0) - (k - c0) * T.digamma(c0)
                - ((c - 1) * T.digamma(c)).sum(axis=-1))


class StudentT(Distribution):
    """Student's t with df degrees of freedom, shifted by loc and scaled by scale."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("df", "loc", "scale"))

    _value = Gamma._value
    _like = property(lambda self: self.loc)

    mean = property(lambda self: T.where(self.df > 1, self.loc, math.nan))
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        df = self.df
        v = self.scale ** 2 * df / T.where(df > 2, df - 2, 1.0)
        # (the fill as a tensor of df's dtype: where() of two Python floats is float64)
        fill = T.where(df > 1, T.full_like(df, math.inf), math.nan)
        return T.where(df > 2, v, fill)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_normal(shape, self.loc)
        z = 2 * rsample_standard_gamma(T.broadcast_to(0.5 * self.df, shape))   # Chi2(df)
        return self.loc + self.scale * x * T.sqrt(self.df / z)

    def log_prob(self, value):
        value = self._value(value)
        y = (value - self.loc) / self.scale
        df = self.df
        # lgamma(df/2) - lgamma((df+1)/2) + log(pi)/2 as lbeta(df/2, 1/2): the lgammas cancel to
        # nothing for a large df (1e15 in float64, 1e6 in float32)
        z = T.log(self.scale) + 0.5 * T.log(df) + lbeta(0.5 * df, 0.5)
        return -0.5 * (df + 1.0) * T.log1p(y * y / df) - z

    def entropy(self):
        df = self.df
        return (T.log(self.scale) + 0.5 * (df + 1) * digamma_half_step(0.5 * df)
                + 0.5 * T.log(df) + lbeta(0.5 * df, 0.5))

