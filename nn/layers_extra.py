"""More torch.nn layers: RMSNorm, InstanceNorm1d/2d, Upsample (and UpsamplingNearest2d,
UpsamplingBilinear2d), PixelShuffle / PixelUnshuffle, Unflatten, Dropout1d / Dropout2d /
AlphaDropout, Fold / Unfold, AdaptiveMaxPool1d/2d and Bilinear, over the functions of
nn/_functional_layers.py (and nn/conv.py's fold / unfold).

>>> import tensor as T
>>> m = Upsample(scale_factor=2, mode="nearest")
>>> m(T.tensor([[[1.0, 2.0]]])).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
>>> PixelShuffle(2)(T.ones((1, 8, 3, 3))).shape
(1, 2, 6, 6)
"""
from __future__ import annotations

import math
import numbers
import warnings

import tensor as T
from tensor import Tensor

from . import _functional_layers as FL
from . import init
from .conv import fold, unfold
from .module import Module, Parameter, weight_and_bias
from .normalization import _BatchNorm

# ---------------------------------------------------------------- normalization


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing normalized_shape, as torch.nn.RMSNorm:
    y = x / sqrt(mean(x**2) + eps) * weight (weight ones; eps None: finfo(x.dtype).eps).

    >>> import tensor as T
    >>> RMSNorm(2, eps=0.0)(T.tensor([[1.0, -1.0]])).tolist()
    [[1.0, -1.0]]
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = FL._norm_shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(T.ones(self.normalized_shape,
                                           dtype=T.float32 if dtype is None else dtype,
                                           device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        try:
            return FL.rms_norm(input, self.normalized_shape, self.weight, self.eps)
        except ValueError as e:
            raise ValueError(str(e).replace("rms_norm:", "RMSNorm:", 1)) from None

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _InstanceNorm(_BatchNorm):
    _nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        name, nd = type(self).__name__, self._nd
        if input.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"{name}: expected {nd + 1}-d (unbatched) or {nd + 2}-d input, got "
                             f"shape {tuple(input.shape)}")
        unbatched = input.ndim == nd + 1
        x = input.reshape((1,) + tuple(input.shape)) if unbatched else input
        if x.shape[1] != self.num_features:
            if self.affine:
                raise ValueError(f"{name}: expected input's size at dim {1 - unbatched} to "
                                 f"match num_features ({self.num_features}), got "
                                 f"{tuple(input.shape)}")
            warnings.warn(f"{name}: input's size at dim {1 - unbatched} does not match "
                          f"num_features ({self.num_features}); the affine=False layer normalizes "
                          "it anyway", UserWarning, stacklevel=2)
        stats = self.running_mean is not None and (x.shape[1] == self.num_features)
        try:
            y = FL.instance_norm(x, self.running_mean if stats else None,
                                 self.running_var if stats else None, self.weight, self.bias,
                                 self.training or not self.track_running_stats,
                                 0.0 if self.momentum is None else self.momentum, self.eps)
        except ValueError as e:
            raise ValueError(str(e).replace("instance_norm:", f"{name}:", 1)) from None
        return y[0] if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L) input, as torch.nn.InstanceNorm1d
    (affine and track_running_stats default False).

    >>> import tensor as T
    >>> InstanceNorm1d(1, eps=0.0)(T.tensor([[0.0, 2.0]])).tolist()
    [[-1.0, 1.0]]
    """
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W) input, as torch.nn.InstanceNorm2d.

    >>> import tensor as T
    >>> InstanceNorm2d(3)(T.ones((2, 3, 4, 4))).shape
    (2, 3, 4, 4)
    """
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or (C, D, H, W) input, as
    torch.nn.InstanceNorm3d.

    >>> import tensor as T
    >>> InstanceNorm3d(3)(T.ones((2, 3, 2, 4, 4))).shape
    (2, 3, 2, 4, 4)
    """
    _nd = 3

# ---------------------------------------------------------------- resampling


class Upsample(Module):
    """Resize (N, C, *spatial) input, as torch.nn.Upsample (see nn.functional.interpolate).

    >>> import tensor as T
    >>> Upsample(size=3, mode="linear", align_corners=True)(T.tensor([[[0.0, 2.0]]])).tolist()
    [[[0.0, 1.0, 2.0]]]
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size, self.mode = size, mode
        self.scale_factor = (tuple(float(f) for f in scale_factor)
                             if isinstance(scale_factor, (list, tuple))
                             else None if scale_factor is None else float(scale_factor))
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return FL.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                              recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W), as torch.nn.UpsamplingNearest2d.

    >>> import tensor as T
    >>> UpsamplingNearest2d(scale_factor=2)(T.ones((1, 1, 2, 2))).shape
    (1, 1, 4, 4)
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling with align_corners=True, as torch.nn.UpsamplingBilinear2d.

    >>> import tensor as T
    >>> UpsamplingBilinear2d(size=(1, 3))(T.tensor([[[[0.0, 4.0]]]])).tolist()
    [[[[0.0, 2.0, 4.0]]]]
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r), as torch.nn.PixelShuffle.

    >>> import tensor as T
    >>> PixelShuffle(3)(T.ones((9, 2, 2))).shape
    (1, 6, 6)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = FL._factor(upscale_factor, "PixelShuffle", "upscale_factor")

    def forward(self, input: Tensor) -> Tensor:
        return FL.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), as torch.nn.PixelUnshuffle.

    >>> import tensor as T
    >>> PixelUnshuffle(2)(T.ones((1, 1, 4, 4))).shape
    (1, 4, 2, 2)
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = FL._factor(downscale_factor, "PixelUnshuffle",
                                           "downscale_factor")

    def forward(self, input: Tensor) -> Tensor:
        return FL.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"

