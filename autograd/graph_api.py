"""torch.autograd.graph's functions over the graph: get_gradient_edge, increment_version and
register_multi_grad_hook (autograd/__init__.py puts them, Node, GradientEdge and the saved-tensor
hooks on autograd.graph, where PyTorch has them).

>>> import tensor as T, autograd
>>> a, b = T.ones(2, requires_grad=True), T.ones(3, requires_grad=True)
>>> seen = []
>>> h = autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append([g is None for g in gs]))
>>> (a * 2).sum().backward()
>>> seen
[[False, True]]
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from tensor._tensor import Tensor

from . import engine
from .graph import edge_of, refresh_stale
from .node_api import GradientEdge


def get_gradient_edge(t: Tensor) -> GradientEdge:
    """The edge t's gradient flows into: (t.grad_fn, its output index), or a leaf's
    AccumulateGrad node; autograd.grad(out, inputs=edge) then gives the gradient there even
    after t itself was changed in place or freed."""
    if not isinstance(t, Tensor):
        raise TypeError(f"get_gradient_edge: expected a tensor, got {type(t).__name__}")
    refresh_stale([t])   # a view whose base was written since: its current node
    e = edge_of(t)
    if e is None:
        raise RuntimeError(f"get_gradient_edge: the tensor (shape {t.shape}) does not require grad, "
                           "so no gradient flows into it")
    return GradientEdge(e[0], e[1])


def increment_version(tensors) -> None:
    """Mark the tensors as written in place (bump their storage's version counter), as after a
    write autograd did not see (through DLPack, NumPy or a kernel of one's own): backward then
    refuses the graphs that saved them."""
    for t in [tensors] if isinstance(tensors, Tensor) else tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version: expected tensors, got a {type(t).__name__}")
        t._storage.version += 1


class _MultiHandle:
    def __init__(self, handles):
        self._handles = handles

    def remove(self) -> None:
        for h in self._handles:
            h.remove()


def register_multi_grad_hook(tensors: Iterable[Tensor], fn: Callable, *, mode: str = "all"):
    """Call fn once per backward pass over several tensors' gradients.

    mode="all": fn(grads), a list with each tensor's gradient (None for those the pass gives
    none), once every tensor the pass reaches has got its gradient (at the latest when the pass
    ends). mode="any": fn(grad) with the first of their gradients the pass computes. fn returns
    None (it may not change the gradients). Returns a handle whose remove() unregisters it."""
    op = "register_multi_grad_hook"
    if mode not in ("all", "any"):
        raise ValueError(f"{op}: mode must be 'all' or 'any', got {mode!r}")
    if not callable(fn):
        raise TypeError(f"{op}: fn must be callable, got {type(fn).__name__}")
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: no tensors given")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"{op}: tensor {i} does not require grad (or is not a tensor): its "
                               "gradient would never be computed")
    nodes = [id(edge_of(t)[0]) for t in tensors]
    lock = threading.Lock()
    passes: dict = {}   # pass number -> its state: passes on other threads may interleave

    def finish(no):
        with lock:
            st = passes.pop(no, None)
        if st is not None and not st["done"]:
            fn(st["grads"])

    def hook_for(i):
        def hook(g):
            cur = engine.current_pass()
            if cur is None:
                return
            with lock:
                st = passes.get(cur[0])
                if st is None:   # the first gradient of this pass
                    reached = {id(n) for n in cur[1]}
                    st = passes[cur[0]] = {"grads": [None] * len(tensors), "done": False,
                                           "wait": {j for j, nid in enumerate(nodes) if nid in reached}}
                    engine.queue_callback(lambda no=cur[0]: finish(no))
                    # a pass that raises runs no callback: its state (gradients) goes anyway
                    engine.on_backward_end(lambda no=cur[0]: passes.pop(no, None))
                if st["done"]:
                    return
                if mode == "any":
                    st["done"] = True
                else:
                    st["grads"][i] = g
                    st["wait"].discard(i)
                    if st["wait"]:
                        return
                    st["done"] = True
                    g = st["grads"]
            fn(g)
        return hook

    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)])
