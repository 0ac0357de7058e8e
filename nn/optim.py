"""Optimizers (SGD, Adam, AdamW, RMSprop) and learning-rate schedulers (StepLR,
CosineAnnealingLR, LambdaLR), with PyTorch's API, defaults, update formulas and state_dict
layout.

A float32/float64 parameter whose gradient and state are contiguous is updated by one fused
kernel (tensor/cpu/csrc/optim.h on the CPU, cuda_src/optim.cuh on CUDA: reads p, grad and the
state buffers once, writes them in place; no host round trip, no temporaries). Anything else
(other dtypes, non-contiguous parameters) takes the same update written in tensor ops.

>>> import tensor as T
>>> from nn.optim import SGD
>>> w = T.tensor([1.0, -2.0], dtype=T.float32, requires_grad=True)
>>> opt = SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(3):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> [round(v, 4) for v in w.tolist()]
[0.062, -0.124]
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import autograd
import tensor as T
from tensor import dtypes as dt
from tensor._tensor import Tensor
from tensor.aliasing import check_writable
from tensor.backend import backend_for

# ---- fused kernels --------------------------------------------------------------------------

_MAXIMIZE, _NESTEROV, _FIRST, _MOMENTUM, _AMSGRAD, _DECOUPLED, _CENTERED, _WD = (
    1, 2, 4, 8, 16, 32, 64, 128)


def _fusable(p: Tensor, *bufs: Tensor | None) -> bool:
    """The fused kernels need a float32/float64 parameter and contiguous operands on its device."""
    return (p.dtype in (dt.float32, dt.float64)
            and all(b is None or (b.is_contiguous() and b.device == p.device) for b in (p, *bufs)))


def _launch(name: str, p: Tensor, *args) -> None:
    # the kernel writes p in place, as the tensor-op path's in-place ops (which check) would
    check_writable(p, f"{name} step")
    backend_for(p.device).optim_step(name, p, *args)


def _touch(*ts: Tensor | None) -> None:
    """A kernel wrote these in place: bump their version so autograd's saved-tensor check sees it."""
    for t in ts:
        if t is not None:
            t._storage.version += 1


def _ptr(t: Tensor | None) -> int:
    return 0 if t is None else t.data_ptr()


def _zeros(p: Tensor) -> Tensor:
    return T.zeros(p.shape, dtype=p.dtype, device=p.device)


# ---- base class -----------------------------------------------------------------------------

