"""`tensor.compile`: a function run eagerly once per signature, captured the second time and
replayed after that (tensor/capture.py says how, and what a capture refuses).

A signature is what a replay depends on: each tensor argument's shape, dtype, device, layout
(contiguous or not) and requires_grad (a tensor that requires grad by its identity: it is
read in place, not copied), and the value of every other argument (objects such as modules and
optimizers by identity). At most `cache_size` signatures are kept (least recently used out);
a function that keeps meeting new ones warns that it recompiles too often.

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
from . import elementwise as ew
from ._tensor import Tensor, new_storage
from .capture import _Capture, _walk
from .replay import Program, finish, seal
from .views import distinct

_SCALARS = (int, float, complex, str, bytes, bool, type(None))


def _signature(obj, parts: list, ins: list) -> None:
    """Append obj's signature to parts, and its tensors that do not require grad (their
    distinct elements: what a replay reads) to ins, in the order _walk visits them."""
    t = type(obj)
    if t is Tensor:
        if obj._requires_grad:
            parts.append(("grad", id(obj)))
        else:
            contig = obj.is_contiguous()
            # dtypes and devices are singletons: their ids hash faster than their __hash__
            parts.append((obj._shape, id(obj._dtype), id(obj._storage.device), contig or obj._strides))
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
            _signature(x, parts, ins)
    elif t is dict:
        parts.append((dict, tuple(obj)))
        for x in obj.values():
            _signature(x, parts, ins)
    else:
        parts.append(("id", id(obj)))


def _modes() -> tuple:
    """The thread's modes a step's ops depend on: grad mode (whether they record) and the
    autocast regions (which dtypes they compute in). Part of every signature."""
    from . import amp
    g = _hook.grad_state
    return (g is None or bool(g.grad_enabled), tuple(sorted(amp._state.regions.items(),
                                                            key=lambda kv: kv[0])))


def _byte_span(t: Tensor) -> tuple[int, int]:
    """[lo, hi) of the bytes t's elements occupy, from its storage's start (empty: (0, 0))."""
    if 0 in t.shape:
        return (0, 0)
    lo = t._offset + sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s < 0)
    hi = t._offset + sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s > 0) + 1
    return lo * t.itemsize, hi * t.itemsize


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
        if _hook.capture is not None:   # inside another capture: its recorder sees our ops
            return self._eager(args, kwargs)
        with self._lock:   # one call at a time: a replay writes the program's buffers
            return self._call(args, kwargs)

    def _call(self, args, kwargs):
        parts: list = [_modes()]
        ins: list = []
        _signature((args, kwargs), parts, ins)
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
            res, stale = entry.run(ins)
            if not stale:
                self._stats["replays"] += 1
                return res
        return self._capture(key, args, kwargs, ins)

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

    def _capture(self, key, args, kwargs, ins: list):
        """Capture a call; ins: its tensor arguments that do not require grad (_signature's)."""
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
            prog, why = finish(cap, statics, result)
        if prog is None:   # it ran (eagerly) on the buffers: its writes go to the arguments
            _write_back(statics, ins)
            return self._refused(key, why, result)
        prog._write_back(ins)   # the step wrote into these arguments: as eagerly
        out = _walk(result, ew.copy)   # the caller gets fresh tensors, as from every replay
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


def compile(fn=None, *, cache_size: int = 8, fuse: bool = True):  # noqa: A001  (PyTorch's name)
    """Compile fn (a forward, or a whole training step: forward, backward(), optimizer.step())
    for replay: usable as T.compile(fn) or as a decorator, with or without arguments. fuse:
    run each run of elementwise ops as one generated kernel (CPU; bitwise the same results)."""
    if fn is None:
        return lambda f: Compiled(f, cache_size, fuse)
    return Compiled(fn, cache_size, fuse)
