"""Replay of a captured step (tensor/capture.py records it; tensor/compiled.py drives both):
finish() turns a capture's recorded calls into a Program over static memory, seal() sets its
guards, Program.run() replays it.

The program refers to memory through aliases that own nothing: the capture's private pool
(kept alive with the program), memory made during the capture (constants from host data: held),
and memory from before (parameters, buffers: guarded by weak references, a replay re-captures
when one is gone). Random draws are re-based on their generators at each replay; runs of
elementwise calls become fused kernels (tensor/fusion.py) and other calls are prepared once by
their backend where it can; arguments and results are read and handed over in place where every
call that uses them can be rebased to other memory, else copied. On CUDA the runs of device
work between islands, random draws and checked calls are recorded into CUDA Graphs at the
first replay and launched as one each after (tensor/graph_replay.py).
"""
from __future__ import annotations

import bisect
import functools
import os
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

from . import elementwise as ew
from . import graph_replay
from ._tensor import Storage, Tensor, new_storage
from .backend import report
from .capture import _CHECKED, _Capture, _walk
from .dtypes import uint8
from .fusion import plan

_RANDOM = {"random_fill": 3, "randperm": 2}   # call -> index of its seed argument (offset next)


def _draw_of(name: str, args: tuple):
    """(seed, offset) of the Philox draw a backend call reads, or None: the random calls' seed
    and offset arguments, or an argument object that says (`rng_draw()`; its `with_rng_draw`
    makes the same object at another draw: the fused attention's dropout)."""
    i = _RANDOM.get(name)
    if i is not None:
        return args[i], args[i + 1]
    for a in args:
        if hasattr(a, "rng_draw"):
            return a.rng_draw()
    return None


def _redraw(name: str, args: tuple, seed: int, offset: int) -> tuple:
    i = _RANDOM.get(name)
    if i is not None:
        return args[:i] + (seed, offset) + args[i + 2:]
    return tuple(a.with_rng_draw(seed, offset) if hasattr(a, "rng_draw") else a for a in args)


_PTR_MIN = 1 << 32   # an int argument this large is taken for an address (sizes are smaller)


def _ints(obj, out: list) -> list:
    """The ints in obj (lists and tuples, nested)."""
    if type(obj) is int:
        out.append(obj)
    elif isinstance(obj, list | tuple):
        for x in obj:
            _ints(x, out)
    return out


class _Memory:
    """Sorts the memory a capture's calls touch: pool memory (reserved for the program), memory
    made during the capture outside the pools (constants from host data: the program keeps it),
    and memory that was there before (parameters, buffers: the program reads it at replay, so
    it must still be alive then: a guard)."""

    def __init__(self, cap: _Capture):
        self.cap = cap
        self.pool_allocs = set(map(id, cap.pools.values()))
        self.aliases: dict = {}     # id(Storage) -> its non-owning alias
        self.hold: dict = {}        # id -> Storage made during the capture (kept alive)
        self.before: dict = {}      # id -> (weakref, Storage) of memory from before the capture
        self.ranges: list = []      # (start, end) of every storage the calls may address

    def storage(self, s: Storage) -> Storage:
        """What the program refers to for s: an alias for pool and earlier memory (nothing to
        keep alive: the pool is the program's, earlier memory is guarded), s itself otherwise."""
        a = self.aliases.get(id(s))
        if a is not None:
            return a
        self.ranges.append((s.ptr, s.ptr + s.nbytes))
        if s._alloc is not None and id(s._alloc) in self.pool_allocs:
            a = Storage(s.ptr, s.nbytes, s.device, None, s._alloc)   # owns nothing
        elif id(s) in self.cap.new:
            self.hold[id(s)] = s
            a = s
        else:
            self.before[id(s)] = (weakref.ref(s), s.version)
            a = Storage(s.ptr, s.nbytes, s.device)
        self.aliases[id(s)] = a
        return a

    def tensor(self, t: Tensor) -> Tensor:
        return Tensor._make(self.storage(t._storage), t._shape, t._strides, t._offset, t._dtype)

    def check_addresses(self, calls) -> str | None:
        """Every int argument that looks like an address points into memory the program knows."""
        spans = self.ranges + [(seg, seg + sz.size) for p in self.cap.pools.values()
                               for seg, sz in p._segments.items()]
        for heir, made in self.cap.kept:
            if made:
                self.hold[id(heir)] = heir
                spans.append((heir.ptr, heir.ptr + heir.nbytes))
        known = _Spans(spans)   # (an address one past the end counts: an empty tensor's)
        stale = _Spans([(h.ptr, h.ptr + h.nbytes - 1) for h, made in self.cap.kept
                        if not made and h.nbytes])
        for c in calls:
            if c[0] is None:
                continue
            for v in _ints((c[2], c[3]), []):
                if v < _PTR_MIN:
                    continue
                if stale.holds(v):
                    return "it reads a tensor that was freed during the step"
                if not known.holds(v):
                    return f"{c[1]} was given memory the capture cannot account for"
        return None


