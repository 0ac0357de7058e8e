"""NumPy's remaining everyday functions: vdot, matvec, vecmat, fabs, divmod, ascontiguousarray,
copyto, frombuffer, fromiter, tri, rollaxis, dsplit, packbits, unpackbits, asarray_chkfinite,
real_if_close, mask_indices, iterable, ndindex, ndenumerate, min_scalar_type, common_type, and the
.npy / .npz files (save, load, savez, savez_compressed: NumPy's formats, written and read by NumPy
on the host). The polynomial functions are tensor/numpy_poly.py's.

Compositions of the public (recorded) ops, so the differentiable ones need no rule of their own.

>>> import tensor as T
>>> T.vdot(T.tensor([1 + 2j, 3j]), T.tensor([1.0, 1.0])).item()
(1-5j)
>>> T.packbits(T.tensor([1, 0, 1, 1])).tolist()
[176]
>>> T.tri(2, 3, 1, dtype=T.int64).tolist()
[[1, 1, 0], [1, 1, 1]]
"""
from __future__ import annotations

import builtins
import itertools
import math
import operator

from . import dtypes as dt
from . import serialization
from ._tensor import Tensor
from .axes import as_int, norm_axis
from .convert import asarray
from .creation import arange, ones, zeros
from .numpy_extra2 import arrs, cast, host, is_scalar, pub, ravel
from .optable import T as P  # tensor's public (recorded) functions
from .sorting import tensor_arg
from .views import as_strided

# ---------------------------------------------------------------- products


# published (a function and PyTorch's Tensor.vdot) by tensor/torch_extra3.py: NumPy's ndarray has
# no such method, and this module's registry makes methods of NumPy's methods only
def vdot(a, b) -> Tensor:
    """The dot product of a and b flattened, a conjugated first (NumPy's vdot; PyTorch's for
    1-d tensors). The sizes must match; the dtypes promote.

    >>> import tensor as T
    >>> T.vdot(T.tensor([[1, 2], [3, 4]]), T.tensor([[1, 1], [1, 1]])).item()
    10
    """
    a, b = arrs("vdot", a, b)
    if a.numel() != b.numel():
        raise ValueError(f"vdot: the inputs have {a.numel()} and {b.numel()} elements "
                         f"(shapes {a.shape} and {b.shape}); they must have as many")
    d = dt.result_type(a, b)
    a, b = cast(ravel(a), d), cast(ravel(b), d)
    if d is dt.bool_:   # NumPy: any(a and b)
        return P.any(P.logical_and(a, b))
    if d.kind == "c":
        a = P.conj(a)
    # NumPy accumulates in the operands' dtype (small ints wrap): the int64 / uint64 sum cast back
    return cast(P.sum(P.multiply(a, b)), d)


def _rank(x: Tensor, n: int, op: str, what: str) -> None:
    if x.ndim < n:
        raise ValueError(f"{op}: {what} must have at least {n} dimension{'s' * (n > 1)}, got "
                         f"shape {x.shape}")


@pub()
def matvec(x1, x2) -> Tensor:
    """Matrix-vector products over broadcast batches (NumPy 2.2's matvec): x1 (..., m, n)
    times x2 (..., n) gives (..., m)."""
    x1, x2 = arrs("matvec", x1, x2)
    _rank(x1, 2, "matvec", "x1 (the matrices)")
    _rank(x2, 1, "matvec", "x2 (the vectors)")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"matvec: shapes {x1.shape} and {x2.shape}: the matrices' last "
                         f"dimension {x1.shape[-1]} differs from the vectors' {x2.shape[-1]}")
    return P.squeeze(P.matmul(x1, P.expand_dims(x2, -1)), -1)


@pub()
def vecmat(x1, x2) -> Tensor:
    """Vector-matrix products over broadcast batches (NumPy 2.2's vecmat): conj(x1) (..., n)
    times x2 (..., n, m) gives (..., m); the vectors are conjugated, as vecdot's."""
    x1, x2 = arrs("vecmat", x1, x2)
    _rank(x1, 1, "vecmat", "x1 (the vectors)")
    _rank(x2, 2, "vecmat", "x2 (the matrices)")
    if x1.shape[-1] != x2.shape[-2]:
        raise ValueError(f"vecmat: shapes {x1.shape} and {x2.shape}: the vectors' length "
                         f"{x1.shape[-1]} differs from the matrices' rows {x2.shape[-2]}")
    if x1.dtype.kind == "c":
        x1 = P.conj(x1)
    return P.squeeze(P.matmul(P.expand_dims(x1, -2), x2), -2)


