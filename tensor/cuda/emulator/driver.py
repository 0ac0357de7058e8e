"""A fake of the subset of `cuda.bindings.driver` the runtime uses, backed by the CPU emulator.

Same call conventions as the real binding: every function returns a tuple whose first item is
a CUresult, the results follow. Handles may be the wrapper classes (CUdeviceptr, CUstream,
...) or plain ints. One device (ordinal 0). Device memory is host memory (each allocation its
own anonymous mmap, filled with 0xff bytes so a kernel that reads memory nobody wrote sees
NaNs / -1s instead of convenient zeros; STRIDEX_EMU_POISON=0 turns that off). Streams run
everything immediately, in call order; kernels run synchronously inside cuLaunchKernel.

STRIDEX_EMU_MEMORY: the device's memory size in bytes (default 4 GiB; suffixes K/M/G).
Page-locked host memory (cuMemHostAlloc) is host memory the emulator knows as pinned: an async
copy between it and the device waits on its stream, as a GPU's DMA does, until something orders
it (at the end of the memory section below).
STRIDEX_EMU_PROTECT=1: device memory is kept PROT_NONE except while the emulator copies or
runs a kernel, so host code that dereferences a device pointer faults instead of silently
working (as it would not on a GPU).
Streams capture into CUDA graphs as the driver's do (cuStreamBeginCapture .. cuGraphLaunch, at
the end of this file).
exec_seconds(): the time spent running kernels so far, so that a benchmark can tell the
host's share of CUDA calls without a GPU (benchmarks/profile_step.py).
"""
from __future__ import annotations

import bisect
import ctypes
import mmap
import os
import sys
import threading
import time
from enum import IntEnum
from pathlib import Path

from ...memory import CriticalLock

__all__ = ["CUresult", "CUdevice_attribute", "CUevent_flags", "CUstream_flags",
           "CUfunction_attribute", "CUdeviceptr", "CUstream", "CUevent", "CUcontext",
           "CUmodule", "CUfunction", "CUdevice", "emu_last_error", "emu_reset", "exec_seconds",
           "emu_capture_failure"]


