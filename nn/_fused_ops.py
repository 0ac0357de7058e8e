"""Single-node ops of nn, each a public op wrapped by `tensor._hook.differentiable` with its
Rule beside it: binary_cross_entropy (PyTorch's derivative), linear (x @ W.T + b as one node,
not three), gelu (one node; relu's is tensor/rowops.py's), and 2-D max pooling and im2col on
the backend's fused kernels. One graph node instead of a composition matters where the ops
are small and Python dispatch is the cost.
"""
from __future__ import annotations

import math

import tensor as T
from autograd.grad_mode import is_grad_enabled
from autograd.graph import RULES, Rule
from autograd.rules_util import fit
from tensor import dtypes as dt
from tensor import elementwise as ew
from tensor import rowops, views
from tensor._hook import differentiable
from tensor._tensor import Tensor, contiguous_strides

from ._fused import _be

relu_op = rowops.relu   # (one node; its rule is autograd/rules_rowops.py's)

# ---------------------------------------------------------------- binary_cross_entropy

def _clamped_logs(x):
    return T.clip(T.log(x), -100.0, None), T.clip(T.log1p(-x), -100.0, None)


def _bce(x: Tensor, target: Tensor) -> Tensor:
    """Elementwise -(t log x + (1 - t) log(1 - x)), logs clamped at -100 as PyTorch."""
    lx, l1x = _clamped_logs(x)
    return -(target * lx + (1.0 - target) * l1x)


binary_cross_entropy = differentiable("binary_cross_entropy", _bce)


def _bce_partials(x, t, needs):
    dx = (x - t) / T.maximum(x * (1.0 - x), 1e-12) if needs[0] else None
    dt_ = None
    if needs[1]:
        lx, l1x = _clamped_logs(x)
        dt_ = l1x - lx
    return dx, dt_


def _bce_vjp(ctx, g):
    x, t = ctx.args
    dx, dt_ = _bce_partials(x, t, ctx.needs)
    return (fit(None if dx is None else g * dx, x), fit(None if dt_ is None else g * dt_, t))


def _bce_jvp(ctx, tans):
    x, t = ctx.args
    dx, dt_ = _bce_partials(x, t, (tans[0] is not None, tans[1] is not None))
    r = None if dx is None else tans[0] * dx
    if dt_ is not None:
        r = tans[1] * dt_ if r is None else r + tans[1] * dt_
    return r


RULES["binary_cross_entropy"] = Rule("binary_cross_entropy", _bce_vjp, _bce_jvp, (0, 1))


