"""The CPU's raw allocator (aligned malloc, transparent huge pages for big segments) and the
process-wide caching allocator over it.

>>> a = cpu_allocator()
>>> b = a.malloc(100); b.ptr % 64, a is cpu_allocator()
(0, True)
>>> a.free(b)
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Any

from ..memory import Block, CachingAllocator, CriticalLock, _MiB, private_pool

_CPU_ALIGN = 64


@functools.cache
def _libc() -> tuple[Any, Any]:
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("int posix_memalign(void **memptr, size_t alignment, size_t size); void free(void *);"
             "int madvise(void *addr, size_t length, int advice);")
    return ffi, ffi.dlopen(None)


_HUGE = 2 * _MiB
_MADV_HUGEPAGE = 14  # Linux


def cpu_raw_alloc(nbytes: int) -> int:
    """``posix_memalign`` ``nbytes``; the address, or MemoryError. Segments of 2 MiB and more
    are 2 MiB-aligned and advised to use transparent huge pages (as NumPy does for big
    arrays): streaming kernels over 4 KiB pages run ~30% slower from TLB misses."""
    ffi, libc = _libc()
    out = ffi.new("void **")
    n = max(int(nbytes), 1)
    rc = libc.posix_memalign(out, _HUGE if n >= _HUGE else _CPU_ALIGN, n)
    if rc != 0:
        raise MemoryError(f"posix_memalign({nbytes}) failed with error {rc} ({os.strerror(rc)})")
    if n >= _HUGE and sys.platform.startswith("linux"):
        libc.madvise(out[0], n, _MADV_HUGEPAGE)  # advice only: failure changes nothing
    return int(ffi.cast("uintptr_t", out[0]))


def cpu_raw_free(ptr: int) -> None:
    """libc ``free`` of an address returned by :func:`cpu_raw_alloc`."""
    ffi, libc = _libc()
    libc.free(ffi.cast("void *", ptr))


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX / name unknown
        return None


def _env_limit() -> int | None:
    """The byte limit in ``STRIDEX_CPU_MEMORY_LIMIT`` (unset or empty: None)."""
    raw = os.environ.get("STRIDEX_CPU_MEMORY_LIMIT", "").strip()
    if raw and not raw.isdigit():
        raise ValueError(f"STRIDEX_CPU_MEMORY_LIMIT must be a number of bytes, got {raw!r}")
    return int(raw) if raw else None


class PoisoningAllocator(CachingAllocator):
    """The caching allocator under AddressSanitizer (STRIDEX_SANITIZE=address): every byte
    of a segment that no live block's request covers is poisoned, so a kernel that reads or
    writes past its tensor into a neighbouring block (or into cached memory) is reported,
    although the bytes belong to one malloc'd segment."""

    def __init__(self, *args, **kw) -> None:
        import ctypes
        lib = ctypes.CDLL(None)
        # getattr: a dunder name written in a class body would be mangled
        self._poison = getattr(lib, "__asan_poison_memory_region")
        self._unpoison = getattr(lib, "__asan_unpoison_memory_region")
        for f in (self._poison, self._unpoison):
            f.argtypes, f.restype = [ctypes.c_void_p, ctypes.c_size_t], None
        raw_alloc, raw_free = args[0], args[1]

        def alloc(n: int) -> int:
            p = raw_alloc(n)
            if p:
                self._poison(p, n)   # a new segment: nothing in it is owned yet
            return p

        def free(p: int) -> None:
            self._unpoison(p, self._segments[p].size)   # back to libc as it gave it
            raw_free(p)

        super().__init__(alloc, free, *args[2:], **kw)

    def malloc(self, nbytes: int, stream: int = 0) -> Block:
        b = super().malloc(nbytes, stream)
        self._unpoison(b.ptr, b.requested)   # bytes past the request stay poisoned
        return b

    def free(self, block: Block) -> None:
        if isinstance(block, Block) and block.allocated and not self._sealed:
            self._poison(block.ptr, block.size)
        super().free(block)

    _sealed = False

    def seal(self) -> None:
        """A capture's pool once its program is made (tensor/replay.py seal()): the program's
        replays reuse the blocks the step freed, so all of it is unpoisoned, now and after."""
        self._sealed = True
        for ptr, seg in list(self._segments.items()):
            self._unpoison(ptr, seg.size)


_CPU_ALLOCATOR: CachingAllocator | None = None
# A CriticalLock (re-entrant): a tracer or finalizer that makes a tensor while the allocator is
# being created asks for it on the same thread.
_cpu_allocator_lock = CriticalLock()


def cpu_allocator() -> CachingAllocator:
    """The process-wide CPU allocator, created on first use.

    >>> a = cpu_allocator()
    >>> b = a.malloc(100); b.ptr % 64, a is cpu_allocator()
    (0, True)
    >>> a.free(b)
    """
    global _CPU_ALLOCATOR
    if _CPU_ALLOCATOR is None:
        with _cpu_allocator_lock:
            if _CPU_ALLOCATOR is None:
                from .build import sanitizers
                cls = PoisoningAllocator if "address" in sanitizers() else CachingAllocator
                a = cls(cpu_raw_alloc, cpu_raw_free, "cpu", total_memory=_physical_memory(),
                        limit=_env_limit())
                # one line (a tracer runs between lines): one a nested call made meanwhile wins
                _CPU_ALLOCATOR = _CPU_ALLOCATOR or a
    return _CPU_ALLOCATOR


def private_allocator() -> CachingAllocator:
    """A CachingAllocator of its own over CPU memory, of the process-wide one's kind (a capture's
    static memory: tensor/capture.py); its memory goes back when it is garbage."""
    main = cpu_allocator()
    return private_pool(type(main)(cpu_raw_alloc, cpu_raw_free, "cpu (pool)",
                                   total_memory=main.total_memory), main)
