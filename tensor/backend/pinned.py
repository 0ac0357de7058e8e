"""Page-locked (pinned) host memory: CPU storage that the CUDA driver allocates
(cuMemHostAlloc), served by a caching allocator, and the copies between it and a CUDA device
that return before they are done (PyTorch's CachingHostAllocator and non_blocking copies).

A pinned tensor is an ordinary CPU tensor whose Storage comes from `allocator()`; CPU kernels
use it as any host memory. A copy that does not wait records an event on the current stream for
the host range it reads or writes; a block freed while such an event is pending is given back
to the cache only once the event has passed (checked at the next allocation, at `empty_cache`
and when the statistics are read), so no later tensor gets memory a DMA engine still reads or
writes.

>>> import tensor as T
>>> if T.cuda.is_available():
...     b = allocator().malloc(100); allocator().free(b)
"""
from __future__ import annotations

import threading
from threading import get_ident as _get_ident

from .._tensor import Storage, Tensor, contiguous_strides
from .._tensor import empty as _empty
from ..cuda import runtime as R
from ..cuda import streams as _streams
from ..device import CPU, DeviceError
from ..memory import _BUSY, Block, CachingAllocator

__all__ = ["PinnedAllocator", "allocator", "unavailable", "new_storage", "is_pinned",
           "copy_non_blocking", "copy_to_device", "copy_to_host"]


_WAIT_S = 60.0   # empty_cache's wait for a thread that processes the events (or a lock a fork copied)


class PinnedAllocator(CachingAllocator):
    """The caching allocator over cuMemHostAlloc / cuMemFreeHost, with PyTorch's rule for
    asynchronous copies: `record_use` notes a queued copy's host range and an event after it;
    `free` of a block that overlaps a range whose event has not passed parks the block, and
    `process_events` gives parked blocks back once their events have passed."""

    pinned = True   # Tensor.is_pinned reads this on a storage's allocator

    def __init__(self) -> None:
        super().__init__(R.host_alloc, R.host_free, "cpu (pinned)")
        self._uses: list[tuple[int, int, object]] = []   # (lo, hi, event) of queued copies
        self._parked: list[Block] = []                   # freed while a copy may still use them
        self._events_lock = threading.Lock()

    def record_use(self, ptr: int, nbytes: int, device_index: int) -> None:
        """A copy reading or writing host [ptr, ptr + nbytes) was queued on the current stream
        of cuda:device_index: keep that memory from reuse until the stream passes this point."""
        ev = _streams.Event()
        ev.record(_streams.current_stream(device_index))
        self._uses.append((ptr, ptr + nbytes, ev))

    def _in_use(self, block: Block) -> bool:
        lo, hi = block.ptr, block.ptr + block.size
        return any(a < hi and lo < b for a, b, _ in list(self._uses))

    def free(self, block: Block) -> None:
        if self._uses and isinstance(block, Block) and block.allocated and self._in_use(block):
            self._parked.append(block)   # (no driver call here: finalizers free from anywhere)
            return
        super().free(block)

    def malloc(self, nbytes: int, stream: int = 0) -> Block:
        if self._uses and _get_ident() not in _BUSY:
            self.process_events()
        return super().malloc(nbytes, stream)

    def process_events(self, wait: bool = False) -> None:
        """Forget the copies whose events have passed (all of them, waiting, when `wait`) and
        give back the parked blocks no pending copy uses any more."""
        if not (self._events_lock.acquire(timeout=_WAIT_S) if wait
                else self._events_lock.acquire(blocking=False)):
            return   # another thread is at it (or this one, from a finalizer): it will do
        try:
            for u in list(self._uses):
                if wait:
                    u[2].synchronize()
                if u[2].query():
                    self._uses.remove(u)
            ready = [b for b in list(self._parked) if not self._in_use(b)]
            for b in ready:
                self._parked.remove(b)
        finally:
            self._events_lock.release()
        for b in ready:
            CachingAllocator.free(self, b)

    def empty_cache(self) -> None:
        """Wait for the pending copies, then give every entirely free segment back to the driver."""
        if _get_ident() not in _BUSY:
            self.process_events(wait=True)
        super().empty_cache()

    def memory_allocated(self) -> int:
        self.process_events()
        return super().memory_allocated()

    def memory_reserved(self) -> int:
        self.process_events()
        return super().memory_reserved()

    def memory_stats(self) -> dict:
        self.process_events()
        s = super().memory_stats()
        s["pending_copies"], s["parked_blocks"] = len(self._uses), len(self._parked)
        return s


_ALLOCATOR: PinnedAllocator | None = None
_lock = threading.Lock()


def unavailable() -> str:
    """Why pinned memory cannot be had here ('' when it can): it needs a CUDA device."""
    return R.unavailable_reason()


def allocator(op: str = "pin_memory") -> PinnedAllocator:
    """The process-wide pinned allocator, made on first use; RuntimeError (DeviceError) naming
    op when there is no CUDA device, as PyTorch's."""
    global _ALLOCATOR
    if _ALLOCATOR is None:
        why = unavailable()
        if why:
            raise DeviceError(f"{op}: pinned (page-locked) host memory needs a CUDA device and none "
                              f"is available ({why})")
        with _lock:
            if _ALLOCATOR is None:
                _ALLOCATOR = PinnedAllocator()
    return _ALLOCATOR


def new_storage(nbytes: int, op: str = "pin_memory") -> Storage:
    """nbytes of pinned host memory as a CPU Storage."""
    a = allocator(op)
    block = a.malloc(nbytes)
    return Storage(block.ptr, nbytes, CPU, block, a)


def is_pinned(st: Storage) -> bool:
    return getattr(st._alloc, "pinned", False)


def copy_to_device(src: Tensor, device) -> Tensor:
    """The contiguous pinned CPU tensor src on CUDA `device`, copied on the current stream
    without waiting (the source's block is kept from reuse until the copy is done)."""
    out = _empty(src.shape, src.dtype, device)
    st = R.device_state(device.index or 0)
    R.memcpy_htod_async(st, out.data_ptr(), src.data_ptr(), src.nbytes)
    if src.nbytes:
        allocator().record_use(src.data_ptr(), src.nbytes, st.index)
    return out


def copy_to_host(src: Tensor) -> Tensor:
    """The contiguous CUDA tensor src copied into a new pinned CPU tensor on the current stream,
    its bytes there when this returns. (PyTorch's non_blocking copy returns before they arrive,
    and a read before a synchronization gets whatever the memory held: here the copy waits.)"""
    st = R.device_state(src.device.index or 0)
    storage = new_storage(src.nbytes, "to")
    out = Tensor._make(storage, src.shape, contiguous_strides(src.shape), 0, src.dtype)
    R.memcpy_dtoh(st, out.data_ptr(), src.data_ptr(), src.nbytes)
    return out


def copy_non_blocking(x: Tensor, device) -> Tensor | None:
    """The contiguous x on `device` by PyTorch's non_blocking copy: pinned host -> CUDA returns
    before it is done; CUDA -> host gives a new pinned tensor, its bytes there on return (not
    before, as PyTorch's: no read of unfinished bytes); None for any other pair (the caller
    copies as usual)."""
    src = x._storage.device
    if src.type == "cpu" and device.type == "cuda" and is_pinned(x._storage):
        return copy_to_device(x, device)
    if src.type == "cuda" and device.type == "cpu":
        return copy_to_host(x)
    return None
