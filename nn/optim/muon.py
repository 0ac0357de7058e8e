"""Muon (Jordan et al.), as PyTorch's torch.optim.Muon: momentum SGD whose update of a 2-D
parameter is orthogonalised by a few Newton-Schulz iterations (in bfloat16, as PyTorch's), with
decoupled weight decay and a learning rate scaled by the matrix's shape. Its arguments,
defaults, checks and state ("momentum_buffer") are PyTorch's, so its state_dict maps 1:1.

For the hidden layers' weight matrices only: biases, embeddings and other parameters take an
ordinary optimizer (AdamW) in a second optimizer, as PyTorch's documentation says.

>>> import tensor as T
>>> w = T.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
>>> opt = Muon([w], lr=0.1, weight_decay=0.0)
>>> w.grad = T.tensor([[3.0, 0.0], [0.0, 1.0]]); opt.step()
>>> [[round(v, 2) for v in row] for row in w.tolist()]   # w - lr U S' V^T, S' near 1
[[0.93, 0.0], [0.0, 1.89]]
"""
from __future__ import annotations

import math
import struct
from collections.abc import Iterable

import tensor as T
from tensor import dtypes as dt

from .algorithms_extra import _grad_as
from .optimizer import Optimizer, _check_nonneg

_ADJUST = {
    # Keller Jordan's original: sqrt(max(1, rows / cols))
    None: lambda a, b: math.sqrt(max(1.0, a / b)),
    "original": lambda a, b: math.sqrt(max(1.0, a / b)),
    # Moonshot's: the update's RMS matched to AdamW's
    "match_rms_adamw": lambda a, b: 0.2 * math.sqrt(max(a, b)),
    # Bernstein's spectral-norm condition
    "spectral_unclamped": lambda a, b: math.sqrt(a / b),
}


def _as_float32(v: float) -> float:
    """v rounded to the nearest float32."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _bf16(x):
    """x's values rounded to bfloat16, kept in float32."""
    return x.astype(dt.bfloat16).astype(dt.float32)


def newton_schulz(g, coefficients=(3.4445, -4.775, 2.0315), steps: int = 5, eps: float = 1e-7):
    """An approximate orthogonalisation of the matrix g (U S' V^T with S' near 1, where
    g = U S V^T) by `steps` quintic Newton-Schulz iterations X <- a X + (b A + c A^2) X,
    A = X X^T, from X = g / ||g||_F, in bfloat16 as PyTorch's: each product's float32 result
    (a GEMM's accumulator with its added term) rounded once (the wide side kept as the columns)."""
    if g.ndim != 2:
        raise ValueError(f"Muon: Newton-Schulz takes a 2-D matrix, got shape {tuple(g.shape)}")
    a, b, c = (float(v) for v in coefficients)
    tall = g.shape[0] > g.shape[1]
    x = _bf16(g.T if tall else g)
    x = _bf16(x / T.clip(_bf16(T.linalg.vector_norm(x)), eps, None))
    for _ in range(steps):   # float32 arithmetic rounded where a bfloat16 GEMM's result is
        gram = _bf16(x @ x.T)
        x = _bf16(a * x + _bf16(b * gram + c * (gram @ gram)) @ x)
    x = x.astype(dt.bfloat16)
    return x.T if tall else x


class Muon(Optimizer):
    """Muon: per 2-D parameter p with gradient g, buf <- momentum buf + (1 - momentum) g, the
    update u = NS(g + momentum (buf - g)) with nesterov (else NS(buf)), then
    p <- p (1 - lr weight_decay) - lr s u, s from adjust_lr_fn and p's shape ("original":
    sqrt(max(1, rows / cols)); "match_rms_adamw": 0.2 sqrt(max(rows, cols));
    "spectral_unclamped": sqrt(rows / cols)).
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if adjust_lr_fn not in _ADJUST:
            raise ValueError(f"Muon: adjust_lr_fn {adjust_lr_fn!r} is not supported (one of "
                             "'original', 'match_rms_adamw', 'spectral_unclamped' or None)")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=tuple(ns_coefficients),
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))

    _half_in_float32 = False   # its 16-bit update rounds where PyTorch's does (_update)

    def _check_options(self, g):
        _check_nonneg("Muon", g["lr"], "learning rate")
        _check_nonneg("Muon", g["momentum"], "momentum")
        _check_nonneg("Muon", g["weight_decay"], "weight decay")
        if len(g["ns_coefficients"]) != 3:
            raise ValueError(f"Muon: ns_coefficients must be 3 numbers, got {g['ns_coefficients']!r}")
        if not 0 <= int(g["ns_steps"]) < 100:
            raise ValueError(f"Muon: ns_steps must be in [0, 100), got {g['ns_steps']!r}")
        for p in g["params"]:
            if p.ndim != 2:
                raise ValueError(f"Muon only supports 2-D parameters; got one of shape "
                                 f"{tuple(p.shape)} (give biases, embeddings and the like to "
                                 "another optimizer such as AdamW)")
            if p.dtype.kind == "c":
                raise ValueError("Muon does not support complex parameters")

    def _update(self, group, p, g, state):
        if not state:
            state["momentum_buffer"] = T.zeros(p.shape, dtype=p.dtype, device=p.device)
        g = _grad_as(p, g)
        mu = float(group["momentum"])
        buf = state["momentum_buffer"]
        # each of PyTorch's steps (buf.lerp_, grad.lerp, param.mul_, param.add_ with alpha) is
        # computed in float32 for 16-bit parameters and rounded once into their dtype
        wide = dt.float32 if p.dtype.itemsize < 4 else p.dtype
        buf.copy_(T.lerp(buf.astype(wide), g.astype(wide), 1.0 - mu).astype(buf.dtype))
        # (lerp's weight as the float32 kernel sees it: its 1 - weight then matches PyTorch's)
        w = _as_float32(mu) if wide is dt.float32 else mu
        u = (T.lerp(g.astype(wide), buf.astype(wide), w).astype(p.dtype) if group["nesterov"]
             else buf)
        u = newton_schulz(u, group["ns_coefficients"], int(group["ns_steps"]), float(group["eps"]))
        lr = float(group["lr"])
        scale = _ADJUST[group["adjust_lr_fn"]](*p.shape)
        kept = (p.astype(wide) * (1.0 - lr * float(group["weight_decay"]))).astype(p.dtype)
        p.copy_((kept.astype(wide) + u.astype(wide) * (-lr * scale)).astype(p.dtype))
