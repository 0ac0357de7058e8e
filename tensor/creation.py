"""Creating tensors: empty and filled, ranges, identity and triangles (from data: convert.py).

>>> import tensor as T
>>> T.tensor([[1, 2], [3, 4]]).dtype, T.zeros((2, 3)).dtype, T.arange(0, 1, 0.25).tolist()
(tensor.int64, tensor.float64, [0.0, 0.25, 0.5, 0.75])
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor
from .aliasing import check_writable
from .backend import backend_for
from .convert import _dtype_or, _fill_scalar, asarray
from .device import CPU
from .device import device as parse_device
from .elementwise import _scalar_operand, copy_into, empty_tensor, run, unwritten
from .pinned import empty_pinned, pin_memory
from .views import int_sizes


def _shape(shape, op: str) -> tuple:
    if type(shape) is tuple:   # the common case, plain non-negative ints: itself
        for s in shape:
            if type(s) is not int or s < 0:
                break
        else:
            return shape
    if isinstance(shape, np.ndarray) and shape.ndim == 1:   # NumPy's np.zeros(np.array([2, 3]))
        shape = tuple(shape)
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (shape,)
    shape = int_sizes(shape, op, "an int or a sequence of ints")
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}: negative dimensions are not allowed: {shape}")
    return shape


def _shape_args(shape, more, op, size=None):
    """The shape of empty/zeros/ones: a tuple (the standard's `shape`, also by keyword, or
    PyTorch's `size=`) or separate ints (PyTorch's: shape is then the first, more the rest);
    none: 0-d. None is not a shape (NumPy and PyTorch refuse it too)."""
    if size is not None:
        if more or (shape != () and shape is not None):
            raise TypeError(f"{op}: give the shape once (positionally, shape= or size=)")
        shape = size
    if shape is None:
        raise TypeError(f"{op}: shape must be an int or a sequence of ints, got None (() is 0-d)")
    return _shape((shape,) + more if more else shape, op)


def _grad(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def _new(shape: tuple, d: dt.DType, device, op: str, pin: bool) -> Tensor:
    """A new tensor of a factory: in pinned host memory when pin (PyTorch's pin_memory=True,
    tensor/pinned.py: CPU only; RuntimeError without a CUDA device)."""
    dev = parse_device(device)
    if not pin:
        return empty_tensor(shape, d, dev, op)
    _pin_on_cpu(dev, op)
    return empty_pinned(shape, d, op)


def _pin_on_cpu(dev, op: str) -> None:
    if dev != CPU:
        raise RuntimeError(f"{op}: pin_memory=True needs a CPU tensor (pinned memory is host "
                           f"memory), got device {dev}")


def _pinned(t: Tensor, pin: bool, op: str) -> Tensor:
    """t, copied into pinned memory when pin (the factories that fill by computing)."""
    if not pin:
        return t
    _pin_on_cpu(t.device, op)
    return pin_memory(t)


def empty(shape=(), *more, size=None, dtype=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor (pin_memory=True: in pinned host memory, tensor/pinned.py)."""
    return _grad(_new(_shape_args(shape, more, "empty", size), _dtype_or(dtype, dt.get_default_dtype()),
                      device, "empty", pin_memory), requires_grad)


def full(shape=None, fill_value=None, dtype=None, device=None, requires_grad: bool = False, *,
         pin_memory: bool = False, size=None) -> Tensor:
    if size is not None:   # PyTorch's name
        if shape is not None:
            raise TypeError("full: give the shape once (shape= or size=)")
        shape = size
    if shape is None or fill_value is None:
        raise TypeError("full: needs a shape (or size=) and a fill_value")
    return _full(_shape(shape, "full"), fill_value, dtype, device, requires_grad, "full", pin_memory)


def _full(shape: tuple, fill_value, dtype, device, requires_grad: bool, op: str,
          pin: bool = False) -> Tensor:
    d = _dtype_or(dtype, None)
    if not isinstance(fill_value, Tensor) and type(fill_value) not in (int, float, bool):
        fill_value = _fill_scalar(fill_value, op)
    if d is None:
        d = dt.result_type(fill_value) if not isinstance(fill_value, Tensor) else fill_value.dtype
        if d is dt.int64 and type(fill_value) is int and 2**63 <= fill_value < 2**64:
            d = dt.uint64   # as np.full: NumPy reads such an int as uint64
    out = _new(shape, d, device, op, pin)
    tv = type(fill_value)
    if tv is int or tv is bool or tv is float and d.kind not in "iu":
        # fill_into's work for a plain Python number and a fresh (writable) tensor
        run(d, f"cast_{d.sfx}_{d.sfx}", out, [_scalar_operand(fill_value, d)])
    else:
        fill_(out, fill_value)
    return _grad(unwritten(out), requires_grad)


