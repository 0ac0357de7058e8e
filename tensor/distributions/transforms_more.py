"""More transforms (PyTorch's torch.distributions.transforms): elementwise (Abs, Power, Softplus),
onto the simplex (Softmax, StickBreaking), onto matrices (LowerCholesky, PositiveDefinite,
CorrCholesky), shape and structure (Reshape, Independent, Cat, Stack) and a distribution's CDF
(CumulativeDistribution); identity_transform is the empty composition."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import as_param
from .transforms import ComposeTransform, Transform, _softplus, _sum_rightmost

identity_transform = ComposeTransform([])


def _tensor_like(v, x):
    return v if isinstance(v, T.Tensor) else as_param(v, x)


class AbsTransform(Transform):
    """y = |x| (not bijective: the inverse picks the nonnegative root)."""
    _key = staticmethod(lambda: ())
    codomain = constraints.positive
    bijective = False

    def _call(self, x):
        return T.abs(x)

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on positive x."""
    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent, cache_size: int = 0):
        super().__init__(cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size: int = 1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size)

    def _key(self):
        return (self.exponent,)

    @property
    def sign(self):
        e = self.exponent
        return T.sign(e) if isinstance(e, T.Tensor) else (1 if e > 0 else -1)

    def _call(self, x):
        return x ** self.exponent

    def _inverse(self, y):
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        e = _tensor_like(self.exponent, x)
        return T.log(T.abs(e * y / x))

    def forward_shape(self, shape):
        e = self.exponent
        return T.broadcast_shapes(tuple(shape), e.shape) if isinstance(e, T.Tensor) else tuple(shape)

    inverse_shape = forward_shape

    def __repr__(self):
        return f"PowerTransform(exponent={self.exponent})"


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)), onto the positive reals."""
    _key = staticmethod(lambda: ())
    sign = 1
    codomain = constraints.positive

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return y + T.log(-T.expm1(-y))

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim, onto the simplex (not bijective; the inverse is log y)."""
    _key = staticmethod(lambda: ())
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = False
    event_dim = 1

    def _call(self, x):
        e = T.exp(x - T.max(x, axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def _inverse(self, y):
        return T.log(y)


class StickBreakingTransform(Transform):
    """R^(K-1) onto the K-simplex by stick breaking: z_k = sigmoid(x_k - log(K-1-k)) is the share
    of what remains taken by category k, the last category gets the rest (a bijection)."""
    _key = staticmethod(lambda: ())
    domain = constraints.real_vector
    codomain = constraints.simplex
    event_dim = 1

    @staticmethod
    def _offset(n, like):
        return T.log(T.arange(n, 0, -1, dtype=like.dtype, device=like.device))

    def _call(self, x):
        z = T.sigmoid(x - self._offset(x.shape[-1], x))
        rest = T.cumprod(1 - z, axis=-1)
        one = T.ones(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device)
        return T.concatenate([z, one], axis=-1) * T.concatenate([one, rest], axis=-1)

    def _inverse(self, y):
        head = y[..., :-1]
        left = T.clip(1 - T.cumsum(head, axis=-1), T.finfo(y.dtype).tiny, None)
        return T.log(head) - T.log(left) + self._offset(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        # dy_k/dx_k = (1 - z_k) y_k and the Jacobian is triangular
        xs = x - self._offset(x.shape[-1], x)
        return (-_softplus(xs) + T.log(y[..., :-1])).sum(axis=-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform: needs at least one dim")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform: needs at least one dim")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def _diag_embed(d):
    n = d.shape[-1]
    return d[..., None] * T.eye(n, dtype=d.dtype, device=d.device)


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated."""
    _key = staticmethod(lambda: ())
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky
    bijective = False   # (the strict upper triangle is dropped)
    event_dim = 2

    def _call(self, x):
        return T.tril(x, -1) + _diag_embed(T.exp(T.diagonal(x, 0, -2, -1)))

    def _inverse(self, y):
        return T.tril(y, -1) + _diag_embed(T.log(T.diagonal(y, 0, -2, -1)))


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive definite ones: L L^T of the LowerCholeskyTransform L of x."""
    _key = staticmethod(lambda: ())
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite
    bijective = False
    event_dim = 2

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.swapaxes(-1, -2)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(T.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D(D-1)/2 reals onto Cholesky factors of D x D correlation matrices: tanh maps
    them into (-1, 1), filled row by row into the strict lower triangle, and each row is scaled
    so that its squared entries sum to one (the stick-breaking construction)."""
    _key = staticmethod(lambda: ())
    domain = constraints.real_vector
    event_dim = 1

    codomain_event_dim = property(lambda self: 2)
    codomain = constraints.corr_cholesky

    @staticmethod
    def _dim(m: int) -> int:
        d = int(round((1 + math.sqrt(1 + 8 * m)) / 2))
        if d * (d - 1) // 2 != m:
            raise ValueError(f"CorrCholeskyTransform: the last dim {m} is not D(D-1)/2 for an integer D")
        return d

    def _call(self, x):
        d = self._dim(x.shape[-1])
        r = T.tanh(x)
        rows = [T.ones(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device)]
        k = 0
        for i in range(1, d):
            zi = r[..., k:k + i]
            k += i
            # w_ij = z_ij sqrt(1 - sum_{l<j} w_il^2), the diagonal takes the remaining length
            left = T.cumprod(T.sqrt(1 - zi * zi), axis=-1)
            scale = T.concatenate([T.ones_like(left[..., :1]), left[..., :-1]], axis=-1)
            row = T.concatenate([zi * scale, left[..., -1:]], axis=-1)
            rows.append(row)
        out = []
        for i, row in enumerate(rows):
            pad = T.zeros(x.shape[:-1] + (d - i - 1,), dtype=x.dtype, device=x.device)
            out.append(T.concatenate([row, pad], axis=-1))
        return T.stack(out, axis=-2)

    def _inverse(self, y):
        d = y.shape[-1]
        parts = []
        for i in range(1, d):
            w = y[..., i, :i]
            left = 1 - T.cumsum(w * w, axis=-1)
            before = T.concatenate([T.ones_like(left[..., :1]), left[..., :-1]], axis=-1)
            z = w / T.sqrt(T.clip(before, T.finfo(y.dtype).tiny, None))
            parts.append(T.arctanh(T.clip(z, -1 + T.finfo(y.dtype).eps, 1 - T.finfo(y.dtype).eps)))
        return T.concatenate(parts, axis=-1)

    def log_abs_det_jacobian(self, x, y):
        # sum over the strict lower entries of log(1 - z^2) (tanh) + 1/2 log(remaining length^2)
        d = y.shape[-1]
        z = T.tanh(x)
        total = (T.log1p(-z * z)).sum(axis=-1)
        for i in range(1, d):
            w = y[..., i, :i]
            left = 1 - T.cumsum(w * w, axis=-1)
            before = T.concatenate([T.ones_like(left[..., :1]), left[..., :-1]], axis=-1)
            total = total + 0.5 * T.log(before).sum(axis=-1)
        return total

    def forward_shape(self, shape):
        d = self._dim(shape[-1])
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(f"CorrCholeskyTransform: expects square matrices, got shape {tuple(shape)}")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class ReshapeTransform(Transform):
    """Reshapes the rightmost dims from in_shape to out_shape (of the same number of elements)."""

    def __init__(self, in_shape, out_shape, cache_size: int = 0):
        super().__init__(cache_size)
        self.in_shape, self.out_shape = tuple(int(s) for s in in_shape), tuple(int(s) for s in out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError(f"ReshapeTransform: in_shape {self.in_shape} and out_shape {self.out_shape} "
                             f"have different numbers of elements")
        self.event_dim = len(self.in_shape)

    codomain_event_dim = property(lambda self: len(self.out_shape))
    domain = property(lambda self: constraints.independent(constraints.real, len(self.in_shape)))
    codomain = property(lambda self: constraints.independent(constraints.real, len(self.out_shape)))

    def _key(self):
        return (self.in_shape, self.out_shape)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.ndim - len(self.in_shape)]) + self.out_shape)

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.ndim - len(self.out_shape)]) + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return T.zeros(tuple(x.shape[:x.ndim - len(self.in_shape)]), dtype=x.dtype, device=x.device)

    def _swap(self, shape, src, dst, what):
        shape = tuple(shape)
        n = len(src)
        if len(shape) < n or shape[len(shape) - n:] != src:
            raise ValueError(f"ReshapeTransform: {what} shape {shape} does not end in {src}")
        return shape[:len(shape) - n] + dst

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape, "input")

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape, "output")

    def __repr__(self):
        return f"ReshapeTransform(in_shape={self.in_shape}, out_shape={self.out_shape})"


class IndependentTransform(Transform):
    """base_transform with reinterpreted_batch_ndims more rightmost dims read as event dims (its
    log|det J| summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size)
        if int(reinterpreted_batch_ndims) < 0:
            raise ValueError(f"IndependentTransform: reinterpreted_batch_ndims must be >= 0, got "
                             f"{reinterpreted_batch_ndims}")
        self.base_transform, self.reinterpreted_batch_ndims = base_transform, int(reinterpreted_batch_ndims)
        self.event_dim = base_transform.event_dim + self.reinterpreted_batch_ndims

    codomain_event_dim = property(lambda self: self.base_transform.codomain_event_dim
                                  + self.reinterpreted_batch_ndims)
    domain = property(lambda self: constraints.independent(self.base_transform.domain,
                                                           self.reinterpreted_batch_ndims))
    codomain = property(lambda self: constraints.independent(self.base_transform.codomain,
                                                             self.reinterpreted_batch_ndims))
    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    def _key(self):
        return (self.base_transform, self.reinterpreted_batch_ndims)

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class _PieceWise(Transform):
    """Shared by Cat and Stack: a transform per slice along dim (elementwise transforms only)."""

    def __init__(self, tseq, dim, cache_size: int = 0):
        super().__init__(cache_size)
        self.transforms = list(tseq)
        for t in self.transforms:
            if not isinstance(t, Transform):
                raise TypeError(f"{type(self).__name__}: expects Transforms, got {type(t).__name__}")
            if t.event_dim or t.codomain_event_dim:
                raise ValueError(f"{type(self).__name__}: only elementwise transforms (event_dim 0) are "
                                 f"supported, got {t!r}")
        self.dim = int(dim)

    def _axis(self, x):
        if not -x.ndim <= self.dim < x.ndim:
            raise ValueError(f"{type(self).__name__}: dim {self.dim} is out of range for shape "
                             f"{tuple(x.shape)}")
        return self.dim % x.ndim

    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = property(lambda self: self._constraint([t.domain for t in self.transforms]))
    codomain = property(lambda self: self._constraint([t.codomain for t in self.transforms]))

    def _map(self, x, fn):
        pieces = self._split(x)
        return self._join([fn(t, p) for t, p in zip(self.transforms, pieces)])

    def _call(self, x):
        return self._map(x, lambda t, p: t(p))

    def _inverse(self, y):
        return self._map(y, lambda t, p: t.inv(p))

    def log_abs_det_jacobian(self, x, y):
        xs, ys = self._split(x), self._split(y)
        return self._join([t.log_abs_det_jacobian(a, b) for t, a, b in zip(self.transforms, xs, ys)])


class CatTransform(_PieceWise):
    """tseq[i] applied to the i-th slice of lengths[i] along dim (lengths default to 1 each)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size: int = 0):
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else [int(n) for n in lengths]
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: {len(self.transforms)} transforms but {len(self.lengths)} "
                             f"lengths")

    def _split(self, x):
        if x.shape[self.dim] != sum(self.lengths):
            raise ValueError(f"CatTransform: dim {self.dim} of shape {tuple(x.shape)} must have size "
                             f"sum(lengths) = {sum(self.lengths)}")
        out, start = [], 0
        for n in self.lengths:
            idx = [slice(None)] * x.ndim
            idx[self._axis(x)] = slice(start, start + n)
            out.append(x[tuple(idx)])
            start += n
        return out

    def _join(self, pieces):
        return T.concatenate(pieces, axis=self.dim)

    def _constraint(self, cseq):
        return constraints.cat(cseq, self.dim, self.lengths)


class StackTransform(_PieceWise):
    """tseq[i] applied to x[..., i, ...] (index i along dim)."""

    def _split(self, x):
        if x.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: dim {self.dim} of shape {tuple(x.shape)} must have size "
                             f"{len(self.transforms)} (one per transform)")
        idx = [slice(None)] * x.ndim
        out = []
        for i in range(len(self.transforms)):
            idx[self._axis(x)] = i
            out.append(x[tuple(idx)])
        return out

    def _join(self, pieces):
        return T.stack(pieces, axis=self.dim)

    def _constraint(self, cseq):
        return constraints.stack(cseq, self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto the unit interval; log|dy/dx| = distribution.log_prob(x)."""
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size: int = 0):
        super().__init__(cache_size)
        if distribution.event_shape:
            raise ValueError(f"CumulativeDistributionTransform: needs a univariate distribution, got "
                             f"event_shape {distribution.event_shape}")
        self.distribution = distribution

    domain = property(lambda self: self.distribution.support)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def __repr__(self):
        return f"CumulativeDistributionTransform({self.distribution!r})"
