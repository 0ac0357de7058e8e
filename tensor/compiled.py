"""`tensor.compile`: a function run eagerly once per signature, captured the second time and
replayed after that (tensor/capture.py says how, and what a capture refuses).

A signature is what a replay depends on: each tensor argument's shape, dtype, device, layout
(contiguous or not), writeability and requires_grad (a tensor that requires grad by its
identity, storage and layout: it is read in place, not copied), the value of every other
argument (objects such as modules and optimizers by identity, checked through a weak reference
at each replay), grad mode, the autocast regions, the default dtype and device. At most
`cache_size` signatures are kept (least recently used out); a function that keeps meeting new
ones warns that it recompiles too often. Under forward mode (autograd.jvp) calls run eagerly.

Python side effects of fn (appends, prints, counters) run at the eager and capture calls only;
a replay re-runs the recorded kernels, not the Python. A tensor fn reads from a closure cell, a
global its code names, or a module's parameters and buffers (modules reached from those or from
the arguments) is guarded by identity: rebinding it re-captures (capture.identity_guards).

>>> import tensor as T
>>> step = T.compile(lambda x, y: ((x - y) ** 2).mean())
>>> [round(step(T.ones(4), T.zeros(4)).item(), 3) for _ in range(3)]
[1.0, 1.0, 1.0]
>>> step.stats()["replays"]
1
"""
from __future__ import annotations

import functools
import threading
import warnings
from collections import OrderedDict

from . import _hook
from . import dtypes as _dtypes
from . import elementwise as ew
from ._tensor import Tensor, new_storage, readonly_reason
from .amp import _state as _amp_state
from .capture import _Capture, _walk, _weak, identity_guards
from .device import _DEFAULT as _DEFAULT_DEVICE
from .replay import Program, _byte_span, copy_sharing, finish, seal
from .views import distinct

_SCALARS = (int, float, complex, str, bytes, bool, type(None))


def _signature(obj, parts: list, ins: list, refs: list) -> None:
    """Append obj's signature to parts, its tensors that do not require grad (their distinct
    elements: what a replay reads) to ins, in the order _walk visits them, and the objects
    keyed by identity to refs (a replay checks they are the capture's: an id is reused once
    its object dies)."""
    t = type(obj)
    if t is Tensor:
        if obj._requires_grad:   # read in place: its memory and layout, not only its id
            parts.append(("grad", id(obj), id(obj._storage), obj._offset, obj._shape, obj._strides,
                          id(obj._dtype)))
            refs.append(obj)
        else:
            contig = obj.is_contiguous()
            # dtypes and devices are singletons: their ids hash faster than their __hash__;
            # writeability: a read-only argument the step writes raises, as eagerly
            parts.append((obj._shape, id(obj._dtype), id(obj._storage.device), contig or obj._strides,
                          obj._ro is None and not obj._storage.readonly))
            ins.append(obj if contig else distinct(obj))
    elif t is float:   # by its bits: -0.0 and 0.0 differ, and a NaN equals itself
        parts.append((t, obj.hex()))
    elif t is complex:
        parts.append((t, obj.real.hex(), obj.imag.hex()))
    elif t in _SCALARS:
        parts.append((t, obj))
    elif t is list or isinstance(obj, tuple):   # (named tuples too: _walk enters them)
        parts.append((t, len(obj)))
        for x in obj:
            _signature(x, parts, ins, refs)
    elif t is dict:
        parts.append((dict, tuple(obj)))
        for x in obj.values():
            _signature(x, parts, ins, refs)
    else:
        parts.append(("id", id(obj)))
        refs.append(obj)


def _modes() -> tuple:
    """The thread's modes a step's ops depend on: grad mode (whether they record), the
    autocast regions (which dtypes they compute in), the default float dtype and the default
    device (what T.tensor(1.0), T.zeros(n) make). Part of every signature."""
    g = _hook.grad_state
    r = _amp_state.regions
    return (g is None or bool(g.grad_enabled), tuple(sorted(r.items(), key=_first)) if r else (),
            id(_dtypes._default_float), id(_DEFAULT_DEVICE[0]))


def _first(kv):
    return kv[0]


