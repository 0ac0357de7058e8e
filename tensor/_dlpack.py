"""Tensor-agnostic DLPack bridge written with ctypes only (no C extension).

Two entry points are used by the Tensor class:

* :func:`make_capsule` exports a block of memory (described by a pointer to
  element 0, a shape, element strides, a dtype and a device) as a DLPack
  ``PyCapsule``, either the legacy ``"dltensor"`` (``DLManagedTensor``) kind
  or the DLPack >= 1.0 ``"dltensor_versioned"`` (``DLManagedTensorVersioned``)
  kind.  The capsule keeps an arbitrary ``owner`` object alive until the
  consumer calls the managed tensor's deleter or, if the capsule is never
  consumed, until the capsule itself is destroyed.

* :func:`parse_capsule` consumes a capsule from any producer (NumPy, PyTorch,
  CuPy, JAX, ourselves), marks it as used, and returns a :class:`DLPackView`
  describing the memory.  ``DLPackView.release()`` calls the producer's
  deleter exactly once (``__del__`` does it if the caller forgets).

The struct layouts follow ``dlpack.h`` v1.0 (they are unchanged in 1.1).
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    PYFUNCTYPE,
    Structure,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

try:
    from .memory import CriticalLock
except ImportError:   # this file loaded on its own (it needs only ctypes and the stdlib)
    CriticalLock = threading.RLock

__all__ = [
    "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL", "kDLVulkan", "kDLMetal",
    "kDLVPI", "kDLROCM", "kDLROCMHost", "kDLExtDev", "kDLCUDAManaged",
    "kDLOneAPI", "kDLWebGPU", "kDLHexagon", "kDLMAIA",
    "kDLInt", "kDLUInt", "kDLFloat", "kDLOpaqueHandle", "kDLBfloat",
    "kDLComplex", "kDLBool",
    "DLPACK_MAJOR_VERSION", "DLPACK_MINOR_VERSION",
    "DLPACK_FLAG_BITMASK_READ_ONLY", "DLPACK_FLAG_BITMASK_IS_COPIED",
    "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
    "DLDevice", "DLDataType", "DLTensor", "DLManagedTensor", "DLPackVersion",
    "DLManagedTensorVersioned",
    "DLPackView", "make_capsule", "parse_capsule", "live_exports",
    "pop_lost_consumer_error",
]

# --------------------------------------------------------------------------
# Enums (dlpack.h)
# --------------------------------------------------------------------------

# DLDeviceType
kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLOpenCL = 4
kDLVulkan = 7
kDLMetal = 8
kDLVPI = 9
kDLROCM = 10
kDLROCMHost = 11
kDLExtDev = 12
kDLCUDAManaged = 13
kDLOneAPI = 14
kDLWebGPU = 15
kDLHexagon = 16
kDLMAIA = 17

# DLDataTypeCode
kDLInt = 0
kDLUInt = 1
kDLFloat = 2
kDLOpaqueHandle = 3
kDLBfloat = 4
kDLComplex = 5
kDLBool = 6

DLPACK_MAJOR_VERSION = 1
DLPACK_MINOR_VERSION = 0

DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1
DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED = 1 << 2  # DLPack 1.1

# --------------------------------------------------------------------------
# Structures (dlpack.h v1.0)
# --------------------------------------------------------------------------


class DLDevice(Structure):
    # DLDeviceType is a C enum -> int32 on every ABI we care about.
    _fields_ = [
        ("device_type", c_int32),
        ("device_id", c_int32),
    ]


class DLDataType(Structure):
    _fields_ = [
        ("code", c_uint8),
        ("bits", c_uint8),
        ("lanes", c_uint16),
    ]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),  # may be NULL (compact row-major)
        ("byte_offset", c_uint64),
    ]


# void (*deleter)(struct DLManagedTensor{,Versioned} *self)
# CFUNCTYPE: calling a foreign deleter releases the GIL; the DLPack spec
# requires deleters to be callable without the GIL (they acquire it
# themselves), and our own ctypes callback re-acquires it automatically.
DLDeleter = CFUNCTYPE(None, c_void_p)


class DLManagedTensor(Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", c_void_p),
        ("deleter", DLDeleter),
    ]


class DLPackVersion(Structure):
    _fields_ = [
        ("major", c_uint32),
        ("minor", c_uint32),
    ]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", DLDeleter),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


# --------------------------------------------------------------------------
# CPython capsule API through private prototypes.
#
# We deliberately do NOT set argtypes/restype on the shared
# ``ctypes.pythonapi.PyCapsule_*`` function objects: other libraries use
# them too and would be broken by our settings.  PYFUNCTYPE keeps the GIL
# and turns a set Python error into an exception.
# --------------------------------------------------------------------------

_api = ctypes.pythonapi

_PyCapsule_New = PYFUNCTYPE(ctypes.py_object, c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_New", _api))
_PyCapsule_GetName = PYFUNCTYPE(c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", _api))
_PyCapsule_GetPointer = PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(
    ("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(
    ("PyCapsule_SetName", _api))
# Variants taking the raw PyObject* address: used inside the capsule
# destructor, where the capsule's refcount is already zero and it must not
# be wrapped into a py_object (that would incref/decref a dying object).
_PyCapsule_GetName_raw = PYFUNCTYPE(c_char_p, c_void_p)(
    ("PyCapsule_GetName", _api))
_PyCapsule_GetPointer_raw = PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", _api))
_PyErr_Occurred = PYFUNCTYPE(c_void_p)(("PyErr_Occurred", _api))
_Py_IncRef = PYFUNCTYPE(None, ctypes.py_object)(("Py_IncRef", _api))

# The capsule type itself is not exposed by name; take it from a
# throw-away capsule (pointer 1, no name, no destructor).
_PyCapsuleType = type(_PyCapsule_New(1, None, None))


def _immortal(obj):
    """Leak one reference so ``obj`` (and the C memory it owns) outlives
    module teardown: capsules may still reference our name strings and our
    destructor/deleter trampolines during interpreter shutdown."""
    _Py_IncRef(obj)
    return obj


# PyCapsule_New / PyCapsule_SetName store the char* without copying it, so
# every name we hand to CPython must live forever.
_NAME_BUFS = {
    name: _immortal(ctypes.create_string_buffer(name))
    for name in (b"dltensor", b"dltensor_versioned",
                 b"used_dltensor", b"used_dltensor_versioned")
}
_NAME_ADDR = {name: ctypes.addressof(buf) for name, buf in _NAME_BUFS.items()}

_UNUSED_NAMES = (b"dltensor", b"dltensor_versioned")
_USED_NAMES = (b"used_dltensor", b"used_dltensor_versioned")

# --------------------------------------------------------------------------
# Export side
# --------------------------------------------------------------------------

# address of the exported DLManagedTensor[Versioned] -> everything that must
# stay alive until its deleter runs: (struct, shape array, strides array,
# owner).  Entries are removed by the deleter.
_exports: dict[int, tuple] = {}
# Re-entrant (deleters may re-enter via GC) and a CriticalLock: a deleter run by gc inside an
# allocator's locked section may wait here, so the holder's own frees must not wait for it.
_exports_lock = CriticalLock()


def live_exports() -> int:
    """Number of exported managed tensors whose deleter has not run yet
    (diagnostics / tests)."""
    return len(_exports)


def _release_export(addr: int) -> None:
    with _exports_lock:
        entry = _exports.pop(addr, None)
    # The owner (and the struct memory) is dropped here, outside the lock,
    # since dropping the owner may run arbitrary finalizers.
    del entry


_lost = threading.local()


def pop_lost_consumer_error():
    """Return (and forget) the last exception that a consumer had pending
    when it dropped one of our capsules / called our deleter in this thread.

    NumPy then surfaces only ``SystemError: ... returned NULL without
    setting an exception`` (see :func:`_call_from_c`); a caller such as
    ``Tensor.numpy()`` can catch that SystemError and re-raise this instead.
    """
    err = getattr(_lost, "error", None)
    _lost.error = None
    return err


def _call_from_c(fn, arg):
    """Run ``fn(arg)`` from a ctypes callback invoked by C code.

    C code may call a capsule destructor or a DLPack deleter while a Python
    exception is pending (e.g. NumPy drops our capsule after rejecting it,
    with its error already set).  A ctypes callback cannot preserve that
    pending exception: when the callback returns CPython flags "returned a
    result with an exception set" and ctypes clears it.  The capsule
    destructor therefore runs behind csrc/capsule.c's guard, which sets the
    error aside and restores it (:func:`_destructor_addr`); where that C
    module is missing, or for a deleter called with an error set, the
    cleanup still runs on a clean error state and the consumer's exception
    is reported (ctypes prints it as "Exception ignored on calling ctypes
    callback function") rather than lost silently.
    """
    # A PYFUNCTYPE call re-raises whatever error is set after it returns:
    # this moves a pending (stale) C-level exception into Python, clearing
    # the indicator so that the cleanup below runs normally.
    try:
        _PyErr_Occurred()
        stale = None
    except BaseException as exc:
        stale = exc
    try:
        fn(arg)
    except BaseException:  # pragma: no cover - genuine failure
        if stale is None:
            raise  # printed by ctypes as an unraisable exception
    if stale is not None:
        _lost.error = stale
        raise stale


def _deleter_impl(addr):
    # Called by the consumer (possibly without the GIL: the ctypes
    # trampoline acquires it).
    if addr:
        _call_from_c(_release_export, addr)


_DELETER = _immortal(DLDeleter(_deleter_impl))

_CapsuleDestructor = CFUNCTYPE(None, c_void_p)  # void (*)(PyObject *)


def _free_unconsumed(capsule_addr):
    name = _PyCapsule_GetName_raw(capsule_addr)
    if name in _UNUSED_NAMES:
        ptr = _PyCapsule_GetPointer_raw(capsule_addr, name)
        if ptr:
            _release_export(ptr)


def _capsule_destructor_impl(capsule_addr):
    # Runs from the capsule's tp_dealloc.  If the consumer did not rename the
    # capsule, nobody took ownership of the managed tensor: free it.
    _call_from_c(_free_unconsumed, capsule_addr)


_CAPSULE_DESTRUCTOR = _immortal(_CapsuleDestructor(_capsule_destructor_impl))
_CAPSULE_DESTRUCTOR_ADDR = ctypes.cast(_CAPSULE_DESTRUCTOR, c_void_p).value
_guarded: list = []   # [(destructor address, deleter)]: csrc/capsule.c's guards, or the bare ones


def _guards() -> tuple:
    """The capsules' destructor (an address) and the managed tensors' deleter (a DLDeleter):
    the Python bodies behind csrc/capsule.c's guards, which keep a consumer's pending exception
    (NumPy refusing a dtype or device; an operation on a NumPy array or PyTorch tensor made
    from our capsule raising while that temporary is freed) from being lost; the bare ctypes
    callbacks if that C module cannot be built."""
    if not _guarded:
        addr, deleter = _CAPSULE_DESTRUCTOR_ADDR, _DELETER
        try:
            from .cpu import build
            lib = build.load("capsule", '#include "capsule.c"\n',
                             "intptr_t sx_capsule_guard(intptr_t, intptr_t, intptr_t);\n"
                             "intptr_t sx_deleter_guard(intptr_t, intptr_t, intptr_t);")
            fn = lambda f: ctypes.cast(f, c_void_p).value  # noqa: E731
            guarded = lib.sx_capsule_guard(addr, fn(_api.PyErr_Fetch), fn(_api.PyErr_Restore))
            deleter = _immortal(DLDeleter(lib.sx_deleter_guard(
                fn(_DELETER), fn(_api.PyGILState_Ensure), fn(_api.PyGILState_Release))))
            addr = guarded
        except Exception:   # pragma: no cover - no C compiler: NumPy then reports SystemError
            deleter = _DELETER
        _guarded.append((addr, deleter))
    return _guarded[0]


def _destructor_addr() -> int:
    return _guards()[0]


def _c_contiguous_strides(shape):
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(strides))


def make_capsule(ptr: int, shape, strides, dtype_code: int, bits: int,
                 device_type: int, device_id: int, owner: object,
                 versioned: bool = False, read_only: bool = False,
                 *, lanes: int = 1, is_copied: bool = False):
    """Export memory as a DLPack capsule.

    ptr         address of element 0 (storage + offset already applied); it
                goes to ``DLTensor.data`` with ``byte_offset = 0``.  (DLPack
                asks for 256-byte aligned ``data`` on CUDA; NumPy accepts any
                pointer for CPU.)
    shape       tuple of ints.
    strides     tuple of ints in *elements* (0 and negative allowed), or None
                for C-contiguous.
    dtype_code  kDLInt/kDLUInt/kDLFloat/kDLBfloat/kDLComplex/kDLBool/...
    bits, lanes DLDataType bits / lanes.
    device_type, device_id   DLDevice.
    owner       kept alive until the consumer calls the deleter or, if the
                capsule is never consumed, until the capsule is destroyed.
    versioned   True -> ``DLManagedTensorVersioned`` capsule named
                ``"dltensor_versioned"`` (version 1.0); False -> legacy
                ``DLManagedTensor`` capsule named ``"dltensor"``.
    read_only   sets DLPACK_FLAG_BITMASK_READ_ONLY (versioned only; a legacy
                capsule cannot express it, so asking for it is an error).
    is_copied   sets DLPACK_FLAG_BITMASK_IS_COPIED (versioned only).
    """
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    if strides is None:
        strides = _c_contiguous_strides(shape)
    else:
        strides = tuple(int(s) for s in strides)
    if len(strides) != ndim:
        raise ValueError(
            f"shape {shape} and strides {strides} have different lengths")
    if not (0 <= dtype_code <= 255 and 0 < bits <= 255 and 0 < lanes <= 65535):
        raise ValueError(
            f"invalid DLDataType code={dtype_code} bits={bits} lanes={lanes}")
    if not versioned and (read_only or is_copied):
        raise ValueError(
            "read_only/is_copied can only be signalled by a versioned "
            "(DLPack >= 1.0) capsule")
    if ptr is None:
        ptr = 0
    ptr = int(ptr)

    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    strides_arr = (c_int64 * max(ndim, 1))(*strides)

    if versioned:
        mt = DLManagedTensorVersioned()
        mt.version.major = DLPACK_MAJOR_VERSION
        mt.version.minor = DLPACK_MINOR_VERSION
        flags = 0
        if read_only:
            flags |= DLPACK_FLAG_BITMASK_READ_ONLY
        if is_copied:
            flags |= DLPACK_FLAG_BITMASK_IS_COPIED
        mt.flags = flags
        name = b"dltensor_versioned"
    else:
        mt = DLManagedTensor()
        name = b"dltensor"

    t = mt.dl_tensor
    t.data = ptr or None
    t.device.device_type = int(device_type)
    t.device.device_id = int(device_id)
    t.ndim = ndim
    t.dtype.code = int(dtype_code)
    t.dtype.bits = int(bits)
    t.dtype.lanes = int(lanes)
    t.shape = ctypes.cast(shape_arr, POINTER(c_int64))
    t.strides = ctypes.cast(strides_arr, POINTER(c_int64))
    t.byte_offset = 0

    addr = ctypes.addressof(mt)
    mt.manager_ctx = addr  # informational; the real context is _exports
    mt.deleter = _guards()[1]

    with _exports_lock:
        _exports[addr] = (mt, shape_arr, strides_arr, owner)
    try:
        return _PyCapsule_New(addr, _NAME_ADDR[name], _destructor_addr())
    except BaseException:
        _release_export(addr)
        raise


# --------------------------------------------------------------------------
# Import side
# --------------------------------------------------------------------------


class DLPackView:
    """Description of memory received through a DLPack capsule.

    Attributes: ptr (address of element 0, i.e. data + byte_offset), shape,
    strides (in elements; computed C-contiguous when the producer passed
    NULL), dtype_code, bits, lanes, device_type, device_id, read_only,
    is_copied, flags, versioned, version ((major, minor) or None),
    byte_offset, data (raw DLTensor.data).

    The memory stays valid until :meth:`release` is called (or the view is
    garbage collected); release() calls the producer's deleter exactly once.
    """

    __slots__ = ("ptr", "data", "byte_offset", "shape", "strides",
                 "dtype_code", "bits", "lanes", "device_type", "device_id",
                 "flags", "read_only", "is_copied", "versioned", "version",
                 "_managed", "_deleter", "_released", "_lock", "__weakref__")

    def __init__(self, **fields):
        self._released = True  # so __del__ is harmless if init fails
        self._lock = threading.RLock()
        for k, v in fields.items():
            setattr(self, k, v)
        self._released = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        """Bytes per element (bits * lanes / 8, rounded up)."""
        return (self.bits * self.lanes + 7) // 8

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def released(self) -> bool:
        return self._released

    def release(self) -> None:
        """Call the producer's deleter (once; later calls are no-ops)."""
        with self._lock:
            if self._released:
                return
            self._released = True
            managed, deleter = self._managed, self._deleter
            self._managed = self._deleter = None
        if deleter:
            deleter(managed)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __del__(self):
        try:
            self.release()
        except BaseException:  # pragma: no cover - never raise from __del__
            pass

    def __repr__(self):
        state = "released" if self._released else "live"
        return (f"DLPackView(ptr=0x{self.ptr or 0:x}, shape={self.shape}, "
                f"strides={self.strides}, dtype=({self.dtype_code}, "
                f"{self.bits}, {self.lanes}), device=({self.device_type}, "
                f"{self.device_id}), read_only={self.read_only}, {state})")


def parse_capsule(capsule) -> DLPackView:
    """Consume a ``"dltensor"`` or ``"dltensor_versioned"`` capsule.

    The capsule is renamed to ``"used_dltensor"`` /
    ``"used_dltensor_versioned"`` (so its destructor no longer frees it) only
    after all checks passed; on error it is left untouched so the producer's
    capsule destructor still cleans up.

    Raises TypeError for non-capsules, ValueError for a capsule that was
    already consumed, has an unknown name, or an unsupported major version.
    """
    if type(capsule) is not _PyCapsuleType:
        raise TypeError(
            f"expected a DLPack PyCapsule, got {type(capsule).__name__}")
    name = _PyCapsule_GetName(capsule)
    if name in _USED_NAMES:
        raise ValueError(
            f"DLPack capsule was already consumed (name {name.decode()!r}); "
            "a capsule can only be consumed once")
    if name not in _UNUSED_NAMES:
        raise ValueError(
            f"not a DLPack capsule: name is {name!r}, expected 'dltensor' or "
            "'dltensor_versioned'")
    versioned = name == b"dltensor_versioned"
    addr = _PyCapsule_GetPointer(capsule, name)
    if not addr:
        raise ValueError("DLPack capsule holds a NULL DLManagedTensor")

    if versioned:
        mt = DLManagedTensorVersioned.from_address(addr)
        version = (int(mt.version.major), int(mt.version.minor))
        if version[0] != DLPACK_MAJOR_VERSION:
            # The layout after `version` is only guaranteed for our major.
            raise ValueError(
                f"unsupported DLPack version {version[0]}.{version[1]} "
                f"(this bridge understands {DLPACK_MAJOR_VERSION}.x)")
        flags = int(mt.flags)
    else:
        mt = DLManagedTensor.from_address(addr)
        version = None
        flags = 0

    t = mt.dl_tensor
    ndim = int(t.ndim)
    if ndim < 0:
        raise ValueError(f"DLPack tensor has negative ndim {ndim}")
    if ndim and not t.shape:
        raise ValueError("DLPack tensor has ndim > 0 but a NULL shape")
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    if ndim and t.strides:
        strides = tuple(int(t.strides[i]) for i in range(ndim))
    else:
        strides = _c_contiguous_strides(shape)
    data = t.data or 0
    byte_offset = int(t.byte_offset)

    # Function pointer of the producer's deleter (NULL is allowed).
    deleter_addr = ctypes.cast(mt.deleter, c_void_p).value
    deleter = DLDeleter(deleter_addr) if deleter_addr else None

    view = DLPackView(
        ptr=data + byte_offset,
        data=data,
        byte_offset=byte_offset,
        shape=shape,
        strides=strides,
        dtype_code=int(t.dtype.code),
        bits=int(t.dtype.bits),
        lanes=int(t.dtype.lanes),
        device_type=int(t.device.device_type),
        device_id=int(t.device.device_id),
        flags=flags,
        read_only=bool(flags & DLPACK_FLAG_BITMASK_READ_ONLY),
        is_copied=bool(flags & DLPACK_FLAG_BITMASK_IS_COPIED),
        versioned=versioned,
        version=version,
        _managed=addr,
        _deleter=deleter,
    )
    # Take ownership: from now on the view (not the capsule) frees it.
    used = b"used_dltensor_versioned" if versioned else b"used_dltensor"
    if _PyCapsule_SetName(capsule, _NAME_ADDR[used]) != 0:  # pragma: no cover
        view._released = True  # do not double free; capsule still owns it
        raise RuntimeError("PyCapsule_SetName failed")
    return view
