"""Device-agnostic caching allocator over a raw ``alloc``/``free`` pair.

Segments obtained from ``raw_alloc`` (``posix_memalign`` on CPU now,
``cuMemAlloc`` on CUDA later) are carved into blocks; freed blocks stay cached.

* sizes round up to multiples of 512 B; a 0-byte request gets a 512-byte block;
* small pool: rounded sizes <= 1 MiB, from 2 MiB segments; large pool: bigger sizes,
  from 20 MiB segments (requests < 10 MiB) or the size rounded up to 2 MiB
  (shrunk to that minimum when the bigger segment would break the limit);
* best fit among free blocks of the pool and stream (sorted ``(stream, size, ptr)``
  keys + :mod:`bisect`); split when the rest is worth it (small: >= 512 B, large:
  > 1 MiB); a freed block merges with its free neighbours;
* segments, hence blocks, belong to one stream and are reused only on it;
* out of memory (``raw_alloc`` raises MemoryError or returns 0, or the limit would
  be passed): ``gc.collect()`` without the lock (finalizers give blocks back via
  ``free``), then under the lock: the cache again, release fully free segments,
  one more raw try, else :class:`OutOfMemoryError`;
* re-entrancy: a finalizer (gc runs them at allocations) or a tracer / profiler callback
  (``sys.settrace``, ``sys.setprofile``: they run at every line of this file) may free or
  allocate while its thread is inside one of our locked sections, or inside another library
  lock (`CriticalLock`) that a thread holding an allocator lock may be waiting for. Such a
  thread is marked *before* it takes the lock and unmarked after releasing it, so its nested
  calls never wait for an allocator lock: a nested ``free`` is queued, a nested ``malloc``
  gets a segment of its own straight from ``raw_alloc``; both are put in the books under the
  lock at the start and end of every locked section (of any thread). No deadlock, no
  half-updated pool.

>>> import itertools
>>> addrs = itertools.count(1 << 20, 1 << 26)
>>> a = CachingAllocator(lambda n: next(addrs), lambda p: None)
>>> b = a.malloc(1000)
>>> b.size, a.memory_allocated(), a.memory_reserved()
(1024, 1024, 2097152)
>>> a.free(b)
>>> a.malloc(1000).ptr == b.ptr      # served from the cache, no raw alloc
True
"""

from __future__ import annotations

import gc
import operator
import threading
import weakref
from bisect import bisect_left as _bisect_left
from bisect import insort as _insort
from collections.abc import Callable
from threading import get_ident as _get_ident
from typing import Any

from .memory_threads import _BUSY, track_allocator, track_lock

__all__ = ["Block", "CachingAllocator", "CriticalLock", "OutOfMemoryError"]

_KiB = 1024
_MiB = 1024 * 1024
_MIN_BLOCK = 512  # every size is a multiple of this
_SMALL_SIZE = 1 * _MiB  # largest rounded size served by the small pool
_SMALL_SEGMENT = 2 * _MiB  # segment size of the small pool
_LARGE_SEGMENT = 20 * _MiB  # segment size for large requests < _MIN_LARGE_ALLOC
_MIN_LARGE_ALLOC = 10 * _MiB
_ROUND_LARGE = 2 * _MiB  # large segments are multiples of this
_LARGE_SPLIT = 1 * _MiB  # large-pool remainders must be bigger than this to split
_QUICK_MAX = 64 * _KiB  # freed blocks up to this size (stream 0) park unmerged for exact reuse

RawAlloc = Callable[[int], int]
RawFree = Callable[[int], None]


def limit_bytes(nbytes, op: str) -> int | None:
    """nbytes checked as a memory limit: None, or an int >= 0 (TypeError / ValueError naming op)."""
    if nbytes is None:
        return None
    if isinstance(nbytes, bool) or not hasattr(nbytes, "__index__"):
        raise TypeError(f"{op}: the limit must be an int number of bytes (e.g. 1 << 30 for 1 GiB) or "
                        f"None, got {type(nbytes).__name__} {nbytes!r:.40}")
    nbytes = operator.index(nbytes)
    if nbytes < 0:
        raise ValueError(f"{op}: the limit must be >= 0 bytes, got {nbytes}")
    return nbytes


class OutOfMemoryError(MemoryError):
    """Raised when a request cannot be met even after releasing the cache."""


