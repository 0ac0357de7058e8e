"""The CUDA runtime over `cuda.bindings.driver`: devices, primary contexts, module loading,
kernel launch, the per-device caching allocator and host<->device copies.

Nothing here runs at import: the driver is loaded on the first CUDA request, and a missing
driver or GPU becomes a DeviceError that says what is missing. The driver and the kernel
compiler come from the toolchain chosen once (tensor/cuda/toolchain.py): the GPU's, or with
``STRIDEX_CUDA_EMULATOR=1`` the CPU emulator's (tensor/cuda/emulator: kernels compiled with
g++ and run thread by thread), so the whole backend can be tested on a machine without a GPU.
"""
from __future__ import annotations

import bisect
import contextlib
import ctypes
import os
import threading

from ..device import _CUDA as _CUDA_DEVICES  # the Device objects of cuda:N, made once each
from ..device import DeviceError
from ..device import device as parse
from ..memory import CachingAllocator, CriticalLock, private_pool
from . import current, nvrtc, toolchain
from . import kernels as CK

__all__ = ["CudaError", "drv", "kernel", "Kernel", "sm_count", "blocks_for", "device_state",
           "emulated", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memset", "host_alloc",
           "host_free", "is_pinned_host", "memcpy_htod_async"]


class CudaError(RuntimeError):
    """A CUDA driver call failed (the message names the call and the driver's error)."""


def emulated() -> bool:
    """Whether the CUDA backend runs on the CPU emulator (a test device)."""
    return toolchain.current().emulated


_drv = None
_drv_error: str | None = None


def drv():
    """The driver module (cuda.bindings.driver, or the emulator's), initialised once."""
    global _drv, _drv_error
    if _drv is not None:
        return _drv
    if _drv_error is not None:
        raise DeviceError(_drv_error)
    try:
        d = toolchain.current().load_driver()
    except ImportError as e:
        _drv_error = "CUDA is not available: " + toolchain.Toolchain.missing.format(e=e)
        raise DeviceError(_drv_error) from e
    try:
        res = d.cuInit(0)
    except Exception as e:  # noqa: BLE001 - the binding raises when libcuda is missing
        _drv_error = f"CUDA is not available: no NVIDIA driver was found ({e})"
        raise DeviceError(_drv_error) from e
    if int(res[0]) != 0:
        _drv_error = f"CUDA is not available: cuInit failed ({_err_name(d, res[0])})"
        if int(res[0]) == 100:   # CUDA_ERROR_NO_DEVICE
            hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
            _drv_error = ("CUDA is not available: the driver found no CUDA device"
                          + (f" (CUDA_VISIBLE_DEVICES={hidden!r})" if hidden is not None else ""))
        raise DeviceError(_drv_error)
    _drv = d
    return d


def unavailable_reason() -> str:
    """Why CUDA cannot be used ('' when it can)."""
    try:
        drv()
    except DeviceError as e:
        return str(e)
    return "" if device_count() else "CUDA is not available: no CUDA device was found"


def use_emulator() -> None:
    """Switch to the CPU emulator (tests on machines without a GPU); only before any device
    was used."""
    global _drv, _drv_error
    if _states:
        raise RuntimeError("use_emulator: a CUDA device is already in use")
    toolchain.use_emulator()
    _drv, _drv_error = None, None
    _CUDA_DEVICES.clear()


def _err_name(d, err) -> str:
    try:
        r = d.cuGetErrorName(err)
        if int(r[0]) == 0:
            return r[1].decode() if isinstance(r[1], bytes) else str(r[1])
    except Exception:  # noqa: BLE001
        pass
    return str(err)


def check(res, what: str):
    """Raise CudaError unless a driver call succeeded; return its result (if any)."""
    err = res[0]
    if int(err) != 0:
        hint = ("; a CUDA graph is capturing: reading device memory on the host (.item(), .cpu(), "
                "printing, an index bounds check), synchronizing or using the default stream "
                "cannot be recorded: keep it outside tensor.cuda.graph"
                if 900 <= int(err) <= 907 else "")
        raise CudaError(f"CUDA: {what} failed: {_err_name(_drv, err)} ({int(err)}){hint}")
    if len(res) == 1:
        return None
    return res[1] if len(res) == 2 else res[1:]


def device_count() -> int:
    try:
        d = drv()
    except DeviceError:
        return 0
    err, n = d.cuDeviceGetCount()
    return n if int(err) == 0 else 0


