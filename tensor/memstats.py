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
from .memory_threads import live


def allocator(device=None) -> CachingAllocator:
    """The caching allocator of a device (None: the default device)."""
    d = parse_device(device)  # raises for devices that are not available
    return backend_for(d).allocator(d)


def _all(device) -> list:
    """The device's allocator and its live private pools (tensor.compile's captures, CUDA
    graphs): the device-level figures below count them all, as PyTorch's count graph pools."""
    a = allocator(device)
    return [a, *live(a.pools)]   # (another thread may make a pool meanwhile)


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors (sizes rounded to the allocator's 512-byte blocks), those in
    capture and graph pools included."""
    return sum(a.memory_allocated() for a in _all(device))


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated: the device allocator's peak plus each live pool's (an upper
    bound when those peaks came at different times)."""
    return sum(a.max_memory_allocated() for a in _all(device))


def memory_reserved(device=None) -> int:
    """Bytes the allocator and the pools hold from the system, cached blocks included."""
    return sum(a.memory_reserved() for a in _all(device))


def max_memory_reserved(device=None) -> int:
    return sum(a.max_memory_reserved() for a in _all(device))


def reset_peak_memory_stats(device=None) -> None:
    for a in _all(device):
        a.reset_peak_memory_stats()


def empty_cache(device=None) -> None:
    """Return cached, unused memory to the system."""
    allocator(device).empty_cache()


# PyTorch's names (torch.cuda.memory_stats) for ours, given alongside them
_TORCH_KEYS = {
    "allocated_bytes.all.current": "allocated_bytes.current",
    "allocated_bytes.all.peak": "allocated_bytes.peak",
    "active_bytes.all.current": "allocated_bytes.current",
    "active_bytes.all.peak": "allocated_bytes.peak",
    "requested_bytes.all.current": "requested_bytes.current",
    "requested_bytes.all.peak": "requested_bytes.peak",
    "reserved_bytes.all.current": "reserved_bytes.current",
    "reserved_bytes.all.peak": "reserved_bytes.peak",
    "active.all.current": "active_blocks", "active.all.peak": "active_blocks.peak",
    "allocation.all.current": "active_blocks", "allocation.all.peak": "active_blocks.peak",
    "allocation.all.allocated": "num_mallocs", "allocation.all.freed": "num_frees",
    "segment.all.current": "segments", "segment.all.peak": "segments.peak",
    "segment.all.allocated": "num_raw_alloc", "segment.all.freed": "num_raw_free",
    "inactive_split.all.current": "inactive_split_blocks",
    "inactive_split_bytes.all.current": "inactive_split_bytes",
}


def memory_stats(device=None) -> dict:
    """The allocator's statistics (CachingAllocator.memory_stats) summed with its live pools'
    (as memory_reserved() counts them; peaks summed: an upper bound), with PyTorch's key names
    (`allocated_bytes.all.current`, `reserved_bytes.all.peak`, `segment.all.current`...)
    alongside ours.

    >>> import tensor as T
    >>> s = T.memory_stats()
    >>> s["allocated_bytes.all.current"] == s["allocated_bytes.current"] == T.memory_allocated()
    True
    """
    main, *pools = _all(device)
    stats = main.memory_stats()
    for p in pools:
        for k, v in p.memory_stats().items():
            if k not in ("limit_bytes", "total_memory_bytes") and isinstance(v, int):
                stats[k] += v
    stats.update((torch, stats[ours]) for torch, ours in _TORCH_KEYS.items())
    return stats


def memory_summary(device=None) -> str:
    return allocator(device).memory_summary()


def set_memory_limit(nbytes: int | None, device=None) -> None:
    """Cap the bytes a device's pool may reserve (None removes the cap): an int number of
    bytes, not a string such as '1GB' (write 1 << 30)."""
    allocator(device).set_limit(limit_bytes(nbytes, "set_memory_limit"))


FUNCS = {f.__name__: f for f in (memory_allocated, max_memory_allocated, memory_reserved,
                                  max_memory_reserved, reset_peak_memory_stats, empty_cache,
                                  memory_stats, memory_summary, set_memory_limit)}
