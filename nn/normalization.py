"""Normalization: batch_norm, group_norm and the BatchNorm1d, BatchNorm2d, GroupNorm and
LayerNorm modules, as PyTorch's.

Batch and group norm are compositions of public ops (mean, var, one fused scale-and-shift per
element), so autograd differentiates them; layer norm uses nn.functional's fused kernel.

>>> import tensor as T
>>> bn = BatchNorm1d(2)
>>> y = bn(T.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=T.float32))
>>> [round(v, 4) for v in y[0].tolist()], [round(v, 4) for v in bn.running_var.tolist()]
([-1.0, -1.0], [1.1, 1.7])
"""
from __future__ import annotations

import numbers

import tensor as T
from autograd import no_grad
from tensor._tensor import Tensor
from tensor.amp import autocast_op

from . import _functional as F
from . import init
from .module import Module, Parameter


def _bcast(p: Tensor, ndim: int) -> Tensor:
    """A per-channel (C,) tensor shaped (1, C, 1, ...) to broadcast over (N, C, *)."""
    return p.reshape((1, -1) + (1,) * (ndim - 2))


def _check_param(p, c: int, name: str, op: str) -> None:
    if p is not None and tuple(p.shape) != (c,):
        raise ValueError(f"{op}: {name} must have shape ({c},) for input with {c} channels, "
                         f"got {tuple(p.shape)}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel of (N, C, *) input, as torch.nn.functional.batch_norm.

    training: normalize with the batch statistics (biased variance) and, when running stats are
    given, update them in place: r = (1 - momentum) * r + momentum * stat, with the unbiased
    variance for running_var. Otherwise normalize with the running statistics.

    >>> import tensor as T
    >>> x = T.tensor([[0.0], [2.0]])
    >>> batch_norm(x, None, None, training=True, eps=0.0).tolist()
    [[-1.0], [1.0]]
    """
    op = "batch_norm"
    if input.ndim < 2:
        raise ValueError(f"{op}: expected input of shape (N, C, *), got {tuple(input.shape)}")
    c = input.shape[1]
    for name, p in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_param(p, c, name, op)
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        n = input.numel() // max(c, 1)
        if n <= 1:
            raise ValueError(f"{op}: expected more than 1 value per channel when training, got "
                             f"input of shape {tuple(input.shape)}")
        xs = F.wide_stats(input)   # float32 statistics of 16-bit inputs (a float16 var overflows)
        mean = T.mean(xs, axis=axes)
        var = T.var(xs, axis=axes)
        with no_grad():
            if running_mean is not None:
                running_mean.copy_(running_mean * (1 - momentum) + mean.detach() * momentum)
            if running_var is not None:
                unbiased = var.detach() * (n / (n - 1))
                running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: running_mean and running_var are required when not "
                             "training")
        mean, var = running_mean, running_var
    scale = T.reciprocal(T.sqrt(var + eps))
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    if input.dtype in (T.float16, T.bfloat16) and scale.dtype is T.float32:
        # in float32, rounded once: scale and shift rounded to 16 bits first lost digits
        y = F.wide_stats(input) * _bcast(scale, input.ndim) + _bcast(shift, input.ndim)
        return y.astype(input.dtype)
    return input * _bcast(scale.astype(input.dtype, copy=False), input.ndim) \
        + _bcast(shift.astype(input.dtype, copy=False), input.ndim)


@autocast_op("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize (N, C, *) input over each group of C/num_groups channels (and all spatial
    positions), then scale and shift per channel, as torch.nn.functional.group_norm.

    >>> import tensor as T
    >>> group_norm(T.tensor([[1.0, 3.0]]), 1, eps=0.0).tolist()
    [[-1.0, 1.0]]
    """
    op = "group_norm"
    if input.ndim < 2:
        raise ValueError(f"{op}: expected input of shape (N, C, *), got {tuple(input.shape)}")
    n, c = input.shape[:2]
    if num_groups < 1 or c % num_groups:
        raise ValueError(f"{op}: the {c} channels of input shape {tuple(input.shape)} must be "
                         f"divisible by num_groups ({num_groups})")
    _check_param(weight, c, "weight", op)
    _check_param(bias, c, "bias", op)
    per = c // num_groups
    for k in input.shape[2:]:
        per *= k
    x = F.wide_stats(input).reshape(n, num_groups, per)   # (-1 cannot be inferred when n is 0)
    mean = T.mean(x, axis=2, keepdims=True)
    var = T.var(x, axis=2, keepdims=True)   # (in float32 for 16-bit inputs, cast back after)
    y = ((x - mean) * T.reciprocal(T.sqrt(var + eps))).reshape(input.shape)
    y = y.astype(input.dtype, copy=False)
    if weight is not None:
        y = y * _bcast(weight, input.ndim)
    if bias is not None:
        y = y + _bcast(bias, input.ndim)
    return y

# ---------------------------------------------------------------- modules


def _affine_params(m: Module, affine: bool, bias: bool, n: int, dtype, device) -> None:
    """m.weight (ones) and m.bias (zeros) of size (or shape) n when affine (bias only with `bias`, the
    keyword PyTorch 2.x added), else both registered as None."""
    m.register_parameter("weight", None)
    m.register_parameter("bias", None)
    if affine:
        m.weight = Parameter(T.ones(n, dtype=dtype, device=device))
        if bias:
            m.bias = Parameter(T.zeros(n, dtype=dtype, device=device))


class _BatchNorm(Module):
    _dims: tuple = ()  # accepted input ranks
    _layout = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = T.float32 if dtype is None else dtype
        _affine_params(self, affine, bias, num_features, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", T.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", T.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", T.zeros((), dtype=T.int64, device=device))
        else:
            for b in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(b, None)

    _version = 2   # PyTorch's: version 2 added num_batches_tracked

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """A checkpoint older than num_batches_tracked (version < 2, or no version) lacks it:
        keep the module's count instead of reporting it missing, as PyTorch's."""
        key = prefix + "num_batches_tracked"
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.num_batches_tracked is not None \
                and key not in state_dict:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.fill_(0)
                self.running_var.fill_(1)
                self.num_batches_tracked.fill_(0)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        if input.ndim not in self._dims or input.shape[1] != self.num_features:
            raise ValueError(f"{name}: expected input of shape "
                             f"{self._layout.format(c=self.num_features)}, got {tuple(input.shape)}")
        factor = self._momentum_factor()
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        try:
            return batch_norm(input, self.running_mean if track else None,
                              self.running_var if track else None, self.weight, self.bias,
                              use_batch, factor, self.eps)
        except ValueError as e:
            raise ValueError(str(e).replace("batch_norm:", f"{name}:", 1)) from None

    def _momentum_factor(self) -> float:
        """The running statistics' update factor of this forward: momentum, or with momentum
        None a cumulative average (1 / the batches counted); a training forward that tracks
        statistics counts its batch in num_batches_tracked first."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            if self.momentum is None:
                factor = 1.0 / int(self.num_batches_tracked.item())
        return factor

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input, as torch.nn.BatchNorm1d: buffers
    running_mean, running_var, num_batches_tracked; eval() normalizes with the running stats.

    >>> import tensor as T
    >>> BatchNorm1d(3)(T.ones((4, 3, 5), dtype=T.float32)).shape
    (4, 3, 5)
    """
    _dims = (2, 3)
    _layout = "(N, {c}) or (N, {c}, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input, as torch.nn.BatchNorm2d.

    >>> import tensor as T
    >>> m = BatchNorm2d(3).eval()
    >>> m(T.ones((2, 3, 4, 4), dtype=T.float32)).shape
    (2, 3, 4, 4)
    """
    _dims = (4,)
    _layout = "(N, {c}, H, W)"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) input, as torch.nn.BatchNorm3d.

    >>> import tensor as T
    >>> BatchNorm3d(3)(T.ones((2, 3, 2, 4, 4), dtype=T.float32)).shape
    (2, 3, 2, 4, 4)
    """
    _dims = (5,)
    _layout = "(N, {c}, D, H, W)"


class GroupNorm(Module):
    """Group normalization of (N, C, *) input, as torch.nn.GroupNorm (weight ones, bias zeros).

    >>> import tensor as T
    >>> GroupNorm(2, 4)(T.ones((3, 4, 5), dtype=T.float32)).shape
    (3, 4, 5)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        _affine_params(self, affine, bias, num_channels, T.float32 if dtype is None else dtype,
                       device)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: expected input of shape (N, {self.num_channels}, *), "
                             f"got {tuple(input.shape)}")
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LayerNorm(Module):
    """Layer normalization over the trailing normalized_shape, as torch.nn.LayerNorm.

    >>> import tensor as T
    >>> LayerNorm(4)(T.ones((2, 4), dtype=T.float32)).tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = (int(normalized_shape),) if isinstance(
            normalized_shape, numbers.Integral) else tuple(int(n) for n in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_params(self, elementwise_affine, bias, self.normalized_shape,
                       T.float32 if dtype is None else dtype, device)

    def forward(self, input: Tensor) -> Tensor:
        ns = self.normalized_shape
        if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
            raise ValueError(f"LayerNorm: expected input of shape (*, {', '.join(map(str, ns))}), "
                             f"got {tuple(input.shape)}")
        return F.layer_norm(input, ns, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
