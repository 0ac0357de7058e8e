"""Tensor formulas shared by the weight and spectral normalizations (both APIs) and by the
orthogonal parametrization: compositions of differentiable ops, so autograd differentiates them.

>>> import tensor as T
>>> v = T.tensor([[3.0, 4.0], [0.0, 2.0]])
>>> norm_except_dim(v, 2, 0).tolist(), weight_norm_fn(v, T.full((2, 1), 10.0), 0).tolist()
([[5.0], [2.0]], [[6.0, 8.0], [0.0, 10.0]])
"""
from __future__ import annotations

import numpy as np

import tensor as T
from tensor import Tensor


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """torch.norm_except_dim: the pow-norm over every dim but `dim`, kept as size-1 dims;
    dim=-1 (as PyTorch) means the norm of the whole tensor, a 0-d tensor."""
    if dim == -1:
        return T.sum(T.abs(v) ** pow) ** (1.0 / pow)
    if not -v.ndim <= dim < v.ndim:
        raise IndexError(f"weight_norm: dim {dim} is out of range for a tensor of {v.ndim} dims")
    dim %= v.ndim
    axes = tuple(a for a in range(v.ndim) if a != dim)
    a = T.abs(v) ** pow
    return (T.sum(a, axis=axes, keepdims=True) if axes else a) ** (1.0 / pow)


def weight_norm_fn(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """torch._weight_norm: w = g * v / ||v||, the norm taken per slice along dim (see
    norm_except_dim)."""
    return v * (g / norm_except_dim(v, 2, dim))


def normalize(x: Tensor, eps: float) -> Tensor:
    """A vector over its 2-norm, the norm clamped below at eps (F.normalize(x, dim=0))."""
    return x / T.clip(T.sqrt(T.sum(x * x)), eps, None)


def weight_to_matrix(weight: Tensor, dim: int) -> Tensor:
    """The weight as a matrix with `dim` first and everything else flattened (rows = outputs)."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def power_iteration_(w: Tensor, u: Tensor, v: Tensor, n: int, eps: float,
                     v_first: bool = False) -> None:
    """n steps of the power method on matrix w, updating the unit vectors u, v in place (no
    graph: the caller holds no_grad). v_first: v then u in each step (the older hook API)."""
    for _ in range(n):
        if v_first:
            v.copy_(normalize(w.mT @ u, eps))
            u.copy_(normalize(w @ v, eps))
        else:
            u.copy_(normalize(w @ v, eps))
            v.copy_(normalize(w.mT @ u, eps))


# ---------------------------------------------------------------- orthogonal maps
def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """torch.linalg.householder_product: the first k columns of H_1 ... H_k, where
    H_i = I - tau_i v_i v_i^T and v_i is column i of A below the diagonal with a 1 on it."""
    n, k = A.shape[-2], A.shape[-1]
    eye = T.eye(n, k, dtype=A.dtype, device=A.device)
    V = A.tril(-1) + eye
    Q = T.broadcast_to(eye, A.shape)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1, None] * (v @ (v.mT @ Q))
    return Q


def geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """torch.geqrf (LAPACK's compact Householder QR), through NumPy on the host: used once, at
    initialisation, by orthogonal(..., use_trivialization=False)."""
    a = np.asarray(A.detach().cpu().numpy())
    h = np.empty_like(a)
    tau = np.empty(a.shape[:-2] + (min(a.shape[-2:]),), dtype=a.dtype)
    for idx in np.ndindex(*a.shape[:-2]):
        hi, tau[idx] = np.linalg.qr(a[idx], mode="raw")
        h[idx] = hi.T
    return (T.asarray(h, dtype=A.dtype, device=A.device),
            T.asarray(tau, dtype=A.dtype, device=A.device))


__all__ = ["geqrf", "householder_product", "norm_except_dim", "normalize",
           "power_iteration_", "weight_norm_fn", "weight_to_matrix"]


def remove_hook(module, hook_type, name: str, fn: str, what: str):
    """Take off the forward pre-hook of type hook_type that reparametrizes module.<name> (it
    restores the plain parameter); ValueError naming fn when there is none."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{fn}: {what} of {name!r} not found in {module._get_name()}")

