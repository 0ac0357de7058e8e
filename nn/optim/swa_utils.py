"""Weight averaging, as torch.optim.swa_utils: AveragedModel (stochastic weight averaging, or
an exponential moving average of a model's weights with get_ema_multi_avg_fn), SWALR (anneal
each group's lr to a fixed swa_lr) and update_bn (recompute batch-norm statistics for averaged
weights).

>>> import nn, tensor as T
>>> from nn.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
>>> model = nn.Linear(1, 1, bias=False)
>>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
>>> from autograd import no_grad
>>> with no_grad():
...     _ = model.weight.fill_(1.0); ema.update_parameters(model)   # first: a copy
...     _ = model.weight.fill_(3.0); ema.update_parameters(model)
>>> ema.module.weight.tolist(), int(ema.n_averaged.item())
([[2.0]], 2)
"""
from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

import tensor as T
from autograd import no_grad

from ..module import Module
from ..normalization import _BatchNorm
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """avg_fn of an exponential moving average: decay * averaged + (1 - decay) * current."""
    def ema_update(averaged, current, num_averaged):
        return decay * averaged + (1 - decay) * current
    return ema_update


def get_swa_avg_fn() -> Callable:
    """avg_fn of the running (equal-weight) mean SWA keeps."""
    def swa_update(averaged, current, num_averaged):
        return averaged + (current - averaged) / (int(num_averaged) + 1)
    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """multi_avg_fn (lists of averaged and current tensors of one dtype, updated in place) of
    an EMA; an integer tensor (a batch norm's num_batches_tracked, with use_buffers) takes
    decay * averaged + (1 - decay) * current truncated to its dtype, as PyTorch's."""
    def ema_update(averaged: list, current: list, num_averaged) -> None:
        for a, c in zip(averaged, current):
            if a.dtype.kind in "fc":
                a.copy_(a + (c - a) * (1 - decay))   # PyTorch's lerp(a, c, 1 - decay)
            else:
                a.copy_(a * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """multi_avg_fn of the SWA running mean (an integer tensor's truncated to its dtype)."""
    def swa_update(averaged: list, current: list, num_averaged) -> None:
        n = int(num_averaged) + 1
        for a, c in zip(averaged, current):
            a.copy_(a + (c - a) / n)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` (on `device` if given) whose parameters (and, with use_buffers, its
    buffers) are averaged over the update_parameters(model) calls: the SWA running mean by
    default, or avg_fn(averaged, current, n_averaged) / multi_avg_fn(averaged_list,
    current_list, n_averaged) (in place), called once per (device, dtype) group as PyTorch's.
    Every tensor averaged is, integer buffers too (with use_buffers: a batch norm's
    num_batches_tracked, the result truncated to its dtype, as PyTorch's). Without use_buffers
    the buffers are copied from model at each update. forward runs the averaged copy."""

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: give only one of avg_fn and multi_avg_fn")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", T.zeros((), dtype=T.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, m: Module) -> list:
        return list(itertools.chain(m.parameters(), m.buffers()) if self.use_buffers
                    else m.parameters())

    def update_parameters(self, model: Module) -> None:
        mine, theirs = self._tensors(self.module), self._tensors(model)
        if len(mine) != len(theirs):
            raise ValueError(f"AveragedModel.update_parameters: the model has {len(theirs)} "
                             f"tensors to average, the averaged copy {len(mine)}")
        for i, (a, c) in enumerate(zip(mine, theirs)):   # (before any is written)
            if tuple(a.shape) != tuple(c.shape):
                raise ValueError(f"AveragedModel.update_parameters: tensor {i} of the model has shape "
                                 f"{tuple(c.shape)}, the averaged copy's {tuple(a.shape)}")
        n = int(self.n_averaged.item())
        with no_grad():
            cur = [c.detach().to(a.device) for a, c in zip(mine, theirs)]
            if n == 0:
                for a, c in zip(mine, cur):
                    a.copy_(c)
            elif self.multi_avg_fn is not None:
                groups: dict = {}   # PyTorch's grouping: one call per (device, dtype)
                for a, c in zip(mine, cur):
                    lists = groups.setdefault((str(a.device), a.dtype), ([], [], a.device))
                    lists[0].append(a)
                    lists[1].append(c)
                for avgs, curs, device in groups.values():
                    self.multi_avg_fn(avgs, curs, self.n_averaged.to(device))
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for a, c in zip(mine, cur):
                    a.copy_(fn(a.detach(), c, self.n_averaged.to(a.device)))
            if not self.use_buffers:   # keep the buffers of the model (e.g. BN statistics)
                for a, b in zip(self.module.buffers(), model.buffers()):
                    a.copy_(b.detach().to(a.device))
            self.n_averaged.copy_(self.n_averaged + 1)


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """One pass over `loader` (batches: tensors, or lists / tuples whose first item is the
    input) in training mode to recompute the running statistics of every batch norm of
    `model` as plain averages (momentum None); the momenta and mode are restored after."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    try:
        for batch in loader:
            x = batch[0] if isinstance(batch, (list, tuple)) else batch
            model(x if device is None else x.to(device))
    finally:
        for m, mom in momenta.items():
            m.momentum = mom
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to swa_lr (one value, or one per group) over anneal_epochs steps,
    by a cosine ('cos') or linear ('linear') ramp, then hold it (PyTorch's SWALR)."""

    def __init__(self, optimizer: Optimizer, swa_lr, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        groups = optimizer.param_groups
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(groups)
        if len(lrs) != len(groups):
            raise ValueError(f"SWALR: expected {len(groups)} values for swa_lr, got {len(lrs)}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"SWALR: anneal_strategy must be one of 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0, got {anneal_epochs!r}")
        for lr, g in zip(lrs, groups):
            g["swa_lr"] = lr
        self.anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self.anneal_strategy == "cos" else t

    def get_lr(self) -> list:
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        width = max(1, self.anneal_epochs)
        prev = self._anneal(max(0.0, min(1.0, (step - 1) / width)))
        alpha = self._anneal(max(0.0, min(1.0, step / width)))
        out = []
        for g in self.optimizer.param_groups:
            # the lr before the ramp, recovered from the current one (PyTorch's recurrence)
            start = g["swa_lr"] if prev == 1 else (g["lr"] - prev * g["swa_lr"]) / (1 - prev)
            out.append(g["swa_lr"] * alpha + start * (1 - alpha))
        return out


__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_avg_fn", "get_swa_avg_fn",
           "get_ema_multi_avg_fn", "get_swa_multi_avg_fn"]
