"""The discrete distributions: Bernoulli, Categorical, OneHotCategorical, Binomial, Poisson,
Geometric (PyTorch's names and formulas). Parameterized by probs or logits where PyTorch is; the
other is derived on first use. They have no rsample."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from ._special import log_binomial_pmf, log_poisson_pmf
from .distribution import (
    Distribution,
    ExponentialFamily,
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


class Bernoulli(_ProbsOrLogits, ExponentialFamily):
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


def _success_failure(d):
    """(p, 1 - p) of a probs-or-logits distribution, each without rounding to 1 (from probs where
    they were given: logits made from probs are clipped at eps)."""
    if "probs" in d.__dict__:
        return d.probs, 1 - d.probs
    return T.sigmoid(d.logits), T.sigmoid(-d.logits)


def _saddle_point(d, k, n, value, flip=False):
    """(where, log_binomial_pmf(k, n) there) for 1 <= k <= n - 1, n >= 30, 0 < p < 1 and an integer
    value, where the direct form's large terms cancel; None where that is nowhere. flip: k counts
    failures (probability 1 - p)."""
    p, q = _success_failure(d)
    if flip:
        p, q = q, p
    big = (n >= 30) & (k >= 1) & (n - k >= 1) & (p > 0) & (q > 0) & (value % 1 == 0)
    if not bool(T.any(big)):
        return None
    n_s, k_s = T.where(big, n, 2.0), T.where(big, k, 1.0)
    p_s, q_s = T.where(big, p, 0.5), T.where(big, q, 0.5)
    return big, log_binomial_pmf(k_s, n_s, p_s, q_s)


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
        """Inversion where total_count * min(p, 1 - p) < 10, Hormann's BTRS rejection above: work
        and memory independent of total_count (a sum of Bernoulli draws took memory total_count
        times the number of draws)."""
        p = self.probs.detach()
        shape = self._extended_shape(sample_shape)
        n = T.broadcast_to(self.total_count.detach(), shape)
        return _binomial_sample(n, T.broadcast_to(p, shape)).astype(p.dtype)

    def log_prob(self, value):
        value = self._value(value)
        n, logits = self.total_count, self.logits
        norm = n * _softplus(logits) - T.lgamma(n + 1)
        direct = value * logits - T.lgamma(value + 1) - T.lgamma(n - value + 1) - norm
        saddle = _saddle_point(self, value, n, value)
        return direct if saddle is None else T.where(saddle[0], saddle[1], direct)

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


def _binomial_sample(n, p):
    """Binomial(n, p) draws of n's shape, in float64; the work runs on q = min(p, 1 - p) (n - k
    is returned where p > 1/2), by inversion for n q < 10 and BTRS (Hormann, 1993) above."""
    n, p = n.astype(T.float64), p.astype(T.float64)
    flip = p > 0.5
    q = T.where(flip, 1 - p, p)
    out = T.zeros_like(n)
    small = (n * q < 10) & (q > 0) & (n > 0)
    if bool(T.any(small)):   # walk k up while the cumulative probability is below a uniform draw
        qs, ns = T.where(small, q, 0.5), T.where(small, n, 0.0)
        ratio = qs / (1 - qs)
        pk = T.exp(ns * T.log1p(-qs))
        cdf, k = pk, T.zeros_like(n)
        u = uniform01(n.shape, n)
        for _ in range(200):   # P(X > 200) is below 1e-100 for n q < 10
            more = small & (u > cdf) & (k < ns)
            if not bool(T.any(more)):
                break
            k = k + more.astype(k.dtype)
            pk = pk * ratio * (ns - k + 1) / T.maximum(k, 1.0)
            cdf = T.where(more, cdf + pk, cdf)
        out = T.where(small, k, out)
    big = (n * q >= 10) & (q > 0)
    if bool(T.any(big)):
        nb, qb = T.where(big, n, 100.0), T.where(big, q, 0.5)
        spq = T.sqrt(nb * qb * (1 - qb))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * qb
        c = nb * qb + 0.5
        v_r = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = T.log(qb / (1 - qb))
        m = T.floor((nb + 1) * qb)
        h = T.lgamma(m + 1) + T.lgamma(nb - m + 1)
        todo = big
        while bool(T.any(todo)):
            U = uniform01(n.shape, n) - 0.5
            V = uniform01(n.shape, n, tiny=True)
            us = 0.5 - T.abs(U)
            k = T.floor((2 * a / T.clip(us, 1e-300, None) + b) * U + c)
            inside = (k >= 0) & (k <= nb)
            quick = (us >= 0.07) & (V <= v_r)
            ks = T.clip(k, 0.0, nb)
            lhs = T.log(V * alpha / (a / T.clip(us * us, 1e-300, None) + b))
            rhs = h - T.lgamma(ks + 1) - T.lgamma(nb - ks + 1) + (ks - m) * lpq
            ok = todo & inside & (quick | (lhs <= rhs))
            out = T.where(ok, k, out)
            todo = todo & ~ok
    return T.where(flip, n - out, out)


class Poisson(ExponentialFamily):
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
        rate = self.rate
        direct = T.xlogy(value, rate) - rate - T.lgamma(value + 1)
        big = (value >= 30) & (rate > 0)   # (there the direct form's large terms cancel)
        if not bool(T.any(big)):
            return direct
        k_s, rate_s = T.where(big, value, 30.0), T.where(big, rate, 1.0)
        return T.where(big, log_poisson_pmf(k_s, rate_s), direct)


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
        """H(Bernoulli(p)) / p: from probs where they were given (logits derived from probs are
        clipped at eps, which made it 1e5 times too large for p = 1e-12 in float32)."""
        if "probs" not in self.__dict__:
            return _bce_with_logits(self.logits, self.probs) / self.probs
        p = self.probs
        return -(T.xlogy(p, p) + T.special.xlog1py(1 - p, -p)) / p
