"""Writing through indices: x[key] = value, index_put_, put_along_axis, index_add, scatter_add.

The key is parsed and turned into element offsets as for reading (tensor/indexing.py: a
bad index raises before anything is written); the value is cast to x's dtype, broadcast to
the indexed shape, and read from a copy when it shares x's memory; then one scatter kernel
writes, in index order (a repeated index: the last assignment wins, additions add up in order).

>>> import tensor as T
>>> x = T.zeros(4, dtype="int64"); x[[1, 3]] = 5; x.tolist()
[0, 5, 0, 5]
"""
from __future__ import annotations

import math

from . import _hook
from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor, contiguous_strides
from .aliasing import check_not_readonly, check_writable
from .axes import norm_axis
from .backend import report
from .elementwise import stable
from .indexing import (
    _along_key,
    _bad_index,
    _be,
    _is_basic,
    _offsets,
    _Plan,
    _plan,
    _rest_axes,
    _tensor_arg,
)
from .views import basic_index, broadcast_to, coalesce, permute, reshape


def check_index_extent(idx: Tensor, src: Tensor, x: Tensor, dim: int, op: str, name: str) -> None:
    """PyTorch's scatter rule: index no larger than src along any dimension, nor than x (called
    `name` in the message) along any but dim."""
    for d in range(x.ndim):
        if idx.shape[d] > src.shape[d] or (d != dim and idx.shape[d] > x.shape[d]):
            raise ValueError(f"{op}: index of shape {idx.shape} is larger than src {src.shape} "
                             f"or {name} {x.shape} along dimension {d} (dim={dim})")


_KIND = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}   # a Python int adds into any integer dtype


def _scalar_kind(v) -> int:
    return 0 if isinstance(v, bool) else 1 if isinstance(v, int) else 3 if isinstance(v, complex) else 2


def _value_for(x: Tensor, value, shape: tuple, op: str = "setitem", accumulate: bool = False) -> Tensor:
    """value cast to x's dtype, broadcast to shape (leading size-1 dims dropped, as NumPy).
    Complex values into a real x raise, as in a basic setitem; an accumulation casts only
    within a kind ('same_kind', as np.add.at and x[key] += value)."""
    host = not isinstance(value, Tensor)  # a scalar, list or NumPy array: copied to x's device
    value = ew.as_operand(value)
    if isinstance(value, Tensor) and value.device != x.device:
        # a tensor on another device moves only when 0-d, as PyTorch's index_put_
        if value.device.type != "cpu" or not (host or value.ndim == 0):
            raise ValueError(f"setitem: the value is on {value.device} but the tensor is on {x.device}; "
                             f"move it with .to({str(x.device)!r})")
        value = value.to(x.device)
    if not isinstance(value, Tensor):
        if accumulate and _scalar_kind(value) > _KIND.get(x.dtype.kind, 0):
            raise TypeError(f"{op}: cannot add the {type(value).__name__} {value!r} into a tensor "
                            f"of dtype {x.dtype.name} (casting rule 'same_kind')")
        t = ew.empty_tensor((), x.dtype, x.device)
        ew.copy_into(t, value)
        value = t
    elif value.dtype is not x.dtype:
        ew.check_real_into(op, value.dtype, x.dtype)
        if accumulate and not dt.can_cast(value.dtype, x.dtype, "same_kind"):
            raise TypeError(f"{op}: cannot add {value.dtype.name} values into a tensor of dtype "
                            f"{x.dtype.name} (casting rule 'same_kind')")
        value = value.astype(x.dtype)
    else:  # the scatter writes x while it reads value, in another order
        value = stable(value, x)
    value = _drop_leading_ones(value, len(shape))
    try:
        return broadcast_to(value, shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {value.shape} could not be broadcast "
                         f"to indexing result of shape {shape}") from None


def _put1(p: _Plan, value, op: str) -> bool:
    """One index array, no other axes, plain assignment (the hot path of x[idx] = v): fused.
    The kernel reads the index while it writes v, so an index that shares v's memory
    (x[x] = ...) is read from a copy."""
    v = p.v
    idx = stable(p.arrays[0], v)
    sh, (ist,) = coalesce(idx.shape, [idx.strides])
    ones = (1,) * (v.ndim - 1)
    val = _value_for(v, value, ones[:p.pos] + idx.shape + ones[p.pos:], op)
    vsh, (vst,) = coalesce(val.shape, [val.strides])
    if len(sh) > 1 or (len(vsh) > 1 or vsh != sh) and vst != [0]:
        return False
    a = p.vaxes[0]
    n = val.numel()
    if n:
        verdict = _be(v).put(v.device, v.itemsize, n, idx.data_ptr(), ist[0] if ist else 0,
                             v.shape[a], v.strides[a], val.data_ptr(), vst[0] if vst else 0,
                             v.data_ptr())
        report(verdict, _bad_index([idx], idx.shape, p.xaxes[:1], [v.shape[a]]))
        v._storage.version += 1
    return True


