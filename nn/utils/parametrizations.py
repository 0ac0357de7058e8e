"""Ready-made parametrizations, as torch.nn.utils.parametrizations: weight_norm, spectral_norm
and orthogonal, each registered with nn.utils.parametrize.register_parametrization.

- weight_norm: w = g * v / ||v|| from original0 = g (the norms along `dim`) and original1 = v.
- spectral_norm: w / sigma, sigma estimated by the power method; the unit vectors `_u`, `_v`
  are buffers of the parametrization, advanced n_power_iterations steps at each read of the
  weight in training mode only.
- orthogonal: Q with orthonormal columns (or rows, for a wide matrix) from a skew-symmetric
  matrix (map "matrix_exp" or "cayley") or from Householder reflectors ("householder").

>>> import tensor as T
>>> from nn.linear import Linear
>>> m = weight_norm(Linear(3, 2))
>>> [k for k in m.state_dict()]
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
>>> m.parametrizations.weight.original0.shape, m.parametrizations.weight.original1.shape
((2, 1), (2, 3))
>>> q = orthogonal(Linear(3, 3)).weight
>>> float(T.max(T.abs(q @ q.mT - T.eye(3, dtype=q.dtype)))) < 1e-5
True
"""
from __future__ import annotations

from enum import Enum

import tensor as T
from autograd import no_grad
from tensor import Tensor

from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from . import parametrize
from ._weight_ops import (
    geqrf,
    householder_product,
    norm_except_dim,
    normalize,
    power_iteration_,
    weight_norm_fn,
    weight_to_matrix,
)


def _tensor_of(module: Module, name: str, fn: str) -> Tensor:
    w = getattr(module, name, None)
    if not isinstance(w, Tensor):
        raise ValueError(f"{fn}: module {module._get_name()} has no parameter or buffer named "
                         f"{name!r}")
    return w


# ---------------------------------------------------------------- weight_norm
class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_fn(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization (Salimans & Kingma, 2016): module.<name> = g * v / ||v||, with the
    norm per slice along `dim` (dim=None: of the whole tensor). g and v are
    module.parametrizations.<name>.original0 and .original1; returns module."""
    _tensor_of(module, name, "weight_norm")
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---------------------------------------------------------------- spectral_norm
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < ndim:
            raise IndexError(f"spectral_norm: dim {dim} is out of range [-{ndim}, {ndim - 1}]")
        if n_power_iterations <= 0:
            raise ValueError("spectral_norm: n_power_iterations must be positive, got "
                             f"{n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            with no_grad():
                w = weight_to_matrix(weight, self.dim)
                h, k = w.shape
                kw = dict(dtype=weight.dtype, device=weight.device)
                self.register_buffer("_u", normalize(T.randn(h, **kw), eps))
                self.register_buffer("_v", normalize(T.randn(k, **kw), eps))
                power_iteration_(w, self._u, self._v, 15, eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, self.eps)
        w = weight_to_matrix(weight, self.dim)
        if self.training:
            with no_grad():
                power_iteration_(w.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        u, v = T.clone(self._u), T.clone(self._v)   # (later steps write the buffers in place)
        return weight / T.sum(u * (w @ v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _default_dim(module: Module, dim: int | None) -> int:
    if dim is not None:
        return dim
    return 1 if isinstance(module, ConvTranspose1d | ConvTranspose2d | ConvTranspose3d) else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Spectral normalization (Miyato et al., 2018): module.<name> = W / sigma(W), sigma the
    largest singular value of W (as a matrix with `dim` as rows: default 0, 1 for the transposed
    convolutions) estimated by the power method; a 1-D weight is divided by its norm."""
    w = _tensor_of(module, name, "spectral_norm")
    sn = _SpectralNorm(w, n_power_iterations, _default_dim(module, dim), eps)
    parametrize.register_parametrization(module, name, sn)
    return module


# ---------------------------------------------------------------- orthogonal
class _OrthMaps(Enum):
    matrix_exp = 1
    cayley = 2
    householder = 3


def _eye_like(n: int, k: int, like: Tensor) -> Tensor:
    return T.eye(n, k, dtype=like.dtype, device=like.device)


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _eye_like(k, k, Q)
    atol = 10.0 * n * float(T.finfo(Q.dtype).eps)
    return bool(T.all(T.abs(Q.mT.conj() @ Q - eye) <= atol + 1e-5 * T.abs(eye)))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A = QR (A tall) with R's diagonal made non-negative (complex: real)."""
    Q, R = T.linalg.qr(A)
    return Q * T.sign(T.diagonal(R, axis1=-2, axis2=-1))[..., None, :]


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.dtype.kind == "c" and orthogonal_map == _OrthMaps.householder:
            raise ValueError("orthogonal: the householder map does not support complex tensors")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = T.cat([X, T.zeros(X.shape[:-2] + (n, n - k), dtype=X.dtype,
                                      device=X.device)], dim=-1)
            A = X - X.mT.conj()   # skew-Hermitian: exp and Cayley give a unitary Q
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = T.linalg.matrix_exp(A)
            else:
                eye = _eye_like(n, n, A)
                Q = T.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + T.sum(A * A, axis=-2))
            Q = householder_product(A, tau)
            # (as PyTorch: the diagonal's integer part, +-1 from right_inverse, signs the columns)
            Q = Q * T.trunc(T.diagonal(X.detach(), axis1=-2, axis2=-1))[..., None, :]
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"orthogonal: expected a matrix or batch of matrices of shape "
                             f"{self.shape}, got a tensor of shape {Q.shape}")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q, n, k = Q.mT, k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != _OrthMaps.householder:
                raise NotImplementedError("orthogonal: it is not possible to assign to the "
                                          "matrix_exp or cayley maps when "
                                          "use_trivialization=False")
            A, tau = geqrf(Q)
            d = T.sign(T.diagonal(A, axis1=-2, axis2=-1))
            d = T.where(tau == 0.0, -d, d)
            eye = _eye_like(n, k, A)
            A = A * (1 - eye) + eye * d[..., None, :]
            return A.mT if transpose else A
        if n == k:
            Q = T.clone(Q) if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = T.randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(T.cat([Q, N], dim=-1))
        self.base = Q
        return T.zeros_like(Q_init) - _eye_like(Q_init.shape[-2], Q_init.shape[-1], Q_init)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Make module.<name> (a matrix or batch of matrices (..., m, n)) orthogonal: orthonormal
    columns when m >= n, rows otherwise.

    orthogonal_map: "matrix_exp" (default for square matrices) or "cayley", applied to a
    skew-symmetric matrix, or "householder" (default otherwise), a product of reflectors. With
    use_trivialization=True (default) a matrix `base` is kept in the parametrization (PyTorch's
    dynamic trivialization) and the initial value is the weight itself when orthogonal, else
    the Q of its QR decomposition."""
    weight = _tensor_of(module, name, "orthogonal")
    if weight.ndim < 2:
        raise ValueError(f"orthogonal: expected a matrix or batch of matrices, got a tensor of "
                         f"{weight.ndim} dimensions")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = _OrthMaps.__members__.get(orthogonal_map)
    if orth_enum is None:
        raise ValueError('orthogonal: orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder", got {orthogonal_map!r}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


__all__ = ["orthogonal", "spectral_norm", "weight_norm"]
