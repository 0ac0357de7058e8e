"""Fused, numerically stable row kernels of nn (the backend's layer_norm / cross_entropy
kernels; softmax / log_softmax are tensor/rowops.py's, shared with T.softmax), as recorded ops.

layer_norm and cross_entropy (class indices) run one kernel pass per row (rows along the last
axis, made contiguous first). Each is a public op wrapped by `tensor._hook.differentiable`
under its name, with a Rule (vjp and jvp) in `autograd.graph.RULES`. A vjp runs the fused
kernel's backward when the backward pass is not itself recorded, and composes public ops
under create_graph=True, so higher derivatives work. float32 and float64; 16-bit floats
compute in float32 inside the kernels (statistics such as mean, rstd and lse are float32).

>>> import tensor as T
>>> from nn import _fused
>>> _fused.softmax(T.tensor([[0.0, 0.0, 0.0, 0.0]]), -1).tolist()
[[0.25, 0.25, 0.25, 0.25]]
"""
from __future__ import annotations

import math

import tensor as T
from autograd.grad_mode import is_grad_enabled
from autograd.graph import RULES, Rule
from autograd.rules_util import fit
from tensor import dtypes as dt
from tensor import elementwise as ew
from tensor._hook import differentiable
from tensor._tensor import Tensor
from tensor.backend import backend_for, report
from tensor.rowops import log_softmax, softmax  # (nn's own, re-exported: one op for both)


def _be(t: Tensor):
    return backend_for(t.device)


def _stat_dtype(d: dt.DType) -> dt.DType:
    return dt.float64 if d is dt.float64 else dt.float32