# ---------------------------------------------------------------- devices

_tls = threading.local()
_states: dict[int, _DeviceState] = {}
# CriticalLocks (re-entrant; the holder's frees are queued) for the device's initialisation and
# module loads: a tracer or finalizer on the holder's thread may ask for the device or a kernel,
# and one inside an allocator's locked section (another thread) may wait here.
_init_lock = CriticalLock()


class _DeviceState:
    """One GPU: its primary context, properties, loaded modules, allocator, streams."""

    def __init__(self, index: int):
        d = drv()
        n = device_count()
        if not 0 <= index < n:
            raise DeviceError(f"device 'cuda:{index}': no such CUDA device "
                              f"({n} device{'s' if n != 1 else ''} present)")
        self.index = index
        self.handle = check(d.cuDeviceGet(index), "cuDeviceGet")
        self.ctx = check(d.cuDevicePrimaryCtxRetain(self.handle), "cuDevicePrimaryCtxRetain")
        check(d.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        _tls.ctx = self.ctx
        attr = d.CUdevice_attribute
        get = lambda a: check(d.cuDeviceGetAttribute(a, self.handle), "cuDeviceGetAttribute")  # noqa: E731
        self.cc = (get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                   get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        self.sm_count = get(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        name = check(d.cuDeviceGetName(256, self.handle), "cuDeviceGetName")
        self.name = name.split(b"\0", 1)[0].decode(errors="replace") if isinstance(name, bytes) else str(name)
        self.total_memory = int(check(d.cuDeviceTotalMem(self.handle), "cuDeviceTotalMem"))
        self.functions: dict = {}
        self.modules: dict = {}
        self.lock = CriticalLock()   # see _init_lock
        self.default_handle = d.CUstream(0)   # the legacy NULL stream (streams.py wraps it)
        self.deferred: list = []     # (block, events): frees waiting for other streams
        self.capturing = 0           # graph captures running on this device (tensor/cuda/graphs.py)
        self.held: list = []         # driver calls held back until they end (defer())
        self.allocator = CachingAllocator(self._raw_alloc, self._raw_free, f"cuda:{index}",
                                          total_memory=self.total_memory)

    def private_allocator(self) -> CachingAllocator:
        """A CachingAllocator of its own over this device's memory (a capture's static memory:
        tensor/capture.py), released when it is garbage."""
        pool = type(self.allocator)(self._raw_alloc, self._raw_free, f"cuda:{self.index} (pool)",
                                    total_memory=self.total_memory)
        return private_pool(pool, self.allocator)

    @property
    def arch(self) -> str:
        """NVRTC target: CUBIN for this device, or PTX when NVRTC does not know it yet."""
        return nvrtc.target(self.cc)

    def make_current(self) -> None:
        if getattr(_tls, "ctx", None) is not self.ctx:
            check(drv().cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
            _tls.ctx = self.ctx

    def _raw_alloc(self, nbytes: int) -> int:
        d = drv()
        self.make_current()
        with capture_relaxed(d):
            err, ptr = d.cuMemAlloc(nbytes)
        if int(err) != 0 and self.deferred:
            # blocks waiting for other streams: wait for them; their frees are queued and done
            # before the allocator's retry (which then finds them cached or releases them)
            self.poll_deferred(wait=True)
        if int(err) != 0:
            raise MemoryError(f"cuMemAlloc({nbytes}): {_err_name(d, err)}")
        return int(ptr)

    def poll_deferred(self, wait: bool = False) -> None:
        """Give back the deferred blocks whose streams have passed their events (all of them,
        waiting, when `wait`). While a graph captures, nothing waits, and the queries run with
        the thread's capture mode relaxed: a global-mode capture refuses cuEventQuery
        (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, seen on an H200) though it records nothing."""
        keep = []
        wait = wait and not self.capturing
        waiting, self.deferred = self.deferred, []   # frees queued meanwhile are kept
        with capture_relaxed(drv()) if self.capturing else contextlib.nullcontext():
            for block, events in waiting:
                if wait:
                    for e in events:
                        e.synchronize()
                if all(e.query() for e in events):
                    self.allocator.free(block)
                else:
                    keep.append((block, events))
        self.deferred[:0] = keep

    def capture_started(self) -> None:
        self.capturing += 1

    def capture_ended(self) -> None:
        """A graph capture on this device ended: the calls it held back happen now."""
        self.capturing -= 1
        if not self.capturing:
            held, self.held = self.held, []
            for call in held:
                call()

    def defer(self, call) -> bool:
        """Hold call() back until the graph captures on this device end, if any runs (True
        then): freeing memory or destroying a graph or stream during a global-mode capture
        invalidates it (an H200 said so: the garbage collector may run such frees anywhere)."""
        if not self.capturing:
            return False
        self.held.append(call)
        return True

    def _raw_free(self, ptr: int) -> None:
        if self.defer(lambda: self._raw_free(ptr)):   # a free would synchronize
            return
        d = drv()
        self.make_current()
        # queued kernels may still use memory whose tensors died on the host: wait for them
        check(d.cuCtxSynchronize(), "cuCtxSynchronize")
        check(d.cuMemFree(ptr), "cuMemFree")


@contextlib.contextmanager
def capture_relaxed(d):
    """Let this thread make driver calls that a CUDA graph capture in global mode would refuse
    but that record nothing into it (allocating memory, loading a module), as PyTorch's
    allocator does: the thread's capture mode is relaxed meanwhile."""
    exchange = getattr(d, "cuThreadExchangeStreamCaptureMode", None)
    if exchange is None:
        yield
        return
    err, prev = exchange(d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)
    try:
        yield
    finally:
        if int(err) == 0:
            exchange(prev)


def device_state(index: int | None = None) -> _DeviceState:
    """The state of cuda:index (None: the current device), initialised on first use."""
    if index is None:
        index = current_device_index()
    st = _states.get(index)
    if st is None:
        with _init_lock:
            st = _states.get(index)
            if st is None:
                new = _DeviceState(index)
                # published once complete (other threads read _states unlocked); a nested
                # call's state (a tracer during the initialisation) may have won meanwhile
                st = _states.setdefault(index, new)
    return st


_current_index = 0


def current_device_index() -> int:
    return getattr(_tls, "device", _current_index)


def device_index(device) -> int:
    """The index of a CUDA device given as None (the current one), an int, 'cuda:N' or a Device."""
    if device is None:
        return current_device_index()
    if isinstance(device, int):
        return device
    d = parse(device)
    if d.type != "cuda":
        raise ValueError(f"cuda: expected a CUDA device, got {d}")
    return d.index or 0


def set_device(index: int) -> None:
    global _current_index
    device_state(index)
    _tls.device = index
    _current_index = index


def sm_count(device) -> int:
    return device_state(device.index or 0).sm_count


def blocks_for(n: int, block: int, device, waves: int = 8) -> int:
    """Blocks of a grid-stride loop over n items: enough for `waves` blocks per SM, no more."""
    need = (n + block - 1) // block
    cap = device_state(device.index or 0).sm_count * waves
    return max(1, min(need, cap))


# ---------------------------------------------------------------- modules and kernels

def compile_unit(family: str, d, name: str, arch: str | None = None) -> bytes:
    """The image holding kernel `name` of module (family, d), for `arch` (default: the
    current device's), from the caches or the compiler. NVRTC builds the kernel alone (a
    fraction of a second; a whole module takes up to a minute), the emulator the whole module
    (one g++ run serves every kernel of it): see toolchain.py."""
    CK.load_families()
    tc = toolchain.current()
    if arch is None and tc.per_device:
        arch = device_state().arch
    return tc.compile(family, d, name, arch)


def _load_module(st: _DeviceState, family: str, d, name: str):
    tc = toolchain.current()
    key = tc.unit_key(family, d, name)
    mod = st.modules.get(key)
    if mod is not None:
        return mod
    arch = st.arch if tc.per_device else None
    return _load_image(st, key, compile_unit(family, d, name, arch), arch, name, f"{family}/{name}")


def _load_image(st: _DeviceState, key, image: bytes, arch: str | None, name: str, what: str):
    """The module of `image` in st.modules[key], loaded once (another thread may have loaded
    it meanwhile); what: the module, in the error."""
    with st.lock:
        mod = st.modules.get(key)
        if mod is None:
            st.make_current()
            with capture_relaxed(drv()):
                res = drv().cuModuleLoadData(image)
            if int(res[0]) != 0 and arch and arch.startswith("compute_"):
                raise CudaError(_ptx_load_message(st, arch, name, res[0]))
            mod = st.modules[key] = check(res, f"cuModuleLoadData({what})")
    return mod


def _ptx_load_message(st: _DeviceState, arch: str, name: str, err) -> str:
    major, minor = nvrtc.version()
    try:
        v = int(check(drv().cuDriverGetVersion(), "cuDriverGetVersion"))
        drv_ver = f"CUDA {v // 1000}.{v % 1000 // 10}"
    except CudaError:
        drv_ver = "unknown"
    return (f"CUDA: loading kernel {name} failed ({_err_name(_drv, err)}): the device "
            f"(sm_{st.cc[0]}{st.cc[1]}) is newer than NVRTC {major}.{minor} can build CUBIN for, so "
            f"it was compiled to PTX ({arch}), and the driver ({drv_ver}) cannot load PTX from a "
            "newer NVRTC than itself. Prefer CUBIN: install an nvidia-cuda-nvrtc release that "
            f"knows sm_{st.cc[0]}{st.cc[1]} (its CUBIN loads on this driver), or update the "
            f"driver to CUDA {major}.{minor} or newer so that the PTX loads.")


_stream = current.handle   # the CUstream launches and copies of a device go onto now


STATIC_SHARED_MAX = 48 * 1024   # dynamic shared memory a launch gets without opting in


class Kernel:
    """A loaded kernel; calling it launches on the device's current stream (asynchronous)."""

    __slots__ = ("fn", "st", "name", "shared_max")

    def __init__(self, fn, st: _DeviceState, name: str):
        self.fn, self.st, self.name = fn, st, name
        self.shared_max = STATIC_SHARED_MAX

    def allow_shared(self, nbytes: int) -> None:
        """Let launches use `nbytes` of dynamic shared memory (above 48 KiB the function's
        MAX_DYNAMIC_SHARED_SIZE_BYTES must be raised first, up to the device's opt-in limit)."""
        if nbytes > self.shared_max:
            d = drv()
            self.st.make_current()
            attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            check(d.cuFuncSetAttribute(self.fn, attr, nbytes),
                  f"cuFuncSetAttribute({self.name}, max dynamic shared memory = {nbytes} bytes)")
            self.shared_max = nbytes

    def __call__(self, grid, block, *args, shared: int = 0) -> None:
        if shared > self.shared_max:
            self.allow_shared(shared)
        gx, gy, gz = (grid, 1, 1) if type(grid) is int else grid
        bx, by, bz = (block, 1, 1) if type(block) is int else block
        n = len(args)
        params = (ctypes.c_void_p * n)(*[ctypes.addressof(a) for a in args]) if n else None
        st = self.st
        if getattr(_tls, "ctx", None) is not st.ctx:
            st.make_current()
        res = drv().cuLaunchKernel(self.fn, gx, gy, gz, bx, by, bz, shared, _stream(st),
                                   ctypes.addressof(params) if n else 0, 0)
        if int(res[0]) != 0:
            self._fail(res[0], (gx, gy, gz), (bx, by, bz))

    def _fail(self, err, grid, block):
        extra = toolchain.current().launch_detail(_drv)
        raise CudaError(f"CUDA: launching kernel {self.name} (grid {grid}, block {block}) "
                        f"failed: {_err_name(_drv, err)}" + (f"\n{extra}" if extra else ""))

    def launch_params(self, grid: int, block: int, params_addr: int) -> None:
        """Launch with a ready kernelParams array (its address): the fast path."""
        st = self.st
        if getattr(_tls, "ctx", None) is not st.ctx:
            st.make_current()
        res = _drv.cuLaunchKernel(self.fn, grid, 1, 1, block, 1, 1, 0, _stream(st),
                                  params_addr, 0)
        if res[0]:
            self._fail(res[0], (grid, 1, 1), (block, 1, 1))


def kernel(family: str, dtype, name: str, device) -> Kernel:
    """The kernel `name` of module (family, dtype) on a CUDA device, loaded once."""
    st = device_state(device.index or 0)
    key = (family, dtype, name)
    k = st.functions.get(key)
    if k is None:
        k = _function(st, key, _load_module(st, family, dtype, name), name)
    return k


def source_kernel(name: str, source: str, device) -> Kernel:
    """Kernel `name` of a generated module `source` (cached on disk as every image, loaded
    once a device): a captured step's fused kernels (tensor/cuda/fused.py)."""
    st = device_state(device.index or 0)
    key = ("src", name)
    k = st.functions.get(key)
    if k is None:
        tc = toolchain.current()
        arch = st.arch if tc.per_device else None
        mod = _load_image(st, key, tc.compile_source(name, source, arch), arch, name, name)
        k = _function(st, key, mod, name)
    return k


def _function(st: _DeviceState, key, mod, name: str) -> Kernel:
    """Kernel `name` of loaded module mod, kept in st.functions[key]."""
    st.make_current()
    fn = check(drv().cuModuleGetFunction(mod, name.encode()), f"cuModuleGetFunction({name})")
    k = st.functions[key] = Kernel(fn, st, name)
    return k


# ---------------------------------------------------------------- page-locked host memory
# cuMemHostAlloc'd ranges, base -> size, and their sorted bases: a copy from or into one is truly
# asynchronous (the DMA engine reads it later), so the blocking copies below wait for it.
_pinned: dict[int, int] = {}
_pinned_starts: list[int] = []
_PORTABLE = 1   # CU_MEMHOSTALLOC_PORTABLE: pinned for every context, not only the current one


def host_alloc(nbytes: int) -> int:
    """Page-locked host memory from the driver (the current device's context): its address, or
    MemoryError. The pinned caching allocator's raw_alloc (tensor/backend/pinned.py)."""
    d = drv()
    st = device_state()
    st.make_current()
    with capture_relaxed(d):
        err, ptr = d.cuMemHostAlloc(nbytes, _PORTABLE)
    if int(err) != 0:
        raise MemoryError(f"cuMemHostAlloc({nbytes}): {_err_name(d, err)}")
    ptr = int(ptr)
    _pinned[ptr] = int(nbytes)
    _pinned_starts[:] = sorted([*_pinned_starts, ptr])
    return ptr


def host_free(ptr: int) -> None:
    """Give page-locked memory back to the driver (it waits for the work queued on it)."""
    st = device_state()
    if st.defer(lambda: host_free(ptr)):   # cuMemFreeHost synchronizes: not during a capture
        return
    st.make_current()
    check(drv().cuMemFreeHost(ptr), "cuMemFreeHost")
    _pinned.pop(ptr, None)
    _pinned_starts[:] = [p for p in _pinned_starts if p != ptr]


def is_pinned_host(ptr: int) -> bool:
    """Whether host address ptr lies in memory from host_alloc."""
    if not _pinned:
        return False
    i = bisect.bisect_right(_pinned_starts, ptr) - 1
    return i >= 0 and ptr < _pinned_starts[i] + _pinned.get(_pinned_starts[i], 0)


# ---------------------------------------------------------------- copies

def memcpy_htod(st: _DeviceState, dst: int, src_host: int, nbytes: int) -> None:
    """Copy from host memory on the current stream. From pageable memory the driver has read
    the source when this returns; from page-locked memory it would not have, so this waits for
    the copy then (the caller may overwrite or free the source next; memcpy_htod_async does not
    wait)."""
    if nbytes:
        st.make_current()
        s = _stream(st)
        check(drv().cuMemcpyHtoDAsync(dst, src_host, nbytes, s), "cuMemcpyHtoDAsync")
        if _pinned and is_pinned_host(src_host):
            check(drv().cuStreamSynchronize(s), "cuStreamSynchronize")


def memcpy_htod_async(st: _DeviceState, dst: int, src_host: int, nbytes: int) -> None:
    """Queue a copy from page-locked host memory on the current stream and return at once: the
    source must stay untouched until the stream passes this point (tensor/backend/pinned.py
    records an event on its block)."""
    if nbytes:
        st.make_current()
        check(drv().cuMemcpyHtoDAsync(dst, src_host, nbytes, _stream(st)), "cuMemcpyHtoDAsync")


def memcpy_dtoh(st: _DeviceState, dst_host: int, src: int, nbytes: int) -> None:
    """Copy to host memory and wait for it (the host reads the bytes next)."""
    if nbytes:
        st.make_current()
        s = _stream(st)
        check(drv().cuMemcpyDtoHAsync(dst_host, src, nbytes, s), "cuMemcpyDtoHAsync")
        check(drv().cuStreamSynchronize(s), "cuStreamSynchronize")


def memcpy_dtod(st: _DeviceState, dst: int, src: int, nbytes: int) -> None:
    if nbytes:
        st.make_current()
        check(drv().cuMemcpyDtoDAsync(dst, src, nbytes, _stream(st)), "cuMemcpyDtoDAsync")


def memset(st: _DeviceState, dst: int, byte: int, nbytes: int) -> None:
    if nbytes:
        st.make_current()
        check(drv().cuMemsetD8Async(dst, byte, nbytes, _stream(st)), "cuMemsetD8Async")