# ---------------------------------------------------------------- shapes


class Unflatten(Module):
    """Expand dim into unflattened_size (which may hold one -1), as torch.nn.Unflatten.

    >>> import tensor as T
    >>> Unflatten(1, (2, -1))(T.ones((3, 6))).shape
    (3, 2, 3)
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if not isinstance(dim, numbers.Integral):
            raise TypeError(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (list, tuple)) or not all(
                isinstance(s, numbers.Integral) for s in unflattened_size):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got "
                            f"{unflattened_size!r}")
        self.dim, self.unflattened_size = int(dim), tuple(int(s) for s in unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        nd = input.ndim
        d = self.dim + nd if self.dim < 0 else self.dim
        if not 0 <= d < nd:
            raise IndexError(f"Unflatten: dim {self.dim} is out of range for input shape "
                             f"{tuple(input.shape)}")
        sizes, n = self.unflattened_size, input.shape[d]
        known = math.prod(s for s in sizes if s != -1)
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes) or (
                n != known if -1 not in sizes else known == 0 or n % known):
            raise ValueError(f"Unflatten: unflattened_size {sizes} does not match the size "
                             f"{n} of dim {self.dim} of input shape {tuple(input.shape)}")
        return input.reshape(tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

# ---------------------------------------------------------------- channel dropout


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = FL._check_p(p, type(self).__name__), inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) input while training, as torch.nn.Dropout1d.

    >>> import tensor as T
    >>> Dropout1d(0.5).eval()(T.ones((2, 3))).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    _fn = staticmethod(FL.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input while training, as
    torch.nn.Dropout2d.

    >>> import tensor as T
    >>> Dropout2d(0.5).eval()(T.ones((1, 2, 2, 2))).shape
    (1, 2, 2, 2)
    """
    _fn = staticmethod(FL.dropout2d)

class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks (keeps zero mean, unit variance), as torch.nn.AlphaDropout.

    >>> import tensor as T
    >>> AlphaDropout(0.2).eval()(T.ones(2)).tolist()
    [1.0, 1.0]
    """
    _fn = staticmethod(FL.alpha_dropout)

# ---------------------------------------------------------------- fold / unfold


class Unfold(Module):
    """Sliding windows of (N, C, H, W) or (C, H, W) as (N, C*KH*KW, L), as torch.nn.Unfold.

    >>> import tensor as T
    >>> Unfold(2)(T.ones((3, 4, 4))).shape
    (12, 9)
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim == 3:
            return unfold(input.reshape((1,) + tuple(input.shape)), self.kernel_size,
                          self.dilation, self.padding, self.stride)[0]
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum (N, C*KH*KW, L) or (C*KH*KW, L) windows into (N, C, H, W), as torch.nn.Fold.

    >>> import tensor as T
    >>> Fold((3, 3), 2)(T.ones((4, 4))).shape
    (1, 3, 3)
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        args = (self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
        if input.ndim == 2:
            return fold(input.reshape((1,) + tuple(input.shape)), *args)[0]
        return fold(input, *args)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")

# ---------------------------------------------------------------- pooling, bilinear


class AdaptiveMaxPool2d(Module):
    """Adaptive max pooling to output_size, as torch.nn.AdaptiveMaxPool2d.

    >>> import tensor as T
    >>> AdaptiveMaxPool2d((1, 2))(T.arange(4.0).reshape(1, 2, 2)).tolist()
    [[[2.0, 3.0]]]
    """
    _fn = staticmethod(FL.adaptive_max_pool2d)

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Adaptive max pooling of (N, C, L) or (C, L), as torch.nn.AdaptiveMaxPool1d.

    >>> import tensor as T
    >>> AdaptiveMaxPool1d(1)(T.tensor([[1.0, 5.0, 2.0]])).tolist()
    [[5.0]]
    """
    _fn = staticmethod(FL.adaptive_max_pool1d)


class Bilinear(Module):
    """y = x1^T A x2 + b over the last dims, as torch.nn.Bilinear: weight (out, in1, in2) and
    bias (out,) drawn from U(-1/sqrt(in1), 1/sqrt(in1)).

    >>> import tensor as T
    >>> Bilinear(2, 3, 4)(T.ones((5, 2)), T.ones((5, 3))).shape
    (5, 4)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if min(in1_features, in2_features, out_features) < 0:
            raise ValueError(f"Bilinear: features must be non-negative, got ({in1_features}, "
                             f"{in2_features}, {out_features})")
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        weight_and_bias(self, (out_features, in1_features, in2_features), out_features, bias,
                        dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in1_features) if self.in1_features else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return FL.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["RMSNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "Unflatten", "Dropout1d",
           "Dropout2d", "AlphaDropout", "Unfold", "Fold", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "Bilinear"]
