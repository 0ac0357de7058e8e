"""MultivariateNormal (loc with a covariance, precision or lower Cholesky factor, built on
tensor.linalg's Cholesky and triangular solves) and Independent (batch dims read as event dims)."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import Distribution, _shape_of, as_param, lazy_property, standard_normal


def _batch_mahalanobis(L, x):
    """|L^-1 x|^2 over the last dim: L (..., n, n) lower triangular, x (..., n), broadcast."""
    shape = T.broadcast_shapes(L.shape[:-2], x.shape[:-1])
    n = L.shape[-1]
    Lb = T.broadcast_to(L, shape + (n, n))
    xb = T.broadcast_to(x, shape + (n,))
    z = T.linalg.solve_triangular(Lb, xb[..., None], upper=False)[..., 0]
    return (z * z).sum(axis=-1)


def _tril_inverse(L):
    n = L.shape[-1]
    eye = T.broadcast_to(T.eye(n, dtype=L.dtype, device=L.device), L.shape)
    return T.linalg.solve_triangular(L, eye, upper=False)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without forming the inverse: flip, factor, invert."""
    Lf = T.linalg.cholesky(T.flip(P, axis=(-2, -1)))
    L_inv = T.flip(Lf, axis=(-2, -1)).swapaxes(-1, -2)
    return _tril_inverse(L_inv)


def one_matrix(dist: str, covariance_matrix, precision_matrix, scale_tril):
    """(name, tensor) of the one matrix argument given (square matrices in the last two dims),
    as MultivariateNormal and Wishart take their scale."""
    given = [(k, v) for k, v in (("covariance_matrix", covariance_matrix),
                                 ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
             if v is not None]
    if len(given) != 1:
        raise ValueError(f"{dist}: give exactly one of covariance_matrix, precision_matrix or "
                         f"scale_tril, got {[k for k, _ in given] or 'none'}")
    name, mat = given[0]
    mat = mat if isinstance(mat, T.Tensor) else as_param(mat)
    if mat.ndim < 2 or mat.shape[-1] != mat.shape[-2]:
        raise ValueError(f"{dist}: {name} must be at least two-dimensional with square matrices in "
                         f"its last two dims, got shape {tuple(mat.shape)}")
    return name, mat


def scale_tril_of(name: str, mat):
    """The lower Cholesky factor of the covariance one_matrix's argument stands for."""
    if name == "scale_tril":
        return mat
    if name == "covariance_matrix":
        return T.linalg.cholesky(mat)
    return _precision_to_scale_tril(mat)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over vectors of length n: Sigma given as covariance_matrix, precision_matrix
    (its inverse) or scale_tril (L with Sigma = L L^T, lower triangular, positive diagonal)."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, mat = one_matrix("MultivariateNormal", covariance_matrix, precision_matrix, scale_tril)
        loc = as_param(loc, mat) if not isinstance(loc, T.Tensor) else loc
        if loc.ndim < 1:
            raise ValueError("MultivariateNormal: loc must be at least one-dimensional, got a scalar")
        if mat.shape[-1] != loc.shape[-1]:
            raise ValueError(f"MultivariateNormal: loc of shape {tuple(loc.shape)} and {name} of shape "
                             f"{tuple(mat.shape)} disagree on the event size")
        if mat.dtype != loc.dtype:
            dtype = T.result_type(mat.dtype, loc.dtype)
            mat, loc = mat.astype(dtype), loc.astype(dtype)
        n = loc.shape[-1]
        batch_shape = T.broadcast_shapes(mat.shape[:-2], loc.shape[:-1])
        self.__dict__[name] = T.broadcast_to(mat, batch_shape + (n, n))
        self.loc = T.broadcast_to(loc, batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args)
        self._unbroadcasted_scale_tril = scale_tril_of(name, mat)

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        new = self._expanded(batch_shape, ("loc", "covariance_matrix", "precision_matrix", "scale_tril"))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self):
        n = self.event_shape[0]
        return T.broadcast_to(self._unbroadcasted_scale_tril, self.batch_shape + (n, n))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        n = self.event_shape[0]
        return T.broadcast_to(L @ L.swapaxes(-1, -2), self.batch_shape + (n, n))

    @lazy_property
    def precision_matrix(self):
        Li = _tril_inverse(self._unbroadcasted_scale_tril)
        n = self.event_shape[0]
        return T.broadcast_to(Li.swapaxes(-1, -2) @ Li, self.batch_shape + (n, n))

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril
        return T.broadcast_to((L * L).sum(axis=-1), self.batch_shape + self.event_shape)

    def rsample(self, sample_shape=()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps[..., None])[..., 0]

    def _half_log_det(self):
        return T.log(T.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)).sum(axis=-1)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.loc)
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self.event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        n = self.event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return T.broadcast_to(h, self.batch_shape) if self.batch_shape else h


class Independent(Distribution):
    """base_distribution with its rightmost reinterpreted_batch_ndims batch dims read as event dims
    (log_prob sums over them), as Normal(loc (B, n), scale) -> a diagonal Gaussian over n-vectors."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None):
        k = int(reinterpreted_batch_ndims)
        shape = base_distribution.batch_shape + base_distribution.event_shape
        nb = len(base_distribution.batch_shape)
        if not 0 <= k <= nb:
            raise ValueError(f"Independent: reinterpreted_batch_ndims must be in [0, {nb}] (the base's "
                             f"batch dims {base_distribution.batch_shape}), got {reinterpreted_batch_ndims}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = k
        split = len(shape) - len(base_distribution.event_shape) - k
        super().__init__(shape[:split], shape[split:], validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        k = self.reinterpreted_batch_ndims
        base = self.base_dist.expand(batch_shape + self.event_shape[:k] if k else batch_shape)
        new = Independent(base, k, validate_args=False)
        new._validate_args = self._validate_args
        return new

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    has_enumerate_support = property(lambda self: False if self.reinterpreted_batch_ndims else
                                     self.base_dist.has_enumerate_support)

    @property
    def support(self):
        s = self.base_dist.support
        return constraints.independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims \
            else s

    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def _sum_rightmost(self, x):
        k = self.reinterpreted_batch_ndims
        return x.sum(axis=tuple(range(-k, 0))) if k else x

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims:
            raise NotImplementedError("Independent: enumerate_support over reinterpreted dims is not "
                                      "supported")
        return self.base_dist.enumerate_support(expand)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