# ---------------------------------------------------------------- elementwise


@pub()
def fabs(x) -> Tensor:
    """|x| of real input as a float (NumPy's fabs: integers give the float dtype sqrt would,
    complex input is a TypeError; use abs)."""
    x = tensor_arg(x, "fabs")
    if x.dtype.kind == "c":
        raise TypeError(f"fabs: not defined for complex input ({x.dtype.name}); use abs")
    return P.abs(cast(x, dt.float_of(x.dtype)))


@pub()
def divmod(x1, x2) -> tuple:  # noqa: A001  (NumPy's name)
    """(floor_divide(x1, x2), remainder(x1, x2)), as NumPy's divmod and Python's."""
    return P.floor_divide(x1, x2), P.remainder(x1, x2)


# ---------------------------------------------------------------- creation and copies


@pub()
def ascontiguousarray(a, dtype=None, *, like=None, device=None) -> Tensor:
    """a as a C-contiguous tensor of rank >= 1 (a itself when it already is one of dtype);
    `like` is accepted for NumPy's signature and ignored."""
    t = asarray(a, dtype=dtype, device=device)
    if t.ndim == 0:
        t = P.reshape(t, (1,))
    return t if t.is_contiguous() else P.contiguous(t)


@pub()
def asanyarray(a, dtype=None, *, like=None, device=None, copy=None) -> Tensor:
    """asarray (there are no tensor subclasses to keep)."""
    return asarray(a, dtype=dtype, copy=copy, device=device)


def _f_order(t: Tensor) -> Tensor:
    """A Fortran-ordered (column-major) copy of t: the contiguous copy of its reversed axes, read back."""
    rev = list(range(t.ndim))[::-1]
    return P.permute(P.contiguous(P.permute(t, rev)), rev)


def _is_f(t: Tensor) -> bool:
    step = 1
    for n, s in zip(t.shape, t.stride()):
        if n != 1 and s != step:
            return False
        step *= n
    return True


@pub()
def asfortranarray(a, dtype=None, *, like=None, device=None) -> Tensor:
    """a as a Fortran-contiguous (column-major) tensor of rank >= 1 (a itself when it is one)."""
    t = asarray(a, dtype=dtype, device=device)
    if t.ndim == 0:
        t = P.reshape(t, (1,))
    return t if _is_f(t) else _f_order(t)


@pub()
def isfortran(a) -> bool:
    """Whether a is Fortran-contiguous and not C-contiguous (as NumPy's: False for rank < 2)."""
    t = tensor_arg(a, "isfortran")
    return _is_f(t) and not t.is_contiguous()


@pub()
def require(a, dtype=None, requirements=None, *, like=None) -> Tensor:
    """a (copied only when needed) of dtype meeting requirements: 'C' / 'C_CONTIGUOUS',
    'F' / 'F_CONTIGUOUS', 'A' / 'ALIGNED', 'W' / 'WRITEABLE', 'O' / 'OWNDATA' (a copy), 'E' /
    'ENSUREARRAY'; a tensor is always aligned and an array."""
    names = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
             "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
             "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}
    reqs = set()
    for r in ([requirements] if isinstance(requirements, str) else requirements or ()):
        if str(r).upper() not in names:
            raise KeyError(f"require: unknown requirement {r!r} (use {', '.join(sorted(names))})")
        reqs.add(names[str(r).upper()])
    if {"C", "F"} <= reqs:
        raise ValueError("require: cannot be both C- and Fortran-contiguous")
    t = asarray(a, dtype=dtype)
    if "C" in reqs and not t.is_contiguous():
        return P.contiguous(t)
    if "F" in reqs and not _is_f(t):
        return _f_order(t)
    if "O" in reqs or ("W" in reqs and not t.flags.writeable):
        return P.copy(t)
    return t


@pub()
def issubdtype(arg1, arg2) -> bool:
    """Whether dtype arg1 is arg2 or below it in NumPy's hierarchy; arg2 may be a dtype (then the
    two must be the same) or one of NumPy's abstract types (numpy.floating, numpy.integer,
    numpy.signedinteger, numpy.number, numpy.inexact, numpy.complexfloating...). bfloat16 counts
    as a floating type."""
    import numpy as np
    d1 = dt.dtype(arg1)
    try:
        return d1 is dt.dtype(arg2)
    except (TypeError, ValueError):
        pass
    if not (isinstance(arg2, type) and issubclass(arg2, np.generic)):
        raise TypeError(f"issubdtype: arg2 must be a dtype or a NumPy abstract type, got {arg2!r}")
    return bool(np.issubdtype(d1.np if d1.np is not None else np.float32, arg2))


@pub()
def binary_repr(num, width=None) -> str:
    """The binary digits of an int (two's complement in `width` bits when negative), NumPy's."""
    import numpy as np
    return np.binary_repr(operator.index(num), None if width is None else operator.index(width))


@pub()
def base_repr(number, base: int = 2, padding: int = 0) -> str:
    """An int's digits in base 2 to 36 (after `padding` zeros), NumPy's."""
    import numpy as np
    return np.base_repr(operator.index(number), operator.index(base), operator.index(padding))


@pub()
def asarray_chkfinite(a, dtype=None, order=None, *, device=None) -> Tensor:
    """asarray(a, dtype), a ValueError when a float or complex result holds an inf or a NaN."""
    if order not in (None, "C", "K", "A"):
        raise ValueError(f"asarray_chkfinite: only C order is supported, got order={order!r}")
    t = asarray(a, dtype=dtype, device=device)
    if t.dtype.kind in "fc" and t.numel() and not bool(P.all(P.isfinite(t))):
        raise ValueError("asarray_chkfinite: array must not contain infs or NaNs")
    return t


@pub()
def copyto(dst, src, casting: str = "same_kind", where=True) -> None:
    """Writes src (broadcast to dst's shape) into dst where `where` is true; src's dtype must
    cast to dst's under `casting` ('no', 'equiv', 'safe', 'same_kind', 'unsafe'), as NumPy's."""
    if not isinstance(dst, Tensor):
        raise TypeError(f"copyto: dst must be a tensor, got {type(dst).__name__}")
    src = tensor_arg(src, "copyto", dst.device)
    sd = src.dtype
    if not dt.can_cast(sd, dst.dtype, casting):
        raise TypeError(f"copyto: cannot cast {sd.name} to {dst.dtype.name} under casting="
                        f"{casting!r}")
    val = P.broadcast_to(cast(src, dst.dtype), dst.shape)
    if where is not True:
        w = tensor_arg(where, "copyto", dst.device)
        if w.dtype is not dt.bool_:
            raise TypeError(f"copyto: where must be a bool tensor, got {w.dtype.name}")
        val = P.where(w, val, dst)
    P.copy_(dst, val)


@pub()
def frombuffer(buffer, dtype=None, count: int = -1, offset: int = 0, *, like=None, device=None,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor of the buffer's bytes read as dtype (float64 when None, as NumPy's float):
    `count` items (-1: all) from byte `offset`. The result is a copy (PyTorch's shares the
    buffer's memory; NumPy's is a view)."""
    import numpy as np
    d = dt.float64 if dtype is None else dt.dtype(dtype)
    if d.np is None:
        raise TypeError(f"frombuffer: {d.name} has no NumPy dtype to read the buffer with")
    try:
        a = np.frombuffer(buffer, dtype=d.np, count=operator.index(count), offset=operator.index(offset))
    except (TypeError, ValueError) as e:
        raise type(e)(f"frombuffer: {e}") from None
    t = asarray(a.copy(), device=device)
    return t.requires_grad_() if requires_grad else t


@pub()
def fromiter(iter, dtype, count: int = -1, *, like=None, device=None) -> Tensor:  # noqa: A002
    """A 1-d tensor of dtype from an iterable's values: its first `count` (all of them when -1;
    fewer is a ValueError)."""
    count = operator.index(count)
    vals = list(iter if count < 0 else itertools.islice(iter, count))
    if count >= 0 and len(vals) < count:
        raise ValueError(f"fromiter: iterator too short: wanted {count} items, got {len(vals)}")
    d = dt.dtype(dtype)
    return asarray(vals, dtype=d, device=device) if vals else P.reshape(
        asarray([], dtype=d, device=device), (0,))


@pub()
def tri(N, M=None, k: int = 0, dtype=None, *, like=None, device=None) -> Tensor:
    """An N x M (M = N when None) matrix of ones at and below diagonal k, zeros above; dtype
    float64 when None, as NumPy's float."""
    N = as_int(N, "N", "tri")
    M = N if M is None else as_int(M, "M", "tri")
    k = as_int(k, "k", "tri")
    if N < 0 or M < 0:
        raise ValueError(f"tri: negative dimensions ({N}, {M})")
    d = dt.float64 if dtype is None else dt.dtype(dtype)
    if N == 0 or M == 0:
        return zeros((N, M), dtype=d, device=device)
    # [i, j] = (j - i <= k) = v[M - 1 + i - j] for v[p] = (p >= M - 1 - k): one copy of a
    # strided view of the short v, where a comparison and a cast took two passes of N x M
    k = builtins.max(builtins.min(k, M), -N)   # j - i is in [1 - N, M - 1]
    v = P.astype(P.greater_equal(arange(N + M - 1, dtype=dt.int64, device=device), M - 1 - k), d)
    return P.copy(as_strided(v, (N, M), (1, -1), M - 1))


@pub()
def mask_indices(n: int, mask_func, k=0) -> tuple:
    """The indices of an n x n matrix where mask_func(ones((n, n)), k) is nonzero, e.g.
    mask_indices(3, T.triu) are the upper triangle's, as NumPy's."""
    n = as_int(n, "n", "mask_indices")
    m = mask_func(ones((n, n), dtype=dt.int64), k)
    return tuple(P.nonzero(P.not_equal(m, 0)))


# ---------------------------------------------------------------- axes and splits


@pub()
def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """a with `axis` moved to before position `start` (NumPy's rollaxis; moveaxis is clearer)."""
    a = tensor_arg(a, "rollaxis")
    n = a.ndim
    axis = norm_axis(axis, n, "rollaxis")
    start = as_int(start, "start", "rollaxis")
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: start {start} is out of range for a tensor of rank {n} "
                         f"(-{n} <= start <= {n})")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return P.view(a, a.shape)
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return P.permute(a, order)


# published (a function and PyTorch's Tensor.dsplit) by tensor/torch_extra3.py, as vdot
def dsplit(ary, indices_or_sections) -> list:
    """split along axis 2 (the depth) of a tensor of rank >= 3, NumPy's split rules."""
    x = tensor_arg(ary, "dsplit")
    if x.ndim < 3:
        raise ValueError(f"dsplit: needs a tensor of rank >= 3, got shape {x.shape}")
    return P.split(x, indices_or_sections, 2)


# ---------------------------------------------------------------- bits


def _bitorder(bitorder: str, op: str) -> bool:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{op}: bitorder must be 'big' or 'little', got {bitorder!r}")
    return bitorder == "little"


def _flat_or_axis(x: Tensor, axis, op: str):
    if axis is None:
        return ravel(x), 0
    return x, norm_axis(axis, x.ndim, op)


@pub()
def packbits(a, axis=None, bitorder: str = "big") -> Tensor:
    """The nonzero-ness of a's elements packed into uint8 bytes, 8 per byte along axis (the
    flattened a when None), the last byte padded with zeros; bitorder 'big' puts the first
    element in the high bit."""
    x = tensor_arg(a, "packbits")
    if x.dtype.kind not in "iub":
        raise TypeError(f"packbits: expects an integer or bool tensor, got {x.dtype.name}")
    little = _bitorder(bitorder, "packbits")
    x, ax = _flat_or_axis(x, axis, "packbits")
    x = P.moveaxis(P.astype(P.not_equal(x, 0), dt.uint8), ax, -1)
    n = x.shape[-1]
    nb = -(-n // 8)
    if nb * 8 != n:
        x = P.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nb * 8 - n)])
    x = P.reshape(x, x.shape[:-1] + (nb, 8))
    w = [1 << i for i in range(8)]
    w = asarray(w if little else w[::-1], dtype=dt.uint8, device=x.device)
    packed = P.astype(P.sum(P.multiply(x, w), axis=-1), dt.uint8)
    return P.moveaxis(packed, -1, ax)


@pub()
def unpackbits(a, axis=None, count=None, bitorder: str = "big") -> Tensor:
    """The bits of a uint8 tensor as a uint8 tensor of 0s and 1s, 8 per byte along axis (the
    flattened a when None); count keeps that many (padded with zeros when past the end; a
    negative count drops that many from the end); bitorder as packbits'."""
    x = tensor_arg(a, "unpackbits")
    if x.dtype is not dt.uint8:
        raise TypeError(f"unpackbits: expects a uint8 tensor, got {x.dtype.name}")
    little = _bitorder(bitorder, "unpackbits")
    x, ax = _flat_or_axis(x, axis, "unpackbits")
    x = P.moveaxis(x, ax, -1)
    sh = [i for i in range(8)]
    sh = asarray(sh if little else sh[::-1], dtype=dt.uint8, device=x.device)
    bits = P.bitwise_and(P.right_shift(P.expand_dims(x, -1), sh), 1)
    bits = P.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = as_int(count, "count", "unpackbits")
        n = bits.shape[-1]
        keep = count if count >= 0 else builtins.max(n + count, 0)
        if keep <= n:
            bits = P.getitem(bits, (Ellipsis, slice(0, keep)))
        else:
            bits = P.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - n)])
    return P.astype(P.moveaxis(bits, -1, ax), dt.uint8)


