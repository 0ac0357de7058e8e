"""Attach operators and methods to Tensor. Every math method goes through the public
(autograd-aware) functions of tensor/public.py, so `x.exp()`, `T.exp(x)` and `x + y` record
the same node."""
from __future__ import annotations

import numbers
import sys

import numpy as np

from . import (
    _hook,
    _numpy_protocol,
    _tensor,
    array_extra,
    flatiter,
    interop,
    math_extra,
    numpy_extra,
    pinned,
    shared,
    torch_extra,
    torch_index,
    views,
)
from . import dtypes as _dt
from ._tensor import Tensor
from .convert import from_numpy
from .elementwise import as_operands
from .public import PUB, TORCH_METHODS

_DUNDER = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
           "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
           "rshift": "right_shift", "matmul": "matmul"}


_ARRAY_LIKE = (np.ndarray, np.generic, list, tuple)


def _numpy_operand(self, other, name: str):
    """A NumPy array or scalar, or a list, met by an operator: a tensor on self's device (the
    device of the tensor it meets, as `ndarray op tensor` is through __array_ufunc__), not the
    default one (elementwise.as_operands' rule, which the functions follow too)."""
    return as_operands(name, self, other)[1]


def _binop(fn, name: str):
    def op(self, other, mod=None):
        # (mod: pow(x, y, m) reaches __pow__ with it; Python's own TypeError then, as NumPy's
        # and PyTorch's arrays take no modulo)
        if mod is not None:
            return NotImplemented
        if type(other) is not Tensor:
            if getattr(other, "_tensor_defers", False):
                return NotImplemented   # a sparse matrix: its reflected operator answers
            if isinstance(other, _ARRAY_LIKE):
                other = _numpy_operand(self, other, name)
        return fn(self, other)
    return op


def _rbinop(fn, name: str):
    def op(self, other):
        if type(other) is not Tensor:
            if getattr(other, "_tensor_defers", False):
                return NotImplemented
            if isinstance(other, _ARRAY_LIKE):
                other = _numpy_operand(self, other, name)
        return fn(other, self)
    return op


for _d, _name in _DUNDER.items():
    setattr(Tensor, f"__{_d}__", _binop(PUB[_name], _name))
    setattr(Tensor, f"__r{_d}__", _rbinop(PUB[_name], _name))
    if _name != "matmul":
        setattr(Tensor, f"__i{_d}__", _binop(PUB[_name + "_"], _name))
for _d, _name in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                  "gt": "greater", "ge": "greater_equal"}.items():
    setattr(Tensor, f"__{_d}__", _binop(PUB[_name], _name))


def _foreign(other) -> bool:
    """An object no tensor op reads as numbers: None, a string, a dict, an arbitrary object."""
    if other is None or isinstance(other, str | bytes):
        return True
    if isinstance(other, Tensor | numbers.Number | np.ndarray | np.generic | list | tuple | range):
        return False
    tp = type(other)
    return not any(hasattr(tp, a) for a in ("__array__", "__dlpack__", "__array_interface__",
                                            "__float__", "__index__", "_tensor_defers"))


def _none_is_other(fn):
    """x == None is False and x != None True (Python's identity fallback, as PyTorch's), so
    `x in (None, ...)` and `x == None` checks work; so do strings and other objects that hold
    no numbers (`x == "auto"` is False, as PyTorch's); the functions (T.equal) still refuse
    them."""
    def op(self, other):
        if type(other) is not Tensor and _foreign(other):
            return NotImplemented
        return fn(self, other)
    return op


Tensor.__eq__ = _none_is_other(Tensor.__eq__)
Tensor.__ne__ = _none_is_other(Tensor.__ne__)


def _divmod(a, b):
    """divmod(x, y): (x // y, x % y), as NumPy's divmod of arrays."""
    return PUB["floor_divide"](a, b), PUB["remainder"](a, b)


Tensor.__divmod__ = _binop(_divmod, "divmod")
Tensor.__rdivmod__ = _rbinop(_divmod, "divmod")


