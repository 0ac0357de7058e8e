"""GradScaler: dynamic loss scaling for float16 training, as PyTorch's torch.amp.GradScaler.

Small gradients underflow in float16. The scaler multiplies the loss by a large factor before
backward (`scale(loss)`), so the gradients are computed scaled; before the optimizer step it
divides them back (`unscale_`, or inside `step`) and checks them for inf/NaN. A step whose
gradients overflowed is skipped and the scale backed off; after `growth_interval` clean steps
in a row the scale grows.

>>> import tensor as T, nn
>>> from nn.optim import SGD
>>> w = nn.Parameter(T.ones(2, dtype=T.float32))
>>> opt, scaler = SGD([w], lr=0.1), T.GradScaler("cpu", init_scale=4.0)
>>> scaler.scale((w * w).sum()).backward()       # gradients 4 * 2w
>>> w.grad.tolist()
[8.0, 8.0]
>>> scaler.step(opt); scaler.update()            # unscaled to 2w, stepped
>>> [round(v, 6) for v in w.tolist()], scaler.get_scale()   # (float32 values)
([0.8, 0.8], 4.0)

The unscale and inf/NaN check of all of an optimizer's gradients on one device and of one dtype
is one kernel call (the backends' amp_unscale: a multi-tensor kernel with a table of addresses,
not a launch per parameter). `step` reads the result on the host (one synchronisation a step,
as PyTorch's). Within tensor.compile, unscale_, step and update run eagerly at each replay
(islands); scale() multiplies by a scale tensor kept per device and written in place, so a
captured step sees the current scale.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor
from .backend import backend_for
from .capture import island

_READY, _UNSCALED, _STEPPED = 0, 1, 2


def _f32(v: float) -> float:
    """v rounded to float32 (inf past its range), as PyTorch's float32 scale tensor holds it."""
    with np.errstate(over="ignore"):
        return float(np.float32(v))


