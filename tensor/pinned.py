"""Pinned (page-locked) host tensors, as PyTorch's: ``x.pin_memory()``, ``x.is_pinned()``,
``pin_memory=True`` on the factories, copies that do not wait (``x.to('cuda',
non_blocking=True)``), the pinning of DataLoader batches, and the pinned allocator's statistics.

A pinned tensor is a CPU tensor whose memory the CUDA driver has page-locked, so that a copy
between it and a GPU runs on the GPU's DMA engine while the host goes on. Its views are pinned.
It needs a CUDA device: without one, pinning raises RuntimeError (as PyTorch's) and is_pinned()
is False.

Non-blocking copies (as PyTorch's):
- host -> device from a pinned, contiguous tensor is queued on the current stream and returns at
  once; the source's block is not reused by the pinned allocator until the copy is done, but
  writing to the source meanwhile races with the copy (synchronize first). From pageable memory,
  or non_blocking=False, the copy has read the source when it returns.
- device -> host with non_blocking=True returns a new *pinned* tensor, its bytes there (PyTorch's
  returns before they arrive, so that code reading them without a synchronization reads garbage
  there; here the copy waits: correct whether or not the caller synchronizes).

>>> import tensor as T
>>> if T.cuda.is_available():
...     x = T.arange(6.0).pin_memory()
...     y = x.to("cuda", non_blocking=True)      # queued; x stays alive until it is done
...     assert x.is_pinned() and x[1:].is_pinned() and (y.cpu() == x).all()
"""
from __future__ import annotations

import copy as _copy
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence

from . import _hook
from . import elementwise as ew
from ._hook import differentiable
from ._tensor import Tensor, contiguous_strides
from .backend import pinned as _pb
from .device import CPU
from .device import device as parse_device
from .views import MAX_BYTES, check_size

__all__ = ["pin_memory", "is_pinned", "empty_pinned", "pin_nested", "to_device_non_blocking",
           "available", "host_memory_stats", "host_memory_allocated", "host_memory_reserved",
           "max_host_memory_allocated", "reset_peak_host_memory_stats", "host_empty_cache"]


def available() -> bool:
    """Whether pinned memory can be had (a CUDA device is present)."""
    return not _pb.unavailable()


def is_pinned(x: Tensor, device=None) -> bool:
    """Whether x's memory is page-locked (never initialises CUDA); device: PyTorch's deprecated
    argument, ignored."""
    if not isinstance(x, Tensor):
        raise TypeError(f"is_pinned: expected a Tensor, got {type(x).__name__}")
    return _pb.is_pinned(x._storage)


def empty_pinned(shape: tuple, dtype, op: str = "pin_memory") -> Tensor:
    """A new contiguous CPU tensor in pinned memory (op: the caller, named in errors)."""
    n = 1
    for s in shape:
        n *= s
    if n * dtype.itemsize > MAX_BYTES or not n and shape and max(shape) > MAX_BYTES:
        check_size(shape, dtype.itemsize, op, dtype.name)
    return Tensor._make(_pb.new_storage(n * dtype.itemsize, op), tuple(shape),
                        contiguous_strides(tuple(shape)), 0, dtype)


def _pin(x: Tensor, device=None) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"pin_memory: expected a Tensor, got {type(x).__name__}")
    if x._storage.device != CPU:
        raise RuntimeError(f"pin_memory: cannot pin a tensor on {x.device}: only CPU tensors can "
                           "be pinned")
    if device is not None:   # PyTorch's (deprecated) device argument: a CUDA device
        parse_device(device)
    if _pb.is_pinned(x._storage):
        return x
    out = empty_pinned(x.shape, x.dtype)
    ew.copy_into(out, x, "pin_memory")
    return ew.unwritten(out)


_pin_recorded = differentiable("copy", _pin)   # a copy for autograd: gradients pass through


def pin_memory(x: Tensor, device=None) -> Tensor:
    """x copied into pinned memory (x itself when it is pinned already), contiguous; PyTorch's
    Tensor.pin_memory. Differentiable (a copy). RuntimeError without a CUDA device.

    >>> import tensor as T
    >>> if T.cuda.is_available():
    ...     assert T.ones(3).pin_memory().is_pinned()
    """
    if isinstance(x, Tensor) and _pb.is_pinned(x._storage):
        return x
    return _pin_recorded(x, device)


def pin_nested(data, device=None):
    """data with every CPU tensor in it pinned, through tuples, lists, dicts and namedtuples and
    objects with a pin_memory() method (a DataLoader batch; PyTorch's pin_memory thread rules:
    a plain tuple becomes a list)."""
    if isinstance(data, Tensor):
        return pin_memory(data) if data._storage.device == CPU else data
    if isinstance(data, str | bytes):
        return data
    if isinstance(data, Mapping):
        try:
            if isinstance(data, MutableMapping):
                clone = _copy.copy(data)   # (keeps the mapping's type and attributes)
                clone.update({k: pin_nested(v, device) for k, v in data.items()})
                return clone
            return type(data)({k: pin_nested(v, device) for k, v in data.items()})
        except TypeError:
            return {k: pin_nested(v, device) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # a namedtuple
        return type(data)(*(pin_nested(v, device) for v in data))
    if isinstance(data, tuple):
        return [pin_nested(v, device) for v in data]
    if isinstance(data, Sequence):
        try:
            if isinstance(data, MutableSequence):
                clone = _copy.copy(data)
                for i, v in enumerate(data):
                    clone[i] = pin_nested(v, device)
                return clone
            return type(data)([pin_nested(v, device) for v in data])
        except TypeError:
            return [pin_nested(v, device) for v in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data


def _to_device_nb(x: Tensor, device) -> Tensor:
    dev = parse_device(device)
    if _hook.capture is None and x._storage.device != dev:   # (a capture refuses host copies)
        out = _pb.copy_non_blocking(ew.contiguous(x), dev)
        if out is not None:
            return out
    return ew.to_device(x, dev)


# recorded as to_device: the same derivative (a move back to the input's device)
to_device_non_blocking = differentiable("to_device", _to_device_nb)
to_device_non_blocking.__doc__ = """x on `device` by a copy that does not wait where PyTorch's
non_blocking copy does not (pinned host -> CUDA), CUDA -> a new pinned host tensor (its bytes
there on return); any other pair copies as to_device."""


# ---------------------------------------------------------------- statistics (the pinned allocator's)

def _stats_allocator():
    return _pb._ALLOCATOR   # None until something was pinned: all statistics are 0 then


def host_memory_stats() -> dict:
    """The pinned allocator's statistics (tensor.cuda.memory_stats' keys, plus pending_copies
    and parked_blocks: blocks freed while a non-blocking copy may still use them)."""
    a = _stats_allocator()
    if a is None:
        return {}
    return a.memory_stats()


def host_memory_allocated() -> int:
    """Bytes of pinned memory in live tensors (rounded block sizes, parked blocks included)."""
    a = _stats_allocator()
    return 0 if a is None else a.memory_allocated()


def max_host_memory_allocated() -> int:
    a = _stats_allocator()
    return 0 if a is None else a.max_memory_allocated()


def host_memory_reserved() -> int:
    """Bytes of pinned memory held from the driver (live and cached)."""
    a = _stats_allocator()
    return 0 if a is None else a.memory_reserved()


def reset_peak_host_memory_stats() -> None:
    a = _stats_allocator()
    if a is not None:
        a.reset_peak_memory_stats()


def host_empty_cache() -> None:
    """Wait for the pending non-blocking copies, then give the pinned segments nothing uses back
    to the driver."""
    a = _stats_allocator()
    if a is not None:
        a.empty_cache()