class _Spans:
    """A set of address ranges [lo, hi], both ends in (merged, sorted), that answers `holds`
    by bisection."""

    def __init__(self, spans):
        merged: list = []
        for lo, hi in sorted(spans):
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self.starts = [m[0] for m in merged]
        self.ends = [m[1] for m in merged]

    def holds(self, v: int) -> bool:
        i = bisect.bisect_right(self.starts, v) - 1
        return i >= 0 and v <= self.ends[i]


class Program:
    """A captured step: its recorded calls over static memory, replayed by run()."""

    def __init__(self, label):
        self.label = label
        self.steps: list = []       # (fn, args, kwargs, expected result or None, rng or None)
        self.inputs: list = []      # static input buffers (aliases), in argument order
        self.outs: list = []        # output tensors (aliases), in the result's order
        self.tree = None            # the result with each tensor replaced by its index in outs
        self.guards: list = []      # weakrefs that must be alive for a replay
        self.bump: list = []        # weakrefs to the storages the step writes (versions)
        self.gens: dict = {}        # generator -> offsets the step draws (its advance)
        self.bases: list = []       # generators whose offset at replay the draws start from
        self.pools: list = []       # the private allocators (the program's memory)
        self.hold: list = []
        self.written_inputs: list = []
        self.watches: list = []     # (weakref, attribute, value) a replay needs unchanged
        # identities a replay needs unchanged: the arguments keyed by id (weakrefs, None for an
        # object that has none), and where the step found tensors it reads in Python state:
        # (closure cell, weakref), (dict: globals, a module's parameters..., key, weakref)
        self.refs: list = []
        self.cells: list = []
        self.places: list = []
        self.grad_guards: list = []  # (leaf weakref, None or weakref): its .grad at the start
        self.reset: list = []       # (generator, seed, offset) of generators the step seeds
        self.fused_calls = 0        # recorded calls that run inside fused kernels
        self.launches = 0           # kernel calls recorded (a replay makes len(steps) - islands)
        # arguments read in place: (first input of a block, its [lo, hi), the steps using it,
        # [the address shift they have now]); the others are copied into their buffers
        self.rebind: list = []
        self.copied: list = []
        self.out_rebind: list = []  # (outputs of one block, its [lo, hi), the steps using it)
        self.out_copied: list = []
        self.out_groups: list = []  # out_copied by the storage they share (copied once each)
        # graphs (CUDA): the device and backend whose calls a graph may record, which steps
        # are such calls, and the segments the first replay makes of them:
        # [first, end, the graph's replay | None (to record) | "eager"]
        self.graph_dev = self.graph_be = None
        self.graphable: list = []
        self.segments: list | None = None

    def run(self, inputs, refs=()):
        """Replay: None when a guard fails (the caller captures again), else the result."""
        for w in self.guards:
            if w() is None:
                return None, True
        for w, o in zip(self.refs, refs):   # (an id is reused once its object dies)
            if w is not None and w() is not o:
                return None, True
        for c, w in self.cells:
            o = w()
            if o is None or c.cell_contents is not o:
                return None, True
        for d, k, w in self.places:
            o = w()
            if o is None or d.get(k) is not o:
                return None, True
        for w, attr, v in self.watches:
            o = w()
            if o is None or getattr(o, attr) != v:
                return None, True
        for wl, wg in self.grad_guards:   # each leaf's .grad as the capture began with it
            leaf = wl()
            if leaf is None or (leaf.grad is not None if wg is None else leaf.grad is not wg()):
                return None, True
        for first, lo, hi, steps, last in self.rebind:   # read the caller's tensors in place
            delta = inputs[first].data_ptr() - self.inputs[first].data_ptr()
            if delta != last[0]:
                for st in steps:
                    st.rebase(lo, hi, delta)
                last[0] = delta
        for i in self.copied:
            ew.copy_into(self.inputs[i], inputs[i])
        res = self._fresh_outputs()
        base = {g: (g.seed, g.offset) for g in self.bases}
        try:
            # (a graph keeps the addresses it recorded: not with calls rebased between replays)
            if any(self.graphable) and not (self.rebind or self.out_rebind) and graph_replay.enabled():
                graph_replay.run(self, base)
            else:
                for step in self.steps:
                    self.step(step, base)
        except BaseException:   # (an index out of range): what it wrote reaches the arguments,
            self._bump()          # and the memory it may have written counts as written, as eagerly
            self._write_back(inputs)
            raise
        for g, adv in self.gens.items():
            g.offset = base[g][1] + adv
        for g, seed, off in self.reset:   # seeded in the step: left as the step leaves it
            g.seed, g.offset = seed, off
        self._bump()
        self._write_back(inputs)
        for g in self.out_groups:
            if len(g) == 1:
                res[g[0]] = ew.copy(self.outs[g[0]])
            else:
                for i, c in zip(g, copy_sharing([self.outs[i] for i in g])):
                    res[i] = c
        return _unflatten(self.tree, res), False

    def _bump(self) -> None:
        """The version counters of the memory the step writes move on (saved tensors see it)."""
        for w in self.bump:
            s = w()
            if s is not None:
                s.version += 1

    def _write_back(self, inputs) -> None:
        """The arguments the step writes get their buffers' values (read-only aliases of a
        written argument excepted: their writeable twin carries the write)."""
        for i in self.written_inputs:
            if inputs[i].flags.writeable:
                ew.copy_into(inputs[i], self.inputs[i])

    def step(self, step, base) -> None:
        """Run one step: a call with its arguments, or an island (host work, eagerly)."""
        fn, args, kwargs, expect, rng = step
        if fn is None:   # an island: its function and arguments
            args(*kwargs)
            return
        if rng is not None:   # the draw at the generator's offset now, as eagerly
            g, name, rel = rng
            seed, off = base[g]
            args = _redraw(name, args, seed, off + rel)
        r = fn(*args, **kwargs)
        if expect is not None:   # (-1: the capture's check passed) a device's verdict is read at
            report(r, functools.partial(self._bad_index, fn.__name__))   # the next synchronization

    def _bad_index(self, name: str, position: int):
        raise IndexError(f"tensor.compile: {self.label}: a replayed {name} found an index out of "
                         f"range (at position {position}); eager would have raised")

    def _fresh_outputs(self) -> list:
        """Before the steps run: for each output block the steps can be rebased off, a fresh
        block they write instead (the result, handed over without a copy); the other outputs
        are copied after the steps (None here)."""
        res = [None] * len(self.outs)
        for members, lo, hi, steps in self.out_rebind:
            s = new_storage(hi - lo, self.outs[members[0]].device)
            for st in steps:
                st.rebase(lo, hi, s.ptr - lo)
            for i in members:
                o = self.outs[i]
                res[i] = Tensor._make(s, o._shape, o._strides, o._offset, o._dtype)
        return res