class Optimizer:
    """Base class: holds `param_groups` (dicts of params + options) and per-parameter `state`.

    Subclasses set `defaults` and implement `_update(group, p, state)` for one parameter.
    """

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got a Tensor of shape {tuple(params.shape)}")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"add_param_group: expected a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs; use a list")
        group["params"] = params = list(params) if params is not None else []
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if p.dtype.kind != "f":
                raise TypeError(f"optimizer can only optimize floating-point Tensors, got {p.dtype.name}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self._check_options(group)
        if len({id(p) for p in params}) != len(params):
            raise ValueError("optimizer: a parameter group contains the same parameter twice")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def _check_options(self, group: dict[str, Any]) -> None:
        """Raise ValueError for invalid options (PyTorch's checks)."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (set to None, or fill with zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad = p.grad.detach()
                    with autograd.no_grad():
                        p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a gradient; `closure` recomputes and returns the loss."""
        loss = None
        if closure is not None:
            with autograd.enable_grad():
                loss = closure()
        with autograd.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        state = self.state.get(p, {})
                        self._update(group, p, self._grad(p), state)
                        if state:  # SGD without momentum keeps none, as in PyTorch
                            self.state[p] = state
        return loss

    def _update(self, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _grad(self, p: Tensor) -> Tensor:
        g = p.grad
        if tuple(g.shape) != tuple(p.shape) or g.dtype is not p.dtype:
            raise ValueError(f"{type(self).__name__}.step: gradient {tuple(g.shape)} {g.dtype.name} "
                             f"does not match its parameter {tuple(p.shape)} {p.dtype.name}")
        g = g.detach()
        if not g.is_contiguous() and p.is_contiguous():
            g = g.contiguous()  # one copy keeps the update in the fused kernel
        return g

    # -- state_dict: PyTorch's layout, parameters replaced by their index in group order --
    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}.
        State tensors are copies (a snapshot, unlike PyTorch's references)."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if p in self.state:
                    state[index[id(p)]] = {k: v.copy() if isinstance(v, Tensor) else v
                                           for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load options and state saved by state_dict() (tensors are copied and cast to each
        parameter's dtype and device)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(groups)} parameter groups, the optimizer "
                             f"has {len(self.param_groups)}")
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match "
                                 "the size of optimizer's group")
        by_index = {i: p for mine, saved in zip(self.param_groups, groups)
                    for i, p in zip(saved["params"], mine["params"])}
        self.state = defaultdict(dict)
        for i, st in state_dict["state"].items():
            p = by_index.get(int(i))
            if p is None:
                continue
            self.state[p] = {k: _load_value(k, v, p) for k, v in st.items()}
        self.param_groups = [{**saved, "params": mine["params"]}
                             for mine, saved in zip(self.param_groups, groups)]


def _load_value(key: str, v, p: Tensor):
    if key == "step":
        return int(float(v.item() if hasattr(v, "item") else v))
    if v is None:
        return None
    t = v if isinstance(v, Tensor) else T.asarray(v)
    return T.asarray(t, dtype=p.dtype, device=p.device).copy().contiguous()


def _check_nonneg(name: str, value: float, what: str) -> None:
    if not 0.0 <= value:
        raise ValueError(f"{name}: invalid {what}: {value}")


# ---- SGD ------------------------------------------------------------------------------------

class SGD(Optimizer):
    """Stochastic gradient descent with momentum (PyTorch's formulation: the velocity is
    buf = momentum * buf + (1 - dampening) * g and p -= lr * buf), Nesterov momentum, L2
    weight decay, maximize."""

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _check_options(self, g):
        _check_nonneg("SGD", g["lr"], "learning rate")
        _check_nonneg("SGD", g["momentum"], "momentum value")
        _check_nonneg("SGD", g["weight_decay"], "weight_decay value")
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")

    def _update(self, group, p, g, state):
        lr, mom, wd = float(group["lr"]), float(group["momentum"]), float(group["weight_decay"])
        buf = state.get("momentum_buffer")
        first = mom != 0 and buf is None
        if first:
            buf = _zeros(p)
        if _fusable(p, g, buf):
            flags = ((_MAXIMIZE if group["maximize"] else 0) | (_NESTEROV if group["nesterov"] else 0)
                     | (_FIRST if first else 0) | (_MOMENTUM if mom != 0 else 0) | (_WD if wd else 0))
            _launch("sgd", p, p.data_ptr(), g.data_ptr(), _ptr(buf), p.size, -lr, mom,
                    1 - float(group["dampening"]), wd, flags)
            _touch(p, buf)
        else:
            _sgd_ops(p, g, buf, first, lr, mom, float(group["dampening"]), wd,
                     group["nesterov"], group["maximize"])
        if mom != 0:
            state["momentum_buffer"] = buf


def _sgd_ops(p, g, buf, first, lr, mom, dampening, wd, nesterov, maximize):
    d = -g if maximize else g
    if wd:
        d = d + p * wd
    if mom != 0:
        if first:
            buf.copy_(d)
        else:
            buf.multiply_(mom)
            buf.add_(d * (1 - dampening))
        d = d + buf * mom if nesterov else buf
    p.add_(d * -lr)


# ---- Adam / AdamW ---------------------------------------------------------------------------

class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction, L2 weight decay (or decoupled, as AdamW),
    AMSGrad and maximize; PyTorch's formulas and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False, decoupled_weight_decay: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _check_options(self, g):
        name = type(self).__name__
        _check_nonneg(name, g["lr"], "learning rate")
        _check_nonneg(name, g["eps"], "epsilon value")
        _check_nonneg(name, g["weight_decay"], "weight_decay value")
        betas = g["betas"]
        if len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair, got {betas!r}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"{name}: invalid beta parameter at index {i}: {b}")

    def _update(self, group, p, g, state):
        if not state:
            state.update(step=0, exp_avg=_zeros(p), exp_avg_sq=_zeros(p))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _zeros(p)
        state["step"] += 1
        t = state["step"]
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        m, v, vmax = state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq")
        decoupled = bool(group["decoupled_weight_decay"])
        # host scalars from the step count, as PyTorch computes them (in double)
        step_size = lr / (1 - beta1 ** t)
        bc2s = (1 - beta2 ** t) ** 0.5
        if _fusable(p, g, m, v, vmax):
            flags = ((_MAXIMIZE if group["maximize"] else 0) | (_AMSGRAD if vmax is not None else 0)
                     | (_DECOUPLED if decoupled else 0) | (_WD if wd else 0))
            _launch("adam", p, p.data_ptr(), g.data_ptr(), m.data_ptr(), v.data_ptr(), _ptr(vmax),
                    p.size, 1 - lr * wd, wd, 1 - beta1, beta2, 1 - beta2, bc2s, eps, -step_size, flags)
            _touch(p, m, v, vmax)
        else:
            _adam_ops(p, g, m, v, vmax, lr, wd, decoupled, beta1, beta2, bc2s, eps, step_size,
                      group["maximize"])


def _adam_ops(p, g, m, v, vmax, lr, wd, decoupled, beta1, beta2, bc2s, eps, step_size, maximize):
    d = -g if maximize else g
    if wd and decoupled:
        p.multiply_(1 - lr * wd)
    elif wd:
        d = d + p * wd
    m.add_((d - m) * (1 - beta1))
    v.multiply_(beta2)
    v.add_(d * d * (1 - beta2))
    if vmax is not None:
        vmax.copy_(T.maximum(vmax, v))
        v = vmax
    denom = T.sqrt(v) / bc2s + eps
    p.add_(m * -step_size / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay."""

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)


# ---- RMSprop --------------------------------------------------------------------------------

class RMSprop(Optimizer):
    """RMSprop (Hinton): divide by a running RMS of the gradient; optional momentum,
    centered (subtract the running mean's square) and L2 weight decay."""

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def _check_options(self, g):
        for key, what in (("lr", "learning rate"), ("eps", "epsilon value"),
                          ("momentum", "momentum value"), ("weight_decay", "weight_decay value"),
                          ("alpha", "alpha value")):
            _check_nonneg("RMSprop", g[key], what)

    def _update(self, group, p, g, state):
        mom = float(group["momentum"])
        if not state:
            state.update(step=0, square_avg=_zeros(p))
            if mom > 0:
                state["momentum_buffer"] = _zeros(p)
            if group["centered"]:
                state["grad_avg"] = _zeros(p)
        state["step"] += 1
        sq, ga, buf = state["square_avg"], state.get("grad_avg"), state.get("momentum_buffer")
        if mom <= 0:
            buf = None
        lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
        wd = float(group["weight_decay"])
        if _fusable(p, g, sq, ga, buf):
            flags = ((_MAXIMIZE if group["maximize"] else 0) | (_CENTERED if ga is not None else 0)
                     | (_MOMENTUM if buf is not None else 0) | (_WD if wd else 0))
            _launch("rmsprop", p, p.data_ptr(), g.data_ptr(), sq.data_ptr(), _ptr(ga), _ptr(buf),
                    p.size, alpha, 1 - alpha, eps, -lr, mom, wd, flags)
            _touch(p, sq, ga, buf)
        else:
            _rmsprop_ops(p, g, sq, ga, buf, lr, alpha, eps, mom, wd, group["maximize"])


def _rmsprop_ops(p, g, sq, ga, buf, lr, alpha, eps, mom, wd, maximize):
    d = -g if maximize else g
    if wd:
        d = d + p * wd
    sq.multiply_(alpha)
    sq.add_(d * d * (1 - alpha))
    if ga is not None:
        ga.add_((d - ga) * (1 - alpha))
        avg = T.sqrt(sq - ga * ga)
    else:
        avg = T.sqrt(sq)
    avg = avg + eps
    if buf is not None:
        buf.multiply_(mom)
        buf.add_(d / avg)
        p.add_(buf * -lr)
    else:
        p.add_(d * -lr / avg)


# ---- learning-rate schedulers ---------------------------------------------------------------

class LRScheduler:
    """Base scheduler: sets each group's lr from `get_lr()` on every `step()` (call it after
    `optimizer.step()`); construction performs step 0."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when "
                               "resuming a scheduler with last_epoch >= 0")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last step() set."""
        return list(self._last_lr)

    def step(self) -> None:
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch) (one function, or one per group).

    >>> import tensor as T
    >>> opt = SGD([T.zeros(2).requires_grad_()], lr=1.0)
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
    """Multiply the lr by gamma every step_size epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = int(step_size), gamma
        if self.step_size < 1:
            raise ValueError(f"StepLR: step_size must be a positive integer, got {step_size}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]


class CosineAnnealingLR(LRScheduler):
    """Cosine from base_lr down to eta_min over T_max epochs (PyTorch's recursive form)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if int(T_max) < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive integer, got {T_max}")
        self.T_max, self.eta_min = int(T_max), eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, tm, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if e == 0:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / tm)) / 2 for b in self.base_lrs]
        if (e - 1 - tm) % (2 * tm) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / tm)) / 2
                    for b, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / tm)) / (1 + math.cos(math.pi * (e - 1) / tm))
                * (g["lr"] - lo) + lo for g in groups]


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "LRScheduler", "LambdaLR", "StepLR",
           "CosineAnnealingLR"]
