"""Deferred device checks: an index check on the GPU costs no synchronization of its own.

DESIGN.md (Errors): for index tensors on the GPU, a device-side check raises on the next
synchronization. A kernel that validates indices (offsets, take, cross-entropy targets, an
embedding's ids) records the first bad position in a device word with an integer atomicMin
(the smallest position wins, whatever the thread order). The op registers what it would raise
(`Verdict.then`) and returns at once; the words are read when the stream they ran on next
synchronizes with the host -- a host read of any tensor (`numpy()`, `item()`, printing),
`synchronize()`, `Stream.synchronize()` -- and the first bad one raises there, naming the op
that found it. Outputs of a failed check are still memory-safe (a bad index reads element 0 or
writes zero) and a scatter whose offsets failed writes nothing, so the error leaves no tensor
half-written.

The words live in one slab of SLOTS int64 per device. A check takes a free word and sets it to
-1 (all bits) with a memset on the current stream, ordered before the kernel that writes it.
When every word waits, taking one more first reads them all (one device synchronization).

A CUDA graph's checks (a T.cuda.graph capture, tensor.compile's replays) take words of the
graph's own (GraphWords) while it is captured; each launch of the graph makes them wait for the
stream's next synchronization, and a bad one raises there as an eager check would.

`sync_checks(True)`, or STRIDEX_SYNC_CHECKS=1 or CUDA_LAUNCH_BLOCKING=1 in the environment,
reads each verdict at once: the op that found a bad index raises, at one synchronization each.
"""
from __future__ import annotations

import ctypes as C
import os
import threading

from . import current

SLOTS = 256


def _R():
    from . import runtime
    return runtime


def _env_sync() -> bool:
    return any(os.environ.get(v, "") not in ("", "0") for v in ("STRIDEX_SYNC_CHECKS",
                                                               "CUDA_LAUNCH_BLOCKING"))


_sync = _env_sync()


def sync_checks(enabled: bool | None = None) -> bool:
    """Whether device index checks raise in the op that finds a bad index (one host
    synchronization per check) instead of at the next synchronization; sets it when `enabled`
    is given, and returns the setting in force before."""
    global _sync
    before = _sync
    if enabled is not None:
        _sync = bool(enabled)
    return before


class Verdict:
    """One device check: word `slot` of `words` (the device's slab, or a CUDA graph's words),
    written by kernels on `stream` (a CUstream handle)."""
    __slots__ = ("words", "slot", "stream", "raise_bad", "done")

    def __init__(self, words, slot: int, stream, done: bool = False):
        self.words, self.slot, self.stream, self.raise_bad, self.done = words, slot, stream, None, done

    def waiting(self) -> bool:
        """Not read yet (its word is still this check's)."""
        return not self.done

    def ptr(self) -> int:
        """The device address of the word (an unsigned long long * for the kernel)."""
        return self.words.base + 8 * self.slot

    def then(self, raise_bad) -> None:
        """raise_bad(position) raises the op's error when the word reports a bad position: at
        the stream's next synchronization, or now under sync_checks."""
        self.raise_bad = raise_bad
        if _sync and not self.done:
            _slab(self.words.index).settle([self], self.stream)

    def value(self) -> int:
        """The first bad position, or -1 (reads the word now: one synchronization)."""
        return _slab(self.words.index).settle([self], self.stream, report=False)


def _raise(raise_bad, code: int) -> None:
    """raise_bad(code)'s error, saying where it comes from when it is reported late."""
    before, _tls.raising = getattr(_tls, "raising", False), True
    try:
        raise_bad(code)
    except IndexError as e:
        if _sync:
            raise
        raise IndexError(f"{e} (found on the GPU by an earlier op, reported at this "
                         "synchronization; tensor.cuda.sync_checks(True) raises in the op "
                         "itself)") from None
    finally:
        _tls.raising = before


def _capturing_error(why: str):
    return _R().CudaError(
        f"a CUDA graph is capturing: an index check (indexing with an integer tensor, an "
        f"embedding lookup, cross_entropy's targets) cannot be recorded into a graph{why}, as "
        f"its verdict is read on the host")


