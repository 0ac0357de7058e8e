"""Zero-copy views: new (shape, strides, offset) over the same storage.

>>> import tensor as T
>>> x = T.arange(12).reshape(3, 4)
>>> y = x[::-1, 1::2]          # a view with a negative stride
>>> y.strides, T.shares_memory(x, y)
((-4, 2), True)
"""
from __future__ import annotations

import operator

import numpy as np

from . import dtypes as dt
from ._tensor import Tensor, contiguous_strides
from .axes import norm_axes, norm_axis, norm_axis_tuple

MAX_BYTES = 2**63 - 1  # NumPy's limit too: byte offsets and sizes are signed 64-bit in every kernel


def check_size(shape: tuple, itemsize: int, op: str, dtype_name: str) -> None:
    """A shape whose bytes (or any one size) exceed what a signed 64-bit offset can address
    raises ValueError naming it (NumPy's "array is too big"), before any allocation or kernel."""
    n = itemsize
    for s in shape:
        n *= s
    if n > MAX_BYTES or not n and shape and max(shape) > MAX_BYTES:
        from .dtypes import show_int
        sh = "(" + ", ".join(map(show_int, shape)) + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{op}: array is too big: shape {sh} of {dtype_name} needs {show_int(n)} bytes, "
                         f"more than the maximum possible size of {MAX_BYTES} bytes")


def _operand(x, op: str) -> Tensor:
    """x itself when a Tensor; a list, NumPy array or scalar becomes one (NumPy's functions take
    array-likes); None, a str or anything else no tensor holds is a TypeError naming op."""
    if isinstance(x, Tensor):
        return x
    if x is None or isinstance(x, str | bytes):
        raise TypeError(f"{op}: expected a tensor or an array-like of numbers, got "
                        f"{'None' if x is None else f'a {type(x).__name__} ({x!r:.40})'}")
    from .convert import asarray
    return asarray(x)


def int_sizes(shape, op: str, what: str = "a sequence of integers") -> tuple:
    """The sizes of a sequence as ints (anything with __index__), a TypeError naming op
    otherwise; a bool is not a size (NumPy and PyTorch refuse it too)."""
    if type(shape) is tuple:   # the common case, a tuple of plain ints: itself (no bool is an int
        for s in shape:        # by type; tensors' own shapes take this way on every view)
            if type(s) is not int:
                break
        else:
            return shape
    try:
        items = tuple(shape)
        out = tuple(operator.index(s) for s in items)
    except TypeError:
        raise TypeError(f"{op}: shape must be {what}, got {shape!r}") from None
    if any(isinstance(s, bool | np.bool_) for s in items):
        raise TypeError(f"{op}: shape must be {what}, got {shape!r} (a bool is not a size)")
    return out


def _shape_arg(shape, op: str) -> tuple:
    if len(shape) == 1 and not isinstance(shape[0], int) and not hasattr(shape[0], "__index__"):
        shape = shape[0]
    return int_sizes(shape, op)


def broadcast_shapes(*shapes, op: str = "broadcast_shapes") -> tuple:
    """NumPy broadcasting of shapes; ValueError naming the op and shapes when they don't fit.
    Each shape is an int or a sequence of non-negative ints (checked: a str, a nested list or
    a negative size is an error, as NumPy's; the trusted internal form is broadcast_shape_tuples)."""
    return broadcast_shape_tuples(*(_shape_of(s, op) for s in shapes), op=op)


def _shape_of(s, op: str) -> tuple:
    if isinstance(s, tuple) and all(type(n) is int and n >= 0 for n in s):
        return s
    if hasattr(s, "__index__") and not isinstance(s, bool | Tensor):
        s = (s,)
    if isinstance(s, str | bytes | Tensor) or not hasattr(s, "__iter__"):
        raise TypeError(f"{op}: a shape must be an int or a sequence of ints, got {s!r:.60}")
    try:
        t = tuple(operator.index(n) for n in s)
    except TypeError:
        raise TypeError(f"{op}: a shape must be an int or a sequence of ints, got {s!r:.60}") from None
    if any(n < 0 for n in t):
        raise ValueError(f"{op}: negative dimensions are not allowed, got shape {t}")
    return t