class GradScaler:
    """Dynamic loss scaling (PyTorch's GradScaler, same methods and defaults): init_scale
    2^16, growth_factor 2 after growth_interval (2000) clean steps in a row, backoff_factor 0.5
    on a step with inf/NaN gradients (skipped). enabled=False makes every method a pass-through.
    device: where scale() puts its scale tensor first ("cuda" by default, as PyTorch's; a loss
    on another device gets one there too)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled:
            if not init_scale > 0:
                raise ValueError(f"GradScaler: init_scale must be positive, got {init_scale}")
            if not growth_factor > 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1, got {growth_factor}")
            if not 0.0 < backoff_factor < 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got {backoff_factor}")
            if int(growth_interval) != growth_interval or growth_interval <= 0:
                raise ValueError(f"GradScaler: growth_interval must be a positive int, got "
                                 f"{growth_interval!r}")
        self._device = device
        self._enabled = bool(enabled)
        self._scale = float(init_scale)   # as given until the first scale() (PyTorch's lazy init)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._scale_tensors: dict = {}    # device -> float32 0-d tensor holding the scale
        self._per_opt: dict = {}          # id(optimizer) -> [stage, found_inf tensors]

    # ---- scaling ---------------------------------------------------------------------------
    def _scale_on(self, device) -> Tensor:
        t = self._scale_tensors.get(device)
        if t is None:
            from .creation import full
            t = self._scale_tensors[device] = full((), self._scale, dtype=dt.float32, device=device)
        return t

    def _set_scale(self, value: float) -> None:
        self._scale = float(value)
        for t in self._scale_tensors.values():   # in place: a captured step reads these
            t.fill_(self._scale)

    def scale(self, outputs):
        """outputs (a tensor, or tensors in lists/tuples/dicts) times the current scale, as
        float32 or wider (a float16 loss would overflow)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_on(outputs.device)
        if isinstance(outputs, list | tuple):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise TypeError(f"GradScaler.scale: expected a Tensor or tensors in lists, tuples or dicts, "
                        f"got {type(outputs).__name__}")

    # ---- unscaling -------------------------------------------------------------------------
    def _state(self, optimizer) -> list:
        """[stage, {device: found_inf}, the optimizer (held so that its id stays its own until
        update())] of this iteration."""
        return self._per_opt.setdefault(id(optimizer), [_READY, {}, optimizer])

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale, in place, noting inf/NaN (so that
        clipping after it sees true gradients). Once per optimizer between update()s."""
        if not self._enabled:
            return
        island(self._unscale, optimizer)

    def _unscale(self, optimizer) -> None:
        st = self._state(optimizer)
        if st[0] == _UNSCALED:
            raise RuntimeError("GradScaler.unscale_() has already been called on this optimizer "
                               "since the last update()")
        if st[0] == _STEPPED:
            raise RuntimeError("GradScaler.unscale_() is being called after step(); call update() "
                               "first")
        # PyTorch's: the reciprocal (in double, rounded to float32) of its float32 scale tensor
        inv = float(np.float32(1.0 / _f32(self._scale)))
        groups: dict = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if not isinstance(g, Tensor):   # a sparse gradient (Embedding(sparse=True))
                    g = p.grad = _sparse_to_unscale(g)
                if g.dtype.kind != "f":
                    raise TypeError(f"GradScaler.unscale_: a gradient of dtype {g.dtype.name}; "
                                    "the scaler unscales floating-point gradients")
                groups.setdefault((g.device, g.dtype), []).append(p)
        found = st[1]
        for (device, _), params in groups.items():
            if device not in found:
                from .creation import zeros
                found[device] = zeros((), dtype=dt.float32, device=device)
            _unscale_grads(params, inv, found[device])
        st[0] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """unscale_ (unless already done), then optimizer.step(*args, **kwargs) unless a
        gradient was inf or NaN (then the step is skipped). Returns what optimizer.step
        returns, None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: closure use is not supported (the closure's "
                               "backward would not be scaled)")
        return island(self._step, optimizer, args, kwargs)

    def _step(self, optimizer, args, kwargs):
        st = self._state(optimizer)
        if st[0] == _STEPPED:
            raise RuntimeError("GradScaler.step() has already been called since the last update()")
        if st[0] == _READY:
            self._unscale(optimizer)
        if not st[1]:
            raise RuntimeError("GradScaler.step: no inf checks were recorded for this optimizer "
                               "(none of its parameters has a gradient)")
        ret = None
        if not self._found(st):
            ret = optimizer.step(*args, **kwargs)
        st[0] = _STEPPED
        return ret

    @staticmethod
    def _found(st) -> bool:
        return any(float(t.item()) != 0.0 for t in st[1].values())

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off if any optimizer stepped (or unscaled) with inf/NaN gradients
        since the last update, else count a clean step and grow it after growth_interval of
        them; or set new_scale. Then a new iteration begins for every optimizer."""
        if not self._enabled:
            return
        island(self._update, new_scale)

    def _update(self, new_scale) -> None:
        if new_scale is not None:
            v = float(new_scale.item()) if isinstance(new_scale, Tensor) else float(new_scale)
            if not v > 0 or not math.isfinite(v):
                raise ValueError(f"GradScaler.update: new_scale must be positive and finite, got {v}")
            self._set_scale(v)
        else:
            seen = [st for st in self._per_opt.values() if st[1]]
            if not seen:
                raise RuntimeError("GradScaler.update: no inf checks were recorded since the last "
                                   "update (call step() or unscale_() first)")
            if any(self._found(st) for st in seen):
                self._growth_tracker = 0
                # PyTorch's float32 scale tensor: the product in double, rounded to float32
                self._set_scale(_f32(_f32(self._scale) * self._backoff_factor))
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._growth_tracker = 0
                    grown = _f32(_f32(self._scale) * self._growth_factor)
                    if math.isfinite(grown):   # as PyTorch: never grow to inf
                        self._set_scale(grown)
        self._per_opt = {}

    # ---- accessors and state ---------------------------------------------------------------
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        # PyTorch: init_scale as given until scale() makes the float32 tensor
        return _f32(self._scale) if self._scale_tensors else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, v: float) -> None:
        self._growth_factor = float(v)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, v: float) -> None:
        self._backoff_factor = float(v)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, v: int) -> None:
        self._growth_interval = int(v)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty, possibly "
                               "because it was saved from a disabled GradScaler")
        def num(key, kind):
            v = state_dict[key]
            return kind(v.item()) if isinstance(v, Tensor) else kind(v)
        # every entry read before any is set: a bad one leaves the scaler as it was
        values = (num("scale", float), num("growth_factor", float), num("backoff_factor", float),
                  num("growth_interval", int), num("_growth_tracker", int))
        scale, self._growth_factor, self._backoff_factor, self._growth_interval, \
            self._growth_tracker = values
        self._set_scale(scale)


def _unscale_grads(params: list, inv: float, found: Tensor) -> None:
    """The gradients of params (one device and dtype) times inv in place, found set where one
    was inf/NaN: one kernel call (non-contiguous gradients through contiguous copies written
    back; a gradient that may not be written, a broadcast view or a read-only external buffer,
    is replaced by its unscaled copy)."""
    grads, back = [], []
    for p in params:
        g = p.grad
        if not isinstance(g, Tensor):   # sparse: its values (a copy of its own, made above)
            grads.append(g.values())
            continue
        if g.grad_fn is not None:   # a .grad made with create_graph: scaled as data
            g = p.grad = g.detach()
        if not g.flags.writeable:
            c = p.grad = g.astype(g.dtype, copy=True)
            grads.append(c)
        elif g.is_contiguous():
            grads.append(g)
        else:
            c = g.contiguous()
            grads.append(c)
            back.append((g, c))
    if any(g.numel() for g in grads):
        backend_for(found.device).amp_unscale([g for g in grads if g.numel()], inv, found)
    for g in grads:
        g._storage.version += 1
    for g, c in back:
        g.copy_(c)


def _sparse_to_unscale(g):
    """A sparse gradient whose values are its own (so that unscaling them in place leaves the
    matrix they came from, which other code may hold, as it was): coalesced first when float16,
    as PyTorch's, so that entries summing past float16's range show up as inf."""
    from .sparse import SparseCOO
    if isinstance(g, SparseCOO) and g.dtype is dt.float16:
        g = g.coalesce()
    vals = g.values()
    if vals.grad_fn is not None:
        vals = vals.detach()
    return g._with_values(vals.contiguous().astype(vals.dtype, copy=True))