class CUresult(IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_DEINITIALIZED = 4
    CUDA_ERROR_STUB_LIBRARY = 34
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_DEVICE = 101
    CUDA_ERROR_INVALID_IMAGE = 200
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209
    CUDA_ERROR_INVALID_PTX = 218
    CUDA_ERROR_INVALID_SOURCE = 300
    CUDA_ERROR_FILE_NOT_FOUND = 301
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_ILLEGAL_STATE = 401
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_NOT_READY = 600
    CUDA_ERROR_ILLEGAL_ADDRESS = 700
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701
    CUDA_ERROR_LAUNCH_TIMEOUT = 702
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709
    CUDA_ERROR_ASSERT = 710
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715
    CUDA_ERROR_MISALIGNED_ADDRESS = 716
    CUDA_ERROR_LAUNCH_FAILED = 719
    CUDA_ERROR_NOT_PERMITTED = 800
    CUDA_ERROR_NOT_SUPPORTED = 801
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906
    CUDA_ERROR_UNKNOWN = 999


class CUdevice_attribute(IntEnum):  # noqa: N801 - the binding's name
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8
    CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8
    CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18
    CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
    CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115


class CUevent_flags(IntEnum):  # noqa: N801
    CU_EVENT_DEFAULT = 0
    CU_EVENT_BLOCKING_SYNC = 1
    CU_EVENT_DISABLE_TIMING = 2
    CU_EVENT_INTERPROCESS = 4


class CUstream_flags(IntEnum):  # noqa: N801
    CU_STREAM_DEFAULT = 0
    CU_STREAM_NON_BLOCKING = 1


class CUfunction_attribute(IntEnum):  # noqa: N801
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6
    CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9


class _Handle:
    """An opaque handle: constructed from an int (or another handle), int() gives it back."""
    __slots__ = ("_v",)

    def __init__(self, init_value=0):
        self._v = int(init_value) if init_value is not None else 0

    def __int__(self):
        return self._v

    __index__ = __int__

    def getPtr(self):  # noqa: N802 - the binding's name
        return self._v

    def __eq__(self, other):
        return type(other) is type(self) and other._v == self._v

    def __hash__(self):
        return hash((type(self).__name__, self._v))

    def __repr__(self):
        return f"<{type(self).__name__} {self._v:#x}>"


class CUdeviceptr(_Handle):
    __slots__ = ()


class CUgraph(_Handle):
    __slots__ = ()


class CUgraphExec(_Handle):
    __slots__ = ()


class CUstream(_Handle):
    __slots__ = ()


class CUevent(_Handle):
    __slots__ = ()


class CUcontext(_Handle):
    __slots__ = ()


class CUmodule(_Handle):
    __slots__ = ()


class CUfunction(_Handle):
    __slots__ = ()


class CUdevice(_Handle):
    __slots__ = ()


R = CUresult
_OK = R.CUDA_SUCCESS

# ---------------------------------------------------------------------------------- state
# launches / copies / bookkeeping: one at a time. A CriticalLock: a thread that holds it frees
# through the allocators' queues, so a tracer or finalizer running in the Python lines below
# cannot wait on an allocator lock whose holder waits here (in cuMemAlloc / cuMemFree).
# Re-entrant, so the state is re-entered too: a tracer or finalizer at any line below may run a
# whole op on this thread (its allocator takes a segment of its own through cuMemAlloc, then
# copies and launches) in the middle of an outer call. So what an outer call reads across lines
# is never changed in place: `starts` is replaced, handles and the protection are counted in
# one line (a module's dynamic shared buffer only ever grows, so a nested launch is harmless).
_lock = CriticalLock()


def _parse_size(s: str) -> int:
    s = s.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(s[-1:] or "", 1)
    return int(float(s[:-1] if mult != 1 else s) * mult)


class _State:
    def __init__(self):
        self.initialized = False
        self.total = _parse_size(os.environ.get("STRIDEX_EMU_MEMORY", "")) if os.environ.get(
            "STRIDEX_EMU_MEMORY") else 4 << 30
        self.protect = os.environ.get("STRIDEX_EMU_PROTECT", "") == "1"
        self.open_depth = 0   # _Unprotected sections entered and not left (nested ones: see _lock)
        self.poison = os.environ.get("STRIDEX_EMU_POISON", "1") != "0"
        self.exec_s = 0.0   # seconds spent running kernels (exec_seconds)
        self.used = 0
        self.allocs: dict[int, tuple[mmap.mmap, int]] = {}   # address -> (mapping, size)
        self.starts: list[int] = []                           # sorted allocation addresses
        self.ctx_refs = 0
        self._tls = threading.local()   # the current context is per thread, as the driver's
        self.modules: dict[int, object] = {}                  # handle -> ctypes.CDLL
        self.stack_donor = None   # the module whose fiber stacks every module uses
        self.functions: dict[int, tuple[str, object]] = {}    # handle -> (name, launch fn)
        self.dyn_shared: dict[int, int] = {}                   # handle -> raised dynamic smem
        self.streams: set[int] = set()
        self.events: dict[int, dict] = {}
        self.host: dict[int, tuple[mmap.mmap, int, int]] = {}   # pinned: address -> (map, size, flags)
        self.host_starts: list[int] = []                        # sorted pinned addresses
        self.pending: list[tuple] = []   # queued pinned copies: (seq, stream, dst, src, n)
        self.seq = 0                     # copies queued so far (events remember the count)
        self.next_handle = 0x1000
        self.last_error = ""

    @property
    def current_ctx(self) -> int:
        return getattr(self._tls, "ctx", 0)

    @current_ctx.setter
    def current_ctx(self, c: int) -> None:
        self._tls.ctx = c

    def handle(self) -> int:
        self.next_handle = h = self.next_handle + 0x10   # one line: see _lock
        return h


_S = _State()
_PRIMARY_CTX = 0xC0


def emu_reset() -> None:
    """Forget every allocation, module, stream and event (tests); re-reads the environment."""
    global _S
    with _lock:
        _unprotect_all()
        _S = _State()
        _graphs_reset()


def exec_seconds() -> float:
    """Seconds spent running kernels (inside cuLaunchKernel) since the process started."""
    return _S.exec_s


def emu_last_error() -> str:
    """The message of the last failed launch (deadlock, __trap, bad grid), '' if none."""
    return _S.last_error


# ---------------------------------------------------------------------------------- helpers
def _int(h) -> int:
    if h is None:
        return 0
    return int(h)


def _need_init():
    return None if _S.initialized else (R.CUDA_ERROR_NOT_INITIALIZED,)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


_mprotect = None
_PROT_NONE = 0


def _set_prot(addr: int, size: int, prot: int) -> None:
    global _mprotect
    if _mprotect is None:
        _mprotect = _libc().mprotect
        _mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    _mprotect(addr, (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE, prot)


class _Unprotected:
    """While inside: device memory is accessible (STRIDEX_EMU_PROTECT=1 only). Counted, so a
    nested section (see _lock) that ends first does not protect the outer one's memory: the
    count goes up before opening and the last one out closes."""

    def __enter__(self):
        if _S.protect:
            _S.open_depth += 1
            _unprotect_all()

    def __exit__(self, *exc):
        if _S.protect:
            _S.open_depth -= 1
            if not _S.open_depth:
                for a, (_, n) in list(_S.allocs.items()):
                    _set_prot(a, n, _PROT_NONE)


def _unprotect_all():
    if _S.protect:
        for a, (_, n) in list(_S.allocs.items()):
            _set_prot(a, n, mmap.PROT_READ | mmap.PROT_WRITE)


def _in_device(ptr: int, n: int) -> bool:
    """[ptr, ptr + n) lies inside one live allocation."""
    starts = _S.starts   # one snapshot: a nested cuMemAlloc (see _lock) replaces the list
    i = bisect.bisect_right(starts, ptr) - 1
    if i < 0:
        return False
    ent = _S.allocs.get(starts[i])
    return ent is not None and ptr + n <= starts[i] + ent[1]


def _pinned_base(ptr: int, n: int = 1) -> int | None:
    """The base address of the page-locked allocation holding [ptr, ptr + n), or None."""
    starts = _S.host_starts
    i = bisect.bisect_right(starts, ptr) - 1
    if i < 0:
        return None
    ent = _S.host.get(starts[i])
    return starts[i] if ent is not None and ptr + max(n, 1) <= starts[i] + ent[1] else None


def _host_addr(obj) -> int:
    if isinstance(obj, int):
        return obj
    if hasattr(obj, "__array_interface__"):
        return obj.__array_interface__["data"][0]
    if isinstance(obj, ctypes.Array | ctypes.Structure | ctypes._SimpleCData):
        return ctypes.addressof(obj)
    import numpy as np
    return np.frombuffer(obj, dtype=np.uint8).ctypes.data


# ---------------------------------------------------------------------------------- init/device
def cuInit(flags):  # noqa: N802
    _S.initialized = True
    return (_OK,)


def cuDriverGetVersion():  # noqa: N802
    return (_OK, 13000)


def cuDeviceGetCount():  # noqa: N802
    return _need_init() or (_OK, 1)


def _bad_dev(dev) -> bool:
    return _int(dev) != 0


def cuDeviceGet(ordinal):  # noqa: N802
    if (e := _need_init()):
        return e + (None,)
    if int(ordinal) != 0:
        return (R.CUDA_ERROR_INVALID_DEVICE, None)
    return (_OK, CUdevice(0))


_NAME = b"stridex CUDA emulator (CPU)"


def cuDeviceGetName(length, dev):  # noqa: N802
    if (e := _need_init()):
        return e + (None,)
    if _bad_dev(dev):
        return (R.CUDA_ERROR_INVALID_DEVICE, None)
    return (_OK, (_NAME[:max(int(length) - 1, 0)]).ljust(int(length), b"\0"))


_A = CUdevice_attribute
_ATTRS = {
    _A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024, _A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: 1024,
    _A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: 1024, _A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: 64,
    _A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: 2**31 - 1, _A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: 65535,
    _A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: 65535,
    _A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: 49152,
    _A.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: 65536, _A.CU_DEVICE_ATTRIBUTE_WARP_SIZE: 32,
    _A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: 65536, _A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE: 1000000,
    _A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 2, _A.CU_DEVICE_ATTRIBUTE_INTEGRATED: 0,
    _A.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: 0, _A.CU_DEVICE_ATTRIBUTE_ECC_ENABLED: 0,
    _A.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: 0, _A.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: 0,
    _A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: 1000000,
    _A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: 64, _A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: 1 << 20,
    _A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: 2048,
    _A.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: 0, _A.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: 1,
    _A.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: 0, _A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9,
    _A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0,
    _A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: 233472,
    _A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: 65536,
    _A.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: 0, _A.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: 0,
    _A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 49152,
    _A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: 32,
    _A.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: 0,
}


def cuDeviceGetAttribute(attrib, dev):  # noqa: N802
    if (e := _need_init()):
        return e + (None,)
    if _bad_dev(dev):
        return (R.CUDA_ERROR_INVALID_DEVICE, None)
    try:
        return (_OK, _ATTRS[_A(int(attrib))])
    except (ValueError, KeyError):
        return (R.CUDA_ERROR_INVALID_VALUE, None)


def cuDeviceTotalMem(dev):  # noqa: N802
    if (e := _need_init()):
        return e + (None,)
    if _bad_dev(dev):
        return (R.CUDA_ERROR_INVALID_DEVICE, None)
    return (_OK, _S.total)


cuDeviceTotalMem_v2 = cuDeviceTotalMem


# ---------------------------------------------------------------------------------- contexts
def cuDevicePrimaryCtxRetain(dev):  # noqa: N802
    if (e := _need_init()):
        return e + (None,)
    if _bad_dev(dev):
        return (R.CUDA_ERROR_INVALID_DEVICE, None)
    _S.ctx_refs += 1
    return (_OK, CUcontext(_PRIMARY_CTX))


def cuDevicePrimaryCtxRelease(dev):  # noqa: N802
    if (e := _need_init()):
        return e
    if _bad_dev(dev):
        return (R.CUDA_ERROR_INVALID_DEVICE,)
    _S.ctx_refs = max(0, _S.ctx_refs - 1)
    return (_OK,)


cuDevicePrimaryCtxRelease_v2 = cuDevicePrimaryCtxRelease


def cuCtxSetCurrent(ctx):  # noqa: N802
    if (e := _need_init()):
        return e
    c = _int(ctx)
    if c not in (0, _PRIMARY_CTX):
        return (R.CUDA_ERROR_INVALID_CONTEXT,)
    _S.current_ctx = c
    return (_OK,)


def cuCtxGetCurrent():  # noqa: N802
    if (e := _need_init()):
        return e + (None,)
    return (_OK, CUcontext(_S.current_ctx))


def cuCtxGetDevice():  # noqa: N802
    if not _S.current_ctx:
        return (R.CUDA_ERROR_INVALID_CONTEXT, None)
    return (_OK, CUdevice(0))


def cuCtxSynchronize():  # noqa: N802
    if (e := _need_ctx() or _refuse(sync=True)):
        return e
    _flush()
    return (_OK,)


def _need_ctx():
    if not _S.initialized:
        return (R.CUDA_ERROR_NOT_INITIALIZED,)
    if not _S.current_ctx:
        return (R.CUDA_ERROR_INVALID_CONTEXT,)
    return None


# ---------------------------------------------------------------------------------- memory
def cuMemGetInfo():  # noqa: N802
    if (e := _need_ctx()):
        return e + (None, None)
    return (_OK, _S.total - _S.used, _S.total)


cuMemGetInfo_v2 = cuMemGetInfo


def cuMemAlloc(bytesize):  # noqa: N802
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e + (None,)
    n = int(bytesize)
    if n <= 0:
        return (R.CUDA_ERROR_INVALID_VALUE, None)
    size = (n + 255) // 256 * 256
    with _lock:
        if _S.used + size > _S.total:
            return (R.CUDA_ERROR_OUT_OF_MEMORY, None)
        try:
            m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                          prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError):
            return (R.CUDA_ERROR_OUT_OF_MEMORY, None)
        if size >= 1 << 21 and hasattr(mmap, "MADV_HUGEPAGE"):
            try:   # kernels' grid-stride loops sweep memory in page-sized strides: fewer TLB misses
                m.madvise(mmap.MADV_HUGEPAGE)
            except OSError:
                pass
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        if _S.poison:
            ctypes.memset(addr, 0xFF, size)
        _S.allocs[addr] = (m, size)
        _S.starts = sorted([*_S.starts, addr])   # a new list, in one line: see _lock
        _S.used += size
        if _S.protect:
            _set_prot(addr, size, _PROT_NONE)
        return (_OK, CUdeviceptr(addr))


cuMemAlloc_v2 = cuMemAlloc


def cuMemFree(dptr):  # noqa: N802
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e
    a = _int(dptr)
    _flush()   # the copies queued into or out of it happen first
    with _lock:
        ent = _S.allocs.pop(a, None)
        if ent is None:
            return (R.CUDA_ERROR_INVALID_VALUE,)
        _S.starts = list(filter(a.__ne__, _S.starts))   # a new list, in one line: see _lock
        m, size = ent
        _S.used -= size
        if _S.protect:
            _set_prot(a, size, mmap.PROT_READ | mmap.PROT_WRITE)
        try:
            m.close()
        except BufferError:  # a view still exported: the mapping goes when it is collected
            pass
    return (_OK,)


cuMemFree_v2 = cuMemFree


def cuMemHostAlloc(bytesize, Flags):  # noqa: N802,N803
    """Page-locked host memory: an anonymous mapping remembered as pinned (not device memory:
    it does not count against the device's total)."""
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e + (None,)
    n, flags = int(bytesize), int(Flags)
    if n <= 0 or flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP
                           | CU_MEMHOSTALLOC_WRITECOMBINED):
        return (R.CUDA_ERROR_INVALID_VALUE, None)
    with _lock:
        try:
            m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                          prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError):
            return (R.CUDA_ERROR_OUT_OF_MEMORY, None)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        _S.host[addr] = (m, n, flags)
        _S.host_starts = sorted([*_S.host_starts, addr])   # a new list, in one line: see _lock
    return (_OK, addr)


