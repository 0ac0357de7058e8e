"""Sampling at coordinates, as torch.nn.functional: grid_sample and affine_grid.

grid_sample reads input (N, C, H, W) (or (N, C, D, H, W)) at the points of a grid (N, H', W', 2)
(or (N, D', H', W', 3)) of (x, y[, z]) coordinates normalised to [-1, 1], with bilinear
(trilinear for 5-D), nearest or bicubic interpolation and zeros, border or reflection padding,
PyTorch's align_corners convention. Each interpolation tap is one gather of the flattened
input (take_along_axis) times its weight, so autograd differentiates with respect to both the
input and the grid, as PyTorch does. affine_grid makes the grid of an affine map theta.

>>> import tensor as T
>>> img = T.arange(4.0).reshape(1, 1, 2, 2)
>>> identity = T.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> grid_sample(img, affine_grid(identity, (1, 1, 2, 2), align_corners=False),
...             align_corners=False).tolist()
[[[[0.0, 1.0], [2.0, 3.0]]]]
"""
from __future__ import annotations

import itertools
import math

import tensor as T
from tensor import Tensor
from tensor.amp import autocast_op

from . import _grid_fused

_CUBIC_A = -0.75
_MODES, _PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def _unnormalize(g: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixel coordinates: the corner pixels' centres (align_corners) or edges."""
    return (g + 1) * ((size - 1) / 2) if align_corners else ((g + 1) * size - 1) / 2


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """x reflected into [twice_low / 2, twice_high / 2] (mirror at both ends, repeatedly)."""
    if twice_low == twice_high:
        return x * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    d = T.abs(x - lo)
    extra = T.remainder(d, span)
    even = T.remainder(T.floor(d / span), 2) == 0
    return T.where(even, extra + lo, span - extra + lo)


def _pad_coords(x: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Coordinates that border / reflection padding map back inside [0, size - 1]."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    # PyTorch's clip_coordinates sends NaN (and the NaN that reflecting +-inf gives) to 0
    return T.where(T.isnan(x), 0.0, T.clip(x, 0, size - 1))


def _cubic(t: Tensor):
    """The cubic convolution weights (A = -0.75) of taps at -1, 0, 1, 2 from a point at t."""
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _sample(flat: Tensor, coords, size, mode: str, padding_mode: str, align: bool) -> Tensor:
    """flat (N, C, prod(size)) at the pixel coordinates `coords` (outermost axis first, each
    (N, 1, P)), per op: one gather per interpolation tap."""
    nd = len(size)
    if mode == "nearest":
        # weight 1 with a zero derivative, so grid.grad is zeros (as PyTorch), not None
        taps = [[(T.round(x), T.where(T.isfinite(x), x, 0.0) * 0.0 + 1.0)] for x in coords]
    elif mode == "bilinear":
        taps = []
        for x in coords:
            lo = T.floor(x)
            t = x - lo
            taps.append([(lo, 1 - t), (lo + 1, t)])
    else:
        taps = []
        for x, s in zip(coords, size):
            lo = T.floor(x)
            taps.append([(_pad_coords(lo + k, s, padding_mode, align), w)
                         for k, w in zip((-1, 0, 1, 2), _cubic(x - lo))])
    strides = [1] * nd
    for a in range(nd - 2, -1, -1):
        strides[a] = strides[a + 1] * size[a + 1]
    y = None
    for corner in itertools.product(*taps):
        index, weight, inside = None, None, None
        for (pos, w), s, stride in zip(corner, size, strides):
            ok = (pos >= 0) & (pos <= s - 1)        # False at NaN: never cast NaN to an index
            inside = ok if inside is None else inside & ok
            k = T.where(ok, pos, 0.0).astype(T.int64) * stride
            index = k if index is None else index + k
            weight = w if weight is None else weight * w
        # the value, not the weight, is masked: a NaN weight (a non-finite coordinate) gives
        # NaN in zeros padding, as PyTorch
        part = T.where(inside, T.take_along_axis(flat, index, axis=2), 0.0) * weight
        y = part if y is None else y + part
    return y


def _check(input, grid, mode: str, padding_mode: str) -> int:
    op = "grid_sample"
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise TypeError(f"{op}: input and grid must be tensors")
    nd = input.ndim - 2
    if nd not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != nd or \
            grid.shape[0] != input.shape[0]:
        raise ValueError(f"{op}: expected input (N, C, H, W) with grid (N, H', W', 2), or input "
                         f"(N, C, D, H, W) with grid (N, D', H', W', 3); got input "
                         f"{tuple(input.shape)} and grid {tuple(grid.shape)}")
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {_MODES}, got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"{op}: padding_mode must be one of {_PADDINGS}, got {padding_mode!r}")
    if mode == "bicubic" and nd == 3:
        raise ValueError(f"{op}: mode 'bicubic' takes 4-D input only, got {tuple(input.shape)}")
    if input.dtype.kind != "f" or grid.dtype != input.dtype:
        raise TypeError(f"{op}: input and grid must have one floating dtype, got "
                        f"{input.dtype.name} and {grid.dtype.name}")
    if input.device != grid.device:
        raise ValueError(f"{op}: input and grid are on different devices ({input.device} and "
                         f"{grid.device})")
    if min(input.shape[2:]) < 1:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has an empty spatial size")
    return nd


@autocast_op("grid_sample")   # float32 in a region (a bf16 input meets a float32 grid there)
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """input sampled at grid's normalised coordinates (x first: grid[..., 0] indexes width),
    as torch.nn.functional.grid_sample; the output is (N, C, H', W') (or (N, C, D', H', W'))."""
    nd = _check(input, grid, mode, padding_mode)
    align = bool(align_corners)
    n, c, *size = input.shape
    out = tuple(grid.shape[1:-1])
    flat = T.reshape(input, (n, c, math.prod(size)))    # explicit sizes: n may be 0
    g = T.reshape(grid, (n, 1, math.prod(out), nd))
    # pixel coordinates per spatial axis, outermost first (grid's last entry is the first axis)
    coords = [_unnormalize(g[..., nd - 1 - a], size[a], align) for a in range(nd)]
    if mode != "bicubic":
        coords = [_pad_coords(x, s, padding_mode, align) for x, s in zip(coords, size)]
    p = math.prod(out)
    if nd == 2 and mode != "bicubic" and _grid_fused.usable(input):
        def reference(inp, ix, iy):
            return _sample(T.reshape(inp, flat.shape), [T.reshape(iy, (n, 1, p)),
                           T.reshape(ix, (n, 1, p))], size, mode, padding_mode, align)
        y = _grid_fused.sample2d(input, T.reshape(coords[1], (n, p)), T.reshape(coords[0], (n, p)),
                                 mode == "nearest", reference)
    else:
        y = _sample(flat, coords, size, mode, padding_mode, align)
    return T.reshape(y, (n, c) + out)


def _base(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """The normalised coordinates of steps pixel centres along one axis."""
    if steps <= 1:
        return T.zeros((steps,), dtype=like.dtype, device=like.device)
    v = T.linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    return v if align_corners else v * ((steps - 1) / steps)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta (N, 2, 3)
    (or (N, 3, 4)) for an output of size (N, C, H, W) (or (N, C, D, H, W)), as
    torch.nn.functional.affine_grid: grid[n, i, j] = theta[n] @ (x_j, y_i, 1)."""
    op = "affine_grid"
    size = tuple(int(s) for s in size)
    if not isinstance(theta, Tensor) or theta.dtype.kind != "f":
        raise TypeError(f"{op}: theta must be a floating-point tensor")
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(f"{op}: expected theta of shape (N, 2, 3) with size (N, C, H, W), or "
                         f"(N, 3, 4) with size (N, C, D, H, W); got theta {tuple(theta.shape)} "
                         f"and size {size}")
    if min(size) < 1:
        raise ValueError(f"{op}: size must be positive, got {size}")
    align = bool(align_corners)
    spatial = size[2:]
    axes = [_base(s, align, theta) for s in spatial]          # outermost axis first
    mesh = T.meshgrid(*axes, indexing="ij")
    ones = T.ones(spatial, dtype=theta.dtype, device=theta.device)
    base = T.stack([mesh[a] for a in range(nd - 1, -1, -1)] + [ones], axis=-1)   # x first
    base = T.reshape(base, (1, -1, nd + 1))
    grid = T.matmul(base, T.swapaxes(theta, 1, 2))            # (N, prod(spatial), nd)
    return T.reshape(grid, (size[0],) + spatial + (nd,))


__all__ = ["grid_sample", "affine_grid"]