def _fmt(n: int | None) -> str:
    """Human-readable byte count: ``_fmt(3 << 20) == '3.00 MiB'``."""
    if n is None:
        return "none"
    if n < _KiB:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024:
            return f"{n:.2f} {unit}"
    return f"{n / 1024:.2f} TiB"


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


class Block:
    """A piece of a segment; what :meth:`CachingAllocator.malloc` returns.

    ``ptr`` is the address, ``size`` the rounded size, ``requested`` the size the
    caller asked for, ``stream`` the stream it may be reused on, ``segment`` the
    owning segment, ``prev``/``next`` the address-ordered neighbours inside it.
    After :meth:`CachingAllocator.free` the handle is retired (``allocated`` is
    False, ``segment`` None); freeing it again raises :class:`ValueError`.
    """

    __slots__ = ("allocated", "next", "prev", "ptr", "quick", "requested", "segment", "size", "stream")

    def __init__(self, ptr: int, size: int, stream: int, segment: _Segment | None,
                 prev: Block | None = None, next: Block | None = None) -> None:
        self.ptr, self.size, self.requested, self.stream = ptr, size, 0, stream
        self.segment, self.allocated, self.prev, self.next = segment, False, prev, next
        self.quick = False  # free, parked in the exact-size cache, not merged yet

    def __repr__(self) -> str:
        state = "allocated" if self.allocated else "free"
        return f"Block(ptr={self.ptr:#x}, size={self.size}, stream={self.stream}, {state})"


class _Segment:
    """One raw allocation; ``head`` is its first block (at ``ptr``)."""

    __slots__ = ("head", "ptr", "size", "small", "stream")

    def __init__(self, ptr: int, size: int, small: bool, stream: int) -> None:
        self.ptr, self.size, self.small, self.stream = ptr, size, small, stream
        self.head: Block | None = None


class _Pool:
    """Free blocks: sorted ``(stream, size, ptr)`` keys + a key->block map (add/take inlined)."""

    __slots__ = ("blocks", "keys")

    def __init__(self) -> None:
        self.keys: list[tuple[int, int, int]] = []
        self.blocks: dict[tuple[int, int, int], Block] = {}

    def add(self, b: Block) -> None:
        k = (b.stream, b.size, b.ptr)
        _insort(self.keys, k)
        self.blocks[k] = b

    def remove(self, b: Block) -> None:
        k = (b.stream, b.size, b.ptr)
        del self.keys[_bisect_left(self.keys, k)]
        del self.blocks[k]



# _BUSY (tensor/memory_threads.py, whose fork handlers clean it): the threads inside a library
# critical section (an allocator's locked section, a CriticalLock), thread id -> depth. Their
# nested frees and mallocs take the allocators' queued paths.


class CriticalLock:
    """A re-entrant lock whose holder counts as inside the library, for locks that code
    holding an allocator lock may wait for: while a thread holds it, a finalizer or tracer
    callback on that thread frees and allocates through the allocators' queued paths instead
    of waiting for an allocator lock, which another thread may hold while it waits for this
    lock. A tracer or finalizer inside an allocator's locked section may run any op, so every
    library lock an op can take is one: the CUDA emulator's driver lock, the kernel-build key
    locks, a device's module-load lock, the CPU allocator's and the CUDA devices' creation
    locks, the DLPack export table's lock."""

    __slots__ = ("_lock", "__weakref__")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        track_lock(self)   # made anew in a forked child if another thread held it

    def __enter__(self) -> CriticalLock:
        me = _get_ident()
        _BUSY[me] = _BUSY.get(me, 0) + 1   # marked before the wait, as the allocators do
        try:
            self._lock.acquire()
        except BaseException:
            self._unmark(me)
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()
        self._unmark(_get_ident())

    @staticmethod
    def _unmark(me: int) -> None:
        d = _BUSY[me] - 1
        if d:
            _BUSY[me] = d
        else:
            del _BUSY[me]


def _report_unraisable(err: BaseException, obj) -> None:
    """Report an error that has no caller to raise to (as Python does for one in __del__)."""
    import sys
    from types import SimpleNamespace
    sys.unraisablehook(SimpleNamespace(exc_type=type(err), exc_value=err, exc_traceback=None,
                                       err_msg="Exception ignored in a deferred allocator free",
                                       object=obj))