# ---------------------------------------------------------------- checks and type helpers


@pub()
def real_if_close(a, tol=100) -> Tensor:
    """The real part of a complex tensor whose imaginary parts are all within tol machine
    epsilons of zero (tol itself when tol < 1), else a unchanged."""
    x = tensor_arg(a, "real_if_close")
    if x.dtype.kind != "c":
        return x
    eps = 2.0 ** -23 if x.dtype is dt.complex64 else 2.0 ** -52
    t = tol * eps if tol > 1 else tol
    if x.numel() == 0 or bool(P.all(P.less(P.abs(P.imag(x)), t))):
        return P.real(x)
    return x


@pub()
def iterable(y) -> bool:
    """Whether iter(y) works (a 0-d tensor is not iterable)."""
    if isinstance(y, Tensor):
        return y.ndim > 0
    try:
        iter(y)
    except TypeError:
        return False
    return True


@pub()
def ndindex(*shape):
    """An iterator over the index tuples of a shape, in C order (ndindex(2, 3) or ndindex((2, 3)))."""
    if len(shape) == 1 and not is_scalar(shape[0]):
        shape = tuple(shape[0])
    dims = [as_int(s, "shape", "ndindex") for s in shape]
    if builtins.min(dims, default=0) < 0:
        raise ValueError(f"ndindex: negative dimensions are not allowed, got {tuple(dims)}")
    return itertools.product(*(range(s) for s in dims))


@pub()
def ndenumerate(arr):
    """An iterator of (index tuple, value) over a tensor's elements in C order; the values are
    Python scalars (read from the host once)."""
    t = tensor_arg(arr, "ndenumerate")
    return zip(ndindex(t.shape), host(t))


_INTS = (dt.uint8, dt.int8, dt.uint16, dt.int16, dt.uint32, dt.int32, dt.uint64, dt.int64)


@pub()
def min_scalar_type(a) -> dt.DType:
    """The smallest dtype that holds Python scalar a (an unsigned one for ints >= 0, a float
    one that keeps float a finite); a tensor's own dtype for tensors of rank > 0."""
    if isinstance(a, Tensor):
        if a.ndim > 0:
            return a.dtype
        a = a.item()
    if isinstance(a, bool):
        return dt.bool_
    if isinstance(a, int):
        for d in _INTS:
            lo, hi = dt.iinfo_bounds(d)
            if lo <= a <= hi and (a < 0 or d.kind == "u"):
                return d
        raise OverflowError(f"min_scalar_type: {dt.show_int(a)} fits no integer dtype")
    if isinstance(a, float):
        if not math.isfinite(a) or abs(a) <= 65504.0:
            return dt.float16
        return dt.float32 if abs(a) <= 3.4028234663852886e38 else dt.float64
    if isinstance(a, complex):
        big = builtins.max(abs(a.real), abs(a.imag))
        return dt.complex64 if not math.isfinite(big) or big <= 3.4028234663852886e38 else dt.complex128
    return tensor_arg(a, "min_scalar_type").dtype


