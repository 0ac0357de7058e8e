"""The Tensor type: a view (shape, strides in elements, offset, dtype) of a Storage block.

Ops are attached from their own modules (elementwise, reductions, views, indexing...);
this file holds the data model and the small properties everything else uses.

>>> import tensor as T
>>> x = T.arange(6).reshape(2, 3)
>>> x.T.shape, x.T.strides, T.shares_memory(x, x.T)
((3, 2), (1, 3), True)
"""
from __future__ import annotations

from . import _hook
from . import dtypes as dt
from .axes import norm_axis
from .backend import backend_for
from .device import CPU, Device


class Storage:
    """A block of device memory. Memory from the caching allocator goes back to it when the
    last tensor viewing it dies; external memory (NumPy arrays, DLPack) is kept alive through
    `owner` and released through `release`."""

    __slots__ = ("ptr", "nbytes", "device", "_block", "_alloc", "owner", "release", "version",
                 "streams", "readonly", "__weakref__")

    def __init__(self, ptr, nbytes, device=CPU, block=None, alloc=None, owner=None, release=None,
                 readonly: bool = False):
        self.ptr, self.nbytes, self.device = ptr, nbytes, device
        self._block, self._alloc, self.owner, self.release = block, alloc, owner, release
        self.readonly = readonly  # memory that must never be written (a read-only external buffer)
        self.version = 0  # bumped by in-place writes; autograd checks saved tensors against it
        self.streams = None  # CUDA streams besides the allocating one that use it (record_stream)
        c = _hook.capture
        if c is not None:
            c.born(self)

    def __del__(self):
        c = _hook.capture
        if c is not None and c.keep(self):   # a capture's recorded calls may still read it
            return
        b = getattr(self, "_block", None)  # may be unset if __init__ never ran (copy/pickle)
        self._block = None
        try:
            if b is not None:
                if self.streams:   # other streams may still use it: free once they pass here
                    backend_for(self.device).free_after_streams(self._alloc, b, self.streams)
                else:
                    self._alloc.free(b)
            elif getattr(self, "release", None) is not None:
                r, self.release = self.release, None
                r()
        except Exception:  # interpreter shutdown: modules may already be torn down
            pass


# Public functions a C fast path may stand in for: op name -> the function (tensor/_methods.py
# offers the unary ones); tensor/cpu/fastpath.py puts a C function with the same results, which
# hands every call it does not take to the Python one, wherever that one is found among Tensor's
# methods and in the namespaces (dicts) of FAST_HOSTS
FAST_FUNCS: dict = {}
FAST_HOSTS: list = []


def new_storage(nbytes: int, device: Device = CPU) -> Storage:
    """Fresh memory on `device` from its caching allocator (its backend's)."""
    return (device._be or backend_for(device)).new_storage(nbytes, device)


_STRIDES: dict = {}


def tracked(t) -> bool:
    """t carries a gradient or a tangent: autograd follows what is computed from it (the ops
    with a cheaper value-only path take the recorded one then)."""
    m = t._ag
    return t._requires_grad or (m is not None and m.tangent is not None)


def contiguous_strides(shape) -> tuple:
    """C-order strides (in elements) of a shape; cached, since shapes repeat."""
    st = _STRIDES.get(shape)
    if st is None:
        out, acc = [], 1
        for n in reversed(shape):
            out.append(acc)
            acc *= n if n > 0 else 1
        st = tuple(reversed(out))
        if len(_STRIDES) < 4096:
            _STRIDES[tuple(shape)] = st
    return st


def empty(shape: tuple, dtype, device: Device = CPU) -> Tensor:
    """A new C-contiguous tensor (internal: no size check; users get tensor.empty)."""
    n = 1
    for s in shape:
        n *= s
    shape = tuple(shape)
    return Tensor._make(new_storage(n * dtype.itemsize, device), shape, contiguous_strides(shape), 0,
                        dtype)