def fill_(t: Tensor, value) -> Tensor:
    return fill_into(t, value, "fill_")


def fill_into(t: Tensor, value, op: str) -> Tensor:
    """t filled with value in place (fill_, zero_: op names the caller in errors)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor to fill in place, got {type(t).__name__}")
    check_writable(t, op)
    if isinstance(value, Tensor):
        copy_into(t, value, op)
        return t
    if isinstance(value, np.generic):
        value = value.item()
    if t._dtype.kind in "iu" and isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{op}: cannot convert {value} to {t._dtype.name}")
        value = int(value)
    run(t._dtype, f"cast_{t._dtype.sfx}_{t._dtype.sfx}", t, [_scalar_operand(value, t._dtype)])
    t._storage.version += 1
    return t


def zeros(shape=(), *more, size=None, dtype=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    return _full(_shape_args(shape, more, "zeros", size), 0, _dtype_or(dtype, dt.get_default_dtype()), device,
                 requires_grad, "zeros", pin_memory)


def ones(shape=(), *more, size=None, dtype=None, device=None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    return _full(_shape_args(shape, more, "ones", size), 1, _dtype_or(dtype, dt.get_default_dtype()), device,
                 requires_grad, "ones", pin_memory)


def _arr(x) -> Tensor:
    """A tensor from an array-like (lists, NumPy arrays: NumPy's *_like and tril take them)."""
    return x if isinstance(x, Tensor) else asarray(x)


def _like_shape(x: Tensor, shape, op: str) -> tuple:
    """x's shape, or NumPy's shape= override (an int or a sequence of ints)."""
    return x.shape if shape is None else _shape(shape, op)


def empty_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False, *, shape=None,
               pin_memory: bool = False) -> Tensor:
    x = _arr(x)
    dev = device if device else x.device
    shape = _like_shape(x, shape, "empty_like")
    return _grad(_new(shape, _dtype_or(dtype, x.dtype), dev, "empty_like", pin_memory), requires_grad)


def zeros_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False, *, shape=None,
               pin_memory: bool = False) -> Tensor:
    x = _arr(x)
    shape = _like_shape(x, shape, "zeros_like")
    return _full(shape, 0, _dtype_or(dtype, x.dtype), device or x.device, requires_grad, "zeros_like",
                 pin_memory)


def ones_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False, *, shape=None,
              pin_memory: bool = False) -> Tensor:
    x = _arr(x)
    shape = _like_shape(x, shape, "ones_like")
    return _full(shape, 1, _dtype_or(dtype, x.dtype), device or x.device, requires_grad, "ones_like",
                 pin_memory)


def full_like(x: Tensor, fill_value, dtype=None, device=None, requires_grad: bool = False, *,
              shape=None, pin_memory: bool = False) -> Tensor:
    x = _arr(x)
    return _full(_like_shape(x, shape, "full_like"), fill_value, _dtype_or(dtype, x.dtype),
                 device or x.device, requires_grad, "full_like", pin_memory)


# ---------------------------------------------------------------- ranges

def _iota(n: int, d: dt.DType, start, step, device=None, op: str = "arange") -> Tensor:
    out = empty_tensor((n,), d, device, op)
    if n:
        backend_for(out.device).iota(out, n, start, step)
    return out


def arange(start, stop=None, step=1, dtype=None, device=None, requires_grad: bool = False, *,
           pin_memory: bool = False) -> Tensor:
    """Values from start (inclusive) to stop (exclusive) by step, as NumPy's arange (bool: at
    most 2 values, as NumPy; a longer bool range has no meaning).

    >>> import tensor as T
    >>> T.arange(2**63, 2**63 + 3, dtype=T.uint64).tolist()
    [9223372036854775808, 9223372036854775809, 9223372036854775810]
    """
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
    if d is dt.bool_ and n > 2:
        raise TypeError(f"arange: a bool range has at most 2 values (NumPy's rule); start={start}, "
                        f"stop={stop}, step={step} give {n}")
    return _grad(_pinned(_arange(start, step, n, d, dtype is None, parse_device(device)), pin_memory,
                         "arange"), requires_grad)


