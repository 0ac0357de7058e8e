"""Adagrad, Adadelta, Adamax, NAdam and RAdam: PyTorch 2.x's single-tensor update formulas,
defaults, argument checks and state names (a torch state_dict's numbers map 1:1), written in
tensor ops (any float dtype, either device). Each takes master_weights=True as the others:
float16/bfloat16 parameters are updated through float32 copies (nn/optim/optimizer.py).

Each "step" is kept as a Python int (as the other optimizers here); NAdam's "mu_product" as a
Python float rounded to float32 after every product, as PyTorch's float32 scalar tensor."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

import tensor as T

from .optimizer import Optimizer, _check_nonneg, _zeros, flat_update, impl_flags, sparse_entries


def _check_betas(name: str, betas) -> None:
    if len(betas) != 2:
        raise ValueError(f"{name}: betas must be a pair, got {betas!r}")
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"{name}: invalid beta parameter at index {i}: {b}")


def _grad_as(p, g):
    """g in p's dtype: a float32 master copy's update takes its 16-bit gradient in float32."""
    return g if g.dtype == p.dtype else g.astype(p.dtype)


def _direction(group, p, g):
    """The gradient, negated for maximize, plus L2 weight decay (weight_decay * p)."""
    g = _grad_as(p, g)
    d = -g if group["maximize"] else g
    wd = float(group["weight_decay"])
    if wd:
        d = d + p * wd
    return d


# ---- Adagrad --------------------------------------------------------------------------------

class Adagrad(Optimizer):
    """Adagrad (Duchi et al.): divide by the root of the running sum of squared gradients;
    lr decays as lr / (1 + (step - 1) * lr_decay). As PyTorch's, the state ("step" 0 and "sum"
    filled with initial_accumulator_value) exists from construction.

    >>> import tensor as T
    >>> w = T.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=0.5)
    >>> w.grad = T.tensor([2.0, 4.0]); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.5, -2.5]

    A sparse gradient (nn.Embedding(sparse=True)) updates the sum and the parameter at its
    entries only (without weight_decay), as PyTorch's.
    """

    _sparse_grads = True

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("Adagrad", "foreach fused differentiable", dict(torch_impl, foreach=foreach))
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      maximize=maximize, master_weights=master_weights))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = self._init_state(group, p)

    def _check_options(self, g):
        for key, what in (("lr", "learning rate"), ("lr_decay", "lr_decay value"),
                          ("weight_decay", "weight_decay value"),
                          ("initial_accumulator_value", "initial_accumulator_value value"),
                          ("eps", "epsilon value")):
            _check_nonneg("Adagrad", g[key], what)

    @staticmethod
    def _init_state(group, p):
        v = float(group["initial_accumulator_value"])
        fill = complex(v, v) if p.dtype.kind == "c" else v
        return {"step": 0, "sum": T.full(p.shape, fill, dtype=p.dtype, device=p.device)}

    def _update(self, group, p, g, state):
        if not state:
            state.update(self._init_state(group, p))
        if state["sum"].dtype != p.dtype:   # a master copy's first step: float32 state
            state["sum"] = state["sum"].astype(p.dtype).contiguous()
        state["step"] += 1
        clr = float(group["lr"]) / (1 + (state["step"] - 1) * float(group["lr_decay"]))
        if not isinstance(g, T.Tensor):
            self._sparse_step(group, p, g, state["sum"], clr)
            return
        d = _direction(group, p, g)
        s = state["sum"]
        s.add_(d * d)
        std = T.sqrt(s) + float(group["eps"])
        p.add_(d * -clr / std)

    def _check_sparse(self, group):
        if float(group["weight_decay"]) != 0:
            raise RuntimeError("Adagrad: weight_decay is not compatible with sparse gradients "
                               "(as PyTorch's); use weight_decay=0 or a dense gradient")

    @staticmethod
    def _sparse_step(group, p, g, s, clr: float) -> None:
        """The sum and p updated at the (coalesced) entries of the sparse gradient g."""
        keys, vals = sparse_entries(p, g)
        if group["maximize"]:
            vals = -vals
        flat_update(s, lambda f: T.index_add_(f, 0, keys, vals * vals))
        std = T.sqrt(s.reshape(-1)[keys])
        step = vals / (std + float(group["eps"])) * -clr
        flat_update(p, lambda f: T.index_add_(f, 0, keys, step))


# ---- Adadelta -------------------------------------------------------------------------------

class Adadelta(Optimizer):
    """Adadelta (Zeiler): the step is RMS(previous updates) / RMS(gradients) * gradient,
    scaled by lr (PyTorch's default lr=1.0).

    >>> import tensor as T
    >>> w = T.tensor([1.0], dtype=T.float64, requires_grad=True)
    >>> opt = Adadelta([w], lr=1.0, rho=0.0, eps=1e-6)
    >>> w.grad = T.tensor([2.0], dtype=T.float64); opt.step()
    >>> round(w.item(), 6)   # 1 - sqrt(eps) / sqrt(4 + eps) * 2
    0.999
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("Adadelta", "foreach capturable differentiable", dict(torch_impl, foreach=foreach))
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, master_weights=master_weights))

    def _check_options(self, g):
        _check_nonneg("Adadelta", g["lr"], "learning rate")
        if not 0.0 <= g["rho"] <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value: {g['rho']}")
        _check_nonneg("Adadelta", g["eps"], "epsilon value")
        _check_nonneg("Adadelta", g["weight_decay"], "weight_decay value")

    def _update(self, group, p, g, state):
        if not state:
            state.update(step=0, square_avg=_zeros(p), acc_delta=_zeros(p))
        state["step"] += 1
        rho, eps, lr = float(group["rho"]), float(group["eps"]), float(group["lr"])
        d = _direction(group, p, g)
        sq, acc = state["square_avg"], state["acc_delta"]
        sq.multiply_(rho)
        sq.add_(d * d * (1 - rho))
        std = T.sqrt(sq + eps)
        delta = T.sqrt(acc + eps) / std * d
        acc.multiply_(rho)
        acc.add_(delta * delta * (1 - rho))
        p.add_(delta * -lr)


