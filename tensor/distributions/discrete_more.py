"""More discrete distributions and their continuous relaxations (PyTorch's names and formulas):
NegativeBinomial, Multinomial, OneHotCategoricalStraightThrough, and the Gumbel-softmax (concrete)
relaxations RelaxedBernoulli (over LogitRelaxedBernoulli) and RelaxedOneHotCategorical (over
ExpRelaxedCategorical)."""
from __future__ import annotations

from . import _ops as T
from . import constraints
from .discrete import (
    Categorical,
    OneHotCategorical,
    _Counted,
    _one_of,
    _poisson_sample,
    _ProbsOrLogits,
    _saddle_point,
    _softplus,
)
from .distribution import Distribution, _shape_of, as_param, broadcast_all, uniform01
from .gamma import _sampler
from .transforms import ExpTransform, SigmoidTransform, TransformedDistribution


class NegativeBinomial(_Counted):
    """The number of successes (probability probs each) before total_count failures; total_count
    may be any nonnegative real (a Gamma-Poisson mixture)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    mean = property(lambda self: self.total_count * T.exp(self.logits))
    mode = property(lambda self: T.clip(T.floor((self.total_count - 1) * T.exp(self.logits)), 0.0, None))
    variance = property(lambda self: self.mean / T.sigmoid(-self.logits))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        r = T.broadcast_to(self.total_count.detach(), shape)
        odds = T.broadcast_to(T.exp(self.logits.detach()), shape)
        live = r > 0
        g = _sampler()(T.where(live, r, 1.0)).astype(r.dtype)
        rate = T.where(live, g * odds, 0.0)
        return _poisson_sample(rate)

    def log_prob(self, value):
        value = self._value(value)
        r, logits = self.total_count, self.logits
        log_unnorm = -r * _softplus(logits) - value * _softplus(-logits)
        log_norm = T.lgamma(r + value) - T.lgamma(1 + value) - T.lgamma(r)
        log_norm = T.where(r + value == 0, 0.0, log_norm)
        direct = log_unnorm + log_norm
        # NB(k; r, p) = r / (r + k) Binomial(r; r + k, 1 - p): its saddle point form for large counts
        n = r + value
        saddle = _saddle_point(self, r, n, value, flip=True)
        if saddle is None:
            return direct
        big, log_binom = saddle
        return T.where(big, log_binom + T.log(T.where(big, r, 1.0) / T.where(big, n, 2.0)), direct)


def _inner_categorical(name, probs, logits, validate_args):
    """The Categorical a distribution is built on, its parameter errors naming that distribution."""
    try:
        return Categorical(probs, logits, validate_args=validate_args)
    except ValueError as e:
        raise ValueError(str(e).replace("Categorical", name, 1)) from None


class Multinomial(Distribution):
    """Counts over K categories of total_count (an int) independent Categorical(probs) draws;
    event_shape (K,)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int) or isinstance(total_count, bool):
            raise TypeError(f"Multinomial: total_count must be a Python int (inhomogeneous counts are not "
                            f"supported), got {type(total_count).__name__}")
        if total_count < 0:
            raise ValueError(f"Multinomial: total_count must be >= 0, got {total_count}")
        _one_of("Multinomial", probs, logits)
        self.total_count = total_count
        self._categorical = _inner_categorical("Multinomial", probs, logits, validate_args)
        cat = self._categorical
        super().__init__(cat.batch_shape, (cat._num_events,), validate_args=False)
        self._validate_args = cat._validate_args

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)

    def expand(self, batch_shape, _instance=None):
        new = Multinomial.__new__(Multinomial)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        """total_count Categorical draws, counted per category by a scatter-add (memory grows with
        total_count, not with total_count times the number of categories)."""
        k = self.event_shape[0]
        shape = _shape_of(sample_shape) + self.batch_shape
        p = self.probs.detach()
        counts = T.zeros(shape + (k,), dtype=p.dtype, device=p.device)
        if self.total_count == 0:
            return counts
        draws = T.moveaxis(self._categorical.sample((self.total_count,) + _shape_of(sample_shape)), 0, -1)
        return T.scatter_add(counts, -1, draws, T.ones(shape + (self.total_count,), dtype=p.dtype,
                                                       device=p.device))

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.probs)
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        logits = T.where((value == 0) & T.isneginf(logits), 0.0, logits)
        return (T.lgamma(value.sum(axis=-1) + 1) - T.lgamma(value + 1).sum(axis=-1)
                + (logits * value).sum(axis=-1))

    def entropy(self):
        """n H(Categorical) - log n! + sum_k E[log X_k!], X_k ~ Binomial(n, p_k) (summed exactly)."""
        n, p = self.total_count, self.probs
        j = T.arange(n + 1, dtype=p.dtype, device=p.device).reshape((n + 1,) + (1,) * p.ndim)
        lb = (T.lgamma(T.full((), n + 1.0, dtype=p.dtype, device=p.device)) - T.lgamma(j + 1)
              - T.lgamma(n - j + 1) + T.xlogy(j, p) + T.special.xlog1py(n - j, -p))
        expect = (T.exp(lb) * T.lgamma(j + 1)).sum(axis=0).sum(axis=-1)
        return n * self._categorical.entropy() - T.lgamma(T.full((), n + 1.0, dtype=p.dtype,
                                                                 device=p.device)) + expect

    def __repr__(self):
        return f"Multinomial(total_count: {self.total_count}, probs: {tuple(self.probs.shape)})"


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes the gradient straight through: the value is a
    one-hot draw, its gradient that of probs (Bengio et al., 2013)."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        s = self.sample(sample_shape)
        p = self.probs
        return s + (p - p.detach())