def _arange(start, step, n: int, d: dt.DType, inferred: bool, device) -> Tensor:
    ints = not any(isinstance(v, float | np.floating) for v in (start, step))
    if ints and d.kind in "iu":
        return _int_range(d, int(start), int(step), n, inferred, device)
    if d.kind in "iu":   # NumPy's: the first two values cast (toward 0), then their difference as the step
        first = int(start)
        return _int_range(d, first, int(start + step) - first if n > 1 else 1, n, False, device)
    compute = dt.float64 if d.kind == "f" or not ints else dt.int64
    if compute is dt.int64 and n:   # bool: drawn in int64, then cast
        lo, hi = dt.iinfo_bounds(dt.int64)
        for v in (start, step, start + (n - 1) * step) if n > 1 else (start,):
            if not lo <= v <= hi:
                raise OverflowError(f"arange: {dt.show_int(v)} is out of bounds for int64, in which "
                                    f"{d.name} ranges of integers are computed")
    t = _iota(n, compute, start, step if n > 1 else 1, device)
    return t if compute is d else t.astype(d)


def _int_range(d: dt.DType, start: int, step: int, n: int, inferred: bool, device) -> Tensor:
    """An integer range computed in d itself: the kernels' start + i * step in wrapping 64-bit
    arithmetic, cut to d's width, is exact while the values fit d (uint64 past int64
    included) and wraps past d's end as NumPy's does. As NumPy's, start and the second value
    must fit d; without a dtype (int64 inferred) every value must, since NumPy would not give
    int64 there (it gives float64 or object)."""
    lo, hi = dt.iinfo_bounds(d)
    if n and not lo <= start <= hi:
        raise OverflowError(f"arange: Python integer {dt.show_int(start)} out of bounds for {d.name}")
    if n > 1:
        second, last = start + step, start + (n - 1) * step
        if not lo <= second <= hi:
            raise OverflowError(f"arange: the second value {dt.show_int(second)} (start + step) is "
                                f"out of bounds for {d.name}")
        if inferred and not lo <= last <= hi:
            raise OverflowError(f"arange: {dt.show_int(last)} is out of bounds for int64, the dtype of "
                                "an integer range without dtype= (pass dtype='uint64' for one past it)")

    def bits(v: int) -> int:   # the int64 with v's low 64 bits: what the kernels take
        return (v + 2**63) % 2**64 - 2**63
    return _iota(n, d, bits(start), bits(step) if n > 1 else 1, device)


def _nd(v) -> bool:
    """v is an array-like of rank >= 1 (a tensor, a NumPy array, a list)."""
    return (v.ndim if isinstance(v, Tensor) else np.ndim(v)) > 0


