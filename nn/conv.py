"""Convolutions as im2col + one matmul: conv1d, conv2d, conv3d, conv_transpose1d/2d, unfold,
fold, and the Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d modules (a 3-D
convolution is a sum over its depth taps of 2-D ones).

Two linear primitives carry the gradients: `im2col` gathers every window of a padded NCHW
input into a (C, KH, KW, N, OH, OW) block (a zero-copy as_strided view, then one copy), and
`col2im` adds such a block back into an image (each element gathers the window entries that
read it, in kernel-offset order: no atomics and a fixed summation order; other dtypes take one
strided add per kernel offset, the same order). Each is the other's adjoint, so each one's vjp is the
other and its jvp is itself: backward, double backward and forward mode all come for free.
A convolution is then im2col, a (G, O/G, C/G*KH*KW) @ (G, C/G*KH*KW, N*OH*OW) matmul and a
permute; a transposed convolution is a matmul followed by col2im.

>>> import tensor as T
>>> x = T.arange(16.0).reshape(1, 1, 4, 4)
>>> w = T.ones((1, 1, 2, 2))
>>> conv2d(x, w, stride=2).reshape(-1).tolist()
[10.0, 18.0, 42.0, 50.0]
"""
from __future__ import annotations

import operator

import tensor as T
from autograd.graph import RULES, Rule
from tensor import elementwise as ew
from tensor._hook import differentiable
from tensor._tensor import Tensor
from tensor.amp import autocast_op
from tensor.creation import fill_
from tensor.views import basic_index

from .module import Module, weight_and_bias

# ---------------------------------------------------------------- the two primitives


def _out_size(n: int, k: int, s: int, before: int, after: int, d: int) -> int:
    return (n + before + after - d * (k - 1) - 1) // s + 1


