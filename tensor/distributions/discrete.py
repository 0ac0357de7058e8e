"""The discrete distributions: Bernoulli, Categorical, OneHotCategorical, Binomial, Poisson,
Geometric (PyTorch's names and formulas). Parameterized by probs or logits where PyTorch is; the
other is derived on first use. They have no rsample."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import (
    Distribution,
    _shape_of,
    as_param,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    uniform01,
)


def _softplus(x):
    # log(1 + exp(x)) = logaddexp(x, 0): stable, and its gradient sigmoid(x) is right at x = 0 too
    # (max(x, 0) + log1p(exp(-|x|)) has a kink there in each term, and gave 0 for 1/2)
    return T.logaddexp(x, 0.0)


def _bce_with_logits(logits, target):
    """-(target log sigmoid(logits) + (1 - target) log(1 - sigmoid(logits))), stably."""
    return _softplus(logits) - logits * target


def _one_of(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: give exactly one of probs or logits, got "
                         f"{'both' if probs is not None else 'neither'}")


class _ProbsOrLogits(Distribution):
    """probs and logits (of a binary or a categorical event) computed from whichever was given."""
    _binary = True

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)

    @property
    def _param(self):
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    def _value(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self._param)
        if self._validate_args:
            self._validate_sample(value)
        return value


class _Counted(_ProbsOrLogits):
    """A count of trials total_count with their probs or logits: Binomial, NegativeBinomial."""

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of(type(self).__name__, probs, logits)
        name = "probs" if probs is not None else "logits"
        n, p = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = n
        self.__dict__[name] = p
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("total_count", "probs", "logits"))


class Bernoulli(_ProbsOrLogits):
    """1 with probability probs, else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of("Bernoulli", probs, logits)
        name = "probs" if probs is not None else "logits"
        (p,) = broadcast_all(probs if probs is not None else logits)
        self.__dict__[name] = p
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("probs", "logits"))

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        m = (self.probs >= 0.5).astype(self.probs.dtype)
        return T.where(self.probs == 0.5, math.nan, m)

    def sample(self, sample_shape=()):
        p = self.probs.detach()
        u = uniform01(self._extended_shape(sample_shape), p)
        return (u < p).astype(p.dtype)

    def log_prob(self, value):
        value = self._value(value)
        return -_bce_with_logits(self.logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = T.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((2,) + (1,) * len(self.batch_shape))
        return T.broadcast_to(values, (2,) + self.batch_shape) if expand else values


def _onehot(index, n, dtype):
    return (T.arange(n, device=index.device) == index[..., None]).astype(dtype)


class Categorical(_ProbsOrLogits):
    """One of range(K) with probabilities probs[..., k] (normalized); batch_shape = probs.shape[:-1]."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(type(self).__name__, probs, logits)
        if probs is not None:
            (p,) = broadcast_all(probs)
            if p.ndim < 1:
                raise ValueError(f"{type(self).__name__}: probs must have at least one dim, got a scalar")
            self.__dict__["probs"] = p / p.sum(axis=-1, keepdims=True)
        else:
            (p,) = broadcast_all(logits)
            if p.ndim < 1:
                raise ValueError(f"{type(self).__name__}: logits must have at least one dim, got a scalar")
            self.__dict__["logits"] = p - T.logsumexp(p, axis=-1, keepdims=True)
        self._num_events = p.shape[-1]
        super().__init__(p.shape[:-1], (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("probs", "logits"))

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    param_shape = property(lambda self: self._param.shape)
    mean = property(lambda self: T.full(self.batch_shape, math.nan, dtype=self._param.dtype,
                                        device=self._param.device))
    variance = mean
    mode = property(lambda self: T.argmax(self.probs, axis=-1))

    def sample(self, sample_shape=()):
        """By inversion: the first category whose cumulative probability exceeds a uniform draw
        scaled to the total. A category of probability 0 is never drawn: inside, its cumulative
        probability equals its predecessor's; past the last positive one, the index is capped."""
        probs = self.probs.detach()
        n = self._num_events
        u = uniform01(_shape_of(sample_shape) + self.batch_shape, probs)
        cdf = T.cumsum(probs, axis=-1)
        v = u[..., None] * cdf[..., -1:]
        k = (cdf[..., :-1] <= v).astype(T.int64).sum(axis=-1)
        last = (n - 1) - T.argmax(T.flip((probs > 0).astype(T.int64), axis=-1), axis=-1)
        return T.minimum(k, last)

    def log_prob(self, value):
        value = self._value(value)
        value = value.astype(T.int64)[..., None]
        logits = self.logits
        shape = T.broadcast_shapes(value.shape, logits.shape)
        value = T.broadcast_to(value, shape[:-1] + (1,))
        logits = T.broadcast_to(logits, shape)
        return T.take_along_axis(logits, value, axis=-1)[..., 0]

    def entropy(self):
        logits = T.clip(self.logits, T.finfo(self.logits.dtype).min, None)
        return -(logits * self.probs).sum(axis=-1)

    def enumerate_support(self, expand=True):
        values = T.arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return T.broadcast_to(values, (self._num_events,) + self.batch_shape) if expand else values


class OneHotCategorical(Categorical):
    """Categorical with one-hot vectors of length K as its events (event_shape (K,))."""
    support = constraints.one_hot

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args)
        self._event_shape = (self._num_events,)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape)
        new._event_shape = (self._num_events,)
        return new

    @property
    def _categorical(self):
        new = Categorical.__new__(Categorical)
        new.__dict__.update({k: v for k, v in self.__dict__.items()})
        new._event_shape = ()
        return new

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))
    mode = property(lambda self: _onehot(T.argmax(self.probs, axis=-1), self._num_events, self.probs.dtype))

    def sample(self, sample_shape=()):
        k = self._categorical.sample(sample_shape)
        return _onehot(k, self._num_events, self.probs.dtype)

    def log_prob(self, value):
        value = self._value(value)
        return self._categorical.log_prob(T.argmax(value, axis=-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._num_events
        values = T.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return T.broadcast_to(values, (n,) + self.batch_shape + (n,)) if expand else values


class Binomial(_Counted):
    """The number of successes in total_count Bernoulli(probs) trials."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    mean = property(lambda self: self.total_count * self.probs)
    mode = property(lambda self: T.minimum(T.floor((self.total_count + 1) * self.probs), self.total_count))
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        """The sum of total_count Bernoulli draws (work and memory grow with max(total_count))."""
        p = self.probs.detach()
        n = self.total_count.detach()
        top = int(T.max(n).item()) if n.numel() else 0
        shape = self._extended_shape(sample_shape)
        u = uniform01(shape + (top,), p)
        live = T.arange(top, dtype=p.dtype, device=p.device) < n[..., None]
        return ((u < p[..., None]) & live).astype(p.dtype).sum(axis=-1)

    def log_prob(self, value):
        value = self._value(value)
        n, logits = self.total_count, self.logits
        norm = n * _softplus(logits) - T.lgamma(n + 1)
        return value * logits - T.lgamma(value + 1) - T.lgamma(n - value + 1) - norm

    def entropy(self):
        n = self.total_count
        top = int(T.max(n).item()) if n.numel() else 0
        k = self.enumerate_support(expand=False) if top else T.zeros((1,), dtype=n.dtype, device=n.device)
        inside = k <= n
        v, self._validate_args = self._validate_args, False   # (k past a smaller count is masked)
        try:
            lp = self.log_prob(T.where(inside, k, 0.0))
        finally:
            self._validate_args = v
        return -T.where(inside, T.exp(lp) * lp, 0.0).sum(axis=0)

    def enumerate_support(self, expand=True):
        n = self.total_count
        top = int(T.max(n).item())
        values = T.arange(top + 1, dtype=n.dtype, device=n.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return T.broadcast_to(values, (top + 1,) + self.batch_shape) if expand else values


def _poisson_sample(lam):
    """Poisson draws for a tensor of rates: inversion for rates < 10, and above Hormann's
    transformed rejection (PTRS, 1993), both vectorized: each round redraws only where no value
    was accepted yet."""
    out = T.zeros_like(lam)
    small = lam < 10
    # inversion: walk k up while the cumulative probability is below a uniform draw
    if bool(T.any(small)):
        lam_s = T.where(small, lam, 0.0)
        u = uniform01(lam.shape, lam)
        k = T.zeros_like(lam)
        pk = T.exp(-lam_s)
        cdf = pk
        for _ in range(200):   # P(X > 200) is below 1e-100 for rates < 10
            more = (u > cdf) & small
            if not bool(T.any(more)):
                break
            k = k + more.astype(k.dtype)
            pk = pk * lam_s / T.maximum(k, 1.0)
            cdf = T.where(more, cdf + pk, cdf)
        out = T.where(small, k, out)
    big = ~small & (lam > 0)
    if bool(T.any(big)):
        lam_b = T.where(big, lam, 10.0)
        slam, loglam = T.sqrt(lam_b), T.log(lam_b)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        todo = big
        while bool(T.any(todo)):
            U = uniform01(lam.shape, lam) - 0.5
            V = uniform01(lam.shape, lam, tiny=True)
            us = 0.5 - T.abs(U)
            k = T.floor((2 * a / T.clip(us, 1e-300, None) + b) * U + lam_b + 0.43)
            quick = (us >= 0.07) & (V <= vr)
            bad = (k < 0) | ((us < 0.013) & (V > us))
            lhs = T.log(V) + T.log(inv_alpha) - T.log(a / T.clip(us * us, 1e-300, None) + b)
            rhs = -lam_b + k * loglam - T.lgamma(T.clip(k, 0.0, None) + 1)
            ok = todo & (quick | (~bad & (lhs <= rhs)))
            out = T.where(ok, k, out)
            todo = todo & ~ok
    return out


class Poisson(Distribution):
    """rate^k exp(-rate) / k! on k = 0, 1, 2, ..."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("rate",))

    mean = property(lambda self: self.rate)
    mode = property(lambda self: T.floor(self.rate))
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=()):
        lam = T.broadcast_to(self.rate.detach(), self._extended_shape(sample_shape))
        return _poisson_sample(lam)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.rate)
        if self._validate_args:
            self._validate_sample(value)
        return T.xlogy(value, self.rate) - self.rate - T.lgamma(value + 1)


class Geometric(_ProbsOrLogits):
    """The number of failures before the first success of Bernoulli(probs) trials."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of("Geometric", probs, logits)
        name = "probs" if probs is not None else "logits"
        (p,) = broadcast_all(probs if probs is not None else logits)
        self.__dict__[name] = p
        super().__init__(p.shape, (), validate_args)
        if self._validate_args and name == "probs" and not bool(T.all(p > 0)):
            raise ValueError(f"Geometric: probs must be in (0, 1], got {p}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, ("probs", "logits"))

    mean = property(lambda self: 1 / self.probs - 1)
    mode = property(lambda self: T.zeros_like(self.probs))
    variance = property(lambda self: (1 / self.probs - 1) / self.probs)

    def sample(self, sample_shape=()):
        p = self.probs.detach()
        u = uniform01(self._extended_shape(sample_shape), p, tiny=True)
        return T.floor(T.log(u) / T.log1p(-p))

    def log_prob(self, value):
        value = self._value(value)
        p = self.probs
        fail = T.where((p == 1) & (value == 0), 0.0, value * T.log1p(-T.where(p == 1, 0.0, p)))
        fail = T.where((p == 1) & (value != 0), -math.inf, fail)
        return fail + T.log(p)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs
