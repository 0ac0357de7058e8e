"""Exchange with NumPy, Python and DLPack: numpy(), tolist(), item(), from_dlpack, repr.

>>> import numpy as np, tensor as T
>>> a = np.arange(4.0)
>>> t = T.from_dlpack(a)          # zero-copy
>>> t[0] = 7; float(a[0])
7.0
"""
from __future__ import annotations

import numpy as np

from . import _hook
from . import dtypes as dt
from ._tensor import Tensor
from .backend import backend_for
from .device import CPU

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
    if t.device.type != "cpu" and copy is False:
        raise ValueError("__array__: copy=False but the tensor is not on the CPU")
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


def item(t: Tensor):
    if t.numel() != 1:
        raise ValueError(f"item: only one-element tensors can be converted to Python scalars, "
                         f"got shape {t.shape}")
    if t.dtype is dt.bfloat16:
        t = t.astype(dt.float32)
    return to_numpy(t).reshape(()).item()


def format_tensor(t: Tensor) -> str:
    v = t.astype(dt.float32) if t.dtype is dt.bfloat16 else t
    body = np.array2string(to_numpy(v), separator=", ", prefix="tensor(", threshold=1000)
    if t.numel() == 0 and t.shape != (0,):   # "[]" alone hides the shape (NumPy prints it too)
        body += f", shape={t.shape}"
    return f"tensor({body}, dtype={t.dtype.name}, device={t.device})"


def str_tensor(t: Tensor) -> str:
    v = t.astype(dt.float32) if t.dtype is dt.bfloat16 else t
    return str(to_numpy(v))


# ---------------------------------------------------------------- DLPack

_DL_CODE = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
_DEVICE_TYPE = {"cpu": 1, "cuda": 2}


def dlpack(t: Tensor, stream=None, max_version=None, dl_device=None, copy=None):
    from ._dlpack import make_capsule
    if _hook.capture is not None:
        _hook.capture.host_read("__dlpack__ (another library reading the memory)")
    if t.device is not CPU:
        if dl_device is not None and tuple(dl_device)[0] == 1:   # the consumer wants host memory
            if copy is False:
                raise BufferError(f"__dlpack__: the tensor is on {t.device} and copy=False")
            from .elementwise import to_device
            t, copy = to_device(t, CPU), False
        else:   # queued work must be done before a consumer on another stream reads it
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
                        versioned=versioned, read_only=read_only)


def dlpack_device(t: Tensor):
    return (_DEVICE_TYPE[t.device.type], t.device.index or 0)