class _Slab:
    """A device's check words, and the checks waiting for a synchronization (its own words'
    and its graphs')."""

    def __init__(self, index: int):
        self.index = index   # (memory of its own, not a tensor's: it lives with the process)
        self.base = _R().device_state(index)._raw_alloc(8 * SLOTS)
        self.free = list(range(SLOTS - 1, -1, -1))
        self.waiting: list[Verdict] = []
        self.later: list = []   # (raise_bad, code): bad checks read along with an earlier bad one
        self.lock = threading.Lock()

    def take(self) -> Verdict:
        """A fresh word on the current stream (set to -1 there before the check's kernel)."""
        R = _R()
        st = R.device_state(self.index)
        if st.capturing:
            raise _capturing_error("")
        if not self.free:   # every word waits: read them all (a device synchronization)
            R.check(R.drv().cuCtxSynchronize(), "cuCtxSynchronize")
            self.flush(None)
        with self.lock:
            v = Verdict(self, self.free.pop(), current.handle(st))
            self.waiting.append(v)
        R.memset(st, v.ptr(), 0xFF, 8)
        return v

    def settle(self, ready: list, stream, report: bool = True) -> int:
        """Read the words of `ready` (their kernels ran on `stream`, or the device is idle when
        stream is None), give the words back, and raise the first bad one's error (report) or
        return its position; -1 when none is bad."""
        R = _R()
        st = R.device_state(self.index)
        st.make_current()
        s = stream if stream is not None else current.handle(st)
        d = R.drv()
        slots: dict = {}   # id(words) -> (words, its slots read): one copy per set of words
        for v in ready:
            slots.setdefault(id(v.words), (v.words, []))[1].append(v.slot)
        spans = {}
        for k, (w, used) in slots.items():
            lo, hi = min(used), max(used) + 1
            host = (C.c_int64 * (hi - lo))()
            R.check(d.cuMemcpyDtoHAsync(C.addressof(host), w.base + 8 * lo, 8 * (hi - lo), s),
                    "cuMemcpyDtoHAsync")
            spans[k] = (w, lo, host)
        R.check(d.cuStreamSynchronize(s), "cuStreamSynchronize")
        with self.lock:
            # another thread may have read some of them meanwhile (its flush took them too):
            # each word is given back once (twice, two later checks shared a word, and the
            # second one's reset erased the first one's bad index: no error at all)
            ready = [v for v in ready if not v.done]
            gone = {id(v) for v in ready}
            self.waiting = [v for v in self.waiting if id(v) not in gone]
            self.free.extend(v.slot for v in ready if v.words is self)
            for v in ready:
                v.done = True
        codes = []
        for v in ready:
            w, lo, host = spans[id(v.words)]
            code = host[v.slot - lo]
            codes.append(code)
            if code >= 0 and v.words is not self:   # a graph's word keeps its value over
                w.reset(v.slot)                     # replays: -1 again for the next ones
        bad = [(v.raise_bad, code) for v, code in zip(ready, codes) if code >= 0]
        if bad and not report:
            return bad[0][1]
        bad = [b for b in bad if b[0] is not None]
        if bad:     # the first raises now, each other one at a synchronization after it
            try:
                _raise(*bad[0])
            finally:
                with self.lock:
                    self.later.extend(bad[1:])
        return -1

    def flush(self, stream) -> None:
        """The checks whose kernels ran on `stream` (all of them when None: the device is
        idle) are read; the first bad one raises its op's error. A bad check read before, with
        another that raised then, raises first."""
        with self.lock:   # (not while an error's message is made: it may read its tensors)
            late = self.later.pop(0) if self.later and not getattr(_tls, "raising", False) else None
            ready = [v for v in self.waiting if stream is None or int(v.stream) == int(stream)]
        if late is not None:
            _raise(*late)
        if ready:
            self.settle(ready, stream)