def _retire(b: Block) -> None:
    b.allocated = False
    b.segment = b.prev = b.next = None


class CachingAllocator:
    """Caching allocator over ``raw_alloc(nbytes) -> address`` / ``raw_free(address)``.

    ``raw_alloc`` signals failure by raising :class:`MemoryError` or returning 0.
    ``total_memory`` (device size, for messages) and ``limit`` (cap on reserved
    bytes, see :meth:`set_limit`) are optional.

    >>> import itertools
    >>> addrs = itertools.count(1 << 20, 1 << 26)
    >>> a = CachingAllocator(lambda n: next(addrs), lambda p: None, limit=4 << 20)
    >>> x, y = a.malloc(100), a.malloc(100)
    >>> y.ptr - x.ptr, a.memory_stats()["segments"]   # split from one 2 MiB segment
    (512, 1)
    >>> try:
    ...     a.malloc(8 << 20)
    ... except OutOfMemoryError as e:
    ...     print(e)
    memory: out of memory on cpu: tried to allocate 8.00 MiB (8388608 bytes); 1.00 KiB allocated, 2.00 MiB reserved, limit 4.00 MiB
    """

    def __init__(self, raw_alloc: RawAlloc, raw_free: RawFree, device: str = "cpu",
                 total_memory: int | None = None, limit: int | None = None) -> None:
        self._raw_alloc, self._raw_free = raw_alloc, raw_free
        self.device, self.total_memory = device, total_memory
        self._limit: int | None = None
        self.set_limit(limit)
        self._lock = threading.Lock()
        track_allocator(self)   # its lock is taken around os.fork() (tensor/memory_threads.py)
        self._pending: list[Block] = []  # frees by nested calls, done under the lock
        self._adopt: list[Block] = []    # blocks nested mallocs took from raw_alloc directly
        self._small, self._large = _Pool(), _Pool()
        self._segments: dict[int, _Segment] = {}  # base address -> segment
        # Exact-size cache: a tensor library frees and re-asks for the same small sizes all
        # the time, so small stream-0 frees park here unmerged (O(1) both ways); they are
        # merged into the pools before any search would otherwise fail.
        self._quick: dict[int, list[Block]] = {}
        self.pools = weakref.WeakSet()   # the live private pools over this device (memstats)
        self._allocated = self._allocated_peak = self._requested = self._requested_peak = 0
        self._reserved = self._reserved_peak = self._active = self._active_peak = 0
        self._segments_peak = self._num_mallocs = self._num_frees = 0
        self._num_raw_alloc = self._num_raw_free = self._num_alloc_retries = self._num_ooms = 0
        self._last_raw_error: str | None = None
        self._collect_garbage: Callable[[], object] = gc.collect  # tests may stub it

    # ---------------------------------------------------------------- public API
    def malloc(self, nbytes: int, stream: int = 0) -> Block:
        """Return a block of at least ``nbytes`` bytes usable on ``stream``."""
        if type(nbytes) is not int:
            nbytes = operator.index(nbytes)
        if nbytes < 0:
            raise ValueError(f"malloc: negative size {nbytes}")
        size = ((nbytes + 511) & -512) or _MIN_BLOCK
        me = _get_ident()
        if me in _BUSY:  # a finalizer / tracer inside one of our calls
            return self._side_malloc(nbytes, size, stream)
        q = self._quick.get(size) if stream == 0 else None
        if q:  # the hot path: an exact-size parked block (_locked's protocol, inlined)
            _BUSY[me] = 1
            try:
                with self._lock:   # q was looked up unlocked; a flush since then emptied it
                    if q and not (self._adopt or self._pending):
                        b = q.pop()
                        b.quick = False
                        self._count_malloc(b, nbytes)
                        return b
            finally:
                del _BUSY[me]
        block = self._locked(self._malloc_locked, nbytes, size, stream, False)
        if block is None:  # out of memory: collect garbage (lock not held), then retry once
            self._collect_garbage()
            block = self._locked(self._malloc_locked, nbytes, size, stream, True)
        return block

    def free(self, block: Block) -> None:
        """Give ``block`` back to the cache; double or foreign frees raise ValueError."""
        me = _get_ident()
        if me in _BUSY:  # a finalizer / tracer inside one of our calls
            if not isinstance(block, Block):
                raise TypeError(f"free: expected a Block, got {type(block).__name__}")
            if not block.allocated:
                raise ValueError(f"free: {block!r} is not allocated (double free?)")
            self._pending.append(block)
            return
        _BUSY[me] = 1  # the hot path: _locked's protocol, inlined
        try:
            with self._lock:
                if self._adopt or self._pending:
                    self._drain()
                try:
                    self._free_locked(block, True)
                finally:
                    if self._adopt or self._pending:
                        self._drain()
        finally:
            del _BUSY[me]

    def empty_cache(self) -> None:
        """``raw_free`` every segment that is entirely free."""
        if _get_ident() not in _BUSY:  # (a finalizer inside one of our calls: skip)
            self._locked(self._release_cached)

    def set_limit(self, nbytes: int | None) -> None:
        """Cap reserved bytes at ``nbytes`` (None: no cap). Cached memory is not freed now."""
        self._limit = limit_bytes(nbytes, "set_limit")

    def memory_allocated(self) -> int:
        """Bytes in live blocks (rounded sizes)."""
        return self._allocated

    def max_memory_allocated(self) -> int:
        return self._allocated_peak

    def memory_reserved(self) -> int:
        """Bytes held in segments obtained from ``raw_alloc``."""
        return self._reserved

    def max_memory_reserved(self) -> int:
        return self._reserved_peak

    def reset_peak_memory_stats(self) -> None:
        """Set every ``*.peak`` statistic to its current value."""
        self._allocated_peak = self._allocated
        self._requested_peak = self._requested
        self._reserved_peak = self._reserved
        self._active_peak = self._active
        self._segments_peak = len(self._segments)

    def memory_stats(self) -> dict[str, Any]:
        """A flat dict of statistics (all ints except the last two):

        ``allocated_bytes.current`` / ``.peak``: bytes in live blocks (rounded sizes);
        ``requested_bytes.current`` / ``.peak``: bytes callers asked for in live blocks;
        ``reserved_bytes.current`` / ``.peak``: bytes in segments from ``raw_alloc``;
        ``active_blocks`` / ``active_blocks.peak``: number of live blocks;
        ``segments`` / ``segments.peak``: number of segments;
        ``small_pool_segments`` / ``large_pool_segments``: segments per pool;
        ``inactive_blocks`` / ``inactive_bytes``: cached free blocks and their bytes
        (``inactive_bytes == reserved - allocated``);
        ``inactive_split_blocks`` / ``inactive_split_bytes``: free blocks in segments
        that also hold live blocks (fragmentation; they cannot be released);
        ``num_mallocs`` / ``num_frees``: successful calls since creation;
        ``num_raw_alloc`` / ``num_raw_free``: segments obtained / released;
        ``num_alloc_retries``: mallocs that had to gc and release the cache and retry;
        ``num_ooms``: OutOfMemoryErrors raised;
        ``limit_bytes``: the cap on reserved bytes or None;
        ``total_memory_bytes``: the device size or None.
        """
        if _get_ident() in _BUSY:  # from a finalizer inside one of our calls
            return self._stats()
        return self._locked(self._stats)

    def memory_summary(self) -> str:
        """A readable multi-line table of :meth:`memory_stats`."""
        s, f = self.memory_stats(), _fmt
        rows = [("Allocated memory", f(s["allocated_bytes.current"]), f(s["allocated_bytes.peak"])),
                ("Requested memory", f(s["requested_bytes.current"]), f(s["requested_bytes.peak"])),
                ("Reserved memory", f(s["reserved_bytes.current"]), f(s["reserved_bytes.peak"])),
                ("Active blocks", s["active_blocks"], s["active_blocks.peak"]),
                ("Segments (small/large)", f"{s['segments']} ({s['small_pool_segments']}/"
                 + f"{s['large_pool_segments']})", s["segments.peak"]),
                ("Cached free memory", f"{f(s['inactive_bytes'])}, {s['inactive_blocks']} blk", ""),
                ("  of which split", f"{f(s['inactive_split_bytes'])}, {s['inactive_split_blocks']} blk",
                 "")]
        bar = "-" * 68
        return "\n".join([
            "=" * 68, f" Caching allocator summary, device {self.device}", bar,
            f"{'Metric':<26}{'Current':>24}{'Peak':>18}", bar,
            *(f"{name:<26}{cur:>24}{peak:>18}".rstrip() for name, cur, peak in rows), bar,
            f"mallocs {s['num_mallocs']}, frees {s['num_frees']}, raw allocs {s['num_raw_alloc']}, "
            + f"raw frees {s['num_raw_free']}, alloc retries {s['num_alloc_retries']}, OOMs {s['num_ooms']}",
            f"limit {f(s['limit_bytes'])}, device total {f(s['total_memory_bytes'])}", "=" * 68])

    # ---------------------------------------------------------------- internals
    def _locked(self, fn: Callable[..., Any], *args) -> Any:
        """fn(*args) under the lock, this thread marked as inside first (see the module
        docstring); what nested calls queued is settled before and after fn."""
        me = _get_ident()
        _BUSY[me] = 1
        try:
            with self._lock:
                if self._adopt or self._pending:
                    self._drain()
                try:
                    return fn(*args)
                finally:
                    if self._adopt or self._pending:
                        self._drain()
        finally:
            del _BUSY[me]

    def _side_malloc(self, nbytes: int, size: int, stream: int) -> Block:
        """malloc from a finalizer or tracer inside one of our locked sections on this
        thread: the pools may be half-updated, so the block gets a segment of its own from
        raw_alloc, entered in the books (segments, stats) by the next _drain."""
        if self._limit is not None and self._reserved + size > self._limit:
            ptr = 0
        else:
            try:
                ptr = self._raw_alloc(size)
            except MemoryError:
                ptr = 0
        if not ptr:
            raise OutOfMemoryError(self._oom_message(nbytes))
        seg = _Segment(int(ptr), size, size <= _SMALL_SIZE, stream)
        seg.head = block = Block(seg.ptr, size, stream, seg)
        block.allocated, block.requested = True, nbytes
        self._adopt.append(block)
        return block

    def _drain(self) -> None:
        """Enter nested mallocs' segments in the books, then do the queued frees. Under the
        lock. Both lists are taken in one step, so a queued free always comes after the
        adoption of its block; what nested calls queue meanwhile waits for the next locked
        section (a tracer that allocates at every line would otherwise keep this busy)."""
        adopt, pending, self._adopt, self._pending = self._adopt, self._pending, [], []
        for b in adopt:
            self._add_segment(b.segment)
            self._count_malloc(b, b.requested)
        for b in pending:
            try:
                self._free_locked(b)
            except (TypeError, ValueError) as e:  # a nested caller's bad free: report it as
                _report_unraisable(e, b)          # Python does for errors in __del__

    def _malloc_locked(self, nbytes: int, size: int, stream: int, retry: bool) -> Block | None:
        if stream == 0:
            q = self._quick.get(size)
            if q:
                b = q.pop()
                b.quick = False
                self._count_malloc(b, nbytes)
                return b
        small = size <= _SMALL_SIZE
        pool = self._small if small else self._large
        keys = pool.keys
        i = _bisect_left(keys, (stream, size))  # (s, n) sorts before every (s, n, ptr): best fit
        if (i >= len(keys) or keys[i][0] != stream) and self._quick:
            self._flush_quick()
            i = _bisect_left(keys, (stream, size))
        if i < len(keys) and keys[i][0] == stream:
            block = pool.blocks.pop(keys.pop(i))
        else:
            if retry:  # after gc.collect(): give back every fully free segment first
                self._release_cached()
            block = self._new_segment(size, small, stream)
            if block is None:
                if not retry:
                    self._num_alloc_retries += 1
                    return None
                self._num_ooms += 1
                raise OutOfMemoryError(self._oom_message(nbytes))
        rem = block.size - size
        if rem > _LARGE_SPLIT or (small and rem >= _MIN_BLOCK):
            nxt = block.next
            r = Block(block.ptr + size, rem, stream, block.segment, block, nxt)
            if nxt is not None:
                nxt.prev = r
            block.next = r
            block.size = size
            k = (stream, rem, r.ptr)
            _insort(keys, k)
            pool.blocks[k] = r
        self._count_malloc(block, nbytes)
        return block

    def _count_malloc(self, block: Block, nbytes: int) -> None:
        block.allocated = True
        block.requested = nbytes
        self._allocated += block.size
        if self._allocated > self._allocated_peak:
            self._allocated_peak = self._allocated
        self._requested += nbytes
        if self._requested > self._requested_peak:
            self._requested_peak = self._requested
        self._active += 1
        if self._active > self._active_peak:
            self._active_peak = self._active
        self._num_mallocs += 1

    def _oom_message(self, nbytes: int) -> str:
        msg = (f"memory: out of memory on {self.device}: tried to allocate {_fmt(nbytes)} "
               f"({nbytes} bytes); {_fmt(self._allocated)} allocated, {_fmt(self._reserved)} reserved")
        if self._limit is not None:
            msg += f", limit {_fmt(self._limit)}"
        if self.total_memory is not None:
            msg += f", device total {_fmt(self.total_memory)}"
        if self._last_raw_error is not None:
            msg += f" (raw allocator: {self._last_raw_error})"
        return msg

    def _new_segment(self, size: int, small: bool, stream: int) -> Block | None:
        """Get a segment for ``size`` from raw_alloc; its single free block, or None on failure."""
        want = _SMALL_SEGMENT if small else (
            _LARGE_SEGMENT if size < _MIN_LARGE_ALLOC else _round_up(size, _ROUND_LARGE))
        least = _SMALL_SEGMENT if small else _round_up(size, _ROUND_LARGE)
        self._last_raw_error = None
        for seg_size in (want, least) if least < want else (want,):
            if self._limit is not None and self._reserved + seg_size > self._limit:
                continue
            try:
                ptr = self._raw_alloc(seg_size)
            except MemoryError as e:
                self._last_raw_error = str(e)  # not e: its traceback would pin the frames
                continue
            if not ptr:
                continue
            seg = _Segment(int(ptr), seg_size, small, stream)
            seg.head = block = Block(seg.ptr, seg_size, stream, seg)
            self._add_segment(seg)
            return block
        return None

    def _add_segment(self, seg: _Segment) -> None:
        if seg.ptr in self._segments:
            raise RuntimeError(f"raw_alloc returned {seg.ptr:#x}, an address already in use")
        self._segments[seg.ptr] = seg
        self._num_raw_alloc += 1
        self._reserved += seg.size
        self._reserved_peak = max(self._reserved_peak, self._reserved)
        self._segments_peak = max(self._segments_peak, len(self._segments))

    def _release_cached(self) -> None:
        if self._quick:
            self._flush_quick()
        for seg in list(self._segments.values()):
            head = seg.head
            if head is not None and not head.allocated and head.next is None:
                self._raw_free(seg.ptr)
                (self._small if seg.small else self._large).remove(head)
                del self._segments[seg.ptr]
                _retire(head)
                seg.head = None
                self._reserved -= seg.size
                self._num_raw_free += 1

    def _validate(self, block: Block) -> None:
        if not isinstance(block, Block):
            raise TypeError(f"free: expected a Block, got {type(block).__name__}")
        if not block.allocated:
            raise ValueError(f"free: {block!r} is not allocated (double free?)")
        seg = block.segment
        if seg is None or self._segments.get(seg.ptr) is not seg:
            raise ValueError(f"free: {block!r} was not allocated by this allocator")

    def _free_locked(self, block: Block, park: bool = False) -> None:
        """Free a block (park: a small stream-0 block goes to the exact-size cache)."""
        seg = block.segment if type(block) is Block else None
        if seg is None or not block.allocated or self._segments.get(seg.ptr) is not seg:
            self._validate(block)  # raises the precise error (passes only for a subclass)
            seg = block.segment
        if park and block.stream == 0 and block.size <= _QUICK_MAX:
            self._park(block, seg)
            return
        self._allocated -= block.size
        self._requested -= block.requested
        self._active -= 1
        self._num_frees += 1
        self._merge_insert(block, seg, fresh=True)

    def _merge_insert(self, block: Block, seg: _Segment, fresh: bool) -> None:
        """Merge a block that just became free with its free neighbours (parked ones stay
        apart) and put the result in its pool. fresh: the block is a caller's handle, which
        is retired and never reused."""
        pool = self._small if seg.small else self._large
        prev, nxt = block.prev, block.next
        if prev is not None and not prev.allocated and not prev.quick:  # grow the block before us
            pool.remove(prev)
            prev.size += block.size
            prev.next = nxt
            if nxt is not None:
                nxt.prev = prev
            fb = prev
            if nxt is not None and not nxt.allocated and not nxt.quick:  # ... and swallow the next
                pool.remove(nxt)
                fb.size += nxt.size
                fb.next = nxt.next
                if nxt.next is not None:
                    nxt.next.prev = fb
                _retire(nxt)
        elif nxt is not None and not nxt.allocated and not nxt.quick:  # grow the next backwards
            pool.remove(nxt)
            nxt.ptr = block.ptr
            nxt.size += block.size
            nxt.prev = prev
            fb = nxt
        elif fresh:  # a fresh block object: the caller's handle is retired below
            fb = Block(block.ptr, block.size, block.stream, seg, prev, nxt)
            if nxt is not None:
                nxt.prev = fb
        else:
            fb = block
        if prev is None:
            seg.head = fb
        elif prev is not fb:
            prev.next = fb
        k = (fb.stream, fb.size, fb.ptr)
        _insort(pool.keys, k)
        pool.blocks[k] = fb
        if fb is not block:
            _retire(block)

    def _park(self, block: Block, seg: _Segment) -> None:
        """Free a small block into the exact-size cache; a fresh object replaces the handle."""
        prev, nxt = block.prev, block.next
        fb = Block(block.ptr, block.size, 0, seg, prev, nxt)
        fb.quick = True
        if prev is None:
            seg.head = fb
        else:
            prev.next = fb
        if nxt is not None:
            nxt.prev = fb
        self._allocated -= block.size
        self._requested -= block.requested
        self._active -= 1
        self._num_frees += 1
        q = self._quick.get(block.size)
        if q is None:
            self._quick[block.size] = [fb]
        else:
            q.append(fb)
        _retire(block)

    def _flush_quick(self) -> None:
        """Merge every parked block into the pools (before a search would fail)."""
        parked = []
        for q in self._quick.values():
            parked += q
            q.clear()   # malloc's hot path may hold this list from before it took the lock
        self._quick.clear()
        for b in parked:
            b.quick = False
            self._merge_insert(b, b.segment, fresh=False)

    def _stats(self) -> dict[str, Any]:
        inactive_blocks = inactive_bytes = split_blocks = split_bytes = n_small = 0
        # a copy: a finalizer or tracer inside a library call reads these without the lock
        # (memory_stats) while another thread may add or release segments
        for seg in list(self._segments.values()):
            n_small += seg.small
            whole = seg.head is not None and seg.head.next is None
            b = seg.head
            while b is not None:
                if not b.allocated:
                    inactive_blocks += 1
                    inactive_bytes += b.size
                    if not whole:
                        split_blocks += 1
                        split_bytes += b.size
                b = b.next
        n = len(self._segments)
        return {
            "allocated_bytes.current": self._allocated, "allocated_bytes.peak": self._allocated_peak,
            "requested_bytes.current": self._requested, "requested_bytes.peak": self._requested_peak,
            "reserved_bytes.current": self._reserved, "reserved_bytes.peak": self._reserved_peak,
            "active_blocks": self._active, "active_blocks.peak": self._active_peak,
            "segments": n, "segments.peak": self._segments_peak,
            "small_pool_segments": n_small, "large_pool_segments": n - n_small,
            "inactive_blocks": inactive_blocks, "inactive_bytes": inactive_bytes,
            "inactive_split_blocks": split_blocks, "inactive_split_bytes": split_bytes,
            "num_mallocs": self._num_mallocs, "num_frees": self._num_frees,
            "num_raw_alloc": self._num_raw_alloc, "num_raw_free": self._num_raw_free,
            "num_alloc_retries": self._num_alloc_retries, "num_ooms": self._num_ooms,
            "limit_bytes": self._limit, "total_memory_bytes": self.total_memory,
        }


def _free_segments(segments: dict, raw_free) -> None:
    for ptr in list(segments):
        raw_free(ptr)
    segments.clear()


def private_pool(alloc: CachingAllocator, main: CachingAllocator | None = None) -> CachingAllocator:
    """alloc, made to give its memory back to the device when it is garbage: a pool of its own
    (a capture's: tensor/capture.py, a CUDA graph's) outlives whatever holds it until its last
    block is freed, since every Storage from it holds it; then nothing is allocated and its
    segments go. main: the device's allocator, whose statistics (tensor/memstats.py) count it."""
    weakref.finalize(alloc, _free_segments, alloc._segments, alloc._raw_free)
    if main is not None:
        main.pools.add(alloc)
    return alloc
