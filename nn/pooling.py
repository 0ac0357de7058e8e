"""Pooling: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d and their modules.

Max and average pooling gather the windows with the convolutions' `im2col` primitive (padding
with -inf for max), then reduce over the window axis: a sum for average pooling, a chain of
elementwise where ops for max pooling, which sends each gradient to the first largest element
of its window (as PyTorch). Adaptive average pooling averages one axis at a time with a
gather of PyTorch's start/end index table (adaptive_mean_axis).

>>> import tensor as T
>>> x = T.arange(16.0).reshape(1, 1, 4, 4)
>>> max_pool2d(x, 2).reshape(-1).tolist(), avg_pool2d(x, 2).reshape(-1).tolist()
([5.0, 7.0, 13.0, 15.0], [2.5, 4.5, 10.5, 12.5])
"""
from __future__ import annotations

import math
import operator

import numpy as np

import tensor as T
from tensor._tensor import Tensor

from .conv import check_input, depth_taps, im2col, ntuple
from .module import Module


def _geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, op):
    """(kernel, stride, dilation, pads, out sizes) for pooling x's last nd axes, as PyTorch
    (ceil_mode: the last window must start inside the input or its left padding)."""
    k = ntuple(kernel_size, nd, "kernel_size", op)
    empty = stride is None or (isinstance(stride, (list, tuple)) and not stride)
    s = k if empty else ntuple(stride, nd, "stride", op)
    p, d = ntuple(padding, nd, "padding", op), ntuple(dilation, nd, "dilation", op)
    if min(k + s + d) < 1 or min(p) < 0:
        raise ValueError(f"{op}: kernel_size {k}, stride {s} and dilation {d} must be positive "
                         f"and padding {p} non-negative")
    if any(2 * pp > kk for pp, kk in zip(p, k)):
        raise ValueError(f"{op}: padding {p} must be at most half of kernel_size {k}")
    pads, out = [], []
    for n, kk, ss, pp, dd in zip(x.shape[-nd:], k, s, p, d):
        span = n + 2 * pp - dd * (kk - 1) - 1
        o = (-(-span // ss) if ceil_mode else span // ss) + 1
        if ceil_mode and (o - 1) * ss >= n + pp:
            o -= 1
        if o < 1:
            raise ValueError(f"{op}: input of shape {tuple(x.shape)} is too small for "
                             f"kernel_size {k} (padding {p}, dilation {d}): output size {o}")
        pads.append((pp, pp + max(0, (o - 1) * ss + dd * (kk - 1) + 1 - (n + 2 * pp))))
        out.append(o)
    return k, s, d, tuple(pads), tuple(out)


def _to4d(x, nd):
    """(x as (N, C, H, W), undo) for batched/unbatched 1-D and 2-D pooling input."""
    batched = x.ndim == nd + 2
    x4 = x if batched else T.expand_dims(x, 0)
    if nd == 1:
        x4 = T.expand_dims(x4, 2)

    def undo(y):  # y: (N, C, OH, OW)
        if nd == 1:
            y = y[:, :, 0]
        return y if batched else y[0]
    return x4, undo


def _pad2(t, nd, fill):
    return ((fill,) + tuple(t)) if nd == 1 else tuple(t)


def _lowest(dtype):
    """The padding value of max pooling: below every value of dtype."""
    if dtype.kind == "f":
        return -math.inf
    return -(2 ** (8 * dtype.itemsize - 1)) if dtype.kind == "i" else 0


def _max_pool(x, nd, kernel_size, stride, padding, dilation, ceil_mode, return_indices, op):
    if nd == 3:
        return _max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, op)
    check_input(x, nd, None, op)
    k, s, d, pads, out = _geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, op)
    if (nd == 2 and x.ndim == 4 and not return_indices and x.dtype in (T.float32, T.float64)
            and tuple(d) == (1, 1) and all(p == (0, 0) for p in _pad2(pads, nd, (0, 0)))
            and tuple(out) == tuple((x.shape[2 + i] - k[i]) // s[i] + 1 for i in range(2))):
        from ._fused_ops import max_pool2d_fast  # one fused kernel and one graph node
        return max_pool2d_fast(x, k[0], k[1], s[0], s[1])[0]
    if (nd == 2 and x.ndim == 4 and not return_indices and x.dtype in (T.float32, T.float64)
            and _windows_touch_input(x.shape[2:], k, s, d, pads, out)):
        from ._fused_ops import max_pool2d_pad  # padding / dilation / ceil_mode: one node too
        return max_pool2d_pad(x, tuple(k), tuple(s), tuple(p[0] for p in pads), tuple(d),
                              tuple(out))[0]
    x4, undo = _to4d(x, nd)
    k2, s2, d2 = _pad2(k, nd, 1), _pad2(s, nd, 1), _pad2(d, nd, 1)
    cols = im2col(x4, k2, s2, _pad2(pads, nd, (0, 0)), d2, _lowest(x.dtype))
    c, kh, kw, n, oh, ow = cols.shape
    p2 = _pad2(pads, nd, (0, 0))
    inside = None if all(p == (0, 0) for p in p2) else _inside(x4.shape[2:], k2, s2, d2, p2, (oh, ow),
                                                               x.device)
    y, idx = _window_max(cols.reshape(c, kh * kw, n, oh, ow), return_indices, inside)
    y = undo(T.contiguous(T.permute(y, (1, 0, 2, 3))))
    if not return_indices:
        return y
    return y, undo(_flat_indices(idx, x4.shape, k2, s2, d2, p2))


def _windows_touch_input(size, k, s, d, pads, out) -> bool:
    """Whether every pooling window holds at least one input element (not only padding).
    Without dilation a window is a run of positions, so the first and the last decide."""
    for n, kk, ss, dd, pp, oo in zip(size, k, s, d, pads, out):
        starts = (0, oo - 1) if dd == 1 else range(oo)
        if not all(any(0 <= o * ss - pp[0] + j * dd < n for j in range(kk)) for o in starts):
            return False
    return True


def _inside(size, k, s, d, pads, out, device):
    """(K, *out) bool, K the product of the window k: whether window element i of each output
    position lies in the input, not in its padding (any number of dims)."""
    mask = None
    for axis in range(len(k)):   # (k, o): element j of window o inside [0, n) along the axis
        pos = (T.arange(out[axis], device=device).reshape(1, -1) * s[axis] - pads[axis][0]
               + T.arange(k[axis], device=device).reshape(-1, 1) * d[axis])
        m = (pos >= 0) & (pos < size[axis])
        if mask is not None:   # (K so far, *out so far) x (k, o) -> (K * k, *out so far, o)
            kk, *o = mask.shape
            m = (mask.reshape((kk, 1) + tuple(o) + (1,))
                 & m.reshape((1, k[axis]) + (1,) * len(o) + (out[axis],)))
            m = m.reshape((kk * k[axis],) + tuple(o) + (out[axis],))
        mask = m
    return mask


def _window_max(cols, with_index, inside=None):
    """Max over axis 1 of (C, K, N, OH, OW), as PyTorch's kernel: a later element wins only if
    it is larger (the first maximum gets the gradient) or NaN (NaN propagates); with padding,
    only the elements `inside` (K, OH, OW) the input compete, so a maximum equal to the padding
    value keeps an index and a gradient in the input. A chain of elementwise where ops: autograd
    routes each gradient to the chosen element."""
    best = cols[:, 0]
    idx = T.zeros(best.shape, dtype=T.int64, device=best.device) if with_index else None
    have = None if inside is None else inside[0]
    for i in range(1, cols.shape[1]):
        v = cols[:, i]
        better = v > best
        if v.dtype.kind == "f":
            better = better | T.isnan(v)
        if inside is not None:
            better = inside[i] & (better | ~have)
            have = have | inside[i]
        best = T.where(better, v, best)
        if with_index:
            idx = T.where(better, i, idx)
    return best, idx


def _flat_indices(idx, shape, k, s, d, pads):
    """PyTorch's return_indices: the flat (row * W + col) input position of each maximum."""
    c, n, oh, ow = idx.shape
    h = T.arange(oh, device=idx.device).reshape(1, 1, oh, 1) * s[0] - pads[0][0] + (idx // k[1]) * d[0]
    w = T.arange(ow, device=idx.device).reshape(1, 1, 1, ow) * s[1] - pads[1][0] + (idx % k[1]) * d[1]
    return T.contiguous(T.permute(h * shape[3] + w, (1, 0, 2, 3)))


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """2-D max pooling over (N, C, H, W) or (C, H, W), as PyTorch (stride defaults to the
    kernel size); with return_indices, also the flat H*W index of each maximum.

    >>> import tensor as T
    >>> max_pool2d(T.tensor([[[[1.0, 3.0], [2.0, 0.0]]]]), 2).tolist()
    [[[[3.0]]]]
    """
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     "max_pool2d")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """1-D max pooling over (N, C, L) or (C, L).

    >>> import tensor as T
    >>> max_pool1d(T.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     "max_pool1d")


# ---------------------------------------------------------------- 3-D: the 2-D windows of depth taps

def _cols3d(x, k, s, d, pads, out, fill):
    """(C, KD*KH*KW, N*OD, OH, OW): the windows of a batched (N, C, D, H, W) x padded with
    `fill`, as the 2-D im2col of the depth slices each depth tap reads."""
    if any(pads[0]):
        x = T.pad(x, ((0, 0), (0, 0), pads[0], (0, 0), (0, 0)), constant_values=fill)
    cols = T.stack([im2col(sl, k[1:], s[1:], pads[1:], d[1:], fill)    # (C, KH, KW, N*OD, ..)
                    for sl in depth_taps(x, k[0], s[0], d[0], out[0])], axis=1)
    return cols.reshape((x.shape[1], k[0] * k[1] * k[2]) + tuple(cols.shape[4:]))


def _pool3d(x, op):
    """(batched x, undo: (C, N*OD, OH, OW) -> the output's (N, C, OD, OH, OW) layout)."""
    check_input(x, 3, None, op)
    batched = x.ndim == 5
    x5 = x if batched else T.expand_dims(x, 0)

    def undo(y, od):
        c, _, oh, ow = y.shape
        y = T.contiguous(T.permute(y.reshape(c, x5.shape[0], od, oh, ow), (1, 0, 2, 3, 4)))
        return y if batched else y[0]
    return x5, undo


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W), as PyTorch (return_indices: flat
    (d * H + h) * W + w positions).

    >>> import tensor as T
    >>> max_pool3d(T.arange(8.0).reshape(1, 1, 2, 2, 2), 2).reshape(-1).tolist()
    [7.0]
    """
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       "max_pool3d")


def _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, op):
    x, undo = _pool3d(input, op)
    k, s, d, pads, out = _geometry(x, 3, kernel_size, stride, padding, dilation, ceil_mode, op)
    inside = None
    if any(v for pair in pads for v in pair):
        kk, (od, oh, ow) = k[0] * k[1] * k[2], out
        both = _inside(x.shape[2:], k, s, d, pads, out, x.device)          # (K, OD, OH, OW)
        inside = T.broadcast_to(both.reshape(kk, 1, od, oh, ow),           # over the batch
                                (kk, x.shape[0], od, oh, ow)).reshape(kk, x.shape[0] * od, oh, ow)
    cols = _cols3d(x, k, s, d, pads, out, _lowest(x.dtype))
    y, idx = _window_max(cols, return_indices, inside)
    if not return_indices:
        return undo(y, out[0])
    c, _, oh, ow = idx.shape
    dev = idx.device
    t, r = idx // (k[1] * k[2]), idx % (k[1] * k[2])
    od_i = T.tile(T.arange(out[0], device=dev), x.shape[0]).reshape(1, -1, 1, 1)
    dz = od_i * s[0] - pads[0][0] + t * d[0]
    hy = T.arange(oh, device=dev).reshape(1, 1, oh, 1) * s[1] - pads[1][0] + (r // k[2]) * d[1]
    wx = T.arange(ow, device=dev).reshape(1, 1, 1, ow) * s[2] - pads[2][0] + (r % k[2]) * d[2]
    return undo(y, out[0]), undo((dz * x.shape[3] + hy) * x.shape[4] + wx, out[0])


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W), as PyTorch.

    >>> import tensor as T
    >>> avg_pool3d(T.arange(8.0).reshape(1, 1, 2, 2, 2), 2).reshape(-1).tolist()
    [3.5]
    """
    return _avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, "avg_pool3d")


def _avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, op):
    x, undo = _pool3d(input, op)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating input, got {x.dtype.name}")
    k, s, d, pads, out = _geometry(x, 3, kernel_size, stride, padding, 1, ceil_mode, op)
    y = T.sum(_cols3d(x, k, s, d, pads, out, 0.0), axis=1)                  # (C, N*OD, OH, OW)
    if divisor_override is not None:
        if divisor_override == 0:
            raise ValueError(f"{op}: divisor_override must be non-zero")
        return undo(y / divisor_override, out[0])
    cd, ch, cw = (T.tensor(_counts(n, kk, ss, pp[0], o, count_include_pad), dtype=x.dtype,
                           device=x.device)
                  for n, kk, ss, pp, o in zip(x.shape[2:], k, s, pads, out))
    div = T.tile(cd, x.shape[0]).reshape(-1, 1, 1) * ch.reshape(-1, 1) * cw
    return undo(y / div, out[0])


