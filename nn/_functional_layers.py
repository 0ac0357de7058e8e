"""Functional forms of nn/layers_extra.py, as torch.nn.functional's: pad (torch's convention),
interpolate, rms_norm, instance_norm, pixel_shuffle / pixel_unshuffle, dropout1d / dropout2d / alpha_dropout,
adaptive_max_pool1d / adaptive_max_pool2d and bilinear.

All are compositions of differentiable tensor ops (take, take_along_axis, reshape, permute,
einsum, mean, ...): autograd and both devices work without rules of their own. Index tables
(which source element feeds which output) are static in the shapes, so they are built with
NumPy and moved to the input's device.

>>> import tensor as T
>>> pad(T.tensor([[1.0, 2.0]]), (1, 0), value=9.0).tolist()
[[9.0, 1.0, 2.0]]
>>> interpolate(T.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import tensor as T
from autograd import no_grad
from tensor import Tensor
from tensor import random as _random

from . import _functional as F
from .pooling import adaptive_mean_axis, adaptive_size

# ---------------------------------------------------------------- pad

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _src_index(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """For output positions j in [-before, n + after) the source index along an axis of size n."""
    j = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    if mode == "circular":        # as PyTorch: crop first, then wrap around what is left
        lo, m = max(-before, 0), n - max(-before, 0) - max(-after, 0)
        return lo + np.mod(np.arange(-max(before, 0), m + max(after, 0)), m)
    period = 2 * (n - 1)                              # reflect (the edge is not repeated)
    m = np.mod(j, period) if period else np.zeros_like(j)
    return np.where(m >= n, period - m, m)


_NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad input as torch.nn.functional.pad: `pad` holds (before, after) pairs starting from the
    LAST dimension: (left, right) pads the last dim, (left, right, top, bottom) the last two...
    Negative amounts crop. Modes: constant (any rank), and reflect, replicate, circular over the
    last 1-3 dims of a (batched or unbatched) input.

    >>> import tensor as T
    >>> pad(T.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    >>> pad(T.tensor([[1.0, 2.0, 3.0]]), (-1, 1)).tolist()
    [[2.0, 3.0, 0.0]]
    """
    op = "pad"
    F._tensor(input, op)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported; use one of "
                                  f"{', '.join(_PAD_MODES)}")
    pad = tuple(pad)
    if len(pad) % 2 or not all(isinstance(p, numbers.Integral) for p in pad):
        raise ValueError(f"{op}: padding length must be an even number of ints, got {pad!r}")
    k = len(pad) // 2
    if k > input.ndim:
        raise ValueError(f"{op}: padding length {len(pad)} is too large for an input of "
                         f"{input.ndim} dims (at most {2 * input.ndim})")
    widths = [(0, 0)] * (input.ndim - k) + [(int(pad[2 * i]), int(pad[2 * i + 1]))
                                            for i in reversed(range(k))]
    for a, ((b, e), n) in enumerate(zip(widths, input.shape)):
        if n + b + e < 0:
            raise ValueError(f"{op}: the input size {n} of dim {a}, plus negative padding "
                             f"{b} and {e}, resulted in a negative output size")
    if mode == "constant":
        crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(widths, input.shape))
        x = input[crop] if any(b < 0 or e < 0 for b, e in widths) else input
        pos = tuple((max(b, 0), max(e, 0)) for b, e in widths)
        if not any(b or e for b, e in pos):
            return x if x is not input else T.pad(x, pos)
        return T.pad(x, pos, constant_values=0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f"{op}: padding mode {mode!r} doesn't take in a value argument")
    if not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"{op}: {mode} padding of the last {k} dims needs a "
                                  f"{k + 1}-d (unbatched) or {k + 2}-d (batched) input, got "
                                  f"shape {tuple(input.shape)}")
    for a, ((b, e), n) in enumerate(zip(widths, input.shape)):
        if mode == "reflect" and (b or e) and (b >= n or e >= n):
            raise ValueError(f"{op}: reflect padding ({b}, {e}) must be less than the size "
                             f"{n} of dim {a}")
    if all(b >= 0 and e >= 0 and (b <= n or mode != "circular") and (e <= n or mode != "circular")
           and (n or not (b or e)) for (b, e), n in zip(widths, input.shape)):
        # no cropping: NumPy's pad of the same source positions (block copies, not a gather)
        return T.pad(input, widths, mode=_NUMPY_MODE[mode])
    x = input
    for a, ((b, e), n) in enumerate(zip(widths, input.shape)):
        if not (b or e):
            continue
        if mode == "reflect" and (b >= n or e >= n):
            raise ValueError(f"{op}: reflect padding ({b}, {e}) must be less than the size "
                             f"{n} of dim {a}")
        kept = n - max(-b, 0) - max(-e, 0)
        if mode == "circular" and (b > kept or e > kept or (kept <= 0 < max(b, e))):
            raise ValueError(f"{op}: circular padding ({b}, {e}) must be at most the size "
                             f"{kept} of dim {a} (after cropping)")
        if n == 0:
            raise ValueError(f"{op}: cannot {mode}-pad the empty dim {a}")
        idx = T.asarray(_src_index(n, b, e, mode).astype(np.int64), device=x.device)
        x = T.take(x, idx, axis=a)
    return x

