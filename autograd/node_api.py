"""PyTorch's torch.autograd.graph.Node interface of the graph's nodes (autograd/graph.py's Node
and AccumulateGrad): name(), next_functions, metadata, register_prehook, register_hook; and the
handle hooks return.

>>> import tensor as T
>>> a = T.tensor([1.0, 2.0], requires_grad=True)
>>> b = T.exp(a)
>>> b.grad_fn.name(), b.grad_fn.next_functions[0][0].name()
('ExpBackward0', 'AccumulateGrad')
>>> h = b.grad_fn.register_prehook(lambda g_out: (g_out[0] * 2,))
>>> b.sum().backward()
>>> [round(v, 4) for v in a.grad.tolist()]
[5.4366, 14.7781]
"""
from __future__ import annotations

import weakref
from typing import NamedTuple


class RemovableHandle:
    """What registering a hook returns: remove() takes the hook off again (a second remove()
    does nothing, even when the same function was registered twice); also a context manager
    (the hook is removed on leaving the block, as PyTorch's)."""

    def __init__(self, lst, fn):
        self._lst, self._fn = lst, fn

    def remove(self):
        lst, self._lst = self._lst, None
        if lst is not None:
            for i, f in enumerate(lst):
                if f is self._fn:
                    del lst[i]
                    return

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class GradientEdge(NamedTuple):
    """An edge of the graph: output output_nr of node (PyTorch's torch.autograd.graph
    GradientEdge); autograd.grad takes one as an input (the gradient flowing into it)."""
    node: object
    output_nr: int


class NodeType(type):
    """The metaclass of graph.Node: isinstance(x, Node) holds for every graph node (an
    AccumulateGrad too), as for PyTorch's abstract torch.autograd.graph.Node."""

    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or (cls.__dict__.get("covers_all", False)
                                                    and isinstance(obj, NodeAPI))


class NodeAPI:
    """A node's public interface. Its own hooks live in the node's `nhooks` slot: None or
    [pre-hooks, post-hooks]; `op` is the op's name, `next` its edges."""

    __slots__ = ()

    def name(self) -> str:
        """The node's name in PyTorch's form: the op in CamelCase + 'Backward0' ('exp' ->
        'ExpBackward0'), a custom Function's class name + 'Backward', or 'AccumulateGrad'."""
        return backward_name(self.op)

    @property
    def next_functions(self) -> tuple:
        """One (node, output index) pair per tensor input: the node its gradient goes to
        ((None, 0) for an input that needs no gradient)."""
        return tuple((None, 0) if e is None else (e[0], e[1]) for e in self.next)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node (kept as long as the node lives)."""
        m = _METADATA.get(self)
        if m is None:
            m = _METADATA[self] = {}
        return m

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, called before the node runs (after
        the hooks of its output tensors and retain_grad). Returns a handle with remove()."""
        return self._add_hook(0, fn, "register_prehook")

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, called after the node
        computed the gradients of its inputs (one per next_functions entry, None where there is
        none; an AccumulateGrad's are empty). Returns a handle with remove()."""
        return self._add_hook(1, fn, "register_hook")

    def _add_hook(self, k, fn, op):
        if not callable(fn):
            raise TypeError(f"{self.name()}.{op}: the hook must be callable, got {type(fn).__name__}")
        if self.nhooks is None:
            self.nhooks = [[], []]
        self.nhooks[k].append(fn)
        return RemovableHandle(self.nhooks[k], fn)


_METADATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def backward_name(op: str) -> str:
    if op == "AccumulateGrad" or op.endswith("Backward"):
        return op
    return "".join(w[:1].upper() + w[1:] for w in op.split("_")) + "Backward0"
