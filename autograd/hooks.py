"""Tensor hooks: register_hook, register_post_accumulate_grad_hook and retain_grad."""
from __future__ import annotations

from .grad_mode import is_grad_enabled
from .graph import edge_of, meta_of, move_retain, refresh_stale
from .node_api import RemovableHandle


def register_hook(t, fn):
    if not t.requires_grad:
        raise RuntimeError("register_hook: cannot register a hook on a tensor that does not "
                           "require grad")
    refresh_stale([t])   # a view whose base was written since: its current node
    node, nr = edge_of(t)
    if node.hooks is None:
        node.hooks = {}
    lst = node.hooks.setdefault(nr, [])
    lst.append(fn)
    return RemovableHandle(lst, fn)


def register_post_accumulate_grad_hook(t, fn):
    """Call fn(t) once backward has summed this backward's gradient into the leaf t's .grad
    (PyTorch's: an optimizer can step a parameter there and free its gradient early); fn
    returns None."""
    op = "register_post_accumulate_grad_hook"
    if not t.requires_grad:
        raise RuntimeError(f"{op}: cannot register a hook on a tensor that does not require grad")
    if t.grad_fn is not None:
        raise RuntimeError(f"{op}: only leaf tensors (shape {t.shape} is the result of "
                           f"{t.grad_fn.op!r}) accumulate a gradient; use register_hook")
    node, _ = edge_of(t)
    if node.post_hooks is None:
        node.post_hooks = []
    node.post_hooks.append(fn)
    return RemovableHandle(node.post_hooks, fn)


def run_post_accumulate(node) -> None:
    """The post-accumulate hooks of the AccumulateGrad node, in their order."""
    leaf = node.leaf()
    if leaf is None:
        return
    for fn in list(node.post_hooks):
        if fn(leaf) is not None:
            raise RuntimeError(f"register_post_accumulate_grad_hook: the hook {fn!r} returned a "
                               "value; it must return None (it may change the tensor in place)")


def retain_grad(t):
    """Keep .grad on a non-leaf tensor after backward, as PyTorch's: once per tensor (a second
    call does nothing), after every hook on it, and following it through in-place writes."""
    if t.grad_fn is None:
        return  # leaves keep .grad anyway
    refresh_stale([t])
    m = meta_of(t)
    if m.retain:
        return
    m.retain = True
    node, nr = edge_of(t)
    move_retain(t, node, nr)


def retains_grad(t) -> bool:
    return t.grad_fn is not None and t._ag is not None and t._ag.retain


def keep_retained(node, gs) -> None:
    """After node's hooks ran on gs: the outputs that retain their gradient store it."""
    for nr, ref in node.retains.items():
        x, g = ref(), gs[nr]
        if x is not None and g is not None:
            if not is_grad_enabled():   # with create_graph it stays differentiable (PyTorch's)
                g = g.detach()
            x.grad = (g if g.flags.writeable else g.copy()) if x.grad is None else x.grad + g
