"""Activation checkpointing: trade compute for memory.

`checkpoint(fn, *args)` runs fn and records its graph as usual, then drops everything that
graph saved for backward (the activations), keeping only fn, its arguments and the position of
the random generator. The first time backward reaches one of fn's nodes, fn is run again with
the same random state, and each of fn's nodes runs its rule on the recomputed tensors. The
recorded nodes themselves (their edges, order and hooks) stay the ones of the first run, so:

* gradients are bitwise those of the run without checkpointing (same rules, same order of
  accumulation);
* everything fn uses reaches the graph: its tensor arguments, tensors captured by closure
  (parameters), nested checkpoints; `backward()`, `autograd.grad()` (which leaves .grad alone)
  and create_graph (higher derivatives) work as without checkpointing;
* a recomputation that disagrees with the first run (other output shapes, dtypes or devices,
  or another graph) is a RuntimeError, as is an argument modified in place in between.

>>> import tensor as T, autograd
>>> from autograd.checkpoint import checkpoint
>>> w = T.tensor([1.0, 2.0], requires_grad=True)
>>> x = T.tensor([3.0, 4.0], requires_grad=True)
>>> y = checkpoint(lambda x: T.sin(x * w) * w, x)
>>> y.sum().backward()
>>> [round(v, 4) for v in x.grad.tolist()], [round(v, 4) for v in w.grad.tolist()]
([-0.99, -0.582], [-2.8289, -0.1746])
"""
from __future__ import annotations

import contextlib

from tensor import amp
from tensor import random as _random
from tensor._tensor import Tensor

from . import engine, graph
from .checkpoint_selective import (  # noqa: F401 (PyTorch's torch.utils.checkpoint names)
    CheckpointPolicy,
    SelectiveCheckpointContext,
    create_selective_checkpoint_contexts,
)
from .grad_mode import enable_grad, is_grad_enabled, state
from .graph import Ctx, Meta, Node, Rule

__all__ = ["checkpoint", "checkpoint_sequential", "create_selective_checkpoint_contexts",
           "CheckpointPolicy", "SelectiveCheckpointContext"]


