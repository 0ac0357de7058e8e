"""NumPy's index helpers and value pickers (unravel_index, ix_, tril_indices, choose, select,
place, putmask, fill_diagonal, piecewise, apply_along_axis...), and the helpers and registries
that tensor/numpy_extra.py shares (it publishes this module's functions with its own).

Compositions of the public (recorded) ops: choose, select, compress, extract and piecewise are
differentiable with respect to the values they pick; place, putmask and fill_diagonal write
into their first argument through the public setitem (autograd's in-place checks apply).
Out-of-range indices are checked on the host before anything is written.

>>> import tensor as T
>>> [t.tolist() for t in T.unravel_index(T.tensor([5, 1]), (2, 3))]
[[1, 0], [2, 1]]
>>> [t.tolist() for t in T.tril_indices(3, -1)]
[[1, 2, 2], [0, 0, 1]]
>>> T.select([T.tensor([True, False]), T.tensor([True, True])], [1, 2], default=0).tolist()
[1, 2]
"""
from __future__ import annotations

import math
import operator

from . import dtypes as dt
from ._tensor import Tensor
from .axes import as_int, norm_axis, norm_axis_tuple
from .convert import asarray
from .creation import arange, full, zeros
from .optable import T as P  # tensor's public (recorded) functions
from .sorting import flag, tensor_arg
from .views import broadcast_shapes, check_size

COMPOSITES: dict = {}   # name -> function, published by tensor/public.py as T.name
NOT_METHODS: set = set()   # names that are functions only (no Tensor method), as NumPy / PyTorch


def publisher(composites: dict, not_methods: set):
    """A module's `pub` decorator over its registries (array_extra2 has its own)."""
    def pub(method: bool = False):
        """Publish the decorated function under its name; method=True makes it a Tensor method
        too (only where NumPy's ndarray or PyTorch's Tensor has the method with the same first
        argument)."""
        def deco(fn):
            composites[fn.__name__] = fn
            if not method:
                not_methods.add(fn.__name__)
            return fn
        return deco
    return pub


pub = publisher(COMPOSITES, NOT_METHODS)


# ---------------------------------------------------------------- helpers (numpy_extra2 too)

def is_scalar(v) -> bool:
    return dt.scalar_kind(v) is not None


def device_of(*xs):
    """The device of the first tensor among xs (None: the default device)."""
    return next((x.device for x in xs if isinstance(x, Tensor)), None)


def arrs(op: str, *xs) -> list:
    """xs as tensors, the non-tensors made on the first tensor's device; tensors on different
    devices are a ValueError naming op."""
    dev = device_of(*xs)
    ts = [tensor_arg(x, op, dev) for x in xs]
    if len({t.device for t in ts}) > 1:
        raise ValueError(f"{op}: tensors on different devices: {[str(t.device) for t in ts]}")
    return ts


def cast(t: Tensor, d: dt.DType) -> Tensor:
    return t if t.dtype is d else P.astype(t, d)


def host(t: Tensor) -> list:
    """A small tensor's values on the host (a synchronisation on a GPU)."""
    return P.reshape(t.detach(), (-1,)).tolist()


def ravel(t: Tensor) -> Tensor:
    return P.reshape(t, (-1,))


def int_arg(x, op: str, what: str, dev=None) -> Tensor:
    t = tensor_arg(x, op, dev)
    if t.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must hold integers, got {t.dtype}")
    return t


# ---------------------------------------------------------------- flat and multi indices

def _shape(shape, op: str) -> tuple:
    if isinstance(shape, Tensor):
        shape = host(shape)
    try:
        shape = (operator.index(shape),) if not hasattr(shape, "__iter__") else tuple(
            operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}") \
            from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}: dimensions must be non-negative, got {shape}")
    if math.prod(shape) > 2**63 - 1:   # flat indices are int64 (NumPy refuses these too)
        raise ValueError(f"{op}: invalid dims {shape}: their size is past int64's maximum")
    return shape


def _order(order, op: str) -> bool:
    if order not in ("C", "F"):
        raise ValueError(f"{op}: order must be 'C' or 'F', got {order!r}")
    return order == "F"


