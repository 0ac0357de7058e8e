"""Rprop, ASGD and Adafactor: PyTorch 2.x's single-tensor update formulas, defaults, argument
checks and state names (a torch state_dict's numbers map 1:1), written in tensor ops (any float
dtype, either device). Each takes master_weights=True as the others: float16/bfloat16
parameters are updated through float32 copies (nn/optim/optimizer.py).

Each "step" is kept as a Python int (as the other optimizers here); ASGD's "eta" and "mu" as
Python floats rounded to float32, as PyTorch's float32 scalar tensors (its default dtype's).
Adafactor's factored second moment ("row_var", "col_var") is not shaped like its parameter:
its state checks and load_state_dict check those shapes themselves."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

import tensor as T

from .algorithms_extra import _direction, _grad_as
from .optimizer import Optimizer, _check_nonneg, _uses_master, _zeros, impl_flags, param_dtype


def _f32(x: float) -> float:
    """x rounded as PyTorch's float32 scalar state tensors hold it."""
    return float(np.float32(x))


def _pair(name: str, what: str, v) -> None:
    if len(v) != 2:
        raise ValueError(f"{name}: {what} must be a pair, got {v!r}")


def _by_index(opt: Optimizer, state_dict: dict) -> dict:
    """{saved index: parameter} of a state_dict about to be loaded into opt."""
    return {int(i): p for mine, saved in zip(opt.param_groups, state_dict["param_groups"])
            for i, p in zip(saved["params"], mine["params"])}


# ---- Rprop ----------------------------------------------------------------------------------