def broadcast_shape_tuples(*shapes, op: str = "broadcast") -> tuple:
    """broadcast_shapes of shapes known to be tuples of non-negative ints (tensors' shapes)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if n != out[j]:
                if out[j] == 1:
                    out[j] = n
                elif n != 1:
                    raise ValueError(f"{op}: shapes " + " and ".join(str(tuple(x)) for x in shapes)
                                     + " cannot be broadcast together")
    return tuple(out)


def coalesce(shape, strides_list):
    """Drop size-1 dims and merge adjacent dims that are contiguous in every stride list
    (the strides of the operands of one loop); returns (shape, [strides per operand])."""
    sh, st = [], [[] for _ in strides_list]
    for i, n in enumerate(shape):
        if n == 1:
            continue
        if sh and all(s[-1] == t[i] * n for s, t in zip(st, strides_list)):
            sh[-1] *= n
            for s, t in zip(st, strides_list):
                s[-1] = t[i]
        else:
            sh.append(n)
            for s, t in zip(st, strides_list):
                s.append(t[i])
    return sh, st


BROADCAST_RO = "a broadcast view: several of its elements share one memory location"


def broadcast_to(x: Tensor, shape, op: str = "broadcast_to") -> Tensor:
    """x viewed as `shape` (stride 0 on the broadcast axes); x itself when the shape is x's.
    A view that repeats elements is read-only, as NumPy's (a write would land in one memory
    location several times)."""
    shape = _shape_arg((shape,), op)   # an int, or a sequence of them
    if shape == x._shape:
        return x
    nd, xd = len(shape), x.ndim
    if nd < xd:
        raise ValueError(f"{op}: cannot broadcast shape {x.shape} to {shape} (fewer dimensions)")
    if any(n < 0 for n in shape):
        raise ValueError(f"{op}: cannot broadcast shape {x.shape} to {shape} (negative size)")
    check_size(shape, x.itemsize, op, x._dtype.name)
    strides = [0] * nd
    repeats = any(n > 1 for n in shape[:nd - xd])
    for i in range(xd):
        j = nd - xd + i
        n = x._shape[i]
        if n == shape[j]:
            strides[j] = x._strides[i]
        elif n != 1:
            raise ValueError(f"{op}: cannot broadcast shape {x.shape} to {shape}")
        elif shape[j] > 1:
            repeats = True
    v = x._view(shape, strides)
    if repeats:
        v._ro = BROADCAST_RO
    return v


def broadcast_view(x: Tensor, shape) -> Tensor:
    """NumPy's broadcast_to: always a new, read-only view (even when the shape is x's).

    >>> import tensor as T
    >>> T.broadcast_to(T.arange(3), (2, 3)).flags.writeable
    False
    """
    v = broadcast_to(x, shape)
    if v is x:
        v = x._view(x._shape, x._strides)
    if v._ro is not BROADCAST_RO:
        v._ro = "a broadcast_to view (read-only, as NumPy's)"
    return v


def expand(x: Tensor, *sizes) -> Tensor:
    """PyTorch's expand: -1 keeps a dimension."""
    x = _operand(x, "expand")
    sizes = _shape_arg(sizes, "expand")
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ValueError(f"expand: cannot expand shape {x.shape} to {sizes} (fewer dimensions)")
    shape = tuple(x._shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    return broadcast_to(x, shape, "expand")


def transpose(x: Tensor, *axes) -> Tensor:
    """NumPy's transpose: reverse the axes, or permute them by `axes`. Two axes of a tensor
    whose rank is not 2 (which NumPy refuses) are PyTorch's transpose(dim0, dim1): they swap
    (`k.transpose(-2, -1)`); of a matrix, NumPy's permutation ((0, 1) leaves it as it is)."""
    x = _operand(x, "transpose")
    if not axes or (len(axes) == 1 and axes[0] is None):
        return x._view(x._shape[::-1], x._strides[::-1])
    if torch_swap(x, axes):
        return swapaxes(x, *axes)
    return permute(x, *axes)


def torch_swap(x: Tensor, axes: tuple) -> bool:
    """Whether transpose(x, *axes) is PyTorch's swap of two axes (see transpose)."""
    return len(axes) == 2 and x.ndim != 2 and all(isinstance(a, int) for a in axes)


def permute(x: Tensor, *axes) -> Tensor:
    x = _operand(x, "permute")
    if len(axes) == 1 and not isinstance(axes[0], int) and not hasattr(axes[0], "__index__"):
        axes = tuple(axes[0])
    if len(axes) != x.ndim:
        raise ValueError(f"permute: axes {tuple(axes)} don't match a tensor of rank {x.ndim}")
    ax = norm_axis_tuple(axes, x.ndim, "permute", "axes")
    return x._view([x._shape[a] for a in ax], [x._strides[a] for a in ax])


def swapaxes(x: Tensor, axis1: int, axis2: int) -> Tensor:
    x = _operand(x, "swapaxes")
    a, b = norm_axis(axis1, x.ndim, "swapaxes"), norm_axis(axis2, x.ndim, "swapaxes")
    perm = list(range(x.ndim))
    perm[a], perm[b] = b, a
    return x._view([x._shape[i] for i in perm], [x._strides[i] for i in perm])


def moveaxis(x: Tensor, source, destination) -> Tensor:
    x = _operand(x, "moveaxis")
    src = norm_axis_tuple(source, x.ndim, "moveaxis", "source")
    dst = norm_axis_tuple(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must have the same "
                         "number of axes")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, *order)