@pub()
def unravel_index(indices, shape, order: str = "C") -> tuple:
    """The multi-index (a tuple of int64 tensors of indices' shape) of flat indices into an
    array of `shape`, as NumPy's and PyTorch's unravel_index (same positional order); an index
    outside [0, prod(shape)) is a ValueError (checked on the host).

    >>> import tensor as T
    >>> [t.tolist() for t in T.unravel_index(T.tensor([7]), (3, 4), order="F")]
    [[1], [2]]
    """
    op = "unravel_index"
    idx = cast(int_arg(indices, op, "indices"), dt.int64)
    shape, fortran = _shape(shape, op), _order(order, op)
    size = math.prod(shape)
    if idx.numel():
        lo, hi = host(P.stack([P.min(idx), P.max(idx)]))
        if lo < 0 or hi >= size:
            raise ValueError(f"{op}: index {lo if lo < 0 else hi} is out of bounds for array "
                             f"with size {size}")
    out, rem = [None] * len(shape), idx
    for i in (range(len(shape)) if fortran else range(len(shape) - 1, -1, -1)):
        d = max(shape[i], 1)
        out[i], rem = P.remainder(rem, d), P.floor_divide(rem, d)
    return tuple(out)


@pub()
def ravel_multi_index(multi_index, dims, mode="raise", order: str = "C") -> Tensor:
    """The flat int64 indices of a tuple of index tensors (broadcast together) into an array
    of shape dims. mode 'raise' (an index outside [0, d) is a ValueError), 'wrap' or 'clip',
    one for all or one per dimension.

    >>> import tensor as T
    >>> T.ravel_multi_index((T.tensor([1, 2]), T.tensor([0, 5])), (3, 4), mode="clip").tolist()
    [4, 11]
    """
    op = "ravel_multi_index"
    dims, fortran = _shape(dims, op), _order(order, op)
    idx = arrs(op, *multi_index) if len(multi_index) else []
    if len(idx) != len(dims):
        raise ValueError(f"{op}: parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims) or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise ValueError(f"{op}: mode must be 'raise', 'wrap' or 'clip' (one, or one per "
                         f"dimension), got {mode!r}")
    for t in idx:
        if t.dtype.kind not in "iu":
            raise TypeError(f"{op}: only int indices permitted, got {t.dtype}")
    shape = broadcast_shapes(*(t.shape for t in idx), op=op)
    flat = zeros(shape, dtype=dt.int64, device=idx[0].device if idx else None)
    stride = 1
    for i in (range(len(dims)) if fortran else range(len(dims) - 1, -1, -1)):
        t, d = cast(idx[i], dt.int64), dims[i]
        if modes[i] == "wrap" and d:
            t = P.remainder(t, d)
        elif modes[i] == "clip" and d:
            t = P.clip(t, 0, d - 1)
        elif t.numel():
            lo, hi = host(P.stack([P.min(t), P.max(t)]))
            if lo < 0 or hi >= d:
                raise ValueError(f"{op}: invalid entry in coordinates array (index "
                                 f"{lo if lo < 0 else hi} for a dimension of size {d})")
        flat = P.add(flat, P.multiply(t, stride))
        stride *= d
    return flat


@pub()
def ix_(*args) -> tuple:
    """An open mesh from 1-d sequences: the k-th of n becomes shape (1, .., len, .., 1) (a view),
    so that x[T.ix_(rows, cols)] picks a cross product; a bool sequence is its nonzero indices,
    an empty one int64.

    >>> import tensor as T
    >>> from tensor.public import PUB   # T.ix_ once tensor/__init__.py publishes names ending in _
    >>> [t.shape for t in PUB["ix_"]([0, 1], T.tensor([True, False, True]))]
    [(2, 1), (1, 2)]
    """
    op, out = "ix_", []
    dev = device_of(*args)
    for k, a in enumerate(args):
        t = tensor_arg(a, op, dev)
        if t.numel() == 0 and not isinstance(a, Tensor):   # NumPy: an empty list is intp
            t = cast(t, dt.int64)
        if t.ndim != 1:
            raise ValueError(f"{op}: Cross index must be 1 dimensional, argument {k} has shape "
                             f"{t.shape}")
        if t.dtype is dt.bool_:
            t = P.nonzero(t)[0]
        out.append(P.reshape(t, (1,) * k + (t.shape[0],) + (1,) * (len(args) - k - 1)))
    return tuple(out)


@pub()
def indices(dimensions, dtype=dt.int64, sparse: bool = False, *, device=None):
    """The index grid of an array of shape `dimensions`: a tensor of shape (N, *dimensions), or
    with sparse=True a tuple of N broadcastable tensors (device: the default one unless given,
    our addition).

    >>> import tensor as T
    >>> T.indices((2, 3))[1].tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    op = "indices"
    dims = _shape(dimensions, op)
    flag(sparse, "sparse", op)
    d = dt.dtype(dtype)
    n = len(dims)
    if not sparse:   # refuse an impossible grid before its aranges are made (2**31 each: 16 GiB)
        check_size((n,) + dims, d.itemsize, op, d.name)
    grids = [P.reshape(arange(s, dtype=d, device=device), (1,) * i + (s,) + (1,) * (n - i - 1))
             for i, s in enumerate(dims)]
    if sparse:
        return tuple(grids)
    if not n:
        return zeros((0,), dtype=d, device=device)
    return P.stack([P.broadcast_to(g, dims) for g in grids])


@pub()
def diag_indices(n, ndim: int = 2, *, device=None) -> tuple:
    """The indices of the main diagonal of an (n, n, ..., n) array: ndim copies of arange(n).

    >>> import tensor as T
    >>> [t.tolist() for t in T.diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    n, ndim = as_int(n, "n", "diag_indices"), as_int(ndim, "ndim", "diag_indices")
    idx = arange(max(n, 0), dtype=dt.int64, device=device)
    return (idx,) * ndim


@pub()
def diag_indices_from(arr) -> tuple:
    """diag_indices for arr, which must be at least 2-d with all sides equal.

    >>> import tensor as T
    >>> T.diag_indices_from(T.zeros((3, 3)))[0].tolist()
    [0, 1, 2]
    """
    op = "diag_indices_from"
    x = tensor_arg(arr, op)
    if x.ndim < 2:
        raise ValueError(f"{op}: input array must be at least 2-d, got shape {x.shape}")
    if len(set(x.shape)) != 1:
        raise ValueError(f"{op}: All dimensions of input must be of equal length, got {x.shape}")
    return diag_indices(x.shape[0], x.ndim, device=x.device)


def _tri(n, k, m, lower: bool, op: str, device) -> tuple:
    n = max(as_int(n, "n", op), 0)
    m = n if m is None else max(as_int(m, "m", op), 0)
    k = as_int(k, "k", op)
    rows = P.reshape(arange(n, dtype=dt.int64, device=device), (n, 1))
    offset = P.subtract(arange(m, dtype=dt.int64, device=device), rows)   # col - row
    return P.nonzero(P.less_equal(offset, k) if lower else P.greater_equal(offset, k))


def _torch_tri_args(n, k, m, row, col, offset, op: str) -> tuple:
    """NumPy's (n, k, m) from PyTorch's keywords row=, col=, offset= where given instead."""
    for mine, theirs, name in ((n, row, "n"), (m, col, "m")):
        if mine is not None and theirs is not None:
            raise TypeError(f"{op}: give {name} or PyTorch's {'row' if name == 'n' else 'col'}, "
                            f"not both")
    n, m = (row if n is None else n), (col if m is None else m)
    if n is None:
        raise TypeError(f"{op}: missing the size n (or PyTorch's row=)")
    return n, (k if offset is None else offset), m


@pub()
def tril_indices(n=None, k: int = 0, m=None, *, row=None, col=None, offset=None,
                 device=None) -> tuple:
    """(rows, cols) int64 of the lower triangle (col - row <= k) of an (n, m) array, row by row:
    NumPy's positional order and tuple of arrays (PyTorch's keywords row=, col=, offset= are
    accepted, but its tril_indices returns a 2 x N tensor: stack this tuple for it).

    >>> import tensor as T
    >>> [t.tolist() for t in T.tril_indices(2)]
    [[0, 1, 1], [0, 0, 1]]
    """
    n, k, m = _torch_tri_args(n, k, m, row, col, offset, "tril_indices")
    return _tri(n, k, m, True, "tril_indices", device)


@pub()
def triu_indices(n=None, k: int = 0, m=None, *, row=None, col=None, offset=None,
                 device=None) -> tuple:
    """(rows, cols) int64 of the upper triangle (col - row >= k) of an (n, m) array, row by row:
    NumPy's positional order and tuple (PyTorch's row=, col=, offset= accepted; its
    triu_indices returns a 2 x N tensor).

    >>> import tensor as T
    >>> [t.tolist() for t in T.triu_indices(2)]
    [[0, 0, 1], [0, 1, 1]]
    """
    n, k, m = _torch_tri_args(n, k, m, row, col, offset, "triu_indices")
    return _tri(n, k, m, False, "triu_indices", device)


def _tri_from(arr, k, lower: bool, op: str) -> tuple:
    x = tensor_arg(arr, op)
    if x.ndim != 2:
        raise ValueError(f"{op}: input array must be 2-d, got shape {x.shape}")
    return _tri(x.shape[0], k, x.shape[1], lower, op, x.device)


@pub()
def tril_indices_from(arr, k: int = 0) -> tuple:
    """tril_indices for the 2-d arr's shape (a tuple of arrays, as NumPy; PyTorch has none).

    >>> import tensor as T
    >>> T.tril_indices_from(T.zeros((2, 3)), 1)[1].tolist()
    [0, 1, 0, 1, 2]
    """
    return _tri_from(arr, k, True, "tril_indices_from")


@pub()
def triu_indices_from(arr, k: int = 0) -> tuple:
    """triu_indices for the 2-d arr's shape (a tuple of arrays, as NumPy).

    >>> import tensor as T
    >>> T.triu_indices_from(T.zeros((2, 2)))[1].tolist()
    [0, 1, 1]
    """
    return _tri_from(arr, k, False, "triu_indices_from")


# ---------------------------------------------------------------- picking values

@pub()
def flatnonzero(a) -> Tensor:
    """The int64 indices of the nonzero elements of a flattened.

    >>> import tensor as T
    >>> T.flatnonzero(T.tensor([[0, 3], [4, 0]])).tolist()
    [1, 2]
    """
    return P.nonzero(ravel(tensor_arg(a, "flatnonzero")))[0]


@pub()
def extract(condition, arr) -> Tensor:
    """The elements of arr (flattened) where condition (flattened) is nonzero, in order.

    >>> import tensor as T
    >>> T.extract(T.tensor([[True, False], [False, True]]), T.tensor([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    c, a = arrs("extract", condition, arr)
    idx = P.nonzero(ravel(c))[0]
    if idx.shape[0] and host(idx[-1:])[0] >= a.numel():
        raise IndexError(f"extract: condition has a nonzero at {host(idx[-1:])[0]}, past arr's "
                         f"{a.numel()} elements")
    return P.take(ravel(a), idx)


@pub()
def compress(condition, a, axis=None) -> Tensor:
    """The slices of a along axis (a flattened for None) where the 1-d condition is nonzero.
    A function only: ndarray.compress takes the condition first after self, and a method
    would take the tensor as the condition.

    >>> import tensor as T
    >>> T.compress([False, True], T.tensor([[1, 2], [3, 4]]), axis=1).tolist()
    [[2], [4]]
    """
    op = "compress"
    c, x = arrs(op, condition, a)
    if c.ndim != 1:
        raise ValueError(f"{op}: condition must be a 1-d array, got shape {c.shape}")
    x = ravel(x) if axis is None else x
    ax = 0 if axis is None else norm_axis(axis, x.ndim, op)
    idx = P.nonzero(c)[0]
    if idx.shape[0] and host(idx[-1:])[0] >= x.shape[ax]:
        raise IndexError(f"{op}: index {host(idx[-1:])[0]} is out of bounds for axis {ax} with "
                         f"size {x.shape[ax]}")
    return P.take(x, idx, axis=ax)


def _index_mode(idx: Tensor, n: int, mode: str, op: str, what: str) -> Tensor:
    if mode == "wrap":
        return P.remainder(idx, n)
    if mode == "clip":
        return P.clip(idx, 0, n - 1)
    if mode != "raise":
        raise ValueError(f"{op}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if idx.numel():
        lo, hi = host(P.stack([P.min(idx), P.max(idx)]))
        if lo < 0 or hi >= n:
            raise ValueError(f"{op}: invalid entry in {what} array ({lo if lo < 0 else hi} with "
                             f"{n} choices)")
    return idx


@pub(method=True)
def choose(a, choices, out=None, mode: str = "raise") -> Tensor:
    """choices[a[i]][i] for each (broadcast) position i: a holds integers in [0, len(choices)),
    or mode 'wrap' / 'clip' brings them there. The result has the choices' common dtype (into
    out when given, which is returned). Differentiable with respect to the choices.

    >>> import tensor as T
    >>> T.choose(T.tensor([0, 1, 1]), [T.tensor([1, 2, 3]), 10]).tolist()
    [1, 10, 10]
    """
    op = "choose"
    cs = list(P.unbind(choices, 0)) if isinstance(choices, Tensor) and choices.ndim else (
        list(choices) if not isinstance(choices, Tensor) else [])
    if not cs:
        raise ValueError(f"{op}: choices must be a non-empty sequence")
    idx, *cs = arrs(op, a, *cs)
    if idx.dtype.kind not in "biu":   # bool picks choice 0 or 1, as NumPy
        raise TypeError(f"{op}: a must hold integers, got {idx.dtype}")
    shape = broadcast_shapes(idx.shape, *(c.shape for c in cs), op=op)
    d = dt.result_type(*cs)
    idx = _index_mode(cast(idx, dt.int64), len(cs), mode, op, "choice")
    stacked = P.stack([P.broadcast_to(cast(c, d), shape) for c in cs])
    r = P.take_along_axis(stacked, P.unsqueeze(P.broadcast_to(idx, shape), 0), 0)[0]
    if out is None:
        return r
    P.setitem(out, Ellipsis, r)
    return out


@pub()
def select(condlist, choicelist, default=0) -> Tensor:
    """choicelist[i] where condlist[i] is the first true condition, else default (NumPy's select:
    everything broadcast; Python scalars weak in the result dtype). A function only (PyTorch's
    Tensor.select(dim, index) is slicing). Differentiable with respect to the choices.

    >>> import tensor as T
    >>> x = T.arange(5)
    >>> T.select([x < 2, x > 3], [x, x * 10], default=-1).tolist()
    [0, 1, -1, -1, 40]
    """
    op = "select"
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(f"{op}: list of cases must be same length as list of conditions "
                         f"({len(choicelist)} and {len(condlist)})")
    if not condlist:
        raise ValueError(f"{op}: select with an empty condition list is not possible")
    dev = device_of(*condlist, *choicelist, default)
    conds = [tensor_arg(c, op, dev) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype is not dt.bool_:
            raise TypeError(f"{op}: invalid entry {i} in condlist: should be a bool tensor, got "
                            f"{c.dtype}")
    vals = [v if is_scalar(v) else tensor_arg(v, op, dev) for v in choicelist + [default]]
    d = dt.result_type(*vals)
    vals = [cast(v, d) if isinstance(v, Tensor) else full((), v, dtype=d, device=dev) for v in vals]
    shape = broadcast_shapes(*(t.shape for t in conds + vals), op=op)
    r = P.broadcast_to(vals[-1], shape)
    for c, v in zip(reversed(conds), reversed(vals[:-1])):
        r = P.where(c, v, r)
    return r


def _writable(arr, op: str) -> Tensor:
    if not isinstance(arr, Tensor):
        raise TypeError(f"{op}: the array written into must be a tensor, got {type(arr).__name__}")
    return arr


def _same_size_mask(mask, arr: Tensor, op: str) -> Tensor:
    m = tensor_arg(mask, op, arr.device)
    if m.numel() != arr.numel():
        raise ValueError(f"{op}: mask and data must be the same size ({m.numel()} and "
                         f"{arr.numel()})")
    m = m if m.dtype is dt.bool_ else P.not_equal(m, 0)
    return P.reshape(m, arr.shape)


def _values_as(vals, d: dt.DType, dev, op: str) -> Tensor:
    """vals as a tensor of the written tensor's dtype d: a tensor only if it casts to d safely
    (NumPy's rule for place / putmask / fill_diagonal), anything else converted to d."""
    if isinstance(vals, Tensor):
        if not dt.can_cast(vals.dtype, d, "safe"):
            raise TypeError(f"{op}: cannot cast values of dtype {vals.dtype} to {d} safely")
        return cast(vals, d)
    return asarray(vals, dtype=d, device=dev)


def _cycled(vals, n: int, d: dt.DType, dev, op: str, safe: bool = True) -> Tensor:
    """The first n values of vals (flattened) repeated cyclically, as dtype d."""
    v = ravel(_values_as(vals, d, dev, op) if safe else cast(tensor_arg(vals, op, dev), d))
    if v.shape[0] == n:
        return v
    return P.take(v, P.remainder(arange(n, dtype=dt.int64, device=dev), v.shape[0]))


@pub()
def place(arr, mask, vals) -> None:
    """In place: arr's elements where mask is true take vals (flattened) in turn, cyclically
    (NumPy's place). Returns None.

    >>> import tensor as T
    >>> x = T.arange(5)
    >>> T.place(x, x > 1, [9, 8]); x.tolist()
    [0, 1, 9, 8, 9]
    """
    op = "place"
    x = _writable(arr, op)
    m = _same_size_mask(mask, x, op)
    n = host(P.count_nonzero(m))[0]
    if n == 0:
        return
    if tensor_arg(vals, op, x.device).numel() == 0:
        raise ValueError(f"{op}: Cannot insert from an empty array!")
    P.setitem(x, m, _cycled(vals, n, x.dtype, x.device, op))


@pub()
def putmask(a, mask, values) -> None:
    """In place: a's flat element i becomes values.flat[i % values.size] where mask is true
    (NumPy's putmask: values follow a's positions, cyclically). Returns None.

    >>> import tensor as T
    >>> x = T.arange(5)
    >>> T.putmask(x, x > 1, T.tensor([-1, -2])); x.tolist()
    [0, 1, -1, -2, -1]
    """
    op = "putmask"
    x = _writable(a, op)
    m = _same_size_mask(mask, x, op)
    if tensor_arg(values, op, x.device).numel() == 0:
        return
    v = P.reshape(_cycled(values, x.numel(), x.dtype, x.device, op), x.shape)
    P.setitem(x, m, P.getitem(v, m))


@pub()
def fill_diagonal(a, val, wrap: bool = False) -> None:
    """In place: a's main diagonal takes val (flattened, cyclically), as NumPy's fill_diagonal.
    A tall 2-d a with wrap=True continues the diagonal below every N + 1 rows; an a with more
    than 2 dims must have equal sides. Returns None (PyTorch's is the method fill_diagonal_).

    >>> import tensor as T
    >>> x = T.zeros((2, 3), dtype=T.int64)
    >>> T.fill_diagonal(x, 5); x.tolist()
    [[5, 0, 0], [0, 5, 0]]
    """
    op = "fill_diagonal"
    x = _writable(a, op)
    flag(wrap, "wrap", op)
    if x.ndim < 2:
        raise ValueError(f"{op}: array must be at least 2-d, got shape {x.shape}")
    if x.ndim == 2:
        rows, cols = x.shape
        end = x.numel() if wrap else min(cols * cols, x.numel())
        flat = arange(0, end, cols + 1, dtype=dt.int64, device=x.device)
        key = (P.floor_divide(flat, cols), P.remainder(flat, cols)) if cols else None
    else:
        if len(set(x.shape)) != 1:
            raise ValueError(f"{op}: All dimensions of input must be of equal length, got "
                             f"{x.shape}")
        key = diag_indices(x.shape[0], x.ndim, device=x.device)
    k = key[0].shape[0] if key else 0
    if k == 0 or tensor_arg(val, op, x.device).numel() == 0:
        return
    P.setitem(x, key, _cycled(val, k, x.dtype, x.device, op, safe=False))   # NumPy's a.flat[...] = val


@pub()
def trim_zeros(filt, trim: str = "fb", axis=None) -> Tensor:
    """filt without its leading ('f') and/or trailing ('b') zeros: along axis (an int or a
    tuple), or along every axis (the bounding box of the nonzeros) for None (NumPy 2.2's); all
    zeros trim to empty. A view.

    >>> import tensor as T
    >>> T.trim_zeros(T.tensor([0, 0, 1, 2, 0])).tolist()
    [1, 2]
    """
    op = "trim_zeros"
    x = tensor_arg(filt, op)
    if not isinstance(trim, str) or trim.lower() not in ("fb", "bf", "f", "b"):
        raise ValueError(f"{op}: unexpected character(s) in trim: {trim!r}")
    trim = trim.lower()
    axes = range(x.ndim) if axis is None else norm_axis_tuple(axis, x.ndim, op)
    nz = P.argwhere(x)
    key = [slice(None)] * x.ndim
    if nz.shape[0]:
        start, stop = host(P.min(nz, axis=0)), [s + 1 for s in host(P.max(nz, axis=0))]
        for i in axes:
            key[i] = slice(start[i] if "f" in trim else None, stop[i] if "b" in trim else None)
    else:   # all zeros: empty along the axes, whatever trim says (NumPy's)
        for i in axes:
            key[i] = slice(0, 0)
    return P.getitem(x, tuple(key))


# ---------------------------------------------------------------- functions over pieces

def _conditions(condlist, x: Tensor, op: str) -> list:
    if isinstance(condlist, Tensor):
        one = condlist.ndim == 0 or x.ndim != 0 and condlist.shape == x.shape
        conds = [condlist] if one else list(P.unbind(condlist, 0))
    elif is_scalar(condlist):
        conds = [condlist]
    else:
        conds = list(condlist)
        if x.ndim and conds and is_scalar(conds[0]):   # NumPy: a flat list is one condition
            conds = [condlist]
    out = []
    for c in conds:
        t = tensor_arg(c, op, x.device)
        out.append(P.broadcast_to(t if t.dtype is dt.bool_ else P.not_equal(t, 0), x.shape))
    return out


@pub()
def piecewise(x, condlist, funclist, *args, **kw) -> Tensor:
    """x's dtype and shape, zero, with funclist[i](x[condlist[i]], *args, **kw) (or the value
    funclist[i]) where condlist[i] holds (later conditions win); one extra function is the
    "otherwise" piece. Each function sees only its elements. Differentiable through the
    functions' results. A bool tensor of x's shape is one condition (NumPy takes an ndarray
    condlist for an n-d x as a list of its rows); a (k, *x.shape) tensor is k conditions.

    >>> import tensor as T
    >>> x = T.tensor([-2.0, 0.5, 3.0])
    >>> T.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 10, 7.0]).tolist()
    [2.0, 7.0, 30.0]
    """
    op = "piecewise"
    x = tensor_arg(x, op)
    funcs = list(funclist)
    conds = _conditions(condlist, x, op)
    n = len(conds)
    if n == len(funcs) - 1:
        rest = P.logical_not(P.any(P.stack(conds), axis=0)) if n else full(
            x.shape, True, dtype=dt.bool_, device=x.device)
        conds.append(rest)
    elif n != len(funcs):
        raise ValueError(f"{op}: with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected, got {len(funcs)}")
    y = zeros(x.shape, dtype=x.dtype, device=x.device)
    for c, f in zip(conds, funcs):
        if not callable(f):
            P.setitem(y, c, cast(tensor_arg(f, op, x.device), x.dtype))
            continue
        vals = P.getitem(x, c)
        if vals.numel():
            r = f(vals, *args, **kw)
            P.setitem(y, c, cast(r, x.dtype) if isinstance(r, Tensor) else r)
    return y