class Rprop(Optimizer):
    """Rprop (Riedmiller & Braun): each element moves by its own step size, in the direction
    of its gradient's sign; the step size grows by etaplus while the sign holds, shrinks by
    etaminus when it flips (and that element skips the step), within step_sizes. lr is the
    initial step size, read at the first step only (as PyTorch's).

    >>> import tensor as T
    >>> w = T.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Rprop([w], lr=0.1)
    >>> for g in ([2.0, -4.0], [2.0, 4.0]):   # the second flips the sign of w[1]'s gradient
    ...     w.grad = T.tensor(g); opt.step()
    >>> [round(v, 4) for v in w.tolist()], [round(v, 4) for v in opt.state[w]["step_size"].tolist()]
    ([0.78, -1.9], [0.12, 0.05])
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, maximize: bool = False,
                 master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("Rprop", "foreach capturable differentiable", torch_impl)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=maximize, master_weights=master_weights))

    def _check_options(self, g):
        _check_nonneg("Rprop", g["lr"], "learning rate")
        _pair("Rprop", "etas", g["etas"])
        _pair("Rprop", "step_sizes", g["step_sizes"])
        etaminus, etaplus = g["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Rprop: invalid eta values: {etaminus}, {etaplus} (need "
                             "0 < etaminus < 1 < etaplus)")

    def _update(self, group, p, g, state):
        if not state:
            state.update(step=0, prev=_zeros(p),
                         step_size=T.full(p.shape, float(group["lr"]), dtype=p.dtype,
                                          device=p.device))
        state["step"] += 1
        etaminus, etaplus = (float(e) for e in group["etas"])
        lo, hi = (float(s) for s in group["step_sizes"])
        g = _grad_as(p, g)
        d = -g if group["maximize"] else g
        prev, size = state["prev"], state["step_size"]
        prod = d * prev
        # PyTorch's sign rewrite: > 0 -> etaplus, < 0 -> etaminus, else 1. Its sign() is 0 at NaN
        # (0 * inf, or a NaN gradient): such an element keeps its step size and, with a NaN
        # gradient, does not move (NumPy's sign, NaN there, would make both NaN for good)
        factor = T.where(prod > 0, etaplus, T.where(prod < 0, etaminus, 1.0))
        size.multiply_(factor)
        size.clamp_(lo, hi)
        d = T.where(prod < 0, 0.0, d)   # a sign flip: no step now, and no flip seen next time
        p.add_(T.where(d > 0, -1.0, T.where(d < 0, 1.0, 0.0)) * size)
        prev.copy_(d)


# ---- ASGD -----------------------------------------------------------------------------------

class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky): SGD with the step size eta_t = lr / (1 + lambd * lr *
    t)^alpha and the decay p *= 1 - lambd * eta, keeping in state "ax" the running average of
    the iterates from step t0 + 2 on (as PyTorch's; before that, "ax" is the last iterate).

    >>> import tensor as T
    >>> w = T.tensor([1.0], dtype=T.float64, requires_grad=True)
    >>> opt = ASGD([w], lr=0.1, lambd=0.0, t0=0)
    >>> for g in (2.0, 1.0, 1.0):
    ...     w.grad = T.tensor([g], dtype=T.float64); opt.step()
    >>> round(w.item(), 6), round(opt.state[w]["ax"].item(), 6)   # iterates 0.8, 0.7, 0.6
    (0.6, 0.65)
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False, *,
                 master_weights: bool = False) -> None:
        # (PyTorch's positional order, its implementation switches included)
        impl_flags("ASGD", "foreach capturable differentiable",
                   dict(foreach=foreach, differentiable=differentiable, capturable=capturable))
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize,
                                      master_weights=master_weights))

    _scalar_state = frozenset({"step", "eta", "mu"})

    def _check_options(self, g):
        _check_nonneg("ASGD", g["lr"], "learning rate")
        _check_nonneg("ASGD", g["weight_decay"], "weight_decay value")

    def _update(self, group, p, g, state):
        lr, lambd = float(group["lr"]), float(group["lambd"])
        if not state:
            state.update(step=0, eta=_f32(lr), mu=1.0, ax=_zeros(p))
        state["step"] += 1
        t = state["step"]
        d = _direction(group, p, g)
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        p.multiply_(1 - lambd * eta)
        p.add_(d * -eta)
        if mu != 1:
            ax.add_((p - ax) * mu)
        else:
            ax.copy_(p)
        state["eta"] = _f32(lr / ((1 + lambd * lr * t) ** float(group["alpha"])))
        state["mu"] = _f32(1 / max(1, t - float(group["t0"])))

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        params = _by_index(self, state_dict)
        for i, st in state_dict["state"].items():
            if int(i) in params:
                for k in ("eta", "mu"):
                    if k in st:
                        v = st[k]
                        self.state[params[int(i)]][k] = float(v.item() if hasattr(v, "item") else v)


# ---- Adafactor ------------------------------------------------------------------------------

def _factor_shapes(p) -> dict[str, tuple[int, ...]]:
    """Adafactor's second-moment state of p: row and column means over its last two dimensions
    (kept as size-1 dimensions) when p has two or more, else one p-shaped "variance"."""
    s = tuple(p.shape)
    if len(s) > 1:
        return {"row_var": s[:-1] + (1,), "col_var": s[:-2] + (1, s[-1])}
    return {"variance": s}


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern), as PyTorch's torch.optim.Adafactor: no first moment; the
    second moment of a >= 2-D parameter is factored into its row and column means over the
    last two dimensions (memory n + m, not n * m); beta2_t = 1 - t^beta2_decay; the step is
    max(eps2, RMS(p)) * min(lr, 1/sqrt(t)) times the update clipped to RMS <= d; eps =
    (eps1, eps2) with eps1=None meaning the parameter dtype's machine epsilon; weight_decay is
    decoupled (p *= 1 - lr * weight_decay). Complex parameters are refused, as PyTorch's.

    >>> import tensor as T
    >>> w = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
    >>> opt = Adafactor([w], lr=0.01)
    >>> w.grad = T.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=T.float64); opt.step()
    >>> sorted(opt.state[w]), opt.state[w]["row_var"].shape
    (['col_var', 'row_var', 'step'], (2, 1))
    >>> [round(v, 6) for v in w.tolist()[0]]   # p -= RMS(p) * lr * g / |g|
    [0.972614, 1.972614]
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, maximize: bool = False,
                 master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("Adafactor", "foreach", torch_impl)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d,
                                      weight_decay=weight_decay, maximize=maximize,
                                      master_weights=master_weights))

    # not shaped like p: checked here (_check_state, load_state_dict), not by the base class
    _scalar_state = frozenset({"step", "row_var", "col_var"})

    def _refuses_mixed(self, group):
        return True   # PyTorch's lerp_ refuses state of another dtype

    def _check_options(self, g):
        if not 0.0 <= g["lr"]:
            raise ValueError(f"Adafactor: learning rate should be >= 0 but is: {g['lr']}")
        if not 0.0 >= g["beta2_decay"]:
            raise ValueError(f"Adafactor: beta2_decay should be <= 0 but is: {g['beta2_decay']}")
        _pair("Adafactor", "eps", g["eps"])
        eps1, eps2 = g["eps"]
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"Adafactor: epsilon1 should be >= 0 but is: {eps1}")
        if not 0.0 <= eps2:
            raise ValueError(f"Adafactor: epsilon2 should be >= 0 but is: {eps2}")
        if not 1.0 <= g["d"]:
            raise ValueError(f"Adafactor: clipping threshold d should be >= 1 but is: {g['d']}")
        if not 0.0 <= g["weight_decay"]:
            raise ValueError(f"Adafactor: weight_decay should be >= 0 but is: "
                             f"{g['weight_decay']}")

    def _grad(self, p):
        if p.dtype.kind == "c":   # raised before any parameter of the group changes
            raise RuntimeError("Adafactor does not support complex parameters")
        return super()._grad(p)

    def _check_state(self, group, p, state):
        super()._check_state(group, p, state)   # "variance" and a master copy: p-shaped
        want = _factor_shapes(p)
        for k in ("row_var", "col_var", "variance"):
            v = state.get(k)
            if v is None:
                continue
            if k not in want or tuple(v.shape) != want[k]:
                raise ValueError(f"Adafactor.step: state {k!r} has shape {tuple(v.shape)}, which "
                                 f"does not fit its parameter {tuple(p.shape)}")
            if k != "variance" and v.dtype != (T.float32 if _uses_master(group, p) else p.dtype):
                raise TypeError(f"Adafactor.step: state {k!r} is {v.dtype.name} but its "
                                f"parameter is {p.dtype.name} (PyTorch raises here too): cast "
                                "the state with opt.load_state_dict(opt.state_dict())")

    def load_state_dict(self, state_dict):
        params = _by_index(self, state_dict)
        for i, st in state_dict["state"].items():
            p = params.get(int(i))
            for k in ("row_var", "col_var"):
                if p is not None and st.get(k) is not None:
                    want = _factor_shapes(p).get(k)
                    if tuple(st[k].shape) != want:
                        raise ValueError(f"load_state_dict: Adafactor state {k!r} of parameter "
                                         f"{i} has shape {tuple(st[k].shape)}, its parameter "
                                         f"{tuple(p.shape)} needs {want}")
        super().load_state_dict(state_dict)

    def _update(self, group, p, g, state):
        if not state:
            state["step"] = 0
            state.update({k: T.zeros(s, dtype=p.dtype, device=p.device)
                          for k, s in _factor_shapes(p).items()})
        state["step"] += 1
        t = state["step"]
        lr, wd, clip = float(group["lr"]), float(group["weight_decay"]), float(group["d"])
        eps1, eps2 = group["eps"]
        eps1 = float(T.finfo(param_dtype(p)).eps if eps1 is None else eps1)
        g = _grad_as(p, g)
        g = -g if group["maximize"] else g
        w = float(t) ** float(group["beta2_decay"])   # 1 - beta2_t
        n = max(p.size, 1) ** 0.5                      # (an empty p: no division by zero)
        alpha = max(float(eps2), float(p.norm()) / n) * min(lr, 1 / t ** 0.5)
        if wd:
            p.multiply_(1 - lr * wd)
        gg = g * g
        if p.ndim > 1:
            row, col = state["row_var"], state["col_var"]
            row.lerp_(T.mean(gg, axis=-1, keepdims=True), w)
            col.lerp_(T.mean(gg, axis=-2, keepdims=True), w)
            var = row * col / T.clamp(T.mean(row, axis=-2, keepdims=True), min=eps1)
        else:
            var = state["variance"]
            var.lerp_(gg, w)
        update = T.rsqrt(T.clamp(var, min=eps1 * eps1)) * g
        denom = max(1.0, float(update.norm()) / (n * clip))
        p.add_(update * (-alpha / denom))