def _linspace_nd(start, stop, num, endpoint, dtype, device, axis) -> tuple:
    """NumPy's linspace of array-like end points: broadcast, the values along `axis`; (values,
    step) with step a tensor of the broadcast shape (NaN, a float, when there is no spacing)."""
    from .axes import norm_axis
    from .elementwise import binary, unary
    from .views import basic_index, broadcast_shapes, broadcast_view, moveaxis, reshape
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    dev = parse_device(device) if device else next(
        (v.device for v in (start, stop) if isinstance(v, Tensor)), None)
    ts = [v if isinstance(v, Tensor) else asarray(v, device=dev) for v in (start, stop)]
    if ts[0].device != ts[1].device or (dev is not None and ts[0].device != dev):
        raise ValueError(f"linspace: start and stop on different devices: {ts[0].device}, {ts[1].device}")
    # NumPy's dtype: Python numbers are weak (a float32 start and stop=3: float32)
    fd = dt.result_type(*(v if isinstance(v, Tensor) or dt.scalar_kind(v) is not None else t
                          for v, t in zip((start, stop), ts)))
    fd = fd if fd.kind in "fc" else dt.float64
    shape = broadcast_shapes(ts[0].shape, ts[1].shape)
    s0, s1 = (broadcast_view(t.astype(fd, copy=False), shape) for t in ts)
    delta = binary("subtract", s1, s0)
    div = (num - 1) if endpoint else num
    idx = reshape(_iota(num, fd if fd.kind == "f" else dt.real_of(fd), 0, 1, ts[0].device, "linspace"),
                  (num,) + (1,) * len(shape))
    step = binary("true_divide", delta, div) if div > 0 else float("nan")
    y = binary("add", binary("multiply", idx, step if div > 0 else delta), s0)
    if endpoint and num > 1:
        copy_into(basic_index(y, (num - 1,)), s1)
    if axis:
        y = moveaxis(y, 0, norm_axis(axis, y.ndim, "linspace"))
    d = _dtype_or(dtype, fd)
    if d.kind in "iu":   # floored before the cast, as below
        y = unary("floor", y)
    return (y if d is y.dtype else y.astype(d)), step


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, device=None,
             requires_grad: bool = False, *, retstep: bool = False, axis: int = 0,
             pin_memory: bool = False):
    """num evenly spaced numbers from start to stop (stop left out when endpoint=False), as
    NumPy's: start and stop may also be tensors or array-likes (broadcast together; the
    numbers run along `axis` of the result). retstep=True returns (values, step).

    >>> import tensor as T
    >>> T.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> T.linspace(T.tensor([0.0, 1.0]), 3.0, 3, axis=1).tolist()
    [[0.0, 1.5, 3.0], [1.0, 2.0, 3.0]]
    """
    if _nd(start) or _nd(stop) or axis != 0:
        t, step = _linspace_nd(start, stop, num, endpoint, dtype, device, axis)
        t = _grad(_pinned(t, pin_memory, "linspace"), requires_grad)
        return (t, step) if retstep else t
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    div = (num - 1) if endpoint else num
    if retstep:   # NumPy's: NaN when there is no spacing (num 1 with endpoint, or 0)
        return (linspace(start, stop, num, endpoint, dtype, device, requires_grad,
                         pin_memory=pin_memory), (stop - start) / div if div > 0 else float("nan"))
    step = (stop - start) / div if div > 0 else 0.0
    from .elementwise import binary
    # NumPy's arange(num) * step + start: two roundings
    idx = _iota(num, dt.float64, 0, 1, parse_device(device), "linspace")
    cplx = isinstance(start, complex) or isinstance(stop, complex)
    t = binary("add", binary("multiply", idx, step), complex(start) if cplx else float(start))
    if endpoint and num > 1:
        t[num - 1] = stop
    d = _dtype_or(dtype, dt.complex_of(dt.get_default_dtype()) if cplx else dt.get_default_dtype())
    if cplx and d.kind != "c":
        raise TypeError(f"linspace: complex start or stop ({start!r}, {stop!r}) with the real dtype "
                        f"{d.name}; use a complex dtype")
    if d.kind in "iu":  # NumPy 2 floors toward -inf before an integer cast (a cast truncates)
        from .elementwise import unary
        unary("floor", t, out=t)
    return _grad(_pinned(unwritten(t) if d is t.dtype else t.astype(d), pin_memory, "linspace"),
                 requires_grad)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, device=None,
        requires_grad: bool = False, *, pin_memory: bool = False) -> Tensor:
    out = zeros((N, N if M is None else M), dtype=dtype, device=device, pin_memory=pin_memory)
    fill_(out.diagonal(k), 1)
    return _grad(unwritten(out), requires_grad)


def _tri_mask(shape, k, lower: bool, device=None) -> Tensor:
    n, m = shape[-2], shape[-1]
    rows = arange(n, device=device).reshape(n, 1)
    cols = arange(m, device=device).reshape(1, m)
    diff = cols - rows
    return diff <= k if lower else diff >= k


def tril(x: Tensor, k: int = 0) -> Tensor:
    """Lower triangle of the last two axes (elements above the k-th diagonal zeroed)."""
    from .elementwise import where
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"tril: needs a tensor of rank >= 2, got shape {x.shape}")
    return where(_tri_mask(x.shape, k, True, x.device), x, zeros_like(x, dtype=x.dtype))


def triu(x: Tensor, k: int = 0) -> Tensor:
    """Upper triangle of the last two axes (elements below the k-th diagonal zeroed)."""
    from .elementwise import where
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"triu: needs a tensor of rank >= 2, got shape {x.shape}")
    return where(_tri_mask(x.shape, k, False, x.device), x, zeros_like(x, dtype=x.dtype))

