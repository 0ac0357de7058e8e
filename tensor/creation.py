"""Creating tensors: from data, filled, ranges, identity and triangles.

>>> import tensor as T
>>> T.tensor([[1, 2], [3, 4]]).dtype, T.zeros((2, 3)).dtype, T.arange(0, 1, 0.25).tolist()
(tensor.int64, tensor.float64, [0.0, 0.25, 0.5, 0.75])
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import dtypes as dt
from ._tensor import Storage, Tensor
from .aliasing import check_writable
from .cpu import kernels as K
from .device import CPU
from .device import device as parse_device
from .elementwise import _Scalar, copy_into, empty_tensor, run


def _shape(shape, op: str) -> tuple:
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}: negative dimensions are not allowed: {shape}")
    return shape


def _shape_args(args, op):
    return _shape(args[0] if len(args) == 1 else args, op)


def _dtype_or(d, default):
    return dt.dtype(d) if d is not None else default


def _grad(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def empty(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor."""
    return _grad(empty_tensor(_shape_args(shape, "empty"), _dtype_or(dtype, dt.get_default_dtype()),
                              parse_device(device)), requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    d = _dtype_or(dtype, None)
    if d is None:
        d = dt.result_type(fill_value) if not isinstance(fill_value, Tensor) else fill_value.dtype
    out = empty_tensor(_shape(shape, "full"), d, parse_device(device))
    fill_(out, fill_value)
    return _grad(out, requires_grad)


def fill_(t: Tensor, value) -> Tensor:
    check_writable(t, "fill_")
    if isinstance(value, Tensor):
        copy_into(t, value, "fill_")
        return t
    if isinstance(value, np.generic):
        value = value.item()
    if t._dtype.kind in "iu" and isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"fill: cannot convert {value} to {t._dtype.name}")
        value = int(value)
    run(t._dtype, f"cast_{t._dtype.sfx}_{t._dtype.sfx}", t, [_Scalar(value, t._dtype)])
    t._storage.version += 1
    return t