def _counts(n, k, s, p, o, include_pad):
    """Per output position along one axis: how many elements its window averages."""
    res = []
    for i in range(o):
        lo = i * s - p
        hi = min(lo + k, n + p)
        if not include_pad:
            lo, hi = max(lo, 0), min(hi, n)
        res.append(hi - lo)
    return res


def _avg_pool(x, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, op):
    if nd == 3:
        return _avg_pool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override, op)
    check_input(x, nd, None, op)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating input, got {x.dtype.name}")
    k, s, d, pads, out = _geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode, op)
    x4, undo = _to4d(x, nd)
    cols = im2col(x4, _pad2(k, nd, 1), _pad2(s, nd, 1), _pad2(pads, nd, (0, 0)), (1, 1), 0.0)
    y = T.sum(cols, axis=(1, 2))  # (C, N, OH, OW)
    if divisor_override is not None:
        if divisor_override == 0:
            raise ValueError(f"{op}: divisor_override must be non-zero")
        y = y / divisor_override
    else:
        cnt = [_counts(n, kk, ss, pp[0], o, count_include_pad)
               for n, kk, ss, pp, o in zip(x.shape[-nd:], k, s, pads, out)]
        if nd == 1:
            cnt = [[1]] + cnt
        div = (T.tensor(cnt[0], dtype=x.dtype, device=x.device).reshape(-1, 1)
               * T.tensor(cnt[1], dtype=x.dtype, device=x.device))
        y = y / div
    return undo(T.contiguous(T.permute(y, (1, 0, 2, 3))))


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """2-D average pooling over (N, C, H, W) or (C, H, W), as PyTorch.

    >>> import tensor as T
    >>> avg_pool2d(T.ones((1, 1, 2, 2)), 2, padding=1).reshape(-1).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool2d")


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over (N, C, L) or (C, L).

    >>> import tensor as T
    >>> avg_pool1d(T.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     "avg_pool1d")


MAX_NUMEL = 2 ** 40     # larger outputs are refused before any table is built


def adaptive_mean_axis(x: Tensor, axis: int, o: int) -> Tensor:
    """x averaged to o bins along axis: bin i spans [floor(i*n/o), ceil((i+1)*n/o)), as
    PyTorch's adaptive average pooling. One gather of an (o, taps) index table built with NumPy
    (taps = the longest bin, so the table holds about n + 2*o entries), a masked sum over the
    taps and a division by each bin's length.

    >>> import tensor as T
    >>> adaptive_mean_axis(T.tensor([1.0, 3.0, 2.0]), 0, 2).tolist()
    [2.0, 2.5]
    """
    n = x.shape[axis]
    j = np.arange(o, dtype=np.int64)
    lo, hi = (j * n) // o, -((-(j + 1) * n) // o)
    length = (hi - lo)[:, None]
    taps = int(length.max()) if o else 1
    k = np.arange(taps)
    idx = np.minimum(lo[:, None] + k, n - 1).reshape(-1)
    y = T.take(x, T.asarray(idx, device=x.device), axis=axis)
    y = y.reshape(tuple(x.shape[:axis]) + (o, taps) + tuple(x.shape[axis + 1:]))
    tail = (1,) * (x.ndim - axis - 1)
    mask = T.asarray((k < length).reshape((o, taps) + tail), device=x.device).astype(x.dtype)
    div = T.asarray(np.maximum(length, 1).reshape((o,) + tail), device=x.device)
    return T.sum(y * mask, axis=axis + 1) / div.astype(x.dtype)


def adaptive_size(x, nd: int, output_size, op: str) -> tuple:
    """The checked output sizes of an adaptive pool (None keeps that input size; 0 gives an
    empty output, as PyTorch)."""
    if output_size is None or not isinstance(output_size, (list, tuple)):
        output_size = (output_size,) * nd
    if len(output_size) != nd:
        raise ValueError(f"{op}: output_size must be an int or {nd} values, got {output_size!r}")
    try:
        size = tuple(n if o is None else operator.index(o)
                     for n, o in zip(x.shape[-nd:], output_size))
    except TypeError:
        raise TypeError(f"{op}: output_size must hold ints or None, got {output_size!r}") from None
    if min(size) < 0 or min(x.shape[-nd:]) < 1:
        raise ValueError(f"{op}: output_size {size} must be non-negative and the input shape "
                         f"{tuple(x.shape)} non-empty in its last {nd} dims")
    numel = math.prod(x.shape[:-nd]) * math.prod(size)
    if numel > MAX_NUMEL:
        raise ValueError(f"{op}: output_size {size} gives {numel} elements, too many (at most "
                         f"2**{MAX_NUMEL.bit_length() - 1})")
    return size


def _adaptive_avg(x, nd, output_size, op):
    check_input(x, nd, None, op)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating input, got {x.dtype.name}")
    size = adaptive_size(x, nd, output_size, op)
    ones = tuple(a for a, o in zip(range(x.ndim - nd, x.ndim), size) if o == 1)
    if ones:   # one bin spanning these axes (global pooling): one mean, as torch's
        x = T.mean(x, axis=ones, keepdims=True)
    for a, o in zip(range(x.ndim - nd, x.ndim), size):
        if o != 1:
            x = adaptive_mean_axis(x, a, o)
    return x


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling to a fixed (OH, OW) (int or tuple, None keeps that input size):
    window i spans [floor(i*H/OH), ceil((i+1)*H/OH)), as PyTorch.

    >>> import tensor as T
    >>> adaptive_avg_pool2d(T.arange(9.0).reshape(1, 1, 3, 3), 2).reshape(-1).tolist()
    [2.0, 3.0, 5.0, 6.0]
    """
    return _adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, D, H, W) to a fixed size (each output averages its bin).

    >>> import tensor as T
    >>> adaptive_avg_pool3d(T.arange(8.0).reshape(1, 1, 2, 2, 2), 1).reshape(-1).tolist()
    [3.5]
    """
    return _adaptive_avg(input, 3, output_size, "adaptive_avg_pool3d")


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average pooling of (N, C, L) to a fixed length.

    >>> import tensor as T
    >>> adaptive_avg_pool1d(T.tensor([[[1.0, 3.0, 2.0]]]), 2).tolist()
    [[[2.0, 2.5]]]
    """
    return _adaptive_avg(input, 1, output_size, "adaptive_avg_pool1d")

