"""Hooks on the tensors autograd saves for backward, as torch.autograd.graph: saved_tensors_hooks,
save_on_cpu and disable_saved_tensors_hooks.

Inside `saved_tensors_hooks(pack_hook, unpack_hook)`, every tensor an op saves for its backward
(an input, its output, an old value an in-place op keeps, a custom Function's
save_for_backward) is passed to pack_hook and only its result is kept; backward calls
unpack_hook on that (each time, also for a second backward with retain_graph) and expects a
tensor of the saved one's shape and dtype, whose values it must be. The graph itself (what the
saved tensor was derived from) is kept by autograd, so create_graph still differentiates
through it; a saved tensor modified in place after the forward is still caught. The hooks are
per thread, the innermost context wins; while any is active the C recording fast path steps
aside (every op is recorded in Python, as in anomaly mode).

>>> import tensor as T
>>> from autograd.saved_hooks import saved_tensors_hooks
>>> packed = []
>>> x = T.tensor([1.0, 2.0], requires_grad=True)
>>> with saved_tensors_hooks(lambda t: packed.append(t.numpy().copy()) or len(packed) - 1,
...                          lambda i: T.asarray(packed[i])):
...     y = (x * x).sum()
>>> y.backward(); x.grad.tolist(), len(packed)
([2.0, 4.0], 2)
"""
from __future__ import annotations

import contextlib
import copy
import threading
import weakref

from tensor._tensor import Tensor

from . import graph
from .grad_mode import state
from .graph import Meta, meta_of

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class _Local(threading.local):
    def __init__(self):
        self.disabled = []       # error messages of the disable_saved_tensors_hooks entered


_local = _Local()   # (the (pack, unpack) pairs entered: state.saved_hooks, per thread too)
_lock = threading.Lock()


def _count_context(delta: int) -> None:
    """One saved_tensors_hooks context more (+1) or fewer (-1) in some thread: while any is
    entered, every op is recorded in Python (graph.refresh_fast_path)."""
    with _lock:
        graph._HOOKED[0] += delta
        graph.refresh_fast_path()


class _StorageRef:
    """A saved tensor's version check without keeping its memory: the storage's version while
    it lives (a dead storage cannot have been written since)."""

    __slots__ = ("ref", "v0")

    def __init__(self, storage, version: int):
        self.ref, self.v0 = weakref.ref(storage), version

    @property
    def version(self) -> int:
        s = self.ref()
        return self.v0 if s is None else s.version


class Packed(Meta):
    """A saved tensor as its pack hook's result, with what autograd needs to restore it: its
    shape, dtype and device (Meta's) and its place in the graph."""

    __slots__ = ("packed", "unpack", "requires_grad", "grad_fn", "output_nr", "acc", "ag")

    def __init__(self, t: Tensor, pair):
        super().__init__(t)
        self.unpack = pair[1]
        m = t._ag
        self.requires_grad, self.grad_fn = t._requires_grad, t.grad_fn
        self.output_nr = m.output_nr if m is not None else 0
        self.acc = m.acc if m is not None else None
        # its autograd state, for the forward-mode tangent it carries when backward runs (forward
        # over reverse: jacfwd(jacrev), hessian); read then, as the saved tensor itself would be
        # (a level's end clears it there)
        self.ag = m
        self.packed = pair[0](t)

    def restore(self) -> Tensor:
        t = self.unpack(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError(f"saved_tensors_hooks: unpack_hook returned a "
                            f"{type(t).__name__}; it must return a Tensor")
        if tuple(t.shape) != tuple(self.shape) or t.dtype is not self.dtype:
            raise RuntimeError(f"saved_tensors_hooks: unpack_hook returned a tensor of shape "
                               f"{tuple(t.shape)}, {t.dtype.name}, for one saved of shape "
                               f"{tuple(self.shape)}, {self.dtype.name}")
        if t.device != self.device:
            t = t.to(self.device)
        if self.requires_grad:   # its place in the graph, as autograd knew it
            out = graph.output_alias(t, self.grad_fn, self.output_nr)
            if self.acc is not None:
                meta_of(out).acc = self.acc
        else:
            out = graph._alias(t)
        if self.ag is not None and self.ag.tangent is not None and state.fw_level:
            meta_of(out).tangent = self.ag.tangent
            state.fw_tensors.append(weakref.ref(out))   # (dropped when the level ends)
        return out


def pack(t: Tensor, node, pair):
    """t as saved by node under the hooks `pair`: a Packed, its version check in node.saved."""
    p = Packed(t, pair)
    node.saved.append((p, _StorageRef(t._storage, t._storage.version), t._storage.version))
    return p


graph._PACK = pack


def _restore(v):
    if isinstance(v, Packed):
        return v.restore()
    if isinstance(v, list | tuple) and any(isinstance(x, Packed) for x in v):
        return type(v)(_restore(x) for x in v)
    return v


def unpacked(ctx):
    """A shallow copy of ctx with its Packed tensors restored (what the rule reads), or ctx
    itself when nothing in it was packed."""
    if not getattr(ctx, "packed", False):
        return ctx
    c = copy.copy(ctx)
    c.args = tuple(_restore(a) for a in ctx.args)
    if ctx.out is not None:
        c.out = _restore(ctx.out)
    if getattr(ctx, "saved_tensors", ()):
        c.saved_tensors = _restore(ctx.saved_tensors)
    return c


class saved_tensors_hooks:
    """Within the block, the tensors saved for backward go through pack_hook(tensor) -> any
    object, and come back in backward through unpack_hook(object) -> tensor."""

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callable")
        self.pair = (pack_hook, unpack_hook)

    def __enter__(self):
        if _local.disabled:
            raise RuntimeError(_local.disabled[-1])
        state.saved_hooks.append(self.pair)
        _count_context(+1)
        return self

    def __exit__(self, *exc):
        state.saved_hooks.pop()
        _count_context(-1)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept in host memory and moved back to their device in backward (activation
    offloading: device memory for a bigger model or batch, at the cost of the copies). A CPU
    tensor is kept as it is. pin_memory=True keeps them in page-locked memory (tensor/pinned.py),
    and the copies back to the device do not wait (PyTorch's non_blocking copies)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(t):
            return t.device, t.to("cpu", non_blocking=pin_memory)   # (a CPU tensor: itself)

        def unpack_from_cpu(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)
        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks(contextlib.ContextDecorator):
    """Within the block, entering saved_tensors_hooks (or save_on_cpu) raises RuntimeError with
    error_message (for code whose saved tensors must not be moved or changed); so does entering
    it inside such hooks. A decorator too, as PyTorch's."""

    def __init__(self, error_message: str):
        self.error_message = str(error_message)

    def __enter__(self):
        if state.saved_hooks:   # (hooks entered outside: PyTorch refuses too)
            raise RuntimeError(self.error_message)
        _local.disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _local.disabled.pop()
