"""The LRScheduler base and LambdaLR, StepLR, CosineAnnealingLR, as torch.optim.lr_scheduler
(the others: nn/optim/schedulers_extra.py)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from tensor.capture import island

from .optimizer import Optimizer

# ---- learning-rate schedulers ---------------------------------------------------------------

EPOCH_DEPRECATION_WARNING = (   # PyTorch's words
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available.")

GET_LR_WARNING = ("To get the last learning rate computed by the scheduler, please use "
                  "`get_last_lr()`.")   # PyTorch's words

ORDER_WARNING = (   # PyTorch warns the same way: the schedule's first value would be skipped
    "lr_scheduler.step() was called before optimizer.step(): call optimizer.step() first, then "
    "lr_scheduler.step(); in this order the first learning rate of the schedule is skipped")


class LRScheduler:
    """Base scheduler: sets each group's lr from `get_lr()` on every `step()` (call it after
    `optimizer.step()`); construction performs step 0."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:   # (a tensor lr copied: PyTorch's clone, no alias)
                lr = group["lr"]
                group.setdefault("initial_lr", lr.copy() if hasattr(lr, "copy") else lr)
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when "
                               "resuming a scheduler with last_epoch >= 0")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    _is_initial = False   # True during the step construction performs (PyTorch's flag)

    def _initial_step(self) -> None:
        """Reset the step count and perform the initial step (SequentialLR calls it again)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    _get_lr_called_within_step = False   # PyTorch's flag: get_lr() called by step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def _within_step(self, get):
        """get() (a call of get_lr) with the flag set that keeps get_lr from warning."""
        self._get_lr_called_within_step = True
        try:
            return get()
        finally:
            self._get_lr_called_within_step = False

    def _warn_outside_step(self) -> None:
        """get_lr() called by the user, not by step(): it computes the next step's values from
        the current ones (a chainable form), which is rarely what is wanted; PyTorch warns."""
        if not self._get_lr_called_within_step:
            warnings.warn(GET_LR_WARNING, UserWarning, stacklevel=3)

    def get_last_lr(self) -> list[float]:
        """The learning rates the last step() set."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Set the next learning rates. Inside a step compiled with tensor.compile it is an
        island (Python state: it runs on every replay). `epoch` (deprecated, as in PyTorch,
        which warns the same way) jumps to that epoch: the closed form where there is one."""
        if self._step_count == 1 and not self.optimizer.__dict__.get("_opt_called", False):
            warnings.warn(ORDER_WARNING, UserWarning, stacklevel=2)
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        island(self._step, epoch)

    def _step(self, epoch: int | None = None) -> None:
        count, last = self._step_count, self.last_epoch
        try:
            self._step_count += 1
            self._update_lr(epoch)
        except BaseException:   # (an lr_lambda raising: the epoch is not counted, or skipped)
            self._step_count, self.last_epoch = count, last
            raise

    def _update_lr(self, epoch: int | None = None) -> None:
        """Advance one epoch with get_lr(), or jump to `epoch` with the closed form where the
        scheduler has one (as PyTorch's; SequentialLR jumps to 0 at a milestone)."""
        if epoch is None:
            self.last_epoch += 1
            values = self._within_step(self.get_lr)
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self._within_step(self.get_lr)
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch) (one function, or one per group).

    >>> import tensor as T
    >>> from nn.optim import SGD
    >>> opt = SGD([T.zeros(2).requires_grad_()], lr=1.0); opt.step()   # (schedulers step after it)
    >>> s = LambdaLR(opt, lambda e: 0.5 ** e); s.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list,
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"LambdaLR: expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self):
        d = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        d["lr_lambdas"] = [None if callable(f) and hasattr(f, "__code__") else dict(vars(f))
                           for f in self.lr_lambdas]
        return d

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas", None) or []
        self.__dict__.update(state_dict)
        for f, st in zip(self.lr_lambdas, lambdas):
            if st is not None:
                f.__dict__.update(st)


class StepLR(LRScheduler):
    """Multiply the lr by gamma every step_size epochs (a float step_size is kept as given,
    as PyTorch: 2.5 decays at epochs 5, 10, ...)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        if not step_size > 0:
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine from base_lr down to eta_min over T_max epochs (PyTorch's recursive form; a
    float T_max is kept as given, as PyTorch's)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if not T_max > 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        e, tm, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:   # construction keeps the current lr, resumed or not (PyTorch 2.14)
            return [g["lr"] for g in groups]
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / tm)) / 2 for b in self.base_lrs]
        if (e - 1 - tm) % (2 * tm) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / tm)) / 2
                    for b, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / tm)) / (1 + math.cos(math.pi * (e - 1) / tm))
                * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self):
        e, tm, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / tm)) / 2 for b in self.base_lrs]