def _floating(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating-point tensor, got {x.dtype.name}")


def _one_device(op: str, x: Tensor, **others) -> None:
    """The fused kernels take every operand's memory on x's device: another device's tensor
    (a CPU weight with a CUDA input) would be read through a pointer the kernel cannot use."""
    for name, t in others.items():
        if t is not None and t.device != x.device:
            raise ValueError(f"{op}: input is on {x.device} but {name} is on {t.device}; move "
                             "them to one device")


# ---------------------------------------------------------------- layer_norm

def _layer_norm(x: Tensor, weight: Tensor | None, bias: Tensor | None, nd: int, eps: float):
    """(y, mean, rstd): x normalised over its last nd axes; mean and rstd keep those axes as 1."""
    _floating(x, "layer_norm")
    _one_device("layer_norm", x, weight=weight, bias=bias)
    xc = ew.contiguous(x)
    lead = x.shape[:x.ndim - nd]
    rows, n = math.prod(lead), math.prod(x.shape[x.ndim - nd:])
    sd = _stat_dtype(x.dtype)
    y = ew.empty_tensor(x.shape, x.dtype, x.device)
    mean = ew.empty_tensor(lead + (1,) * nd, sd, x.device)
    rstd = ew.empty_tensor(lead + (1,) * nd, sd, x.device)
    w = None if weight is None else ew.contiguous(weight)
    b = None if bias is None else ew.contiguous(bias)
    if rows and n:
        _be(xc).layer_norm_fwd(xc, w, b, y, mean, rstd, rows, n, float(eps))
    return y, mean, rstd


layer_norm = differentiable("layer_norm", _layer_norm)


def _ln_bwd(x, mean, rstd, g, w, b, nd, needs):
    """The fused backward (not recorded): (gx, gw, gb), None where not needed."""
    xc, gc = ew.contiguous(x), ew.contiguous(ew.astype(g, x.dtype, copy=False))
    rows, n = mean.numel(), math.prod(x.shape[x.ndim - nd:])
    be, dev = _be(x), x.device
    sd = mean.dtype
    rb = be.layer_norm_row_block(rows, n)
    nblk = -(-rows // rb) if rows else 0
    gx = ew.empty_tensor(x.shape, x.dtype, dev) if needs[0] else None
    # the weight's and the bias's per-block partials in one buffer: one column sum for both
    parts = ew.empty_tensor((int(needs[1]) + int(needs[2]), nblk, n), sd, dev)
    pw = parts[0] if needs[1] else None
    pb = parts[-1] if needs[2] else None
    wc = None if w is None else ew.contiguous(w)
    if rows and n:
        be.layer_norm_bwd(xc, mean, rstd, gc, wc, gx, pw, pb, rows, n, rb)
    elif gx is not None:
        gx = T.zeros(x.shape, dtype=x.dtype, device=dev)
    sums = parts.sum(axis=1) if nblk else T.zeros(parts.shape[:1] + (n,), dtype=sd, device=dev)

    def col(k, like):
        return sums[k].reshape(like.shape).astype(like.dtype, copy=False)
    return gx, col(0, w) if needs[1] else None, col(-1, b) if needs[2] else None


def _ln_stats(x, axes, eps):
    """mean and rstd in recorded ops (the create_graph path)."""
    mean = x.mean(axis=axes, keepdims=True)
    d = x - mean
    return mean, 1.0 / T.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)


def _ln_vjp(ctx, gs):
    x, w, b, nd, eps = ctx.args
    gy, gmean, grstd = gs
    axes = tuple(range(x.ndim - nd, x.ndim))
    if is_grad_enabled():
        mean, rstd = _ln_stats(x, axes, eps)
    else:
        mean, rstd = ctx.out[1], ctx.out[2]
    gx = gw = gb = None
    if gy is not None and not is_grad_enabled():
        gx, gw, gb = _ln_bwd(x, mean, rstd, gy, w, b, nd, ctx.needs[:3])
    elif gy is not None:
        xhat = (x - mean) * rstd
        gh = gy if w is None else gy * w
        gx = rstd * (gh - gh.mean(axis=axes, keepdims=True)
                     - xhat * (gh * xhat).mean(axis=axes, keepdims=True))
        gw = fit(gy * xhat, w) if ctx.needs[1] else None
        gb = fit(gy, b) if ctx.needs[2] else None
    if ctx.needs[0] and (gmean is not None or grstd is not None):
        n = math.prod(x.shape[x.ndim - nd:])
        extra = 0.0
        if gmean is not None:
            extra = gmean / n
        if grstd is not None:
            extra = extra - grstd * rstd * rstd * (x - mean) * rstd / n
        gx = extra if gx is None else gx + extra
    return (fit(gx, x) if ctx.needs[0] else None, gw, gb, None, None)


def _ln_jvp(ctx, tans):
    x, w, b, nd, eps = ctx.args
    _, mean, rstd = ctx.out
    tx, tw, tb = tans[:3]
    axes = tuple(range(x.ndim - nd, x.ndim))
    mean, rstd = mean.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)
    xhat = (x - mean) * rstd
    ty = tmean = trstd = None
    if tx is not None:
        tmean = tx.mean(axis=axes, keepdims=True)
        d = tx - tmean
        c = (xhat * d).mean(axis=axes, keepdims=True)
        ty = rstd * (d - xhat * c)
        if w is not None:
            ty = ty * w
        trstd = -(rstd * rstd) * c
    if tw is not None:
        ty = xhat * tw if ty is None else ty + xhat * tw
    if tb is not None:
        ty = T.broadcast_to(tb, x.shape) if ty is None else ty + tb
    return ty, tmean, trstd


RULES["layer_norm"] = Rule("layer_norm", _ln_vjp, _ln_jvp, (0, 1, 2, "out"))


# ---------------------------------------------------------------- cross_entropy (class indices)

def _cross_entropy(x: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                   label_smoothing: float):
    """(loss per row, lse per row) of x (N, C) against class indices target (N,)."""
    _floating(x, "cross_entropy")
    _one_device("cross_entropy", x, target=target, weight=weight)
    xc = ew.contiguous(x)
    tc = ew.contiguous(ew.astype(target, dt.int64, copy=False))
    wc = None if weight is None else ew.contiguous(ew.astype(weight, x.dtype, copy=False))
    rows, c = x.shape
    loss = ew.empty_tensor((rows,), x.dtype, x.device)
    lse = ew.empty_tensor((rows,), _stat_dtype(x.dtype), x.device)
    if rows:
        verdict = _be(xc).cross_entropy_fwd(xc, tc, wc, loss, lse, rows, c, int(ignore_index),
                                            float(label_smoothing))

        def raise_bad(row: int):
            raise IndexError(f"cross_entropy: target {int(tc[row].item())} is out of bounds for "
                             f"{c} classes (row {row}; ignore_index={ignore_index})")
        report(verdict, raise_bad)
    return loss, lse