# ---------------------------------------------------------------- modules


class _MaxPool(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride   # (stride=0 is refused, not replaced)
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input: Tensor):
        return _max_pool(input, self._nd, self.kernel_size, self.stride, self.padding,
                         self.dilation, self.ceil_mode, self.return_indices, type(self).__name__)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPool):
    """2-D max pooling module (see max_pool2d).

    >>> import tensor as T
    >>> MaxPool2d(2)(T.ones((1, 3, 8, 8))).shape
    (1, 3, 4, 4)
    """


class MaxPool3d(_MaxPool):
    """3-D max pooling module (see max_pool3d).

    >>> import tensor as T
    >>> MaxPool3d(2)(T.ones((1, 3, 4, 4, 4))).shape
    (1, 3, 2, 2, 2)
    """
    _nd = 3


class MaxPool1d(_MaxPool):
    """1-D max pooling module (see max_pool1d).

    >>> import tensor as T
    >>> MaxPool1d(2)(T.ones((1, 3, 8))).shape
    (1, 3, 4)
    """
    _nd = 1


class _AvgPool(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride   # (stride=0 is refused, not replaced)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return _avg_pool(input, self._nd, self.kernel_size, self.stride, self.padding,
                         self.ceil_mode, self.count_include_pad, self.divisor_override,
                         type(self).__name__)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(_AvgPool):
    """3-D average pooling module (see avg_pool3d).

    >>> import tensor as T
    >>> AvgPool3d(2)(T.ones((1, 3, 4, 4, 4))).shape
    (1, 3, 2, 2, 2)
    """
    _nd = 3


