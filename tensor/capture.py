"""Capture (tensor.compile: recording a step; tensor/replay.py makes a program of it).

A compiled function runs eagerly the first time it meets a signature (its tensor arguments'
shapes, dtypes, devices and requires_grad; the other arguments' values), is captured the second
time, and is replayed from then on:

- Capture runs the function for real while a recorder stands in front of each device's backend
  (tensor/backend: every kernel launch and copy goes through it) and notes each call with its
  arguments, in order. The memory the step allocates comes from a private pool (a
  CachingAllocator of its own), so the addresses the calls use stay the program's, reused within
  the step exactly as the eager run reused them: peak memory is eager's.
- A replay makes the recorded backend calls again: no dispatch, dtype or broadcast resolution,
  allocation or autograd recording in between, the same kernels on the same addresses, so the
  results are bitwise eager's (runs of elementwise calls fuse into one kernel that rounds as
  they do: tensor/fusion.py). Tensor arguments are read in place, or copied into the capture's
  input buffers where a call that uses them cannot be moved (arguments that require grad are
  taken as they are: the same tensor each call); returned tensors are fresh each call. Random
  draws take the generator's offset at replay time and advance it as eager would.
- Host work the replay must not freeze runs eagerly inside the replay: an optimizer's step
  (`island`: it reads its step count and learning rate in Python), and work on the step's
  tensors that no backend call does, a collective of tensor.distributed (`replayed`: MPI or
  NCCL moves the bytes; each replay runs it again on the program's memory).

What a capture cannot freeze makes it give up, for that signature, with a warning saying why,
and the function then runs eagerly: reading a tensor on the host (`item()`, `bool()`, printing:
the Python code after it could branch on the value), ops whose result size depends on data
(boolean masks, nonzero), a tensor that requires grad in the result (compile the whole step,
backward() included), memory the capture cannot account for, or an argument's memory reached
through another tensor. Guards checked before every replay re-capture when the Python state the
program reads has changed: a tensor it reads was freed, a tensor it leaves in Python state (a
parameter's .grad) was dropped or replaced, a leaf's .grad is not in the state the capture began
with (None, or which tensor: grad_seen), a leaf it accumulated into stopped requiring grad, a closure
cell, global or module attribute it found a tensor in holds another one (identity_guards).
Python values (shapes, scalars, a list turned into a tensor) are baked in when captured, as in
any tracing compiler.

>>> import tensor as T
>>> @T.compile
... def f(x):
...     return (x * 2 + 1).sum()
>>> [f(T.arange(3.0)).item() for _ in range(3)]     # eager, captured, replayed
[9.0, 9.0, 9.0]
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import traceback
import weakref

from . import _hook
from ._tensor import Storage, Tensor
from .backend import INTERFACE, settled
from .device import _CUDA, CPU

# Every backend function (tensor/backend INTERFACE) is a call a replay makes again, except
# these, which launch nothing (allocation, device queries, launch planning, the eager fast
# path's plan caches): they run at capture
# as usual and are not part of the program. (tests/test_compile.py checks that every name here
# and below is in the interface.)
_PLAIN = frozenset(("new_storage", "new_pool", "prepare", "fuse", "record_graph", "open_device",
                    "device_count", "allocator", "free_after_streams", "layer_norm_row_block",
                    "sdpa_tile", "fast_resolved", "elementwise_resolved"))
# calls whose result is an index check's verdict (-1: none bad): a replay raises where one
# reports a bad index
_CHECKED = frozenset(("index_offsets", "take", "put", "check_range", "cross_entropy_fwd"))
# calls whose result is data the Python code goes on with: a capture cannot freeze those
_DATA = {"copy_to_host": "a copy to the host", "synchronize": "a host synchronisation",
         "count_nonzero": "a boolean mask or nonzero (a data-dependent size)",
         "nonzero_prefix": "a boolean mask or nonzero (a data-dependent size)",
         "repeat_index": "repeat with per-element counts (a data-dependent size)"}


_OURS = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), p) + os.sep
              for p in ("tensor", "autograd"))


def _where() -> str:
    """' at file:line (function)' of the innermost caller outside tensor/ and autograd/."""
    for f in reversed(traceback.extract_stack()):
        if not os.path.abspath(f.filename).startswith(_OURS):
            return f" at {f.filename}:{f.lineno} ({f.name})"
    return ""


class _Recorder:
    """Stands for a device's backend during a capture: records every interface call but the
    _PLAIN ones, allocates from the capture's pool, and gives up the capture at a call of _DATA."""

    def __init__(self, be, cap: _Capture, pool):
        self._be, self._cap, self._pool = be, cap, pool
        self.__name__ = be.__name__

    def __getattr__(self, name):
        fn = getattr(self._be, name)
        if fn is None or name in _PLAIN or name not in INTERFACE:
            return fn
        cap = self._cap

        def call(*args, **kwargs):
            if cap.mine():
                if name in _DATA:
                    cap.fail(_DATA[name])
                else:
                    r = fn(*args, **kwargs)
                    if name in _CHECKED:   # a replay compares its verdict with this one: read
                        r = settled(r)      # a device's now (one synchronization)
                    cap.note(fn, name, args, kwargs, r, self._be)
                    return r
            return fn(*args, **kwargs)
        return call

    def new_storage(self, nbytes, device, alloc=None):
        if alloc is None and self._cap.mine():
            s = self._be.new_storage(nbytes, device, self._pool)
            self._cap.pooled.add(s)
            return s
        return self._be.new_storage(nbytes, device, alloc)


