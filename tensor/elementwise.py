"""Elementwise ops: type promotion, broadcasting, out=, and the copies built on the same kernels
(casts, contiguous, copy, moves between devices); one call on the device's backend runs each.

Everything about shapes and dtypes is decided here, on the host, before a kernel runs, so
user errors never leave a half-written output.

>>> import tensor as T
>>> (T.arange(3, dtype="int8") + 1).dtype     # Python scalars are weak (NumPy 2)
tensor.int8
>>> (T.arange(3) / 2).tolist()
[0.0, 0.5, 1.0]
"""
from __future__ import annotations

import math
import struct

import cffi
import numpy as np

from . import dtypes as dt
from ._tensor import Tensor, contiguous_strides, new_storage
from .aliasing import check_writable, may_overlap, same_view
from .backend import backend_for
from .convert import _convertible, asarray
from .device import CPU
from .device import device as parse_device
from .optable import OPS, binary_loop_dtype, loop_dtype
from .views import MAX_BYTES, broadcast_shape_tuples, broadcast_to, check_size, coalesce

_ffi = cffi.FFI()
_PACK = {"b8": "?", "i8": "b", "u8": "B", "i16": "h", "i32": "i", "i64": "q", "u16": "H",
         "u32": "I", "u64": "Q", "f16": "e", "f32": "f", "f64": "d"}


def empty_tensor(shape: tuple, dtype: dt.DType, device=None, op: str = "empty") -> Tensor:
    n = 1
    for s in shape:
        n *= s
    if n * dtype.itemsize > MAX_BYTES or not n and shape and max(shape) > MAX_BYTES:  # before allocating
        check_size(shape, dtype.itemsize, op, dtype.name)
    st = new_storage(n * dtype.itemsize) if device is None else new_storage(n * dtype.itemsize, device)
    return Tensor._make(st, shape, contiguous_strides(shape), 0, dtype)


def _bf16_bits(v: float) -> int:
    """v rounded once to bfloat16 (nearest, ties to even), as astype from float64: through a
    float32 rounded to odd, whose last bit keeps what the first rounding dropped, so the second
    rounding cannot land on a false tie (float64 -> float32 -> bfloat16 by nearest twice can)."""
    try:
        u = struct.unpack("<I", struct.pack("<f", v))[0]
    except OverflowError:  # past float32's range, so past bfloat16's: inf
        return 0x7F80 if v > 0 else 0xFF80
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return (u >> 16) | 0x40
    back = struct.unpack("<f", struct.pack("<I", u))[0]
    if back != v and (u & 0x7FFFFFFF) != 0x7F800000:   # inexact: round to odd
        u = (u - 1 if abs(back) > abs(v) else u) | 1
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def _odd24(v: int) -> float:
    """An int as the float with 24 significant bits toward zero, its last bit set when
    inexact (rounded to odd, as the kernels' casts from int64): _bf16_bits then rounds it once,
    where float(v) would round first (2**60 + 2**52 + 1 became the bfloat16 2**60)."""
    a = abs(v)
    sh = a.bit_length() - 24
    if sh <= 0:
        return float(v)
    kept = (a >> sh) | int((a & ((1 << sh) - 1)) != 0)
    return math.ldexp(kept, sh) * (-1 if v < 0 else 1)


