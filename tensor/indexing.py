"""Indexing: basic (views) and advanced (integer arrays, boolean masks); reading here, writing
in tensor/scatter.py.

Advanced indexing follows NumPy: the basic part of the key becomes a view, the index
arrays broadcast together into the index shape B, a C kernel turns them into element
offsets (wrapping negatives and bounds-checking before anything is written), and a
gather/scatter kernel moves the elements; B goes where the first advanced index is when
all advanced indices are adjacent, else in front.

>>> import tensor as T
>>> x = T.arange(12).reshape(3, 4)
>>> x[[0, 2], 1:3].tolist(), x[x % 5 == 0].tolist()
([[1, 2], [9, 10]], [0, 5, 10])
>>> x[[0, 0], [1, 1]] = T.tensor([7, 8]); int(x[0, 1])    # the last write wins
8
"""
from __future__ import annotations

import operator

import cffi
import numpy as np

from . import dtypes as dt
from . import elementwise as ew
from ._tensor import Tensor, contiguous_strides
from .axes import norm_axes, norm_axis
from .backend import backend_for, report
from .convert import asarray
from .views import basic_index, broadcast_shape_tuples, broadcast_to, coalesce, permute, reshape

_ffi = cffi.FFI()


def _be(t: Tensor):
    return backend_for(t._storage.device)


def _on(t: Tensor, device, what: str = "an index") -> Tensor:
    """t on `device`: host (CPU) tensors are copied over; a device tensor never moves to the host."""
    if device is None or t.device == device:
        return t
    if t.device.type != "cpu":
        raise ValueError(f"indexing: {what} on {t.device} cannot be used with a tensor on {device}; "
                         f"move it with .to({str(device)!r})")
    return t.to(device)


# ---------------------------------------------------------------- parsing the key

def _is_int(k) -> bool:
    if isinstance(k, bool | np.bool_ | Tensor):
        return False
    return isinstance(k, int | np.integer) or (hasattr(k, "__index__") and not hasattr(k, "shape"))


def _is_basic(k) -> bool:
    return k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k)


def _as_index_tensor(k, device=None) -> Tensor:
    if isinstance(k, Tensor):
        t = k
    else:
        a = np.asarray(k)  # NumPy only parses the host-side key here
        if a.dtype.kind not in "biu":
            if a.size == 0 and a.dtype.kind == "f":  # x[[]]: NumPy treats [] as an empty int index
                a = a.astype(np.int64)
            else:
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
        if isinstance(k, np.ndarray):
            return _on(_u64_capped(asarray(a)), device)  # zero-copy on the CPU
        a = np.asarray(a, np.bool_ if a.dtype.kind == "b" else np.int64, order="C")
        t = ew.empty_tensor(a.shape, dt.bool_ if a.dtype.kind == "b" else dt.int64)
        _ffi.memmove(_ffi.cast("char *", t.data_ptr()), _ffi.from_buffer(a), a.nbytes)
    if t.dtype.kind not in "biu":
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got {t.dtype.name}")
    return _on(_u64_capped(t), device)


def _u64_capped(t: Tensor) -> Tensor:
    """Index kernels read int64: a uint64 index past int64 would wrap to a negative one (a valid
    index from the end); capped at int64's max it stays out of bounds and raises."""
    return ew.binary("minimum", t, 2**63 - 1) if t.dtype is dt.uint64 else t


def _entries(key: tuple, device=None) -> list:
    """Classify each key item: ('none'|'ell'|'slice'|'int'|'arr'|'mask'|'bool0', value)."""
    out = []
    for k in key:
        if k is None:
            out.append(("none", None))
        elif k is Ellipsis:
            out.append(("ell", None))
        elif isinstance(k, slice):
            out.append(("slice", k))
        elif isinstance(k, bool | np.bool_):
            out.append(("bool0", bool(k)))
        elif _is_int(k):
            out.append(("int", operator.index(k)))
        elif isinstance(k, Tensor | np.ndarray | list | tuple):
            t = _as_index_tensor(k, device)
            if t.ndim == 0:  # 0-d arrays act as (eagerly checked) scalars, but the result copies
                out.append(("bool0", bool(t.item())) if t.dtype is dt.bool_ else ("int", int(t.item())))
            else:
                out.append(("mask", t) if t.dtype is dt.bool_ else ("arr", t))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and integer or "
                             f"boolean arrays are valid indices, got {type(k).__name__}")
    return out


