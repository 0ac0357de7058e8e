"""Fork safety of the caching allocators and the library's CriticalLocks (tensor/memory.py).

``os.fork()`` copies only the thread that calls it. Had another thread been inside an
allocator's locked section at that moment, the child would inherit the lock held by a thread
that does not exist there, and half-updated books: its first malloc or free would wait forever
(a multiprocessing or DataLoader-style worker forked while a loader thread makes tensors). So,
as the logging module does for its locks, the forking thread takes every allocator's lock
before the fork (the books are consistent then) and releases it after, in the parent and in the
child; the child also forgets the other threads' marks in ``_BUSY``.

A CriticalLock (kernel-build key locks, the allocators' and devices' creation locks) held by
another thread at the fork is replaced in the child by a free one: waiting for a build that
runs in a thread the child does not have would hang it; what that thread had not finished
(a kernel not yet in the table, an allocator not yet made) is done again by the child.
"""
from __future__ import annotations

import os
import threading
import weakref

# Threads inside a library critical section (an allocator's locked section, a CriticalLock):
# thread id -> depth. Their nested frees and mallocs take the allocators' queued paths
# (tensor/memory.py, which imports it from here).
_BUSY: dict[int, int] = {}
_ALLOCATORS: weakref.WeakSet = weakref.WeakSet()
_CRITICAL: weakref.WeakSet = weakref.WeakSet()
_FORK_WAIT_S = 10.0   # a lock not free by then is left as it is (the fork goes on)
# what _before_fork did, undone after the fork: the allocators whose lock it took, and whether
# it marked the forking thread as inside the library
_fork = {"held": [], "marked": False}


def track_allocator(allocator) -> None:
    """Register a CachingAllocator for the fork handlers (its __init__ does)."""
    _ALLOCATORS.add(allocator)


def track_lock(lock) -> None:
    """Register a CriticalLock for the fork handlers (its __init__ does)."""
    _CRITICAL.add(lock)


def live(objs: weakref.WeakSet) -> list:
    """The members of a WeakSet that another thread may add to meanwhile."""
    while True:
        try:
            return list(objs)
        except RuntimeError:   # another thread registered one meanwhile ("changed size")
            continue


def _before_fork() -> None:
    me = threading.get_ident()
    if me in _BUSY:   # forking from inside a library critical section: waiting could deadlock
        return
    _BUSY[me] = 1     # our own finalizers' frees are queued meanwhile, as in a locked section
    _fork["marked"] = True
    for a in live(_ALLOCATORS):
        if a._lock.acquire(timeout=_FORK_WAIT_S):
            _fork["held"].append(a)


def _release() -> None:
    held, _fork["held"] = _fork["held"], []
    for a in held:
        a._lock.release()
    if _fork["marked"]:
        _fork["marked"] = False
        _BUSY.pop(threading.get_ident(), None)


def _after_fork_in_child() -> None:
    me = threading.get_ident()
    mine = _BUSY.get(me)
    _BUSY.clear()      # the other threads do not exist in the child
    if mine is not None:
        _BUSY[me] = mine
    _release()
    for c in live(_CRITICAL):
        if not c._lock._is_owned():   # free, or held by a thread the child does not have
            c._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_release,
                        after_in_child=_after_fork_in_child)