def _im2col(x: Tensor, kernel, stride, padding, dilation, value=0.0) -> Tensor:
    """(N, C, H, W) -> (C, KH, KW, N, OH, OW): every window of x padded by
    padding=((top, bottom), (left, right)) with `value`."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    (pt, pb), (pl, pr) = padding
    n, c, h, w = x.shape
    oh = _out_size(h, kh, sh, pt, pb, dh)
    ow = _out_size(w, kw, sw, pl, pr, dw)
    out = ew.empty_tensor((c, kh, kw, n, oh, ow), x.dtype, x.device)
    if x.dtype in (T.float32, T.float64):  # one C pass, padding included (short rows dominate)
        if out.numel():
            from ._fused_ops import im2col_kernel
            im2col_kernel(ew.contiguous(x), out, (sh, sw), (dh, dw), (pt, pl), value)
        return out
    if pt or pb or pl or pr:  # a filled canvas + one copy (T.pad is general)
        canvas = ew.empty_tensor((n, c, h + pt + pb, w + pl + pr), x.dtype, x.device)
        fill_(canvas, value)
        ew.copy_into(basic_index(canvas, (slice(None), slice(None), slice(pt, pt + h),
                                          slice(pl, pl + w))), x)
        x = canvas
    s = x.strides  # any layout: the windows are read through x's own strides
    win = T.as_strided(x, (c, kh, kw, n, oh, ow),
                       (s[1], dh * s[2], dw * s[3], s[0], sh * s[2], sw * s[3]))
    ew.copy_into(out, win)
    return out


def _col2im(cols: Tensor, size, stride, padding, dilation) -> Tensor:
    """Adjoint of im2col: (C, KH, KW, N, OH, OW) -> (N, C, H, W) with size=(H, W), each
    window added back at its place on the padded canvas, which is then cropped."""
    c, kh, kw, n, oh, ow = cols.shape
    (sh, sw), (dh, dw), ((pt, pb), (pl, pr)) = stride, dilation, padding
    if cols.dtype in (T.float32, T.float64):   # one C pass gathering each element's windows
        from ._fused_ops import col2im_kernel
        out = ew.empty_tensor((n, c) + tuple(size), cols.dtype, cols.device)
        if out.numel():
            col2im_kernel(ew.contiguous(cols), out, (sh, sw), (dh, dw), (pt, pl))
        return out
    hp, wp = size[0] + pt + pb, size[1] + pl + pr
    out = T.zeros((n, c, hp, wp), dtype=cols.dtype, device=cols.device)
    s = out.strides
    for i in range(kh):
        for j in range(kw):
            dst = T.as_strided(out, (n, c, oh, ow), (s[0], s[1], sh * s[2], sw * s[3]),
                               i * dh * s[2] + j * dw * s[3])
            ew.binary("add", dst, T.permute(cols[:, i, j], (1, 0, 2, 3)), out=dst)
    if pt or pb or pl or pr:
        out = T.contiguous(out[:, :, pt:pt + size[0], pl:pl + size[1]])
    return out


im2col = differentiable("im2col", _im2col)
col2im = differentiable("col2im", _col2im)


def _im2col_vjp(ctx, g):
    x, _, stride, padding, dilation = ctx.args[:5]
    return (col2im(g, tuple(x.shape[2:]), stride, padding, dilation),)


def _col2im_vjp(ctx, g):
    cols, _, stride, padding, dilation = ctx.args[:5]
    r = im2col(g, tuple(cols.shape[1:3]), stride, padding, dilation, 0.0)
    oh, ow = cols.shape[4:]
    # a canvas longer than the windows reach (output_padding >= stride) has more windows
    return (r if r.shape[4:] == (oh, ow) else r[:, :, :, :, :oh, :ow],)


def _im2col_jvp(ctx, tans):
    # a padding constant (even -inf for max pooling) has a zero tangent
    return None if tans[0] is None else im2col(tans[0], *ctx.args[1:5], 0.0)


def _col2im_jvp(ctx, tans):
    return None if tans[0] is None else col2im(tans[0], *ctx.args[1:5])


RULES["im2col"] = Rule("im2col", _im2col_vjp, _im2col_jvp, ())
RULES["col2im"] = Rule("col2im", _col2im_vjp, _col2im_jvp, ())

# ---------------------------------------------------------------- conv2d, groups=1: one node
def _conv2d_g1(x, weight, bias, stride, padding, dilation):
    """(N, C, H, W) * (O, C, KH, KW) -> (N, O, OH, OW): im2col + one GEMM (+ bias), recorded as
    a single op (a small network's step is dominated by per-op cost, not by the GEMM)."""
    cols = _im2col(x, tuple(weight.shape[2:]), stride, padding, dilation, 0.0)
    c, kh, kw, n, oh, ow = cols.shape
    o = weight.shape[0]
    y = T.matmul(weight.reshape(o, c * kh * kw), cols.reshape(c * kh * kw, n * oh * ow))
    y = ew.contiguous(T.permute(y.reshape(o, n, oh, ow), (1, 0, 2, 3)))
    if bias is not None:
        ew.binary("add", y, bias.reshape(1, o, 1, 1), out=y)
    return y


conv2d_g1 = differentiable("conv2d_g1", _conv2d_g1)


def _conv2d_g1_vjp(ctx, g):
    x, w, b, stride, padding, dilation = ctx.args
    o, c, kh, kw = w.shape
    n, _, oh, ow = g.shape
    g2 = T.permute(g, (1, 0, 2, 3)).reshape(o, n * oh * ow)
    gx = gw = gb = None
    if ctx.needs[1]:
        cols = im2col(x, (kh, kw), stride, padding, dilation, 0.0).reshape(c * kh * kw, -1)
        gw = (g2 @ cols.T).reshape(w.shape)
    if ctx.needs[0]:
        gcols = (w.reshape(o, c * kh * kw).T @ g2).reshape(c, kh, kw, n, oh, ow)
        gx = col2im(gcols, tuple(x.shape[2:]), stride, padding, dilation)
    if b is not None and ctx.needs[2]:
        gb = g.sum(axis=(0, 2, 3))
    return gx, gw, gb, None, None, None


def _conv2d_g1_jvp(ctx, tans):
    x, w, b, stride, padding, dilation = ctx.args
    tx, tw, tb = tans[:3]
    r = None
    for part in (conv2d_g1(tx, w, None, stride, padding, dilation) if tx is not None else None,
                 conv2d_g1(x, tw, None, stride, padding, dilation) if tw is not None else None,
                 tb.reshape(1, -1, 1, 1) if tb is not None else None):
        if part is not None:
            r = part if r is None else r + part
    return r


RULES["conv2d_g1"] = Rule("conv2d_g1", _conv2d_g1_vjp, _conv2d_g1_jvp, (0, 1))

# ---------------------------------------------------------------- argument checks


def ntuple(v, n: int, what: str, op: str) -> tuple:
    """An int or an n-sequence of ints as an n-tuple; NumPy integers (anything with
    __index__) count as ints."""
    try:
        t = (operator.index(v),) * n if hasattr(v, "__index__") else \
            tuple(operator.index(i) for i in v)
    except TypeError:
        t = ()
    if len(t) != n:
        raise ValueError(f"{op}: {what} must be an int or {n} ints, got {v!r}")
    return t


def check_bias(bias, out: int, weight, op: str) -> None:
    """bias must be None or 1-D with one value per output channel (PyTorch's rule)."""
    if bias is not None and tuple(bias.shape) != (out,):
        raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} expects a 1-D bias of "
                         f"{out} elements, got shape {tuple(bias.shape)}")