class _Capture:
    """One capture in progress (tensor._hook.capture while it records)."""

    def __init__(self, label: str):
        self.label = label
        self.thread = threading.get_ident()
        self.calls: list = []        # [fn, name, args, kwargs, result, backend] or [None, island fn, args]
        self.failed: str | None = None
        self.pools: dict = {}        # Device -> its private allocator
        self.pooled = weakref.WeakSet()   # Storages from the pools
        self.kept: list = []         # Storages that died during the capture (memory held)
        self.new: set = set()        # ids of Storages made during the capture
        self.seen: dict = {}         # id -> (Storage, version): non-pool memory ops read
        self.draws: list = []        # (generator, offset) of each random draw, in order
        self.watches: dict = {}      # Python attributes the program assumes (watch())
        self.reset: dict = {}        # generators seeded during the capture
        self.seeds: dict = {}        # generator -> its seed when the step first used it
        self.offsets: dict = {}      # generator -> offsets it had in the step (draws' ends)
        # lifetimes of pool memory, for fusion (tensor/fusion.py): id(live pool Storage) ->
        # [indices of the calls that use it, index of the call after which it died or None],
        # and id(the alias a recorded call holds) -> that record
        self.life: dict = {}
        self.alias_rec: dict = {}
        self.fuse = True             # fuse runs of elementwise calls (tensor/fusion.py)
        self._saved: dict = {}
        # leaves' .grad: id(leaf) -> whether it was None when the step began (grad_seen), and
        # id(leaf) -> the guard a replay checks: (leaf, None: .grad must be None; or a weakref:
        # .grad must be that tensor), or None (the step clears .grad itself: anything goes)
        self.grad_entry: dict = {}
        self.grad_guards: dict = {}
        # autocast's cast cache while capturing (tensor/amp.py): casts made before the capture
        # are not reused (the program must make its own, or its replays would read a stale
        # one after the weight changed), and its casts (pool memory) die with the capture
        self.casts: dict = {}

    # ---- hooks (tensor._hook.capture)
    def mine(self) -> bool:
        return self.failed is None and threading.get_ident() == self.thread

    def born(self, s: Storage) -> None:
        if threading.get_ident() == self.thread:   # (another thread's: not the step's)
            self.new.add(id(s))

    def keep(self, s: Storage) -> bool:
        """A Storage is dying: if recorded calls may read its memory, the program takes it over
        (a fresh Storage object owns the memory; s gives it up). Another thread's memory (a
        loader's) is none of the step's: it goes as usual."""
        made = id(s) in self.new
        self.new.discard(id(s))   # (its id is free for another Storage now)
        if self.pooled_(s):   # pool memory: it goes back to the pool, reserved for the program
            rec = self.life.pop(id(s), None)
            if rec is not None:
                rec[1] = len(self.calls)
            return False
        if getattr(s, "_block", None) is None and getattr(s, "release", None) is None:
            return False   # owns nothing (an alias)
        if not made and threading.get_ident() != self.thread:
            return False
        heir = object.__new__(Storage)
        for f in ("ptr", "nbytes", "device", "_block", "_alloc", "owner", "release", "version",
                  "streams", "readonly"):
            setattr(heir, f, getattr(s, f, None))
        s._block = s.release = None
        self.kept.append((heir, made))
        return True

    def saw(self, s: Storage) -> None:
        if threading.get_ident() != self.thread:
            return
        if self.pooled_(s):   # its address goes to the next recorded call
            self._rec(s)[0].append(len(self.calls))
        elif id(s) not in self.seen:
            self.seen[id(s)] = (s, s.version)

    def _rec(self, s: Storage) -> list:
        rec = self.life.get(id(s))
        if rec is None:
            rec = self.life[id(s)] = [[], None]
        return rec

    def pooled_(self, s: Storage) -> bool:
        a = s._alloc
        return a is not None and any(a is p for p in self.pools.values())

    def drew(self, gen, offset: int) -> None:
        if self.mine():
            self.draws.append((gen, offset, gen in self.reset))
            self.seeds.setdefault(gen, gen.seed)
            self.offsets.setdefault(gen, set()).update((offset, gen.offset))

    def restored(self, gen) -> None:
        """gen's state was set in the step: back to a state it had in the step (a checkpoint
        recomputing with the forward's random state), its draws stay relative to where the
        step started, as eagerly; to any other state, as reseeded()."""
        if self.mine() and not (gen.seed == self.seeds.get(gen)
                                and gen.offset in self.offsets.get(gen, ())):
            self.reseeded(gen)

    def reseeded(self, gen) -> None:
        """gen was seeded (or its state set) in the step: its draws from then on are the same
        at every call (eager seeds it each time), and a replay leaves it as the capture did."""
        if self.mine():
            self.reset[gen] = True

    def grad_seen(self, leaf, before) -> None:
        """Autograd accumulates into leaf.grad, which is `before` now: the program bakes in
        how (a new tensor when None, else an addition into or onto that tensor), so a replay
        needs the same state at its start, and leaf still requiring grad (else re-capture).
        A .grad that was not None when the step began but is None here was cleared by the step
        itself (zero_grad inside it): then any state at the start gives eager's result."""
        if not self.mine() or id(leaf) in self.grad_guards:
            return
        key = id(leaf)
        self.watches[(key, "_requires_grad")] = (weakref.ref(leaf), "_requires_grad", True)
        if before is not None:
            self.grad_guards[key] = (weakref.ref(leaf), weakref.ref(before))
        elif self.grad_entry.get(key, True):
            self.grad_guards[key] = (weakref.ref(leaf), None)
        else:
            self.grad_guards[key] = None

    def host_read(self, what: str) -> None:
        if self.mine():
            self.fail(what)

    def fail(self, why: str) -> None:
        if self.failed is None:
            self.failed = why + _where()

    def forget(self) -> None:
        """Drop what was recorded so far (the copies of the arguments into the pool's buffers,
        made after start(): they are the capture's own work, not the step's)."""
        self.calls.clear()
        self.seen.clear()
        self.life.clear()
        self.alias_rec.clear()

    def note(self, fn, name, args, kwargs, result, be) -> None:
        self.calls.append([fn, name, _walk(args, self._ref), _walk(kwargs, self._ref), result, be])

    def _ref(self, t: Tensor) -> Tensor:
        """What a recorded call keeps of a tensor argument: an alias of the same memory, so no
        caller's tensor object is held (a .grad nothing else holds is added to in place, as
        eagerly). Pool memory through a Storage that does not own it: the step frees it when
        eager would, and reuses it. Other memory held, with its version when first seen."""
        s = t._storage
        self.saw(s)
        if self.pooled_(s):
            rec = self.life[id(s)]
            s = Storage(s.ptr, s.nbytes, s.device, None, s._alloc)
            self.alias_rec[id(s)] = rec
        return Tensor._make(s, t._shape, t._strides, t._offset, t._dtype)

    # ---- installing the recorders
    def _devices(self):
        return [CPU] + [d for d in set(_CUDA.values())]

    def start(self) -> None:
        from . import random
        from .backend import backend_for
        g = random.default_generator   # where a step that saves the state first finds it
        self.seeds[g], self.offsets[g] = g.seed, {g.offset}
        ag = sys.modules.get("autograd.graph")   # (no autograd loaded: no gradients to take)
        for acc in list(ag.LIVE_ACCS) if ag is not None else ():
            leaf = acc.leaf()
            if leaf is not None:
                self.grad_entry[id(leaf)] = leaf.grad is None
        for dev in self._devices():
            be = self._saved[dev] = backend_for(dev)
            self.pools[dev] = be.new_pool(dev)
        self._install()

    def _install(self) -> None:
        for dev, pool in self.pools.items():
            dev._be = _Recorder(self._saved[dev], self, pool)
        _hook.capture = self

    def stop(self) -> None:
        _hook.capture = None
        for dev, be in self._saved.items():
            dev._be = be

    @contextlib.contextmanager
    def pause(self):
        """A context in which the capture neither records nor allocates (an island)."""
        self.stop()
        try:
            yield
        finally:
            self._install()


