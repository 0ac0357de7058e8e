"""Bijective transforms and TransformedDistribution (PyTorch's torch.distributions.transforms):
y = f(x) for x from a base distribution, with log p(y) = log p(x) - log|det df/dx|. A tanh-squashed
Gaussian policy, for one: TransformedDistribution(Normal(mu, sigma), [TanhTransform()])."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import Distribution, _shape_of, as_param


def _sum_rightmost(x, n: int):
    return x.reshape(x.shape[:x.ndim - n] + (-1,)).sum(axis=-1) if n > 0 else x


def _softplus(x):
    return T.clip(x, 0.0, None) + T.log1p(T.exp(-T.abs(x)))


class Transform:
    """A bijection y = f(x) over event_dim rightmost dims, with its inverse and log|det J|."""
    domain = constraints.real
    codomain = constraints.real
    bijective = True
    event_dim = 0
    sign = 1

    def __call__(self, x):
        return self._call(x)

    def inv(self, y):
        return self._inverse(y)

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__}: forward is not implemented")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__}: inverse is not implemented")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__}: log_abs_det_jacobian is not implemented")

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


class ExpTransform(Transform):
    """y = exp(x)."""
    codomain = constraints.positive

    def _call(self, x):
        return T.exp(x)

    def _inverse(self, y):
        return T.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):
    """y = loc + scale x (scale nonzero), over event_dim rightmost dims."""

    def __init__(self, loc, scale, event_dim: int = 0):
        self.loc, self.scale, self.event_dim = loc, scale, int(event_dim)

    @property
    def sign(self):
        return T.sign(self.scale) if isinstance(self.scale, T.Tensor) else (1 if self.scale > 0 else -1)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale if isinstance(self.scale, T.Tensor) else as_param(self.scale, x)
        ladj = T.broadcast_to(T.log(T.abs(scale)), T.broadcast_shapes(scale.shape, x.shape))
        return _sum_rightmost(ladj, self.event_dim)


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), onto (0, 1)."""
    codomain = constraints.unit_interval

    def _call(self, x):
        f = T.finfo(x.dtype)
        return T.clip(T.sigmoid(x), f.tiny, 1 - f.eps)

    def _inverse(self, y):
        f = T.finfo(y.dtype)
        y = T.clip(y, f.tiny, 1 - f.eps)
        return T.log(y) - T.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class TanhTransform(Transform):
    """y = tanh(x), onto (-1, 1); log|dy/dx| = 2 (log 2 - x - softplus(-2x)), stable for large |x|."""
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return T.tanh(x)

    def _inverse(self, y):
        return 0.5 * (T.log1p(y) - T.log1p(-y))

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class ComposeTransform(Transform):
    """parts applied in order: y = parts[-1](... parts[0](x))."""

    def __init__(self, parts):
        self.parts = list(parts)
        self.event_dim = max((p.event_dim for p in self.parts), default=0)

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        total = 0.0
        for p in self.parts:
            y = p(x)
            total = total + _sum_rightmost(p.log_abs_det_jacobian(x, y), self.event_dim - p.event_dim)
            x = y
        return total

    def __repr__(self):
        return f"ComposeTransform({self.parts!r})"


class TransformedDistribution(Distribution):
    """The distribution of transforms applied in order to draws of base_distribution."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        transforms = list(transforms)
        for tr in transforms:
            if not isinstance(tr, Transform):
                raise TypeError(f"TransformedDistribution: transforms must be Transform instances, got "
                                f"{type(tr).__name__}")
        self.base_dist, self.transforms = base_distribution, transforms
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = max([len(base_distribution.event_shape)] + [tr.event_dim for tr in transforms])
        if event_dim > len(shape):
            raise ValueError(f"TransformedDistribution: the transforms act on {event_dim} dims but the base "
                             f"has shape {shape}")
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    @property
    def support(self):
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        extra = self.event_shape[:len(self.event_shape) - len(self.base_dist.event_shape)]
        return TransformedDistribution(self.base_dist.expand(batch_shape + extra), self.transforms,
                                       validate_args=False)

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for tr in self.transforms:
            x = tr(x)
        return x.detach()

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for tr in self.transforms:
            x = tr(x)
        return x

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value)
        event_dim = len(self.event_shape)
        lp = 0.0
        y = value
        for tr in reversed(self.transforms):
            x = tr.inv(y)
            lp = lp - _sum_rightmost(tr.log_abs_det_jacobian(x, y), event_dim - tr.event_dim)
            y = x
        return lp + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotone(self, value):
        sign = 1
        for tr in self.transforms:
            sign = sign * tr.sign
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for tr in reversed(self.transforms):
            value = tr.inv(value)
        return self._monotone(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotone(value if isinstance(value, T.Tensor) else as_param(value)))
        for tr in self.transforms:
            value = tr(value)
        return value
