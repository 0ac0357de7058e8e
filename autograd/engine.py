"""The backward engine: reverse topological walk, summing adjoints, leaf accumulation.

>>> import tensor as T, autograd
>>> x = T.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad.tolist()
[2.0, 4.0]
"""
from __future__ import annotations

import heapq
import itertools
import sys
import threading
from threading import get_ident as _get_ident

from tensor import _hook, amp
from tensor import elementwise as ew
from tensor._tensor import Tensor
from tensor.memory import _BUSY

from . import hooks
from .anomaly import anomaly_note, check_nan
from .grad_mode import is_grad_enabled, set_grad_enabled
from .graph import (
    AccumulateGrad,
    Meta,
    anomaly,
    edge_of,
    flat_tensors,
    meta_of,
    output_alias,
    refresh_stale,
)
from .node_api import GradientEdge
from .saved_hooks import unpacked


def _ones_like(t: Tensor) -> Tensor:
    from tensor.creation import full
    return full(t.shape, 1, dtype=t.dtype, device=t.device)


def _check_grad(t: Tensor, g, op: str) -> Tensor:
    if not isinstance(g, Tensor):
        from tensor.convert import asarray
        g = asarray(g, dtype=t.dtype, device=t.device)
    if g.device != t.device:
        raise ValueError(f"{op}: gradient on {g.device} does not match the output on {t.device}")
    if g.shape != t.shape:
        raise ValueError(f"{op}: gradient of shape {g.shape} does not match the output of shape "
                         f"{t.shape}")
    return g


def _root_grads(outputs, grad_outputs, op):
    refresh_stale(outputs)  # a view whose base was written since: its graph from the base's
    roots = []
    for i, t in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None else None
        if not t.requires_grad:
            raise RuntimeError(f"{op}: output {i} (shape {t.shape}) does not require grad and has "
                               "no grad_fn: nothing to differentiate")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"{op}: grad can be implicitly created only for scalar outputs; "
                                   f"output {i} has shape {t.shape}, pass a gradient of that shape")
            if t.dtype.kind == "c":
                raise RuntimeError(f"{op}: grad can be implicitly created only for real scalar "
                                   f"outputs; output {i} is {t.dtype.name}: differentiate a real "
                                   "function of it (abs, .real), or pass a gradient")
            g = _ones_like(t)
        roots.append((edge_of(t), _check_grad(t, g, op)))
    return roots


def _add(a, b):
    if a is None:
        return b
    # a sparse gradient (nn.Embedding(sparse=True)) meeting a dense one: SparseCOO's own add
    return a + b if type(b) is Tensor or type(a) is not Tensor else b + a


def own_grad(g: Tensor) -> Tensor:
    """g as a tensor that may become a .grad: a copy when g is a read-only (broadcast) view,
    which a rule may return but users, zero_grad and optimizers write into (PyTorch clones)."""
    return g if g.flags.writeable else g.copy()


def _sum_to(g: Tensor, shape: tuple) -> Tensor:
    from autograd.rules_util import sum_to
    return sum_to(g, shape)