def _scatter(x: Tensor, key: tuple, value, accumulate: bool, op: str) -> None:
    """x[key] = value (or += with accumulate). Index arrays and masks become offsets in a
    fresh tensor before anything is written; value is read from a copy when it shares x's
    memory (stable), so no operand changes under the kernel."""
    check_writable(x, op)
    p = _plan(x, key)
    v, rest = p.v, _rest_axes(p)
    if (not accumulate and p.mask is None and len(p.arrays) == 1 and all(v.shape[a] == 1 for a in rest)
            and _be(x).put is not None and _put1(p, value, op)):
        return
    rshape, bshape = [v.shape[a] for a in rest], p.bshape
    nb = len(bshape)
    shape = tuple(rshape[:p.pos]) + tuple(bshape) + tuple(rshape[p.pos:])
    val = _value_for(x, value, shape, op, accumulate)  # a bad value shape is reported first, as NumPy
    off, verdict = _offsets(p, None if op == "setitem" else op.rstrip("_"))  # x[k]: NumPy's words
    order = list(range(p.pos, p.pos + nb)) + list(range(p.pos)) + list(range(p.pos + nb, len(shape)))
    val = permute(val, order)
    if val.numel() == 0:
        return
    bsh, (_, vbs) = coalesce(bshape, [contiguous_strides(bshape), val.strides[:nb]])
    rsh, (dst, vrs) = coalesce(rshape, [[v.strides[a] for a in rest], val.strides[nb:]])
    # repeated destinations resolve as in a sequential loop: the last assignment wins
    bounds = None if p.mask is not None else _offset_bounds([v.shape[a] for a in p.vaxes],
                                                            [v.strides[a] for a in p.vaxes])
    _be(x).scatter(x.device, x.dtype, accumulate, bsh, vbs, off, rsh, dst, vrs, v.data_ptr(),
                   val.data_ptr(), bounds, verdict)
    x._storage.version += 1


def _offset_bounds(sizes, xst) -> tuple[int, int, int]:
    """(lo, hi, unit) of the offsets sum_j i_j * xst[j] over 0 <= i_j < sizes[j]: their range,
    and the step every offset - lo is a multiple of (the strides' gcd)."""
    lo = sum(min(0, (n - 1) * s) for n, s in zip(sizes, xst) if n > 0)
    hi = sum(max(0, (n - 1) * s) for n, s in zip(sizes, xst) if n > 0)
    return lo, hi, math.gcd(*(abs(s) for n, s in zip(sizes, xst) if n > 1)) or 1


def _drop_leading_ones(value, ndim: int):
    """value without the leading size-1 dimensions it has beyond ndim (NumPy's setitem rule)."""
    while isinstance(value, Tensor) and value.ndim > ndim and value.shape[0] == 1:
        value = basic_index(value, (0,))
    return value


def setitem(x: Tensor, key, value) -> None:
    """x[key] = value: value broadcast to the indexed shape and cast; repeated indices: last wins.

    >>> import tensor as T
    >>> x = T.zeros(4, dtype="int64"); x[[1, 3]] = 5; x.tolist()
    [0, 5, 0, 5]
    """
    if not isinstance(key, tuple):
        key = (key,)
    check_not_readonly(x, "setitem")   # before the key is read, as NumPy's
    if all(_is_basic(k) for k in key):
        dst = basic_index(x, key)
        ew.copy_into(dst, _drop_leading_ones(ew.as_operand(value), dst.ndim), "setitem")
        return
    _scatter(x, key, value, False, "setitem")


def put_key(key) -> tuple:
    """index_put_'s key as a tuple of per-axis indices: a list holding tensors is PyTorch's list of
    indices, one per axis; any other non-tuple key indexes the first axis (NumPy's)."""
    if isinstance(key, list) and any(isinstance(k, Tensor) for k in key):
        return tuple(key)
    return key if isinstance(key, tuple) else (key,)


def index_put_(x: Tensor, key, value, accumulate: bool = False) -> Tensor:
    """x[key] = value in place; accumulate=True adds instead (repeated indices add up, as np.add.at).

    >>> import tensor as T
    >>> x = T.zeros(3, dtype="int64"); T.scatter.index_put_(x, ([0, 0, 2],), 1, True).tolist()
    [2, 0, 1]

    A list holding tensors is PyTorch's form, one index per axis (x.index_put_([i, j], v) is
    x[i, j] = v); any other key is NumPy's.
    """
    key = put_key(key)
    check_writable(x, "index_put_")
    if not all(_is_basic(k) for k in key):
        _scatter(x, key, value, accumulate, "index_put_")
    elif accumulate:
        v = basic_index(x, key)
        ew.binary("add", v, value, out=v)
    else:
        ew.copy_into(basic_index(x, key), ew.as_operand(value), "index_put_")
    return x