def _buffers(ts: list) -> list:
    """For tensors that share one storage: [(a tensor of the capture's pool laid out as t, its
    distinct elements)], all over one new block that holds t's bytes where the storage has them.
    So the layout is t's (the order of a reduction, and so its rounding, follows it) and what
    one argument writes the others see, as eagerly; the replays copy into the distinct parts."""
    ds = [distinct(t) for t in ts]
    spans = [_byte_span(d) for d in ds]
    lo = min(s[0] for s in spans) // 16 * 16   # a multiple of every itemsize
    store = new_storage(max(max(s[1] for s in spans) - lo, 1), ts[0].device)
    out = []
    for t, d in zip(ts, ds):
        isz = t.itemsize
        buf = Tensor._make(store, t.shape, t.strides, (t._offset * isz - lo) // isz, t.dtype)
        dbuf = Tensor._make(store, d.shape, d.strides, (d._offset * isz - lo) // isz, d.dtype)
        ew.copy_into(dbuf, d)
        if not t.flags.writeable:   # a write into it raises as into the argument, eagerly
            buf._ro = dbuf._ro = readonly_reason(t)
        out.append((buf, dbuf))
    return out


def _static_arguments(args, kwargs):
    """(args, kwargs) with each tensor that does not require grad replaced by a buffer of the
    capture's pool holding it (the replays copy into them), and [(distinct part of each
    buffer, its version)] in argument order."""
    ins: list = []
    _walk((args, kwargs), lambda t: None if t.requires_grad else ins.append(t))
    groups: dict = {}
    for k, t in enumerate(ins):
        groups.setdefault(id(t._storage), []).append(k)
    bufs: list = [None] * len(ins)
    for ks in groups.values():
        for k, pair in zip(ks, _buffers([ins[k] for k in ks])):
            bufs[k] = pair
    it = iter(bufs)
    sargs, skw = _walk((list(args), kwargs), lambda t: t if t.requires_grad else next(it)[0])
    return sargs, skw, [(d, d._storage.version) for _, d in bufs]


def _write_back(statics: list, ins: list) -> None:
    """Copy the argument buffers a capture's run wrote (their version moved) into the caller's
    tensors (ins), as eager's writes would have gone there; read-only aliases (a broadcast
    view of a written argument) are skipped: their writeable twin carries the write."""
    for (buf, version), t in zip(statics, ins):
        if buf._storage.version != version and t.flags.writeable:
            ew.copy_into(t, buf)


def _copies(result):
    """result with fresh copies of its tensors, sharing memory where the step's do."""
    ts: list = []
    _walk(result, ts.append)
    it = iter(copy_sharing(ts))
    return _walk(result, lambda t: next(it))


class Compiled:
    """A function compiled with tensor.compile (see the module docstring)."""

    def __init__(self, fn, cache_size: int = 8, fuse: bool = True):
        self.fn, self.cache_size, self.fuse = fn, cache_size, fuse
        self.label = getattr(fn, "__qualname__", None) or repr(fn)
        self._cache: OrderedDict = OrderedDict()   # signature -> "seen" | Program | (reason,)
        self._stats = {"eager": 0, "captures": 0, "replays": 0, "evictions": 0}
        self._warned = False
        self._lock = threading.RLock()
        functools.update_wrapper(self, fn)

    def stats(self) -> dict:
        """Calls run eagerly, captures, replays, signatures evicted from the cache; over the
        cached programs: their memory (bytes their pools reserve, and the most they had
        allocated: the capture's peak, which every replay repeats), their steps, the kernel
        calls the capture recorded (launches) and those a replay makes (replay_launches: fused
        runs count once), the recorded calls that run inside fused kernels, and the tensor
        arguments and results a replay reads and hands over in place (not copied), and the CUDA
        Graphs their replays launch (tensor/graph_replay.py)."""
        progs = [e for e in self._cache.values() if type(e) is Program]
        pools = [p for e in progs for p in e.pools]
        return dict(self._stats, pool_reserved=sum(p.memory_reserved() for p in pools),
                    pool_peak=sum(p.max_memory_allocated() for p in pools),
                    steps=sum(len(e.steps) for e in progs),
                    launches=sum(e.launches for e in progs),
                    replay_launches=sum(sum(st[0] is not None for st in e.steps) for e in progs),
                    fused_calls=sum(e.fused_calls for e in progs),
                    inputs_in_place=sum(len(e.inputs) - len(e.copied) for e in progs),
                    outputs_in_place=sum(len(e.outs) - len(e.out_copied) for e in progs),
                    cuda_graphs=sum(seg[2] not in (None, "eager") for e in progs
                                    for seg in e.segments or ()))

    def __call__(self, *args, **kwargs):
        g = _hook.grad_state
        # inside another capture (its recorder sees our ops), in forward mode (autograd.jvp:
        # tangents ride on the tensors, and neither a capture's copies nor a replay's carry them)
        # or under saved_tensors_hooks (a replay's graph would skip the pack hook)
        if _hook.capture is not None or (g is not None and (g.fw_level or g.saved_hooks)):
            return self._eager(args, kwargs)
        with self._lock:   # one call at a time: a replay writes the program's buffers
            return self._call(args, kwargs)

    def _call(self, args, kwargs):
        parts: list = [_modes()]
        ins: list = []
        refs: list = []
        _signature((args, kwargs), parts, ins, refs)
        first: dict = {}   # which arguments share memory, and where (a write shows in the other)
        for i, t in enumerate(ins):
            j, b = first.setdefault(id(t._storage), (i, t._offset * t.itemsize))
            parts.append((j, t._offset * t.itemsize - b))
        key = tuple(parts)
        entry = self._cache.get(key)
        if entry is None:
            self._remember(key, "seen")
            return self._eager(args, kwargs)
        self._cache.move_to_end(key)
        if type(entry) is tuple:   # not capturable: eager
            return self._eager(args, kwargs)
        if entry != "seen":
            res, stale = entry.run(ins, refs)
            if not stale:
                self._stats["replays"] += 1
                return res
        return self._capture(key, args, kwargs, ins, refs)

    def _eager(self, args, kwargs):
        self._stats["eager"] += 1
        return self.fn(*args, **kwargs)

    def _remember(self, key, entry) -> None:
        self._cache[key] = entry
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
            self._stats["evictions"] += 1
            if self._stats["evictions"] > 2 * self.cache_size and not self._warned:
                self._warned = True
                warnings.warn(f"tensor.compile: {self.label} met more than {self.cache_size} "
                              "signatures (argument shapes, dtypes, values...) and keeps "
                              "recapturing; raise cache_size or keep the arguments' shapes fixed",
                              RuntimeWarning, stacklevel=3)

    def _capture(self, key, args, kwargs, ins: list, refs: list):
        """Capture a call; ins: its tensor arguments that do not require grad, refs: those keyed
        by identity (_signature's)."""
        self._stats["captures"] += 1
        cap = _Capture(self.label)
        cap.fuse = self.fuse
        cap.start()
        statics: list = []
        try:
            sargs, skw, statics = _static_arguments(args, kwargs)
            cap.forget()   # the copies into the buffers are not part of the step
            result = self.fn(*sargs, **skw)
        except BaseException:
            cap.stop()
            _write_back(statics, ins)   # what it wrote before it raised reaches the arguments
            raise
        cap.stop()
        if any(id(t._storage) in cap.seen for t in ins):
            prog, why = None, ("it reaches an argument's memory through another tensor (a "
                               "closure, a global or an attribute), which its replays would not see")
        else:
            try:
                prog, why = finish(cap, statics, result)
            except Exception as e:   # the step has run (its side effects done): its result stands
                prog, why = None, (f"building its program failed ({type(e).__name__}: "
                                   f"{(str(e).splitlines() or [''])[0][:200]})")
        if prog is None:   # it ran (eagerly) on the buffers: its writes go to the arguments
            _write_back(statics, ins)
            return self._refused(key, why, result)
        prog._write_back(ins)   # the step wrote into these arguments: as eagerly
        prog.refs = [_weak(o) for o in refs]
        prog.cells, prog.places = identity_guards(self.fn, refs, set(cap.seen))
        out = _copies(result)   # the caller gets fresh tensors, as from every replay
        statics.clear()
        del result, sargs, skw
        why = seal(prog, cap)
        if why:
            return self._refused(key, why, out)
        self._remember(key, prog)
        return out

    def _refused(self, key, why: str, result):
        self._remember(key, (why,))
        warnings.warn(f"tensor.compile: {self.label}: not captured: {why}; it runs eagerly for "
                      "these arguments", RuntimeWarning, stacklevel=4)
        return result


def compile(fn=None, *, cache_size: int = 8, fuse: bool = True, fullgraph: bool = False,  # noqa: A001
            dynamic=None, backend="inductor", mode=None, options=None, disable: bool = False):
    """Compile fn (a forward, or a whole training step: forward, backward(), optimizer.step())
    for replay: usable as T.compile(fn) or as a decorator, with or without arguments. fuse:
    run each run of elementwise ops as one generated kernel (CPU; bitwise the same results).

    torch.compile's keywords are taken so its calls run unchanged: disable=True returns fn
    itself; fullgraph, dynamic, backend, mode and options tune PyTorch's compiler and change
    nothing here (one capture per signature is the only mode)."""
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be given, not both (as torch.compile)")
    if disable:
        return fn if fn is not None else (lambda f: f)
    if fn is None:
        return lambda f: Compiled(f, cache_size, fuse)
    return Compiled(fn, cache_size, fuse)
