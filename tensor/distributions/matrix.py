"""Distributions over matrices (PyTorch's): LKJCholesky, over Cholesky factors of correlation
matrices (Lewandowski, Kurowicka and Joe, 2009; sampled by their onion method), and Wishart, over
positive definite matrices (sampled by Bartlett's decomposition, reparameterized through the
implicit gamma gradient of gamma.py)."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .distribution import (
    Distribution,
    ExponentialFamily,
    _shape_of,
    as_param,
    broadcast_all,
    lazy_property,
    standard_normal,
)
from .gamma import Beta, rsample_standard_gamma
from .multivariate import _tril_inverse, one_matrix, scale_tril_of


def _mvlgamma(a, p: int):
    """log of the multivariate gamma function Gamma_p(a)."""
    out = (p * (p - 1) / 4) * math.log(math.pi)
    for i in range(p):
        out = out + T.lgamma(a - i / 2)
    return out


def _mvdigamma(a, p: int):
    out = 0.0
    for i in range(p):
        out = out + T.digamma(a - i / 2)
    return out


def _diag(x):
    return T.diagonal(x, 0, -2, -1)


class LKJCholesky(Distribution):
    """Lower Cholesky factors L of dim x dim correlation matrices R = L L^T with density
    proportional to det(R)^(concentration - 1). No rsample."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise ValueError(f"LKJCholesky: dim must be an int >= 2, got {dim!r}")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, ("concentration",))
        new.dim = self.dim
        return new

    def _beta(self, shape):
        """The onion method's Beta draws: row i's squared off-diagonal length ~ Beta(i/2, b_i),
        b_i = concentration + (dim - 1 - i) / 2 (row 0 has none: a placeholder)."""
        c = self.concentration
        i = T.arange(self.dim, dtype=c.dtype, device=c.device)
        a = T.where(i == 0, 1.0, i / 2)
        b = c[..., None] + (self.dim - 1 - i) / 2
        return Beta(a, b, validate_args=False).sample(shape)

    def sample(self, sample_shape=()):
        shape = _shape_of(sample_shape)
        d = self.dim
        y = self._beta(shape).detach()                                   # shape + batch + (d,)
        like = self.concentration
        z = T.tril(standard_normal(shape + self.batch_shape + (d, d), like), -1)
        norm = T.sqrt((z * z).sum(axis=-1, keepdims=True))
        direction = z / T.where(norm > 0, norm, 1.0)                     # row 0 stays zero
        w = T.sqrt(y)[..., None] * direction
        diag = T.sqrt(T.clip(1 - (w * w).sum(axis=-1), T.finfo(like.dtype).tiny, None))
        return w + diag[..., None] * T.eye(d, dtype=like.dtype, device=like.device)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.concentration)
        if self._validate_args:
            self._validate_sample(value)
        d, c = self.dim, self.concentration
        # p(L) = N(c) prod_{i >= 1} L_ii^(d - 1 - i + 2 (c - 1)) (0-indexed rows; R -> L's Jacobian
        # contributes the d - 1 - i)
        i = T.arange(1, d, dtype=c.dtype, device=c.device)
        power = (d - 1 - i) + 2 * (c[..., None] - 1)
        unnorm = (power * T.log(_diag(value)[..., 1:])).sum(axis=-1)
        return unnorm - self._log_normalizer()

    def _log_normalizer(self):
        """log of the integral of the unnormalized density: the rows are independent, row i's
        off-diagonal part w ranging over the unit ball of R^i with weight (1 - |w|^2)^(b_i - 1),
        whose integral is pi^(i/2) Gamma(b_i) / Gamma(b_i + i/2), b_i = c + (d - 1 - i) / 2."""
        d, c = self.dim, self.concentration
        total = 0.0
        for i in range(1, d):
            b = c + (d - 1 - i) / 2
            total = total + (i / 2) * math.log(math.pi) + T.lgamma(b) - T.lgamma(b + i / 2)
        return total

    def __repr__(self):
        return f"LKJCholesky(dim: {self.dim}, concentration: {self.concentration})"