# ---------------------------------------------------------------- interpolate


_INTERP_DIMS = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,),
                "bilinear": (2,), "trilinear": (3,), "bicubic": (2,), "area": (1, 2, 3)}
_INTERP_SMOOTH = ("linear", "bilinear", "trilinear", "bicubic")   # align_corners applies
_CUBIC_A = -0.75   # PyTorch's (and OpenCV's) cubic convolution coefficient


def _spatial(v, nd: int, what: str, op: str, cast) -> tuple:
    if isinstance(v, (list, tuple)):
        if len(v) != nd:
            raise ValueError(f"{op}: {what} must have {nd} values for an input with {nd} "
                             f"spatial dimensions, got {tuple(v)}")
        return tuple(cast(u) for u in v)
    return (cast(v),) * nd


def _interp_sizes(x, nd, size, scale_factor, recompute, op):
    """(output sizes, per-dim scale used for the coordinate mapping or None for in/out)."""
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: exactly one of size or scale_factor must be defined")
    ins = tuple(x.shape[2:])
    if size is not None:
        if recompute:
            raise ValueError(f"{op}: recompute_scale_factor is not meaningful with an explicit "
                             "size")
        outs, scales = _spatial(size, nd, "size", op, int), (None,) * nd
    else:
        sf = _spatial(scale_factor, nd, "scale_factor", op, float)
        if not all(math.isfinite(s) and s > 0 for s in sf):
            raise ValueError(f"{op}: scale_factor must be finite and positive, got {sf}")
        outs = tuple(int(math.floor(n * s)) for n, s in zip(ins, sf))
        scales = (None,) * nd if recompute else sf
    if min(outs) <= 0 or min(ins) <= 0:
        raise ValueError(f"{op}: input and output sizes should be greater than 0, got input "
                         f"{ins} and output {outs}")
    numel = math.prod(x.shape[:2]) * math.prod(outs)
    if numel > _MAX_NUMEL:      # refused before any index table is built
        raise ValueError(f"{op}: output size {tuple(x.shape[:2]) + outs} ({numel} elements) "
                         f"is too large (at most 2**{_MAX_NUMEL.bit_length() - 1} elements)")
    return outs, scales


_MAX_NUMEL = 2 ** 40


def _nearest_index(n: int, o: int, scale, exact: bool, nd: int, dtype) -> np.ndarray:
    """PyTorch's CPU kernels: 2-D nearest copies (o == n) or halves (o == 2n) indices, the
    rest computes in float32; 1-D and 3-D float64 form the product in float64 and round it
    to float32 before the floor (floorf)."""
    if nd == 2 and not exact and o in (n, 2 * n):
        return np.arange(o) // (o // n)
    s = n / o if scale is None else 1.0 / scale
    half = 0.5 if exact else 0.0
    if nd != 2 and dtype == T.float64:
        src = ((np.arange(o, dtype=np.float64) + half) * s).astype(np.float32)
    else:
        src = (np.arange(o, dtype=np.float32) + np.float32(half)) * np.float32(s)
    return np.minimum(np.floor(src).astype(np.int64), n - 1)


