"""SyncBatchNorm, as torch.nn.SyncBatchNorm: batch normalization whose training statistics are
those of the whole batch split over the ranks of a process group (tensor.distributed), and
convert_sync_batchnorm, which swaps a model's BatchNorm*d layers for it.

In training with a group of more than one rank, each channel's mean and (biased) variance are
all-reduced over the ranks (two differentiable all-reduces: the sums, then the centred sums of
squares), so every rank normalizes with the same statistics and the backward pass carries the
gradient of the sum of the ranks' losses through them, as PyTorch's. Otherwise (evaluation, no
process group, one rank) it is a BatchNorm.

>>> import nn
>>> m = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3)))
>>> m
Sequential(
  (0): SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
)
"""
from __future__ import annotations

import tensor as T
from autograd import no_grad
from tensor import Tensor

from . import _functional as F
from .layers_extra import _InstanceNorm
from .module import Module
from .normalization import _BatchNorm, batch_norm


def _group_size(group) -> int:
    from tensor import distributed as dist
    if not dist.is_initialized():
        return 1
    return dist.get_world_size(group)


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, *) inputs with statistics synchronised over `process_group`
    (None: the world group) in training."""

    _dims = tuple(range(2, 33))   # any (N, C, *) input
    _layout = "(N, {c}, *)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2-d input (N, C, *), got "
                             f"{tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise ValueError(f"SyncBatchNorm: expected input of shape (N, {self.num_features}, "
                             f"*), got {tuple(input.shape)}")
        if not self.training or _group_size(self.process_group) == 1:
            return super().forward(input)
        return self._synced_forward(input)

    def _synced_forward(self, input: Tensor) -> Tensor:
        from tensor.distributed.nn import functional as DF
        c, group = self.num_features, self.process_group
        axes = (0,) + tuple(range(2, input.ndim))
        local = input.numel() // max(c, 1)
        count = DF.all_reduce(T.full((1,), float(local), dtype=input.dtype, device=input.device),
                              group=group)
        total = float(count.item())
        if total <= 1:
            raise ValueError(f"SyncBatchNorm: expected more than 1 value per channel over the "
                             f"group when training, got {int(total)}")
        xs = F.wide_stats(input)   # (float32 statistics of 16-bit inputs, as batch_norm's)
        mean = DF.all_reduce(T.sum(xs, axis=axes), group=group) / total
        shape = (1, c) + (1,) * (input.ndim - 2)
        centred = xs - mean.reshape(shape)
        var = DF.all_reduce(T.sum(centred * centred, axis=axes), group=group) / total
        if self.track_running_stats and self.running_mean is not None:
            f = self._momentum_factor()
            with no_grad():
                self.running_mean.copy_((1 - f) * self.running_mean + f * mean.detach())
                unbiased = var.detach() * (total / (total - 1))
                self.running_var.copy_((1 - f) * self.running_var + f * unbiased)
        # normalized with the group's statistics as batch_norm normalizes with given ones
        return batch_norm(input, mean, var, self.weight, self.bias, False, 0.0, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """`module` with every BatchNorm1d/2d/3d (not the instance norms) replaced by a
        SyncBatchNorm sharing its parameters and holding its statistics and mode (module
        itself if it is not one: replaced in place below it), as PyTorch's."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, (_InstanceNorm, cls)):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            with no_grad():
                for name in ("weight", "bias"):
                    if name in module._parameters:
                        out._parameters[name] = module._parameters[name]
                for name in ("running_mean", "running_var", "num_batches_tracked"):
                    out._buffers[name] = module._buffers.get(name)
            out.train(module.training)
        for name, child in module._modules.items():
            if child is not None:
                new = cls.convert_sync_batchnorm(child, process_group)
                if new is not child:
                    out._modules[name] = new
        return out