def _imatmul(self, other):
    """x @= y: the product written into x, which must already have the product's shape. When
    autograd records it, the product reads copies of x (and of y where it shares x's memory):
    the graph keeps those, not x's memory, which the write then changes (PyTorch's @= is
    differentiable)."""
    if isinstance(other, _ARRAY_LIKE):
        other = _numpy_operand(self, other, "matmul")
    if self.requires_grad or (isinstance(other, Tensor) and other.requires_grad):
        a = PUB["copy"](self)
        if isinstance(other, Tensor) and other._storage is self._storage:
            other = a if other is self else PUB["copy"](other)
        self_ = a
    else:
        self_ = self
    r = PUB["matmul"](self_, other)
    if r.shape != self.shape:
        raise ValueError(f"matmul: in-place x @= y needs the product's shape {r.shape} to equal "
                         f"x's shape {self.shape}")
    return PUB["copy_"](self, r)


Tensor.__imatmul__ = _imatmul
Tensor.__neg__ = lambda self: PUB["negative"](self)
Tensor.__pos__ = lambda self: PUB["positive"](self)
Tensor.__abs__ = lambda self: PUB["abs"](self)
Tensor.__invert__ = lambda self: PUB["bitwise_not"](self)
Tensor.__getitem__ = lambda self, key: PUB["getitem"](self, key)
Tensor.__setitem__ = lambda self, key, value: PUB["setitem"](self, key, value)

# Methods named as the public functions (NumPy/PyTorch spelling), self first.
_NOT_METHODS = {"where", "getitem", "setitem", "concatenate", "cat", "stack", "hstack", "vstack",
                "dstack", "array_split", "hsplit", "vsplit", "split", "atleast_1d", "atleast_2d",
                "atleast_3d", "fliplr", "flipud", "rot90", "pad", "tril", "triu", "outer", "inner",
                "tensordot", "put_along_axis", "take_along_axis", "matrix_transpose", "arctan2",
                "logsumexp", "argwhere", "broadcast_to", "real", "imag", "view_as_complex",
                # array API functions that neither NumPy nor PyTorch has as methods
                "concat", "permute_dims", "unstack", "broadcast_arrays", "meshgrid",
                "cumulative_sum", "cumulative_prod", "vecdot", "einsum",
                "unique_all", "unique_counts", "unique_inverse", "unique_values",
                # NumPy has them as functions only; Tensor.histogram would be PyTorch's, whose
                # hist is float
                "percentile", "nanpercentile", "histogram", "histogram_bin_edges",
                # NumPy's ndarray.sort sorts in place, PyTorch's returns (values, indices):
                # no method rather than one that surprises half its users
                "sort"}
for _m in (array_extra, math_extra, numpy_extra, torch_extra):
    _NOT_METHODS |= _m.NOT_METHODS
for _n, _f in PUB.items():
    if _n not in _NOT_METHODS:
        setattr(Tensor, _n, _f)
for _n, _f in {**torch_extra.METHODS, **math_extra.METHODS}.items():   # PyTorch's methods that
    setattr(Tensor, _n, _f)                                           # are no T.function
for _n, _f in torch_index.METHODS.items():   # Tensor.unfold (not nn.functional.unfold)
    setattr(Tensor, _n, _f)
for _n, _f in TORCH_METHODS.items():   # x.sort (PyTorch's or NumPy's by keyword)
    setattr(Tensor, _n, _f)


def _copy_(self, src, non_blocking: bool = False):
    """PyTorch's copy_: src's values (broadcast, cast, from any device) into this tensor, in
    place. non_blocking is accepted: the copy has read src when this returns (PyTorch's may
    return earlier; Tensor.to(..., non_blocking=True) is the copy that does not wait)."""
    return PUB["copy_"](self, src)


Tensor.copy_ = _copy_
_view_shape = PUB["view"]


