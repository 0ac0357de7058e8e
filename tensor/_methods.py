"""Attach operators and methods to Tensor (kept apart so each op module stays device-agnostic)."""
from __future__ import annotations

from . import creation, elementwise as ew, interop, ops, views
from ._tensor import Tensor
from .optable import BINARY, UNARY


def _binop(name):
    def f(self, other):
        return ew.binary(name, self, other)
    return f


def _rbinop(name):
    def f(self, other):
        return ew.binary(name, other, self)
    return f


def _ibinop(name):
    def f(self, other):
        return ew.binary(name, self, other, out=self)
    return f


_DUNDER = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
           "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
           "rshift": "right_shift"}
for _d, _name in _DUNDER.items():
    setattr(Tensor, f"__{_d}__", _binop(_name))
    setattr(Tensor, f"__r{_d}__", _rbinop(_name))
    setattr(Tensor, f"__i{_d}__", _ibinop(_name))
for _d, _name in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                  "gt": "greater", "ge": "greater_equal"}.items():
    setattr(Tensor, f"__{_d}__", _binop(_name))
Tensor.__neg__ = lambda self: ew.unary("negative", self)
Tensor.__pos__ = lambda self: ew.unary("positive", self)
Tensor.__abs__ = lambda self: ew.unary("abs", self)
Tensor.__invert__ = lambda self: ew.unary("bitwise_not", self)


def _method(name):
    fn = ops.FUNCS[name]

    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    m.__name__ = name
    m.__doc__ = fn.__doc__
    return m


def _inplace(name):
    op_is_unary = any(o.name == name for o in UNARY)

    def m(self, *args):
        if op_is_unary:
            return ew.unary(name, self, out=self)
        return ew.binary(name, self, args[0], out=self)
    m.__name__ = name + "_"
    return m


for _op in UNARY + BINARY:
    for _n in (_op.name, *_op.aliases):
        setattr(Tensor, _n, _method(_op.name))
        setattr(Tensor, _n + "_", _inplace(_op.name))

Tensor.round = lambda self, decimals=0: ops.round(self, decimals)
Tensor.clip = lambda self, a_min=None, a_max=None: ops.clip(self, a_min, a_max)
Tensor.clamp = Tensor.clip
Tensor.clip_ = lambda self, a_min=None, a_max=None: ops.clip(self, a_min, a_max, out=self)
Tensor.clamp_ = Tensor.clip_

# --- views ---
Tensor.T = property(lambda self: views.transpose(self))
Tensor.mT = property(views.matrix_transpose)
Tensor.transpose = views.transpose
Tensor.permute = views.permute
Tensor.swapaxes = views.swapaxes
Tensor.swapdims = views.swapaxes
Tensor.moveaxis = views.moveaxis
Tensor.movedim = views.moveaxis
Tensor.reshape = views.reshape
Tensor.view = views.view
Tensor.flatten = views.flatten
Tensor.ravel = views.ravel
Tensor.squeeze = views.squeeze
Tensor.unsqueeze = views.unsqueeze
Tensor.expand_dims = views.expand_dims
Tensor.expand = views.expand
Tensor.broadcast_to = lambda self, shape: views.broadcast_to(self, tuple(shape))
Tensor.expand_as = lambda self, other: views.broadcast_to(self, other.shape, "expand_as")
Tensor.diagonal = views.diagonal
Tensor.as_strided = views.as_strided
Tensor.flip = views.flip

# --- copies, casts, fills ---
Tensor.astype = lambda self, dtype, copy=True: ew.astype(self, dtype, copy)
Tensor.contiguous = ew.contiguous
Tensor.copy = ew.copy
Tensor.clone = ew.copy


def _copy_(self, src):
    ew.copy_into(self, ew.as_operand(src) if not isinstance(src, Tensor) else src)
    return self


Tensor.copy_ = _copy_
Tensor.fill_ = creation.fill_
Tensor.zero_ = lambda self: creation.fill_(self, 0)


