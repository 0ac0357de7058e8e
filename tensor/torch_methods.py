"""Tensor methods of PyTorch (and NumPy's ndarray.fill / compress) that had no method here:
x.where(condition, other), outer, inner, fliplr, flipud, rot90, hsplit, vsplit, argwhere,
select, hardshrink, type, new_empty_strided, fill_diagonal_, is_sparse / layout / to_dense, the
in-place forms of existing ops (relu_, cumsum_, clamp_min_, addmm_, round_, ...) and the in-place
view changes (unsqueeze_, squeeze_, transpose_, t_, swapaxes_, as_strided_).

The public functions of the same names keep their NumPy signatures (T.where(condition, x, y),
T.rot90(x, k, axes)); these methods take PyTorch's, self being the tensor PyTorch binds.
Tensor.sort stays absent on purpose: NumPy's sorts in place and PyTorch's returns
(values, indices).

>>> import tensor as T
>>> x = T.tensor([-1.0, 2.0])
>>> x.where(x > 0, 0.0).tolist()
[0.0, 2.0]
>>> x.unsqueeze_(0).shape
(1, 2)
"""
from __future__ import annotations

import operator

from . import dtypes as dt
from . import torch_extra2 as X2
from ._tensor import Tensor
from .axes import norm_axis
from .creation import empty
from .optable import T as P  # tensor's public (recorded) functions

_method, _t = X2._meth, X2._tensor


@_method
def where(self, condition, other) -> Tensor:
    """self where condition holds, else other (PyTorch's x.where; T.where takes condition first)."""
    return P.where(condition, _t(self, "where"), other)


@_method
def outer(self, vec2) -> Tensor:
    return P.outer(_t(self, "outer"), vec2)


@_method
def inner(self, other) -> Tensor:
    return P.inner(_t(self, "inner"), other)


@_method
def fliplr(self) -> Tensor:
    return P.fliplr(_t(self, "fliplr"))


@_method
def flipud(self) -> Tensor:
    return P.flipud(_t(self, "flipud"))


@_method
def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotated by 90 degrees k times from dims[0] towards dims[1] (PyTorch's dims=)."""
    return P.rot90(_t(self, "rot90"), k, tuple(dims))


@_method
def hsplit(self, indices_or_sections) -> list:
    return P.hsplit(_t(self, "hsplit"), indices_or_sections)


@_method
def vsplit(self, indices_or_sections) -> list:
    return P.vsplit(_t(self, "vsplit"), indices_or_sections)


@_method
def argwhere(self) -> Tensor:
    return P.argwhere(_t(self, "argwhere"))


@_method
def select(self, dim: int, index: int) -> Tensor:
    """The view at index along dim, that dim removed (PyTorch's x.select; T.select is NumPy's)."""
    x = _t(self, "select")
    if x.ndim == 0:
        raise IndexError("select: a 0-d tensor has no dimension to select from")
    d = norm_axis(dim, x.ndim, "select")
    i, n = operator.index(index), x.shape[d]
    if not -n <= i < n:
        raise IndexError(f"select: index {index} is out of range for dimension {dim} of size {n} "
                         f"(shape {x.shape})")
    return x[(slice(None),) * d + (i,)]


@_method
def hardshrink(self, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (nn.functional.hardshrink as a method)."""
    x = _t(self, "hardshrink")
    return P.where(P.abs(x) > lambd, x, 0)


def _type(self, dtype=None, non_blocking: bool = False):
    """PyTorch's x.type(): the type name ('tensor.FloatTensor') without an argument, else the
    tensor cast to dtype (a dtype or such a type name)."""
    x = _t(self, "type")
    if dtype is None:
        return P.typename(x)
    if isinstance(dtype, str):
        names = {P.typename(empty((), dtype=d)): d for d in dt.ALL}
        name = dtype.replace("tensor.cuda.", "tensor.")
        if name not in names:
            raise ValueError(f"type: unknown type name {dtype!r} (e.g. 'tensor.FloatTensor')")
        dtype = names[name]
    return P.astype(x, dtype, False)


_type.__name__ = _type.__qualname__ = "type"
X2.METHODS["type"] = _type


@_method
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad: bool = False):
    """An uninitialised tensor of the given size and element strides, self's dtype and device
    unless given."""
    x = _t(self, "new_empty_strided")
    return X2.empty_strided(size, stride, dtype=dtype or x.dtype, device=device or x.device,
                            requires_grad=requires_grad)


@_method
def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
    """In place: the main diagonal takes fill_value (PyTorch's; a tall matrix continues below
    the first square with wrap=True). Returns self."""
    P.fill_diagonal(_t(self, "fill_diagonal_"), fill_value, wrap)
    return self


@_method
def fill(self, value) -> None:
    """NumPy's ndarray.fill: every element set to value, in place; returns None."""
    P.fill_(_t(self, "fill"), value)


def _each_(self, op: str, fn, others):
    """self's elements replaced by fn(element, *other elements), in place, one Python call each
    (PyTorch's apply_ / map_: slow, not differentiable; a device tensor's values make a round
    trip through the host, where PyTorch takes CPU tensors only)."""
    import numpy as np

    from .convert import asarray
    x = _t(self, op)
    if not callable(fn):
        raise TypeError(f"{op}: expected a callable, got {type(fn).__name__}")
    if x.dtype.np is None:
        raise TypeError(f"{op}: {x.dtype.name} has no NumPy dtype")
    vals = [P.to_device(P.broadcast_to(o, x.shape), "cpu").numpy() for o in others]
    a = P.to_device(x, "cpu").numpy()
    out = np.empty(a.shape, a.dtype)
    for i in np.ndindex(a.shape):
        out[i] = fn(a[i].item(), *(v[i].item() for v in vals))
    P.copyto(x, asarray(out, device=x.device))
    return self


@_method
def apply_(self, callable) -> Tensor:  # noqa: A002  (PyTorch's name)
    """PyTorch's x.apply_(fn): every element becomes fn(element), in place."""
    return _each_(self, "apply_", callable, [])


@_method
def map_(self, tensor, callable) -> Tensor:  # noqa: A002  (PyTorch's names)
    """PyTorch's x.map_(y, fn): every element becomes fn(element, y's element), y broadcast to
    x's shape, in place."""
    return _each_(self, "map_", callable, [_t(tensor, "map_")])


@_method
def compress(self, condition, axis=None) -> Tensor:
    """NumPy's ndarray.compress: the slices along axis (flattened for None) where condition."""
    return P.compress(condition, _t(self, "compress"), axis)


@_method
def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    """A dense tensor is its own dense form (cast to dtype where given)."""
    x = _t(self, "to_dense")
    return x if dtype is None else P.astype(x, dtype, False)


X2.METHODS["is_sparse"] = property(lambda self: False, doc="False: a Tensor is dense (SparseCOO / "
                                   "SparseCSR are tensor.sparse's classes).")
X2.METHODS["is_sparse_csr"] = property(lambda self: False, doc="False: a Tensor is dense.")
X2.METHODS["layout"] = property(lambda self: "strided",
                                doc="'strided': a Tensor is dense with element strides.")


# ---------------------------------------------------------------- in-place forms of existing ops

for _name, _fn in {
    "relu_": lambda x: P.relu(x),
    "hardshrink_": lambda x, lambd=0.5: hardshrink(x, lambd),
    "cumsum_": lambda x, dim: P.cumsum(x, dim),
    "cumprod_": lambda x, dim: P.cumprod(x, dim),
    "clamp_min_": lambda x, min: P.clamp_min(x, min),
    "clamp_max_": lambda x, max: P.clamp_max(x, max),
    "round_": lambda x, decimals=0: P.round(x, decimals),
    "nan_to_num_": lambda x, nan=0.0, posinf=None, neginf=None: P.nan_to_num(
        x, nan=nan, posinf=posinf, neginf=neginf),
    "logit_": lambda x, eps=None: P.logit(x, eps),
    "sinc_": lambda x: P.sinc(x),
    "ldexp_": lambda x, other: P.ldexp(x, other),
    "polygamma_": lambda x, n: P.polygamma(n, x),
    "igamma_": lambda x, other: P.igamma(x, other),
    "igammac_": lambda x, other: P.igammac(x, other),
    "mvlgamma_": lambda x, p: P.mvlgamma(x, p),
    "renorm_": lambda x, p, dim, maxnorm: P.renorm(x, p, dim, maxnorm),
    "conj_physical_": lambda x: P.conj_physical(x),
    "addmm_": lambda x, mat1, mat2, *, beta=1, alpha=1: P.addmm(x, mat1, mat2, beta=beta,
                                                                 alpha=alpha),
    "addbmm_": lambda x, b1, b2, *, beta=1, alpha=1: P.addbmm(x, b1, b2, beta=beta, alpha=alpha),
    "baddbmm_": lambda x, b1, b2, *, beta=1, alpha=1: P.baddbmm(x, b1, b2, beta=beta,
                                                                 alpha=alpha),
    "addmv_": lambda x, mat, vec, *, beta=1, alpha=1: P.addmv(x, mat, vec, beta=beta, alpha=alpha),
    "addr_": lambda x, vec1, vec2, *, beta=1, alpha=1: P.addr(x, vec1, vec2, beta=beta,
                                                               alpha=alpha),
}.items():
    X2._in_place(_name, _fn)


# ---------------------------------------------------------------- in-place view changes


def _reshape_in_place(name, view):
    def m(self, *args, **kw):
        x = _t(self, name)
        if x._requires_grad or x.grad_fn is not None or x._ag is not None:
            raise RuntimeError(f"{name}: cannot change the shape of a tensor that requires grad "
                               f"in place; use {name[:-1]}() (out of place)")
        v = view(x, *args, **kw)
        x._shape, x._strides, x._offset, x._contig = v._shape, v._strides, v._offset, None
        return x
    m.__name__ = m.__qualname__ = name
    m.__doc__ = f"In place: self becomes its {name[:-1]}() view (same memory); returns self."
    X2.METHODS[name] = m


for _name, _fn in {
    "unsqueeze_": lambda x, dim: P.unsqueeze(x, dim),
    "squeeze_": lambda x, dim=None: P.squeeze(x, dim),
    "transpose_": lambda x, dim0, dim1: P.swapaxes(x, dim0, dim1),
    "swapaxes_": lambda x, axis0, axis1: P.swapaxes(x, axis0, axis1),
    "swapdims_": lambda x, dim0, dim1: P.swapaxes(x, dim0, dim1),
    "t_": lambda x: x.t(),
    "as_strided_": lambda x, size, stride, storage_offset=None: P.as_strided(x, size, stride,
                                                                             storage_offset),
}.items():
    _reshape_in_place(_name, _fn)


# ---------------------------------------------------------------- sparse forms (tensor.sparse)
# (reached through Tensor.to_sparse and the mask's own method: this module may not import
# tensor.sparse, whose ops import the public table that imports this module)

@_method
def to_sparse_coo(self):
    """This 2-D tensor's nonzeros as a coalesced tensor.sparse COO matrix (PyTorch's)."""
    x = _t(self, "to_sparse_coo")
    if x.ndim != 2:
        raise ValueError(f"to_sparse_coo: tensor.sparse matrices are 2-D, got shape {x.shape}")
    return x.to_sparse("coo")


@_method
def to_sparse_csc(self):
    """This 2-D tensor's nonzeros as a tensor.sparse CSC matrix (compressed columns; PyTorch's)."""
    x = _t(self, "to_sparse_csc")
    if x.ndim != 2:
        raise ValueError(f"to_sparse_csc: tensor.sparse matrices are 2-D, got shape {x.shape}")
    return x.to_sparse("csc")


@_method
def sparse_mask(self, mask):
    """self's elements at the stored entries of the sparse matrix mask, as a matrix of mask's
    pattern and layout (PyTorch's x.sparse_mask(mask)); differentiable in self."""
    x = _t(self, "sparse_mask")
    of = getattr(mask, "_masked", None)
    if of is None:
        raise TypeError(f"sparse_mask: the mask must be a tensor.sparse matrix, got "
                        f"{type(mask).__name__}")
    return of(x)