def cuMemFreeHost(p):  # noqa: N802
    """Free page-locked memory; waits for the copies queued from or into it (as the driver's
    does for all work)."""
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e
    a = _int(p)
    if a not in _S.host:
        return (R.CUDA_ERROR_INVALID_VALUE,)
    _flush()
    with _lock:
        ent = _S.host.pop(a, None)
        if ent is None:
            return (R.CUDA_ERROR_INVALID_VALUE,)
        _S.host_starts = list(filter(a.__ne__, _S.host_starts))
        try:
            ent[0].close()
        except BufferError:  # the c_char view of cuMemHostAlloc: the mapping goes when collected
            pass
    return (_OK,)


def cuMemHostGetFlags(p):  # noqa: N802
    base = _pinned_base(_int(p))
    if base is None:
        return (R.CUDA_ERROR_INVALID_VALUE, None)
    return (_OK, _S.host[base][2])


CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_WRITECOMBINED = 1, 2, 4


# Copies between page-locked memory and the device are queued, not done, when their async call
# returns (a GPU's DMA engine runs them later): each waits in _S.pending until work that the
# driver would order after it runs (later work on its stream, or on the legacy stream, which
# waits for every stream), or a synchronization (of its stream, an event recorded after it, the
# context), a cuStreamWaitEvent on such an event, or a free. cuEventQuery / cuStreamQuery answer
# CUDA_ERROR_NOT_READY meanwhile. So code that reads, reuses or frees a pinned buffer before its
# copy is known complete sees the race a GPU would give it. Pageable memory copies at once.
_LEGACY = (0, 1, 2)   # the NULL stream, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD


