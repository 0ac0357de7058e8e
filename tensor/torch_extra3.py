"""More of PyTorch's top-level functions: broadcast_tensors, norm, vdot's siblings cdist, pdist,
cosine_similarity and pairwise_distance (PyTorch's formulas, in tensor ops: tensor must not
import nn), split_with_sizes, unsafe_split, unsafe_chunk, fill, index_put, is_signed, is_conj,
is_neg, empty_permuted, and the global switches use_deterministic_algorithms and
set_float32_matmul_precision (what they mean here is in their docstrings). The special functions
(igamma, igammac, mvlgamma) are tensor/torch_special.py's, stft / istft tensor/torch_spectral.py's.

Compositions of the public (recorded) ops, so autograd needs no rule of their own.

>>> import tensor as T
>>> [t.shape for t in T.broadcast_tensors(T.ones(3), T.ones((2, 1)))]
[(2, 3), (2, 3)]
>>> T.norm(T.tensor([3.0, 4.0])).item()
5.0
"""
from __future__ import annotations

import operator

from . import dtypes as dt
from . import elementwise as ew
from . import numpy_extra3 as _np3
from . import torch_extra2 as X2
from ._tensor import Tensor
from .axes import norm_axis
from .creation import empty, full_like
from .linalg import _funcs as LA  # not the package, whose __getattr__ reaches public.py
from .optable import T as P  # tensor's public (recorded) functions

_pub, _t = X2._pub, X2._tensor


@_pub("broadcast_tensors", method=False)
def broadcast_tensors(*tensors) -> tuple:
    """The tensors broadcast to one shape (views), as PyTorch's (NumPy's broadcast_arrays)."""
    for t in tensors:
        _t(t, "broadcast_tensors")
    try:
        return tuple(P.broadcast_arrays(*tensors))
    except ValueError as e:
        raise ValueError(f"broadcast_tensors: {e}") from None


# torch.norm: the same function as Tensor.norm (tensor/torch_extra2.py), published as a function
_pub("norm")(X2.norm)
# vdot and dsplit (tensor/numpy_extra3.py's, NumPy's semantics): functions and PyTorch's Tensor methods
_pub("vdot")(_np3.vdot)
_pub("dsplit")(_np3.dsplit)


# ---------------------------------------------------------------- distances


def _float_pair(name: str, x1, x2):
    x1, x2 = _t(x1, name), _t(x2, name)
    ew.same_device(name, (x1, x2))
    for x in (x1, x2):
        if x.dtype.kind not in "fc":
            raise TypeError(f"{name}: expects floating-point tensors, got {x1.dtype.name} and "
                            f"{x2.dtype.name}")
    d = dt.promote_types(x1.dtype, x2.dtype)
    return P.astype(x1, d, False), P.astype(x2, d, False)


def _p_arg(p, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not p >= 0:
        raise ValueError(f"{name}: p must be a number >= 0 (or inf), got {p!r}")
    return float(p)


def _pnorm(diff: Tensor, p: float, axis, keepdims: bool = False) -> Tensor:
    if p == 0:   # the number of nonzero differences, as PyTorch's
        return P.sum(P.astype(P.not_equal(diff, 0), diff.dtype), axis=axis, keepdims=keepdims)
    return LA.vector_norm(diff, axis=axis, keepdims=keepdims, ord=p)


@_pub("cdist", method=False)
def cdist(x1, x2, p: float = 2.0, compute_mode=None) -> Tensor:
    """The p-norm distances between each row of x1 (..., P, M) and each row of x2 (..., R, M):
    (..., P, R), batch dims broadcast. Computed from the differences for every p (PyTorch's
    matrix-product shortcut for p = 2 is less accurate); compute_mode is accepted and ignored."""
    x1, x2 = _float_pair("cdist", x1, x2)
    p = _p_arg(p, "cdist")
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"cdist: expects x1 (..., P, M) and x2 (..., R, M) of the same M, got shapes "
                         f"{x1.shape} and {x2.shape}")
    diff = P.subtract(P.expand_dims(x1, -2), P.expand_dims(x2, -3))
    return _pnorm(diff, p, -1)


