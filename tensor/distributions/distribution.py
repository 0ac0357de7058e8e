"""The Distribution base class (PyTorch's torch.distributions.Distribution) and the helpers the
distributions share: parameters as broadcast tensors, and draws from the library's global
generator (tensor.random: seeded with tensor.random.seed / manual_seed) on the parameters'
device."""
from __future__ import annotations

import math
import numbers

from . import _ops as T
from . import constraints

_VALIDATE = True


def _shape_of(sample_shape) -> tuple:
    if isinstance(sample_shape, numbers.Integral):
        return (int(sample_shape),)
    return tuple(int(s) for s in sample_shape)


def as_param(x, like=None):
    """x as a floating tensor (a Python number takes like's dtype and device when given)."""
    if isinstance(x, T.Tensor):
        return x if x.dtype.kind in "fc" else x.astype(T.get_default_dtype())
    if like is not None:
        return T.full((), x, dtype=like.dtype, device=like.device)
    return T.asarray(x, dtype=T.get_default_dtype())


def broadcast_all(*values):
    """The parameters as tensors of one shape, dtype and device: Python numbers take the dtype
    and device of the tensor parameters (the default dtype when there are none)."""
    tensors = [v for v in values if isinstance(v, T.Tensor)]
    like = None
    if tensors:
        dtype = T.result_type(*[t.dtype for t in tensors])
        if dtype.kind not in "fc":
            dtype = T.get_default_dtype()
        like = T.zeros((), dtype=dtype, device=tensors[0].device)
    out = []
    for v in values:
        if not isinstance(v, T.Tensor) and not isinstance(v, numbers.Number):
            v = T.asarray(v)
        t = as_param(v, like)
        if like is not None and t.dtype != like.dtype:
            t = t.astype(like.dtype)
        out.append(t)
    shape = T.broadcast_shapes(*[t.shape for t in out])
    return tuple(t if t.shape == shape else T.broadcast_to(t, shape) for t in out)


def standard_normal(shape, like):
    return T.random.randn(tuple(shape), dtype=like.dtype, device=like.device)


def uniform01(shape, like, tiny=False):
    """Uniform draws in [0, 1) (tiny=True: in (0, 1), for the logs of inverse-CDF samplers)."""
    u = T.random.rand(tuple(shape), dtype=like.dtype, device=like.device)
    if tiny:
        u = T.clip(u, T.finfo(like.dtype).tiny, None)
    return u


def probs_to_logits(probs, is_binary=False):
    eps = T.finfo(probs.dtype).eps
    p = T.clip(probs, eps, 1 - eps) if is_binary else T.clip(probs, eps, None)
    return T.log(p) - T.log1p(-p) if is_binary else T.log(p)


def logits_to_probs(logits, is_binary=False):
    return T.sigmoid(logits) if is_binary else T.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = T.finfo(probs.dtype).eps
    return T.clip(probs, eps, 1 - eps)


def _bad(ok, value, event_dim: int) -> str:
    """'k of n do not, the first at index i: v' for an error message (not the whole tensor)."""
    bad = ~ok
    event = tuple(value.shape[value.ndim - event_dim:]) if event_dim else ()
    value = T.broadcast_to(value, tuple(bad.shape) + event)
    idx = tuple(int(i) for i in T.argwhere(bad)[0].tolist())
    n = int(bad.astype(T.int64).sum().item())
    return f"{n} of {bad.numel()} do not, the first at index {idx}: {value[idx].tolist()}"


class lazy_property:
    """A property computed once per instance (probs from logits and the other way round)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.name = fn.__name__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value


class Distribution:
    """A batch of distributions of batch_shape, each over events of event_shape."""
    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    support = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        global _VALIDATE
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expects True or False, got {value!r}")
        _VALIDATE = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = _VALIDATE if validate_args is None else bool(validate_args)
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if name not in self.__dict__ and isinstance(getattr(type(self), name, None), lazy_property):
                    continue   # probs / logits: only the one given is checked
                value = getattr(self, name)
                ok = constraint.check(value)
                if not bool(T.all(ok)):
                    raise ValueError(
                        f"{type(self).__name__}: parameter {name} of shape {tuple(value.shape)} must "
                        f"satisfy the constraint {constraint!r}, but {_bad(ok, value, constraint.event_dim)}")

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return self._event_shape

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError(f"{type(self).__name__}.expand is not implemented")

    def _expanded(self, batch_shape, names):
        """A copy with each parameter in names broadcast to batch_shape (+ its event dims)."""
        batch_shape = _shape_of(batch_shape)
        new = type(self).__new__(type(self))
        for name in names:
            if name in self.__dict__:
                v = self.__dict__[name]
                extra = v.shape[len(self.batch_shape):]
                new.__dict__[name] = T.broadcast_to(v, batch_shape + tuple(extra))
        for k, v in self.__dict__.items():
            if k not in new.__dict__ and not isinstance(getattr(type(self), k, None), lazy_property):
                if not isinstance(v, T.Tensor):
                    new.__dict__[k] = v
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__}.mean is not implemented")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__}.mode is not implemented")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__}.variance is not implemented")

    @property
    def stddev(self):
        return T.sqrt(self.variance)

    def sample(self, sample_shape=()):
        """Draws of shape sample_shape + batch_shape + event_shape, without gradient."""
        return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler (rsample); "
                                  f"use sample()")

    def sample_n(self, n: int):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__}.log_prob is not implemented")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.cdf is not implemented")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.icdf is not implemented")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__}.entropy is not implemented")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__}.enumerate_support is not implemented")

    def perplexity(self):
        return T.exp(self.entropy())

    def _extended_shape(self, sample_shape=()) -> tuple:
        return _shape_of(sample_shape) + self.batch_shape + self.event_shape

    def _validate_sample(self, value) -> None:
        """value must broadcast with batch_shape + event_shape and lie in the support."""
        if not isinstance(value, T.Tensor):
            raise ValueError(f"{type(self).__name__}.log_prob: the value must be a Tensor, got "
                             f"{type(value).__name__}")
        ev = len(self.event_shape)
        if ev and tuple(value.shape[value.ndim - ev:]) != self.event_shape:
            raise ValueError(f"{type(self).__name__}: the value's rightmost dims {tuple(value.shape)} must "
                             f"be the event shape {self.event_shape}")
        try:
            T.broadcast_shapes(value.shape, self.batch_shape + self.event_shape)
        except ValueError:
            raise ValueError(f"{type(self).__name__}: the value of shape {tuple(value.shape)} does not "
                             f"broadcast with batch_shape + event_shape "
                             f"{self.batch_shape + self.event_shape}") from None
        support = self.support
        if support is None or constraints.is_dependent(support):
            return
        ok = support.check(value)
        if not bool(T.all(ok)):
            bad = _bad(ok, value, support.event_dim)
            raise ValueError(f"{type(self).__name__}: the value of shape {tuple(value.shape)} is outside "
                             f"the support {support!r} of the distribution: {bad}")

    def __repr__(self):
        args = []
        for name in self.arg_constraints:
            if name in self.__dict__:
                v = self.__dict__[name]
                args.append(f"{name}: {v if v.numel() == 1 else tuple(v.shape)}")
        return f"{type(self).__name__}({', '.join(args)})"


class ExponentialFamily(Distribution):
    """Base of the exponential families, as PyTorch's (Bernoulli, Beta, Chi2, ContinuousBernoulli,
    Dirichlet, Exponential, Gamma, Normal, Poisson, Wishart: isinstance works as there); their
    entropies and KL divergences are closed forms per distribution here."""


HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
