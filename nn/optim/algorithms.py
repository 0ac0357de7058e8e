"""SGD, Adam, AdamW, RMSprop and SparseAdam: PyTorch's update formulas, defaults and state, run by the
fused kernel when the parameter allows it (nn/optim/optimizer.py) and as tensor ops otherwise.
Each also takes master_weights=True: float16/bfloat16 parameters are updated through float32
copies (nn/optim/optimizer.py)."""
from __future__ import annotations

from collections.abc import Iterable

import tensor as T

from .optimizer import (
    _AMSGRAD,
    _CENTERED,
    _DECOUPLED,
    _FIRST,
    _MAXIMIZE,
    _MOMENTUM,
    _NESTEROV,
    _WD,
    Optimizer,
    _check_nonneg,
    _fusable,
    _launch,
    _ptr,
    _touch,
    _zeros,
    flat_update,
    impl_flags,
    sparse_entries,
)

# ---- SGD ------------------------------------------------------------------------------------

class SGD(Optimizer):
    """Stochastic gradient descent with momentum (PyTorch's formulation: the velocity is
    buf = momentum * buf + (1 - dampening) * g and p -= lr * buf), Nesterov momentum, L2
    weight decay, maximize."""

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False, master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("SGD", "foreach fused differentiable", torch_impl)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, master_weights=master_weights))

    def _check_options(self, g):
        _check_nonneg("SGD", g["lr"], "learning rate")
        _check_nonneg("SGD", g["momentum"], "momentum value")
        _check_nonneg("SGD", g["weight_decay"], "weight_decay value")
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")

    _sparse_grads = True

    def _check_sparse(self, group):
        mom, wd = float(group["momentum"]), float(group["weight_decay"])
        if mom != 0 or wd != 0:
            raise RuntimeError("SGD: sparse gradients (e.g. nn.Embedding(sparse=True)) are supported "
                               f"only without momentum and weight_decay (got momentum={mom}, "
                               f"weight_decay={wd}); use momentum=0, weight_decay=0 or a dense "
                               "gradient")

    def _update(self, group, p, g, state):
        lr, mom, wd = float(group["lr"]), float(group["momentum"]), float(group["weight_decay"])
        if not isinstance(g, T.Tensor):
            _sgd_sparse(p, g, lr, mom, wd, group["maximize"])
            return
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


def _sgd_sparse(p, g, lr, mom, wd, maximize):
    """p -= lr * g for a sparse (tensor.sparse.SparseCOO) g, without densifying: its coalesced
    entries (duplicates summed deterministically) index_add-ed into p's rows (SGD's
    _check_sparse has refused momentum and weight decay)."""
    keys, vals = sparse_entries(p, g)
    flat_update(p, lambda f: T.index_add_(f, 0, keys, vals, alpha=lr if maximize else -lr))


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
        # a buffer of another dtype (p's changed since, e.g. by model.double()) keeps its
        # dtype and is read in p's, as PyTorch's
        b = buf if buf.dtype == p.dtype else buf.astype(p.dtype)
        d = d + b * mom if nesterov else b
    p.add_(d * -lr)


# ---- Adam / AdamW ---------------------------------------------------------------------------

class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction, L2 weight decay (or decoupled, as AdamW),
    AMSGrad and maximize; PyTorch's formulas and defaults."""

    _sparse_hint = ", please consider SparseAdam instead"

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False, decoupled_weight_decay: bool = False,
                 master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("Adam", "foreach fused capturable differentiable", torch_impl)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      master_weights=master_weights))

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

    def _refuses_mixed(self, group):
        return True

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


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam, for sparse gradients (nn.Embedding(sparse=True)): a lazy Adam that
    updates the moments and the parameter only at the entries present in the (coalesced)
    gradient; bias correction by the parameter's step count (one per step that it has a
    gradient). Dense gradients are refused, as PyTorch's."""

    _sparse_grads = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _check_options(self, g):
        Adam._check_options(self, dict(g, weight_decay=0.0))

    def _grad(self, p):   # (checked with the others, before any parameter changes)
        if isinstance(p.grad, T.Tensor):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
        return super()._grad(p)

    def _update(self, group, p, g, state):
        if not state:
            state.update(step=0, exp_avg=_zeros(p), exp_avg_sq=_zeros(p))
        state["step"] += 1
        t = state["step"]
        keys, vals = sparse_entries(p, g)
        if not vals.shape[0]:
            return
        if group["maximize"]:
            vals = -vals
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        mf, vf = state["exp_avg"].reshape(-1), state["exp_avg_sq"].reshape(-1)
        old_m, old_v = mf[keys], vf[keys]
        upd_m = (vals - old_m) * (1 - beta1)
        upd_v = (vals * vals - old_v) * (1 - beta2)
        T.index_add_(mf, 0, keys, upd_m)
        T.index_add_(vf, 0, keys, upd_v)
        numer = upd_m + old_m
        denom = T.sqrt(upd_v + old_v) + eps
        step_size = lr * (1 - beta2 ** t) ** 0.5 / (1 - beta1 ** t)   # in double, as PyTorch
        delta = numer / denom * -step_size
        flat_update(p, lambda f: T.index_add_(f, 0, keys, delta))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay."""

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, master_weights: bool = False,
                 **torch_impl: bool | None) -> None:
        impl_flags("AdamW", "foreach fused capturable differentiable", torch_impl)
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True, master_weights=master_weights)


# ---- RMSprop --------------------------------------------------------------------------------

class RMSprop(Optimizer):
    """RMSprop (Hinton): divide by a running RMS of the gradient; optional momentum,
    centered (subtract the running mean's square) and L2 weight decay."""

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, *, master_weights: bool = False) -> None:
        # (PyTorch's positional order, its implementation switches included)
        impl_flags("RMSprop", "foreach capturable differentiable",
                   dict(capturable=capturable, foreach=foreach, differentiable=differentiable))
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize,
                                      master_weights=master_weights))

    def _check_options(self, g):
        for key, what in (("lr", "learning rate"), ("eps", "epsilon value"),
                          ("momentum", "momentum value"), ("weight_decay", "weight_decay value"),
                          ("alpha", "alpha value")):
            _check_nonneg("RMSprop", g[key], what)

    def _refuses_mixed(self, group):
        return bool(group["centered"])   # PyTorch's lerp_ refuses it; the rest promotes

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