def scalar_bytes(v, d: dt.DType) -> bytes:
    """Encode a Python scalar as one element of dtype d (NumPy 2's conversion of a weak scalar:
    a float rounds, to inf past the dtype's range; an int that d cannot hold raises
    OverflowError naming it; a complex value into a real dtype raises TypeError)."""
    if d.kind == "c":
        try:
            v = complex(v)
        except OverflowError:  # an int past float64's range
            raise OverflowError(f"Python integer {dt.show_int(v)} out of bounds for {d.name}") from None
        with np.errstate(over="ignore"):   # past complex64's range: inf, as NumPy
            return np.array(v, d.np).tobytes()
    if isinstance(v, complex | np.complexfloating):
        raise TypeError(f"cannot use the complex value {v!r} as {d.name}: use a complex dtype "
                        "(complex64 or complex128)")
    if d.kind == "f":
        iv = int(v) if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) else None
        try:
            v = float(v)
        except OverflowError:  # an int past float64's range
            raise OverflowError(f"Python integer {dt.show_int(v)} out of bounds for {d.name}") from None
        if d is dt.float64:
            return struct.pack("<d", v)
        if d is dt.float32:
            try:
                return struct.pack("<f", v)
            except OverflowError:  # past float32's range: inf, as NumPy (with its warning)
                pass
        elif d is dt.bfloat16:
            return struct.pack("<H", _bf16_bits(_odd24(iv) if isinstance(iv, int) else v))
        return np.array(v, d.np).tobytes()  # NumPy's rounding (and its overflow warning)
    if d is dt.bool_:
        return b"\x01" if v else b"\x00"
    lo, hi = dt.iinfo_bounds(d)
    v = int(v)
    if not lo <= v <= hi:
        raise OverflowError(f"Python integer {dt.show_int(v)} out of bounds for {d.name}")
    return struct.pack("<" + _PACK[d.sfx], v)


class _Scalar:
    """A scalar operand: one element in host memory, read with stride 0 (CUDA kernels get
    its bytes by value, as `bits`; None for a dtype wider than 8 bytes, complex128, which the
    CUDA launch copies to the device instead)."""
    __slots__ = ("buf", "ptr", "bits", "dtype")

    def __init__(self, v, d):
        raw = scalar_bytes(v, d)
        self.buf = _ffi.new("char[]", raw)
        self.ptr = int(_ffi.cast("intptr_t", self.buf))
        self.dtype = d
        self.bits = int.from_bytes(raw.ljust(8, b"\0"), "little", signed=True) if len(raw) <= 8 else None


def run(d: dt.DType, name: str, out: Tensor, ins: list) -> None:
    """Launch elementwise kernel `name` (module ("ew", d)) on out's device."""
    dev = out._storage.device
    (dev._be or backend_for(dev)).elementwise(d, name, out, ins)


# ---------------------------------------------------------------- casting and copies

def _out_like(x: Tensor, dtype: dt.DType) -> Tensor:
    """A new tensor shaped like x, laid out in x's memory order when x is a dense permutation."""
    if x.is_contiguous() or x.ndim < 2:
        return empty_tensor(x._shape, dtype, x.device)
    order = sorted(range(x.ndim), key=lambda i: -abs(x._strides[i]))
    acc, dense = 1, True
    for i in reversed(order):
        if x._shape[i] != 1 and abs(x._strides[i]) != acc:
            dense = False
            break
        acc *= x._shape[i]
    if not dense or any(s < 0 for s in x._strides):
        return empty_tensor(x._shape, dtype, x.device)
    perm_shape = tuple(x._shape[i] for i in order)
    t = empty_tensor(perm_shape, dtype, x.device)
    inv = [0] * x.ndim
    for j, i in enumerate(order):
        inv[i] = j
    r = t._view(x._shape, [t._strides[inv[i]] for i in range(x.ndim)])
    r._base = None   # a fresh result, not a view of anything a caller holds
    return r


def check_real_into(op: str, src: dt.DType, dst: dt.DType) -> None:
    """Raise TypeError when complex values would be written into a real dtype (the imaginary
    parts lost): writes refuse it, only astype casts that way."""
    if src.kind == "c" and dst.kind != "c":
        raise TypeError(f"{op}: cannot write {src.name} values into a {dst.name} tensor: the "
                        "imaginary parts would be lost (take .real, or astype)")