@_pub("pdist", method=False)
def pdist(input, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of a 2-d input (N, M), for each pair i < j in row
    order: N (N - 1) / 2 values (the upper triangle of cdist(input, input))."""
    x = _t(input, "pdist")
    if x.ndim != 2:
        raise ValueError(f"pdist: expects a 2-d input, got shape {x.shape}")
    if x.dtype.kind not in "fc":
        raise TypeError(f"pdist: expects a floating-point tensor, got {x.dtype.name}")
    p = _p_arg(p, "pdist")
    i, j = _triu_pairs(x)
    diff = P.subtract(P.take(x, i, axis=0), P.take(x, j, axis=0))
    return _pnorm(diff, p, -1)


def _triu_pairs(x: Tensor):
    n = x.shape[0]
    return P.triu_indices(n, 1, n, device=x.device)


@_pub("cosine_similarity", method=False)
def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2, dim) / (max(||x1||, eps) * max(||x2||, eps)) over dim, x1 and x2 broadcast
    together, as PyTorch's (each norm clamped at eps separately)."""
    x1, x2 = _float_pair("cosine_similarity", x1, x2)
    x1, x2 = P.broadcast_arrays(x1, x2)
    n1 = P.clamp_min(LA.vector_norm(x1, axis=dim, keepdims=True), eps)
    n2 = P.clamp_min(LA.vector_norm(x2, axis=dim, keepdims=True), eps)
    return P.sum(P.multiply(P.divide(x1, n1), P.divide(x2, n2)), axis=dim)


@_pub("pairwise_distance", method=False)
def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim, x1 and x2 broadcast, as PyTorch's."""
    x1, x2 = _float_pair("pairwise_distance", x1, x2)
    p = _p_arg(p, "pairwise_distance")
    diff = P.add(P.subtract(x1, x2), eps)
    if diff.ndim == 0:
        return P.abs(diff) if p != 0 else P.astype(P.not_equal(diff, 0), diff.dtype)
    return _pnorm(diff, p, -1, keepdim)


# ---------------------------------------------------------------- splits, fills, index_put


@_pub("split_with_sizes")
def split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """Views of input's pieces of the listed sizes along dim (they must add up to its size)."""
    if isinstance(split_sizes, int):
        raise TypeError("split_with_sizes: split_sizes must be a sequence of ints (use split for one size)")
    return X2.split(_t(input, "split_with_sizes"), list(split_sizes), dim)


@_pub("unsafe_split_with_sizes")   # (its own function: public.py names each published function once)
def unsafe_split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """split_with_sizes (the same here)."""
    return split_with_sizes(input, split_sizes, dim)


@_pub("unsafe_split")
def unsafe_split(input, split_size_or_sections, dim: int = 0) -> tuple:
    """PyTorch's split (pieces of split_size, or of the listed sizes); no view tracking differs
    here, so it is split."""
    return X2.split(_t(input, "unsafe_split"), split_size_or_sections, dim)


@_pub("unsafe_chunk")
def unsafe_chunk(input, chunks: int, dim: int = 0) -> list:
    """chunk (the same here: PyTorch's unsafe_ forms only skip its view bookkeeping)."""
    return P.chunk(_t(input, "unsafe_chunk"), chunks, dim)


@_pub("fill", method=False)   # (ndarray.fill is NumPy's in-place method: not this)
def fill(input, value) -> Tensor:
    """A new tensor of input's shape, dtype and device, every element value (PyTorch's torch.fill,
    the out-of-place fill_); a tensor value must hold one element."""
    x = _t(input, "fill")
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"fill: value must be a number or a one-element tensor, got shape {value.shape}")
        ew.same_device("fill", (x, value))
        return P.contiguous(P.broadcast_to(P.astype(P.reshape(value, ()), x.dtype, False), x.shape))
    return full_like(x, value)