class _Plan:
    """An advanced key applied to x: view v, index arrays on v's axes, output placement."""
    __slots__ = ("v", "arrays", "vaxes", "xaxes", "pos", "mask", "bshape")


def _plan(x: Tensor, key: tuple) -> _Plan:
    ents = _entries(key, x.device)
    if sum(1 for e in ents if e[0] == "ell") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(e[1].ndim if e[0] == "mask" else 1 for e in ents if e[0] in ("slice", "int", "arr", "mask"))
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, "
                         f"but {used} were indexed")
    basic, arrays, vaxes, xaxes, adv, pos, vd, xd = [], [], [], [], [], None, 0, 0
    for i, (kind, k) in enumerate(ents):
        if kind in ("int", "arr", "mask", "bool0"):
            adv.append(i)
            pos = vd if pos is None else pos
        if kind in ("none", "slice", "int"):
            basic.append(k)
            vd, xd = vd + (kind != "int"), xd + (kind != "none")
        elif kind == "ell":
            basic += [slice(None)] * (x.ndim - used)
            vd, xd = vd + x.ndim - used, xd + x.ndim - used
        elif kind == "bool0":  # a new axis of size 1, indexed by [0] (True) or [] (False)
            from .creation import zeros
            basic.append(None)
            arrays.append(zeros((1 if k else 0,), dtype=dt.int64, device=x.device))
            vaxes.append(vd)
            xaxes.append(None)
            vd += 1
        else:  # an index array (one axis) or a mask (k.ndim axes)
            m = k.ndim if kind == "mask" else 1
            if kind == "mask":
                _check_mask(x, k, xd)
            basic += [slice(None)] * m
            arrays.append(k)
            vaxes.append(tuple(range(vd, vd + m)) if kind == "mask" else vd)
            xaxes.append(xd)
            vd, xd = vd + m, xd + m
    p = _Plan()
    p.v = basic_index(x, tuple(basic))
    p.pos = pos if adv[-1] - adv[0] + 1 == len(adv) else 0
    p.mask = arrays[0] if len(adv) == 1 and ents[adv[0]][0] == "mask" else None
    if p.mask is not None:  # a lone mask gives offsets straight away; else masks become coordinates
        p.mask = ew.contiguous(p.mask)
        p.bshape = (_be(p.mask).count_nonzero(p.mask),)
        return p
    p.arrays, p.vaxes, p.xaxes = _expand_masks(arrays, vaxes, xaxes)
    try:
        p.bshape = broadcast_shape_tuples(*[a.shape for a in p.arrays])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(a.shape) for a in p.arrays)) from None
    return p


def _check_mask(x: Tensor, m: Tensor, xd: int) -> None:
    for j, n in enumerate(m.shape):
        if n and x.shape[xd + j] != n:  # NumPy lets an empty mask axis pass
            raise IndexError(f"boolean index did not match indexed array along axis {xd + j}; size of "
                             f"axis is {x.shape[xd + j]} but size of corresponding boolean axis is {n}")


def _expand_masks(arrays, vaxes, xaxes):
    a2, v2, x2 = [], [], []
    for a, v, xa in zip(arrays, vaxes, xaxes):
        if isinstance(v, tuple):
            coords = nonzero(a)
            a2 += coords
            v2 += list(v)
            x2 += [xa + j for j in range(len(coords))]
        else:
            a2.append(a if a.dtype is dt.int64 else a.astype(dt.int64))
            v2.append(v)
            x2.append(xa)
    return a2, v2, x2