# ---------------------------------------------------------------- linear: one node, not three
def _rows(t: Tensor) -> Tensor:
    """t (..., k) as (rows, k): a view where the strides allow it (internal, not recorded)."""
    if t.ndim == 2:
        return t
    k = t._shape[-1]
    if k and t.is_contiguous():
        return t._view((t.numel() // k, k), (k, 1))
    return views.reshape(t, (-1, k))


def _linear(x: Tensor, weight: Tensor, bias):
    """x (..., in) @ weight.T + bias, one GEMM over every leading row, computed with the raw
    kernels (recorded as one op: its leading dims are folded inside, not by recorded reshapes).
    A 16-bit x's bias (of its dtype or float32) is added by the GEMM on its float32 accumulator
    before the one rounding, as PyTorch's addmm (float32 / float64 add it after the product: the
    same bits, and a captured step fuses that add, and what follows, into the matmul)."""
    from tensor import products
    ws = weight._strides
    xr, wt = _rows(x), weight._view(weight._shape[::-1], (ws[1], ws[0]))
    if (bias is not None and bias.ndim == 1 and x.dtype is weight.dtype and x.dtype.kind == "f"
            and x.dtype.itemsize == 2 and (bias.dtype is x.dtype or bias.dtype is dt.float32)
            and bias.device == x.device == weight.device and xr._shape[1] == wt._shape[0]
            and bias._shape[0] == wt._shape[1]):
        y = products.gemm_add(xr, wt, bias, op="linear")
    else:
        y = products.matmul(xr, wt)
        if bias is not None:
            if bias.dtype is y.dtype and bias.device == y.device and bias.ndim == 1:
                # y is fresh: the bias added in place, read as a broadcast view
                ew.run(y.dtype, f"add_{y.dtype.sfx}", y, [y, bias._view(y._shape, (0, bias._strides[0]))])
            else:
                y = ew.binary("add", y, bias, out=y)
    if x.ndim == 2:
        return y
    shape = x._shape[:-1] + y._shape[-1:]
    r = y._view(shape, contiguous_strides(shape))
    r._base = None   # a fresh result, not a view of anything a caller holds
    return r


linear_node = differentiable("linear", _linear)


def _linear_vjp(ctx, g):
    x, w, b = ctx.args
    g2 = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
    gx = None
    if ctx.needs[0]:
        gx = g2 @ w
        gx = gx if x.ndim == 2 else gx.reshape(x.shape)
    gw = g2.T @ (x if x.ndim == 2 else x.reshape(-1, x.shape[-1])) if ctx.needs[1] else None
    gb = g2.sum(axis=0) if b is not None and ctx.needs[2] else None
    return gx, gw, gb


def _linear_jvp(ctx, tans):
    x, w, b = ctx.args
    tx, tw, tb = tans
    r = None
    for t in (tx @ w.T if tx is not None else None, x @ tw.T if tw is not None else None, tb):
        if t is not None:
            r = t if r is None else r + t
    return r


RULES["linear"] = Rule("linear", _linear_vjp, _linear_jvp, (0, 1))


# ---------------------------------------------------------------- max_pool2d fast path
def im2col_kernel(x: Tensor, out: Tensor, stride, dilation, before, value) -> None:
    """Fill out (C, KH, KW, N, OH, OW) with the windows of the contiguous x padded by
    before=(top, left) and `value` outside it."""
    _be(x).im2col(x, out, stride, dilation, before, value)


def col2im_kernel(cols: Tensor, out: Tensor, stride, dilation, before) -> None:
    """out (N, C, H, W) = the crop at before=(top, left) of the canvas whose windows are the
    contiguous cols (C, KH, KW, N, OH, OW), overlapping windows summed."""
    _be(cols).col2im(cols, out, stride, dilation, before)


def _max_pool2d(x: Tensor, kh: int, kw: int, sh: int, sw: int):
    """(values, flat H*W indices) of 2-D max pooling of (N, C, H, W), no padding/dilation."""
    x = ew.contiguous(x)
    n, c, h, w = x.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    y = ew.empty_tensor((n, c, oh, ow), x.dtype, x.device)
    idx = ew.empty_tensor((n, c, oh, ow), dt.int64, x.device)
    if y.numel():
        _be(x).maxpool2d(x, y, idx, n * c, h, w, kh, kw, sh, sw, oh, ow)
    return y, idx


max_pool2d_fast = differentiable("max_pool2d_fast", _max_pool2d)


def _max_pool2d_pad(x: Tensor, kernel, stride, padding, dilation, out):
    """(values, flat H*W indices) of 2-D max pooling of (N, C, H, W) with padding (which never
    wins), dilation and the output size `out` (ceil_mode); (h, w) pairs. Every window must
    hold an input element (nn/pooling.py checks)."""
    x = ew.contiguous(x)
    n, c, h, w = x.shape
    oh, ow = out
    y = ew.empty_tensor((n, c, oh, ow), x.dtype, x.device)
    idx = ew.empty_tensor((n, c, oh, ow), dt.int64, x.device)
    if y.numel():
        _be(x).maxpool2d_pad(x, y, idx, n * c, h, w, tuple(kernel), tuple(stride), tuple(padding),
                             tuple(dilation), oh, ow)
    return y, idx


max_pool2d_pad = differentiable("max_pool2d_pad", _max_pool2d_pad)


def _mp_vjp(ctx, gs):
    g = gs[0]
    x = ctx.args[0]
    nones = (None,) * (len(ctx.args) - 1)
    if g is None:
        return (None,) + nones
    n, c, h, w = x.shape
    idx = ctx.out[1]
    if g.requires_grad and is_grad_enabled():   # double backward: the differentiable scatter
        gx = T.zeros((n * c, h * w), dtype=g.dtype, device=g.device)
        gx = gx.scatter_add(1, idx.reshape(n * c, -1), g.reshape(n * c, -1))
        return (gx.reshape(n, c, h, w),) + nones
    g = ew.contiguous(g)   # one kernel: zeros, then each gradient added at its max (in order)
    gx = ew.empty_tensor((n, c, h, w), g.dtype, g.device)
    if gx.numel():
        _be(g).maxpool2d_bwd(g, idx, gx, n * c, h * w, idx.shape[2] * idx.shape[3])
    return (gx,) + nones


def _mp_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    y, idx = ctx.out
    n, c = y.shape[:2]
    ty = T.take_along_axis(t.reshape(n * c, -1), idx.reshape(n * c, -1), axis=1)
    return [ty.reshape(y.shape), None]


RULES["max_pool2d_fast"] = Rule("max_pool2d_fast", _mp_vjp, _mp_jvp, ("out",))
RULES["max_pool2d_pad"] = Rule("max_pool2d_pad", _mp_vjp, _mp_jvp, ("out",))


# ---------------------------------------------------------------- gelu: one node
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu(x: Tensor, approximate: str):
    """x * Phi(x) (exact, with erf) or its tanh approximation, as one recorded op (the ops
    inside are not recorded: the rule below differentiates the whole). A 16-bit x is computed
    in float32 and rounded once (PyTorch's; in 16 bits 2182 of 4773 float16 results were off
    the float64 value rounded once, 196 so)."""
    if x.dtype.itemsize == 2:
        return _gelu(x.astype("float32"), approximate).astype(x.dtype)
    if approximate == "none":
        return 0.5 * x * (1.0 + T.erf(x * _SQRT1_2))
    return 0.5 * x * (1.0 + T.tanh(_SQRT_2_PI * (x + 0.044715 * (x * x * x))))


gelu_op = differentiable("gelu", _gelu)


def _gelu_slope(x: Tensor, approximate: str) -> Tensor:
    """d gelu / dx: Phi(x) + x phi(x), or the tanh form's derivative."""
    if approximate == "none":
        return 0.5 * (1.0 + T.erf(x * _SQRT1_2)) + x * (T.exp(-0.5 * (x * x)) * _INV_SQRT_2PI)
    x2 = x * x
    t = T.tanh(_SQRT_2_PI * (x + 0.044715 * (x2 * x)))
    return 0.5 * (1.0 + t) + (0.5 * x) * ((1.0 - t * t) * (_SQRT_2_PI * (1.0 + 0.134145 * x2)))


def _gelu_vjp(ctx, g):
    x, approximate = ctx.args
    return (g * _gelu_slope(x, approximate), None)


def _gelu_jvp(ctx, tans):
    x, approximate = ctx.args
    return None if tans[0] is None else tans[0] * _gelu_slope(x, approximate)


RULES["gelu"] = Rule("gelu", _gelu_vjp, _gelu_jvp, (0,))