def _orders(stream: int | None, queued_on: int) -> bool:
    """Whether work on `stream` (None: the whole context) waits for a copy queued on `queued_on`:
    the streams made here are blocking streams, ordered with the legacy stream both ways."""
    return stream is None or stream in _LEGACY or queued_on in (stream, *_LEGACY)


def _flush(stream=None, upto: int | None = None) -> None:
    """Run the queued pinned copies that work on `stream` waits for (all with None); upto: only
    those queued before an event that counted that many copies."""
    if not _S.pending:
        return
    s = None if stream is None else _int(stream)
    with _lock:
        run = [p for p in _S.pending if _orders(s, p[1]) and (upto is None or p[0] <= upto)]
        if not run:
            return
        _S.pending = [p for p in _S.pending if p not in run]   # a new list, in one line: see _lock
        with _Unprotected():
            for _, _, dst, src, n in run:
                ctypes.memmove(dst, src, n)


def _copy(dst: int, src: int, n: int, dst_dev: bool, src_dev: bool, stream=None):
    """The copy of an async call on `stream` (None: a synchronous call): queued when its host
    side is page-locked (see _flush), else done now after the queued copies it is ordered after."""
    if n < 0:
        return (R.CUDA_ERROR_INVALID_VALUE,)
    if n == 0:
        return (_OK,)
    s = 0 if stream is None else _int(stream)
    with _lock:
        if (dst_dev and not _in_device(dst, n)) or (src_dev and not _in_device(src, n)):
            return (R.CUDA_ERROR_INVALID_VALUE,)
        host = None if dst_dev and src_dev else (src if dst_dev else dst)
        if stream is not None and host is not None and _pinned_base(host, n) is not None:
            _S.seq = seq = _S.seq + 1
            _S.pending = [*_S.pending, (seq, s, dst, src, n)]   # a new list, in one line
            return (_OK,)
        _flush(None if stream is None else s)
        with _Unprotected():
            ctypes.memmove(dst, src, n)
    return (_OK,)


def _stream_ok(stream) -> bool:
    s = _int(stream)
    return s in (0, 1, 2) or s in _S.streams


