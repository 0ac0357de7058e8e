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


def _numeric_jacobian(fn, inputs, i, eps):
    """d(flattened outputs)/d(flattened input i), by central differences in float64."""
    x = inputs[i]
    base = x.detach().numpy().copy()
    flat = base.reshape(-1)
    cols = []
    for k in range(flat.size):
        vals = []
        for sign in (1, -1):
            pert = flat.copy()
            pert[k] += sign * eps
            args = list(inputs)  # the perturbed input still requires grad (gradgradcheck)
            args[i] = T.asarray(pert.reshape(base.shape), device=x.device).astype(x.dtype).requires_grad_()
            vals.append(np.concatenate([o.detach().astype("float64").numpy().reshape(-1)
                                        for o in _outputs(fn, args)]))
        cols.append((vals[0] - vals[1]) / (2 * eps))
    return np.stack(cols, axis=1) if cols else np.zeros((0, 0))


def _analytic_jacobian(fn, inputs, i):
    outs = _outputs(fn, inputs)
    sizes = [o.numel() for o in outs]
    rows = []
    for j, o in enumerate(outs):
        if not o.requires_grad:  # constant in the inputs: zero rows
            rows.extend(np.zeros(inputs[i].numel()) for _ in range(sizes[j]))
            continue
        for k in range(sizes[j]):
            gos = [T.zeros(oo.shape, dtype=oo.dtype, device=oo.device) for oo in outs]
            gos[j].reshape(-1)[k] = 1.0
            live = [(oo, go) for oo, go in zip(outs, gos) if oo.requires_grad]
            (g,) = grad([oo for oo, _ in live], [inputs[i]], [go for _, go in live],
                        retain_graph=True, allow_unused=True)
            rows.append(np.zeros(inputs[i].numel()) if g is None else
                        g.astype("float64").numpy().reshape(-1))
    return np.stack(rows) if rows else np.zeros((0, inputs[i].numel()))


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compare every input's Jacobian from backward with central differences."""
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype is not T.float64:
            raise ValueError(f"gradcheck: input {i} is {x.dtype.name}; use float64 inputs")
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
    weights = [T.asarray(rng.standard_normal(o.shape), device=o.device).astype(o.dtype) for o in outs]

    def first_grad(*args):
        os_ = _outputs(fn, args)
        targets = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        gs = grad(os_, targets, weights, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else T.zeros(t.shape, dtype=t.dtype, device=t.device)
                     for g, t in zip(gs, targets))
    if not diff:
        return True
    return gradcheck(first_grad, inputs, eps, atol, rtol, raise_exception)
