"""Tensor formulas shared by the weight and spectral normalizations (both APIs) and by the
orthogonal parametrization: compositions of differentiable ops, so autograd differentiates them.

>>> import tensor as T
>>> v = T.tensor([[3.0, 4.0], [0.0, 2.0]])
>>> norm_except_dim(v, 2, 0).tolist(), weight_norm_fn(v, T.full((2, 1), 10.0), 0).tolist()
([[5.0], [2.0]], [[6.0, 8.0], [0.0, 10.0]])
"""
from __future__ import annotations

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
    H_i = I - tau_i v_i v_i^H and v_i is column i of A below the diagonal with a 1 on it."""
    n, k = A.shape[-2], A.shape[-1]
    eye = T.eye(n, k, dtype=A.dtype, device=A.device)
    V = A.tril(-1) + eye
    Q = T.broadcast_to(eye, A.shape)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1, None] * (v @ (v.mT.conj() @ Q))
    return Q


def geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """torch.geqrf: LAPACK's compact Householder QR, (a, tau) with R on and above a's diagonal
    and reflector i's vector below it (its 1 on the diagonal implicit), so that
    householder_product(a, tau) is Q. Column by column with the public ops, on A's device; used
    once, at initialisation, by orthogonal(..., use_trivialization=False)."""
    a = A.detach().clone()
    m, n = a.shape[-2:]
    taus = []
    for i in range(min(m, n)):
        alpha, x = a[..., i, i], a[..., i + 1:, i]
        xx = T.sum(T.real(x * x.conj()), axis=-1)
        trivial = (xx == 0) & (T.imag(alpha) == 0) if a.dtype.kind == "c" else xx == 0
        norm = T.sqrt(T.real(alpha * alpha.conj()) + xx)
        beta = T.where(trivial, T.real(alpha), T.where(T.real(alpha) >= 0, -norm, norm))
        tau = T.where(trivial, 0.0, (beta - alpha) / T.where(trivial, 1.0, beta))
        v = x / T.where(trivial, 1.0, alpha - beta)[..., None]
        a[..., i + 1:, i] = v
        a[..., i, i] = beta
        if i + 1 < n:   # apply H_i^H = I - conj(tau) v v^H to the columns on the right
            vv = T.concat([T.ones(v.shape[:-1] + (1,), dtype=a.dtype, device=a.device), v], axis=-1)
            rest = a[..., i:, i + 1:]
            w = T.matmul(vv.conj()[..., None, :], rest)
            a[..., i:, i + 1:] = rest - tau.conj()[..., None, None] * (vv[..., :, None] * w)
        taus.append(tau)
    if not taus:
        return a, T.zeros(a.shape[:-2] + (0,), dtype=a.dtype, device=a.device)
    return a, T.stack(taus, axis=-1)


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

