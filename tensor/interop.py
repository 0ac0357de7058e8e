"""Exchange with NumPy, Python and DLPack: numpy(), tolist(), item(), from_dlpack, repr.

>>> import numpy as np, tensor as T
>>> a = np.arange(4.0)
>>> t = T.from_dlpack(a)          # zero-copy
>>> t[0] = 7; float(a[0])
7.0
"""
from __future__ import annotations

import numpy as np

from . import dtypes as dt
from ._tensor import Storage, Tensor
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
    if t.device.type != "cpu":
        from .transfer import to_device
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
    return f"tensor({body}, dtype={t.dtype.name}, device={t.device})"


def str_tensor(t: Tensor) -> str:
    v = t.astype(dt.float32) if t.dtype is dt.bfloat16 else t
    return str(to_numpy(v))


# ---------------------------------------------------------------- DLPack

_DL_CODE = {"b": 6, "i": 0, "u": 1, "f": 2}
_DEVICE_TYPE = {"cpu": 1, "cuda": 2}


def dlpack(t: Tensor, stream=None, max_version=None, dl_device=None, copy=None):
    from ._dlpack import make_capsule
    if t.device is not CPU:
        if dl_device is not None and tuple(dl_device)[0] == 1:   # the consumer wants host memory
            if copy is False:
                raise BufferError(f"__dlpack__: the tensor is on {t.device} and copy=False")
            from .transfer import to_device
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


_FROM_DL = {(6, 8): dt.bool_, (0, 8): dt.int8, (1, 8): dt.uint8, (0, 16): dt.int16,
            (0, 32): dt.int32, (0, 64): dt.int64, (2, 16): dt.float16, (4, 16): dt.bfloat16,
            (2, 32): dt.float32, (2, 64): dt.float64}


def from_dlpack(obj) -> Tensor:
    """A tensor sharing memory with any DLPack producer (NumPy arrays, other libraries)."""
    from ._dlpack import parse_capsule
    if isinstance(obj, Tensor):
        return obj
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(obj).__name__} does not implement __dlpack__")
    dev_type, dev_id = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
    if dev_type not in (1, 2):
        raise ValueError(f"from_dlpack: DLPack device type {dev_type} is not supported here "
                         "(CPU and CUDA only)")
    kw = {"stream": 1} if dev_type == 2 else {}  # CUDA: order the producer's work before ours
    try:
        cap = obj.__dlpack__(max_version=(1, 0), **kw)
    except TypeError:
        cap = obj.__dlpack__(**kw)
    v = parse_capsule(cap)
    d = _FROM_DL.get((v.dtype_code, v.bits))
    if d is None or v.lanes != 1:
        v.release()
        raise TypeError(f"from_dlpack: unsupported DLPack dtype (code {v.dtype_code}, "
                        f"{v.bits} bits, {v.lanes} lanes)")
    shape, strides = tuple(v.shape), tuple(v.strides)
    isz = d.itemsize
    n = 1
    for s in shape:
        n *= s
    lo = sum((m - 1) * s for m, s in zip(shape, strides) if s < 0) if n else 0
    hi = sum((m - 1) * s for m, s in zip(shape, strides) if s > 0) if n else 0
    device = CPU
    if dev_type == 2:
        from .device import device as parse_device
        device = parse_device(f"cuda:{dev_id}")
    st = Storage(v.ptr + lo * isz, (hi - lo + 1) * isz if n else 0, device, owner=v,
                 release=v.release, readonly=v.read_only)
    return Tensor._make(st, shape, strides, -lo, d)