@pub()
def common_type(*arrays) -> dt.DType:
    """The float dtype of a common result: the widest float (or complex) among the inputs'
    dtypes, integers counting as float64, as NumPy's common_type."""
    if not arrays:
        raise TypeError("common_type: expects at least one tensor")
    cplx, size = False, 0
    for a in arrays:
        d = a.dtype if isinstance(a, Tensor) else tensor_arg(a, "common_type").dtype
        if d.kind == "b":
            raise TypeError("common_type: can't get a common type for a bool tensor")
        cplx |= d.kind == "c"
        bits = 64 if d.kind in "iu" else (d.itemsize * 8 // (2 if d.kind == "c" else 1))
        size = builtins.max(size, 32 if d is dt.bfloat16 else bits)
    if cplx:
        return dt.complex64 if size <= 32 else dt.complex128
    return {16: dt.float16, 32: dt.float32}.get(size, dt.float64)


# ---------------------------------------------------------------- .npy and .npz files


def host_array(x, op: str):
    """x's values as a NumPy array on the host (a copy for a GPU tensor), for NumPy's file and
    byte forms; a TypeError naming op for a dtype NumPy lacks."""
    t = tensor_arg(x, op)
    if t.dtype.np is None:
        raise TypeError(f"{op}: {t.dtype.name} has no NumPy dtype; cast it first "
                        "(e.g. x.astype(float32))")
    return t.detach().numpy()


@pub()
def save(file, arr, allow_pickle: bool = True, fix_imports=None) -> None:
    """Writes a tensor to a .npy file (NumPy's format, through NumPy; '.npy' is appended to a
    file name without it). Values come to the host first. In PyTorch's order, save(obj, f)
    (the file second), writes a state dict as nn.save (tensor/serialization.py; load reads it)."""
    import os

    import numpy as np
    def target(f):   # a path or a binary file object
        return isinstance(f, str | os.PathLike) or hasattr(f, "write")
    if target(arr) and not target(file):
        return serialization.save(file, arr)   # torch.save(model.state_dict(), "ckpt.pt")
    np.save(file, host_array(arr, "save"), allow_pickle=allow_pickle)


def _savez(fn, file, args, kwds, op):
    named = {f"arr_{i}": a for i, a in enumerate(args)}
    for k, v in kwds.items():
        if k in named:
            raise ValueError(f"{op}: cannot use un-named variables and keyword {k}")
        named[k] = v
    fn(file, **{k: host_array(v, op) for k, v in named.items()})


@pub()
def savez(file, *args, allow_pickle: bool = True, **kwds) -> None:
    """Writes tensors to an uncompressed .npz file: positional ones as arr_0, arr_1..., keyword
    ones under their names (NumPy's format; allow_pickle is NumPy's, unused for tensors)."""
    import numpy as np
    _savez(np.savez, file, args, kwds, "savez")


@pub()
def savez_compressed(file, *args, allow_pickle: bool = True, **kwds) -> None:
    """savez with zip compression."""
    import numpy as np
    _savez(np.savez_compressed, file, args, kwds, "savez_compressed")


class NpzTensors(dict):
    """load()'s result for a .npz file: a dict of name -> tensor that also reads as NumPy's
    NpzFile (`.files`, `with np.load(f) as z:`, `close()`); the values are already read."""

    @property
    def files(self) -> list:
        return list(self)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


@pub()
def load(file, mmap_mode=None, allow_pickle: bool = False, fix_imports=None, encoding: str = "ASCII",
         *, device=None, map_location=None, weights_only=None):
    """Reads a .npy file as a tensor (on device), or a .npz file as a dict of name -> tensor
    (all read at once; it also reads as NumPy's NpzFile: .files, a with block). Pickled objects
    are refused unless allow_pickle, as NumPy's; a file holding an array of a dtype this library
    lacks (strings, objects) is a TypeError. A state dict that save(obj, f) / nn.save wrote
    reads back as nn.load's (PyTorch's torch.load, with its map_location and weights_only)."""
    import numpy as np
    if map_location is not None or weights_only is not None or serialization.is_checkpoint(file):
        return serialization.load(file, map_location if map_location is not None else device,
                                  weights_only=weights_only)
    if mmap_mode is not None:
        raise ValueError("load: mmap_mode is not supported (the values are copied to a tensor)")
    def read(fn):   # a truncated or damaged file: an error naming it (zipfile's, EOFError: not)
        try:
            return fn()
        except (FileNotFoundError, PermissionError, IsADirectoryError):
            raise
        except serialization._DAMAGED as e:
            if "allow_pickle" in str(e):   # NumPy's own refusal of pickled data says it best
                raise
            raise serialization.CheckpointError(
                f"load: {serialization._name(file)!r} is not a readable .npy / .npz file: "
                f"{serialization._why(e)}") from None
    got = read(lambda: np.load(file, allow_pickle=allow_pickle, encoding=encoding))

    def conv(v, name):
        try:
            return asarray(np.ascontiguousarray(v), device=device)
        except (TypeError, ValueError) as e:
            raise TypeError(f"load: {name} of dtype {v.dtype} cannot be a tensor: {e}") from None
    if isinstance(got, np.ndarray):
        return conv(got, "the array")
    with got:
        return NpzTensors((k, conv(read(lambda k=k: got[k]), repr(k))) for k in got.files)