def _linear_weights(n: int, o: int, scale, align_corners: bool):
    src = _source(n, o, scale, align_corners, clamp=True)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = src - i0
    return i0, i1, lam


def _source(n: int, o: int, scale, align_corners: bool, clamp: bool) -> np.ndarray:
    """Input coordinate of each output position along an axis of n -> o (PyTorch's mapping:
    corners aligned, or half-pixel centres, clamped at 0 for the linear modes)."""
    j = np.arange(o, dtype=np.float64)
    if align_corners:
        return j * ((n - 1) / (o - 1) if o > 1 else 0.0)
    s = n / o if scale is None else 1.0 / scale
    src = s * (j + 0.5) - 0.5
    return np.maximum(src, 0.0) if clamp else src


def _cubic_taps(n: int, o: int, scale, align_corners: bool):
    """([4 index arrays], (4, o) weights): bicubic's taps floor(src) - 1 .. + 2, clamped to the
    edge, weighted by the cubic convolution kernel (A = -0.75) at their distances."""
    src = _source(n, o, scale, align_corners, clamp=False)
    i = np.floor(src)
    t = src - i
    a = _CUBIC_A

    def near(x):   # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    w = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)])
    idx = [np.clip(i.astype(np.int64) + k, 0, n - 1) for k in (-1, 0, 1, 2)]
    return idx, w


def _antialias_taps(n: int, o: int, scale, align_corners: bool, cubic: bool):
    """([index arrays], (taps, o) weights): PyTorch's (and PIL's) antialiased resampling: the
    triangle (bilinear) or cubic (A = -0.5) filter stretched by the downscale factor, so every
    input pixel under an output pixel contributes; the weights of each output sum to 1."""
    if align_corners:
        s = (n - 1) / (o - 1) if o > 1 else 0.0
    else:
        s = n / o if scale is None else 1.0 / scale
    half = 2.0 if cubic else 1.0
    support, inv = (half * s, 1.0 / s) if s >= 1.0 else (half, 1.0)

    def filt(x):
        x = np.abs(x)
        if not cubic:
            return np.maximum(1.0 - x, 0.0)
        a = -0.5
        return np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2.0, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    center = s * (np.arange(o) + 0.5)
    lo = np.maximum(np.trunc(center - support + 0.5), 0).astype(np.int64)
    hi = np.minimum(np.trunc(center + support + 0.5), n).astype(np.int64)
    taps = int((hi - lo).max())
    k = np.arange(taps)[:, None]
    w = np.where(k < hi - lo, filt((k + lo - center + 0.5) * inv), 0.0)
    w = w / w.sum(axis=0, keepdims=True)
    return [np.minimum(lo + j, n - 1) for j in range(taps)], w