class AvgPool2d(_AvgPool):
    """2-D average pooling module (see avg_pool2d).

    >>> import tensor as T
    >>> AvgPool2d(2, stride=1)(T.ones((1, 3, 8, 8))).shape
    (1, 3, 7, 7)
    """


class AvgPool1d(_AvgPool):
    """1-D average pooling module (see avg_pool1d).

    >>> import tensor as T
    >>> AvgPool1d(3)(T.ones((2, 8))).shape
    (2, 2)
    """
    _nd = 1


class AdaptiveAvgPool2d(Module):
    """Adaptive 2-D average pooling module (see adaptive_avg_pool2d).

    >>> import tensor as T
    >>> AdaptiveAvgPool2d((1, 1))(T.ones((2, 5, 7, 7))).shape
    (2, 5, 1, 1)
    """
    _nd = 2

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return _adaptive_avg(input, self._nd, self.output_size, type(self).__name__)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Adaptive 3-D average pooling module (see adaptive_avg_pool3d).

    >>> import tensor as T
    >>> AdaptiveAvgPool3d((1, 2, 2))(T.ones((2, 3, 4, 5, 6))).shape
    (2, 3, 1, 2, 2)
    """
    _nd = 3


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Adaptive 1-D average pooling module (see adaptive_avg_pool1d).

    >>> import tensor as T
    >>> AdaptiveAvgPool1d(4)(T.ones((2, 3, 9))).shape
    (2, 3, 4)
    """
    _nd = 1