# ---------------------------------------------------------------- along an axis, index_add, scatter_add

def put_along_axis(x: Tensor, indices, values, axis: int | None) -> None:
    """NumPy's put_along_axis (in place): x[..., indices[..., i, ...], ...] = values[..., i, ...].

    >>> import tensor as T
    >>> x = T.zeros((1, 3)); T.scatter.put_along_axis(x, T.tensor([[2]]), 5.0, 1); x.tolist()
    [[0.0, 0.0, 5.0]]
    """
    g = _hook.grad_state
    if g is not None and g.grad_enabled and (x.requires_grad or getattr(values, "requires_grad", False)):
        raise RuntimeError("put_along_axis: not differentiable yet (it would write past autograd); use "
                           "index_put_ with the indices along the axis, or call it under no_grad")
    idx = _tensor_arg(indices, "put_along_axis")
    check_writable(x, "put_along_axis")
    if axis is None:  # scatter into a flat contiguous image of x, then copy back if x is not one
        c = ew.contiguous(x)
        put_along_axis(reshape(c, (-1,)), idx, values, 0)
        if c is not x:
            ew.copy_into(x, c)
        return
    axis = norm_axis(axis, x.ndim, "put_along_axis")
    _scatter(x, _along_key(x, idx, axis, "put_along_axis"), values, False, "put_along_axis")


def index_add_(x: Tensor, axis: int, index, source, alpha=1) -> Tensor:
    """PyTorch's index_add_: x[..., index[i], ...] += alpha * source[..., i, ...] along axis.

    Repeated indices accumulate, in order of i (deterministic).

    >>> import tensor as T
    >>> T.scatter.index_add_(T.zeros(3), 0, [0, 0, 2], T.ones(3)).tolist()
    [2.0, 0.0, 1.0]
    """
    axis = norm_axis(axis, x.ndim, "index_add")
    idx = _tensor_arg(index, "index_add")
    if idx.ndim > 1:
        raise ValueError(f"index_add: index must be 1-d, got shape {idx.shape}")
    idx = reshape(idx, (-1,))
    source = ew.as_operand(source)
    want = x.shape[:axis] + (idx.shape[0],) + x.shape[axis + 1:]
    sshape = source.shape if isinstance(source, Tensor) else ()
    if sshape != want:
        raise ValueError(f"index_add: source of shape {sshape} does not match {want} (x of shape "
                         f"{x.shape}, axis {axis}, {idx.shape[0]} indices)")
    if x.dtype.kind in "biu" and not isinstance(alpha, int):   # (bool is an int)
        raise TypeError(f"index_add: alpha must be an integer for an integer tensor "
                        f"({x.dtype.name}), got {type(alpha).__name__} {alpha!r}")
    if not (isinstance(alpha, int | float) and alpha == 1):
        source = ew.binary("multiply", source, alpha)
    _scatter(x, (slice(None),) * axis + (idx,), source, True, "index_add_")
    return x


def index_add(x: Tensor, axis: int, index, source, alpha=1) -> Tensor:
    """index_add_ on a copy of x."""
    return index_add_(ew.copy(x), axis, index, source, alpha)


def scatter_add_(x: Tensor, axis: int, index, src) -> Tensor:
    """PyTorch's scatter_add_: x[..., index[p], ...] += src[p] for every position p of index.

    >>> import tensor as T
    >>> T.scatter.scatter_add_(T.zeros(3), 0, T.tensor([2, 2, 0]), T.ones(3)).tolist()
    [1.0, 0.0, 2.0]
    """
    axis = norm_axis(axis, x.ndim, "scatter_add")
    idx = _tensor_arg(index, "scatter_add")
    src = ew.as_operand(src)
    if not isinstance(src, Tensor) or not idx.ndim == x.ndim == src.ndim:
        raise ValueError(f"scatter_add: index, self and src must have the same rank, got {idx.shape}, "
                         f"{x.shape} and {getattr(src, 'shape', ())}")
    check_index_extent(idx, src, x, axis, "scatter_add", "self")
    v = basic_index(x, tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(idx.shape)))
    key = _along_key(v, idx, axis, "scatter_add")
    _scatter(v, key, basic_index(src, tuple(slice(0, n) for n in idx.shape)), True, "scatter_add_")
    return x


def scatter_add(x: Tensor, axis: int, index, src) -> Tensor:
    """scatter_add_ on a copy of x."""
    return scatter_add_(ew.copy(x), axis, index, src)