def capturing() -> bool:
    """True while this thread's ops are being captured (tensor.compile): code that would read a
    tensor on the host to check it can check on the device instead."""
    cap = _hook.capture
    return cap is not None and cap.mine()


def watch(obj, attr: str) -> None:
    """While capturing: the program replays with obj.attr as it is now (a module's training
    mode), so a replay re-captures instead when it has changed."""
    cap = _hook.capture
    if cap is not None and cap.mine():
        cap.watches[(id(obj), attr)] = (weakref.ref(obj), attr, getattr(obj, attr))


def island(fn, *args):
    """fn(*args) now, and again at this point of every replay of the capture in progress: host
    work the program must not freeze (an optimizer step reads its step count and learning rate
    in Python). Outside a capture: fn(*args)."""
    cap = _hook.capture
    if cap is None or not cap.mine():
        return fn(*args)
    cap.calls.append([None, fn, args])
    with cap.pause():
        return fn(*args)


def replayed(fn, *args, **kwargs):
    """fn(*args, **kwargs) now, and again at this point of every replay of the capture in
    progress, on the same memory (its tensor arguments become aliases of the program's: a
    fused run still writes what it reads, and argument buffers it uses are copied, not read in
    place): host-driven work on the step's tensors that the backends do not see, such as a
    collective over MPI or NCCL. Outside a capture: fn(*args, **kwargs)."""
    cap = _hook.capture
    if cap is None or not cap.mine():
        return fn(*args, **kwargs)
    a, kw = _walk((list(args), kwargs), cap._ref)   # (counts as a use at this call's index)
    cap.calls.append([None, lambda a, kw: fn(*a, **kw), (a, kw)])
    with cap.pause():
        return fn(*args, **kwargs)