def matrix_transpose(x: Tensor) -> Tensor:
    x = _operand(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"mT: needs a tensor of rank >= 2, got shape {x.shape}")
    return swapaxes(x, -1, -2)


def _infer_shape(shape: tuple, numel: int, op: str, old_shape) -> tuple:
    known, neg, bad = 1, [], False
    for i, s in enumerate(shape):   # (one pass: this runs on every reshape and view)
        if s >= 0:
            known *= s
        elif s == -1:
            neg.append(i)
        else:
            bad = True
    if len(neg) > 1:
        raise ValueError(f"{op}: only one dimension can be -1, got {shape}")
    if bad:
        raise ValueError(f"{op}: invalid shape {shape}")
    if neg:
        if known == 0 or numel % known:
            raise ValueError(f"{op}: cannot reshape tensor of shape {old_shape} into {shape}")
        shape = shape[:neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise ValueError(f"{op}: cannot reshape tensor of shape {old_shape} ({numel} elements) "
                         f"into {shape} ({known} elements)")
    return shape


def _view_strides(old_shape, old_strides, new_shape):
    """Strides for viewing (old_shape, old_strides) as new_shape without a copy, or None.

    Old dimensions are grouped into chunks that are contiguous with each other; each chunk
    must be covered exactly by consecutive new dimensions."""
    new_strides = [0] * len(new_shape)
    vd = len(new_shape) - 1
    base = old_strides[-1]
    t_numel = v_numel = 1
    for td in range(len(old_shape) - 1, -1, -1):
        t_numel *= old_shape[td]
        if td == 0 or (old_shape[td - 1] != 1 and old_strides[td - 1] != t_numel * base):
            while vd >= 0 and (v_numel < t_numel or new_shape[vd] == 1):
                new_strides[vd] = v_numel * base
                v_numel *= new_shape[vd]
                vd -= 1
            if v_numel != t_numel:
                return None
            if td > 0:
                base = old_strides[td - 1]
                t_numel = v_numel = 1
    return new_strides if vd == -1 else None


def _try_view(x: Tensor, shape: tuple, op: str):
    shape = _infer_shape(shape, x.numel(), op, x.shape)
    if shape == x._shape:
        return shape, x._strides
    if x.is_contiguous() or x.numel() == 0 or x.ndim == 0:
        return shape, contiguous_strides(shape)
    return shape, _view_strides(x._shape, x._strides, shape)


def view(x: Tensor, *shape) -> Tensor:
    """Reshape without copying; an error when the strides do not allow it."""
    x = _operand(x, "view")
    shape, strides = _try_view(x, _shape_arg(shape, "view"), "view")
    if strides is None:
        raise ValueError(f"view: a tensor of shape {x.shape} and strides {x.strides} cannot be "
                         f"viewed as shape {shape} without a copy; use reshape() (copies when "
                         "needed) or call contiguous() first")
    return x._view(shape, strides)


def reshape(x: Tensor, shape=None, *dims, order: str = "C", copy: bool | None = None) -> Tensor:
    """A view when the strides allow it, else a contiguous copy. The shape comes as a tuple
    (the array API standard's `shape`, also by keyword) or as separate ints (PyTorch's);
    copy=True always copies, copy=False refuses to (a ValueError where no view exists).
    order='F' (NumPy's) reads and places the elements with the first index changing fastest;
    'A' is 'F' for a Fortran-contiguous x that is not C-contiguous, else 'C'."""
    x = _operand(x, "reshape")
    if shape is None:   # x.reshape(*()) as the old *dims took it: 0-d
        shape = ()
    if order not in ("C", "F", "A"):
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    if order == "A":
        if x.requires_grad:   # autograd's rule reads the order given: 'A' depends on the layout
            raise NotImplementedError("reshape: order='A' of a tensor that requires grad is not "
                                      "supported; pass order='C' or 'F'")
        order = "F" if x.ndim > 1 and not x.is_contiguous() and transpose(x).is_contiguous() else "C"
    if order == "F":
        rev = tuple(_shape_arg((shape,) + dims, "reshape"))[::-1]
        return transpose(reshape(transpose(x), rev, copy=copy))
    shape, strides = _try_view(x, _shape_arg((shape,) + dims, "reshape"), "reshape")
    if copy is False and strides is None:
        raise ValueError(f"reshape: a tensor of shape {x.shape} and strides {x.strides} cannot "
                         f"be reshaped to {shape} without a copy (copy=False)")
    if copy or strides is None:
        c = x.contiguous() if not x.is_contiguous() else x.copy() if copy else x
        return c._view(shape, contiguous_strides(shape))
    return x._view(shape, strides)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    x = _operand(x, "flatten")
    if x.ndim == 0:
        return reshape(x, (1,))
    s = norm_axis(start_dim, x.ndim, "flatten")
    e = norm_axis(end_dim, x.ndim, "flatten")
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    n = 1
    for d in x._shape[s:e + 1]:
        n *= d
    return reshape(x, x._shape[:s] + (n,) + x._shape[e + 1:])


def ravel(x: Tensor, order: str = "C") -> Tensor:
    """A contiguous 1-D tensor of x's elements; a view when x is contiguous (NumPy's and
    PyTorch's ravel; reshape(-1) keeps a strided 1-D view instead). order='F' reads them with
    the first index changing fastest (NumPy's; 'A' and 'K', which follow the memory layout,
    are not supported)."""
    x = _operand(x, "ravel")
    if order not in ("C", "F"):
        raise ValueError(f"ravel: order must be 'C' or 'F', got {order!r} ('A' and 'K', which "
                         "follow the memory layout, are not supported)")
    if order == "F":
        x = transpose(x)
    return reshape(x, (-1,)).contiguous()


def squeeze(x: Tensor, axis=None) -> Tensor:
    x = _operand(x, "squeeze")
    if axis is None:
        keep = [i for i, n in enumerate(x._shape) if n != 1]
    elif x.ndim == 0 and hasattr(axis, "__index__") and axis.__index__() in (0, -1):
        keep = []   # NumPy's and PyTorch's: axis 0 (or -1) of a 0-d tensor is the tensor itself
    else:
        axes = norm_axes(axis, x.ndim, "squeeze")
        for a in axes:
            if x._shape[a] != 1:
                raise ValueError(f"squeeze: cannot select axis {a} of size {x._shape[a]} "
                                 f"(shape {x.shape}); only size-1 axes can be squeezed")
        keep = [i for i in range(x.ndim) if i not in axes]
    return x._view([x._shape[i] for i in keep], [x._strides[i] for i in keep])


def expand_dims(x: Tensor, axis) -> Tensor:
    x = _operand(x, "expand_dims")
    if axis is None:   # norm_axes would read None as "every axis" (NumPy: a TypeError)
        raise TypeError(f"expand_dims: axis must be an int or a tuple of ints, got {axis!r}")
    if not (hasattr(axis, "__index__") or isinstance(axis, str | bytes)) and hasattr(axis, "__iter__"):
        axis = tuple(axis)
    count = len(axis) if isinstance(axis, tuple) else 1  # the new rank counts the new axes
    axes = norm_axes(axis, x.ndim + count, "expand_dims")
    shape, strides = list(x._shape), list(x._strides)
    for a in axes:
        st = strides[a] * shape[a] if a < len(shape) else 1
        shape.insert(a, 1)
        strides.insert(a, st)
    return x._view(shape, strides)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    return expand_dims(x, dim)


def diagonal(x: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The diagonal as a view, appended as the last axis (NumPy's rule)."""
    x = _operand(x, "diagonal")
    if type(offset) is not int:
        try:
            offset = operator.index(offset)
        except TypeError:
            raise TypeError(f"diagonal: offset must be an int, got {type(offset).__name__}") from None
    nd = len(x._shape)
    if nd < 2:
        raise ValueError(f"diagonal: needs a tensor of rank >= 2, got shape {x.shape}")
    # (plain ints in range, the common axes, without norm_axis' call)
    a1 = axis1 + (nd if axis1 < 0 else 0) if type(axis1) is int and -nd <= axis1 < nd else \
        norm_axis(axis1, nd, "diagonal")
    a2 = axis2 + (nd if axis2 < 0 else 0) if type(axis2) is int and -nd <= axis2 < nd else \
        norm_axis(axis2, nd, "diagonal")
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, both are {a1}")
    n1, n2 = x._shape[a1], x._shape[a2]
    s1, s2 = x._strides[a1], x._strides[a2]
    off = x._offset
    if offset >= 0:
        n = max(0, min(n1, n2 - offset))
        if n:
            off += offset * s2
    else:
        n = max(0, min(n1 + offset, n2))
        if n:
            off -= offset * s1
    if nd == 2:
        return x._view((n,), (s1 + s2,), off)
    rest = [i for i in range(nd) if i != a1 and i != a2]
    return x._view([x._shape[i] for i in rest] + [n], [x._strides[i] for i in rest] + [s1 + s2], off)


def as_strided(x: Tensor, shape, strides, offset: int | None = None) -> Tensor:
    """A view with explicit shape, element strides and storage offset; checked against the storage.
    It keeps x's writeable flag (as NumPy's), but a write into it raises ValueError when two of
    its elements share a memory location (a zero or folding stride; see tensor.aliasing)."""
    x = _operand(x, "as_strided")
    shape, strides = tuple(map(operator.index, shape)), tuple(map(operator.index, strides))
    if len(shape) != len(strides):
        raise ValueError(f"as_strided: shape {shape} and strides {strides} differ in length")
    if any(n < 0 for n in shape):
        raise ValueError(f"as_strided: negative size in shape {shape}")
    off = x._offset if offset is None else operator.index(offset)
    check_size(shape, x.itemsize, "as_strided", x._dtype.name)
    big = (2**63 - 1) // x.itemsize   # kernels address in int64 bytes
    if off < 0 or off > big or any(abs(s) > big for s in strides):
        raise ValueError(f"as_strided: strides {strides} and offset {off} must address within int64 "
                         f"(|stride| and offset at most {big} elements of {x._dtype.name}; offset >= 0)")
    if 0 not in shape:
        lo = off + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
        hi = off + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
        cap = x._storage.nbytes // x.itemsize
        if lo < 0 or hi >= cap:
            raise ValueError(f"as_strided: shape {shape}, strides {strides}, offset {off} reach "
                             f"elements [{lo}, {hi}] outside the storage of {cap} elements")
    return x._view(shape, strides, off)


def view_as_real(x: Tensor) -> Tensor:
    """A complex tensor's memory seen as its parts' real dtype, with a last axis of 2 (real,
    imaginary): a view (PyTorch's view_as_real)."""
    x = _operand(x, "view_as_real")
    if x._dtype.kind != "c":
        raise TypeError(f"view_as_real: expected a complex tensor, got {x._dtype.name}")
    return _retyped(x, x._shape + (2,), tuple(2 * s for s in x._strides) + (1,), 2 * x._offset,
                    dt.real_of(x._dtype))


def complex_part(x: Tensor, k: int) -> Tensor:
    """The real (k = 0) or imaginary (k = 1) part of a complex tensor: a view in its real dtype."""
    return _retyped(x, x._shape, tuple(2 * s for s in x._strides), 2 * x._offset + k,
                    dt.real_of(x._dtype))


def view_as_complex(x: Tensor) -> Tensor:
    """A float32 / float64 tensor whose last axis is (real, imaginary) pairs seen as complex: a
    view, so the pairs must be adjacent and every other stride and the offset even."""
    x = _operand(x, "view_as_complex")
    if x._dtype not in (dt.float32, dt.float64):
        raise TypeError(f"view_as_complex: expected a float32 or float64 tensor, got {x._dtype.name}")
    if not x._shape or x._shape[-1] != 2 or x._strides[-1] != 1:
        raise ValueError(f"view_as_complex: the last axis must have size 2 and stride 1, got shape "
                         f"{x.shape} and strides {x.strides}")
    if x._offset % 2 or any(s % 2 for s in x._strides[:-1]):
        raise ValueError(f"view_as_complex: strides {x.strides} (but the last) and offset "
                         f"{x._offset} must be even, to address whole complex elements")
    return _retyped(x, x._shape[:-1], tuple(s // 2 for s in x._strides[:-1]), x._offset // 2,
                    dt.complex_of(x._dtype))


def view_dtype(x: Tensor, dtype) -> Tensor:
    """x's memory read as another dtype, without a copy (PyTorch's x.view(dtype), NumPy's
    ndarray.view(dtype)): the bits as they are. Between dtypes of different sizes the last
    axis changes length (float32 -> uint8: 4x as long) and must have stride 1; a longer
    element needs the last length, the other strides and the offset divisible by the ratio.
    Not differentiable (as PyTorch's): the result never requires grad."""
    x = _operand(x, "view")
    d = dt.dtype(dtype)
    old, new = x._dtype.itemsize, d.itemsize
    shape, strides, off = list(x._shape), list(x._strides), x._offset
    if new != old:
        what = f"view: a {x._dtype.name} tensor of shape {x.shape}, strides {x.strides}"
        if not shape:
            raise ValueError(f"{what} cannot be viewed as {d.name}: a 0-d tensor can only be viewed as "
                             "a dtype of the same size")
        if strides[-1] != 1 and shape[-1] != 1:
            raise ValueError(f"{what} cannot be viewed as {d.name} (another element size): the last "
                             "axis must have stride 1; call contiguous() first")
        if new < old:
            r = old // new
            shape[-1] *= r
            strides = [s * r for s in strides[:-1]] + [1]
            off *= r
        else:
            r = new // old
            if shape[-1] % r or off % r or any(s % r for s, n in zip(strides[:-1], shape[:-1]) if n > 1):
                raise ValueError(f"{what} and offset {off} cannot be viewed as {d.name}: the last "
                                 f"axis's length, the other strides and the offset must be multiples "
                                 f"of {r} ({d.name} is {r}x as wide)")
            shape[-1] //= r
            strides = [s // r for s in strides[:-1]] + [1]
            off //= r
    t = Tensor._make(x._storage, tuple(shape), tuple(strides), off, d)
    ro = x._ro
    if ro is not None:   # read-only stays read-only
        t._ro = x if ro is True else ro
    return t


def _retyped(x: Tensor, shape, strides, offset: int, d) -> Tensor:
    t = x._view(shape, strides, offset)
    t._dtype = d
    return t


def flip(x: Tensor, axis=None) -> Tensor:
    """Reverse the order of elements along axes (a view with negative strides, as NumPy)."""
    x = _operand(x, "flip")
    axes = norm_axes(axis, x.ndim, "flip")
    strides, off = list(x._strides), x._offset
    for a in axes:
        if x._shape[a] > 0:
            off += (x._shape[a] - 1) * strides[a]
        strides[a] = -strides[a]
    return x._view(x._shape, strides, off)


def basic_index(x: Tensor, key: tuple) -> Tensor:
    """Ints, slices, None and Ellipsis only (the caller checked): a view."""
    n_ell = used = 0
    for k in key:
        if k is Ellipsis:
            n_ell += 1
        elif k is not None:
            used += 1
    if n_ell > 1:
        raise IndexError("index: an index can only have a single ellipsis ('...')")
    if used > len(x._shape):
        raise IndexError(f"index: too many indices for a tensor of rank {x.ndim}: {used} given")
    if n_ell:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - used) + key[i + 1:]
    shape, strides, off, d = [], [], x._offset, 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, st = x._shape[d], x._strides[d]
        if type(k) is slice:
            start, stop, step = k.indices(n)
            m = len(range(start, stop, step))
            if m:
                off += start * st
            shape.append(m)
            # one element or none: the step is never taken (and a huge one would overflow int64)
            strides.append(st * step if m > 1 else st)
        else:
            i = k if type(k) is int else operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            off += (i + n if i < 0 else i) * st
        d += 1
    shape.extend(x._shape[d:])
    strides.extend(x._strides[d:])
    return x._view(shape, strides, off)


def distinct(t: Tensor) -> Tensor:
    """t without its broadcast axes (index 0 along each zero stride): its distinct elements
    (t itself when it has none)."""
    if 0 not in t.strides:
        return t
    return basic_index(t, tuple(slice(0, 1) if s == 0 else slice(None) for s in t.strides))


# gemm_add's dk (gemm.c's GM_D_*, gemm.cuh's sx_gemm_args): the addend D of C's dtype, D of
# float32, or no D read (beta 0: alpha * product only)
GEMM_D_SAME, GEMM_D_F32, GEMM_D_SCALE = 1, 2, 3


def gemm_add_mode(c: Tensor, d, beta) -> int:
    """gemm_add's dk on either backend for output c, addend d (or None) and beta; TypeError for
    what its kernels do not take (the op layer sends float dtypes, 2-D or 3-D, d of c's dtype or
    float32)."""
    if c.dtype.kind != "f" or len(c._shape) not in (2, 3):
        raise TypeError(f"gemm_add: float matrices or one batch of them, got {c.dtype.name} "
                        f"{c._shape}")
    if beta == 0 or d is None:
        return GEMM_D_SCALE
    if d.dtype is c.dtype:
        return GEMM_D_SAME
    if d.dtype is dt.float32:
        return GEMM_D_F32
    raise TypeError(f"gemm_add: the addend is {d.dtype.name}, expected {c.dtype.name} or float32")


def gemm_batches(a: Tensor, b: Tensor, c: Tensor):
    """The launches of a batched gemm c = a @ b (a: (*batch, M, K), b: (*batch, K, N),
    c: (*batch, M, N), broadcast batch strides allowed): the batch dims are coalesced jointly
    and all but the innermost one looped over here. Yields (count, pa, sa, pb, sb, pc, sc):
    base addresses and batch strides (in elements) of one launch per operand."""
    isz = c.dtype.itemsize
    dims = []
    for i in range(c.ndim - 2):
        n = c.shape[i]
        if n == 1:
            continue
        sa, sb, sc = a.strides[i], b.strides[i], c.strides[i]
        if dims and dims[-1][1] == sa * n and dims[-1][2] == sb * n and dims[-1][3] == sc * n:
            dims[-1] = [dims[-1][0] * n, sa, sb, sc]
        else:
            dims.append([n, sa, sb, sc])
    if not dims:
        dims = [[1, 0, 0, 0]]
    inner, outer = dims[-1], dims[:-1]
    pa0, pb0, pc0 = a.data_ptr(), b.data_ptr(), c.data_ptr()
    idx = [0] * len(outer)
    while True:
        oa = sum(i * s[1] for i, s in zip(idx, outer)) * isz
        ob = sum(i * s[2] for i, s in zip(idx, outer)) * isz
        oc = sum(i * s[3] for i, s in zip(idx, outer)) * isz
        yield inner[0], pa0 + oa, inner[1], pb0 + ob, inner[2], pc0 + oc, inner[3]
        k = len(outer) - 1
        while k >= 0:
            idx[k] += 1
            if idx[k] < outer[k][0]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return