def _temperature(name, temperature, like):
    t = temperature if isinstance(temperature, T.Tensor) else as_param(temperature, like)
    if t.dtype != like.dtype:
        t = t.astype(like.dtype)
    if not bool(T.all(t > 0)):
        raise ValueError(f"{name}: temperature must be positive, got {t}")
    return t


class LogitRelaxedBernoulli(_ProbsOrLogits):
    """The logit of a RelaxedBernoulli draw: (logits + logistic noise) / temperature."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        _one_of(type(self).__name__, probs, logits)
        name = "probs" if probs is not None else "logits"
        (p,) = broadcast_all(probs if probs is not None else logits)
        self.__dict__[name] = p
        self.temperature = _temperature(type(self).__name__, temperature, p)
        super().__init__(p.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, ("probs", "logits"))
        new.temperature = self.temperature
        return new

    def _noise(self, shape):
        f = T.finfo(self._param.dtype)
        return T.clip(uniform01(shape, self._param), f.tiny, 1 - f.eps)

    def rsample(self, sample_shape=()):
        u = self._noise(self._extended_shape(sample_shape))
        return (self.logits + T.log(u) - T.log1p(-u)) / self.temperature

    def log_prob(self, value):
        value = self._value(value)
        diff = self.logits - value * self.temperature
        return T.log(self.temperature) + diff - 2 * _softplus(diff)


def _relaxed_repr(d):
    base = d.base_dist if isinstance(d, TransformedDistribution) else d
    cat = getattr(base, "_categorical", base)
    name = "probs" if "probs" in cat.__dict__ else "logits"
    return f"{type(d).__name__}(temperature: {d.temperature}, {name}: {tuple(cat.__dict__[name].shape)})"


class _Relaxed(TransformedDistribution):
    """Shared: temperature / probs / logits read from the base, expand rebuilds the class."""
    temperature = property(lambda self: self.base_dist.temperature)
    probs = property(lambda self: self.base_dist.probs)
    logits = property(lambda self: self.base_dist.logits)
    __repr__ = _relaxed_repr

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        base = self.base_dist.expand(batch_shape)
        TransformedDistribution.__init__(new, base, self.transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new


class RelaxedBernoulli(_Relaxed):
    """A relaxed (concrete) Bernoulli on (0, 1): sigmoid of a LogitRelaxedBernoulli draw; low
    temperatures push the draws to 0 and 1."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        try:
            base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        except ValueError as e:
            raise ValueError(str(e).replace("LogitRelaxedBernoulli", "RelaxedBernoulli", 1)) from None
        super().__init__(base, [SigmoidTransform()], validate_args=validate_args)


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log_softmax((logits + Gumbel noise) / temperature)
    over the K categories (event_shape (K,))."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = _inner_categorical(type(self).__name__, probs, logits, validate_args)
        cat = self._categorical
        self.temperature = _temperature(type(self).__name__, temperature, cat._param)
        super().__init__(cat.batch_shape, (cat._num_events,), validate_args=False)
        self._validate_args = cat._validate_args

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    __repr__ = _relaxed_repr

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        new.temperature = self.temperature
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        logits = self.logits
        f = T.finfo(logits.dtype)
        u = T.clip(uniform01(self._extended_shape(sample_shape), logits), f.tiny, 1 - f.eps)
        scores = (logits - T.log(-T.log(u))) / self.temperature
        return scores - T.logsumexp(scores, axis=-1, keepdims=True)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.logits)
        if self._validate_args:
            self._validate_sample(value)
        k = self.event_shape[0]
        t = self.temperature
        log_scale = T.lgamma(T.full_like(t, float(k))) + (k - 1) * T.log(t)
        score = self.logits - value * t[..., None] if t.ndim else self.logits - value * t
        score = (score - T.logsumexp(score, axis=-1, keepdims=True)).sum(axis=-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A relaxed (concrete / Gumbel-softmax) one-hot categorical on the simplex: exp of an
    ExpRelaxedCategorical draw."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        try:
            base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        except ValueError as e:
            raise ValueError(str(e).replace("ExpRelaxedCategorical", "RelaxedOneHotCategorical", 1)) from None
        super().__init__(base, [ExpTransform()], validate_args=validate_args)
