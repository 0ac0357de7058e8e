"""The CUDA backend: NVRTC-compiled kernels launched through cuda-python's driver API.

Importable without cuda-python or a GPU: the driver and NVRTC are loaded on first use, and
`is_available()` is False when either is missing. Set ``STRIDEX_CUDA_EMULATOR=1`` to run the
backend on the CPU emulator (tests on machines without a GPU).

>>> import tensor as T
>>> if T.cuda.is_available():
...     x = T.arange(4.0, device="cuda")
...     print((x * 2).sum().item())
"""
from __future__ import annotations

from ..device import DeviceError

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "synchronize", "Stream", "Event", "current_stream",
           "default_stream", "stream", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "empty_cache",
           "memory_stats", "memory_summary", "set_memory_limit", "DeviceError"]


def is_available() -> bool:
    """True when cuda-python, an NVIDIA driver and at least one GPU are present."""
    return device_count() > 0


def device_count() -> int:
    from . import runtime
    return runtime.device_count()


def current_device() -> int:
    from . import runtime
    return runtime.current_device_index()


def set_device(device) -> None:
    from . import runtime
    runtime.set_device(_index(device))


def _index(device) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    from ..device import device as parse
    d = parse(device)
    if d.type != "cuda":
        raise ValueError(f"cuda: expected a CUDA device, got {d}")
    return d.index or 0


def get_device_name(device=None) -> str:
    from . import runtime
    return runtime.device_state(_index(device)).name


def get_device_capability(device=None) -> tuple[int, int]:
    from . import runtime
    return runtime.device_state(_index(device)).cc


def synchronize(device=None) -> None:
    """Wait until all queued work on the device has finished."""
    from . import streams
    streams.synchronize(device)


def __getattr__(name):  # Stream, Event, current_stream, ... load the driver only when used
    if name in ("Stream", "Event", "current_stream", "default_stream", "stream"):
        from . import streams
        return getattr(streams, name)
    raise AttributeError(f"module 'tensor.cuda' has no attribute {name!r}")


# ---- memory statistics of CUDA devices (torch.cuda's names)

def _alloc(device):
    from . import runtime
    return runtime.device_state(_index(device)).allocator


def memory_allocated(device=None) -> int:
    return _alloc(device).memory_allocated()


def max_memory_allocated(device=None) -> int:
    return _alloc(device).max_memory_allocated()


def memory_reserved(device=None) -> int:
    return _alloc(device).memory_reserved()


def max_memory_reserved(device=None) -> int:
    return _alloc(device).max_memory_reserved()


def reset_peak_memory_stats(device=None) -> None:
    _alloc(device).reset_peak_memory_stats()


def empty_cache(device=None) -> None:
    """Give cached, unused device memory back to the driver."""
    _alloc(device).empty_cache()


def memory_stats(device=None) -> dict:
    return _alloc(device).memory_stats()


def memory_summary(device=None) -> str:
    return _alloc(device).memory_summary()


def set_memory_limit(nbytes: int | None, device=None) -> None:
    """Cap the bytes the device's caching allocator may reserve (None removes the cap)."""
    _alloc(device).set_limit(nbytes)