def _tensors_in(x, out):
    """Tensors in a (nested) tuple/list/dict, in order."""
    if type(x) is Tensor:
        out.append(x)
    elif isinstance(x, list | tuple):
        for v in x:
            _tensors_in(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _tensors_in(v, out)
    return out


def _inner_nodes(outs, s0):
    """The nodes recorded since sequence number s0 that lead to outs, in a deterministic
    breadth-first order, with each node's edge pattern: per edge None, ("in", index, nr) for
    an edge to another of these nodes, or ("out", nr) for an edge leaving fn (an argument's
    node, a captured parameter's accumulator...)."""
    def inner(n):
        return type(n) is Node and n.seq >= s0

    nodes, index = [], {}
    for o in outs:
        n = o.grad_fn
        if n is not None and inner(n) and id(n) not in index:
            index[id(n)] = len(nodes)
            nodes.append(n)
    k = 0
    while k < len(nodes):
        for e in nodes[k].next:
            if e is not None and inner(e[0]) and id(e[0]) not in index:
                index[id(e[0])] = len(nodes)
                nodes.append(e[0])
        k += 1
    sig = []
    for n in nodes:
        edges = tuple(None if e is None else ("in", index[id(e[0])], e[1]) if inner(e[0])
                      else ("out", e[1]) for e in n.next)
        sig.append((n.op, n.n_out, edges))
    roots = tuple(index.get(id(o.grad_fn)) if o.grad_fn is not None else None for o in outs)
    return nodes, (roots, tuple(sig))


def _contexts(context_fn):
    """(forward, recomputation) context managers of PyTorch's context_fn (selective
    checkpointing's: autograd/checkpoint_selective.py); two empty ones when it is None."""
    if context_fn is None:
        return contextlib.nullcontext(), contextlib.nullcontext()
    pair = context_fn()
    if not (isinstance(pair, tuple) and len(pair) == 2
            and all(hasattr(c, "__enter__") and hasattr(c, "__exit__") for c in pair)):
        raise TypeError("checkpoint: context_fn must return two context managers (forward, "
                        f"recomputation), got {pair!r:.80}")
    return pair


def _describe(o):
    return f"shape {tuple(o.shape)}, {o.dtype.name}, {o.device}"


class _Record:
    """What a checkpoint keeps between forward and backward: fn, its arguments (with their
    storage versions), the random state, what fn's outputs and graph looked like, and the
    nodes of the latest recomputation not yet consumed by backward."""

    __slots__ = ("fn", "args", "kwargs", "rng", "amp", "versions", "out_meta", "sig", "new",
                 "name", "context_fn", "re_ctx")

    def take(self, i: int) -> Node:
        """The recomputed twin of recorded node i (recomputing fn when it is not at hand: the
        first node backward reaches, or a second backward with retain_graph)."""
        new = self.new
        if new is None or new[i] is None:
            self.recompute()
            new = self.new
        n, new[i] = new[i], None
        return n

    def recompute(self):
        for t, storage, version in self.versions:
            if storage.version != version:
                raise RuntimeError(
                    f"checkpoint: an argument of {self.name} (shape {tuple(t.shape)}, "
                    f"{t.dtype.name}) was modified in place after the forward pass (version "
                    f"{version}, now {storage.version}); the recomputation in backward would "
                    "see other values. Clone it before modifying it, or do not checkpoint")
        gen = _random.default_generator
        cur = gen.get_state()
        if self.rng is not None:
            gen.set_state(self.rng)
        ctx = self.re_ctx
        if ctx is None:   # a second recomputation: a context that is not ours is entered once
            ctx = _contexts(self.context_fn)[1]
        elif not getattr(ctx, "reusable", False):
            self.re_ctx = None
        try:
            with enable_grad(), amp.state_as(self.amp), ctx:
                s0 = next(graph._seq)
                out = self.fn(*self.args, **self.kwargs)
        finally:
            gen.set_state(cur)
        outs = _tensors_in(out, [])
        meta = [(tuple(o.shape), o.dtype, o.device) for o in outs]
        if meta != self.out_meta:
            old = "; ".join(f"shape {s}, {d.name}, {dev}" for s, d, dev in self.out_meta)
            got = "; ".join(_describe(o) for o in outs)
            raise RuntimeError(
                f"checkpoint: recomputing {self.name} in backward gave outputs [{got}] but the "
                f"forward pass gave [{old}]; fn must compute the same thing when run again "
                "(same shapes, dtypes and devices, no dependence on outside state)")
        nodes, sig = _inner_nodes(outs, s0)
        if sig != self.sig:
            raise RuntimeError(
                f"checkpoint: recomputing {self.name} in backward recorded another graph than the "
                f"forward pass (forward: {[s[0] for s in self.sig[1]]}, recomputation: "
                f"{[s[0] for s in sig[1]]}); fn must run the same ops when run again")
        self.new = nodes


def _replayed(rec: _Record, i: int):
    """The rule of recorded node i: run its recomputed twin through the engine's own rule call
    (saved-tensor checks, the twin's output standing for the node's output under create_graph,
    its tangent for forward over reverse). The twin is freed at once unless create_graph needs
    it; a later backward with retain_graph recomputes."""
    def vjp(ctx, g):
        n = rec.take(i)
        return engine._call_rule(n, g if n.multi else [g], retain_graph=is_grad_enabled())
    return vjp


def _strip(node: Node, rec: _Record, i: int):
    """Drop what node saved for backward. Its ctx keeps one Meta per tensor input, in order:
    the engine reads them to check the gradients' shapes (the twin's rule returns one gradient
    per tensor input already)."""
    metas = []
    for a in node.ctx.args:
        for x in (a if isinstance(a, list | tuple) else (a,)):
            if type(x) is Tensor or isinstance(x, Meta):
                metas.append(x if type(x) is Meta else Meta(x))   # (never a packed tensor)
    node.ctx = Ctx(tuple(metas), {}, None, None)
    node.ctx.keeps = True   # released after a backward (the recomputation's inputs)
    node.saved = []
    node.rule = Rule(node.op, _replayed(rec, i), None, ())


def checkpoint(fn, *args, preserve_rng_state: bool = True, use_reentrant: bool | None = None,
               determinism_check: str = "default", debug: bool = False, **kwargs):
    """fn(*args, **kwargs), keeping none of its activations for backward: they are recomputed
    (fn is run again) when backward needs them.

    PyTorch's keywords are taken, not passed on to fn: use_reentrant (either value: there is
    one implementation, which behaves as PyTorch's non-reentrant one: gradients reach
    parameters whether or not an input requires grad, and autograd.grad works through it),
    determinism_check ("default" or "none": the recomputation's outputs and recorded ops are
    always compared with the forward's, since backward needs them alike), debug, and
    context_fn: a function returning two context managers, entered around the forward run and
    around the recomputation; selective checkpointing's come from
    `functools.partial(create_selective_checkpoint_contexts, policy)` (ops whose outputs a policy
    keeps are not run again: autograd/checkpoint_selective.py).

    fn may take any arguments (tensors that require grad or not, other values) and use tensors
    captured by closure; it may return a Tensor or a (nested) tuple/list/dict holding tensors.
    It must be deterministic apart from the default random generator, whose position is saved
    and restored for the recomputation when preserve_rng_state is true (so a dropout mask is
    drawn again identically); fn must not modify its arguments in place. Without grad mode, or
    when nothing in fn requires grad, this is a plain call.
    """
    if not callable(fn):
        raise TypeError(f"checkpoint: fn must be callable, got {type(fn).__name__}")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"checkpoint: determinism_check must be 'default' or 'none', got "
                         f"{determinism_check!r}")
    context_fn = kwargs.pop("context_fn", None)
    if context_fn is not None and not callable(context_fn):
        raise TypeError(f"checkpoint: context_fn must be callable, got {type(context_fn).__name__}")
    if not is_grad_enabled():
        return fn(*args, **kwargs)
    fwd_ctx, re_ctx = _contexts(context_fn)
    rng = _random.default_generator.get_state() if preserve_rng_state else None
    ins = _tensors_in(args, []) + _tensors_in(kwargs, [])
    graph.refresh_stale(ins)  # now, not inside fn: the recomputation must record what fn did
    versions = [(t, t._storage, t._storage.version) for t in ins]
    regions = amp.get_state()   # the recomputation runs under the same autocast regions
    s0 = next(graph._seq)
    # saved_tensors_hooks do not see fn's saved tensors: they are dropped below (packing them,
    # a copy to the host under save_on_cpu, would only cost); the recomputation's are seen
    hooks, state.saved_hooks = state.saved_hooks, []
    try:
        with amp.state_as(regions), fwd_ctx:   # (both runs make their own casts, none from the cache)
            out = fn(*args, **kwargs)
    finally:
        state.saved_hooks = hooks
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    for t, storage, version in versions:
        if storage.version != version:
            raise RuntimeError(
                f"checkpoint: {name} modified its argument (shape {tuple(t.shape)}) in place; the "
                "recomputation in backward would see the modified value. Clone it inside fn")
    outs = _tensors_in(out, [])
    nodes, sig = _inner_nodes(outs, s0)
    if not nodes:  # nothing recorded (no input or parameter requires grad): nothing to keep
        return out
    rec = _Record()
    rec.fn, rec.args, rec.kwargs, rec.rng, rec.name = fn, args, kwargs, rng, name
    rec.amp, rec.context_fn, rec.re_ctx = regions, context_fn, re_ctx
    rec.versions = [(Meta(t), storage, version) for t, storage, version in versions]
    rec.out_meta = [(tuple(o.shape), o.dtype, o.device) for o in outs]
    rec.sig, rec.new = sig, None
    for i, n in enumerate(nodes):
        _strip(n, rec, i)
    return out