@_pub("index_put")
def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of input with values written (or added, accumulate=True) at a tuple of index
    tensors, as PyTorch's index_put (the out-of-place index_put_)."""
    x = _t(input, "index_put")
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put: indices must be a tuple or list of tensors, got "
                        f"{type(indices).__name__}")
    return P.index_put_(P.copy(x), tuple(indices), values, accumulate)


def _is_signed(input) -> bool:
    """Whether the dtype holds negative values (signed integers, floats, complex)."""
    return _t(input, "is_signed").dtype.kind in "ifc"


def _never(name):
    def f(input) -> bool:
        _t(input, name)
        return False
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"False: tensors here have no lazy {'conjugate' if name == 'is_conj' else 'negation'} bit "
                 "(conj and neg make their results at once), so there is nothing to resolve.")
    return f


_is_signed.__name__ = _is_signed.__qualname__ = "is_signed"
_pub("is_signed")(_is_signed)
_pub("is_conj")(_never("is_conj"))
_pub("is_neg")(_never("is_neg"))


@_pub("empty_permuted", method=False)
def empty_permuted(size, physical_layout, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of shape size whose memory holds its dims in the order
    physical_layout (outermost first): empty_permuted((2, 3, 4), (0, 2, 1)) has strides of
    a (2, 4, 3) tensor permuted."""
    size = tuple(operator.index(s) for s in size)
    lay = tuple(operator.index(i) for i in physical_layout)
    if sorted(lay) != list(range(len(size))):
        raise ValueError(f"empty_permuted: physical_layout {lay} is not a permutation of the "
                         f"{len(size)} dims")
    phys = empty(tuple(size[i] for i in lay), dtype=dtype, device=device)
    inv = [0] * len(lay)
    for pos, d in enumerate(lay):
        inv[d] = pos
    r = P.permute(phys, inv)
    return r.requires_grad_() if requires_grad else r


# ---------------------------------------------------------------- the *_copy forms of views


def _copy_form(name: str, view, doc: str) -> None:
    """Publish name(input, ...) = a new tensor holding view(input, ...)'s values (PyTorch's
    view_copy family: no storage shared with input; differentiable as the view and clone are)."""
    def f(input, *args, **kwargs):
        r = view(_t(input, name), *args, **kwargs)
        if isinstance(r, (tuple, list)):
            return type(r)(P.copy(v) for v in r)
        return P.copy(r)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc} (a copy, not a view)."
    _pub(name, method=False)(f)


def _slice(x, dim: int = 0, start=None, end=None, step: int = 1):
    if step <= 0:
        raise ValueError(f"slice_copy: step must be positive, got {step}")
    key = [slice(None)] * x.ndim
    key[norm_axis(dim, x.ndim, "slice_copy")] = slice(start, end, step)
    return P.getitem(x, tuple(key))


def _select(x, dim: int, index: int):
    key = [slice(None)] * x.ndim
    key[dim] = operator.index(index)
    return P.getitem(x, tuple(key))


for _name, _view, _doc in (
        ("alias_copy", lambda x: x, "input's values"),
        ("detach_copy", lambda x: x.detach(), "input's values, detached from the graph"),
        ("t_copy", lambda x: P.t(x), "t(input)"),
        ("transpose_copy", lambda x, dim0, dim1: P.swapaxes(x, dim0, dim1),
         "input with dim0 and dim1 swapped"),
        ("permute_copy", lambda x, dims: P.permute(x, *dims), "input with its dims permuted"),
        ("diagonal_copy", lambda x, offset=0, dim1=0, dim2=1: P.diagonal(x, offset, dim1, dim2),
         "the diagonal of dims dim1, dim2 at offset"),
        ("expand_copy", lambda x, size: P.expand(x, *size), "input expanded to size (-1 keeps a dim)"),
        ("squeeze_copy", lambda x, dim=None: P.squeeze(x) if dim is None else P.squeeze(x, dim=dim),
         "input with its size-1 dims (or dim) removed"),
        ("unsqueeze_copy", lambda x, dim: P.unsqueeze(x, dim), "input with a size-1 dim inserted at dim"),
        ("view_copy", lambda x, size: P.view(x, *size), "input viewed as size"),
        ("select_copy", _select, "input[..., index, ...] at dim"),
        ("slice_copy", _slice, "input[start:end:step] along dim"),
        ("as_strided_copy", lambda x, size, stride, storage_offset=None: P.as_strided(
            x, size, stride, storage_offset), "as_strided(input, size, stride, storage_offset)"),
        ("view_as_real_copy", lambda x: P.view_as_real(x), "view_as_real(input)"),
        ("view_as_complex_copy", lambda x: P.view_as_complex(x), "view_as_complex(input)"),
        ("unbind_copy", lambda x, dim=0: P.unbind(x, dim), "the slices along dim"),
        ("split_copy", lambda x, split_size, dim=0: X2.split(x, split_size, dim),
         "PyTorch's split (pieces of split_size, or of the listed sizes)"),
        ("split_with_sizes_copy", lambda x, split_sizes, dim=0: split_with_sizes(x, split_sizes, dim),
         "split_with_sizes"),
        ("unfold_copy", lambda x, dimension, size, step: x.unfold(dimension, size, step),
         "Tensor.unfold's windows"),
):
    _copy_form(_name, _view, _doc)


@_pub("ger")
def ger(input, vec2) -> Tensor:
    """outer(input, vec2) of two 1-d tensors (PyTorch's older name)."""
    a, b = _t(input, "ger"), _t(vec2, "ger")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"ger: expects two 1-d tensors, got shapes {a.shape} and {b.shape}")
    return P.outer(a, b)