class GraphWords:
    """The check words of one CUDA graph (tensor.compile records a step's index checks into
    its graphs). Each check recorded gets a word of its own, set to -1 once; the kernels of
    every replay atomicMin into it, so a bad index of any replay since the last read is kept.
    Each launch of the graph makes its checks wait for the stream's next synchronization
    (`launched`); a bad word is set back to -1 when read."""

    @classmethod
    def get(cls, index: int) -> GraphWords:
        """Words for a capture on cuda:index: a spare set (all -1) or a new one."""
        spare = _spare.get(index)
        return spare.pop() if spare else cls(index)

    def release(self) -> None:
        """The capture recorded no check, or was given up (its words were never written):
        keep them for the next capture (no free, which would synchronize)."""
        self.checks = []
        _spare.setdefault(self.index, []).append(self)

    def __init__(self, index: int, n: int = 64):
        R = _R()
        self.st = st = R.device_state(index)
        self.index, self.n = index, n
        self.base = st._raw_alloc(8 * n)
        st.make_current()
        R.check(R.drv().cuMemsetD8(self.base, 0xFF, 8 * n), "cuMemsetD8")
        self.checks: list[Verdict] = []

    def take(self, stream) -> Verdict:
        if len(self.checks) == self.n:
            raise _capturing_error(f" (more than {self.n} in one graph)")
        if _sync:
            raise _capturing_error(" under tensor.cuda.sync_checks(True)")
        v = Verdict(self, len(self.checks), stream, done=True)   # waits from a launch on
        self.checks.append(v)
        return v

    def launched(self, stream) -> None:
        """The graph was launched on `stream`: its checks wait for that stream's next
        synchronization (once each, however many launches come before it)."""
        if not self.checks:
            return
        slab = _slab(self.index)
        with slab.lock:
            for v in self.checks:
                if v.done:
                    v.done, v.stream = False, stream
                    slab.waiting.append(v)

    def reset(self, slot: int) -> None:
        R = _R()
        self.st.make_current()
        R.check(R.drv().cuMemsetD8(self.base + 8 * slot, 0xFF, 8), "cuMemsetD8")

    def __del__(self):
        try:
            self.st._raw_free(self.base)
        except Exception:  # noqa: BLE001 - interpreter shutdown: the driver may be gone
            pass


_slabs: dict[int, _Slab] = {}
_slabs_lock = threading.Lock()
_tls = threading.local()
_spare: dict[int, list[GraphWords]] = {}


def _slab(index: int) -> _Slab:
    slab = _slabs.get(index)
    if slab is None:
        with _slabs_lock:
            slab = _slabs.get(index)
            if slab is None:
                slab = _slabs[index] = _Slab(index)
    return slab


def verdict(device) -> Verdict:
    """A fresh check word on `device` (a Device), for one check kernel's launch: the slab's,
    or, while this thread captures a graph (record_into), the graph's."""
    sink = getattr(_tls, "sink", None)
    if sink is not None and sink.index == device.index:
        return sink.take(current.handle(sink.st))
    return _slab(device.index).take()


def record_into(words: GraphWords | None) -> GraphWords | None:
    """While this thread captures a CUDA graph, its index checks take `words` (the graph's);
    None ends that. Returns the words in use before."""
    before = getattr(_tls, "sink", None)
    _tls.sink = words
    return before


def flush(index: int, stream=None) -> None:
    """At a host synchronization of cuda:index: raise the first bad verdict of the checks that
    ran on `stream` (a CUstream handle; None: every stream, after a device synchronize)."""
    slab = _slabs.get(index)
    if slab is not None and (slab.waiting or slab.later):
        slab.flush(stream)


def flush_current(st) -> None:
    """flush() for the checks on the stream now current on device state st (a host read just
    synchronized it)."""
    if st.index in _slabs:
        flush(st.index, current.handle(st))


def pending(index: int) -> int:
    """How many checks on cuda:index wait for a synchronization (tests and diagnostics)."""
    slab = _slabs.get(index)
    return len(slab.waiting) + len(slab.later) if slab is not None else 0