# ---- Adamax ---------------------------------------------------------------------------------

class Adamax(Optimizer):
    """Adamax (Kingma & Ba): Adam with the infinity norm, exp_inf = max(beta2 * exp_inf,
    |g| + eps); p -= lr / (1 - beta1^t) * exp_avg / exp_inf.

    >>> import tensor as T
    >>> w = T.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adamax([w], lr=0.1)
    >>> w.grad = T.tensor([2.0, -4.0]); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -1.9]
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("Adamax", "foreach capturable differentiable", dict(torch_impl, foreach=foreach))
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, master_weights=master_weights))

    def _refuses_mixed(self, group):
        return True   # PyTorch's lerp_ refuses state of another dtype

    def _check_options(self, g):
        _check_nonneg("Adamax", g["lr"], "learning rate")
        _check_nonneg("Adamax", g["eps"], "epsilon value")
        _check_betas("Adamax", g["betas"])
        _check_nonneg("Adamax", g["weight_decay"], "weight_decay value")

    def _update(self, group, p, g, state):
        if not state:
            state.update(step=0, exp_avg=_zeros(p), exp_inf=_zeros(p))
        state["step"] += 1
        beta1, beta2 = (float(b) for b in group["betas"])
        d = _direction(group, p, g)
        m, u = state["exp_avg"], state["exp_inf"]
        m.add_((d - m) * (1 - beta1))
        u.multiply_(beta2)
        u.copy_(T.maximum(u, abs(d) + float(group["eps"])))
        clr = float(group["lr"]) / (1 - beta1 ** state["step"])
        p.add_(m * -clr / u)


# ---- NAdam / RAdam --------------------------------------------------------------------------

class _AdamFamily(Optimizer):
    def _refuses_mixed(self, group):
        return True   # PyTorch's lerp_ refuses state of another dtype

    def _check_options(self, g):
        name = type(self).__name__
        _check_nonneg(name, g["lr"], "learning rate")
        _check_nonneg(name, g["eps"], "epsilon value")
        _check_betas(name, g["betas"])
        _check_nonneg(name, g["weight_decay"], "weight_decay value")

    def _moments(self, group, p, g, state, **extra):
        """Weight decay (L2 or decoupled), then the Adam moments; returns (d, m, v, step)."""
        if not state:
            state.update(step=0, **extra, exp_avg=_zeros(p), exp_avg_sq=_zeros(p))
        state["step"] += 1
        lr, wd = float(group["lr"]), float(group["weight_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        g = _grad_as(p, g)
        d = -g if group["maximize"] else g
        if wd and group["decoupled_weight_decay"]:
            p.multiply_(1 - lr * wd)
        elif wd:
            d = d + p * wd
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.add_((d - m) * (1 - beta1))
        v.multiply_(beta2)
        v.add_(d * d * (1 - beta2))
        return d, m, v, state["step"]


class NAdam(_AdamFamily):
    """NAdam (Dozat): Adam with Nesterov momentum and the momentum schedule
    mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay)); decoupled_weight_decay=True gives
    NAdamW.

    >>> import tensor as T
    >>> w = T.tensor([1.0], dtype=T.float64, requires_grad=True)
    >>> opt = NAdam([w], lr=0.1)
    >>> w.grad = T.tensor([2.0], dtype=T.float64); opt.step()
    >>> round(w.item(), 4)   # 1 - 0.1 * (1 + mu_2 / (1 - mu_1 * mu_2) * 0.1), mu_t ~ 0.45
    0.8944
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False,
                 master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("NAdam", "foreach capturable differentiable", torch_impl)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, master_weights=master_weights))

    def _check_options(self, g):
        super()._check_options(g)
        _check_nonneg("NAdam", g["momentum_decay"], "momentum_decay value")

    def _update(self, group, p, g, state):
        d, m, v, t = self._moments(group, p, g, state, mu_product=1.0)
        lr, eps, md = float(group["lr"]), float(group["eps"]), float(group["momentum_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * md))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * md))
        # PyTorch keeps mu_product in a float32 scalar tensor: round as it does
        mp = float(np.float32(_scalar(state["mu_product"])) * np.float32(mu))
        state["mu_product"] = mp
        denom = T.sqrt(v / (1 - beta2 ** t)) + eps
        p.add_(d * (-lr * (1.0 - mu) / (1.0 - mp)) / denom)
        p.add_(m * (-lr * mu_next / (1.0 - mp * mu_next)) / denom)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        params = {i: p for mine, saved in zip(self.param_groups, state_dict["param_groups"])
                  for i, p in zip(saved["params"], mine["params"])}
        for i, st in state_dict["state"].items():
            if "mu_product" in st and int(i) in params:
                self.state[params[int(i)]]["mu_product"] = _scalar(st["mu_product"])


def _scalar(v) -> float:
    return float(v.item()) if hasattr(v, "item") else float(v)


class RAdam(_AdamFamily):
    """RAdam (Liu et al.): Adam whose adaptive term is switched on, with its variance
    rectification, once the SMA length rho_t exceeds 5 (before that: SGD with momentum on the
    bias-corrected first moment); decoupled_weight_decay=True gives RAdamW.

    >>> import tensor as T
    >>> w = T.tensor([1.0], dtype=T.float64, requires_grad=True)
    >>> opt = RAdam([w], lr=0.1)
    >>> w.grad = T.tensor([2.0], dtype=T.float64); opt.step()
    >>> round(w.item(), 4)   # rho_1 = 1 <= 5: p -= lr * m / (1 - beta1)
    0.8
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False,
                 master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("RAdam", "foreach capturable differentiable", torch_impl)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, master_weights=master_weights))

    def _update(self, group, p, g, state):
        _, m, v, t = self._moments(group, p, g, state)
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2 ** t) / bc2
        mhat = m / bc1
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (bc2 ** 0.5) / (T.sqrt(v) + eps)
            p.add_(-(mhat * lr * adaptive * rect))
        else:
            p.add_(-(mhat * lr))
