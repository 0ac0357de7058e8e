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


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compare every input's Jacobian from backward with central differences. Inputs are
    float64 or complex128; complex numbers count as their two real parts, and a gradient is
    PyTorch's conjugate Wirtinger one (dL/dRe z + i dL/dIm z)."""
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype not in (T.float64, T.complex128):
            raise ValueError(f"gradcheck: input {i} is {x.dtype.name}; use float64 or complex128 inputs")
        num = _numeric_jacobian(fn, inputs, i, eps)
        ana = _analytic_jacobian(fn, inputs, i)
        if num.shape != ana.shape or not np.allclose(ana, num, atol=atol, rtol=rtol):
            if raise_exception:
                raise GradcheckError(f"gradcheck: Jacobian mismatch for input {i} (shape {x.shape})"
                                     f"\nanalytic:\n{ana}\nnumeric:\n{num}")
            return False
    return True


def gradgradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True) -> bool:
    """gradcheck of the gradient itself (the backward pass built with create_graph=True),
    contracted with fixed random output weights."""
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(fn, inputs)
    rng = np.random.default_rng(0)
    weights = [T.asarray(rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape)
                                                         if o.dtype.kind == "c" else 0),
                         device=o.device).astype(o.dtype) for o in outs]

    def first_grad(*args):
        os_ = _outputs(fn, args)
        targets = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        gs = grad(os_, targets, weights, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else T.zeros(t.shape, dtype=t.dtype, device=t.device)
                     for g, t in zip(gs, targets))
    if not diff:
        return True
    return gradcheck(first_grad, inputs, eps, atol, rtol, raise_exception)