def cuMemcpyHtoDAsync(dstDevice, srcHost, ByteCount, hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    if not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if (e := _refuse(hStream)):   # host memory: not in a graph
        return e
    return _copy(_int(dstDevice), _host_addr(srcHost), int(ByteCount), True, False, hStream)


def cuMemcpyDtoHAsync(dstHost, srcDevice, ByteCount, hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    if not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if (e := _refuse(hStream)):
        return e
    return _copy(_host_addr(dstHost), _int(srcDevice), int(ByteCount), False, True, hStream)


def cuMemcpyDtoDAsync(dstDevice, srcDevice, ByteCount, hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    if not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if (cap := _capturing(hStream)) is not None:
        return _record(cap, ("copy", _int(dstDevice), _int(srcDevice), int(ByteCount)))
    if (e := _refuse(hStream)):
        return e
    return _copy(_int(dstDevice), _int(srcDevice), int(ByteCount), True, True, hStream)


def cuMemcpyHtoD(dstDevice, srcHost, ByteCount):  # noqa: N802,N803
    r = cuMemcpyHtoDAsync(dstDevice, srcHost, ByteCount, 0)
    _flush()   # synchronous: done on return, pinned or not
    return r


def cuMemcpyDtoH(dstHost, srcDevice, ByteCount):  # noqa: N802,N803
    r = cuMemcpyDtoHAsync(dstHost, srcDevice, ByteCount, 0)
    _flush()
    return r


def cuMemcpyDtoD(dstDevice, srcDevice, ByteCount):  # noqa: N802,N803
    return cuMemcpyDtoDAsync(dstDevice, srcDevice, ByteCount, 0)


cuMemcpyHtoD_v2, cuMemcpyDtoH_v2, cuMemcpyDtoD_v2 = cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyDtoD
cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2 = cuMemcpyHtoDAsync, cuMemcpyDtoHAsync
cuMemcpyDtoDAsync_v2 = cuMemcpyDtoDAsync


def _memset(dst, value: int, width: int, n: int, stream):
    if (e := _need_ctx()):
        return e
    if not _stream_ok(stream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    d, n = _int(dst), int(n)
    if n < 0 or d % width:
        return (R.CUDA_ERROR_INVALID_VALUE,)
    if (cap := _capturing(stream)) is not None:
        return _record(cap, ("memset", d, int(value), width, n))
    if (e := _refuse(stream)):
        return e
    if n == 0:
        return (_OK,)
    _flush(stream)
    with _lock:
        if not _in_device(d, n * width):
            return (R.CUDA_ERROR_INVALID_VALUE,)
        with _Unprotected():
            if width == 1:
                ctypes.memset(d, int(value) & 0xFF, n)
            else:
                ctypes.memmove(d, ((ctypes.c_uint32 * n)(*([int(value) & 0xFFFFFFFF] * n)))
                               if n < 4096 else _fill32(int(value), n), n * 4)
    return (_OK,)


def _fill32(value: int, n: int):
    import numpy as np
    return np.full(n, value & 0xFFFFFFFF, dtype=np.uint32).ctypes.data_as(ctypes.c_void_p)


def cuMemsetD8Async(dstDevice, uc, N, hStream):  # noqa: N802,N803
    return _memset(dstDevice, uc, 1, N, hStream)


def cuMemsetD32Async(dstDevice, ui, N, hStream):  # noqa: N802,N803
    return _memset(dstDevice, ui, 4, N, hStream)


def cuMemsetD8(dstDevice, uc, N):  # noqa: N802,N803
    return _memset(dstDevice, uc, 1, N, 0)


def cuMemsetD32(dstDevice, ui, N):  # noqa: N802,N803
    return _memset(dstDevice, ui, 4, N, 0)


cuMemsetD8_v2, cuMemsetD32_v2 = cuMemsetD8, cuMemsetD32


# ---------------------------------------------------------------------------------- modules
IMAGE_MAGIC = b"STRIDEX-CUDA-EMU-1\0"   # an emulator image: this prefix, then the library's path


def image_path(image) -> Path | None:
    """The shared library an image names, or None when `image` is not an emulator image."""
    try:
        b = bytes(image)
    except TypeError:
        return None
    if not b.startswith(IMAGE_MAGIC):
        return None
    return Path(b[len(IMAGE_MAGIC):].rstrip(b"\0").decode())


def cuModuleLoadData(image):  # noqa: N802
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e + (None,)
    path = image_path(image)
    if path is None or not path.is_file():
        return (R.CUDA_ERROR_INVALID_IMAGE, None)
    try:
        lib = ctypes.CDLL(str(path))
        if lib.emu_abi_version() != 3:
            return (R.CUDA_ERROR_INVALID_IMAGE, None)
    except (OSError, AttributeError):
        return (R.CUDA_ERROR_INVALID_IMAGE, None)
    lib.emu_last_error.restype = ctypes.c_char_p
    lib.emu_set_dynamic_shared.argtypes = [ctypes.c_size_t]
    lib.emu_get_stack_pool.restype = ctypes.c_void_p
    lib.emu_share_stack_pool.argtypes = [ctypes.c_void_p]
    with _lock:
        if _S.stack_donor is None:   # the fibers' stacks: the first module's, for every module
            _S.stack_donor = lib     # (kept loaded: ctypes never unloads a library anyway)
        lib.emu_share_stack_pool(_S.stack_donor.emu_get_stack_pool())
        h = _S.handle()
        _S.modules[h] = lib
    return (_OK, CUmodule(h))


def cuModuleGetFunction(hmod, name):  # noqa: N802
    if (e := _need_ctx()):
        return e + (None,)
    lib = _S.modules.get(_int(hmod))
    if lib is None:
        return (R.CUDA_ERROR_INVALID_HANDLE, None)
    n = name.decode() if isinstance(name, bytes | bytearray) else str(name)
    try:
        fn = getattr(lib, f"emu_launch_{n}")
    except AttributeError:
        return (R.CUDA_ERROR_NOT_FOUND, None)
    fn.argtypes = [ctypes.c_uint] * 6 + [ctypes.c_void_p]
    fn.restype = ctypes.c_int
    with _lock:
        h = _S.handle()
        _S.functions[h] = (n, fn, _int(hmod))
    return (_OK, CUfunction(h))


def cuModuleUnload(hmod):  # noqa: N802
    if (e := _need_ctx()):
        return e
    with _lock:
        if _S.modules.pop(_int(hmod), None) is None:
            return (R.CUDA_ERROR_INVALID_HANDLE,)
        for h in [h for h, f in _S.functions.items() if f[2] == _int(hmod)]:
            del _S.functions[h]
            _S.dyn_shared.pop(h, None)
    return (_OK,)   # the library stays mapped (ctypes never dlcloses); its functions are gone


def cuFuncGetAttribute(attrib, hfunc):  # noqa: N802
    if _int(hfunc) not in _S.functions:
        return (R.CUDA_ERROR_INVALID_HANDLE, None)
    a = int(attrib)
    val = {0: 1024, 1: 0, 2: 0, 3: 0, 4: 32, 5: 90, 6: 90, 7: 0, 8: 0, 9: -1}.get(a)
    if val is None:
        return (R.CUDA_ERROR_INVALID_VALUE, None)
    return (_OK, val)


DEFAULT_DYNAMIC_SHARED = 48 * 1024    # a function's dynamic shared memory until raised
MAX_DYNAMIC_SHARED = 227 * 1024       # the most it can be raised to (an H100's opt-in limit)


def cuFuncSetAttribute(hfunc, attrib, value):  # noqa: N802
    if _int(hfunc) not in _S.functions:
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if int(attrib) == CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if not 0 <= int(value) <= MAX_DYNAMIC_SHARED:
            return (R.CUDA_ERROR_INVALID_VALUE,)
        _S.dyn_shared[_int(hfunc)] = int(value)
    return (_OK,)


def cuFuncSetCacheConfig(hfunc, config):  # noqa: N802
    return (_OK,) if _int(hfunc) in _S.functions else (R.CUDA_ERROR_INVALID_HANDLE,)


def _params_address(kernelParams):  # noqa: N803
    """kernelParams as the real binding takes it -> (address of a void*[] or 0, keepalive)."""
    if kernelParams is None or isinstance(kernelParams, int):
        return (kernelParams or 0), None
    if isinstance(kernelParams, ctypes.Array | ctypes._Pointer):
        return ctypes.cast(kernelParams, ctypes.c_void_p).value or 0, kernelParams
    if isinstance(kernelParams, ctypes.c_void_p):
        return kernelParams.value or 0, kernelParams
    if isinstance(kernelParams, tuple | list):
        vals = kernelParams
        if len(vals) == 2 and isinstance(vals[0], tuple | list) and isinstance(vals[1], tuple | list):
            vals = [v if isinstance(v, ctypes._SimpleCData | ctypes.Structure | ctypes.Array)
                    else (t(v) if t is not None else ctypes.c_void_p(int(v)))
                    for v, t in zip(vals[0], vals[1])]
        objs = [v if isinstance(v, ctypes._SimpleCData | ctypes.Structure | ctypes.Array)
                else ctypes.c_void_p(int(v)) for v in vals]
        arr = (ctypes.c_void_p * max(len(objs), 1))(*[ctypes.addressof(o) for o in objs])
        return ctypes.addressof(arr), (arr, objs)
    raise TypeError(f"cuLaunchKernel: unsupported kernelParams {type(kernelParams).__name__}")


def cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,  # noqa: N802,N803
                   sharedMemBytes, hStream, kernelParams, extra):  # noqa: N803
    if (e := _need_ctx()):
        return e
    ent = _S.functions.get(_int(f))
    if ent is None:
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    g = [int(gridDimX), int(gridDimY), int(gridDimZ)]
    b = [int(blockDimX), int(blockDimY), int(blockDimZ)]
    if int(sharedMemBytes) > _S.dyn_shared.get(_int(f), DEFAULT_DYNAMIC_SHARED):
        return (R.CUDA_ERROR_INVALID_VALUE,)   # as the driver: raise the attribute first
    if (min(g + b) < 1 or g[0] > 2**31 - 1 or g[1] > 65535 or g[2] > 65535 or b[0] > 1024
            or b[1] > 1024 or b[2] > 64 or b[0] * b[1] * b[2] > 1024):
        return (R.CUDA_ERROR_INVALID_VALUE,)
    if extra not in (None, 0):
        return (R.CUDA_ERROR_NOT_SUPPORTED,)
    name, fn, _ = ent
    try:
        addr, keep = _params_address(kernelParams)
    except TypeError:
        return (R.CUDA_ERROR_INVALID_VALUE,)
    if (cap := _capturing(hStream)) is not None:
        return _record_launch(cap, _int(f), ent, g, b, int(sharedMemBytes), addr)
    if (e := _refuse(hStream)):
        return e
    _flush(hStream)
    with _lock:
        lib = _S.modules.get(ent[2])
        if int(sharedMemBytes) and lib.emu_set_dynamic_shared(int(sharedMemBytes)):
            return (R.CUDA_ERROR_OUT_OF_MEMORY,)
        t0 = time.perf_counter()
        with _Unprotected():
            rc = fn(*g, *b, addr)
        _S.exec_s += time.perf_counter() - t0
        del keep
        if rc != 0:
            msg = lib.emu_last_error().decode(errors="replace") if lib is not None else ""
            _S.last_error = f"stridex CUDA emulator: {msg}"
            print(_S.last_error, file=sys.stderr)
            return (R.CUDA_ERROR_LAUNCH_FAILED,)
    return (_OK,)


# ---------------------------------------------------------------------------------- streams/events
def cuStreamCreate(Flags):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e + (None,)
    with _lock:
        h = _S.handle()
        _S.streams.add(h)
    return (_OK, CUstream(h))


def cuStreamCreateWithPriority(flags, priority):  # noqa: N802
    return cuStreamCreate(flags)


def cuStreamDestroy(hStream):  # noqa: N802,N803
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e
    with _lock:
        if _int(hStream) not in _S.streams:
            return (R.CUDA_ERROR_INVALID_HANDLE,)
        _S.streams.discard(_int(hStream))
    return (_OK,)


cuStreamDestroy_v2 = cuStreamDestroy


def cuStreamSynchronize(hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    if not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if (e := _refuse(hStream, sync=True)):
        return e
    _flush(hStream)
    return (_OK,)


def cuStreamQuery(hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    if _stream_ok(hStream) and any(_orders(_int(hStream), p[1]) for p in _S.pending):
        return (R.CUDA_ERROR_NOT_READY,)   # a queued pinned copy: not done until ordered
    return cuStreamSynchronize(hStream)


def cuStreamWaitEvent(hStream, hEvent, Flags):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    ev = _S.events.get(_int(hEvent))
    if not _stream_ok(hStream) or ev is None:
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if ev.get("stream") is not None:   # the stream's later work sees the event's copies
        _flush(ev["stream"], ev["seq"])
    return (_OK,)


def cuEventCreate(Flags):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e + (None,)
    with _lock:
        h = _S.handle()
        _S.events[h] = {"flags": int(Flags), "t": None}
    return (_OK, CUevent(h))


def cuEventRecord(hEvent, hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    ev = _S.events.get(_int(hEvent))
    if ev is None or not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    ev["t"] = time.perf_counter()
    ev["stream"], ev["seq"] = _int(hStream), _S.seq   # done once the copies queued so far are
    return (_OK,)


def cuEventSynchronize(hEvent):  # noqa: N802,N803
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e
    ev = _S.events.get(_int(hEvent))
    if ev is None:
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if ev.get("stream") is not None:
        _flush(ev["stream"], ev["seq"])
    return (_OK,)


def cuEventQuery(hEvent):  # noqa: N802,N803
    # refused by a global-mode capture though it does not wait (as an H200's driver does)
    if (e := _need_ctx()) or (e := _refuse(sync=True)):
        return e
    ev = _S.events.get(_int(hEvent))
    if ev is None:
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if ev.get("stream") is not None and any(
            p[0] <= ev["seq"] and _orders(ev["stream"], p[1]) for p in _S.pending):
        return (R.CUDA_ERROR_NOT_READY,)   # a pinned copy queued before it is still waiting
    return (_OK,)


def cuEventElapsedTime(hStart, hEnd):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e + (None,)
    a, b = _S.events.get(_int(hStart)), _S.events.get(_int(hEnd))
    if a is None or b is None:
        return (R.CUDA_ERROR_INVALID_HANDLE, None)
    if (a["flags"] | b["flags"]) & CUevent_flags.CU_EVENT_DISABLE_TIMING:
        return (R.CUDA_ERROR_INVALID_HANDLE, None)
    if a["t"] is None or b["t"] is None:
        return (R.CUDA_ERROR_INVALID_HANDLE, None)
    return (_OK, float((b["t"] - a["t"]) * 1000.0))


cuEventElapsedTime_v2 = cuEventElapsedTime


def cuEventDestroy(hEvent):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    with _lock:
        if _S.events.pop(_int(hEvent), None) is None:
            return (R.CUDA_ERROR_INVALID_HANDLE,)
    return (_OK,)


cuEventDestroy_v2 = cuEventDestroy


# ---------------------------------------------------------------------------------- errors
_STRINGS = {
    R.CUDA_SUCCESS: "no error",
    R.CUDA_ERROR_INVALID_VALUE: "invalid argument",
    R.CUDA_ERROR_OUT_OF_MEMORY: "out of memory",
    R.CUDA_ERROR_NOT_INITIALIZED: "initialization error",
    R.CUDA_ERROR_DEINITIALIZED: "driver shutting down",
    R.CUDA_ERROR_NO_DEVICE: "no CUDA-capable device is detected",
    R.CUDA_ERROR_INVALID_DEVICE: "invalid device ordinal",
    R.CUDA_ERROR_INVALID_IMAGE: "device kernel image is invalid",
    R.CUDA_ERROR_INVALID_CONTEXT: "invalid device context",
    R.CUDA_ERROR_INVALID_HANDLE: "invalid resource handle",
    R.CUDA_ERROR_NOT_FOUND: "named symbol not found",
    R.CUDA_ERROR_NOT_READY: "device not ready",
    R.CUDA_ERROR_ILLEGAL_ADDRESS: "an illegal memory access was encountered",
    R.CUDA_ERROR_LAUNCH_FAILED: "unspecified launch failure",
    R.CUDA_ERROR_NOT_SUPPORTED: "operation not supported",
    R.CUDA_ERROR_UNKNOWN: "unknown error",
}


def cuGetErrorName(error):  # noqa: N802
    try:
        return (_OK, R(int(error)).name.encode())
    except ValueError:
        return (R.CUDA_ERROR_INVALID_VALUE, None)


def cuGetErrorString(error):  # noqa: N802
    try:
        e = R(int(error))
    except ValueError:
        return (R.CUDA_ERROR_INVALID_VALUE, None)
    return (_OK, _STRINGS.get(e, e.name.lower().replace("cuda_error_", "").replace("_", " ")).encode())


# ------------------------------------------------------------------------ stream capture, graphs
# As the driver: while a stream captures, kernel launches, device-to-device copies and memsets
# queued on it are recorded, not run; a launch's arguments are copied when it is recorded (the
# sizes come from the emulator module's emu_params_NAME), so changing them afterwards does not
# change the graph. What cannot be captured ends the capture as invalidated and fails with the
# driver's error: a copy to or from host memory on the capturing stream, and (unless the calling
# thread set relaxed mode with cuThreadExchangeStreamCaptureMode, or the capture is relaxed) a
# synchronization, an allocation or free, a module load, or work on the legacy default stream
# while a capture is active; cuStreamEndCapture then returns
# CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. A graph runs its nodes in the recorded order (the
# driver may overlap independent nodes; the results are the same for one stream's capture).

class CUstreamCaptureMode(IntEnum):  # noqa: N801 - the binding's names
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
    CU_STREAM_CAPTURE_MODE_RELAXED = 2


class CUstreamCaptureStatus(IntEnum):  # noqa: N801
    CU_STREAM_CAPTURE_STATUS_NONE = 0
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2


_RELAXED = CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
_NONE, _ACTIVE, _INVALID = (CUstreamCaptureStatus(i) for i in range(3))


class _Capture:
    __slots__ = ("mode", "nodes", "invalid")

    def __init__(self, mode: int):
        self.mode, self.nodes, self.invalid = mode, [], False

    def invalidate(self) -> None:
        """Mark the capture failed, keeping where (the Python stack of the offending call) for
        emu_capture_failure()."""
        if not self.invalid:
            import traceback
            _S.capture_failure = "".join(traceback.format_stack(limit=12)[:-2])
        self.invalid = True


def emu_capture_failure() -> str:
    """Where the last capture that failed was broken: the Python stack of the call (the
    runtime adds it to its error on the emulator)."""
    return getattr(_S, "capture_failure", "")


_CAPTURES: dict = {}   # stream handle -> its _Capture
_GRAPHS: dict = {}     # graph handle -> its nodes
_EXECS: dict = {}      # executable graph handle -> its nodes


def _graphs_reset() -> None:
    """Forget every capture and graph (the driver's emu_reset)."""
    _CAPTURES.clear()
    _GRAPHS.clear()
    _EXECS.clear()


def _capturing(stream) -> _Capture | None:
    """The capture recording on `stream`, if any."""
    return _CAPTURES.get(int(stream or 0)) if _CAPTURES else None


def _refuse(stream=None, sync: bool = False):
    """The error tuple for an operation that cannot run while a capture is active (and the
    captures it breaks, invalidated), or None when it may run. stream: the stream it is queued
    on (None: not a stream operation); sync: it synchronizes or frees."""
    caps = _CAPTURES
    if not caps:
        return None
    h = None if stream is None else int(stream or 0)
    cap = caps.get(h) if h is not None else None
    if cap is not None:   # on the capturing stream itself: never allowed here
        cap.invalidate()
        return (R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    relaxed = getattr(_S._tls, "capture_mode", 0) == _RELAXED   # this thread's own mode
    unsafe = [] if relaxed else [c for c in caps.values() if c.mode != _RELAXED]
    if sync and unsafe:
        for c in unsafe:
            c.invalidate()
        return (R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    if h in (0, 1) and unsafe:   # the legacy stream synchronizes with the capturing one
        for c in unsafe:
            c.invalidate()
        return (R.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,)
    return None


def _record_launch(cap: _Capture, f: int, ent, grid, block, shared: int, addr: int):
    """Record a launch of function handle f with a copy of its arguments (addr: the void*[]
    of the call)."""
    name, _, hmod = ent
    lib = _S.modules.get(hmod)
    sizes_fn = getattr(lib, f"emu_params_{name}", None)
    if sizes_fn is None:
        cap.invalidate()
        return (R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    sizes = (ctypes.c_size_t * 32)()
    n = sizes_fn(sizes, 32)
    ptrs = ctypes.cast(addr, ctypes.POINTER(ctypes.c_void_p)) if n else None
    args = [ctypes.create_string_buffer(ctypes.string_at(ptrs[i], sizes[i]), max(sizes[i], 1))
            for i in range(n)]
    cap.nodes.append(("kernel", f, tuple(grid), tuple(block), shared, args))
    return (_OK,)


def _record(cap: _Capture, node: tuple):
    cap.nodes.append(node)
    return (_OK,)


def cuThreadExchangeStreamCaptureMode(mode):  # noqa: N802
    """Set this thread's capture interaction mode; returns the one it had."""
    tls = _S._tls
    prev = getattr(tls, "capture_mode", CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
    tls.capture_mode = CUstreamCaptureMode(int(mode))
    return (_OK, prev)


def cuStreamBeginCapture(hStream, mode):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    h = _int(hStream)
    if h not in _S.streams:   # the legacy / per-thread default streams cannot capture
        return (R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    if h in _CAPTURES:
        return (R.CUDA_ERROR_ILLEGAL_STATE,)
    _CAPTURES[h] = _Capture(int(mode))
    return (_OK,)


cuStreamBeginCapture_v2 = cuStreamBeginCapture


def cuStreamEndCapture(hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e + (None,)
    cap = _CAPTURES.pop(_int(hStream), None)
    if cap is None:
        return (R.CUDA_ERROR_ILLEGAL_STATE, None)
    if cap.invalid:
        return (R.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, None)
    h = _S.handle()
    _GRAPHS[h] = list(cap.nodes)
    return (_OK, CUgraph(h))


def cuStreamIsCapturing(hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e + (None,)
    cap = _capturing(hStream)
    return (_OK, _NONE if cap is None else _INVALID if cap.invalid else _ACTIVE)


def cuGraphInstantiate(hGraph, flags=0):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e + (None,)
    nodes = _GRAPHS.get(_int(hGraph))
    if nodes is None:
        return (R.CUDA_ERROR_INVALID_VALUE, None)
    h = _S.handle()
    _EXECS[h] = list(nodes)
    return (_OK, CUgraphExec(h))


cuGraphInstantiateWithFlags = cuGraphInstantiate


def cuGraphLaunch(hGraphExec, hStream):  # noqa: N802,N803
    if (e := _need_ctx()):
        return e
    nodes = _EXECS.get(_int(hGraphExec))
    if nodes is None or not _stream_ok(hStream):
        return (R.CUDA_ERROR_INVALID_HANDLE,)
    if (e := _refuse(hStream)):
        return e
    for node in nodes:
        r = _run_node(node, hStream)
        if r[0] != _OK:
            return r
    return (_OK,)


def _run_node(node, stream):
    kind = node[0]
    if kind == "kernel":
        _, f, grid, block, shared, args = node
        arr = (ctypes.c_void_p * max(len(args), 1))(*[ctypes.addressof(a) for a in args])
        return cuLaunchKernel(f, *grid, *block, shared, stream, ctypes.addressof(arr), 0)
    if kind == "copy":
        _, dst, src, n = node
        return cuMemcpyDtoDAsync(dst, src, n, stream)
    _, dst, value, width, n = node   # "memset"
    return _memset(dst, value, width, n, stream)


def cuGraphExecDestroy(hGraphExec):  # noqa: N802,N803
    # destroying a graph during a global-mode capture invalidated it on an H200
    if (e := _refuse(sync=True)):
        return e
    return (_OK,) if _EXECS.pop(_int(hGraphExec), None) is not None else (
        R.CUDA_ERROR_INVALID_VALUE,)


def cuGraphDestroy(hGraph):  # noqa: N802,N803
    if (e := _refuse(sync=True)):
        return e
    return (_OK,) if _GRAPHS.pop(_int(hGraph), None) is not None else (
        R.CUDA_ERROR_INVALID_VALUE,)