def check_window(op: str, kernel, stride, dilation, pads, shape=None) -> None:
    """Sliding-window arguments: kernel, stride and dilation positive, paddings ((before, after)
    per dim) non-negative, and the last len(kernel) sizes of `shape` (when given) padded at
    least as large as the dilated kernel. A negative stride ran forever and a zero one divided
    by zero before."""
    if min(kernel + stride + dilation, default=1) < 1:
        raise ValueError(f"{op}: kernel_size {kernel}, stride {stride} and dilation {dilation} must "
                         "be positive")
    if min((v for pair in pads for v in pair), default=0) < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {tuple(p[0] for p in pads)}")
    for n, k, (b, a), d in zip(tuple(shape or ())[-len(kernel):], kernel, pads, dilation):
        if n + b + a < d * (k - 1) + 1:
            raise ValueError(f"{op}: input of shape {tuple(shape)} padded by {pads} is smaller than "
                             f"the kernel {kernel} with dilation {dilation}")


def conv_padding(padding, kernel, stride, dilation, op: str) -> tuple:
    """((before, after), ...) per spatial dim from an int, a tuple, 'valid' or 'same'."""
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"{op}: padding must be an int, a tuple, 'valid' or 'same', "
                             f"got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions "
                             f"(stride {stride})")
        tot = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in tot)  # the extra one goes after, as PyTorch
    p = ntuple(padding, nd, "padding", op)
    if any(v < 0 for v in p):
        raise ValueError(f"{op}: padding must be non-negative, got {padding!r}")
    return tuple((v, v) for v in p)


def _shape_str(dims) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


def check_input(x, nd: int, channels: int | None, op: str) -> bool:
    """Raise unless x is (N, C, *spatial) or unbatched (C, *spatial) with C == channels;
    returns whether x is batched."""
    sp = ["H", "W"] if nd == 2 else ["L"] if nd == 1 else [f"D{i}" for i in range(nd)]
    c = "C" if channels is None else str(channels)
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor input, got {type(x).__name__}")
    if x.ndim not in (nd + 1, nd + 2) or (channels is not None and x.shape[-nd - 1] != channels):
        raise ValueError(f"{op}: expected input of shape {_shape_str(['N', c] + sp)} or "
                         f"{_shape_str([c] + sp)}, got {tuple(x.shape)}")
    return x.ndim == nd + 2

