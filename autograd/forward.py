"""Forward mode: Jacobian-vector products by pushing tangents through the jvp rules, and
vector-Jacobian products (the reverse mode) in the same functional shape.

`jvp(f, primals, tangents)` runs f once: every recorded op whose inputs carry a tangent asks
its rule for the output's tangent (J t), so the cost is about one extra forward pass, whatever
the number of inputs and outputs (no double backward).

>>> import tensor as T
>>> from autograd.forward import jvp, vjp
>>> x = T.tensor([0.0, 1.0])
>>> out, tan = jvp(lambda x: T.sin(x) * x, x, T.tensor([1.0, 1.0]))
>>> [round(v, 4) for v in tan.tolist()]         # d/dx (x sin x) = sin x + x cos x
[0.0, 1.3818]
>>> out, (g,) = vjp(lambda x: (x * x).sum(), x)
>>> g.tolist()
[0.0, 2.0]
"""
from __future__ import annotations

from tensor._tensor import Tensor

from .engine import grad
from .grad_mode import state
from .graph import edge_of, meta_of

__all__ = ["jvp", "vjp"]


def _as_tuple(x, what: str, op: str) -> tuple[tuple, bool]:
    """(tuple of tensors, was it a single tensor)."""
    if isinstance(x, Tensor):
        return (x,), True
    if isinstance(x, list | tuple):
        for i, t in enumerate(x):
            if not isinstance(t, Tensor):
                raise TypeError(f"{op}: {what}[{i}] must be a Tensor, got {type(t).__name__}")
        return tuple(x), False
    raise TypeError(f"{op}: {what} must be a Tensor or a tuple/list of Tensors, got "
                    f"{type(x).__name__}")


def _alias(p: Tensor) -> Tensor:
    """A new Tensor object on p's data that stands for p in the graph (same grad_fn, or the same
    leaf accumulator) but has its own autograd slot, so a tangent set on it never touches p."""
    a = Tensor._make(p._storage, p._shape, p._strides, p._offset, p._dtype)
    if p._requires_grad:
        node, nr = edge_of(p)
        a._requires_grad = True
        if p.grad_fn is not None:
            a.grad_fn = node
            if nr:
                meta_of(a).output_nr = nr
        else:  # a leaf: gradients reaching the alias accumulate into p.grad
            meta_of(a).acc = node
    return a