# ---------------------------------------------------------------- offsets

def _offsets(p: _Plan, op: str | None = None) -> tuple[Tensor, object]:
    """(flat int64 offsets into p.v over the index shape B, the verdict of their check). A bad
    index raises IndexError before anything is written: now on the CPU, at the next
    synchronization on a GPU (tensor.backend.report; meanwhile its offset is a valid one and a
    scatter guarded by the verdict writes nothing). Its message names op where one is given
    (index_add, scatter_add...; a plain x[key] has NumPy's message)."""
    v, bshape = p.v, p.bshape
    if p.mask is not None:
        m, (n,) = p.mask, bshape
        off = ew.empty_tensor((n,), dt.int64, v.device)
        st = [v.strides[a] for a in range(p.pos, p.pos + m.ndim)]
        if n:
            _fill_nonzero(m, 1, off=off, st=st)
        return off, -1
    if not p.arrays:  # only scalar indices: the view already points at the element
        return ew.empty_tensor((), dt.int64, v.device).fill_(0), -1
    arrs = [broadcast_to(a, bshape) for a in p.arrays]
    off = ew.empty_tensor(bshape, dt.int64, v.device)
    n = off.numel()
    if not n:
        return off, -1
    sizes = [v.shape[a] for a in p.vaxes]
    bad = _bad_index(arrs, bshape, p.xaxes, sizes, op)
    if 0 in sizes:   # every index is out of range, and no offset is safe to read: raise now
        bad(sizes.index(0) * n)
    sh, sts = coalesce(bshape, [a.strides for a in arrs])
    if not sh:
        sh, sts = [1], [[0] for _ in arrs]
    verdict = _be(v).index_offsets(v.device, sh, [a.data_ptr() for a in arrs], sts, sizes,
                                   [v.strides[a] for a in p.vaxes], off)
    report(verdict, bad)
    return off, verdict


def _bad_index(arrs, bshape, xaxes, sizes, op: str | None = None):
    """The raise of an index check over index arrays arrs (broadcast to bshape) into axes of
    the given sizes: its code j * n + p names array j at flat position p. It keeps only what
    the message needs (a deferred check holds it until the next synchronization)."""
    n = 1
    for s in bshape:
        n *= s

    def raise_bad(code: int):
        j, lin = divmod(code, n)
        at = tuple(int(i) for i in np.unravel_index(lin, bshape))
        val = int(basic_index(arrs[j], at).item())
        more = " or more" if val == 2**63 - 1 else ""   # (a uint64 index past int64, clamped)
        raise IndexError(f"{op + ': ' if op else ''}index {val}{more} is out of bounds for axis "
                         f"{xaxes[j]} with size {sizes[j]}")
    return raise_bad


def _rest_axes(p: _Plan) -> list:
    used = set(p.vaxes) if p.mask is None else set(range(p.pos, p.pos + p.mask.ndim))
    return [a for a in range(p.v.ndim) if a not in used]


# ---------------------------------------------------------------- read and write