# ---------------------------------------------------------------- convolution


def _as_2d(x, weight, stride, pads, dilation, nd):
    """conv1d runs as conv2d over a height-1 image."""
    if nd == 2:
        return x, weight, stride, pads, dilation
    return (T.expand_dims(x, 2), T.expand_dims(weight, 2), (1,) + stride, ((0, 0),) + pads,
            (1,) + dilation)


def _weight_tensor(weight, op: str) -> None:
    if not isinstance(weight, Tensor):
        raise TypeError(f"{op}: weight must be a Tensor, got {type(weight).__name__}")


def _conv(x, weight, bias, stride, padding, dilation, groups, nd, op):
    batched = check_input(x, nd, None, op)
    _weight_tensor(weight, op)
    if weight.ndim != nd + 2:
        raise ValueError(f"{op}: weight must be {nd + 2}-D (out_channels, in_channels/groups, "
                         f"*kernel), got shape {tuple(weight.shape)}")
    x = x if batched else T.expand_dims(x, 0)
    o, cg = weight.shape[:2]
    kernel = tuple(weight.shape[2:])
    stride = ntuple(stride, nd, "stride", op)
    dilation = ntuple(dilation, nd, "dilation", op)
    if groups < 1 or o % groups or x.shape[1] != cg * groups:
        raise ValueError(f"{op}: input of shape {tuple(x.shape)} has {x.shape[1]} channels, but "
                         f"weight of shape {tuple(weight.shape)} with groups={groups} expects "
                         f"{cg * groups} (and out_channels {o} divisible by groups)")
    if min(stride + dilation) < 1:
        raise ValueError(f"{op}: stride and dilation must be positive, got {stride}, {dilation}")
    check_bias(bias, o, weight, op)
    pads = conv_padding(padding, kernel, stride, dilation, op)
    check_window(op, kernel, stride, dilation, pads, x.shape)
    if nd == 3:
        y = _conv3d(x, weight, bias, stride, pads, dilation, groups, op)
        return y if batched else y[0]
    x4, w4, s2, p2, d2 = _as_2d(x, weight, stride, pads, dilation, nd)
    if groups == 1 and x4.dtype == w4.dtype and (bias is None or bias.dtype == w4.dtype):
        y = conv2d_g1(x4, w4, bias, s2, p2, d2)
        y = y.reshape(y.shape[:2] + y.shape[4 - nd:])
        return y if batched else y[0]
    cols = im2col(x4, tuple(w4.shape[2:]), s2, p2, d2, 0.0)
    c, kh, kw, n, oh, ow = cols.shape
    y = T.matmul(w4.reshape(groups, o // groups, cg * kh * kw),
                 cols.reshape(groups, cg * kh * kw, n * oh * ow))
    y = T.contiguous(T.permute(y.reshape(o, n, oh, ow), (1, 0, 2, 3)))
    if bias is not None:
        y = y + bias.reshape(1, o, 1, 1)
    y = y.reshape(y.shape[:2] + y.shape[4 - nd:])
    return y if batched else y[0]


def depth_taps(x, k: int, s: int, d: int, od: int):
    """For each of a 3-D window's k depth taps (stride s, dilation d, od outputs), the slices
    of the padded (N, C, D, H, W) x it reads, as one batch of 2-D images (N * OD, C, H, W):
    3-D convolution and pooling run their 2-D paths on these."""
    n, c = x.shape[:2]
    for t in range(k):
        sl = x[:, :, t * d:t * d + (od - 1) * s + 1:s]                # (N, C, OD, H, W)
        yield T.reshape(T.swapaxes(sl, 1, 2), (n * od, c) + tuple(x.shape[3:]))


def _conv3d(x, weight, bias, stride, pads, dilation, groups, op):
    """(N, C, D, H, W) * (O, C/groups, KD, KH, KW): the sum over the depth taps k of 2-D
    convolutions of the depth slices tap k reads (batch and output depth folded together), so
    the 2-D path's im2col and GEMM do the work and autograd the gradients."""
    if any(v for pair in pads for v in pair):
        x = T.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    n, o, kd = x.shape[0], weight.shape[0], weight.shape[2]
    (sd, *s2), (dd, *d2) = stride, dilation
    od = (x.shape[2] - dd * (kd - 1) - 1) // sd + 1
    y = None
    for k, sl in enumerate(depth_taps(x, kd, sd, dd, od)):
        part = _conv(sl, weight[:, :, k], None, tuple(s2), 0, tuple(d2), groups, 2, op)
        y = part if y is None else y + part
    y = T.swapaxes(T.reshape(y, (n, od, o) + tuple(y.shape[2:])), 1, 2)
    return y if bias is None else y + bias.reshape(1, o, 1, 1, 1)


@autocast_op("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation) of (N, C, H, W) or (C, H, W) input, as PyTorch.

    padding: int, (ph, pw), 'valid' or 'same'.

    >>> import tensor as T
    >>> conv2d(T.ones((1, 2, 3, 3)), T.ones((4, 2, 3, 3)), padding=1).shape
    (1, 4, 3, 3)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@autocast_op("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution of (N, C, D, H, W) or (C, D, H, W) input, as PyTorch.

    >>> import tensor as T
    >>> conv3d(T.ones((1, 1, 3, 3, 3)), T.ones((1, 1, 2, 2, 2))).shape
    (1, 1, 2, 2, 2)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


@autocast_op("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) or (C, L) input, as PyTorch.

    >>> import tensor as T
    >>> conv1d(T.ones((1, 1, 5)), T.ones((1, 1, 3))).tolist()
    [[[3.0, 3.0, 3.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def _conv_transpose(x, weight, bias, stride, padding, output_padding, groups, dilation, nd, op):
    batched = check_input(x, nd, None, op)
    _weight_tensor(weight, op)
    if weight.ndim != nd + 2:
        raise ValueError(f"{op}: weight must be {nd + 2}-D (in_channels, out_channels/groups, "
                         f"*kernel), got shape {tuple(weight.shape)}")
    x = x if batched else T.expand_dims(x, 0)
    cin, og = weight.shape[:2]
    kernel = tuple(weight.shape[2:])
    stride, dilation = ntuple(stride, nd, "stride", op), ntuple(dilation, nd, "dilation", op)
    pad, opad = ntuple(padding, nd, "padding", op), ntuple(output_padding, nd, "output_padding", op)
    if groups < 1 or cin % groups or x.shape[1] != cin:
        raise ValueError(f"{op}: input of shape {tuple(x.shape)} has {x.shape[1]} channels, but "
                         f"weight of shape {tuple(weight.shape)} expects {cin} (divisible by "
                         f"groups={groups})")
    check_bias(bias, og * groups, weight, op)
    check_window(op, kernel, stride, dilation, tuple((p, p) for p in pad))
    if any(p >= max(s, d) for p, s, d in zip(opad, stride, dilation)) or min(pad + opad) < 0:
        raise ValueError(f"{op}: output_padding {opad} must be smaller than stride {stride} or "
                         f"dilation {dilation}, and paddings non-negative")
    size = tuple((n - 1) * s - 2 * p + d * (k - 1) + q + 1
                 for n, s, p, d, k, q in zip(x.shape[2:], stride, pad, dilation, kernel, opad))
    if min(size) < 1:
        raise ValueError(f"{op}: input of shape {tuple(x.shape)} gives an empty output {size}")
    if nd == 3:
        y = _conv_transpose3d(x, weight, stride, pad, opad, groups, dilation, size, op)
        y = y if bias is None else y + bias.reshape(1, -1, 1, 1, 1)
        return y if batched else y[0]
    pads = tuple((p, p) for p in pad)  # output_padding rows lie past every window: zeros
    x4, w4, s2, p2, d2 = _as_2d(x, weight, stride, pads, dilation, nd)
    n, _, h, w = x4.shape
    kh, kw = w4.shape[2:]
    xs = T.contiguous(T.permute(x4, (1, 0, 2, 3))).reshape(groups, cin // groups, n * h * w)
    cols = T.matmul(T.matrix_transpose(w4.reshape(groups, cin // groups, og * kh * kw)), xs)
    y = col2im(cols.reshape(og * groups, kh, kw, n, h, w), ((1,) + size)[-2:], s2, p2, d2)
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    y = y.reshape(y.shape[:2] + size)
    return y if batched else y[0]


def _conv_transpose3d(x, weight, stride, pad, opad, groups, dilation, size, op):
    """(N, C, D, H, W) with weight (C, O/groups, KD, KH, KW): one 2-D transposed convolution of
    the depth slices (batch and depth folded together) for all depth taps at once (the taps
    folded into the output channels), then each tap's slices placed at depths i * sd + k * dd
    (zeros between them) and summed; the output is that depth range from pd, size[0] long."""
    n, cin, d, h, w = x.shape
    og, kd = weight.shape[1], weight.shape[2]
    (sd, *s2), (pd, *p2), (qd, *q2), (dd, *d2) = stride, pad, opad, dilation
    x2 = T.reshape(T.swapaxes(x, 1, 2), (n * d, cin, h, w))
    w2 = T.reshape(weight, (cin, og * kd) + tuple(weight.shape[3:]))
    y = _conv_transpose(x2, w2, None, tuple(s2), tuple(p2), tuple(q2), groups, tuple(d2), 2, op)
    o, (oh, ow) = groups * og, y.shape[2:]
    y = T.permute(T.reshape(y, (n, d, o, kd, oh, ow)), (0, 2, 3, 1, 4, 5))  # (N, O, KD, D, ..)
    if sd > 1:      # i * sd: each depth slice followed by sd - 1 zero slices, for all taps
        gap = T.zeros((n, o, kd, d, sd - 1, oh, ow), dtype=y.dtype, device=y.device)
        y = T.reshape(T.concat([T.expand_dims(y, 4), gap], axis=4),
                      (n, o, kd, d * sd, oh, ow))[:, :, :, :(d - 1) * sd + 1]
    full = (d - 1) * sd + dd * (kd - 1) + 1 + qd     # every tap's depths, and output_padding
    out = None
    for k in range(kd):
        yk = T.pad(y[:, :, k], ((0, 0), (0, 0), (k * dd, full - k * dd - y.shape[3]), (0, 0),
                                (0, 0)))
        out = yk if out is None else out + yk
    return out[:, :, pd:pd + size[0]]


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 2-D convolution (the gradient of conv2d with respect to its input), as
    PyTorch: weight (in_channels, out_channels/groups, KH, KW).

    >>> import tensor as T
    >>> conv_transpose2d(T.ones((1, 1, 2, 2)), T.ones((1, 1, 2, 2)), stride=2).shape
    (1, 1, 4, 4)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           2, "conv_transpose2d")


@autocast_op("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 3-D convolution, as PyTorch: weight (in_channels, out_channels/groups, KD,
    KH, KW).

    >>> import tensor as T
    >>> conv_transpose3d(T.ones((1, 1, 2, 2, 2)), T.ones((1, 1, 2, 2, 2)), stride=2).shape
    (1, 1, 4, 4, 4)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           3, "conv_transpose3d")


@autocast_op("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 1-D convolution, as PyTorch.

    >>> import tensor as T
    >>> conv_transpose1d(T.ones((1, 1, 2)), T.ones((1, 1, 3))).tolist()
    [[[1.0, 2.0, 2.0, 1.0]]]
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           1, "conv_transpose1d")


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding windows of (N, C, H, W) as (N, C*KH*KW, L) (unbatched (C, H, W) as
    (C*KH*KW, L)), as torch.nn.functional.unfold.

    >>> import tensor as T
    >>> unfold(T.ones((2, 3, 4, 4)), 2).shape
    (2, 12, 9)
    """
    if not check_input(input, 2, None, "unfold"):
        return unfold(T.expand_dims(input, 0), kernel_size, dilation, padding, stride)[0]
    k = ntuple(kernel_size, 2, "kernel_size", "unfold")
    pads = tuple((p, p) for p in ntuple(padding, 2, "padding", "unfold"))
    s, d = ntuple(stride, 2, "stride", "unfold"), ntuple(dilation, 2, "dilation", "unfold")
    check_window("unfold", k, s, d, pads, input.shape)
    cols = im2col(input, k, s, pads, d, 0.0)
    c, kh, kw, n, oh, ow = cols.shape
    return T.permute(cols, (3, 0, 1, 2, 4, 5)).reshape(n, c * kh * kw, oh * ow)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum (N, C*KH*KW, L) windows back into (N, C, H, W) (unbatched (C*KH*KW, L) into
    (C, H, W)), as torch.nn.functional.fold.

    >>> import tensor as T
    >>> fold(T.ones((1, 4, 4)), (3, 3), 2).reshape(-1).tolist()
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]
    """
    if isinstance(input, Tensor) and input.ndim == 2:
        return fold(T.expand_dims(input, 0), output_size, kernel_size, dilation, padding,
                    stride)[0]
    size, k = ntuple(output_size, 2, "output_size", "fold"), ntuple(kernel_size, 2, "kernel_size", "fold")
    s, d = ntuple(stride, 2, "stride", "fold"), ntuple(dilation, 2, "dilation", "fold")
    p = ntuple(padding, 2, "padding", "fold")
    check_window("fold", k, s, d, tuple((q, q) for q in p), size)   # (the output's size)
    oh, ow = (_out_size(n, kk, ss, pp, pp, dd) for n, kk, ss, pp, dd in zip(size, k, s, p, d))
    if input.ndim != 3 or input.shape[1] % (k[0] * k[1]) or input.shape[2] != oh * ow:
        raise ValueError(f"fold: expected input of shape (N, C*{k[0]}*{k[1]}, {oh}*{ow}) or "
                         f"(C*{k[0]}*{k[1]}, {oh}*{ow}) for output_size {size}, got "
                         f"{tuple(input.shape)}")
    n, ckk = input.shape[:2]
    cols = T.permute(input.reshape(n, ckk // (k[0] * k[1]), k[0], k[1], oh, ow), (1, 2, 3, 0, 4, 5))
    return col2im(T.contiguous(cols), size, s, tuple((q, q) for q in p), d)

# ---------------------------------------------------------------- modules


_PAD_MODES = {"zeros": None, "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, output_padding=0) -> None:
        super().__init__()
        name, nd = type(self).__name__, self._nd
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {list(_PAD_MODES)}, "
                             f"got {padding_mode!r}")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f"{name}: only padding_mode='zeros' is supported")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size", name)
        self.stride = ntuple(stride, nd, "stride", name)
        self.dilation = ntuple(dilation, nd, "dilation", name)
        self.padding = padding if isinstance(padding, str) else ntuple(padding, nd, "padding", name)
        conv_padding(self.padding, self.kernel_size, self.stride, self.dilation, name)  # checks
        self.output_padding = ntuple(output_padding, nd, "output_padding", name)
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        weight_and_bias(self, shape, out_channels, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's: kaiming_uniform_(a=sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias."""
        from . import init
        init.default_layer_init_(self.weight, self.bias)

    def _check(self, x: Tensor) -> None:
        check_input(x, self._nd, self.in_channels, type(self).__name__)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding!r}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode!r}"
        return s


# the modules' convolutions under autocast as the functions' (conv2d...): the table's casts
# for every nd, groups and the transposed forms (before, only the paths that reach a matmul)
_AUTOCAST_CONV = {nd: autocast_op(f"conv{nd}d")(_conv) for nd in (1, 2, 3)}
_AUTOCAST_CONVT = {nd: autocast_op(f"conv_transpose{nd}d")(_conv_transpose) for nd in (1, 2, 3)}


class _Conv(_ConvNd):
    def forward(self, input: Tensor) -> Tensor:
        self._check(input)
        padding = self.padding
        mode = _PAD_MODES[self.padding_mode]
        if mode is not None:  # pad here with the mode, convolve unpadded
            pads = conv_padding(padding, self.kernel_size, self.stride, self.dilation,
                                type(self).__name__)
            input = T.pad(input, ((0, 0),) * (input.ndim - self._nd) + pads, mode=mode)
            padding = 0
        return _AUTOCAST_CONV[self._nd](input, self.weight, self.bias, self.stride, padding,
                                        self.dilation, self.groups, self._nd, type(self).__name__)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L): weight (C_out, C_in/groups, K), as torch.nn.Conv1d.

    >>> import tensor as T
    >>> Conv1d(2, 4, 3, padding=1)(T.ones((5, 2, 7), dtype=T.float32)).shape
    (5, 4, 7)
    """
    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W): weight (C_out, C_in/groups, KH, KW), as
    torch.nn.Conv2d (padding int, tuple, 'valid' or 'same'; padding_mode 'zeros', 'reflect',
    'replicate' or 'circular').

    >>> import tensor as T
    >>> Conv2d(1, 8, 3, stride=2)(T.ones((4, 1, 28, 28), dtype=T.float32)).shape
    (4, 8, 13, 13)
    """
    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W): weight (C_out, C_in/groups, KD, KH, KW), as
    torch.nn.Conv3d (the same padding forms and modes as Conv2d).

    >>> import tensor as T
    >>> Conv3d(2, 4, 3, padding=1)(T.ones((1, 2, 5, 6, 7), dtype=T.float32)).shape
    (1, 4, 5, 6, 7)
    """
    _nd = 3


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, "
                             f"got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        self._check(input)
        opad = self.output_padding
        if output_size is not None:
            opad = self._output_padding(input, output_size)
        return _AUTOCAST_CONVT[self._nd](input, self.weight, self.bias, self.stride, self.padding,
                                         opad, self.groups, self.dilation, self._nd,
                                         type(self).__name__)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """The output_padding that gives output_size (PyTorch's forward(x, output_size))."""
        size = tuple(output_size)[-self._nd:]
        res = []
        for n, want, s, p, d, k in zip(input.shape[-self._nd:], size, self.stride, self.padding,
                                       self.dilation, self.kernel_size):
            lo = (n - 1) * s - 2 * p + d * (k - 1) + 1
            if not lo <= want < lo + s:
                raise ValueError(f"{type(self).__name__}: output_size {tuple(output_size)} is "
                                 f"not reachable from input shape {tuple(input.shape)}")
            res.append(want - lo)
        return tuple(res)


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-D convolution: weight (C_in, C_out/groups, K), as torch.nn.ConvTranspose1d.

    >>> import tensor as T
    >>> ConvTranspose1d(2, 3, 3, stride=2)(T.ones((1, 2, 4), dtype=T.float32)).shape
    (1, 3, 9)
    """
    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution: weight (C_in, C_out/groups, KH, KW), as
    torch.nn.ConvTranspose2d; forward(x, output_size=None).

    >>> import tensor as T
    >>> ConvTranspose2d(8, 1, 4, stride=2, padding=1)(T.ones((2, 8, 7, 7), dtype=T.float32)).shape
    (2, 1, 14, 14)
    """
    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-D convolution: weight (C_in, C_out/groups, KD, KH, KW), as
    torch.nn.ConvTranspose3d; forward(x, output_size=None).

    >>> import tensor as T
    >>> ConvTranspose3d(2, 3, 3, stride=2, padding=1)(T.ones((1, 2, 3, 4, 5), dtype=T.float32)).shape
    (1, 3, 5, 7, 9)
    """
    _nd = 3
