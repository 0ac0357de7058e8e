"""Memory statistics per device, as torch.cuda's API (the CPU pool included).

>>> import tensor as T
>>> before = T.memory_allocated()
>>> x = T.empty(1000, dtype="float32")
>>> T.memory_allocated() - before
4096
"""
from __future__ import annotations

from .backend import backend_for
from .device import device as parse_device
from .memory import CachingAllocator, limit_bytes


def allocator(device=None) -> CachingAllocator:
    """The caching allocator of a device (None: the default device)."""
    d = parse_device(device)  # raises for devices that are not available
    return backend_for(d).allocator(d)


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors (sizes rounded to the allocator's 512-byte blocks)."""
    return allocator(device).memory_allocated()


def max_memory_allocated(device=None) -> int:
    return allocator(device).max_memory_allocated()


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds from the system, cached blocks included."""
    return allocator(device).memory_reserved()


def max_memory_reserved(device=None) -> int:
    return allocator(device).max_memory_reserved()


def reset_peak_memory_stats(device=None) -> None:
    allocator(device).reset_peak_memory_stats()


def empty_cache(device=None) -> None:
    """Return cached, unused memory to the system."""
    allocator(device).empty_cache()


def memory_stats(device=None) -> dict:
    return allocator(device).memory_stats()


def memory_summary(device=None) -> str:
    return allocator(device).memory_summary()


def set_memory_limit(nbytes: int | None, device=None) -> None:
    """Cap the bytes a device's pool may reserve (None removes the cap): an int number of
    bytes, not a string such as '1GB' (write 1 << 30)."""
    allocator(device).set_limit(limit_bytes(nbytes, "set_memory_limit"))


FUNCS = {f.__name__: f for f in (memory_allocated, max_memory_allocated, memory_reserved,
                                  max_memory_reserved, reset_peak_memory_stats, empty_cache,
                                  memory_stats, memory_summary, set_memory_limit)}