def _view_method(self, *shape, dtype=None):
    """x.view(shape) (a reshape that never copies), or x.view(dtype): the memory read as
    another dtype (PyTorch's and NumPy's; tensor/views.py view_dtype)."""
    if dtype is None and len(shape) == 1 and isinstance(shape[0], _dt.DType | str | type | np.dtype):
        dtype = shape[0]
        shape = ()
    if dtype is not None:
        if shape:
            raise TypeError(f"view: give a shape or a dtype, not both (got {shape!r} and {dtype!r})")
        t = views.view_dtype(self, dtype)
        if t.dtype is _dt.bool_ and self.dtype is not _dt.bool_ and t.numel():
            # the kernels read a bool byte as its value: bytes other than 0 / 1 would count as
            # 2, 3... in sums and casts (NumPy and PyTorch read them as True)
            if PUB["amax"](views.view_dtype(t, _dt.uint8)).item() > 1:
                raise ValueError(f"view: the {self.dtype.name} tensor's bytes are not all 0 or 1, "
                                 "so they are no bool values; use x != 0 for a mask")
        return t
    return _view_shape(self, *shape)


Tensor.view = _view_method
Tensor.flat = property(flatiter.flat, flatiter.set_flat, doc="NumPy's flat iterator (tensor/flatiter.py)")
Tensor.T = property(lambda self: PUB["transpose"](self))
Tensor.mT = property(lambda self: PUB["matrix_transpose"](self))
# attributes, as NumPy's and PyTorch's: views of a complex tensor's parts
def _real_part(self):
    """x.real: a view of the real parts; a real tensor's is the tensor itself (NumPy's and
    PyTorch's attribute: writes through it reach x; T.real(x) is the standard's copy)."""
    return PUB["real"](self) if self.dtype.kind == "c" else self


def _imag_part(self):
    """x.imag: a view of the imaginary parts; a real tensor's is zeros, read-only (NumPy's:
    a write could not reach x)."""
    r = PUB["imag"](self)
    if self.dtype.kind != "c":
        r._ro = "it is the imaginary part of a real tensor (zeros no write could reach)"
    return r


Tensor.real = property(_real_part)
Tensor.imag = property(_imag_part)
Tensor.broadcast_to = lambda self, shape: PUB["broadcast_to"](self, shape)
# PyTorch's expand_as (read-only only where it repeats elements), not NumPy's broadcast_to


def _expand_as(self, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"expand_as: other must be a Tensor, got {type(other).__name__}")
    return PUB["expand"](self, other.shape)


Tensor.expand_as = _expand_as
Tensor.logsumexp = lambda self, axis=None, keepdims=False, *, dim=None: PUB["logsumexp"](
    self, axis, keepdims, dim=dim)
Tensor.arctan2 = lambda self, other: PUB["arctan2"](self, other)
Tensor.take_along_axis = lambda self, indices, axis: PUB["take_along_axis"](self, indices, axis)
Tensor.tril = lambda self, k=0: PUB["tril"](self, k)
Tensor.triu = lambda self, k=0: PUB["triu"](self, k)
# tensor/segment.py: PyTorch has scatter_reduce(_) and gather as methods, not the segment_* ops
for _n in ("segment_sum", "segment_prod", "segment_max", "segment_min", "segment_mean"):
    delattr(Tensor, _n)