def getitem(x: Tensor, key) -> Tensor:
    """x[key] with NumPy's semantics: a view for basic keys, a copy for advanced ones.

    >>> import tensor as T
    >>> T.arange(6).reshape(2, 3)[:, [2, 0]].tolist()
    [[2, 0], [5, 3]]
    """
    if type(key) is int and x._shape:   # x[i]: the hot path of a loop over rows
        n = x._shape[0]
        if -n <= key < n:
            return x._view(x._shape[1:], x._strides[1:], x._offset + (key % n) * x._strides[0])
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:   # (the common kinds by type first: _is_basic costs ~0.5 us a key)
        tk = type(k)
        if tk is not slice and tk is not int and k is not None and k is not Ellipsis \
                and not _is_basic(k):
            break
    else:
        return basic_index(x, key)
    p = _plan(x, key)
    if p.mask is None and len(p.arrays) == 1 and all(p.v.shape[a] == 1 for a in _rest_axes(p)):
        out = _take1(p)
        if out is not None:
            return out
    (off, _), bshape = _offsets(p), p.bshape
    v, rest = p.v, _rest_axes(p)
    rshape = [v.shape[a] for a in rest]
    shape = tuple(rshape[:p.pos]) + tuple(bshape) + tuple(rshape[p.pos:])
    out = ew.empty_tensor(shape, x.dtype, x.device)
    if out.numel():
        cst = contiguous_strides(shape)
        ostr = list(cst[:p.pos]) + list(cst[p.pos + len(bshape):])
        osb = cst[p.pos + len(bshape) - 1] if bshape else 1
        sh, (sst, dst) = coalesce(rshape, [[v.strides[a] for a in rest], ostr])
        _be(x).gather(x.device, x.itemsize, off.numel(), off, osb, sh, sst, dst, v.data_ptr(),
                      out.data_ptr())
    return out


def _take1(p: _Plan) -> Tensor | None:
    """One index array over a 1-d space (the hot path of x[idx] and take): fused kernel."""
    idx, v = p.arrays[0], p.v
    sh, (ist,) = coalesce(idx.shape, [idx.strides])
    if len(sh) > 1:
        return None
    ones = (1,) * (v.ndim - 1)  # the other axes all have size 1
    out = ew.empty_tensor(ones[:p.pos] + idx.shape + ones[p.pos:], v.dtype, v.device)
    n, a = out.numel(), p.vaxes[0]
    if n:
        verdict = _be(v).take(v.device, v.itemsize, n, idx.data_ptr(), ist[0] if ist else 0,
                              v.shape[a], v.strides[a], 1, v.data_ptr(), out.data_ptr())
        report(verdict, _bad_index([idx], idx.shape, p.xaxes[:1], [v.shape[a]]))
    return out


# ---------------------------------------------------------------- nonzero and friends

def _bool_contig(x) -> Tensor:
    x = ew.as_tensor(x)
    return ew.contiguous(x if x.dtype is dt.bool_ else x.astype(dt.bool_))


def _fill_nonzero(m: Tensor, mode: int, coords=(), off=None, st=(), toff=None) -> None:
    """The backend's nonzero_fill on the contiguous bool m without its size-1 axes (their
    coordinate is 0: mode 0 zero-fills theirs), so that only real axes count against the
    backends' dimension limit."""
    keep = [d for d, n in enumerate(m.shape) if n != 1] or [m.ndim - 1]   # the kernels want one
    if len(keep) < m.ndim:
        if mode == 0:
            for d in set(range(m.ndim)) - set(keep):
                coords[d].fill_(0)
            coords = [coords[d] for d in keep]
        else:
            st = [st[d] for d in keep]
        m = reshape(m, tuple(m.shape[d] for d in keep))
    _be(m).nonzero_fill(m, mode, coords=coords, off=off, st=st, toff=toff)


def _nonzero_into(m: Tensor, n: int, rows: list, toff=None) -> None:
    if n and rows:
        _fill_nonzero(m, 0, coords=rows, toff=toff)


def _count(m: Tensor):
    """(nonzero count of the contiguous bool m, what the CUDA fill reuses or None)."""
    return _be(m).nonzero_prefix(m)


def nonzero(x) -> tuple:
    """Indices of the nonzero elements, one int64 tensor per axis (NumPy's nonzero).

    >>> import tensor as T
    >>> [t.tolist() for t in T.indexing.nonzero(T.tensor([[0, 1], [2, 0]]))]
    [[0, 1], [1, 0]]
    """
    m = _bool_contig(x)
    if m.ndim == 0:
        raise ValueError("nonzero: calling nonzero on 0d tensors is not allowed; use atleast_1d first")
    n, toff = _count(m)
    rows = [ew.empty_tensor((n,), dt.int64, m.device) for _ in range(m.ndim)]
    _nonzero_into(m, n, rows, toff)
    return tuple(rows)


