"""Whole-function derivatives: jacobian, hessian, Hessian-vector products.

jacobian builds J one row per output element by reverse mode (default), or one column per
input element by forward mode (`strategy="forward-mode"`, pushing tangents through jvp rules):
pick the mode whose count (outputs vs inputs) is smaller. hessian is the Jacobian of the
gradient; hvp(f, x, v) = H v by double backward, or by forward over reverse.

>>> import tensor as T
>>> from autograd.functional import hessian, hvp, jacobian
>>> x = T.tensor([1.0, 2.0])
>>> jacobian(lambda x: x * x, x).tolist()
[[2.0, 0.0], [0.0, 4.0]]
>>> hessian(lambda x: (x * x * x).sum(), x).tolist()
[[6.0, 0.0], [0.0, 12.0]]
>>> hvp(lambda x: (x * x * x).sum(), x, T.tensor([1.0, 1.0]))[1].tolist()
[6.0, 12.0]
"""
from __future__ import annotations

import tensor as T
from tensor._tensor import Tensor

from .engine import grad
from .forward import _alias, _as_tuple, _inputs, jvp
from .forward import vjp as _vjp
from .grad_mode import enable_grad, no_grad

__all__ = ["jacobian", "hessian", "hvp", "vhp", "vjp", "jvp"]

_STRATEGIES = ("reverse-mode", "forward-mode")


def _zeros(shape, dtype, device) -> Tensor:
    return T.zeros(tuple(shape), dtype=dtype, device=device)


def _onehot(shape, dtype, k: int, device) -> Tensor:
    n = 1
    for s in shape:
        n *= s
    e = T.zeros(n, dtype=dtype, device=device)
    e[k] = 1.0
    return e.reshape(tuple(shape))


def _shape_result(blocks, single_in, single_out):
    """blocks[o][i] -> Tensor / tuple over inputs / tuple over outputs / tuple of tuples, as
    torch.autograd.functional.jacobian."""
    if single_out:
        row = blocks[0]
        return row[0] if single_in else tuple(row)
    return tuple(row[0] for row in blocks) if single_in else tuple(tuple(r) for r in blocks)


def _check_strict(op, outs, xs, second=False):
    """strict=True: every output depends on every input (one backward per output, ones as its
    cotangent: a gradient that is None is independent). second: the outputs are f's gradients,
    each of which must depend on the inputs too (a Hessian without zero blocks)."""
    for j, o in enumerate(outs):
        gs = grad([o], list(xs), [T.ones_like(o)], retain_graph=True, allow_unused=True) \
            if o.requires_grad else [None] * len(xs)
        for i, g in enumerate(gs):
            if g is None:
                what = f"the gradient of f for input {j}" if second else f"output {j} of f"
                raise RuntimeError(f"{op}: {what} is independent of input {i}; strict=True refuses "
                                   "this (as PyTorch's strict mode); pass strict=False to get zeros")


def jacobian(f, inputs, create_graph: bool = False, strategy: str = "reverse-mode", *,
             strict: bool = False, vectorize: bool = False):
    """The Jacobian of f at inputs: for output o and input x, a tensor of shape
    o.shape + x.shape. inputs is a Tensor or a tuple of Tensors; the result is a Tensor when
    both inputs and f's result are single Tensors, a tuple over inputs (or outputs) when one of
    them is a tuple, and a tuple (over outputs) of tuples (over inputs) when both are.

    strategy="reverse-mode": one backward pass per output element; "forward-mode": one jvp
    (forward pass with tangents) per input element. create_graph=True keeps the result
    differentiable (with respect to inputs that require grad). strict=True (reverse mode only,
    as PyTorch's) raises when an output does not depend on an input, instead of giving zeros;
    vectorize is accepted for PyTorch compatibility and changes nothing (a speed hint).
    """
    op = "jacobian"
    del vectorize
    if strategy not in _STRATEGIES:
        raise ValueError(f"{op}: strategy must be one of {_STRATEGIES}, got {strategy!r}")
    if strategy == "forward-mode":
        if strict:
            raise ValueError(f"{op}: strict=True is not supported with strategy='forward-mode' "
                             "(as in PyTorch); use strategy='reverse-mode'")
        return _jacfwd(f, inputs, create_graph)
    xs, single_in = _inputs(inputs, op, create_graph)
    with enable_grad():
        out = f(*xs)
    outs, single_out = _as_tuple(out, "the output of f", op)
    if strict:
        _check_strict(op, outs, xs)
    blocks = []
    for o in outs:
        rows = [[] for _ in xs]
        if o.requires_grad:
            for k in range(o.numel()):
                e = _onehot(o.shape, o.dtype, k, o.device)
                gs = grad([o], list(xs), [e], retain_graph=True, create_graph=create_graph,
                          allow_unused=True)
                for i, (g, x) in enumerate(zip(gs, xs)):
                    rows[i].append(_zeros(x.shape, x.dtype, x.device) if g is None else g)
        blocks.append([_assemble(rows[i], o, x, create_graph, axis=0)
                       for i, x in enumerate(xs)])
    return _shape_result(blocks, single_in, single_out)