def _to(self, *args, dtype=None, device=None, copy: bool = False):
    """to(device), to(dtype) or to(device, dtype), as PyTorch's."""
    from . import dtypes
    from .device import Device, device as parse_device
    for a in args:
        if isinstance(a, Device) or (isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda")):
            device = a
        else:
            dtype = a
    out = self
    if device is not None and parse_device(device) != self.device:
        raise AssertionError("unreachable: only the CPU exists in this build")  # parse raised
    if dtype is not None and dtypes.dtype(dtype) is not self.dtype:
        out = out.astype(dtype)
    elif copy:
        out = out.copy()
    return out


Tensor.to = _to
Tensor.cpu = lambda self: self
Tensor.cuda = lambda self, device=None: self.to("cuda" if device is None else f"cuda:{device}")

# --- interop ---
Tensor.numpy = interop.to_numpy
Tensor.__array__ = interop.array_protocol
Tensor.tolist = interop.tolist
Tensor.item = interop.item
Tensor.__repr__ = interop.format_tensor
Tensor.__str__ = interop.str_tensor
Tensor.__dlpack__ = interop.dlpack
Tensor.__dlpack_device__ = interop.dlpack_device
Tensor.__float__ = lambda self: float(interop.item(self))
Tensor.__int__ = lambda self: int(interop.item(self))
Tensor.__complex__ = lambda self: complex(interop.item(self))


def _index(self):
    if self.dtype.kind not in "iub" or self.numel() != 1:
        raise TypeError(f"only integer tensors with one element can be converted to an index "
                        f"(got {self.dtype.name} of shape {self.shape})")
    return int(interop.item(self))


def _bool(self):
    if self.numel() != 1:
        raise ValueError(f"the truth value of a tensor with {self.numel()} elements is ambiguous; "
                         "use .any() or .all()")
    return bool(interop.item(self))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


Tensor.__index__ = _index
Tensor.__bool__ = _bool
Tensor.__iter__ = _iter


def _getitem(self, key):
    from .indexing import getitem
    return getitem(self, key)


def _setitem(self, key, value):
    from .indexing import setitem
    setitem(self, key, value)


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem

# --- reductions ---
from . import reductions as _red  # noqa: E402

for _n, _f in _red.FUNCS.items():
    setattr(Tensor, _n, _f)

# --- matrix products ---
from . import linalg as _linalg  # noqa: E402

Tensor.__matmul__ = lambda self, other: _linalg.matmul(self, other)
Tensor.__rmatmul__ = lambda self, other: _linalg.matmul(other, self)
Tensor.matmul = _linalg.matmul
Tensor.dot = _linalg.dot

# --- indexing and manipulation ---
from . import indexing, manipulation  # noqa: E402

Tensor.take = lambda self, indices, axis=None: indexing.take(self, indices, axis)
Tensor.nonzero = indexing.nonzero  # NumPy's (tuple of int64 tensors); torch's is argwhere
Tensor.argwhere = indexing.argwhere
Tensor.count_nonzero = lambda self, axis=None, keepdims=False: indexing.count_nonzero(self, axis, keepdims)
Tensor.index_add_ = lambda self, dim, index, source, alpha=1: indexing.index_add_(self, dim, index, source, alpha)
Tensor.index_add = lambda self, dim, index, source, alpha=1: indexing.index_add(self, dim, index, source, alpha)
Tensor.index_put_ = lambda self, indices, values, accumulate=False: indexing.index_put_(
    self, indices, values, accumulate)
Tensor.scatter_add_ = lambda self, dim, index, src: indexing.scatter_add_(self, dim, index, src)
Tensor.scatter_add = lambda self, dim, index, src: indexing.scatter_add(self, dim, index, src)
Tensor.repeat = lambda self, repeats, axis=None: manipulation.repeat(self, repeats, axis)  # NumPy's
Tensor.tile = lambda self, reps: manipulation.tile(self, reps)
Tensor.roll = lambda self, shift, axis=None: manipulation.roll(self, shift, axis)
Tensor.chunk = lambda self, chunks, dim=0: manipulation.chunk(self, chunks, dim)
Tensor.unbind = lambda self, dim=0: manipulation.unbind(self, dim)