@_pub("is_inference")
def is_inference(input) -> bool:
    """False: there is no inference mode here, so no tensor is an inference tensor."""
    _t(input, "is_inference")
    return False


@_pub("typename", method=False)
def typename(obj) -> str:
    """A tensor's PyTorch-style type name ('torch.FloatTensor' style: tensor.FloatTensor,
    tensor.cuda.DoubleTensor...); for anything else its class's qualified name."""
    if isinstance(obj, Tensor):
        names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long",
                 "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
        base = names.get(obj.dtype.name, obj.dtype.name.capitalize())
        return f"tensor.{'cuda.' if obj.is_cuda else ''}{base}Tensor"
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


# ---------------------------------------------------------------- Tensor-only methods (no T.function)


def _method(fn):
    X2.METHODS[fn.__name__] = fn
    return fn


@_method
def ndimension(self) -> int:
    """The number of dims (PyTorch's older name for ndim / dim())."""
    return _t(self, "ndimension").ndim


@_method
def cdouble(self) -> Tensor:
    """This tensor as complex128 (itself when it already is), as PyTorch's."""
    return P.astype(_t(self, "cdouble"), dt.complex128, False)


@_method
def cfloat(self) -> Tensor:
    """This tensor as complex64 (itself when it already is), as PyTorch's."""
    return P.astype(_t(self, "cfloat"), dt.complex64, False)


@_method
def sum_to_size(self, *size) -> Tensor:
    """self summed down to `size`, a shape that broadcasts to self's: the dims missing in front
    summed away, those of size 1 in `size` summed and kept (PyTorch's, the reverse of expand)."""
    x = _t(self, "sum_to_size")
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
    lead = x.ndim - len(size)
    ok = lead >= 0 and all(s in (1, n) for s, n in zip(size, x.shape[lead:]))
    if not ok:
        raise ValueError(f"sum_to_size: size {size} is not expandable to the tensor's shape {x.shape}")
    r = P.sum(x, axis=tuple(range(lead))) if lead else x
    dims = tuple(i for i, (s, n) in enumerate(zip(size, r.shape)) if s == 1 and n != 1)
    return P.sum(r, axis=dims, keepdims=True) if dims else r