def _segments(n: int, segments: int):
    """[start, stop) bounds of `segments` nearly equal chunks (the first ones one longer)."""
    q, r = divmod(n, segments)
    bounds, start = [], 0
    for k in range(segments):
        stop = start + q + (1 if k < r else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          preserve_rng_state: bool = True, determinism_check: str = "default",
                          debug: bool = False):
    """Run functions (callables applied one after the other) as `segments` chunks, each but the
    last under checkpoint: only the chunk boundaries are kept for backward, so activation
    memory is about (segments + length / segments) layers instead of length
    (segments ~ sqrt(length) is the usual choice)."""
    functions = list(functions)
    if not functions:
        raise ValueError("checkpoint_sequential: functions is empty")
    if int(segments) != segments or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be a positive integer, got "
                         f"{segments!r}")
    segments = min(int(segments), len(functions))

    def chunk(start, stop):
        def run(x):
            for f in functions[start:stop]:
                x = f(x)
            return x
        run.__qualname__ = f"checkpoint_sequential[{start}:{stop}]"
        return run

    bounds = _segments(len(functions), segments)
    for start, stop in bounds[:-1]:
        input = checkpoint(chunk(start, stop), input, preserve_rng_state=preserve_rng_state,
                           use_reentrant=use_reentrant, determinism_check=determinism_check,
                           debug=debug)
    return chunk(*bounds[-1])(input)

