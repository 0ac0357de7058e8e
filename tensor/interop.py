"""Exchange with NumPy, Python and DLPack: numpy(), tolist(), item(), from_dlpack, repr.

>>> import numpy as np, tensor as T
>>> a = np.arange(4.0)
>>> t = T.from_dlpack(a)          # zero-copy
>>> t[0] = 7; float(a[0])
7.0
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import _hook
from . import dtypes as dt
from ._tensor import Tensor
from .backend import backend_for
from .device import CPU
from .printopts import array2string_kwargs, numpy_context

try:  # NumPy has no bfloat16; ml_dtypes (used by JAX) adds one when installed
    import ml_dtypes as _ml
    _BF16_NP = np.dtype(_ml.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BF16_NP = None


class _Holder:
    """Keeps the storage alive for as long as a NumPy array views it."""
    __slots__ = ("__array_interface__", "_storage")

    def __init__(self, t: Tensor, npdt: np.dtype):
        isz = t.itemsize
        self._storage = t._storage
        self.__array_interface__ = {
            "shape": t.shape, "typestr": npdt.str, "data": (t.data_ptr(), not t.flags.writeable),
            "strides": tuple(s * isz for s in t.strides), "version": 3}


def _np_dtype(t: Tensor, op: str) -> np.dtype:
    if t.dtype is dt.bfloat16:
        if _BF16_NP is None:
            raise TypeError(f"{op}: NumPy has no bfloat16; convert first with .astype('float32') "
                            "(or install ml_dtypes)")
        return _BF16_NP
    return t.dtype.np


def to_numpy(t: Tensor) -> np.ndarray:
    """A NumPy array viewing the tensor's memory (CPU); writes are seen by both. It is
    read-only when the tensor is (t.flags.writeable)."""
    if _hook.capture is not None:
        _hook.capture.host_read("reading a tensor on the host (item(), tolist(), numpy(), bool(), print)")
    if t.device.type != "cpu":
        from .elementwise import to_device
        t = to_device(t, CPU)
    return np.asarray(_Holder(t, _np_dtype(t, "numpy")))


def array_protocol(t: Tensor, dtype=None, copy=None):
    """NumPy's __array__: a view of the tensor's memory where it can be one (CPU, a dtype NumPy
    has, no conversion asked); copy=False raises where it cannot (NumPy 2's rule). A bfloat16
    tensor asked for a NumPy dtype converts through float32 (exact) when NumPy has no bfloat16."""
    if t.device.type != "cpu" and copy is False:
        raise ValueError("__array__: copy=False but the tensor is not on the CPU")
    if t.dtype is dt.bfloat16 and _BF16_NP is None and dtype is not None:
        if copy is False:
            raise ValueError("__array__: copy=False but a dtype conversion was asked for")
        return to_numpy(t.astype(dt.float32)).astype(dtype)
    a = to_numpy(t)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError("__array__: copy=False but a dtype conversion was asked for")
        return a.astype(dtype)
    return a.copy() if copy else a


def tolist(t: Tensor):
    if t.dtype is dt.bfloat16:
        t = t.astype(dt.float32)
    return to_numpy(t).tolist()


# the element types a one-element read takes straight from host memory (as NumPy's item()
# gives them: float, int, bool); float16, bfloat16 and complex go through NumPy
_CTYPES = {dt.float32: ctypes.c_float, dt.float64: ctypes.c_double, dt.bool_: ctypes.c_bool,
           dt.int8: ctypes.c_int8, dt.int16: ctypes.c_int16, dt.int32: ctypes.c_int32,
           dt.int64: ctypes.c_int64, dt.uint8: ctypes.c_uint8, dt.uint16: ctypes.c_uint16,
           dt.uint32: ctypes.c_uint32, dt.uint64: ctypes.c_uint64}


def item(t: Tensor):
    ct = _CTYPES.get(t._dtype)
    if ct is not None and _hook.capture is None and t._storage.device.type == "cpu":
        for n in t._shape:
            if n != 1:
                break
        else:   # one element in host memory: read it (no NumPy view built and dropped)
            return ct.from_address(t._storage.ptr + t._offset * t._dtype.itemsize).value
    if t.numel() != 1:
        raise ValueError(f"item: only one-element tensors can be converted to Python scalars, "
                         f"got shape {t.shape}")
    if t.dtype is dt.bfloat16:
        t = t.astype(dt.float32)
    return to_numpy(t).reshape(()).item()


def format_tensor(t: Tensor) -> str:
    v = t.astype(dt.float32) if t.dtype is dt.bfloat16 else t
    with numpy_context():
        body = np.array2string(to_numpy(v), separator=", ", prefix="tensor(",
                               **array2string_kwargs(threshold=1000))
    return repr_of(t, body)


def repr_of(t: Tensor, body: str) -> str:
    """tensor(body, dtype=..., device=...), with the shape of an empty tensor ("[]" alone
    hides it; NumPy prints it too) and autograd's state as PyTorch shows it: the node that made
    t, or that t is a leaf that requires grad."""
    if t.numel() == 0 and t.shape != (0,):
        body += f", shape={t.shape}"
    grad = (f", grad_fn=<{t.grad_fn.name()}>" if t.grad_fn is not None else
            ", requires_grad=True" if t.requires_grad else "")
    return f"tensor({body}, dtype={t.dtype.name}, device={t.device}{grad})"


def str_tensor(t: Tensor) -> str:
    v = t.astype(dt.float32) if t.dtype is dt.bfloat16 else t
    a = to_numpy(v)
    kw = array2string_kwargs()
    with numpy_context():
        return np.array2string(a, **kw) if kw and a.ndim else str(a)


# ---------------------------------------------------------------- DLPack

_DL_CODE = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
_DEVICE_TYPE = {"cpu": 1, "cuda": 2}


def _dl_target(t: Tensor, dl_device, copy):
    """The tensor a consumer's dl_device = (DLPack device type, index) asks for: t, or t copied
    there (BufferError when copy=False forbids it or the device is none of ours)."""
    from .device import device as parse_device
    from .elementwise import to_device
    try:
        kind, index = (int(v) for v in dl_device)
        want = {1: "cpu", 2: f"cuda:{index}"}[kind]
        if kind == 1 and index != 0:
            raise KeyError(kind)
        want = parse_device(want)
    except (TypeError, ValueError, KeyError, RuntimeError) as e:
        raise BufferError(f"__dlpack__: cannot export to dl_device={tuple(dl_device)!r}: "
                          f"{e if not isinstance(e, KeyError) else 'not a device of this library'} "
                          "(it exports to DLPack device types 1, the CPU with index 0, and 2, "
                          "CUDA)") from None
    if want == t.device:
        return t, copy
    if copy is False:
        raise BufferError(f"__dlpack__: the tensor is on {t.device}, dl_device asks for {want}, and "
                          "copy=False forbids the copy")
    return to_device(t, want), False


def dlpack(t: Tensor, stream=None, max_version=None, dl_device=None, copy=None):
    from ._dlpack import make_capsule
    if _hook.capture is not None:
        _hook.capture.host_read("__dlpack__ (another library reading the memory)")
    moved = False
    if dl_device is not None:
        t2, copy = _dl_target(t, dl_device, copy)
        moved, t = t2 is not t, t2
    if t.device is not CPU:   # queued work must be done before a consumer on another stream reads it
        backend_for(t.device).synchronize(t.device)
    if copy:
        t = t.copy()
    code = 4 if t.dtype is dt.bfloat16 else _DL_CODE[t.dtype.kind]
    versioned = max_version is not None and tuple(max_version) >= (1, 0)
    read_only = not t.flags.writeable
    if read_only and not versioned:  # NumPy's rule: a legacy capsule cannot say read-only
        raise BufferError("__dlpack__: cannot export a read-only tensor since signalling read-only "
                          "needs DLPack >= 1.0 (max_version=(1, 0)); or pass copy=True")
    dev = t.device
    return make_capsule(t.data_ptr(), t.shape, t.strides, code, t.dtype.bits,
                        _DEVICE_TYPE[dev.type], dev.index or 0, owner=t._storage,
                        versioned=versioned, read_only=read_only,
                        is_copied=versioned and bool(copy or moved))


def cuda_array_interface(t: Tensor) -> dict:
    """`__cuda_array_interface__` (version 3) of a CUDA tensor, for Numba, CuPy and others: the
    tensor's own memory (no copy), after the device's queued work is done (so "stream" is None:
    no synchronization left to the consumer). A tensor elsewhere has no such attribute
    (AttributeError, so hasattr() is False), as PyTorch's CPU tensors."""
    if t.device.type != "cuda":
        raise AttributeError(f"__cuda_array_interface__: the tensor is on {t.device}, not a CUDA "
                             "device (numpy() or __array__ give host memory)")
    if t.dtype is dt.bfloat16:
        raise TypeError("__cuda_array_interface__: bfloat16 has no typestr in the CUDA array "
                        "interface; convert first (.astype('float32')) or use __dlpack__")
    if _hook.capture is not None:
        _hook.capture.host_read("__cuda_array_interface__ (another library reading the memory)")
    backend_for(t.device).synchronize(t.device)
    isz = t.itemsize
    return {"shape": t.shape, "typestr": t.dtype.np.str,
            "data": (t.data_ptr() if t.numel() else 0, not t.flags.writeable),
            "strides": None if t.is_contiguous() else tuple(s * isz for s in t.strides),
            "version": 3, "stream": None}


def dlpack_device(t: Tensor):
    return (_DEVICE_TYPE[t.device.type], t.device.index or 0)