def _to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False):
    """PyTorch's to: to(device), to(dtype), to(device, dtype), to(other) (other's device and
    dtype), with non_blocking and copy also positional after them. A device is a Device, a
    string or a CUDA index. non_blocking=True, as PyTorch's: from a pinned host tensor to CUDA
    the copy is queued on the current stream and this returns at once (the source's memory is
    not reused until it is done; do not write to it before a synchronization); from CUDA to the
    host the result is a new pinned tensor with its bytes (PyTorch's may return before them).
    Otherwise (and for pageable sources) the copy has read its source when this returns
    (tensor/pinned.py)."""
    from .device import Device
    from .device import device as parse_device
    flags = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and i == 0:
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, Device | int) or (isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda")):
            device = a
        else:
            dtype = a
    if len(flags) > 2:
        raise TypeError(f"to: at most two bool arguments (non_blocking, copy), got {len(flags)}")
    if flags:   # (non_blocking, copy)
        non_blocking = flags[0]
        copy = flags[1] if len(flags) == 2 else copy
    x = self
    if device is not None:
        dev = parse_device(f"cuda:{device}" if isinstance(device, int) else device)
        if dev != self.device:
            x = pinned.to_device_non_blocking(x, dev) if non_blocking else PUB["to_device"](x, dev)
            copy = False
    if dtype is not None:
        return PUB["astype"](x, dtype, copy)
    return PUB["copy"](x) if copy else x


def _cuda(self, device=None, non_blocking: bool = False):
    """The tensor on a CUDA device (the current one, or cuda:device); PyTorch's (non_blocking:
    see Tensor.to)."""
    return self.to("cuda" if device is None else device if isinstance(device, str) else
                   f"cuda:{device.index}" if hasattr(device, "index") else f"cuda:{device}",
                   non_blocking=non_blocking)


def _record_stream(self, stream) -> None:
    """Mark the tensor as used on a CUDA `stream` other than the one that allocated it: its
    memory is reused only after that stream has finished the work queued so far (PyTorch's)."""
    if self.device.type != "cuda":
        raise ValueError(f"record_stream: the tensor is on {self.device}, not a CUDA device")
    if stream.device_index != self.device.index:
        raise ValueError(f"record_stream: the stream is on cuda:{stream.device_index}, the "
                         f"tensor on {self.device}")
    st = self._storage
    if st._block is not None and stream.id != st._block.stream:
        if st.streams is None:
            st.streams = []
        if stream not in st.streams:
            st.streams.append(stream)


Tensor.record_stream = _record_stream
Tensor.to = _to
Tensor.cpu = lambda self, memory_format=None: self.to("cpu")
Tensor.cuda = _cuda
# pinned and shared host memory (tensor/pinned.py, tensor/shared.py), PyTorch's methods
Tensor.pin_memory = pinned.pin_memory
Tensor.is_pinned = pinned.is_pinned
Tensor.share_memory_ = shared.share_memory_
Tensor.is_shared = shared.is_shared

# --- interop ---
Tensor.numpy = interop.to_numpy
Tensor.__array__ = interop.array_protocol
Tensor.tolist = interop.tolist
Tensor.item = interop.item
Tensor.__repr__ = interop.format_tensor
Tensor.__str__ = interop.str_tensor
Tensor.__dlpack__ = interop.dlpack
Tensor.__dlpack_device__ = interop.dlpack_device
Tensor.__cuda_array_interface__ = property(interop.cuda_array_interface)
Tensor.__float__ = lambda self: float(interop.item(self))
Tensor.__int__ = lambda self: int(interop.item(self))
Tensor.__complex__ = lambda self: complex(interop.item(self))
Tensor.__array_ufunc__ = _numpy_protocol.array_ufunc
Tensor.__format__ = _numpy_protocol.format_spec


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




# --- autograd (the package is imported lazily, through tensor._hook) ---
def _requires_grad_(self, requires_grad: bool = True):
    self.requires_grad = requires_grad
    return self


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the .grad of the leaves it depends on."""
    _hook.autograd().backward(self, gradient, retain_graph, create_graph, inputs)


def _detach(self):
    """The same data without history (shares memory; read-only when self is)."""
    t = self._view(self._shape, self._strides)
    t._base = t._ag = None  # no link back into the graph either (nor a no_grad view's mark)
    return t


def _detach_(self):
    if self._base is not None:
        raise RuntimeError(f"detach_: cannot detach a view (shape {self.shape}) in place; use "
                           "detach(), as in PyTorch")
    self.grad_fn = None
    self._requires_grad = False
    return self


def _register_hook(self, fn):
    """Call fn(grad) when this tensor's gradient is computed; a returned tensor replaces it."""
    return _hook.autograd().hooks.register_hook(self, fn)


def _register_post_accumulate_grad_hook(self, fn):
    """Call fn(self) after backward summed its gradient into this leaf's .grad."""
    return _hook.autograd().hooks.register_post_accumulate_grad_hook(self, fn)


def _retain_grad(self):
    """Keep .grad on a non-leaf tensor after backward."""
    _hook.autograd().hooks.retain_grad(self)


def _set_data(self, new) -> None:
    """`t.data = new` (PyTorch's): t takes new's memory, shape and dtype in place, keeping its
    identity, requires_grad and hooks (an optimizer holding t sees the new values)."""
    if not isinstance(new, Tensor):
        raise TypeError(f"data: expected a Tensor, got {type(new).__name__}")
    if self._requires_grad and new.dtype.kind not in "fc":
        raise RuntimeError(f"data: a tensor that requires grad cannot take {new.dtype.name} data "
                           "(only floating-point and complex tensors can require gradients)")
    self._storage, self._shape, self._strides, self._offset = (new._storage, new._shape,
                                                               new._strides, new._offset)
    self._dtype, self._contig, self._ro = new._dtype, None, new._ro


Tensor.requires_grad_ = _requires_grad_
# PyTorch's t.data: the data without history, as detach() (a write through it bumps the shared
# version counter, so autograd still sees it: stricter than PyTorch, never a silent wrong grad)
Tensor.data = property(_detach, _set_data)
Tensor.backward = _backward
Tensor.detach = _detach
Tensor.detach_ = _detach_
Tensor.register_hook = _register_hook
Tensor.retain_grad = _retain_grad
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.retains_grad = property(lambda self: self._ag is not None and self.grad_fn is not None
                               and _hook.autograd().hooks.retains_grad(self))


# --- copy and pickle: a tensor travels as its values (a detached copy) and its device ---
def _rebuild(raw: bytes, dtype: str, shape: tuple, requires_grad: bool, device: str = "cpu"):
    from .dtypes import dtype as to_dtype
    d = to_dtype(dtype)
    import numpy as np
    a = np.frombuffer(raw, dtype=np.int16 if d.np is None else d.np).reshape(shape)
    t = from_numpy(a.copy())
    if d.np is None:  # bfloat16 travels as its raw 16-bit words
        t = Tensor._make(t._storage, t._shape, t._strides, t._offset, d)
    if device != "cpu":
        t = PUB["to_device"](t, device)
    return t.requires_grad_() if requires_grad else t


def _reduce(self):
    c = PUB["contiguous"](self.detach())
    words = c if c.dtype.np is not None else Tensor._make(c._storage, c._shape, c._strides,
                                                          c._offset, _dt.int16)
    return (_rebuild, (words.numpy().tobytes(), self.dtype.name, self.shape,
                       self.requires_grad and self.is_leaf, str(self.device)))


def _copy(self):
    """copy.copy(t): a compact copy of the values on the same device (NumPy's), requires_grad
    kept for a leaf."""
    t = PUB["copy"](self.detach())
    if self.requires_grad and self.is_leaf:
        t.requires_grad_()
    return t


def _copied_storage(st, memo: dict):
    """The copy of storage `st` made in this deepcopy (one per storage, so tensors that share
    memory keep sharing it in the copy, as PyTorch's deepcopy)."""
    new = memo.get(id(st))
    if new is None:
        raw = Tensor._make(st, (st.nbytes,), (1,), 0, _dt.uint8)
        new = memo[id(st)] = PUB["copy"](raw)._storage
        memo.setdefault(id(memo), []).append(st)   # (copy's rule: memo's ids must stay alive)
    return new


def _deepcopy(self, memo):
    """copy.deepcopy(t): a copy on the same device with the same layout, whose memory is shared
    with the other tensors of the same deepcopy that shared it (a view and its base in one
    container stay a view and its base, as PyTorch's); requires_grad kept for a leaf, .grad
    deep-copied too. A view brings its whole storage along (as PyTorch's)."""
    import copy
    t = Tensor._make(_copied_storage(self._storage, memo), self._shape, self._strides,
                     self._offset, self._dtype)
    if isinstance(self._ro, str):   # a read-only layout (broadcast_to) stays one
        t._ro = self._ro
    if self.requires_grad and self.is_leaf:
        t.requires_grad_()
    memo[id(self)] = t
    if self.grad is not None:
        t.grad = copy.deepcopy(self.grad, memo)
    return t


Tensor.__reduce__ = _reduce
Tensor.__copy__ = _copy   # as NumPy: copy.copy copies data
Tensor.__deepcopy__ = _deepcopy


# --- PyTorch's dtype shorthands: x.float(), x.long(), ... (recorded as astype) ---
def _caster(name):
    def m(self):
        return PUB["astype"](self, name, False)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = f"This tensor as {name} (itself when it already is), as PyTorch's."
    return m


for _meth, _dtype_name in {"float": "float32", "double": "float64", "half": "float16",
                           "bfloat16": "bfloat16", "long": "int64", "int": "int32",
                           "short": "int16", "char": "int8", "byte": "uint8",
                           "bool": "bool"}.items():
    setattr(Tensor, _meth, _caster(_dtype_name))


def _t(self):
    """PyTorch's t(): the transpose of a tensor of rank <= 2."""
    if self.ndim > 2:
        raise ValueError(f"t: expects a tensor of rank <= 2, got shape {self.shape}; use mT or "
                         "transpose(axes)")
    return PUB["transpose"](self)


Tensor.t = _t
def _masked_fill(self, mask, value):
    """PyTorch's masked_fill: value where mask is true; keeps this tensor's dtype (the value is
    cast to it first, so the other elements are never rounded through a wider type; a complex
    value into a real tensor raises)."""
    from . import elementwise as ew
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        got = mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"masked_fill: the mask must be a bool tensor, got {got}")
    if mask.device != self.device:
        raise ValueError(f"masked_fill: the mask is on {mask.device} but the tensor is on "
                         f"{self.device}")
    if isinstance(value, Tensor):
        ew.check_real_into("masked_fill", value.dtype, self.dtype)
        if value.device != self.device:
            if value.ndim:
                raise ValueError(f"masked_fill: the value is on {value.device} but the tensor "
                                 f"is on {self.device} (only a 0-d value may be on another)")
            value = value.to(self.device)
        v = value if value.dtype is self.dtype else PUB["astype"](value, self.dtype)
    else:
        v = ew.empty_tensor((), self.dtype, self.device)
        ew.copy_into(v, value, "masked_fill")
    return PUB["where"](mask, v, self)