def _byte_span(t: Tensor) -> tuple[int, int]:
    """[lo, hi) of the bytes t's elements occupy, from its storage's start (empty: (0, 0))."""
    if 0 in t.shape:
        return (0, 0)
    lo = t._offset + sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s < 0)
    hi = t._offset + sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s > 0) + 1
    return lo * t.itemsize, hi * t.itemsize


def copy_sharing(ts: list) -> list:
    """Fresh copies of ts that share memory as ts do (eager's results: (y, y[1:])): the bytes
    the tensors of one storage span are copied once, each tensor a view at its place in them;
    a tensor listed twice gives one copy."""
    groups: dict = {}
    for t in ts:
        groups.setdefault(id(t._storage), {})[id(t)] = t
    done: dict = {}
    for g in groups.values():
        full = [t for t in g.values() if 0 not in t._shape]
        if len(full) < 2:
            done.update((k, ew.copy(t)) for k, t in g.items())
            continue
        spans = [_byte_span(t) for t in full]
        lo = min(a for a, _ in spans) // 16 * 16   # a multiple of every itemsize
        raw = Tensor._make(full[0]._storage, (max(b for _, b in spans) - lo,), (1,), lo, uint8)
        s = ew.copy(raw)._storage
        for k, t in g.items():
            isz = t.itemsize
            done[k] = (Tensor._make(s, t._shape, t._strides, (t._offset * isz - lo) // isz, t._dtype)
                       if 0 not in t._shape else ew.copy(t))
    return [done[id(t)] for t in ts]


def _unflatten(tree, outs):
    return _walk(tree, lambda s: outs[s.i], _Slot)


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def finish(cap: _Capture, statics: list, result) -> tuple[Program | None, str | None]:
    """The program of a finished capture (its recorders removed), or (None, why not)."""
    if cap.failed:
        return None, cap.failed
    outs: list = []
    slots: dict = {}   # id(tensor) -> its slot: a tensor returned twice is one object, as eagerly

    def slot(t):
        if id(t) not in slots:
            outs.append(t)
            slots[id(t)] = _Slot(len(outs) - 1)
        return slots[id(t)]
    tree = _walk(result, slot)
    if any(t.requires_grad for t in outs):
        return None, ("it returns a tensor that requires grad (compile the whole step, backward() "
                      "included, and return what you read: the loss, detached)")
    mem = _Memory(cap)
    prog = Program(cap.label)
    prog.tree, prog.pools = tree, list(cap.pools.values())
    prog.graph_dev, prog.graph_be = graph_replay.graph_device(cap.pools)
    conv = mem.tensor
    starts: dict = {}   # generator -> its offset at its first draw of the step
    draws: dict = {}    # (seed, offset) -> (generator, seeded in the step), of every draw
    for g, off, fixed in cap.draws:
        if not fixed:
            starts.setdefault(g, off)
        if draws.setdefault((g.seed, off), (g, fixed))[0] is not g:
            return None, "two generators with one seed drew at one offset"
    used, keep = set(), []
    fused = {}   # first call of a fused run -> (its last call, the fused kernel's callable)
    runs = []
    for first, last, f in plan(cap.calls, cap.alias_rec) if cap.fuse else ():
        f.inputs = [(x if scalar else conv(x), sfx, scalar) for x, sfx, scalar in f.inputs]
        f.outputs = [(conv(o), sfx) for o, sfx in f.outputs]
        if f.reduce is not None:
            f.reduce.x, f.reduce.out = conv(f.reduce.x), conv(f.reduce.out)
        if f.gemm is not None:
            f.gemm = tuple(map(conv, f.gemm))
            if f.gemm_add and f.gemm_add[0] is not None:
                f.gemm_add = (conv(f.gemm_add[0]),) + f.gemm_add[1:]
        if f.head is not None:
            f.head.x, f.head.out = conv(f.head.x), conv(f.head.out)
        runs.append((first, last, f))
    for (_, last, f), (first, ready) in zip(runs, _build_fused(cap, runs)):
        if ready is not None:
            fused[first] = (last, ready)
            keep.append(f)   # its scalar operands' buffers
    skip_to = -1
    prog.launches = sum(c[0] is not None for c in cap.calls)
    for ci, c in enumerate(cap.calls):
        if ci <= skip_to:   # inside a fused run: only its memory is accounted for
            _walk((c[2], c[3]), conv)
            continue
        if ci in fused:
            skip_to, ready = fused[ci]
            prog.steps.append((ready, (), {}, None, None))
            prog.graphable.append(cap.calls[ci][5] is prog.graph_be is not None)
            prog.fused_calls += skip_to - ci + 1
            continue
        if c[0] is None:   # an island
            prog.steps.append((None, c[1], c[2], None, None))
            prog.graphable.append(False)
            continue
        fn, name, args, kwargs, r, be = c
        rng, d = None, _draw_of(name, args)   # (unsigned seed, offset), as draws' keys
        if d in draws:
            g, fixed = draws[d]
            rng = None if fixed else (g, name, d[1] - starts[g])
            used.add(d)
        args, kwargs = tuple(_walk(list(args), conv)), _walk(kwargs, conv)
        ready = be.prepare(name, args, kwargs) if rng is None and name not in _CHECKED else None
        if ready is not None:   # the backend did the call's host work once; what the arguments
            keep.append((args, kwargs))   # own (a scalar operand's buffer) must stay alive
            fn, args, kwargs = ready, (), {}
        prog.steps.append((fn, args, kwargs, r if name in _CHECKED else None, rng))
        prog.graphable.append(rng is None and be is prog.graph_be is not None)
    if len(used) != len(draws):   # a draw no call could be re-based for: a replay would repeat it
        return None, "an op drew random numbers in a way the capture cannot redraw"
    prog.gens = {g: g.offset - starts[g] for g in starts if g not in cap.reset}
    prog.bases = list(starts)
    prog.reset = [(g, g.seed, g.offset) for g in cap.reset]
    for s, _ in cap.seen.values():
        mem.storage(s)
    why = mem.check_addresses(cap.calls)
    if why:
        return None, why
    prog.inputs = [mem.tensor(t) for t, _ in statics]
    prog.written_inputs = [i for i, (t, v) in enumerate(statics) if t._storage.version != v]
    prog.outs = [mem.tensor(t) for t in outs]
    if graph_replay.will_record(prog.graphable):   # a graph keeps its addresses: copy
        prog.copied, prog.out_copied = list(range(len(statics))), list(range(len(outs)))
    else:
        _plan_rebinding(prog, statics)
        _plan_results(prog, prog.pools)
    groups: dict = {}
    for i in prog.out_copied:
        groups.setdefault(id(prog.outs[i]._storage), []).append(i)
    prog.out_groups = list(groups.values())
    prog.hold = list(mem.hold.values()) + keep
    prog.bump = [weakref.ref(s) for s, v in cap.seen.values() if s.version != v]
    prog.guards = [w for w, _ in mem.before.values()]
    prog.watches = list(cap.watches.values())
    prog.grad_guards = [g for g in cap.grad_guards.values() if g is not None]
    return prog, None


def _fuse_one(cap: _Capture, first: int, last: int, f):
    """(first call, the backend's fused callable or None) of run f of calls first..last."""
    be = cap.calls[first][5]
    ready = _try_fuse(be, f, cap.label)
    if ready is None and (f.gemm or f.head) is not None:   # the run without its first call
        f.gemm, f.gemm_add, f.head = None, (), None
        first += 1
        ready = _try_fuse(be, f, cap.label) if first < last else None
    return first, ready


def _try_fuse(be, f, label: str):
    """be.fuse(f), or None (the run replays call by call, as eagerly) when building its kernel
    fails: a compile error must not fail a step that has already run (its side effects done),
    nor every later call of it."""
    try:
        return be.fuse(f)
    except Exception as e:
        why = (str(e).splitlines() or [""])[0][:200]
        warnings.warn(f"tensor.compile: {label}: building a fused kernel failed ({type(e).__name__}: "
                      f"{why}); its calls replay unfused", RuntimeWarning, stacklevel=2)
        return None


def _build_fused(cap: _Capture, runs: list) -> list:
    """_fuse_one of each run, the kernels built on a few threads at once (the compilers run
    as processes or release the GIL: a step's fused kernels build in parallel)."""
    if len(runs) < 2:
        return [_fuse_one(cap, *r) for r in runs]
    with ThreadPoolExecutor(min(len(runs), os.cpu_count() or 1, 16)) as ex:
        return list(ex.map(lambda r: _fuse_one(cap, *r), runs))


def _touches(step, lo: int, hi: int) -> bool:
    """Does a step (not rebasable) use memory in [lo, hi)?"""
    fn, args, kwargs = step[:3]
    if fn is None:   # an island: its arguments may hold the buffers (an optimizer's closure)
        return any(a is not None for a in kwargs)
    found = []
    _walk((args, kwargs), lambda t: found.append(t))
    for t in found:
        a, b = t._storage.ptr, t._storage.ptr + t._storage.nbytes
        if a < hi and lo < b:
            return True
    return any(lo <= v < hi for v in _ints((args, kwargs), []))


def _plan_rebinding(prog: Program, statics: list) -> None:
    """Which argument buffers a replay can skip, reading the caller's tensors in place (as
    eager does): a block that no output lies in, that the step does not write, and whose every
    use is a call that can be rebased to another address (a prepared or fused kernel call)."""
    blocks: dict = {}
    for i, (t, _) in enumerate(statics):
        blocks.setdefault(id(t._storage), []).append(i)
    for members in blocks.values():
        s = prog.inputs[members[0]]._storage
        lo, hi = s.ptr, s.ptr + s.nbytes
        steps = _movable(prog, lo, hi)
        if (steps is None or any(i in prog.written_inputs for i in members)
                or any(o._storage.ptr < hi and lo < o._storage.ptr + o._storage.nbytes for o in prog.outs)):
            prog.copied += members
        else:
            prog.rebind.append((members[0], lo, hi, steps, [0]))


def _plan_results(prog: Program, pools: list) -> None:
    """Which outputs a replay hands over without a copy: a block of the step's pool that only
    rebasable calls use becomes a fresh block each replay (the calls that used its memory
    before the output was made use the new block as scratch: it is the replay's alone)."""
    blocks: dict = {}
    for i, o in enumerate(prog.outs):
        s = o._storage
        pooled = s._alloc is not None and any(s._alloc is p for p in pools)
        blocks.setdefault((s.ptr, s.nbytes) if pooled else ("own", i), []).append(i)
    ins = [(t._storage.ptr, t._storage.ptr + t._storage.nbytes) for t in prog.inputs]
    for key, members in blocks.items():
        steps = None if key[0] == "own" else _movable(prog, key[0], key[0] + key[1])
        if steps is None or any(a < key[0] + key[1] and key[0] < b for a, b in ins):
            prog.out_copied += members
        else:
            prog.out_rebind.append((members, key[0], key[0] + key[1], steps))


def _movable(prog: Program, lo: int, hi: int):
    """The steps that use memory [lo, hi), if every one of them can be rebased; else None."""
    if any(not hasattr(st[0], "rebase") and _touches(st, lo, hi) for st in prog.steps):
        return None
    return [st[0] for st in prog.steps if hasattr(st[0], "rebase")
            and any(lo <= v < hi for v in st[0].addresses())]


def seal(prog: Program, cap: _Capture) -> str | None:
    """After the caller dropped the capture's arguments and results: what only the capture
    kept alive goes now. Memory from before the capture that died is what the program would
    read stale; the pool memory still alive is held by Python state (a parameter's .grad)
    that the program writes: a replay needs both as they are now (guards)."""
    cap.calls = cap.seen = cap.kept = cap.casts = None
    for p in prog.pools:   # the program reuses what the step freed (the sanitizer's pool)
        sealed = getattr(p, "seal", None)
        if sealed is not None:
            sealed()
    if any(w() is None for w in prog.guards):
        return "it reads a tensor that no longer exists once the step is done"
    prog.guards += [weakref.ref(s) for s in cap.pooled]
    prog.bump += [weakref.ref(s) for s in cap.pooled if s.version]   # written in place
    return None