def _weak(obj):
    """A weak reference to obj, or None for an object that takes none."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return None


def _module_places(m, seen: set, memo: dict, places: list) -> bool:
    """Does m (a module: an object with _parameters, _buffers and _modules dicts, as nn's)
    hold a tensor whose memory the step reads (seen: ids of those storages)? Each place in its
    tree that holds one goes to places: (dict, key, weakref)."""
    if id(m) in memo:
        return memo[id(m)]
    memo[id(m)] = False   # (a cycle)
    d = getattr(m, "__dict__", None)
    if not isinstance(d, dict) or not isinstance(d.get("_parameters"), dict):
        return False
    found = False
    for name in ("_parameters", "_buffers"):
        for k, t in (d.get(name) or {}).items():
            if isinstance(t, Tensor) and id(t._storage) in seen:
                places.append((d[name], k, weakref.ref(t)))
                found = True
    for k, sub in (d.get("_modules") or {}).items():
        if sub is not None and _module_places(sub, seen, memo, places):
            w = _weak(sub)
            if w is not None:
                places.append((d["_modules"], k, w))
            found = True
    memo[id(m)] = found
    return found


def identity_guards(fn, objs, seen: set) -> tuple[list, list]:
    """Where the step found the tensors it reads (seen: ids of their storages) in Python state:
    fn's closure cells, the globals its code names, and the parameters, buffers and submodules
    of the modules reached from those, from fn's `self` and from objs (the arguments keyed by
    identity). ([(cell, weakref)], [(dict, key, weakref)]): a replay re-captures when one of
    those places holds another object (a tensor or layer rebound while the old one lives on).
    Tensors reached another way (an attribute of a plain object, a helper's globals) are not
    guarded."""
    cells: list = []
    places: list = []
    memo: dict = {}

    def reads(o) -> bool:
        if isinstance(o, Tensor):
            return id(o._storage) in seen
        return _module_places(o, seen, memo, places)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            o = cell.cell_contents
        except ValueError:   # (an empty cell)
            continue
        w = _weak(o) if reads(o) else None
        if w is not None:
            cells.append((cell, w))
    code, glob = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is not None and isinstance(glob, dict):
        for name in code.co_names:
            o = glob.get(name)
            w = _weak(o) if o is not None and reads(o) else None
            if w is not None:
                places.append((glob, name, w))
    for o in (getattr(fn, "__self__", None), fn, *objs):
        if o is not None:
            reads(o)
    return cells, places


def _walk(obj, fn, leaf=Tensor):
    """obj with fn applied to each `leaf` (a Tensor) in it (lists, tuples and dicts, nested)."""
    if type(obj) is leaf:
        return fn(obj)
    if isinstance(obj, list | tuple):
        r = [_walk(x, fn, leaf) for x in obj]
        return r if type(obj) is list else tuple(r) if type(obj) is tuple else type(obj)(*r)
    if isinstance(obj, dict):
        return {k: _walk(v, fn, leaf) for k, v in obj.items()}
    return obj
