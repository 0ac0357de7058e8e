"""The CUDA backend: NVRTC-compiled kernels launched through cuda-python's driver API.

Importable without cuda-python or a GPU: the driver and NVRTC are loaded on first use, and
`is_available()` is False when either is missing. Set ``STRIDEX_CUDA_EMULATOR=1`` to run the
backend on the CPU emulator (tests on machines without a GPU).

>>> import tensor as T
>>> if T.cuda.is_available():
...     x = T.arange(4.0, device="cuda")
...     assert (x * 2).sum().item() == 12.0
"""
from __future__ import annotations

from .. import memstats
from ..device import DeviceError

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "synchronize", "Stream", "Event", "current_stream",
           "default_stream", "stream", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "empty_cache",
           "memory_stats", "memory_summary", "set_memory_limit", "precompile", "DeviceError",
           "CUDAGraph", "graph", "is_current_stream_capturing", "sync_checks"]


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
    from . import runtime
    return runtime.device_index(device)


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


def sync_checks(enabled: bool | None = None) -> bool:
    """Device index checks (integer-tensor indexing, embedding ids, cross_entropy targets)
    raise at the next host synchronization by default, so they cost no synchronization of
    their own; sync_checks(True) makes the op that finds a bad index raise (one synchronization
    per check), as STRIDEX_SYNC_CHECKS=1 or CUDA_LAUNCH_BLOCKING=1 do. Returns the setting in
    force before the call; sync_checks() only reads it."""
    from . import checks
    return checks.sync_checks(enabled)


def precompile(ops=None, dtypes=None, *, arch: str | None = None, workers: int | None = None,
               progress: bool | None = None) -> dict:
    """Compile CUDA kernels ahead of their first use, in parallel (tensor.cuda.precompile)."""
    from .warm import precompile as run
    return run(ops, dtypes, arch=arch, workers=workers, progress=progress)


def __getattr__(name):  # Stream, Event, current_stream, ... load the driver only when used
    if name in ("Stream", "Event", "current_stream", "default_stream", "stream"):
        from . import streams
        return getattr(streams, name)
    if name in ("CUDAGraph", "graph", "is_current_stream_capturing"):
        from . import graphs
        return getattr(graphs, name)
    raise AttributeError(f"module 'tensor.cuda' has no attribute {name!r}")


# ---- memory statistics of CUDA devices (torch.cuda's names): tensor.memstats on cuda:N

def _dev(device) -> str:
    return f"cuda:{_index(device)}"


def memory_allocated(device=None) -> int:
    return memstats.memory_allocated(_dev(device))


def max_memory_allocated(device=None) -> int:
    return memstats.max_memory_allocated(_dev(device))


def memory_reserved(device=None) -> int:
    return memstats.memory_reserved(_dev(device))


def max_memory_reserved(device=None) -> int:
    return memstats.max_memory_reserved(_dev(device))


def reset_peak_memory_stats(device=None) -> None:
    memstats.reset_peak_memory_stats(_dev(device))


def empty_cache(device=None) -> None:
    """Give cached, unused device memory back to the driver."""
    memstats.empty_cache(_dev(device))


def memory_stats(device=None) -> dict:
    return memstats.memory_stats(_dev(device))


def memory_summary(device=None) -> str:
    return memstats.memory_summary(_dev(device))


def set_memory_limit(nbytes: int | None, device=None) -> None:
    """Cap the bytes the device's caching allocator may reserve (None removes the cap)."""
    memstats.set_memory_limit(nbytes, _dev(device))