def _assemble(parts, o, x, create_graph, axis):
    """Stack per-element slices into the o.shape + x.shape block (zeros when there are none:
    the output does not depend on any input, or is empty)."""
    shape = tuple(o.shape) + tuple(x.shape)
    if not parts or o.numel() == 0 or x.numel() == 0:
        return _zeros(shape, x.dtype, x.device)
    with enable_grad() if create_graph else no_grad():
        r = T.stack(parts, axis=axis).reshape(shape)
    return r if create_graph else r.detach()


def _jacfwd(f, inputs, create_graph):
    op = "jacobian"
    ins, single_in = _as_tuple(inputs, "inputs", op)
    for i, x in enumerate(ins):
        if x.dtype.kind != "f":
            raise TypeError(f"{op}: input {i} is {x.dtype.name}; only floating-point inputs can "
                            "be differentiated")
    base = tuple(_alias(x) if create_graph and x.requires_grad else x.detach() for x in ins)
    cols = None   # cols[o][i]: list of output tangents, one per element of input i
    outs = None
    for i, x in enumerate(base):
        def g(xi, i=i):
            return f(*base[:i], xi, *base[i + 1:])
        for k in range(x.numel()):
            out, tan = jvp(g, x, _onehot(x.shape, x.dtype, k, x.device))
            o_t, single_out = _as_tuple(out, "the output of f", op)
            t_t = (tan,) if single_out else tuple(tan)
            if cols is None:
                outs, cols = o_t, [[[] for _ in base] for _ in o_t]
            for j, t in enumerate(t_t):
                cols[j][i].append(t)
    if outs is None:  # every input is empty: evaluate once for the output shapes
        out = f(*base)
        outs, single_out = _as_tuple(out, "the output of f", op)
        cols = [[[] for _ in base] for _ in outs]
    blocks = []
    for j, o in enumerate(outs):
        row = []
        for i, x in enumerate(base):
            # stack columns last: o.shape + (x.numel(),), then unflatten x's axes
            row.append(_assemble(cols[j][i], o, x, create_graph, axis=o.ndim))
        blocks.append(row)
    return _shape_result(blocks, single_in, single_out)


def _scalar(y, op):
    if not isinstance(y, Tensor) or y.numel() != 1:
        shape = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
        raise ValueError(f"{op}: f must return a one-element Tensor, got {shape}")
    return y


def _gradient_fn(f, op, single_in):
    """x -> grad f(x) with create_graph (the function hessian differentiates again)."""
    def first(*xs):
        xs = tuple(x if x.requires_grad else x.requires_grad_() for x in xs)
        with enable_grad():
            y = _scalar(f(*xs), op)
            if not y.requires_grad:
                gs = (None,) * len(xs)
            else:
                gs = grad(y, list(xs), create_graph=True, allow_unused=True)
        gs = tuple(_zeros(x.shape, x.dtype, x.device) if g is None else g for g, x in zip(gs, xs))
        return gs[0] if single_in else gs
    return first


def hessian(f, inputs, create_graph: bool = False, strategy: str = "reverse-mode", *,
            strict: bool = False, vectorize: bool = False, outer_jacobian_strategy: str | None = None):
    """The Hessian of a scalar f: for inputs x_i, x_j a block of shape x_i.shape + x_j.shape
    (a Tensor for a single input, a tuple of tuples for several). strategy="reverse-mode" is
    reverse over reverse; "forward-mode" is forward over reverse (jvp of the gradient).
    outer_jacobian_strategy is PyTorch's name for strategy; strict=True raises when f or its
    gradient does not depend on an input (PyTorch's strict mode); vectorize changes nothing."""
    op = "hessian"
    del vectorize
    if outer_jacobian_strategy is not None:
        strategy = outer_jacobian_strategy
    ins, single_in = _as_tuple(inputs, "inputs", op)
    if strict:
        xs, _ = _inputs(ins, op, create_graph)
        with enable_grad():
            y = _scalar(f(*xs), op)
            _check_strict(op, [y], xs)
            gs = grad(y, list(xs), create_graph=True)
        _check_strict(op, gs, xs, second=True)
    return jacobian(_gradient_fn(f, op, single_in), ins[0] if single_in else ins,
                    create_graph=create_graph, strategy=strategy)


