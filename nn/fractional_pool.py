"""Fractional max pooling (Graham, "Fractional Max-Pooling", 2014): FractionalMaxPool2d /
FractionalMaxPool3d and F.fractional_max_pool2d / 3d, PyTorch's semantics.

Each (sample, channel) draws one number u in [0, 1) per pooled dimension (PyTorch's
`_random_samples`, shape (N, C, 2): width, height; or (N, C, 3): depth, height, width; drawn
from the default generator when not given); the windows of size k along a dimension of length n start at
    floor((i + u) * a) - floor(u * a),  a = (n - k) / (out - 1),  i = 0 .. out - 2,
and at n - k for the last one, so they cover the input with pseudo-random overlaps. The maximum
of each window is taken (NaN wins, as max_pool), with its flat index within the sample's plane
(volume) for return_indices. Composed from gathers and a max: differentiable in both modes, on
both devices.

>>> import tensor as T
>>> x = T.arange(16.0).reshape(1, 1, 4, 4)
>>> u = T.full((1, 1, 2), 0.5)
>>> fractional_max_pool2d(x, 2, output_size=2, _random_samples=u).tolist()
[[[[5.0, 7.0], [13.0, 15.0]]]]
"""
from __future__ import annotations

import math

import tensor as T
from tensor import Tensor

from .module import Module


def _sizes(value, d: int, what: str, op: str) -> tuple | None:
    if value is None:
        return None
    out = (value,) * d if isinstance(value, int | float) else tuple(value)
    if len(out) != d:
        raise ValueError(f"{op}: {what} must be one number or {d} of them, got {value!r}")
    return out


def _starts(u: Tensor, n: int, k: int, out: int) -> Tensor:
    """The windows' first positions, (..., out) int64, for samples u (...)."""
    if out == 1:
        return T.zeros(u.shape + (1,), dtype=T.int64, device=u.device) + (n - k)
    # in u's own precision, as PyTorch's kernels (a float32 product may round across an integer)
    a = T.asarray((n - k) / (out - 1), dtype=u.dtype, device=u.device)
    i = T.arange(out - 1, dtype=u.dtype, device=u.device)
    uu = u[..., None]
    first = (T.floor((i + uu) * a) - T.floor(uu * a)).astype(T.int64)
    last = T.full(u.shape + (1,), n - k, dtype=T.int64, device=u.device)
    return T.concatenate([first, last], axis=-1)


def _check_one_size(output_size, output_ratio, op: str) -> None:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op}: give output_size or output_ratio")
    if output_size is not None and output_ratio is not None:
        raise ValueError(f"{op}: give only one of output_size and output_ratio")


# which of a (sample, channel)'s numbers each pooled dimension uses: PyTorch's kernels give
# the 2-d width the first, the 3-d depth the first
_SAMPLE = {2: (1, 0), 3: (0, 1, 2)}


def _fractional_max_pool(x, kernel_size, output_size, output_ratio, return_indices, samples,
                         d: int, op: str):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (d + 1, d + 2):
        raise ValueError(f"{op}: expected a {d + 1}-D or {d + 2}-D input, got shape {x.shape}")
    batched = x.ndim == d + 2
    if not batched:
        x = T.expand_dims(x, 0)
    N, C, space = x.shape[0], x.shape[1], x.shape[2:]
    k = _sizes(kernel_size, d, "kernel_size", op)
    _check_one_size(output_size, output_ratio, op)
    if output_size is not None:
        out = tuple(int(o) for o in _sizes(output_size, d, "output_size", op))
    else:
        ratio = _sizes(output_ratio, d, "output_ratio", op)
        if not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{op}: output_ratio must be in (0, 1), got {output_ratio!r}")
        out = tuple(int(n * r) for n, r in zip(space, ratio))
    for n, kk, o in zip(space, k, out):
        if kk < 1 or o < 1 or o + kk - 1 > n:
            raise ValueError(f"{op}: output size {out} with kernel {k} does not fit an input of size "
                             f"{tuple(space)} (output + kernel - 1 must be <= input)")
    if samples is None:
        samples = T.rand(N, C, d, dtype=x.dtype if x.dtype.kind == "f" else T.float32,
                         device=x.device)
    elif tuple(samples.shape) != (N, C, d):
        raise ValueError(f"{op}: _random_samples must have shape {(N, C, d)}, got {samples.shape}")
    # gather each pooled dimension's windows in turn: (N, C, ..., out * k, ...)
    y, flat = x, None
    for j in range(d):
        axis = 2 + j
        st = _starts(samples[:, :, _SAMPLE[d][j]], space[j], k[j], out[j])        # (N, C, out)
        idx = (st[..., None] + T.arange(k[j], device=x.device)).reshape(N, C, out[j] * k[j])
        shape = [N, C] + [1] * d
        shape[axis] = out[j] * k[j]
        y = T.take_along_axis(y, idx.reshape(shape), axis=axis)
        if return_indices:   # each window element's flat position in its plane (volume)
            part = (idx * math.prod(space[j + 1:])).reshape(shape)
            flat = part if flat is None else flat + part
    # (N, C, o0, k0, o1, k1, ...) -> windows last
    split = [N, C] + [v for o, kk in zip(out, k) for v in (o, kk)]
    order = [0, 1] + [2 + 2 * j for j in range(d)] + [3 + 2 * j for j in range(d)]
    win = T.permute_dims(y.reshape(split), order).reshape((N, C) + out + (math.prod(k),))
    res = T.max(win, axis=-1)
    if not return_indices:
        return res if batched else res[0]
    flat = T.broadcast_to(flat, y.shape)
    where = T.argmax(win, axis=-1, keepdims=True)
    fwin = T.permute_dims(flat.reshape(split), order).reshape((N, C) + out + (math.prod(k),))
    ind = T.take_along_axis(fwin, where, axis=-1)[..., 0]
    return (res, ind) if batched else (res[0], ind[0])


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Fractional max pooling over the last two dimensions of (N, C, H, W) or (C, H, W)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2, "fractional_max_pool2d")


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Fractional max pooling over the last three dimensions of (N, C, D, H, W) or (C, D, H, W)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3, "fractional_max_pool3d")


def fractional_max_pool2d_with_indices(*args, **kwargs):
    kwargs["return_indices"] = True
    return fractional_max_pool2d(*args, **kwargs)


def fractional_max_pool3d_with_indices(*args, **kwargs):
    kwargs["return_indices"] = True
    return fractional_max_pool3d(*args, **kwargs)


class _FractionalMaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        _check_one_size(output_size, output_ratio, type(self).__name__)
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input: Tensor):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, _random_samples=self._random_samples)

    def extra_repr(self) -> str:
        size = (f"output_size={self.output_size}" if self.output_size is not None
                else f"output_ratio={self.output_ratio}")
        return f"kernel_size={self.kernel_size}, {size}"


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) or (C, H, W) (F.fractional_max_pool2d)."""
    _fn = staticmethod(fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, D, H, W) or (C, D, H, W) (F.fractional_max_pool3d)."""
    _fn = staticmethod(fractional_max_pool3d)
