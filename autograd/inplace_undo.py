"""Undoing an in-place op whose recording failed after it wrote (autograd/graph.py's record).

A pack hook of saved_tensors_hooks, or a jvp rule in forward mode, runs after an in-place op
has written its tensor. Should one raise, the tensor would keep its new values with its old
graph (and tangent): a later backward would give a silently wrong gradient. So under those
hooks, and in forward mode, record() takes an undo point first; on failure the tensor gets its
values, version counter and autograd state back, as if the op had never run.
"""
from __future__ import annotations

from tensor import elementwise as _ew
from tensor._tensor import Tensor


def undo_point(x: Tensor):
    """A function restoring x's values, version and autograd state (and those of its base,
    which writing a view changes) to what they are now."""
    ts = [x] if x._base is None else [x, x._base[0]]
    saved = [(t, t.grad_fn, t._requires_grad, t._base,
              None if t._ag is None else [(f, getattr(t._ag, f)) for f in type(t._ag).__slots__])
             for t in ts]
    keep, version = _ew.copy(x), x._storage.version

    def undo() -> None:
        _ew.copy_into(x, keep)   # (the kernel itself: nothing recorded)
        x._storage.version = version
        for t, fn, rg, base, ag in saved:
            t.grad_fn, t._requires_grad, t._base = fn, rg, base
            if ag is None:
                t._ag = None
            else:
                for f, v in ag:
                    setattr(t._ag, f, v)
    return undo
