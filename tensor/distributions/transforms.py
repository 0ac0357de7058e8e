"""Bijective transforms and TransformedDistribution (PyTorch's torch.distributions.transforms):
y = f(x) for x from a base distribution, with log p(y) = log p(x) - log|det df/dx|. A tanh-squashed
Gaussian policy, for one: TransformedDistribution(Normal(mu, sigma), [TanhTransform()])."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import Distribution, _shape_of, as_param


def _sum_rightmost(x, n: int):
    return x.sum(axis=tuple(range(-n, 0))) if n > 0 else x   # (a reshape to -1 fails on 0-size)


def _softplus(x):
    # log(1 + exp(x)) = logaddexp(x, 0): stable, and its gradient sigmoid(x) is right at x = 0 too
    # (max(x, 0) + log1p(exp(-|x|)) has a kink there in each term, and gave 0 for 1/2)
    return T.logaddexp(x, 0.0)


class Transform:
    """A bijection y = f(x) over event_dim rightmost dims, with its inverse and log|det J|.

    `t.inv` is the inverse as a Transform (so `t.inv(y)` inverts, as PyTorch's); event_dim is the
    domain's event dims, codomain_event_dim the codomain's (they differ for a reshape).
    cache_size=1 keeps the last (x, y) pair: `t.inv(t(x))` then returns x itself, exactly (a
    tanh-squashed sample's log_prob without atanh's rounding near +-1), as PyTorch's."""
    domain = constraints.real
    codomain = constraints.real
    bijective = True
    event_dim = 0
    _cache_size = 0
    _cached_x_y = (None, None)

    def __init__(self, cache_size: int = 0):
        self._cache_size = _check_cache_size(type(self).__name__, cache_size)
        self._cached_x_y = (None, None)

    @property
    def sign(self):
        """+1 or -1 where the transform is monotone increasing or decreasing (what cdf needs)."""
        raise NotImplementedError(f"{type(self).__name__}: sign is not defined (not a monotone "
                                  f"elementwise transform)")

    @property
    def codomain_event_dim(self) -> int:
        return self.event_dim

    def __call__(self, x):
        if not self._cache_size:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if not self._cache_size:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def with_cache(self, cache_size: int = 1):
        """This transform with the given cache size (itself when it already has it)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    @property
    def inv(self):
        return _InverseTransform(self)

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__}: forward is not implemented")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__}: inverse is not implemented")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__}: log_abs_det_jacobian is not implemented")

    def forward_shape(self, shape):
        return tuple(shape)

    def inverse_shape(self, shape):
        return tuple(shape)

    def __repr__(self):
        return type(self).__name__ + "()"

    def _key(self):
        """What makes two transforms of this class equal: () for a parameter-free one, the
        parameters for the others; None (the default): only the same object is equal."""
        return None

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not type(self):
            return False
        a, b = self._key(), other._key()
        return a is not None and b is not None and len(a) == len(b) and all(map(_same, a, b))

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(type(self))


def _check_cache_size(name: str, cache_size) -> int:
    if cache_size not in (0, 1) or isinstance(cache_size, bool):
        raise ValueError(f"{name}: cache_size must be 0 or 1, got {cache_size!r}")
    return int(cache_size)


def _same(a, b) -> bool:
    """Equal parameters: numbers, shapes, transforms or tensors (same shape, all elements equal)."""
    if isinstance(a, T.Tensor) or isinstance(b, T.Tensor):
        a = a if isinstance(a, T.Tensor) else as_param(a, b)
        b = b if isinstance(b, T.Tensor) else as_param(b, a)
        return tuple(a.shape) == tuple(b.shape) and a.device == b.device and bool(T.all(a == b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


class _InverseTransform(Transform):
    """The inverse of a transform: its forward is the inner inverse and the other way round."""

    def __init__(self, inner: Transform):
        self._inner = inner
        self._cache_size = inner._cache_size

    domain = property(lambda self: self._inner.codomain)
    codomain = property(lambda self: self._inner.domain)
    bijective = property(lambda self: self._inner.bijective)
    event_dim = property(lambda self: self._inner.codomain_event_dim)
    codomain_event_dim = property(lambda self: self._inner.event_dim)
    sign = property(lambda self: self._inner.sign)
    inv = property(lambda self: self._inner)

    def __call__(self, x):
        return self._inner._inv_call(x)   # (the inner transform's cache serves both directions)

    def _inv_call(self, y):
        return self._inner(y)

    def _call(self, x):
        return self._inner._inverse(x)

    def _inverse(self, y):
        return self._inner(y)

    def with_cache(self, cache_size: int = 1):
        return self._inner.with_cache(cache_size).inv

    def log_abs_det_jacobian(self, x, y):
        return -self._inner.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inner.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inner.forward_shape(shape)

    def _key(self):
        return (self._inner,)

    def __repr__(self):
        return f"{self._inner!r}.inv"


class ExpTransform(Transform):
    """y = exp(x)."""
    _key = staticmethod(lambda: ())
    sign = 1
    codomain = constraints.positive

    def _call(self, x):
        return T.exp(x)

    def _inverse(self, y):
        return T.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):
    """y = loc + scale x (scale nonzero), over event_dim rightmost dims."""

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size)
        self.loc, self.scale, self.event_dim = loc, scale, int(event_dim)

    def _key(self):
        return (self.loc, self.scale, self.event_dim)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    domain = property(lambda self: constraints.independent(constraints.real, self.event_dim)
                      if self.event_dim else constraints.real)
    codomain = domain

    def forward_shape(self, shape):
        """shape broadcast with loc's and scale's (tensor parameters widen the batch)."""
        return tuple(T.broadcast_shapes(tuple(shape), *[tuple(v.shape) for v in (self.loc, self.scale)
                                                        if isinstance(v, T.Tensor)]))

    inverse_shape = forward_shape

    def __repr__(self):
        def show(v):
            big = isinstance(v, T.Tensor) and v.numel() > 1
            return f"<tensor of shape {tuple(v.shape)}>" if big else f"{v}"
        return f"AffineTransform(loc={show(self.loc)}, scale={show(self.scale)}, event_dim={self.event_dim})"

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
    _key = staticmethod(lambda: ())
    sign = 1
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
    _key = staticmethod(lambda: ())
    sign = 1
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return T.tanh(x)

    def _inverse(self, y):
        return 0.5 * (T.log1p(y) - T.log1p(-y))

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


def _chain_event_dims(parts):
    """(domain, codomain) event dims of the parts applied in order (a part acting on more dims than
    the running event makes those dims event dims, as PyTorch's)."""
    ev = 0
    for p in reversed(parts):
        ev = p.event_dim + max(ev - p.codomain_event_dim, 0)
    dom = ev
    for p in parts:
        ev = p.codomain_event_dim + max(ev - p.event_dim, 0)
    return dom, ev


class ComposeTransform(Transform):
    """parts applied in order: y = parts[-1](... parts[0](x)); ComposeTransform([]) is the identity."""

    def __init__(self, parts, cache_size: int = 0):
        super().__init__(cache_size)
        self.parts = list(parts)
        for p in self.parts:
            if not isinstance(p, Transform):
                raise TypeError(f"ComposeTransform: parts must be Transforms, got {type(p).__name__}")
        self.event_dim, self._codomain_event_dim = _chain_event_dims(self.parts)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    codomain_event_dim = property(lambda self: self._codomain_event_dim)
    bijective = property(lambda self: all(p.bijective for p in self.parts))

    @property
    def domain(self):
        """The first part's domain, over the composition's event dims (a later part acting on
        more dims makes them event dims)."""
        if not self.parts:
            return constraints.real
        d = self.parts[0].domain
        extra = self.event_dim - d.event_dim
        return constraints.independent(d, extra) if extra > 0 else d

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        c = self.parts[-1].codomain
        extra = self.codomain_event_dim - c.event_dim
        return constraints.independent(c, extra) if extra > 0 else c

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    def _key(self):
        return tuple(self.parts)

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return T.zeros_like(x)
        total, ev = 0.0, self.event_dim
        for p in self.parts:
            y = p(x)
            total = total + _sum_rightmost(p.log_abs_det_jacobian(x, y), ev - p.event_dim)
            ev = ev - p.event_dim + p.codomain_event_dim
            x = y
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self):
        return f"ComposeTransform({self.parts!r})"


def _recache(tr, old, new) -> None:
    """tr's cached output `old` replaced by `new` (the same values, detached)."""
    inverse = isinstance(tr, _InverseTransform)
    owner = tr._inner if inverse else tr
    cx, cy = owner._cached_x_y
    if inverse and cx is old:
        owner._cached_x_y = (new, cy)
    elif not inverse and cy is old:
        owner._cached_x_y = (cx, new)


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
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        shape, ev = base_shape, len(base_distribution.event_shape)
        for tr in transforms:
            if tr.event_dim > len(shape):
                raise ValueError(f"TransformedDistribution: {tr!r} acts on {tr.event_dim} dims but the "
                                 f"base has shape {shape}")
            shape = tuple(tr.forward_shape(shape))
            ev = tr.codomain_event_dim + max(ev - tr.event_dim, 0)
        # transform parameters of a wider batch (AffineTransform(loc of shape (3,), ...) over a
        # scalar Normal) widen the base's batch, so that its draws broadcast with them
        back = shape
        for tr in reversed(transforms):
            back = tuple(tr.inverse_shape(back))
        if back != base_shape:
            n_event = len(base_distribution.event_shape)
            base_distribution = base_distribution.expand(back[:len(back) - n_event])
        self.base_dist, self.transforms = base_distribution, transforms
        cut = len(shape) - ev
        super().__init__(shape[:cut], shape[cut:], validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        tr = self.transforms[-1]
        extra = len(self.event_shape) - tr.codomain_event_dim
        return constraints.independent(tr.codomain, extra) if extra > 0 else tr.codomain

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        shape = batch_shape + self.event_shape
        for tr in reversed(self.transforms):   # back to the base's shape (a reshape changes it)
            shape = tuple(tr.inverse_shape(shape))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new = TransformedDistribution(self.base_dist.expand(base_batch), self.transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for tr in self.transforms:
            x = tr(x)
        y = x.detach()
        if self.transforms:   # a caching last transform keeps the returned draw, for log_prob(draw)
            _recache(self.transforms[-1], x, y)
        return y

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for tr in self.transforms:
            x = tr(x)
        return x

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self._like)
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        lp = 0.0
        y = value
        for tr in reversed(self.transforms):
            x = tr.inv(y)
            lp = lp - _sum_rightmost(tr.log_abs_det_jacobian(x, y), event_dim - tr.codomain_event_dim)
            event_dim = event_dim - tr.codomain_event_dim + tr.event_dim
            y = x
        return lp + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    @property
    def _like(self):
        """A tensor parameter of the base (the dtype and device a number value takes), or None."""
        for v in self.base_dist.__dict__.values():
            if isinstance(v, T.Tensor):
                return v
        return None

    def _monotone(self, value):
        sign = 1
        for tr in self.transforms:
            sign = sign * tr.sign
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def cdf(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self._like)
        for tr in reversed(self.transforms):
            value = tr.inv(value)
        return self._monotone(self.base_dist.cdf(value))

    def icdf(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self._like)
        value = self.base_dist.icdf(self._monotone(value))
        for tr in self.transforms:
            value = tr(value)
        return value