cross_entropy = differentiable("cross_entropy", _cross_entropy)


def _ce_parts(ctx, weight_differentiated: bool):
    x, t, w, ignore, eps = ctx.args
    if weight_differentiated:
        raise NotImplementedError("cross_entropy: the gradient with respect to weight is not "
                                  "supported (as in PyTorch); pass weight.detach()")
    return x, t, (None if w is None else w.detach()), int(ignore), float(eps)


def _ce_dense(x, t, w, ignore, eps, p, g):
    """d(loss_i)/dx contracted with g (N,), in recorded ops: p = softmax(x) (N, C)."""
    c = x.shape[1]
    valid = t != ignore
    st = T.clip(T.where(valid, t, 0), 0, c - 1)   # bad targets: the forward's error, not a 2nd
    hot = (T.arange(c, device=x.device)[None, :] == st[:, None]).astype(x.dtype)
    g = g * valid.astype(g.dtype)
    wt = 1.0 if w is None else T.take(w, st)[:, None]
    out = (g * (1.0 - eps))[:, None] * (wt * (p - hot))
    if eps:
        wsum = float(c) if w is None else w.sum()
        out = out + (g * (eps / c))[:, None] * (wsum * p - (1.0 if w is None else w[None, :]))
    return out


def _ce_vjp(ctx, gs):
    x, t, w, ignore, eps = _ce_parts(ctx, ctx.needs[2])
    g, glse = gs
    if not ctx.needs[0]:
        return (None,) * 5
    if is_grad_enabled():
        p = softmax(x, -1)
        gx = _ce_dense(x, t, w, ignore, eps, p, g) if g is not None else None
    else:
        gx = _ce_bwd(x, t, w, ctx.out[1], g, ignore, eps) if g is not None else None
        p = None
    if glse is not None:
        p = p if p is not None else T.exp(x - ctx.out[1][:, None].astype(x.dtype))
        gx = glse[:, None] * p if gx is None else gx + glse[:, None] * p
    return (fit(gx, x), None, None, None, None)


def _ce_bwd(x, t, w, lse, g, ignore, eps):
    rows, c = x.shape
    xc, tc = ew.contiguous(x), ew.contiguous(ew.astype(t, dt.int64, copy=False))
    gc = ew.contiguous(ew.astype(g, x.dtype, copy=False))
    wc = None if w is None else ew.contiguous(ew.astype(w, x.dtype, copy=False))
    wsum = float(c) if w is None else float(wc.astype(dt.float64).sum().item())
    gx = ew.empty_tensor(x.shape, x.dtype, x.device)
    if rows and c:
        _be(xc).cross_entropy_bwd(xc, tc, wc, lse, gc, gx, rows, c, ignore, eps, wsum)
    return gx


def _ce_jvp(ctx, tans):
    x, t, w, ignore, eps = _ce_parts(ctx, tans[2] is not None)
    tx = tans[0]
    if tx is None:
        return None
    lse = ctx.out[1].astype(x.dtype, copy=False)
    p = T.exp(x - lse[:, None])
    tlse = (p * tx).sum(axis=1)
    return (_ce_dense(x, t, w, ignore, eps, p, T.ones(x.shape[0], dtype=x.dtype, device=x.device)) * tx).sum(
        axis=1), tlse


RULES["cross_entropy"] = Rule("cross_entropy", _ce_vjp, _ce_jvp, (0, 1, 2, "out"))

__all__ = ["softmax", "log_softmax", "layer_norm", "cross_entropy"]