class Wishart(ExponentialFamily):
    """The Wishart distribution W_p(df, Sigma) over p x p positive definite matrices (the scatter
    matrix of df Gaussian draws of covariance Sigma), Sigma given as covariance_matrix,
    precision_matrix or scale_tril; df > p - 1."""
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, mat = one_matrix("Wishart", covariance_matrix, precision_matrix, scale_tril)
        df = df if isinstance(df, T.Tensor) else as_param(df, mat)
        dtype = T.result_type(df.dtype, mat.dtype)
        dtype = dtype if dtype.kind == "f" else T.get_default_dtype()
        df, mat = df.astype(dtype), mat.astype(dtype)
        p = mat.shape[-1]
        try:
            batch = T.broadcast_shapes(df.shape, mat.shape[:-2])
        except ValueError:
            raise ValueError(f"Wishart: df of shape {tuple(df.shape)} and {name} of shape {tuple(mat.shape)} "
                             f"do not broadcast") from None
        self.df = T.broadcast_to(df, batch)
        self.__dict__[name] = T.broadcast_to(mat, batch + (p, p))
        super().__init__(batch, (p, p), validate_args)
        self._unbroadcasted_scale_tril = scale_tril_of(name, mat)

    @property
    def arg_constraints(self):
        p = self.event_shape[-1] if self.event_shape else 1
        return {"df": constraints.greater_than(p - 1), "covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, ("df", "covariance_matrix", "precision_matrix", "scale_tril"))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self):
        return T.broadcast_to(self._unbroadcasted_scale_tril, self.batch_shape + self.event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return T.broadcast_to(L @ L.swapaxes(-1, -2), self.batch_shape + self.event_shape)

    @lazy_property
    def precision_matrix(self):
        Li = _tril_inverse(self._unbroadcasted_scale_tril)
        return T.broadcast_to(Li.swapaxes(-1, -2) @ Li, self.batch_shape + self.event_shape)

    @property
    def mean(self):
        return self.df[..., None, None] * self.covariance_matrix

    @property
    def mode(self):
        p = self.event_shape[-1]
        factor = T.where(self.df > p + 1, self.df - p - 1, math.nan)
        return factor[..., None, None] * self.covariance_matrix

    @property
    def variance(self):
        S = self.covariance_matrix
        d = _diag(S)
        return self.df[..., None, None] * (S * S + d[..., :, None] * d[..., None, :])

    def rsample(self, sample_shape=()):
        """Bartlett: Sigma^(1/2) A A^T Sigma^(T/2), A lower triangular, A_ii^2 ~ Chi2(df - i), the
        entries below N(0, 1)."""
        shape = _shape_of(sample_shape) + self.batch_shape
        p = self.event_shape[-1]
        i = T.arange(p, dtype=self.df.dtype, device=self.df.device)
        half_dof = T.broadcast_to(0.5 * (self.df[..., None] - i), shape + (p,))
        chi = T.sqrt(2 * rsample_standard_gamma(half_dof))
        noise = T.tril(standard_normal(shape + (p, p), self.df), -1)
        A = noise + chi[..., None] * T.eye(p, dtype=self.df.dtype, device=self.df.device)
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.swapaxes(-1, -2)

    def _half_log_det(self):
        return T.log(_diag(self._unbroadcasted_scale_tril)).sum(axis=-1)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.df)
        if self._validate_args:
            self._validate_sample(value)
        p = self.event_shape[-1]
        nu = self.df
        log_det_x = 2 * T.log(_diag(T.linalg.cholesky(value))).sum(axis=-1)
        Li = _tril_inverse(self._unbroadcasted_scale_tril)
        trace = ((Li.swapaxes(-1, -2) @ Li) * value).sum(axis=(-2, -1))
        return (0.5 * (nu - p - 1) * log_det_x - 0.5 * trace - 0.5 * nu * p * math.log(2)
                - nu * self._half_log_det() - _mvlgamma(0.5 * nu, p))

    def entropy(self):
        p = self.event_shape[-1]
        nu = self.df
        return ((p + 1) * self._half_log_det() + 0.5 * p * (p + 1) * math.log(2) + _mvlgamma(0.5 * nu, p)
                - 0.5 * (nu - p - 1) * _mvdigamma(0.5 * nu, p) + 0.5 * nu * p)
