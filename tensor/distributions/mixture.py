"""MixtureSameFamily (a Categorical mixture of one family's components) and
LowRankMultivariateNormal (covariance cov_factor cov_factor^T + diag(cov_diag), evaluated with the
Woodbury identity and the matrix determinant lemma), as PyTorch's."""
from __future__ import annotations

import math

from . import _ops as T
from . import constraints
from .discrete import Categorical
from .distribution import Distribution, _shape_of, as_param, lazy_property, standard_normal
from .multivariate import _batch_mahalanobis


class MixtureSameFamily(Distribution):
    """p(x) = sum_k pi_k p_k(x): mixture_distribution a Categorical over the K components, which are
    the rightmost batch dim of component_distribution (batch_shape (..., K)). No rsample."""
    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical) or mixture_distribution.event_shape:
            # (OneHotCategorical derives from Categorical here, but draws one-hot vectors, not indices)
            raise ValueError(f"MixtureSameFamily: mixture_distribution must be a Categorical, got "
                             f"{type(mixture_distribution).__name__}")
        if not isinstance(component_distribution, Distribution):
            raise ValueError(f"MixtureSameFamily: component_distribution must be a Distribution, got "
                             f"{type(component_distribution).__name__}")
        mb, cb = mixture_distribution.batch_shape, component_distribution.batch_shape
        if len(cb) < 1:
            raise ValueError("MixtureSameFamily: component_distribution needs a batch dim for the components")
        k = mixture_distribution._num_events
        if cb[-1] != k:
            raise ValueError(f"MixtureSameFamily: mixture_distribution has {k} categories but "
                             f"component_distribution's rightmost batch dim is {cb[-1]} (batch_shape {cb})")
        try:
            batch = T.broadcast_shapes(mb, cb[:-1])
        except ValueError:
            raise ValueError(f"MixtureSameFamily: mixture batch_shape {mb} does not broadcast with the "
                             f"component batch_shape {cb[:-1]} (without the component dim)") from None
        if batch != cb[:-1]:
            component_distribution = component_distribution.expand(batch + (k,))
        if batch != mb:
            mixture_distribution = mixture_distribution.expand(batch)
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(batch, component_distribution.event_shape, validate_args)

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)
    support = property(lambda self: self._component_distribution.support)

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape_of(batch_shape)
        new = MixtureSameFamily(self._mixture_distribution.expand(batch_shape),
                                self._component_distribution.expand(batch_shape + (self._num_component,)),
                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _weights(self):
        """Mixture probabilities shaped to broadcast against component values (..., K, 1, ...)."""
        p = self._mixture_distribution.probs
        return p.reshape(tuple(p.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(axis=-1 - self._event_ndims)

    @property
    def variance(self):
        w, ax = self._weights(), -1 - self._event_ndims
        comp = self._component_distribution
        m = comp.mean
        mean = (w * m).sum(axis=ax, keepdims=True)
        within = (w * comp.variance).sum(axis=ax)
        between = (w * (m - mean) ** 2).sum(axis=ax)
        return within + between

    def _pad(self, value):
        """value with a component dim inserted left of its event dims."""
        value = value if isinstance(value, T.Tensor) else as_param(value, self._mixture_distribution._param)
        return T.expand_dims(value, value.ndim - self._event_ndims)

    def log_prob(self, value):
        if self._validate_args:
            like = self._mixture_distribution._param
            value = value if isinstance(value, T.Tensor) else as_param(value, like)
            self._validate_sample(value)
        lp = self._component_distribution.log_prob(self._pad(value))   # (..., K)
        log_w = self._mixture_distribution.logits   # (normalized by Categorical)
        return T.logsumexp(lp + log_w, axis=-1)

    def cdf(self, value):
        c = self._component_distribution.cdf(self._pad(value))
        return (c * self._mixture_distribution.probs).sum(axis=-1)

    def sample(self, sample_shape=()):
        shape = _shape_of(sample_shape)
        idx = self._mixture_distribution.sample(shape)                 # shape + batch
        draws = self._component_distribution.sample(shape)             # shape + batch + (K,) + event
        idx = idx.reshape(tuple(idx.shape) + (1,) * (self._event_ndims + 1))
        idx = T.broadcast_to(idx, tuple(draws.shape[:draws.ndim - self._event_ndims - 1]) + (1,)
                             + tuple(draws.shape[draws.ndim - self._event_ndims:]))
        out = T.take_along_axis(draws, idx, axis=-1 - self._event_ndims)
        return out.squeeze(axis=-1 - self._event_ndims).detach()

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  {self._component_distribution!r})")


def _capacitance_tril(W, D):
    """Cholesky factor of I + W^T D^-1 W (k x k)."""
    k = W.shape[-1]
    Wt_Dinv = W.swapaxes(-1, -2) / D[..., None, :]
    K = Wt_Dinv @ W
    return T.linalg.cholesky(K + T.eye(k, dtype=W.dtype, device=W.device))


class LowRankMultivariateNormal(Distribution):
    """N(loc, W W^T + diag(D)) over n-vectors, W = cov_factor (..., n, k) and D = cov_diag (..., n)
    positive: log_prob and entropy cost O(n k^2), never forming the n x n covariance."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        W = cov_factor if isinstance(cov_factor, T.Tensor) else as_param(cov_factor)
        loc = loc if isinstance(loc, T.Tensor) else as_param(loc, W)
        D = cov_diag if isinstance(cov_diag, T.Tensor) else as_param(cov_diag, W)
        if loc.ndim < 1:
            raise ValueError("LowRankMultivariateNormal: loc must be at least one-dimensional, got a scalar")
        n = loc.shape[-1]
        if W.ndim < 2 or W.shape[-2] != n:
            raise ValueError(f"LowRankMultivariateNormal: cov_factor must be at least two-dimensional with "
                             f"shape (..., {n}, rank) for loc of shape {tuple(loc.shape)}, got "
                             f"{tuple(W.shape)}")
        if D.ndim < 1 or D.shape[-1] != n:
            raise ValueError(f"LowRankMultivariateNormal: cov_diag must have last dim {n} (loc's event "
                             f"size), "
                             f"got shape {tuple(D.shape)}")
        dtype = T.result_type(loc.dtype, W.dtype, D.dtype)
        if dtype.kind != "f":
            dtype = T.get_default_dtype()
        loc, W, D = loc.astype(dtype), W.astype(dtype), D.astype(dtype)
        try:
            batch = T.broadcast_shapes(loc.shape[:-1], W.shape[:-2], D.shape[:-1])
        except ValueError:
            raise ValueError(f"LowRankMultivariateNormal: batch shapes of loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(W.shape)} and cov_diag {tuple(D.shape)} do not broadcast") from None
        k = W.shape[-1]
        self.loc = T.broadcast_to(loc, batch + (n,))
        self.cov_factor = T.broadcast_to(W, batch + (n, k))
        self.cov_diag = T.broadcast_to(D, batch + (n,))
        super().__init__(batch, (n,), validate_args)
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = W, D
        self._capacitance_tril = _capacitance_tril(W, D)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, ("loc", "cov_factor", "cov_diag"))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return T.broadcast_to((W * W).sum(axis=-1) + D, self.batch_shape + self.event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self.event_shape[0]
        cov = W @ W.swapaxes(-1, -2) + D[..., None] * T.eye(n, dtype=D.dtype, device=D.device)
        return T.broadcast_to(cov, self.batch_shape + (n, n))

    @lazy_property
    def scale_tril(self):
        return T.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        """D^-1 - D^-1 W C^-T C^-1 W^T D^-1 (Woodbury), C the capacitance's Cholesky factor."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self.event_shape[0]
        Wt_Dinv = W.swapaxes(-1, -2) / D[..., None, :]
        C = self._capacitance_tril
        Cb = T.broadcast_to(C, Wt_Dinv.shape[:-2] + C.shape[-2:])
        A = T.linalg.solve_triangular(Cb, Wt_Dinv, upper=False)
        P = T.eye(n, dtype=D.dtype, device=D.device) / D[..., None] - A.swapaxes(-1, -2) @ A
        return T.broadcast_to(P, self.batch_shape + (n, n))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_w = standard_normal(shape[:-1] + (W.shape[-1],), self.loc)
        eps_d = standard_normal(shape, self.loc)
        return self.loc + (W @ eps_w[..., None])[..., 0] + T.sqrt(D) * eps_d

    def _log_det(self):
        C, D = self._capacitance_tril, self._unbroadcasted_cov_diag
        return 2 * T.log(T.diagonal(C, 0, -2, -1)).sum(axis=-1) + T.log(D).sum(axis=-1)

    def log_prob(self, value):
        value = value if isinstance(value, T.Tensor) else as_param(value, self.loc)
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff = value - self.loc
        # x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2
        wt_dinv_x = ((W / D[..., None]) * diff[..., None]).sum(axis=-2)
        m = (diff * diff / D).sum(axis=-1) - _batch_mahalanobis(self._capacitance_tril, wt_dinv_x)
        n = self.event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m + self._log_det())

    def entropy(self):
        n = self.event_shape[0]
        h = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return T.broadcast_to(h, self.batch_shape) if self.batch_shape else h
