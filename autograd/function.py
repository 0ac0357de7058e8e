"""Custom differentiable functions in PyTorch's shape.

>>> import tensor as T
>>> from autograd import Function
>>> class Cube(Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return g * 3 * x * x
>>> x = T.tensor([2.0], requires_grad=True)
>>> Cube.apply(x).sum().backward(); x.grad.tolist()
[12.0]
"""
from __future__ import annotations

import functools
import weakref

from tensor._tensor import Tensor

from . import graph as _graph
from .grad_mode import no_grad, state
from .graph import Ctx, Node, Rule, _tangents, edge_of, flat_tensors, meta_of


class _FnCtx(Ctx):
    def __init__(self):
        super().__init__((), {}, None)
        self.needs_input_grad = ()
        self.materialize_grads = True
        self.out_meta = ()   # (shape, dtype, device) of each differentiable output, else None

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors):
        """PyTorch's: tensors jvp reads (as ctx.saved_tensors, shared with backward's)."""
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """PyTorch's: these outputs (indices, masks) get no gradient and no history; backward
        still receives a gradient slot for them (zeros, or None)."""
        self.non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors) -> None:
        """PyTorch's: forward modified these inputs in place and returns them; the returned
        tensor is the input itself, its history now this function (a leaf that requires grad
        may not be modified so)."""
        self.dirty = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """PyTorch's: True (the default) passes backward zeros for the gradient of an output
        nothing used; False passes None."""
        self.materialize_grads = bool(value)


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads) (or PyTorch 2's
    forward(*args) with setup_context(ctx, inputs, output)), and jvp(ctx, *tangents) for
    forward mode; call .apply()."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @staticmethod
    def setup_context(ctx, inputs, output):   # PyTorch 2's: defined, forward takes no ctx
        raise NotImplementedError

    @staticmethod
    def jvp(ctx, *tangents):   # forward mode: the outputs' tangents
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = _FnCtx()
        # only tensors passed directly are inputs (as PyTorch's): one inside a list gets no edge
        tensors = [a for a in args if type(a) is Tensor]
        need = state.grad_enabled and any(t.requires_grad for t in tensors)
        ctx.needs_input_grad = tuple(type(a) is Tensor and a.requires_grad for a in args)
        tans = _tangents(args) if state.fw_level else ()
        st_depth = state.depth
        state.depth += 1  # ops inside forward are not recorded
        try:
            if _defines(cls, "setup_context"):   # PyTorch 2's style: forward without ctx
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            state.depth = st_depth
        if any(t is not None for t in tans):
            _push_tangents(cls, ctx, out, tans)
        if not need:
            return out
        return _record(cls, ctx, args, kwargs, out, tensors)


def _defines(cls, name: str) -> bool:
    return getattr(cls, name, None) is not getattr(Function, name, None)


def _push_tangents(cls, ctx, out, tans) -> None:
    """Forward mode: the outputs' tangents from the user's jvp(ctx, *input tangents) (None for
    an input without one), as PyTorch's; a Function without jvp refuses."""
    if not _defines(cls, "jvp"):
        raise NotImplementedError(f"{cls.__name__}: forward-mode differentiation needs a jvp "
                                  "staticmethod (jvp(ctx, *tangents) -> output tangents)")
    lvl, state.fw_level = state.fw_level, 0   # tangent arithmetic carries no tangents itself
    try:
        r = cls.jvp(ctx, *tans)
    finally:
        state.fw_level = lvl
    outs = out if isinstance(out, tuple) else (out,)
    rs = r if isinstance(r, tuple) else (r,)
    if len(rs) != len(outs):
        raise RuntimeError(f"{cls.__name__}.jvp returned {len(rs)} tangents for {len(outs)} outputs")
    for o, t in zip(outs, rs):
        if t is not None and type(o) is Tensor:
            meta_of(o).tangent = t
            state.fw_tensors.append(weakref.ref(o))