def copy_into(dst: Tensor, src, op: str = "copy") -> None:
    """dst[...] = src with broadcasting and casting (the kernel behind copies and astype);
    op names the caller in errors (a read-only dst raises before anything is written). Complex
    values into a real dst raise TypeError (NumPy drops the imaginary parts with a warning)
    except for astype, whose cast is asked for."""
    check_writable(dst, op)
    if isinstance(src, Tensor):
        if op != "astype":
            check_real_into(op, src._dtype, dst._dtype)
        if dst.device != src.device:  # copy_ across devices, as PyTorch's
            src = to_device(src, dst.device)
        src = _bcast(stable(src, dst, elementwise=True), dst._shape, op)
        run(src._dtype, f"cast_{src._dtype.sfx}_{dst._dtype.sfx}", dst, [src])
    else:
        sd = dst._dtype
        run(sd, f"cast_{sd.sfx}_{sd.sfx}", dst, [_Scalar(src, sd)])
    dst._storage.version += 1


def stable(src, dst: Tensor, elementwise: bool = False):
    """src as a kernel writing dst may read it: a copy when it may overlap dst.

    elementwise: the kernel reads src at exactly the position it writes in dst (a same-shaped
    elementwise op), so an operand that is the very same view needs no copy."""
    if not isinstance(src, Tensor) or elementwise and (src is dst or same_view(src, dst)):
        return src
    if not may_overlap(src, dst):
        return src
    return copy(src)


def astype(x: Tensor, dtype, copy: bool = True, *, device=None) -> Tensor:
    """x cast to dtype (x itself when copy=False and nothing changes); the array API
    standard's device= moves it too (the move already copies, so the cast then need not)."""
    if device is not None:
        moved = to_device(x, device)
        x, copy = moved, copy and moved is x
    d = dt.dtype(dtype)
    if d is x._dtype and not copy:
        return x
    out = _out_like(x, d)
    copy_into(out, x, "astype")
    return unwritten(out)


def unwritten(t: Tensor) -> Tensor:
    """t, a tensor just made (filled or copied into), with no in-place write counted yet
    (PyTorch's new tensors have _version 0)."""
    t._storage.version = 0
    return t