def _order(roots):
    """Nodes reachable from the roots, parents before children (Kahn's algorithm; among ready
    nodes the most recently created first), so every node runs after all its consumers."""
    deps: dict = {}
    nodes: dict = {}
    stack = []
    for e, _ in roots:
        if e is not None and id(e[0]) not in nodes:
            nodes[id(e[0])] = e[0]
            stack.append(e[0])
    while stack:
        n = stack.pop()
        for e in n.next:
            if e is not None:
                m = e[0]
                deps[id(m)] = deps.get(id(m), 0) + 1
                if id(m) not in nodes:
                    nodes[id(m)] = m
                    stack.append(m)
    ready = [(-n.seq, nid) for nid, n in nodes.items() if deps.get(nid, 0) == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, nid = heapq.heappop(ready)
        n = nodes[nid]
        order.append(n)
        for e in n.next:
            if e is not None:
                mid = id(e[0])
                deps[mid] -= 1
                if deps[mid] == 0:
                    heapq.heappush(ready, (-e[0].seq, mid))
    return order


class _Runs(threading.local):
    """This thread's backward passes: each thread's pass is its own (PyTorch's graph task), so
    another thread's pass neither delays its callbacks nor drops them by failing, and the
    nesting count is never raced on."""

    def __init__(self):
        self.depth = 0        # engine runs in progress (a hook may run a nested backward)
        self.callbacks = []   # queue_callback's: after the outermost pass, if it succeeded
        self.ends = []        # on_backward_end's: after it, whether it raised or not


_RUNS = _Runs()


def queue_callback(fn) -> None:
    """Run fn() once the backward pass now running in this thread (the outermost one) has
    finished, after every .grad was written (PyTorch's Variable._execution_engine.queue_callback):
    what DistributedDataParallel uses to finish its gradient reduction. Only inside a backward
    pass (from a hook); a pass that raises drops its callbacks."""
    if not _RUNS.depth:
        raise RuntimeError("queue_callback: no backward pass is running (call it from a hook)")
    _RUNS.callbacks.append(fn)


def on_backward_end(fn) -> None:
    """Run fn() when the outermost backward pass now running in this thread ends, also when it
    raised (after the queued callbacks): state a hook keeps for the pass is dropped there, not
    leaked."""
    _RUNS.ends.append(fn)


def backward_running() -> bool:
    """Whether a backward pass is running in this thread: a hook, or a recomputation."""
    return _RUNS.depth > 0


def run(roots, retain_graph: bool, create_graph: bool, capture=None, accumulate=True):
    """roots: [((node, output_nr), grad)]. capture: {(id(node), nr): index} of edges whose total
    gradient is returned (autograd.grad); accumulate: write leaf .grad (backward). Autocast is
    off meanwhile: each rule runs in the dtypes its op's forward ran in."""
    runs = _RUNS
    runs.depth += 1
    ok = False
    try:
        off = amp.suspended()
        if off is None:
            r = _run(roots, retain_graph, create_graph, capture, accumulate)
        else:
            with off:
                r = _run(roots, retain_graph, create_graph, capture, accumulate)
        ok = True
    finally:
        runs.depth -= 1
        if not runs.depth:
            cbs, ends = runs.callbacks, runs.ends
            runs.callbacks, runs.ends = [], []
            try:
                for fn in cbs if ok else ():
                    fn()
            finally:
                for fn in ends:
                    fn()
    return r


class _Passes(threading.local):
    def __init__(self):
        self.stack = []   # (pass number, its nodes in run order) of the passes running, innermost last


_PASSES = _Passes()
_PASS_NO = itertools.count()


def current_pass():
    """(number, nodes in run order) of the innermost backward pass running in this thread, or
    None (autograd.graph.register_multi_grad_hook reads which nodes it will reach)."""
    st = _PASSES.stack
    return st[-1] if st else None


def _run(roots, retain_graph, create_graph, capture, accumulate):
    order = _order(roots)
    _PASSES.stack.append((next(_PASS_NO), order))
    try:
        return _walk(order, roots, retain_graph, create_graph, capture, accumulate)
    finally:
        _PASSES.stack.pop()


def _walk(order, roots, retain_graph, create_graph, capture, accumulate):
    runs = targets = None
    if capture:  # only nodes that lead to a captured edge need to run
        targets = {nid for nid, _ in capture}
        useful = set()
        runs = set()
        for n in reversed(order):
            if any(e is not None and id(e[0]) in useful for e in n.next):
                runs.add(id(n))
                useful.add(id(n))
            elif id(n) in targets:
                useful.add(id(n))
    grads: dict = {}
    for e, g in roots:
        if e is not None:
            slot = grads.setdefault(id(e[0]), [None] * e[0].n_out)
            slot[e[1]] = _add(slot[e[1]], g)
    captured = [None] * (len(capture) if capture else 0)
    with set_grad_enabled(create_graph):
        for node in order:
            nid = id(node)
            gs = grads.pop(nid, None)
            if gs is None:
                continue
            if runs is not None and nid not in runs and nid not in targets:
                continue   # off every path to the inputs: neither run nor hooked (as PyTorch)
            gs = _run_hooks(node, gs)
            if capture:
                for i, g in enumerate(gs):
                    k = capture.get((nid, i))
                    if k is not None:
                        captured[k] = g
            nh = node.nhooks
            if isinstance(node, AccumulateGrad):
                if accumulate and gs[0] is not None:
                    if nh and nh[0]:
                        gs = _node_prehooks(node, gs)
                    _accumulate(node, gs[0], create_graph)
                    if node.post_hooks:
                        hooks.run_post_accumulate(node)
                    if nh and nh[1]:
                        _node_posthooks(node, [], gs)
                continue
            if runs is not None and nid not in runs:
                continue
            if nh and nh[0]:
                gs = _node_prehooks(node, gs)
            flat = _call_rule(node, gs, retain_graph)
            if nh and nh[1]:
                flat = _node_posthooks(node, flat, gs)
            for e, g in zip(node.next, flat):
                if e is not None and g is not None:
                    slot = grads.setdefault(id(e[0]), [None] * e[0].n_out)
                    slot[e[1]] = _add(slot[e[1]], g)
    return captured


def _run_hooks(node, gs):
    if node.hooks:
        for nr, fns in node.hooks.items():
            for fn in fns:
                g = gs[nr]
                if g is not None:
                    r = _call_hook(fn, g)
                    if r is not None:
                        gs[nr] = _hook_result(fn, r, g)
    if node.retains:   # retain_grad: after the hooks, as PyTorch's
        hooks.keep_retained(node, gs)
    return gs


def _node_prehooks(node, gs):
    """The node's register_prehook hooks, in order: each sees the gradients of its outputs
    (a tuple) and may return new ones."""
    for fn in list(node.nhooks[0]):
        r = _call_node_hook(fn, node, "pre-hook", tuple(gs))
        if r is not None:
            gs = _node_hook_result(fn, node, r, gs, "grad_outputs")
    return gs


def _node_posthooks(node, flat, gs):
    """The node's register_hook hooks, in order: each sees (grad_inputs, grad_outputs) and may
    return new grad_inputs (an AccumulateGrad's grad_inputs are empty)."""
    for fn in list(node.nhooks[1]):
        r = _call_node_hook(fn, node, "hook", tuple(flat), tuple(gs))
        if r is not None:
            flat = _node_hook_result(fn, node, r, flat, "grad_inputs")
    return flat


def _call_node_hook(fn, node, kind, *args):
    cap = _hook.capture
    if cap is not None and cap.mine():   # a replay would skip the hook's Python: run eagerly
        cap.fail(f"the {kind} {_hook_name(fn)!r} of the autograd node {node.name()} (a replay "
                 "would not call it)")
    try:
        return fn(*args)
    except Exception as e:
        e.add_note(f"(raised by the {kind} {_hook_name(fn)!r} of the autograd node {node.name()})")
        raise


def _node_hook_result(fn, node, r, old, what):
    """A node hook's replacement for `old` (a list of gradients, None where there is none),
    checked as PyTorch's: a tuple or list of as many entries, None where old has None."""
    where = f"{node.name()}: the hook {_hook_name(fn)!r}"
    if not isinstance(r, tuple | list):
        raise TypeError(f"{where} returned a {type(r).__name__}; a node hook returns None or a tuple "
                        f"of {len(old)} gradient(s) ({what})")
    if len(r) != len(old):
        raise RuntimeError(f"{where} returned {len(r)} value(s) for {len(old)} {what}")
    new = list(r)
    for i, (g, o) in enumerate(zip(new, old)):
        if g is None:
            continue
        if o is None:
            raise RuntimeError(f"{where} returned a gradient for {what}[{i}], which is None: a hook "
                               "cannot replace a None gradient with a tensor")
        new[i] = _hook_result(fn, g, o)
    return new


def _hook_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _call_hook(fn, g: Tensor):
    """fn(g); an exception it raises gets a note naming the hook (Python 3.11+)."""
    try:
        return fn(g)
    except Exception as e:
        if hasattr(e, "add_note"):
            e.add_note(f"(raised by the tensor hook {_hook_name(fn)!r} on a gradient of shape {g.shape}, "
                       f"{g.dtype.name}, {g.device})")
        raise


def _hook_result(fn, r, g: Tensor) -> Tensor:
    """What a hook returned, checked: it replaces the gradient g, so it must look like it (as
    PyTorch checks; summed into .grad otherwise, a wrong shape would broadcast silently)."""
    what = f"register_hook: the hook {_hook_name(fn)!r} returned"
    if not isinstance(r, Tensor) and type(r) is not type(g):   # (or a sparse gradient's kind)
        raise TypeError(f"{what} a {type(r).__name__}; a hook returns None or a gradient tensor")
    if r.shape != g.shape:
        raise ValueError(f"{what} a gradient of shape {r.shape} for a gradient of shape {g.shape}: a "
                         "hook must not change the gradient's shape")
    if r.dtype is not g.dtype:
        raise TypeError(f"{what} a gradient of dtype {r.dtype.name} for a gradient of dtype {g.dtype.name}: "
                        "a hook must not change the gradient's dtype")
    if r.device != g.device:
        raise ValueError(f"{what} a gradient on {r.device} for a gradient on {g.device}: a hook must not "
                         "change the gradient's device")
    return r


def _accumulate(acc, g, create_graph):
    leaf = acc.leaf()
    if leaf is None:
        return
    cap = _hook.capture
    if cap is not None and cap.mine():   # a captured step: its replays depend on .grad's state
        cap.grad_seen(leaf, leaf.grad)
    if type(g) is not Tensor:
        _accumulate_sparse(leaf, g)
        return
    if g.shape != leaf.shape:
        g = _sum_to(g, leaf.shape)
    if g.dtype is not leaf.dtype:
        g = g.astype(leaf.dtype)
    if _get_ident() in _BUSY:   # nested in a library critical section: must not wait for a lock
        _store(leaf, g, create_graph)
        return
    with _ACC_LOCK:
        _store(leaf, g, create_graph)


# Backward passes on several threads may reach one leaf (a shared parameter): its .grad is read,
# then set or added into in place, under this lock, so every thread's gradient is summed
# (PyTorch's AccumulateGrad holds a mutex); unlocked, threads overwrote each other's sums.
_ACC_LOCK = threading.RLock()


def _store(leaf, g, create_graph) -> None:
    """Sum g (the leaf's shape and dtype) into leaf.grad; under _ACC_LOCK."""
    if leaf.grad is None:
        # .grad gets the leaf's (dense) layout, as PyTorch's: optimizers' fused kernels want it;
        # and it is never a read-only (broadcast) view: zero_grad and users write into it
        if not g.flags.writeable:
            g = own_grad(g)
        elif not create_graph and not g.is_contiguous() and leaf.is_contiguous():
            g = g.contiguous()
        elif not create_graph and (sys.getrefcount(g) > 4 or sys.getrefcount(g._storage) > 2):
            # its memory is shared (a gradient the user passed, a tensor the graph still holds;
            # 4 references: the caller's list, _accumulate's, ours, getrefcount's):
            # later backwards add into .grad in place, so .grad owns its memory (PyTorch clones)
            g = g.copy()
        leaf.grad = g if create_graph else g.detach()
    elif create_graph:
        leaf.grad = leaf.grad + g
    else:
        cur = leaf.grad
        # in place (PyTorch's rule outside create_graph): no new memory per backward, a handle
        # the user holds on .grad sees the sum, and .grad keeps its storage, which a captured
        # step (tensor/capture.py) writes
        if (type(cur) is Tensor and cur.grad_fn is None and not cur._requires_grad
                and cur.dtype is g.dtype and cur.shape == g.shape and cur.device == g.device
                and cur.flags.writeable and cur._base is None):
            ew.binary("add", cur, g.detach(), out=cur)
        else:
            leaf.grad = cur.detach() + g.detach()


def _accumulate_sparse(leaf, g) -> None:
    """A sparse (tensor.sparse.SparseCOO) gradient into leaf.grad, as PyTorch's: the first one
    becomes .grad, a later one's entries are concatenated to it (uncoalesced); mixed with a
    dense .grad, the sum is dense. Never recorded (no double backward through sparse grads)."""
    if g.dtype is not leaf.dtype:
        g = type(g)(g.indices(), g.values().astype(leaf.dtype), g.shape, g.is_coalesced())
    g = g.detach()
    with _ACC_LOCK:
        cur = leaf.grad
        if cur is None:
            leaf.grad = g
        elif type(cur) is Tensor:
            leaf.grad = cur.detach() + g.to_dense()
        else:
            leaf.grad = cur + g


def _flatten_like(node, grads):
    """Rule results are shaped like the op's args; flatten to one per tensor input. Returns
    (gradients, the inputs they belong to: tensors or their Meta), one pass."""
    out, ins = [], []
    for a, g in zip(node.ctx.args, grads):
        ta = type(a)
        if ta is Tensor or ta is Meta:
            out.append(g)
            ins.append(a)
        elif isinstance(a, list | tuple):
            xs = [x for x in a if _is_input(x)]
            if xs:
                out.extend(g if g is not None else [None] * len(xs))
                ins.extend(xs)
        elif isinstance(a, Meta):
            out.append(g)
            ins.append(a)
    return out, ins


def _is_input(a) -> bool:
    """A tensor input of the op (saved as itself, or replaced by its Meta)."""
    return type(a) is Tensor or isinstance(a, Meta)


def _call_rule(node, gs, retain_graph):
    node.check_saved()
    if not node.multi:
        g_in = gs[0]
        if g_in is None:
            return [None] * len(node.next)
    else:
        g_in = gs
    ctx0 = node.ctx
    node.ctx = unpacked(ctx0)   # (saved_tensors_hooks: the rule reads the tensors restored)
    saved_out, outs = _link_saved_outputs(node)
    conj = node.rule.conj and _any_complex(gs)
    try:
        if conj:   # J^H g = conj(J^T conj(g)): see autograd.graph.Rule
            g_in = [_conj(g) for g in g_in] if node.multi else _conj(g_in)
        grads = node.rule.vjp(node.ctx, g_in)
        if conj:
            grads = tuple(_conj(g) for g in grads) if isinstance(grads, tuple | list) else _conj(grads)
    except Exception as e:
        if anomaly.enabled:
            e.add_note(anomaly_note(node))
        raise
    finally:
        if outs:
            node.ctx.out = saved_out
        for o in outs:   # the aliases stay on the graph; the tangent was for this call only
            if o._ag is not None:
                o._ag.tangent = None
        node.ctx = ctx0
    if not isinstance(grads, tuple | list):
        grads = (grads,)
    flat, ins = _flatten_like(node, grads)
    for e, g, a in zip(node.next, flat, ins):
        if e is not None and g is not None and g.shape != tuple(a.shape):
            raise RuntimeError(f"autograd: the rule of {node.op!r} returned a gradient of shape "
                               f"{g.shape} for an input of shape {a.shape}")
    if anomaly.enabled and anomaly.check_nan:
        check_nan(node, flat)
    if not retain_graph:
        node.release()
    return flat


def _any_complex(gs) -> bool:
    return any(type(g) is Tensor and g._dtype.kind == "c" for g in gs)


def _conj(g):
    """conj(g) of a complex gradient (recorded: create_graph differentiates it); anything else
    (None, real, a list of a list-taking op's grads) as it is or element-wise."""
    if isinstance(g, list | tuple):
        return type(g)(_conj(x) for x in g)
    if type(g) is Tensor and g._dtype.kind == "c":
        from tensor.public import PUB
        return PUB["conjugate"](g)
    return g


def _link_saved_outputs(node):
    """With create_graph, the rule sees fresh aliases of the saved outputs in ctx.out, which
    stand for the node's outputs in the new graph (and carry their forward tangent, for
    forward-over-reverse). They stay linked after the call: the ops the rule records keep them
    (tanh's 1 - y * y saves y), and the next order's backward through those ops must still
    reach this node through them (unlinked, y became a constant there and every derivative from
    the third on lost its terms through y). Fresh per call, so the node's own ctx.out never
    points back at the node (no reference cycle). Returns (ctx.out to restore, the aliases)."""
    out = node.ctx.out
    if out is None or not is_grad_enabled():
        return None, []
    outs = [output_alias(o, node, i) for i, o in enumerate(out if isinstance(out, list) else [out])]
    tan = getattr(node.ctx, "out_tangent", None)
    if tan is not None:
        for o, t in zip(outs, tan if isinstance(out, list) else [tan]):
            if t is not None:
                meta_of(o).tangent = t
    node.ctx.out = outs if isinstance(out, list) else outs[0]
    return out, outs


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the leaves' .grad (or only into `inputs`)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is not None and not isinstance(grad_tensors, list | tuple):
        grad_tensors = [grad_tensors]
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(tensors, grad_tensors, "backward")
    if inputs is None:
        run(roots, retain_graph, create_graph)
        return
    inputs = [inputs] if isinstance(inputs, Tensor | GradientEdge) else list(inputs)
    got = _grads_for(roots, inputs, retain_graph, create_graph, allow_unused=True)
    for t, g in zip(inputs, got):
        if isinstance(t, GradientEdge):   # a leaf's edge accumulates into the leaf (PyTorch's);
            t = t.node.leaf() if isinstance(t.node, AccumulateGrad) else None   # a non-leaf's: none
            if t is not None and g is not None and g.shape != t.shape:
                g = _sum_to(g, t.shape)
        if t is not None and g is not None:
            acc = t._ag.acc if t.grad_fn is None and t._ag is not None else None
            nh = acc.nhooks if acc is not None else None   # its node hooks, as backward()'s
            if nh and nh[0]:
                g = _node_prehooks(acc, [g])[0]
            if type(g) is not Tensor:
                _accumulate_sparse(t, g)
            else:
                with _ACC_LOCK:
                    t.grad = own_grad(g) if t.grad is None else t.grad + g
                if acc is not None and acc.post_hooks:
                    hooks.run_post_accumulate(acc)
            if nh and nh[1]:
                _node_posthooks(acc, [], [g])


def _grads_for(roots, inputs, retain_graph, create_graph, allow_unused):
    capture, slot = {}, []   # an input listed twice shares its edge's slot (and gets it twice)
    for i, t in enumerate(inputs):
        e = (t.node, t.output_nr) if isinstance(t, GradientEdge) else edge_of(t)
        if e is None:
            raise RuntimeError(f"grad: input {i} (shape {t.shape}) does not require grad")
        slot.append(capture.setdefault((id(e[0]), e[1]), len(capture)))
    found = run(roots, retain_graph, create_graph, capture=capture, accumulate=False)
    got = [found[k] for k in slot]
    for i, g in enumerate(got):
        if g is None and not allow_unused:
            what = (f"(the edge {inputs[i].node.name()}, {inputs[i].output_nr})"
                    if isinstance(inputs[i], GradientEdge) else f"(shape {inputs[i].shape})")
            raise RuntimeError(f"grad: input {i} {what} is not part of the graph "
                               "of the outputs; pass allow_unused=True to get None for it")
        if g is not None and not isinstance(inputs[i], GradientEdge) and g.shape != inputs[i].shape:
            got[i] = _sum_to(g, inputs[i].shape)
    return got


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """d(outputs)/d(inputs) contracted with grad_outputs, without touching .grad."""
    single = isinstance(inputs, Tensor | GradientEdge)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is not None and not isinstance(grad_outputs, list | tuple):
        grad_outputs = [grad_outputs]
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grad_outputs, "grad")
    got = _grads_for(roots, inputs, retain_graph, create_graph, allow_unused)
    return tuple(got)


__all__ = ["backward", "grad", "queue_callback", "backward_running", "flat_tensors", "ew"]