def _check_tangent(i: int, p: Tensor, t, op: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: tangent {i} must be a Tensor, got {type(t).__name__}")
    if tuple(t.shape) != tuple(p.shape):
        raise ValueError(f"{op}: tangent {i} has shape {tuple(t.shape)} but its primal has shape "
                         f"{tuple(p.shape)}; a tangent must have the shape of its primal")
    if p.dtype.kind not in "fc":
        raise TypeError(f"{op}: primal {i} is {p.dtype.name}; only floating-point and complex "
                        "primals can carry a tangent")
    if t.device != p.device:
        raise ValueError(f"{op}: tangent {i} is on {t.device} but its primal is on {p.device}")
    if t.dtype is not p.dtype:
        t = t.astype(p.dtype)
    return t


def _zeros(o: Tensor) -> Tensor:
    import tensor as T
    return T.zeros(o.shape, dtype=o.dtype, device=o.device)


def jvp(f, primals, tangents):
    """(f(*primals), J_f(primals) @ tangents), computed in one forward pass.

    primals: a Tensor or a tuple/list of Tensors (f receives them as positional arguments);
    tangents: the same structure, each the shape of its primal. Returns (outputs,
    output_tangents) with the structure of f's result (a Tensor or a tuple/list of Tensors);
    an output that does not depend on the primals gets a zero tangent.

    Inside f, the primals are fresh aliases that carry the tangents (the caller's tensors are
    not touched); they stand for the primals in the reverse-mode graph, so when grad is
    enabled the outputs (and the output tangents) remain differentiable with respect to the
    primals. Nested jvp (forward over forward) is not supported.
    """
    op = "jvp"
    if state.fw_level > 0:
        raise NotImplementedError("jvp: nested forward mode (jvp inside jvp) is not supported; "
                                  "compute higher forward derivatives with jacobian/hessian")
    ps, single = _as_tuple(primals, "primals", op)
    ts, _ = _as_tuple(tangents, "tangents", op)
    if len(ps) != len(ts):
        raise ValueError(f"{op}: got {len(ps)} primals but {len(ts)} tangents")
    ts = tuple(_check_tangent(i, p, t, op) for i, (p, t) in enumerate(zip(ps, ts)))
    xs = tuple(_alias(p) for p in ps)
    for x, t in zip(xs, ts):
        meta_of(x).tangent = t
    touched = list(xs)
    state.fw_level += 1
    try:
        out = f(*xs)
        outs, single_out = _as_tuple(out, "the output of f", op)
        tans = []
        for o in outs:
            m = o._ag
            t = m.tangent if m is not None else None
            tans.append(t if t is not None else _zeros(o))
            touched.append(o)
    finally:
        state.fw_level -= 1
        for t in touched:  # no tangent outlives the call
            if t._ag is not None:
                t._ag.tangent = None
        _clear_recorded()
    if single_out:
        return outs[0], tans[0]
    return type(out)(outs), type(out)(tans)


def _clear_recorded():
    """Drop the tangents of every tensor the recording hook gave one during the call
    (graph.record lists them in state.fw_tensors): an intermediate that f kept somewhere must
    not carry a stale tangent into a later jvp."""
    refs = state.fw_tensors
    for r in refs:
        t = r()
        if t is not None and t._ag is not None:
            t._ag.tangent = None
    refs.clear()


def _inputs(inputs, op, create_graph, what="input"):
    """The tensors f is evaluated at: differentiable stand-ins of the caller's tensors (with
    create_graph, inputs that require grad keep their link, so results stay differentiable)."""
    ins, single = _as_tuple(inputs, what + "s", op)
    for i, x in enumerate(ins):
        if x.dtype.kind != "f":   # a complex Jacobian has no single layout: backward / grad do
            raise TypeError(f"{op}: {what} {i} is {x.dtype.name}; {op} takes real floating-point "
                            f"{what}s (for complex ones use backward() or autograd.grad)")
    xs = tuple(_alias(x) if create_graph and x.requires_grad else x.detach().requires_grad_()
               for x in ins)
    return xs, single


def vjp(f, primals, v=None, create_graph: bool = False):
    """(f(*primals), v^T J_f(primals)) by reverse mode: one gradient per primal (zeros where the
    output does not depend on it).

    Returns (outputs, grads): grads is always a tuple, one entry per primal.
    v: the cotangent, the structure and shapes of f's result (a Tensor or tuple/list); it may
    be omitted when f returns a single one-element tensor. With create_graph=True the result
    is differentiable (with respect to the primals, when they require grad); otherwise outputs
    and gradients are returned detached.
    """
    op = "vjp"
    xs, single = _inputs(primals, op, create_graph, "primal")
    from .grad_mode import enable_grad
    with enable_grad():
        out = f(*xs)
    outs, single_out = _as_tuple(out, "the output of f", op)
    if v is None:
        vs = (None,) * len(outs)
    else:
        vs, _ = _as_tuple(v, "v", op)
        if len(vs) != len(outs):
            raise ValueError(f"{op}: f returned {len(outs)} outputs but v has {len(vs)} entries")
        for i, (o, g) in enumerate(zip(outs, vs)):
            if tuple(g.shape) != tuple(o.shape):
                raise ValueError(f"{op}: v[{i}] has shape {tuple(g.shape)} but output {i} has "
                                 f"shape {tuple(o.shape)}")
    keep = [(o, g) for o, g in zip(outs, vs) if o.requires_grad]
    if keep:
        gs = grad([o for o, _ in keep], list(xs),
                  None if v is None else [g for _, g in keep],
                  create_graph=create_graph, allow_unused=True)
    else:
        gs = (None,) * len(xs)
    gs = tuple(_zeros(x) if g is None else g if create_graph else g.detach()
               for g, x in zip(gs, xs))
    if not create_graph:
        outs = tuple(o.detach() for o in outs)
    out_r = outs[0] if single_out else type(out)(outs)
    return out_r, gs