def _default_v(xs, v, op):
    """PyTorch's v=None: allowed when the input is a single one-element tensor (v = 1)."""
    if v is not None:
        return v
    if len(xs) == 1 and xs[0].numel() == 1:
        return T.ones_like(xs[0].detach())
    raise ValueError(f"{op}: v can be omitted only for a single one-element input; got "
                     f"{len(xs)} input(s) of shape(s) {[tuple(x.shape) for x in xs]}")


def hvp(f, inputs, v=None, create_graph: bool = False, strategy: str = "reverse-over-reverse", *,
        strict: bool = False):
    """(f(inputs), H v) for a scalar f, without forming H.

    strategy="reverse-over-reverse" (default): the gradient is built with create_graph and
    differentiated again against v (double backward). "forward-over-reverse": v is pushed as
    a tangent through the gradient computation (one forward pass over the backward). inputs and
    v: a Tensor, or tuples of Tensors of matching shapes; the product has inputs' structure
    (v may be omitted for a single one-element input, as in PyTorch). strict=True raises when f
    or its gradient does not depend on an input (PyTorch's strict mode) instead of giving zeros.
    """
    op = "hvp"
    if strategy not in ("reverse-over-reverse", "forward-over-reverse"):
        raise ValueError(f"{op}: strategy must be 'reverse-over-reverse' or "
                         f"'forward-over-reverse', got {strategy!r}")
    xs, single_in = _inputs(inputs, op, create_graph)
    vs, _ = _as_tuple(_default_v(xs, v, op), "v", op)
    if strict:
        with enable_grad():
            y = _scalar(f(*xs), op)
            _check_strict(op, [y], xs)
            _check_strict(op, grad(y, list(xs), create_graph=True), xs, second=True)
    if len(vs) != len(xs):
        raise ValueError(f"{op}: got {len(xs)} inputs but {len(vs)} vectors")
    for i, (x, w) in enumerate(zip(xs, vs)):
        if tuple(w.shape) != tuple(x.shape):
            raise ValueError(f"{op}: v[{i}] has shape {tuple(w.shape)} but input {i} has shape "
                             f"{tuple(x.shape)}")
    if strategy == "forward-over-reverse":
        box = []

        def first(*a):
            with enable_grad():
                y = _scalar(f(*a), op)
                box.append(y)
                gs = grad(y, list(a), create_graph=True, allow_unused=True) \
                    if y.requires_grad else (None,) * len(a)
            return tuple(_zeros(x.shape, x.dtype, x.device) if g is None else g for g, x in zip(gs, a))
        _, hv = jvp(first, xs, vs)
        y = box[0]
    else:
        with enable_grad():
            y = _scalar(f(*xs), op)
            gs = grad(y, list(xs), create_graph=True, allow_unused=True) \
                if y.requires_grad else (None,) * len(xs)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None and g.requires_grad]
        hv = (None,) * len(xs)
        if pairs:
            hv = grad([g for g, _ in pairs], list(xs), [w for _, w in pairs],
                      create_graph=create_graph, allow_unused=True)
        hv = tuple(_zeros(x.shape, x.dtype, x.device) if h is None else h for h, x in zip(hv, xs))
    if not create_graph:
        y, hv = y.detach(), tuple(h.detach() for h in hv)
    return y, (hv[0] if single_in else tuple(hv))


def vhp(f, inputs, v=None, create_graph: bool = False, *, strict: bool = False):
    """(f(inputs), v^T H) for a scalar f (PyTorch's vhp): the double backward, which computes
    exactly v^T H (equal to H v wherever f is twice continuously differentiable)."""
    return hvp(f, inputs, v, create_graph=create_graph, strict=strict)


def vjp(f, inputs, v=None, create_graph: bool = False, *, strict: bool = False):
    """(f(inputs), v^T J) as PyTorch's torch.autograd.functional.vjp: the product has the
    structure of inputs (a Tensor for a single Tensor input; autograd.vjp always returns a
    tuple). v may be omitted when f returns a single one-element Tensor. strict=True raises
    when an output does not depend on an input instead of giving zeros."""
    op = "vjp"
    if strict:
        xs, _ = _inputs(inputs, op, create_graph)
        with enable_grad():
            outs, _ = _as_tuple(f(*xs), "the output of f", op)
        _check_strict(op, outs, xs)
    out, gs = _vjp(f, inputs, v, create_graph=create_graph)
    return out, (gs[0] if isinstance(inputs, Tensor) else gs)