def zeros(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(_shape_args(shape, "zeros"), 0, _dtype_or(dtype, dt.get_default_dtype()), device,
                requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(_shape_args(shape, "ones"), 1, _dtype_or(dtype, dt.get_default_dtype()), device,
                requires_grad)


def empty_like(x: Tensor, dtype=None, device=None) -> Tensor:
    return empty_tensor(x.shape, _dtype_or(dtype, x.dtype), parse_device(device) if device else x.device)


def zeros_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(x.shape, 0, _dtype_or(dtype, x.dtype), device or x.device, requires_grad)


def ones_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(x.shape, 1, _dtype_or(dtype, x.dtype), device or x.device, requires_grad)


def full_like(x: Tensor, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(x.shape, fill_value, _dtype_or(dtype, x.dtype), device or x.device, requires_grad)


# ---------------------------------------------------------------- from data

def _unshareable(a: np.ndarray) -> str | None:
    """Why a tensor cannot view a's memory as it is, or None when it can."""
    isz = a.itemsize
    if not a.dtype.isnative:
        return (f"its dtype {a.dtype.str!r} is not in this machine's byte order; convert it first "
                f"with a.astype(a.dtype.newbyteorder('='))")
    if a.size and a.ctypes.data % isz:
        return (f"its data address is not a multiple of its itemsize {isz} (a misaligned view); "
                "copy it first with a.copy()")
    if a.size and any(s % isz for n, s in zip(a.shape, a.strides) if n > 1):
        return (f"its strides {a.strides} (bytes) are not multiples of its itemsize {isz}; copy it "
                "first with a.copy()")
    return None


def _wrap_numpy(a: np.ndarray) -> Tensor:
    """Zero-copy view of a NumPy array's memory (the storage keeps the array alive; the caller
    checked _unshareable). A read-only array gives a read-only tensor."""
    d = dt.dtype(a.dtype)
    isz = a.itemsize
    # a size-1 axis may carry any stride in NumPy (never stepped along: 0 serves as well)
    strides = tuple(s // isz if s % isz == 0 else 0 for s in a.strides)
    lo = sum((n - 1) * s for n, s in zip(a.shape, strides) if s < 0) if a.size else 0
    hi = sum((n - 1) * s for n, s in zip(a.shape, strides) if s > 0) if a.size else 0
    st = Storage(a.ctypes.data + lo * isz, (hi - lo + 1) * isz if a.size else 0, CPU, owner=a,
                 readonly=not a.flags.writeable)
    return Tensor._make(st, tuple(a.shape), strides, -lo, d)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (writes are seen by both). It never copies:
    a read-only array gives a read-only tensor, and an array whose memory a tensor cannot view
    (non-native byte order, misaligned data, strides that are not multiples of the itemsize)
    raises ValueError, as PyTorch's.

    >>> import numpy as np, tensor as T
    >>> a = np.arange(3.0); a.flags.writeable = False
    >>> t = T.from_numpy(a); t.flags.writeable, T.from_numpy(a).data_ptr() == a.ctypes.data
    (False, True)
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    dt.dtype(a.dtype)  # an unsupported dtype is the first thing to report (TypeError)
    why = _unshareable(a)
    if why is not None:
        raise ValueError(f"from_numpy: cannot share the memory of this {a.dtype} array of shape "
                         f"{a.shape}: {why}")
    return _wrap_numpy(a)


def _numpy_tensor(a: np.ndarray, copy: bool | None) -> Tensor:
    """asarray's view of a NumPy array: shared when a tensor can view it (read-only arrays
    stay read-only), else a native, aligned copy (an error with copy=False)."""
    why = _unshareable(a)
    if why is not None:
        if copy is False:
            raise ValueError(f"asarray: copy=False but this {a.dtype} array cannot be shared: {why}")
        a = np.array(a, dtype=a.dtype.newbyteorder("="), copy=True)
    return _wrap_numpy(a)


def _np_from_data(data, d):
    if d is dt.bfloat16:
        return np.asarray(data, dtype=np.float32)
    try:
        return np.asarray(data, dtype=None if d is None else d.np)
    except (ValueError, TypeError) as e:
        raise TypeError(f"tensor: cannot convert {type(data).__name__} to a tensor: {e}") from None


def asarray(obj, dtype=None, copy: bool | None = None, device=None) -> Tensor:
    """NumPy's asarray: no copy when obj already is a tensor (or array) of that dtype."""
    d = _dtype_or(dtype, None)
    dev = parse_device(device) if device is not None else None
    if not isinstance(obj, Tensor):
        target = dev if dev is not None else parse_device(None)
        if target is not CPU:   # build on the host, then one copy to the device
            return asarray(asarray(obj, dtype, copy, CPU), device=target)
    if isinstance(obj, Tensor):
        if dev is not None and dev != obj.device:
            if copy is False:
                raise ValueError("asarray: copy=False but the tensor is on another device")
            return obj.to(dev) if d is None else obj.to(dev).astype(d)
        if (d is None or d is obj.dtype) and not copy:
            return obj
        if copy is False:
            raise ValueError(f"asarray: copy=False but converting {obj.dtype.name} to {d.name} copies")
        return obj.astype(d or obj.dtype)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        from .interop import from_dlpack
        return asarray(from_dlpack(obj), dtype=d, copy=copy)
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            obj = _np_from_data(obj.tolist(), d)
        try:
            base_dt = dt.dtype(obj.dtype)
        except TypeError:
            base_dt = None
        if base_dt is None:  # e.g. float128, uint64: let NumPy convert to the closest we have
            obj = _np_from_data(obj, d or dt.result_type(obj.dtype.kind == "f" and 1.0 or 1))
        t = _numpy_tensor(obj, copy)
        if copy:
            t = t.copy() if d is None or d is t.dtype else t.astype(d)
        elif d is not None and d is not t.dtype:
            if copy is False:
                raise ValueError("asarray: copy=False but the dtype conversion copies")
            t = t.astype(d)
        return t
    if copy is False:
        raise ValueError(f"asarray: copy=False but converting a {type(obj).__name__} copies")
    return tensor(obj, dtype=d)


def array(obj, dtype=None, copy: bool = True) -> Tensor:
    """NumPy's array: copies by default."""
    return asarray(obj, dtype=dtype, copy=copy)


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of data (nested lists, scalars, arrays or tensors)."""
    d = _dtype_or(dtype, None)
    if isinstance(data, Tensor):
        out = data.astype(d or data.dtype)
    else:
        a = data if isinstance(data, np.ndarray) else _np_from_data(data, d)
        if a.dtype == object:
            raise TypeError(f"tensor: cannot build a tensor from ragged or mixed data: {data!r}")
        if a.dtype.kind == "f" and d is None and a.dtype == np.float64 and not isinstance(data, np.ndarray):
            d = dt.get_default_dtype()
        src = asarray(a, device=CPU)
        out = empty_tensor(src.shape, d or src.dtype)
        copy_into(out, src)
    dev = parse_device(device)
    if dev != out.device:
        out = out.to(dev)
    if requires_grad:
        out.requires_grad_(True)
    return out


# ---------------------------------------------------------------- ranges

def _iota(n: int, d: dt.DType, start, step, device=None) -> Tensor:
    out = empty_tensor((n,), d, device)
    if n:
        if out.device.type == "cuda":
            from .cuda import misc as CM
            CM.iota(out, n, start, step)
        elif d.kind == "f":
            K.kernel("misc", d, f"iota_{d.sfx}")(n, out.data_ptr(), float(start), float(step))
        else:
            K.kernel("misc", d, f"iota_{d.sfx}")(n, out.data_ptr(), int(start), int(step))
    return out


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    """Values from start (inclusive) to stop (exclusive) by step, as NumPy's arange."""
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if isinstance(v, Tensor) or not isinstance(v, int | float | np.generic):
            raise TypeError(f"arange: start, stop and step must be Python numbers, got {v!r}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    d = _dtype_or(dtype, None) or dt.result_type(start, stop, step)
    if d is dt.bool_ and dtype is None:
        d = dt.int64
    n = max(0, math.ceil((stop - start) / step))
    compute = dt.float64 if d.kind == "f" or any(isinstance(v, float) for v in (start, step)) else dt.int64
    t = _iota(n, compute, start, step, parse_device(device))
    return t if compute is d else t.astype(d)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, device=None) -> Tensor:
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    from .elementwise import binary
    # NumPy's arange(num) * step + start: two roundings
    t = binary("add", binary("multiply", _iota(num, dt.float64, 0, 1, parse_device(device)), step),
               float(start))
    if endpoint and num > 1:
        t[num - 1] = stop
    d = _dtype_or(dtype, dt.get_default_dtype())
    if d.kind in "iu":  # NumPy 2 floors toward -inf before an integer cast (a cast truncates)
        from .elementwise import unary
        unary("floor", t, out=t)
    return t if d is dt.float64 else t.astype(d)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, device=None) -> Tensor:
    out = zeros((N, N if M is None else M), dtype=dtype, device=device)
    fill_(out.diagonal(k), 1)
    return out


def _tri_mask(shape, k, lower: bool, device=None) -> Tensor:
    n, m = shape[-2], shape[-1]
    rows = arange(n, device=device).reshape(n, 1)
    cols = arange(m, device=device).reshape(1, m)
    diff = cols - rows
    return diff <= k if lower else diff >= k


def tril(x: Tensor, k: int = 0) -> Tensor:
    """Lower triangle of the last two axes (elements above the k-th diagonal zeroed)."""
    from .elementwise import where
    if x.ndim < 2:
        raise ValueError(f"tril: needs a tensor of rank >= 2, got shape {x.shape}")
    return where(_tri_mask(x.shape, k, True, x.device), x, zeros_like(x, dtype=x.dtype))


def triu(x: Tensor, k: int = 0) -> Tensor:
    """Upper triangle of the last two axes (elements below the k-th diagonal zeroed)."""
    from .elementwise import where
    if x.ndim < 2:
        raise ValueError(f"triu: needs a tensor of rank >= 2, got shape {x.shape}")
    return where(_tri_mask(x.shape, k, False, x.device), x, zeros_like(x, dtype=x.dtype))


def _misc_source(d: dt.DType):
    ctype = d.ctype
    if d.kind == "f":
        # one rounding (an explicit fma: the same on every compiler and on the GPU)
        body = f"o[i] = ST_{d.sfx}(fma((double)i, step, start));"
        sig = f"void iota_{d.sfx}(int64_t n, intptr_t out, double start, double step)"
    else:
        body = f"o[i] = ({ctype})(start + i * step);"
        sig = f"void iota_{d.sfx}(int64_t n, intptr_t out, int64_t start, int64_t step)"
    src = f"""#include "common.h"
{sig} {{
    T_{d.sfx} *o = (T_{d.sfx} *)out;
    for (int64_t i = 0; i < n; i++) {body}
}}
"""
    return src, sig + ";"


K.register_family("misc", _misc_source)