@_method
def tobytes(self, order: str = "C") -> bytes:
    """The raw bytes of the values in C (or 'F') order, as NumPy's ndarray.tobytes (host copy)."""
    return _np3.host_array(_t(self, "tobytes"), "tobytes").tobytes(order=order)


@_method
def tofile(self, fid, sep: str = "", format: str = "%s") -> None:  # noqa: A002  (NumPy's name)
    """Writes the values to a file (raw bytes in C order, or text with sep), by NumPy's tofile."""
    x = _t(self, "tofile")
    if not isinstance(fid, str | bytes) and not hasattr(fid, "write") and not hasattr(fid, "__fspath__"):
        raise TypeError(f"tofile: fid must be a file name or an open file, got {type(fid).__name__}")
    _np3.host_array(x, "tofile").tofile(fid, sep=sep, format=format)


X2.METHODS["is_cpu"] = property(lambda self: not self.is_cuda, doc="Whether on the CPU (not CUDA).")


# ---------------------------------------------------------------- global switches

_STATE = {"deterministic": False, "warn_only": False, "matmul": "highest"}


@_pub("use_deterministic_algorithms", method=False)
def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records the setting (are_deterministic_algorithms_enabled reads it back). Nothing changes:
    every kernel here is deterministic already (no floating-point atomics, fixed reduction trees;
    the same program on the same device gives bitwise-identical results, gradients included)."""
    if not isinstance(mode, bool) or not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms: mode and warn_only must be bools, got "
                        f"{type(mode).__name__} and {type(warn_only).__name__}")
    _STATE["deterministic"], _STATE["warn_only"] = mode, warn_only


@_pub("are_deterministic_algorithms_enabled", method=False)
def are_deterministic_algorithms_enabled() -> bool:
    """The last use_deterministic_algorithms mode (False at first, as PyTorch's); the results are
    deterministic either way."""
    return _STATE["deterministic"]


@_pub("set_deterministic_debug_mode", method=False)
def set_deterministic_debug_mode(debug_mode) -> None:
    """PyTorch's: 0 / 'default', 1 / 'warn' (use_deterministic_algorithms(True, warn_only=True)),
    2 / 'error' (use_deterministic_algorithms(True)); nothing changes here (see there)."""
    modes = {"default": 0, "warn": 1, "error": 2}
    m = modes.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if isinstance(m, bool) or m not in (0, 1, 2):
        raise ValueError(f"set_deterministic_debug_mode: expected 0, 1, 2, 'default', 'warn' or 'error', "
                         f"got {debug_mode!r}")
    use_deterministic_algorithms(m > 0, warn_only=m == 1)


@_pub("get_deterministic_debug_mode", method=False)
def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (on), from use_deterministic_algorithms' setting."""
    return 0 if not _STATE["deterministic"] else (1 if _STATE["warn_only"] else 2)


@_pub("is_deterministic_algorithms_warn_only_enabled", method=False)
def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The last use_deterministic_algorithms warn_only."""
    return _STATE["warn_only"]


@_pub("set_float32_matmul_precision", method=False)
def set_float32_matmul_precision(precision: str) -> None:
    """Records 'highest', 'high' or 'medium'. Nothing changes: float32 matrix products here always
    use full float32 arithmetic (no TF32 or bfloat16 passes), i.e. 'highest'."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError("set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got "
                         f"{precision!r}")
    _STATE["matmul"] = precision


@_pub("get_float32_matmul_precision", method=False)
def get_float32_matmul_precision() -> str:
    """The last set_float32_matmul_precision value ('highest' at first); the products are computed
    at 'highest' whatever it says."""
    return _STATE["matmul"]


# these modules add their functions and methods to the registries above
from . import torch_linalg_legacy, torch_methods, torch_special, torch_spectral  # noqa: E402,F401

_pub("stft")(torch_spectral.stft)
_pub("istft")(torch_spectral.istft)
