"""Check derivative rules against float64 central differences.

>>> import tensor as T, autograd
>>> x = T.tensor([0.3, -1.2, 2.0], requires_grad=True)
>>> autograd.gradcheck(lambda t: (T.sin(t) * t).sum(), (x,))
True
"""
from __future__ import annotations

import numpy as np

import tensor as T
from tensor._tensor import Tensor

from .engine import grad


class GradcheckError(AssertionError):
    """The analytic and numeric derivatives disagree."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    return [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)]


def _real_flat(t: Tensor) -> np.ndarray:
    """t's values as real numbers, flattened: a complex element gives (real, imaginary)."""
    a = t.detach().numpy()
    if a.dtype.kind == "c":
        a = np.stack([a.real, a.imag], axis=-1)
    return a.astype(np.float64).reshape(-1)


def _directions(x: Tensor) -> tuple:
    """The unit perturbations of one element: 1 for a real input; 1 and 1j for a complex one
    (a complex number is two real variables)."""
    return (1.0, 1j) if x.dtype.kind == "c" else (1.0,)


def _numeric_jacobian(fn, inputs, i, eps):
    """d(outputs' real components)/d(input i's real components), central differences."""
    x = inputs[i]
    base = x.detach().numpy().copy()
    flat = base.reshape(-1)
    cols = []
    for k in range(flat.size):
        for unit in _directions(x):
            vals = []
            for sign in (1, -1):
                pert = flat.copy()
                pert[k] += sign * eps * unit
                args = list(inputs)  # the perturbed input still requires grad (gradgradcheck)
                xi = T.asarray(pert.reshape(base.shape), device=x.device).astype(x.dtype)
                args[i] = xi.requires_grad_()
                vals.append(np.concatenate([_real_flat(o) for o in _outputs(fn, args)]))
            cols.append((vals[0] - vals[1]) / (2 * eps))
    return np.stack(cols, axis=1) if cols else np.zeros((0, 0))


def _analytic_jacobian(fn, inputs, i):
    """One row per real output component: the gradient of that component (for a complex output
    element, of its real part with g = 1 and of its imaginary part with g = 1j: the loss
    Re(conj(g) y)), read as input i's real components."""
    outs = _outputs(fn, inputs)
    width = inputs[i].numel() * len(_directions(inputs[i]))
    rows = []
    for j, o in enumerate(outs):
        units = _directions(o)
        if not o.requires_grad:  # constant in the inputs: zero rows
            rows.extend(np.zeros(width) for _ in range(o.numel() * len(units)))
            continue
        for k in range(o.numel()):
            for unit in units:
                gos = [T.zeros(oo.shape, dtype=oo.dtype, device=oo.device) for oo in outs]
                gos[j].reshape(-1)[k] = unit
                live = [(oo, go) for oo, go in zip(outs, gos) if oo.requires_grad]
                (g,) = grad([oo for oo, _ in live], [inputs[i]], [go for _, go in live],
                            retain_graph=True, allow_unused=True)
                rows.append(np.zeros(width) if g is None else _real_flat(g))
    return np.stack(rows) if rows else np.zeros((0, width))


def _forward_jacobian(fn, inputs, i):
    """The same layout as _numeric_jacobian, one column per real component of input i, each the
    output tangent of a jvp (forward mode) along that component."""
    from .forward import jvp
    x = inputs[i]
    n_out = sum(o.numel() * len(_directions(o)) for o in _outputs(fn, inputs))

    def fi(xi):
        args = list(inputs)
        args[i] = xi
        return tuple(_outputs(fn, args))
    cols = []
    for k in range(x.numel()):
        for unit in _directions(x):
            t = T.zeros(x.shape, dtype=x.dtype, device=x.device)
            t.reshape(-1)[k] = unit
            _, tans = jvp(fi, x, t)
            cols.append(np.concatenate([_real_flat(tt) for tt in tans]) if tans else np.zeros(0))
    return np.stack(cols, axis=1) if cols else np.zeros((n_out, 0))