Tensor.masked_fill = _masked_fill


def _contains(self, value) -> bool:
    """`value in x`: whether any element equals value, as NumPy's and PyTorch's."""
    return bool(PUB["any"](self == value))


Tensor.__contains__ = _contains


def _to_sparse(self, layout="coo", *, sparse_dim=None):
    """PyTorch's to_sparse(): this 2-D tensor's nonzeros as a tensor.sparse matrix (COO, or
    CSR with layout="csr"); PyTorch's to_sparse(sparse_dim) takes 2 (both dims sparse: COO)."""
    from .sparse import from_dense
    if isinstance(layout, int) and not isinstance(layout, bool) or sparse_dim is not None:
        d = layout if sparse_dim is None else sparse_dim
        if d != 2 or self.ndim != 2:
            raise ValueError(f"to_sparse: sparse_dim {d} of a tensor of shape {tuple(self.shape)}: "
                             "sparse matrices here are 2-D, both dims sparse (sparse_dim=2)")
        layout = "coo"
    return from_dense(self, layout)


Tensor.to_sparse = _to_sparse
Tensor.to_sparse_csr = lambda self: _to_sparse(self, "csr")


def _offer_fast_functions() -> None:
    """Offer the public unary functions to the C fast path (tensor/_tensor.py FAST_FUNCS): each
    one published as made (autograd's wrapper of ops' function: no other spelling wraps it), in
    PUB and in the tensor namespace (tensor/__init__.py fills it from PUB)."""
    from . import ops
    from .optable import UNARY
    for op in UNARY:
        f = PUB.get(op.name)
        if getattr(f, "__wrapped_op__", None) == op.name and \
                getattr(f, "__wrapped__", None) is ops.FUNCS[op.name]:
            _tensor.FAST_FUNCS[op.name] = f
    _tensor.FAST_HOSTS.extend((PUB, sys.modules[__name__.rpartition(".")[0]].__dict__))


_offer_fast_functions()