def contiguous(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        x = as_tensor(x, "contiguous")
    if x.is_contiguous():
        return x
    out = empty_tensor(x._shape, x._dtype, x.device)
    copy_into(out, x)
    return out


def copy(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        x = as_tensor(x, "copy")
    d = x._dtype
    out = _out_like(x, d)
    # copy_into(out, x) without its checks: out is fresh (writable, on x's device, of x's shape
    # and dtype, overlapping nothing)
    run(d, f"cast_{d.sfx}_{d.sfx}", out, [x])
    return unwritten(out)


def to_device(x: Tensor, device, /, *, stream=None) -> Tensor:
    """x on `device` (x itself when it is already there). `stream` (the array API standard's):
    a stream object of the target device (`with stream:` makes it current), the copy is
    queued there."""
    if stream is not None:
        if not hasattr(stream, "__enter__"):
            raise TypeError(f"to_device: stream must be None or a stream object (such as "
                            f"tensor.cuda.Stream), got {type(stream).__name__}")
        with stream:
            return to_device(x, device)
    dev = parse_device(device)
    src = x._storage.device
    if dev == src:
        return x
    if src is CPU:                     # host -> device
        out = empty_tensor(x._shape, x._dtype, dev)
        backend_for(dev).copy_from_host(out, contiguous(x))
        return out
    host = empty_tensor(x._shape, x._dtype, CPU)
    backend_for(src).copy_to_host(host, contiguous(x))   # (a staging copy on the device first)
    return host if dev is CPU else to_device(host, dev)


# ---------------------------------------------------------------- ops

def as_operand(x, op: str = "asarray"):
    """Tensors and Python scalars pass; lists, NumPy arrays and NumPy scalars become tensors.
    op names the caller in the errors of operands no tensor can hold (text)."""
    if isinstance(x, Tensor) or dt.scalar_kind(x) is not None and not isinstance(x, np.generic):
        return x
    if isinstance(x, str | bytes) or x is None:
        raise TypeError(f"{op}: operands must be numbers, sequences of numbers, arrays or tensors, "
                        f"got {'None' if x is None else f'a {type(x).__name__} ({x!r:.40})'}")
    if isinstance(x, np.ndarray | np.generic):  # a dtype we lack: converted or refused, naming op
        conv = _convertible(np.asarray(x), None, op)
        if conv.dtype != x.dtype:
            x = conv
    return asarray(x)


def as_operands(op: str, *xs) -> list:
    """as_operand of each; an operand made here (from a list, a NumPy array or scalar) goes to
    the device of the operands that were tensors already (T.add(x, np.float64(1)) with x on a
    GPU), not to the default device, as the operators' NumPy operands do."""
    conv = [as_operand(x, op) for x in xs]
    home = next((x.device for x in xs if isinstance(x, Tensor)), None)
    if home is None:
        return conv
    return [c if c is x or not isinstance(c, Tensor) or c.device == home else to_device(c, home)
            for c, x in zip(conv, xs)]


def as_tensor(x, op: str = "asarray") -> Tensor:
    """as_operand, then a tensor also for a Python scalar (on the default device)."""
    x = as_operand(x, op)
    return x if isinstance(x, Tensor) else asarray(x)


def _check_out_first(op_name, out) -> None:
    """What NumPy checks of out= before the operands' types: a tensor, writable."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op_name}: out must be a Tensor, got {type(out).__name__}")
    check_writable(out, op_name, "output array")


def _check_out_type(op_name, out: Tensor, res_dtype, dev=None) -> None:
    """out='s device and dtype (before any shape, as NumPy's type resolution)."""
    if dev is not None and out.device != dev:
        raise ValueError(f"{op_name}: out is on {out.device} but the operands are on {dev}")
    if out._dtype is not res_dtype and not dt.can_cast(res_dtype, out._dtype, "same_kind"):
        raise TypeError(f"{op_name}: cannot cast the result dtype {res_dtype.name} to the output "
                        f"dtype {out._dtype.name} (casting rule 'same_kind')")


def _check_out_shape(op_name, out: Tensor, shape, grow: bool = False) -> tuple:
    """out's shape against the result's. grow: out may also have a shape the operands broadcast
    to (NumPy's ufunc rule). Returns the shape to compute."""
    shape = tuple(shape)
    if out._shape != shape and not (grow and len(out._shape) >= len(shape) and all(
            m in (1, n) for m, n in zip(shape[::-1], out._shape[::-1]))):
        raise ValueError(f"{op_name}: output of shape {out.shape} cannot hold the result of shape "
                         f"{shape}")
    return out._shape


def _prepare_out(op_name, out: Tensor, shape, res_dtype, dev=None) -> tuple:
    """Check out= against the result (writable, device, dtype, shape)."""
    _check_out_first(op_name, out)
    _check_out_type(op_name, out, res_dtype, dev)
    return _check_out_shape(op_name, out, shape)


def _finish(op_name, res: Tensor, out):
    if out is None:
        return res
    check_writable(out, op_name, "output array")
    copy_into(out, res, op_name)
    return out


def unary(name: str, x, out: Tensor | None = None) -> Tensor:
    if out is None and type(x) is Tensor and x.is_contiguous():
        r = _fast(name, x, None)
        if r is not None:
            return r
    op = OPS[name]
    x = as_tensor(x, name)
    if out is not None:
        _check_out_first(name, out)
    ld = loop_dtype(op, x._dtype)
    od = op.out_dtype(ld)
    if out is not None:
        _check_out_type(name, out, od, x.device)
        shape = _check_out_shape(name, out, x._shape, grow=True)
        if shape != x._shape:
            x = broadcast_to(x, shape, name)
    if ld is not x._dtype:
        x = astype(x, ld)
    direct = out is not None and out._dtype is od and (not may_overlap(out, x) or same_view(out, x))
    res = out if direct else _out_like(x, od)
    run(ld, f"{name}_{ld.sfx}", res, [x])
    if direct:
        out._storage.version += 1
        return out
    return _finish(name, res, out)


def _fits(x, d: dt.DType) -> bool:
    if not isinstance(x, int) or isinstance(x, bool):
        return True
    lo, hi = dt.iinfo_bounds(d)
    return lo <= x <= hi


def _comparison_fallback(a, b):
    """A Python int beyond the tensor's integer range in a comparison: every element lies on
    one side of it, so compare against +-inf in float64 (exact, where the int itself would
    round: 2**63 onto int64's max). Returns (loop dtype, a, b)."""
    out = []
    for s in (a, b):
        if isinstance(s, int) and not isinstance(s, bool) and not _fits(s, ld_of(a, b)):
            s = math.inf if s > 0 else -math.inf
        out.append(s)
    return dt.float64, out[0], out[1]


def ld_of(a, b) -> dt.DType:
    return next(x._dtype for x in (a, b) if isinstance(x, Tensor))


_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
           "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def _signed_vs_u64(name: str, a: Tensor, b: Tensor) -> Tensor:
    """A signed integer against a uint64: they promote to float64, which rounds, but NumPy
    compares them exactly (its mixed int64/uint64 loops): a negative value is below every
    uint64, the others compare as uint64."""
    if a._dtype is dt.uint64:
        a, b, name = b, a, _MIRROR[name]
    r = binary(name, astype(a, dt.uint64), b)
    if name in ("less", "less_equal", "not_equal"):
        return binary("logical_or", binary("less", a, 0), r)
    return binary("logical_and", binary("greater_equal", a, 0), r)


_WEAK_KIND = {bool: "b", int: "i", float: "f"}


def _fast_out_dtype(name: str, d: dt.DType, other):
    """The result dtype when `d op other` computes in d itself (no promotion), else None.
    other is a dtype (tensor operand of the same dtype) or a Python scalar kind."""
    op = OPS[name]
    if other == "f" and d.kind not in "fc" or other == "i" and d is dt.bool_:
        return None
    if name == "power" and d.kind == "i" and isinstance(other, dt.DType):  # binary checks its sign
        return None
    if d.kind in op.kinds and (op.int_to is None or d.kind in "fc") and \
            not (d is dt.bool_ and (op.no_bool or op.bool_to)):
        return op.out_dtype(d)
    return None


def _fast(name: str, a: Tensor, b):
    """The fast path: contiguous same-shape tensors of one dtype on one device, or a tensor
    and a Python scalar (b is None for unary ops), computing in a's dtype. None when it does
    not apply (the general path then decides, and raises what it must)."""
    d = a._dtype
    tb = type(b)
    if b is None:
        other = d.sfx
    elif tb is Tensor:
        if b._dtype is not d or b._shape != a._shape or b._storage.device is not a._storage.device \
                or not b.is_contiguous():
            return None
        other = d.sfx
    elif tb is float or tb is int:
        other = _WEAK_KIND[tb]
        if tb is int and d.kind in "iub" and not _fits(b, d):
            return None
        if tb is int and b < 0 and name == "power" and d.kind == "i" and 0 not in a._shape:
            _check_int_exponent(b, d)
    else:
        return None
    key = (name, d.sfx, other)   # strings: their hashes are cached
    hit = _FAST_OD.get(key, False)
    if hit is False:
        od = _fast_out_dtype(name, d, d if other == d.sfx else other)
        hit = _FAST_OD[key] = None if od is None else (od, f"{name}_{d.sfx}")
    if hit is None:
        return None
    dev = a._storage.device
    if dev is CPU and key not in _FAST_CPU:
        # the CPU's C fast path may take such calls from now on (on a CPU call only: it loads
        # the CPU's kernel module, which a CUDA-only program need not build)
        _FAST_CPU.add(key)
        backend_for(CPU).fast_resolved(name, d, other, hit[0], hit[1])
    od = hit[0]
    n = 1
    for s in a._shape:
        n *= s
    be = dev._be or backend_for(dev)   # (new_storage's and _make's work, written out: the hot path)
    res = Tensor._make(be.new_storage(n * od.itemsize, dev), a._shape, a._strides, 0, od)
    be.contiguous_op(d, hit[1], res, n, a, b if tb is Tensor else
                     (None if b is None else _scalar_operand(b, d)))
    return res


_FAST_OD: dict = {}   # (op, dtype, other) -> (out dtype, kernel name), or None: no fast path
_FAST_CPU: set = set()   # keys handed to the CPU's C fast path (tensor/cpu/fastpath.py)


def _scalar_operand(v, d: dt.DType) -> _Scalar:
    # -0.0 == 0.0 (and hashes alike): the signs go into the key, or x // 0.0 ran as x // -0.0
    # and full(n, 0j) filled with the -0-0j cached before it
    key = (type(v), v, d, _signs(v))
    s = _SCALARS.get(key)
    if s is None:
        if len(_SCALARS) > 1024:
            _SCALARS.clear()
        s = _SCALARS[key] = _Scalar(v, d)
    return s


def _signs(v) -> tuple:
    """The sign bits of a float's or complex's zero parts (a key that tells -0.0 from 0.0)."""
    if type(v) is float:
        return (math.copysign(1.0, v) < 0,)
    if type(v) is complex:
        return (math.copysign(1.0, v.real) < 0, math.copysign(1.0, v.imag) < 0)
    return ()


_SCALARS: dict = {}
_LOGICAL = frozenset(("logical_and", "logical_or", "logical_xor"))


def _smallest(b: Tensor) -> int:
    """The least element of a non-empty integer tensor (one min-reduction kernel, one host read)."""
    out = empty_tensor((), b._dtype, b.device)
    rs, (rin,) = coalesce(b._shape, [[s * b.itemsize for s in b._strides]])
    backend_for(b.device).reduce(b._dtype, f"min_{b._dtype.sfx}", b, out, [], [], [], rs or [1],
                                 rin or [0])
    return out.item()


def _check_int_exponent(b, ld: dt.DType) -> None:
    """NumPy refuses an integer power with a negative integer exponent (its result is no
    integer); for a tensor exponent that takes its values (a min reduction, before any kernel)."""
    if isinstance(b, Tensor):
        if b._dtype.kind != "i" or b.numel() == 0:
            return
        low = _smallest(b)
    else:
        low = b
    if low < 0:
        raise ValueError(f"power: Integers to negative integer powers are not allowed ({ld.name} operands, "
                         f"exponent {low}); use a float base")


def _power_shortcut(a, b):
    """The unary op equal to power(a, b) bit for bit, for a float tensor a and a Python scalar
    b of 2 (square: pow is correctly rounded, as x*x) or -1 (reciprocal), or an integer a and
    int b 2 (both wrap alike); else None. pow() per element is ~50x slower than a multiply."""
    if type(a) is not Tensor or type(b) not in (int, float):
        return None
    k = a._dtype.kind
    if k == "f" and b in (2, -1):
        return "square" if b == 2 else "reciprocal"
    if k in "iu" and type(b) is int and b == 2:
        return "square"
    return None


def binary(name: str, a, b, out: Tensor | None = None) -> Tensor:
    if name == "power":
        short = _power_shortcut(a, b)
        if short is not None:
            return unary(short, a, out=out)
    if name in _LOGICAL:  # NumPy reads a mixed operand as bool: 1e-250 stays True next to float16
        a = a != 0.0 if type(a) is float else a
        b = b != 0.0 if type(b) is float else b
    # fast path: contiguous tensors of one dtype and shape, or a tensor and a Python scalar
    # (b None is _fast's unary call: a binary op's None operand goes the checked way)
    if out is None and type(a) is Tensor and b is not None and a.is_contiguous():
        r = _fast(name, a, b)
        if r is not None:
            return r
    if out is None and type(a) is Tensor and type(b) is Tensor:
        p = _BIN_PLANS.get((name, a._dtype.sfx, a._shape, a._strides, b._dtype.sfx, b._shape, b._strides))
        if p is not None and a._storage.device is b._storage.device:
            return _planned(name, a, b, *p)
    op = OPS[name]
    a, b = as_operands(name, a, b)
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb and a.device != b.device:
        raise ValueError(f"{name}: tensors are on different devices: {a.device} and {b.device}")
    if out is not None:
        _check_out_first(name, out)
    ld = binary_loop_dtype(op, a._dtype if ta else a, b._dtype if tb else b)
    if ld is dt.float64 and ta and tb and name in _MIRROR and dt.uint64 in (a._dtype, b._dtype) \
            and "i" in (a._dtype.kind, b._dtype.kind):
        if out is not None:
            _check_out_type(name, out, dt.bool_, a.device)
        return _finish(name, _signed_vs_u64(name, a, b), out)
    if op.out_bool and ld.kind in "iu" and not all(_fits(x, ld) for x in (a, b)):
        ld, a, b = _comparison_fallback(a, b)
    # a Python scalar that ld cannot hold raises now (NumPy's order: then out's dtype, then shapes)
    scalars = [None if isinstance(x, Tensor) else _Scalar(x, ld) for x in (a, b)]
    od = op.out_dtype(ld)
    if out is not None:
        _check_out_type(name, out, od, a.device if ta else (b.device if tb else None))
    shape = broadcast_shape_tuples(a._shape if ta else (), b._shape if tb else (), op=name)
    if out is not None:
        shape = _check_out_shape(name, out, shape, grow=True)
    if name == "power" and ld.kind == "i" and 0 not in shape:   # (as NumPy: an element raises)
        _check_int_exponent(b, ld)
    ops = []
    for x, sc in zip((a, b), scalars):
        if sc is None:
            if x._dtype is not ld:
                x = astype(x, ld)
            elif out is not None:
                x = stable(x, out, elementwise=True)
            ops.append(_bcast(x, shape, name))
        else:
            ops.append(sc)
    direct = out is not None and out._dtype is od
    if direct:
        res = out
    elif ta and a._shape == shape:
        res = _out_like(a, od)
    else:
        res = empty_tensor(shape, od, a.device if ta else (b.device if tb else parse_device(None)))
    run(ld, f"{name}_{ld.sfx}", res, ops)
    if direct:
        out._storage.version += 1
        return out
    if out is None and res._base is None and (not ta or a._dtype is ld) and (not tb or b._dtype is ld):
        dev = res._storage.device   # the same call may take a C fast path from now on
        (dev._be or backend_for(dev)).elementwise_resolved(name, a, b, res, ops)
        if type(a) is Tensor and type(b) is Tensor and name != "power":
            _plan_binary(name, a, b, od, shape, ld)
    return _finish(name, res, out)


def _plan_binary(name: str, a: Tensor, b: Tensor, od: dt.DType, shape: tuple, ld: dt.DType) -> None:
    """Remember what binary decided for two tensors of one dtype (computed in it, no casts): the
    same op on operands of the same dtypes, shapes and strides takes _planned from now on. Such
    a call depends on nothing else (power, whose integer form checks the exponents' values, is
    left out)."""
    if len(_BIN_PLANS) > 4096:
        _BIN_PLANS.clear()
    _BIN_PLANS[(name, a._dtype.sfx, a._shape, a._strides, b._dtype.sfx, b._shape, b._strides)] = (
        od, shape, ld, f"{name}_{ld.sfx}", a._shape == shape)


def _planned(name: str, a: Tensor, b: Tensor, od, shape, ld, kernel, like_a) -> Tensor:
    """binary(name, a, b) as the general path ran it for operands of this layout (_plan_binary)."""
    dev = a._storage.device
    res = _out_like(a, od) if like_a else empty_tensor(shape, od, dev)
    ops = [_bcast(a, shape, name), _bcast(b, shape, name)]
    run(ld, kernel, res, ops)
    if res._base is None:
        (dev._be or backend_for(dev)).elementwise_resolved(name, a, b, res, ops)
    return res


_BIN_PLANS: dict = {}   # (op, a's dtype, shape, strides, b's ...) -> what binary decided


def _bcast(x: Tensor, shape: tuple, op: str) -> Tensor:
    """broadcast_to for a shape the caller computed (a tuple of ints): x itself when it has it
    already, without broadcast_to's checks of a user's shape."""
    return x if x._shape == shape else broadcast_to(x, shape, op)


def same_device(op: str, tensors) -> None:
    """Raise unless the tensors among `tensors` share one device (a kernel reads every operand
    on its output's device)."""
    dev = None
    for t in tensors:
        if isinstance(t, Tensor):
            if dev is None:
                dev = t.device
            elif t.device != dev:
                raise ValueError(f"{op}: tensors are on different devices: {dev} and {t.device}")


def where(cond, a, b) -> Tensor:
    """Elements of a where cond is true, else of b (NumPy's 3-argument where)."""
    if type(cond) is Tensor and cond._dtype is dt.bool_:
        r = _where_fast(cond, a, b)
        if r is not None:
            return r
    cond, a, b = as_operands("where", cond, a, b)
    if not isinstance(cond, Tensor):   # a Python bool: on the values' device
        cond = asarray(cond, device=next((x.device for x in (a, b) if isinstance(x, Tensor)), None))
    same_device("where", (cond, a, b))
    if cond._dtype is not dt.bool_:
        cond = astype(cond, dt.bool_)
    rd = dt.result_type(a, b)
    shapes = [cond._shape] + [x._shape for x in (a, b) if isinstance(x, Tensor)]
    shape = broadcast_shape_tuples(*shapes, op="where")
    ops = [_bcast(cond, shape, "where")]
    for x in (a, b):
        if isinstance(x, Tensor):
            ops.append(_bcast(astype(x, rd, copy=False), shape, "where"))
        else:
            ops.append(_Scalar(x, rd))
    res = empty_tensor(shape, rd, cond.device)
    run(rd, f"where_{rd.sfx}", res, ops)
    return res


def _where_fast(cond: Tensor, a, b):
    """where's common calls, as its general path decides them without its conversions: a bool
    cond with values that are tensors of one dtype, or a float tensor and a Python float or int
    (a weak scalar: the tensor's dtype), all on one device. None: the general path."""
    dev, ta, tb = cond._storage.device, type(a) is Tensor, type(b) is Tensor
    t = a if ta else b
    if not (ta or tb) or t._storage.device is not dev:
        return None
    d = t._dtype
    if ta and tb:
        if b._dtype is not d or b._storage.device is not dev:
            return None
    elif d.kind != "f" or type(b if ta else a) not in (float, int):
        return None
    shapes = [x._shape for x in (cond, a, b) if type(x) is Tensor]
    shape = cond._shape if shapes.count(cond._shape) == len(shapes) else \
        broadcast_shape_tuples(*shapes, op="where")
    ops = [x if type(x) is not Tensor else _bcast(x, shape, "where") for x in (cond, a, b)]
    if not (ta and tb):
        ops[2 if ta else 1] = _scalar_operand(b if ta else a, d)
    res = empty_tensor(shape, d, dev)
    run(d, f"where_{d.sfx}", res, ops)
    return res