def argwhere(x) -> Tensor:
    """Indices of the nonzero elements as an (N, ndim) tensor (NumPy's argwhere).

    >>> import tensor as T
    >>> T.indexing.argwhere(T.tensor([[0, 1], [2, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    m = _bool_contig(x)
    if m.ndim == 0:
        return argwhere(reshape(m, (1,)))[:, :0]
    n, toff = _count(m)
    out = ew.empty_tensor((m.ndim, n), dt.int64, m.device)
    _nonzero_into(m, n, [basic_index(out, (d,)) for d in range(m.ndim)], toff)
    return out.T


def count_nonzero(x, axis=None, keepdims: bool = False) -> Tensor:
    """Number of nonzero elements, an int64 tensor (0-d for axis=None, as the array API
    standard asks; NumPy returns a Python int there). Counted on the device: no host read.

    >>> import tensor as T
    >>> int(T.indexing.count_nonzero(T.tensor([[0, 1], [2, 3]])))
    3
    >>> T.indexing.count_nonzero(T.eye(2), axis=0).tolist()
    [1, 1]
    """
    x = ew.as_tensor(x)
    axes = norm_axes(axis, x.ndim, "count_nonzero")
    keep = [a for a in range(x.ndim) if a not in axes]
    m = _bool_contig(permute(x, keep + list(axes)))
    out = ew.empty_tensor(tuple(x.shape[a] for a in keep), dt.int64, m.device)
    if out.numel():
        _be(m).count_rows(out.numel(), m.numel() // out.numel(), m, out)
    if keepdims:
        out = reshape(out, tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
    return out


# ---------------------------------------------------------------- take, along-axis, index_add

def _tensor_arg(t, op: str) -> Tensor:
    t = _as_index_tensor(t) if not isinstance(t, Tensor) else t
    if t.dtype.kind not in "iu":
        raise IndexError(f"{op}: indices must be integers, got {t.dtype.name}")
    return _u64_capped(t)


def take(x: Tensor, indices, axis: int | None = None) -> Tensor:
    """Elements of x at indices along axis (flattened x when axis is None), as NumPy's take.

    >>> import tensor as T
    >>> T.indexing.take(T.arange(6).reshape(2, 3), [[2, 0]], axis=1).shape
    (2, 1, 2)
    """
    idx = _tensor_arg(indices, "take")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = norm_axis(axis, x.ndim, "take")
    return getitem(x, (slice(None),) * axis + (idx,))


def _along_key(x: Tensor, idx: Tensor, axis: int, op: str) -> tuple:
    if idx.ndim != x.ndim:
        raise ValueError(f"{op}: indices and arr must have the same number of dimensions, got "
                         f"{idx.ndim} and {x.ndim}")
    return grid_key(idx, axis, x.shape, x.device)


def grid_key(idx: Tensor, axis: int, shape: tuple, device) -> tuple:
    """The advanced key reading idx along axis and, on every other axis d, an arange over
    shape[d] broadcast along d (take_along_axis's; PyTorch's scatter's over idx's shape)."""
    from .creation import arange
    key = []
    for d, n in enumerate(shape):
        if d == axis:
            key.append(idx)
        else:
            one = [1] * len(shape)
            one[d] = n
            key.append(reshape(arange(n, device=device), tuple(one)))
    return tuple(key)


def take_along_axis(x: Tensor, indices, axis: int | None = -1) -> Tensor:
    """NumPy's take_along_axis: out[..., i, ...] = x[..., indices[..., i, ...], ...].

    >>> import tensor as T
    >>> x = T.tensor([[10, 30, 20]]); T.indexing.take_along_axis(x, T.tensor([[1, 0]]), 1).tolist()
    [[30, 10]]
    """
    idx = _tensor_arg(indices, "take_along_axis")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = norm_axis(axis, x.ndim, "take_along_axis")
    return getitem(x, _along_key(x, idx, axis, "take_along_axis"))