def _record(cls, ctx, args, kwargs, out, tensors):
    """The node of a Function call on the graph; its differentiable outputs its outputs."""
    ctx.args = tuple(tensors)  # what backward returns grads for
    edges = [edge_of(t) for t in tensors]
    outs = out if isinstance(out, tuple) else (out,)
    rule = Rule(cls.__name__, _vjp_of(cls, len(args), [type(a) is Tensor for a in args]),
                conj=False)   # a user's backward follows the complex convention itself
    node = Node(cls.__name__ + "Backward", rule, ctx, edges, n_out=len(outs))
    # an output that is an input, a tensor autograd knows already or one returned twice
    # becomes a fresh alias (as PyTorch's): marking the tensor itself would rewrite the
    # graph of every other use of it
    seen = {id(t) for t in flat_tensors(args)} | {id(t) for t in flat_tensors(tuple(kwargs.values()))}
    outs = list(outs)
    frozen = getattr(ctx, "non_differentiable", ())
    dirty = getattr(ctx, "dirty", ())
    for i, o in enumerate(outs):
        if type(o) is not Tensor or o.dtype.kind not in "fc" or id(o) in frozen:
            continue        # (a non-differentiable output keeps what it is: no history)
        if id(o) in dirty:
            if o._requires_grad and o.grad_fn is None:
                raise RuntimeError(f"{cls.__name__}: a leaf tensor that requires grad was "
                                   f"modified in place (mark_dirty)")
        elif id(o) in seen or o._requires_grad or o.grad_fn is not None:
            tan = o._ag.tangent if o._ag is not None else None
            o = outs[i] = o._view(o._shape, o._strides)
            if tan is not None:
                meta_of(o).tangent = tan
        seen.add(id(o))
        o._requires_grad = True
        o.grad_fn = node
        if i or id(o) in dirty:
            meta_of(o).output_nr = i
    # a saved output is kept as an alias without graph (the output itself would make a cycle
    # ctx -> output -> node -> ctx: freed only by the garbage collector, after the user dropped
    # it), linked to this node again when backward runs (vjp below), as the built-in rules' are
    saved = getattr(ctx, "saved_tensors", ())
    if any(type(t) is Tensor and t.grad_fn is node for t in saved):
        ctx._saved_outs = {i: (t._ag.output_nr if t._ag is not None else 0)
                          for i, t in enumerate(saved) if type(t) is Tensor and t.grad_fn is node}
        ctx.saved_tensors = tuple(_graph._alias(t) if i in ctx._saved_outs else t
                                  for i, t in enumerate(saved))
        ctx._node = weakref.ref(node)
    if state.saved_hooks and getattr(ctx, "saved_tensors", ()):
        pair = state.saved_hooks[-1]
        ctx.saved_tensors = tuple(_graph._PACK(t, node, pair) if type(t) is Tensor else t
                                  for t in ctx.saved_tensors)
        ctx.packed = True
    node.saved.extend((t, t._storage, t._storage.version) for t in getattr(ctx, "saved_tensors", ())
                      if type(t) is Tensor)
    ctx.out_meta = tuple((o.shape, o.dtype, o.device) if type(o) is Tensor and o.grad_fn is node
                         else None for o in outs)
    return tuple(outs) if isinstance(out, tuple) else outs[0]


def once_differentiable(backward):
    """PyTorch's decorator for a Function's backward: it runs without recording (its result
    cannot be differentiated again)."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            return backward(ctx, *grads)
    return wrapper


def _linked(saved, outs, node):
    """saved with fresh aliases of the saved outputs (outs: position -> output index) that are
    the node's outputs in a create_graph backward (their gradients flow back through it)."""
    return tuple(_graph.output_alias(t, node, outs[i]) if i in outs else t for i, t in enumerate(saved))


def _vjp_of(cls, nargs, is_tensor):
    def vjp(ctx, g):
        gs = g if isinstance(g, list) else [g]
        if ctx.materialize_grads and any(x is None for x in gs):
            from tensor import zeros
            gs = [zeros(m[0], dtype=m[1], device=m[2]) if x is None and m is not None else x
                  for x, m in zip(gs, ctx.out_meta)]
        outs = getattr(ctx, "_saved_outs", None)
        if outs and state.grad_enabled:   # create_graph: the saved outputs stand for the node's
            kept = ctx.saved_tensors
            ctx.saved_tensors = _linked(kept, outs, ctx._node())
            try:
                r = cls.backward(ctx, *gs)
            finally:
                ctx.saved_tensors = kept
        else:
            r = cls.backward(ctx, *gs)
        r = r if isinstance(r, tuple) else (r,)
        if len(r) != nargs:
            raise RuntimeError(f"{cls.__name__}.backward returned {len(r)} gradients for "
                               f"{nargs} inputs")
        return tuple(x for x, t in zip(r, is_tensor) if t)
    return vjp