class Tensor:
    """An n-dimensional array of one dtype on one device (see the package docstring)."""

    __slots__ = ("_storage", "_shape", "_strides", "_offset", "_dtype", "_contig", "_ro",
                 "_requires_grad", "_grad", "grad_fn", "_ag", "_base", "__weakref__")
    __array_priority__ = 1000  # NumPy defers `ndarray op Tensor` to our reflected operators

    def __init__(self, *args, **kwargs):
        raise TypeError("Tensor: create tensors with tensor.tensor(data), tensor.asarray(x), "
                        "tensor.zeros(shape) and friends")

    # --- construction (internal) ---
    @classmethod
    def _make(cls, storage: Storage, shape: tuple, strides: tuple, offset: int, dtype: dt.DType):
        t = object.__new__(cls)
        t._storage, t._shape, t._strides, t._offset, t._dtype = storage, shape, strides, offset, dtype
        t._contig = t._ro = None
        t._requires_grad = False
        t._grad = t.grad_fn = t._ag = t._base = None
        return t

    def _view(self, shape, strides, offset=None) -> Tensor:
        """A view of the same memory; it inherits read-only-ness (see Flags).

        Outside no_grad, it also remembers its base (the tensor at the root of a chain of views)
        and the storage's version then, `_base = (root, version)`: autograd sees from them that
        the memory was written since (an in-place op on the base or another view of it) and then
        derives the view's gradient from the base's current graph, as PyTorch does."""
        t = Tensor._make(self._storage, tuple(shape), tuple(strides),
                         self._offset if offset is None else offset, self._dtype)
        ro = self._ro
        if ro is not None:
            t._ro = self if ro is True else ro
        g = _hook.grad_state
        if g is None or g.grad_enabled or g.fw_level:
            b = self._base
            t._base = b if b is not None else (self, self._storage.version)
        elif self._requires_grad or self._ag is not None:
            _hook.nograd_view(t, self)
        return t

    # --- basic properties ---
    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def size(self) -> int:
        """Number of elements (NumPy's .size); also callable as PyTorch's size() / size(dim)."""
        n = 1
        for s in self._shape:
            n *= s
        return _Size(n, self)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def dtype(self) -> dt.DType:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._storage.device

    @property
    def strides(self) -> tuple:
        """Strides in elements (like PyTorch's stride(); NumPy's .strides are in bytes)."""
        return self._strides

    def stride(self, dim: int | None = None):
        if dim is None:
            return self._strides
        return self._strides[norm_axis(dim, self.ndim, "stride")]

    @property
    def offset(self) -> int:
        return self._offset

    def storage_offset(self) -> int:
        return self._offset

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    def data_ptr(self) -> int:
        """Address of the first element."""
        c = _hook.capture
        if c is not None:   # a backend call may get this address: the capture must know whose
            c.saw(self._storage)
        return self._storage.ptr + self._offset * self._dtype.itemsize

    @property
    def is_cuda(self) -> bool:
        return self._storage.device.type == "cuda"

    def is_contiguous(self) -> bool:
        c = self._contig
        if c is None:
            c = True
            if 0 not in self._shape:
                acc = 1
                for n, s in zip(reversed(self._shape), reversed(self._strides)):
                    if n != 1 and s != acc:
                        c = False
                        break
                    acc *= n
            self._contig = c
        return c

    @property
    def flags(self) -> Flags:
        """NumPy's flags: `t.flags.writeable` (settable) and `t.flags.c_contiguous`."""
        return Flags(self)

    @property
    def grad(self):
        """The gradient backward accumulated into this leaf (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, g) -> None:
        if g is not None:
            _check_grad(self, g)
        self._grad = g

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag and not self._requires_grad:
            if self._dtype.kind not in "fc":
                raise RuntimeError(f"requires_grad: only floating-point and complex tensors can "
                                   f"require gradients, got {self._dtype.name}")
            if _hook.record is None:
                _hook.autograd()  # importing autograd installs the recording hook
        elif not flag and self.grad_fn is not None:
            raise RuntimeError("requires_grad: a non-leaf tensor always requires grad; use "
                               "detach() for a tensor without history")
        self._requires_grad = bool(flag)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        """How many in-place writes the tensor's memory has had (PyTorch's t._version; shared by
        every view of it): what autograd checks the tensors it saved against."""
        return self._storage.version

    @property
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is (0 for a leaf)."""
        return self._ag.output_nr if self.grad_fn is not None and self._ag is not None else 0

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self):
        return id(self)