def _mismatch(what, i, x, ana, num, atol, rtol, raise_exception) -> bool:
    """Whether ana differs from num (raising GradcheckError instead when raise_exception)."""
    if num.shape != ana.shape or not np.allclose(ana, num, atol=atol, rtol=rtol):
        if raise_exception:
            raise GradcheckError(f"gradcheck: {what} Jacobian mismatch for input {i} (shape "
                                 f"{x.shape})\n{what}:\n{ana}\nnumeric:\n{num}")
        return True
    return False


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, *, check_forward_ad: bool = False,
              check_backward_ad: bool = True) -> bool:
    """Compare every input's Jacobian from backward (check_backward_ad) and, with
    check_forward_ad=True, from forward mode (autograd.jvp) with central differences, as
    PyTorch's gradcheck. Inputs are float64 or complex128; complex numbers count as their two
    real parts, and a gradient is PyTorch's conjugate Wirtinger one (dL/dRe z + i dL/dIm z)."""
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype not in (T.float64, T.complex128):
            raise ValueError(f"gradcheck: input {i} is {x.dtype.name}; use float64 or complex128 inputs")
        num = _numeric_jacobian(fn, inputs, i, eps)
        tol = (atol, rtol, raise_exception)
        if check_backward_ad and _mismatch("analytic", i, x, _analytic_jacobian(fn, inputs, i), num, *tol):
            return False
        if check_forward_ad and _mismatch("forward-mode", i, x, _forward_jacobian(fn, inputs, i), num, *tol):
            return False
    return True


def _default_grad_outputs(outs):
    """Fixed random cotangents, one per differentiable output, requiring grad (so that the
    check covers the second derivative's dependence on them too, as PyTorch's)."""
    rng = np.random.default_rng(0)
    gos = []
    for o in outs:
        a = rng.standard_normal(o.shape)
        if o.dtype.kind == "c":
            a = a + 1j * rng.standard_normal(o.shape)
        gos.append(T.asarray(a, device=o.device).astype(o.dtype).requires_grad_())
    return gos


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True) -> bool:
    """gradcheck of the backward pass itself (built with create_graph=True), as PyTorch's: the
    function checked maps (inputs, grad_outputs) to the gradients of fn's differentiable
    outputs, contracted with grad_outputs, with respect to the inputs that require grad.
    grad_outputs: one cotangent per differentiable output of fn (random, and requiring grad,
    when None); those that require grad are differentiated too. check_rev_over_rev: reverse
    mode over the backward (double backward); check_fwd_over_rev: forward mode over it."""
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        return True
    outs = [o for o in _outputs(fn, inputs) if o.requires_grad]
    if grad_outputs is None:
        gos = _default_grad_outputs(outs)
    else:
        gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        if len(gos) != len(outs):
            raise ValueError(f"gradgradcheck: fn has {len(outs)} differentiable outputs but "
                             f"{len(gos)} grad_outputs were given")
        for k, (o, g) in enumerate(zip(outs, gos)):
            if not isinstance(g, Tensor) or tuple(g.shape) != tuple(o.shape):
                shape = tuple(g.shape) if isinstance(g, Tensor) else type(g).__name__
                raise ValueError(f"gradgradcheck: grad_outputs[{k}] has shape {shape} but output "
                                 f"{k} has shape {tuple(o.shape)}")
    n = len(inputs)

    def first_grad(*args):
        xs, ws = args[:n], args[n:]
        os_ = [o for o in _outputs(fn, xs) if o.requires_grad]
        targets = [a for a in xs if isinstance(a, Tensor) and a.requires_grad]
        if not os_:
            return tuple(T.zeros(t.shape, dtype=t.dtype, device=t.device) for t in targets)
        gs = grad(os_, targets, list(ws), create_graph=True, allow_unused=True)
        return tuple(g if g is not None else T.zeros(t.shape, dtype=t.dtype, device=t.device)
                     for g, t in zip(gs, targets))
    return gradcheck(first_grad, inputs + tuple(gos), eps, atol, rtol, raise_exception,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
