"""The one link from `tensor` up to `autograd` (DESIGN.md, "Layers and folders").

Public ops are exported through `differentiable(name, fn)`. While autograd is not loaded, the
wrapper calls fn directly. The autograd package, once imported (it is imported lazily the first
time a tensor asks for gradients: `requires_grad_()`, `backward()`...), sets `record`; from then
on every public op is handed to `record(name, fn, args, kwargs)`, which runs fn and, when an
input requires grad (or carries a forward-mode tangent), puts a node on the graph keyed by the
op's name. Internal code calls the undecorated functions, so nothing is recorded twice.
"""
from __future__ import annotations

import functools

record = None  # set by autograd (set_record): (name, fn, args, kwargs) -> result
# set by a C fast path (tensor/cpu/fastpath.py): python record -> a record that behaves the same
# and hands what it does not handle to the one it wraps
record_accel = None
# the capture in progress (tensor/capture.py), or None: storages that die, data_ptr() reads,
# random draws and host reads report to it (one global read on those paths when none runs)
capture = None
# set by autograd: what a C fast path needs to put a node on the graph as record does
# (tensor/cpu/csrc/fp_graph.h): (state, Node, Ctx, Meta, AGMeta, RULES, node counter, edge_of,
# INPLACE, _WRITES, meta_of, _record_tail)
fast_graph = None
grad_state = None  # set by autograd: its thread-local grad mode (views made in no_grad stay untracked)
# set by autograd: (view, source) -> None, called for a view made under no_grad of a tensor
# autograd knows (so that an in-place write into it with grad mode on can be refused)
nograd_view = None
# set by tensor.amp while an autocast region is enabled in some thread: (name, run, args,
# kwargs) -> the op's result, its inputs cast as the autocast table says
amp = None


def differentiable(name: str, fn):
    """Wrap a public op so autograd can record it under `name` (and autocast cast its inputs)."""
    def run(args, kwargs):
        r = record
        return fn(*args, **kwargs) if r is None else r(name, fn, args, kwargs)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if amp is not None:
            return amp(name, run, args, kwargs)
        r = record
        if r is None:
            return fn(*args, **kwargs)
        return r(name, fn, args, kwargs)
    op.__wrapped_op__ = name
    return op


def set_record(fn) -> None:
    """Install autograd's record (through record_accel when a fast path offers one)."""
    global record
    record = fn if record_accel is None or fn is None else record_accel(fn)


def autograd():
    """Import autograd (which installs `record`) and return the module."""
    import autograd as ag
    return ag