class Flags:
    """A tensor's NumPy-style flags. `writeable` is False for broadcast views (several elements
    share one memory location), for tensors on read-only memory (a read-only NumPy array or
    buffer, a read-only DLPack export) and for tensors made read-only with
    `t.flags.writeable = False`; views of a read-only tensor are read-only. As in NumPy, a
    tensor can be made writeable again unless its memory is read-only by origin, or it views
    a tensor that is still read-only.

    >>> import tensor as T
    >>> b = T.zeros(3); x = T.broadcast_to(b, (2, 3))
    >>> x.flags.writeable, b.flags.writeable
    (False, True)
    """

    __slots__ = ("_t",)

    def __init__(self, t: Tensor):
        self._t = t

    @property
    def writeable(self) -> bool:
        return self._t._ro is None and not self._t._storage.readonly

    @writeable.setter
    def writeable(self, flag: bool) -> None:
        t = self._t
        if not flag:
            if t._ro is None:
                t._ro = True
            return
        why = _locked_reason(t)
        if why is not None:
            raise ValueError(f"flags.writeable: cannot set WRITEABLE flag to True of this tensor: {why}")
        t._ro = None

    @property
    def c_contiguous(self) -> bool:
        return self._t.is_contiguous()

    def __repr__(self) -> str:
        return f"  C_CONTIGUOUS : {self.c_contiguous}\n  WRITEABLE : {self.writeable}"


def readonly_reason(t: Tensor) -> str | None:
    """Why t may not be written, or None when it may."""
    if t._storage.readonly:
        return "its memory is a read-only external buffer (a read-only NumPy array, bytes, DLPack)"
    ro = t._ro
    if ro is None:
        return None
    if isinstance(ro, str):
        return ro
    if ro is True:
        return "it was made read-only (flags.writeable = False)"
    return "it is a view of a read-only tensor"


def _locked_reason(t: Tensor) -> str | None:
    """Why t cannot be made writeable again, or None. NumPy's rule: allowed unless the memory
    is read-only by origin, or t views a read-only tensor and none of the tensors it was viewed
    through is writeable now."""
    ro = t._ro
    if t._storage.readonly or isinstance(ro, str):
        return readonly_reason(t)
    while isinstance(ro, Tensor):
        if ro._ro is None:
            return None
        ro = ro._ro
    return None if ro is None or t._ro is True else "it is a view of a read-only tensor"


class _Size(int):
    """An int (NumPy's `x.size`) that PyTorch code can also call: `x.size()`, `x.size(0)`."""

    def __new__(cls, n, t):
        o = int.__new__(cls, n)
        o._t = t
        return o

    def __call__(self, dim=None):
        t = self._t
        if dim is None:
            return t.shape
        return t.shape[norm_axis(dim, t.ndim, "size")]


def _check_grad(t: Tensor, g) -> None:
    """PyTorch's rule for `t.grad = g`: a tensor (or sparse tensor) of t's shape, dtype and device."""
    if not isinstance(g, Tensor) and not hasattr(g, "to_dense"):
        raise TypeError(f"grad: assigned grad expected to be a Tensor or None but got grad of "
                        f"type {type(g).__name__}")
    if tuple(g.shape) != t._shape:
        raise RuntimeError(f"grad: attempting to assign a gradient of shape {tuple(g.shape)} to a "
                           f"tensor of shape {t._shape}")
    if g.dtype != t._dtype:
        raise RuntimeError(f"grad: attempting to assign a gradient of dtype {g.dtype.name} to a "
                           f"tensor of dtype {t._dtype.name}")
    if g.device != t.device:
        raise RuntimeError(f"grad: attempting to assign a gradient on {g.device} to a tensor on "
                           f"{t.device}")