def _weighted_taps(x: Tensor, axis: int, idx, w: np.ndarray) -> Tensor:
    """sum_k w[k] * x.take(idx[k], axis): a resampling along one axis (w: (taps, out))."""
    shape = (w.shape[1],) + (1,) * (x.ndim - axis - 1)
    y = None
    for i, wk in zip(idx, w):
        part = T.take(x, T.asarray(i, device=x.device), axis=axis)
        part = part * T.asarray(wk.reshape(shape), device=x.device).astype(x.dtype)
        y = part if y is None else y + part
    return y


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize (N, C, *spatial) input to `size` or by `scale_factor`, as
    torch.nn.functional.interpolate. Modes: nearest and nearest-exact (1-3 spatial dims),
    linear (N, C, L), bilinear and bicubic (N, C, H, W), trilinear (N, C, D, H, W), with
    align_corners for these, and area (adaptive average pooling, 1-3 spatial dims).
    antialias=True (bilinear, bicubic): the filter widens with the downscale factor, as
    PyTorch's (PIL's) antialiased resize.

    >>> import tensor as T
    >>> interpolate(T.tensor([[[0.0, 1.0]]]), size=3, mode="linear", align_corners=True).tolist()
    [[[0.0, 0.5, 1.0]]]
    """
    op = "interpolate"
    F._tensor(input, op)
    if mode not in _INTERP_DIMS:
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported; use one of "
                                  f"{', '.join(_INTERP_DIMS)}")
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"{op}: antialias=True applies to the bilinear and bicubic modes, not "
                         f"{mode!r}")
    nd = input.ndim - 2
    if nd not in _INTERP_DIMS[mode]:
        raise ValueError(f"{op}: got a {input.ndim}-d input, but mode {mode!r} needs "
                         + " or ".join(f"{d + 2}-d" for d in _INTERP_DIMS[mode])
                         + " input (N, C, *spatial)")
    linear = mode in ("linear", "bilinear", "trilinear")
    if align_corners is not None and mode not in _INTERP_SMOOTH:
        raise ValueError(f"{op}: align_corners can only be set with the interpolating modes "
                         f"{', '.join(_INTERP_SMOOTH)}")
    outs, scales = _interp_sizes(input, nd, size, scale_factor, recompute_scale_factor, op)
    x = input
    if mode not in ("nearest", "nearest-exact"):
        F._float(x, op)
    for d, (n, o, s) in enumerate(zip(input.shape[2:], outs, scales)):
        a = 2 + d
        if o == n and (linear or antialias):    # PyTorch copies an axis whose size is kept
            continue
        if antialias:
            x = _weighted_taps(x, a, *_antialias_taps(n, o, s, bool(align_corners),
                                                      mode == "bicubic"))
            continue
        if mode == "bicubic":
            x = _weighted_taps(x, a, *_cubic_taps(n, o, s, bool(align_corners)))
            continue
        if mode == "area":
            x = adaptive_mean_axis(x, a, o)
            continue
        if not linear:
            idx = _nearest_index(n, o, s, mode == "nearest-exact", nd, x.dtype)
            x = T.take(x, T.asarray(idx, device=x.device), axis=a)
            continue
        i0, i1, lam = _linear_weights(n, o, s, bool(align_corners))
        shape = (o,) + (1,) * (x.ndim - a - 1)
        w1 = T.asarray(lam.reshape(shape), device=x.device).astype(x.dtype)
        x0 = T.take(x, T.asarray(i0, device=x.device), axis=a)
        x1 = T.take(x, T.asarray(i1, device=x.device), axis=a)
        x = x0 + (x1 - x0) * w1
    return x

# ---------------------------------------------------------------- normalization


def _norm_shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(n) for n in normalized_shape)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x**2 over the trailing normalized_shape) + eps) * weight, as
    torch.nn.functional.rms_norm (eps None: the machine epsilon of the dtype it computes in,
    float32 for 16-bit inputs, as PyTorch's; the output has the input's dtype).

    >>> import tensor as T
    >>> rms_norm(T.tensor([[3.0, 4.0]], dtype=T.float64), 2, eps=0.0).tolist()[0][0] == 3 / 12.5 ** 0.5
    True
    """
    op = "rms_norm"
    F._float(input, op)
    ns = _norm_shape(normalized_shape)
    nd = len(ns)
    if input.ndim < nd or tuple(input.shape[input.ndim - nd:]) != ns:
        raise ValueError(f"{op}: expected input of shape (*, {', '.join(map(str, ns))}), got "
                         f"{tuple(input.shape)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise ValueError(f"{op}: weight shape {tuple(weight.shape)} != normalized_shape {ns}")
    xs = F.wide_stats(input)
    eps = T.finfo(xs.dtype).eps if eps is None else float(eps)
    axes = tuple(range(input.ndim - nd, input.ndim))
    ms = T.mean(xs * xs, axis=axes, keepdims=True)
    y = (xs * T.reciprocal(T.sqrt(ms + eps))).astype(input.dtype, copy=False)
    if weight is not None:
        y = y * weight.astype(input.dtype, copy=False)
    return y


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) plane of (N, C, *) input over its spatial positions,
    as torch.nn.functional.instance_norm. With use_input_stats and running stats given, these
    are updated in place with the batch average of the per-instance statistics (unbiased
    variance); without use_input_stats the running statistics normalize.

    >>> import tensor as T
    >>> instance_norm(T.tensor([[[0.0, 2.0]]]), eps=0.0).tolist()
    [[[-1.0, 1.0]]]
    """
    op = "instance_norm"
    F._float(input, op)
    if input.ndim < 3:
        raise ValueError(f"{op}: expected input of shape (N, C, *) with at least one spatial "
                         f"dim, got {tuple(input.shape)}")
    c = input.shape[1]
    for name, p in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != (c,):
            raise ValueError(f"{op}: {name} must have shape ({c},) for input with {c} "
                             f"channels, got {tuple(p.shape)}")
    bshape = (1, c) + (1,) * (input.ndim - 2)
    xs = F.wide_stats(input)   # statistics and normalization in float32 for 16-bit inputs
    if use_input_stats:
        axes = tuple(range(2, input.ndim))
        n = input.numel() // max(input.shape[0] * c, 1)
        if n <= 1:
            raise ValueError(f"{op}: expected more than 1 spatial element when training, got "
                             f"input of shape {tuple(input.shape)}")
        mean = T.mean(xs, axis=axes, keepdims=True)
        var = T.var(xs, axis=axes, keepdims=True)
        with no_grad():
            if running_mean is not None:
                m = T.mean(mean.detach().reshape(input.shape[0], c), axis=0)
                running_mean.copy_(running_mean * (1 - momentum)
                                   + m.astype(running_mean.dtype) * momentum)
            if running_var is not None:
                v = T.mean(var.detach().reshape(input.shape[0], c), axis=0) * (n / (n - 1))
                running_var.copy_(running_var * (1 - momentum)
                                  + v.astype(running_var.dtype) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: running_mean and running_var are required when "
                             "use_input_stats is False")
        mean = running_mean.reshape(bshape).astype(xs.dtype, copy=False)
        var = running_var.reshape(bshape).astype(xs.dtype, copy=False)
    y = ((xs - mean) * T.reciprocal(T.sqrt(var + eps))).astype(input.dtype, copy=False)
    if weight is not None:
        y = y * weight.reshape(bshape).astype(input.dtype, copy=False)
    if bias is not None:
        y = y + bias.reshape(bshape).astype(input.dtype, copy=False)
    return y

# ---------------------------------------------------------------- pixel shuffle


def _factor(r, op: str, what: str) -> int:
    if not isinstance(r, numbers.Integral) or r <= 0:
        raise ValueError(f"{op}: {what} must be a positive int, got {r!r}")
    return int(r)


def _shuffle_args(input, factor, op: str, what: str) -> tuple:
    """(the factor, input's shape) of pixel_shuffle / pixel_unshuffle, checked."""
    F._tensor(input, op)
    r = _factor(factor, op, what)
    if input.ndim < 3:
        raise ValueError(f"{op}: expected input with at least 3 dims, got shape "
                         f"{tuple(input.shape)}")
    return r, input.shape


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r), as torch.nn.functional.pixel_shuffle.

    >>> import tensor as T
    >>> pixel_shuffle(T.arange(4.0).reshape(4, 1, 1), 2).tolist()
    [[[0.0, 1.0], [2.0, 3.0]]]
    """
    op = "pixel_shuffle"
    r, (*lead, c, h, w) = _shuffle_args(input, upscale_factor, op, "upscale_factor")
    if c % (r * r):
        raise ValueError(f"{op}: the channel dim {c} of input shape {tuple(input.shape)} must be "
                         f"divisible by upscale_factor**2 = {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of pixel_shuffle.

    >>> import tensor as T
    >>> pixel_unshuffle(T.arange(4.0).reshape(1, 2, 2), 2).reshape(-1).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    op = "pixel_unshuffle"
    r, (*lead, c, h, w) = _shuffle_args(input, downscale_factor, op, "downscale_factor")
    if h % r or w % r:
        raise ValueError(f"{op}: the spatial dims ({h}, {w}) of input shape "
                         f"{tuple(input.shape)} must be divisible by downscale_factor {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)

# ---------------------------------------------------------------- channel dropout


def _check_p(p, op: str) -> float:
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def _feature_dropout(x: Tensor, p: float, training: bool, inplace: bool, batched: bool):
    if not training or p == 0.0:
        return x
    F._float(x, "dropout")
    lead = tuple(x.shape[:2]) if batched else tuple(x.shape[:1])
    shape = lead + (1,) * (x.ndim - len(lead))
    keep = _random.rand(*shape, dtype=T.float32, device=x.device) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return F._result(x, lambda v: v * (keep.astype(v.dtype) * scale), inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability p (training), scaling
    the kept ones by 1/(1-p), as torch.nn.functional.dropout1d.

    >>> import tensor as T
    >>> dropout1d(T.ones((2, 3)), 0.5, training=False).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    op = "dropout1d"
    F._tensor(input, op)
    p = _check_p(p, op)
    if input.ndim not in (2, 3):
        raise ValueError(f"{op}: expected 2-d or 3-d input, got shape {tuple(input.shape)}")
    return _feature_dropout(input, p, training, inplace, input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) input, as
    torch.nn.functional.dropout2d (a 3-d input is taken as (N, C, L) with a warning, as
    PyTorch does; other ranks warn and drop along dim 1).

    >>> import tensor as T
    >>> dropout2d(T.ones((1, 1, 2, 2)), 0.5, training=False).shape
    (1, 1, 2, 2)
    """
    op = "dropout2d"
    F._tensor(input, op)
    p = _check_p(p, op)
    if input.ndim not in (3, 4):
        warnings.warn(f"{op}: received a {input.ndim}-d input; dropout2d expects (N, C, H, W) "
                      "or (C, H, W) and drops along dim 1", UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn(f"{op}: received a 3-d input and assumes channel-wise 1-d dropout "
                      "(input as (N, C, L)), as PyTorch; use dropout1d for that",
                      UserWarning, stacklevel=2)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected at least 2-d input, got shape {tuple(input.shape)}")
    return _feature_dropout(input, p, training, inplace, True)

_SELU_NEG = 1.7580993408473766          # -(SELU's lowest value): alpha * scale


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance, as
    torch.nn.functional.alpha_dropout: dropped elements become SELU's saturation value, and
    all are then scaled by a and shifted by b (a = 1/sqrt((1-p)(1 + p*1.7581**2))).

    >>> import tensor as T
    >>> alpha_dropout(T.ones(3), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    op = "alpha_dropout"
    F._tensor(input, op)
    p = _check_p(p, op)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    F._float(input, op)
    if p == 1.0:
        return F._result(input, lambda v: v * 0.0, inplace)
    a = 1.0 / math.sqrt((_SELU_NEG * _SELU_NEG * p + 1.0) * (1.0 - p))
    keep = (_random.rand(*input.shape, dtype=T.float32, device=input.device) >= p)
    keep = keep.astype(input.dtype)
    b = (keep - 1.0) * (_SELU_NEG * a) + _SELU_NEG * a * p
    return F._result(input, lambda v: v * (keep * a) + b, inplace)

# ---------------------------------------------------------------- adaptive max pooling


def _windows(n: int, o: int) -> list:
    return [range((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _empty_adaptive(x, size, unbatched: bool, return_indices: bool):
    """The empty result of an adaptive pool to a size with a 0 (still on x's graph)."""
    out = tuple(x.shape[:2]) + tuple(size)
    none = T.asarray(np.zeros(0, dtype=np.int64), device=x.device)
    y = T.take(x.reshape(-1), none, axis=0).reshape(out)
    where = T.zeros(out, dtype=T.int64, device=x.device)
    if unbatched:
        y, where = y[0], where[0]
    return (y, where) if return_indices else y


def _adaptive_max(x, nd, output_size, return_indices, op):
    F._tensor(x, op)
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected {nd + 1}-d or {nd + 2}-d input, got shape "
                         f"{tuple(x.shape)}")
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = x.reshape((1,) + tuple(x.shape))
    ins = tuple(x.shape[2:])
    size = adaptive_size(x, nd, output_size, op)
    if 0 in size:
        return _empty_adaptive(x, size, unbatched, return_indices)
    wins = [_windows(n, o) for n, o in zip(ins, size)]
    cells = []          # for each output cell, the flat input positions of its window
    if nd == 1:
        cells = [list(w) for w in wins[0]]
    else:
        for wh in wins[0]:
            for ww in wins[1]:
                cells.append([h * ins[1] + w for h in wh for w in ww])
    k = max(len(c) for c in cells)
    table = np.array([c + [c[0]] * (k - len(c)) for c in cells], dtype=np.int64)
    n, ch = x.shape[:2]
    flat = x.reshape(n, ch, -1)
    idx = T.asarray(table.reshape(-1), device=x.device)
    with no_grad():
        vals = T.take(flat.detach(), idx, axis=2).reshape(n, ch, len(cells), k)
        best = T.argmax(vals, axis=3)                       # first maximum, as PyTorch
        where = T.take(T.asarray(table, device=x.device).reshape(-1),
                       best + T.asarray(np.arange(len(cells)) * k, device=x.device), axis=0)
    y = T.take_along_axis(flat, where, axis=2)
    out = (n, ch) + size
    y, where = y.reshape(out), where.reshape(out)
    if unbatched:
        y, where = y[0], where[0]
    return (y, where) if return_indices else y


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, H, W) or (C, H, W) to a fixed (OH, OW) (None keeps that size):
    window i spans [floor(i*H/OH), ceil((i+1)*H/OH)). return_indices: also the flat h*W + w
    positions of the maxima, as torch.nn.functional.adaptive_max_pool2d.

    >>> import tensor as T
    >>> adaptive_max_pool2d(T.arange(9.0).reshape(1, 3, 3), 2).tolist()
    [[[4.0, 5.0], [7.0, 8.0]]]
    """
    return _adaptive_max(input, 2, output_size, return_indices, "adaptive_max_pool2d")


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, L) or (C, L) to a fixed length.

    >>> import tensor as T
    >>> adaptive_max_pool1d(T.tensor([[1.0, 3.0, 2.0]]), 2).tolist()
    [[3.0, 3.0]]
    """
    return _adaptive_max(input, 1, output_size, return_indices, "adaptive_max_pool1d")

# ---------------------------------------------------------------- bilinear


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o], as
    torch.nn.functional.bilinear.

    >>> import tensor as T
    >>> bilinear(T.tensor([[1.0, 2.0]]), T.tensor([[3.0]]), T.ones((1, 2, 1))).tolist()
    [[9.0]]
    """
    op = "bilinear"
    for t in (input1, input2, weight):
        F._tensor(t, op)
    if weight.ndim != 3:
        raise ValueError(f"{op}: weight must be 3-d (out, in1, in2), got {tuple(weight.shape)}")
    o, i, j = weight.shape
    if input1.ndim == 0 or input1.shape[-1] != i or input2.ndim == 0 or input2.shape[-1] != j:
        raise ValueError(f"{op}: inputs of shapes {tuple(input1.shape)} and "
                         f"{tuple(input2.shape)} do not match weight {tuple(weight.shape)}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise ValueError(f"{op}: input1 and input2 must have the same leading dims, got "
                         f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ValueError(f"{op}: bias must have shape ({o},), got {tuple(bias.shape)}")
    y = T.einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


__all__ = ["pad", "interpolate", "rms_norm", "instance_norm", "pixel_shuffle",
           "pixel_unshuffle", "dropout1d", "dropout2d", "alpha_dropout", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "bilinear"]
