"""PyTorch's top-level functions not covered elsewhere, compositions of the public (recorded) ops (`P.`), so
autograd records every step and they need no derivative rule (public.py's COMPOSITE). The random functions,
windows and PyTorch's Tensor-only methods live in torch_extra2.py, whose registries these are.

>>> import tensor as T
>>> T.block_diag(T.tensor([[1, 2]]), T.tensor(3)).tolist()
[[1, 2, 0], [0, 0, 3]]
"""
from __future__ import annotations

import itertools
import math
import operator
from typing import NamedTuple

from . import dtypes as dt
from . import products as PR
from . import rowops
from . import torch_extra2 as X2
from ._tensor import Tensor
from .axes import norm_axis
from .convert import asarray
from .creation import arange, empty, eye, full, zeros
from .linalg import _funcs as LA  # not the package, whose __getattr__ reaches public.py
from .optable import T as P  # tensor's public (recorded) functions
from .torch_autocast import autocast_class as _autocast
from .views import broadcast_shapes

# one set of registries for both modules (public.py and _methods.py read these)
COMPOSITES, NOT_METHODS, METHODS = X2.COMPOSITES, X2.NOT_METHODS, X2.METHODS
_pub, _t = X2._pub, X2._tensor


def _simple(name, fn, doc, method: bool = True):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    _pub(name, method=method)(fn)


def _same_device(name: str, *ts) -> None:
    devs = {t.device for t in ts}
    if len(devs) > 1:
        raise ValueError(f"{name}: tensors are on different devices: {', '.join(str(t.device) for t in ts)}")


# ---------------------------------------------------------------- matrix products

def _mats(name: str, ranks: tuple, *xs, one_dtype: bool = True) -> None:
    for x in xs:   # every operand a tensor first: the rank error below shows all shapes
        _t(x, name)
    for x, r in zip(xs, ranks):
        if x.ndim != r:
            raise ValueError(f"{name}: expected {r}-d tensors, got shapes {tuple(y.shape for y in xs)}")
    if one_dtype and len({x.dtype for x in xs}) > 1:
        raise TypeError(f"{name}: expected operands of one dtype, got {', '.join(x.dtype.name for x in xs)}")
    _same_device(name, *xs)


def _inner(name: str, a: Tensor, b: Tensor) -> None:
    if a.ndim == 3 == b.ndim and a.shape[0] != b.shape[0]:
        raise ValueError(f"{name}: batch sizes differ: shapes {a.shape} and {b.shape}")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if ka != kb:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape}: inner dimensions {ka} != {kb}")


def _product(name, ranks, doc):
    def f(input, mat2):
        _mats(name, ranks, input, mat2)
        _inner(name, input, mat2)
        return P.matmul(input, mat2)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return _pub(name)(_autocast(name != "mv")(f))


mm = _product("mm", (2, 2), "The matrix product of two 2-d tensors (no broadcasting).")
bmm = _product("bmm", (3, 3), "Matrix products of two 3-d tensors with equal batch sizes.")
mv = _product("mv", (2, 1), "The product of a 2-d matrix and a 1-d vector.")


def _scaled_add(name, inp, prod, beta, alpha):
    """beta * inp + alpha * prod, inp broadcast to prod's shape; beta = 0 ignores inp and alpha = 0
    ignores prod (their NaN and inf included; a zero gradient flows to them), as PyTorch's."""
    PR.check_addend(name, inp, prod.shape, prod.dtype, prod.device)
    if prod.dtype.kind in "iub" and any(isinstance(s, float) for s in (beta, alpha)):
        raise TypeError(f"{name}: for integer tensors beta and alpha must be integers")
    no = full((), False, dtype=dt.bool_, device=prod.device)   # where(no, t, ...) ignores t
    prod = prod if alpha in (0, 1) else P.multiply(prod, alpha)
    inp = inp if beta in (0, 1) else P.multiply(inp, beta)
    if beta == 0:
        zero = full((), 0, dtype=prod.dtype, device=prod.device)
        return P.where(no, inp, prod if alpha else P.where(no, prod, zero))
    return P.add(inp, prod) if alpha else P.where(no, prod, inp)


def _add_op(name, ranks, inp, x, y, beta, alpha, prod, shape, fused=None, floats="f"):
    """beta * inp + alpha * prod(x, y), checked (PR.add_product: floats take fused's GEMMs)."""
    _mats(name, ranks, x, y)
    _inner(name, x, y)
    return PR.add_product(name, inp, (x, y), fused, beta, alpha,
                          lambda: _scaled_add(name, inp, prod(x, y), beta, alpha), shape(), floats)


@_pub("addmm")
@_autocast(True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) (float: one GEMM, rounded once, as PyTorch's)."""
    return _add_op("addmm", (2, 2), input, mat1, mat2, beta, alpha, mm,
                   lambda: (mat1.shape[0], mat2.shape[1]))


@_pub("addmv")
@_autocast(False)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec) (float: one GEMM, rounded once, as PyTorch's)."""
    return _add_op("addmv", (2, 1), input, mat, vec, beta, alpha, mv, lambda: mat.shape[:1])


@_pub("baddbmm")
@_autocast(True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2) (float: one GEMM, rounded once, as PyTorch's)."""
    return _add_op("baddbmm", (3, 3), input, batch1, batch2, beta, alpha, bmm,
                   lambda: batch1.shape[:2] + batch2.shape[2:])


@_pub("addbmm")
@_autocast(True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (the sum over the batch of bmm(batch1, batch2)) (PR.gemm_add_batches)."""
    return _add_op("addbmm", (3, 3), input, batch1, batch2, beta, alpha, lambda x, y: P.sum(bmm(x, y), 0),
                   lambda: (batch1.shape[1], batch2.shape[2]),
                   lambda d, al, be: PR.gemm_add_batches(batch1, batch2, d, al, be), "h")



@_pub("addr")
@_autocast(False)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2) (elementwise: mixed dtypes promote, as PyTorch's)."""
    _mats("addr", (1, 1), vec1, vec2, one_dtype=False)
    return _scaled_add("addr", input, P.outer(vec1, vec2), beta, alpha)


@_pub("chain_matmul", method=False)
def chain_matmul(*matrices):
    """The product of 2-d matrices in the cheapest order (linalg.multi_dot; PyTorch's deprecated
    chain_matmul)."""
    if not matrices:
        raise ValueError("chain_matmul: expected at least one matrix")
    _mats("chain_matmul", (2,) * len(matrices), *matrices)
    for a, b in zip(matrices, matrices[1:]):
        _inner("chain_matmul", a, b)
    return P.copy(matrices[0]) if len(matrices) == 1 else LA.multi_dot(list(matrices))


def _addc(name, input, t1, t2, value, op):
    for x in (input, t1, t2):
        _t(x, name)
    _same_device(name, input, t1, t2)
    if dt.result_type(input, t1, t2).kind in "iub" and isinstance(value, float):
        raise TypeError(f"{name}: for integer tensors value must be an integer, got {value}")
    r = op(t1, t2)
    return P.add(input, r if value == 1 else P.multiply(r, value))


@_pub("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2 (broadcast together)."""
    return _addc("addcmul", input, tensor1, tensor2, value, P.multiply)


@_pub("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (true division; integer tensor1 and tensor2 are refused, as
    PyTorch's)."""
    if all(isinstance(t, Tensor) and t.dtype.kind in "iub" for t in (tensor1, tensor2)):
        raise TypeError("addcdiv: integer division of tensor1 by tensor2 is not supported; "
                        "use a floating-point tensor")
    return _addc("addcdiv", input, tensor1, tensor2, value, P.divide)


# ---------------------------------------------------------------- building and splitting

@_pub("block_diag", method=False)
def block_diag(*tensors):
    """A block-diagonal matrix of the tensors (0-d as 1x1, 1-d as one row)."""
    ts = [_t(x, "block_diag") for x in tensors]
    for i, x in enumerate(ts):
        if x.ndim > 2:
            raise ValueError(f"block_diag: input {i} has {x.ndim} dimensions, expected <= 2")
    if not ts:
        return empty((1, 0), dtype=dt.get_default_dtype())
    _same_device("block_diag", *ts)
    d = dt.result_type(*ts)
    ms = [P.astype(P.reshape(x, (1, -1)) if x.ndim < 2 else x, d, False) for x in ts]
    cols = sum(m.shape[1] for m in ms)
    out, left = [], 0
    for m in ms:
        out.append(P.pad(m, ((0, 0), (left, cols - left - m.shape[1]))))
        left += m.shape[1]
    return P.concatenate(out, 0)


@_pub("cartesian_prod", method=False)
def cartesian_prod(*tensors):
    """The Cartesian product of 1-d tensors, one row per combination (itertools.product's order); one tensor
    gives itself."""
    ts = [_t(x, "cartesian_prod") for x in tensors]
    if not ts or any(x.ndim != 1 for x in ts):
        raise ValueError(f"cartesian_prod: expected one or more 1-d tensors, got shapes "
                         f"{[x.shape for x in ts]}")
    if len(ts) == 1:
        return ts[0]
    grids = P.meshgrid(*ts, indexing="ij")
    return P.stack([P.reshape(g, (-1,)) for g in grids], 1)


@_pub("combinations", method=False)
def combinations(input, r: int = 2, with_replacement: bool = False):
    """The length-r combinations of a 1-d tensor's elements, one per row (itertools')."""
    x = _t(input, "combinations")
    if x.ndim != 1:
        raise ValueError(f"combinations: expected a 1-d tensor, got shape {x.shape}")
    r = operator.index(r)
    if r < 0:
        raise ValueError(f"combinations: r must be non-negative, got {r}")
    if r == 0:
        return P.getitem(x, slice(0, 0))
    f = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(f(range(x.shape[0]), r))
    if not idx:
        return P.reshape(P.getitem(x, slice(0, 0)), (0, r))
    return P.take(x, asarray(idx, dtype=dt.int64, device=x.device), axis=0)


@_pub("diag_embed")
def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """Matrices (in dims dim1, dim2 of the result) whose offset-th diagonals are the last axis of input, zeros
    elsewhere."""
    x = _t(input, "diag_embed")
    if x.ndim == 0:
        raise ValueError("diag_embed: expects a tensor with at least one dimension")
    nd = x.ndim + 1
    d1, d2 = norm_axis(dim1, nd, "diag_embed"), norm_axis(dim2, nd, "diag_embed")
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    n, k = x.shape[-1], operator.index(offset)
    on = eye(n, dtype=dt.bool_, device=x.device)
    m = P.where(on, P.expand_dims(x, -1), full((), 0, dtype=x.dtype, device=x.device))
    rows, cols = (0, k) if k >= 0 else (-k, 0)
    m = P.pad(m, ((0, 0),) * (nd - 2) + ((rows, cols), (cols, rows)))
    return P.moveaxis(m, (-2, -1), (d1, d2))


@_pub("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (dim=None: of the flattened input) or slice along dim repeated `repeats` times (an int, or
    a tensor with one count per slice); repeat_interleave(counts) alone repeats arange(len(counts))."""
    x = _t(input, "repeat_interleave")
    if repeats is None:
        if x.ndim != 1 or x.dtype.kind not in "iu":
            raise ValueError(f"repeat_interleave: counts alone must be a 1-d integer tensor, "
                             f"got {x.dtype.name} of shape {x.shape}")
        x, repeats = arange(x.shape[0], dtype=x.dtype, device=x.device), x
    if dim is None:
        x, dim = P.reshape(x, (-1,)), 0
    a = norm_axis(dim, max(x.ndim, 1), "repeat_interleave")
    if x.ndim == 0:   # dim 0 (or -1) of a 0-d tensor: its one element
        x = P.reshape(x, (1,))
    if isinstance(repeats, Tensor):
        if repeats.dtype.kind not in "iu" or repeats.ndim > 1:
            raise ValueError(f"repeat_interleave: repeats must be an int or a 0-d / 1-d integer "
                             f"tensor, got {repeats.dtype.name} of shape {repeats.shape}")
        reps = [int(v) for v in P.reshape(repeats, (-1,)).tolist()]
        if len(reps) == 1:
            reps = reps[0]
        elif len(reps) != x.shape[a]:
            raise ValueError(f"repeat_interleave: {len(reps)} repeats for {x.shape[a]} slices "
                             f"along dim {a} of shape {x.shape}")
    else:
        reps = operator.index(repeats)
    total = reps * x.shape[a] if isinstance(reps, int) else sum(reps)
    if min([reps] if isinstance(reps, int) else reps or [0]) < 0:
        raise ValueError("repeat_interleave: repeats must be non-negative")
    if output_size is not None and operator.index(output_size) != total:
        raise ValueError(f"repeat_interleave: output_size={output_size} but the repeats sum to {total}")
    return P.repeat(x, reps, axis=a)


@_pub("tensor_split")
def tensor_split(input, indices_or_sections, dim: int = 0):
    """Views of input split along dim into n near-equal parts (an int) or at the given indices (a sequence or
    1-d tensor), as PyTorch's (NumPy's array_split)."""
    x = _t(input, "tensor_split")
    if x.ndim == 0:
        raise ValueError("tensor_split: expected a tensor with at least one dimension")
    a = norm_axis(dim, x.ndim, "tensor_split")
    s = indices_or_sections
    if isinstance(s, Tensor):
        if s.dtype.kind not in "iu" or s.ndim > 1:
            raise ValueError(f"tensor_split: a tensor of indices or sections must be a 0-d or "
                             f"1-d integer tensor, got {s.dtype.name} of shape {s.shape}")
        s = s.tolist()
    if isinstance(s, int) or hasattr(s, "__index__"):
        s = operator.index(s)
        if s <= 0:
            raise ValueError(f"tensor_split: the number of sections must be positive, got {s}")
        return tuple(P.array_split(x, s, axis=a))
    return tuple(P.split(x, [operator.index(i) for i in s], axis=a))


@_pub("unflatten")
def unflatten(input, dim: int, sizes):
    """input with dim expanded into the shape `sizes` (one entry may be -1)."""
    x = _t(input, "unflatten")
    if x.ndim == 0:
        raise ValueError("unflatten: expected a tensor with at least one dimension")
    a = norm_axis(dim, x.ndim, "unflatten")
    sizes = tuple(operator.index(s) for s in sizes)
    known = math.prod(s for s in sizes if s != -1)
    if not sizes or sizes.count(-1) > 1 or any(s < -1 for s in sizes) or (
            -1 not in sizes and known != x.shape[a]) or (-1 in sizes and (known == 0 or x.shape[a] % known)):
        raise ValueError(f"unflatten: sizes {sizes} do not unflatten dim {a} of size {x.shape[a]}")
    if -1 in sizes:   # resolved within dim alone (a 0-size axis elsewhere leaves reshape unable to)
        sizes = tuple(x.shape[a] // known if s == -1 else s for s in sizes)
    return P.reshape(x, x.shape[:a] + sizes + x.shape[a + 1:])


@_pub("narrow_copy")
def narrow_copy(input, dim: int, start: int, length: int):
    """A copy of input[..., start:start + length, ...] along dim."""
    x = _t(input, "narrow_copy")
    a = norm_axis(dim, x.ndim, "narrow_copy")
    n, start, length = x.shape[a], operator.index(start), operator.index(length)
    if start < 0:
        start += n
    if not (0 <= start <= n and 0 <= length <= n - start):
        raise IndexError(f"narrow_copy: start {start} and length {length} out of range for "
                         f"dim {a} of size {n}")
    return P.copy(P.getitem(x, (slice(None),) * a + (slice(start, start + length),)))


@_pub("t")
def t(input):
    """The transpose of a tensor of rank <= 2 (0-d and 1-d come back as they are)."""
    x = _t(input, "t")
    if x.ndim > 2:
        raise ValueError(f"t: expects a tensor of rank <= 2, got shape {x.shape}")
    return P.transpose(x)


@_pub("adjoint")
def adjoint(input):
    """The conjugate transpose of the last two dimensions (x.mH)."""
    x = _t(input, "adjoint")
    if x.ndim < 2:
        raise ValueError(f"adjoint: expects a tensor of rank >= 2, got shape {x.shape}")
    m = P.matrix_transpose(x)
    return P.conj(m) if x.dtype.kind == "c" else m


# ---------------------------------------------------------------- reductions and statistics

def _var_args(name, x, dim, unbiased, correction):
    _t(x, name)
    if isinstance(dim, bool):   # var_mean(x, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}: give unbiased or correction, not both")
    c = correction if correction is not None else (1 if unbiased is None else int(unbiased))
    return (tuple(dim) if isinstance(dim, list) else dim), c


def _stat_mean(name, stat):
    def f(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
        a, c = _var_args(name, input, dim, unbiased, correction)
        return stat(input, a, correction=c, keepdims=keepdim), P.mean(input, a, keepdims=keepdim)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"({name[:3]}, mean) over dim (all when None), with `correction` (default 1) taken "
                 "from the count; unbiased=False means correction 0.")
    return _pub(name, method=False)(f)


var_mean = _stat_mean("var_mean", lambda *a, **k: P.var(*a, **k))
std_mean = _stat_mean("std_mean", lambda *a, **k: P.std(*a, **k))


class AminmaxResult(NamedTuple):
    min: Tensor
    max: Tensor


@_pub("aminmax")
def aminmax(input, *, dim=None, keepdim: bool = False):
    """(min, max) over dim (all when None)."""
    x = _t(input, "aminmax")
    if x.numel() == 0 and (dim is None or x.shape[norm_axis(dim, max(x.ndim, 1), "aminmax")] == 0):
        raise ValueError(f"aminmax: cannot reduce an empty tensor of shape {x.shape}")
    return AminmaxResult(P.amin(x, dim, keepdims=keepdim), P.amax(x, dim, keepdims=keepdim))


class ModeResult(NamedTuple):
    values: Tensor
    indices: Tensor


@_pub("mode")
def mode(input, dim: int = -1, keepdim: bool = False):
    """The most frequent value along dim (the smallest of equally frequent ones) and the index of its last
    occurrence, as PyTorch's."""
    x = _t(input, "mode")
    if x.ndim == 0:
        return ModeResult(P.copy(x), zeros((), dtype=dt.int64, device=x.device))
    a = norm_axis(dim, x.ndim, "mode")
    n = x.shape[a]
    if n == 0:
        raise ValueError(f"mode: dim {a} of shape {x.shape} is empty")
    xm = P.moveaxis(x, a, -1)
    s = P.sort(xm.detach(), axis=-1)
    pos = arange(n, dtype=dt.int64, device=x.device)
    new = P.concatenate([full(s.shape[:-1] + (1,), True, dtype=dt.bool_, device=x.device),
                         P.not_equal(s[..., 1:], s[..., :-1])], -1)
    start = P.cummax(P.where(new, pos, 0), axis=-1).values
    run = P.subtract(pos, start)                 # run length so far, minus one
    first = P.argmax(P.equal(run, P.amax(run, -1, keepdims=True)), -1, keepdims=True)
    value = P.take_along_axis(s, first, -1)
    idx = P.amax(P.where(P.equal(xm.detach(), value), pos, -1), -1, keepdims=True)
    vals = P.take_along_axis(xm, idx, -1)
    if keepdim:
        return ModeResult(P.moveaxis(vals, -1, a), P.moveaxis(idx, -1, a))
    return ModeResult(P.squeeze(vals, -1), P.squeeze(idx, -1))


@_pub("dist")
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast), over all elements."""
    _same_device("dist", _t(input, "dist"), _t(other, "dist"))
    d = P.subtract(input, other)
    if d.dtype.kind not in "fc":
        raise TypeError(f"dist: expects floating-point or complex tensors, got {d.dtype.name}")
    return LA.vector_norm(d, ord=p)


@_pub("renorm")
def renorm(input, p, dim: int, maxnorm):
    """input with each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm (by maxnorm /
    (norm + 1e-7), as PyTorch's)."""
    x = _t(input, "renorm")
    if x.dtype.kind not in "fc":
        raise TypeError(f"renorm: expects a floating-point tensor, got {x.dtype.name}")
    if x.ndim == 0:
        raise ValueError("renorm: expects a tensor with at least one dimension")
    if not p > 0:
        raise ValueError(f"renorm: p must be positive, got {p}")
    if not maxnorm >= 0:
        raise ValueError(f"renorm: maxnorm must be non-negative, got {maxnorm}")
    a = norm_axis(dim, x.ndim, "renorm")
    others = tuple(i for i in range(x.ndim) if i != a)
    nrm = LA.vector_norm(x, axis=others, keepdims=True, ord=p)
    scale = P.where(P.greater(nrm, maxnorm), P.divide(maxnorm, P.add(nrm, 1e-7)), 1.0)
    return P.multiply(x, P.astype(scale, x.dtype, False) if scale.dtype.kind != "c" else scale)


@_pub("trapz", method=False)
def trapz(y, x=None, *, dx=None, dim: int = -1):
    """The trapezoidal rule along dim (PyTorch's trapezoid / trapz: dim, not axis)."""
    _t(y, "trapz")
    if x is not None and dx is not None:
        raise TypeError("trapz: give x or dx, not both")
    return P.trapezoid(y, x, 1.0 if dx is None else dx, dim)


@_pub("cumulative_trapezoid", method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The running trapezoidal integral along dim (one element fewer than y along dim)."""
    y = _t(y, "cumulative_trapezoid")
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid: give x or dx, not both")
    if y.ndim == 0:
        raise ValueError("cumulative_trapezoid: y must have at least one dimension")
    a = norm_axis(dim, y.ndim, "cumulative_trapezoid")
    if y.dtype.kind in "iub":
        y = P.astype(y, dt.get_default_dtype())

    cut = lambda t, s: P.getitem(t, (slice(None),) * a + (s,))
    mid = P.multiply(P.add(cut(y, slice(1, None)), cut(y, slice(None, -1))), 0.5)
    if x is not None:
        x = _t(x, "cumulative_trapezoid")
        if x.ndim == 1:   # the sample points along dim
            x = P.reshape(x, (-1,) + (1,) * (y.ndim - a - 1))
        ax = a - y.ndim + x.ndim
        if ax < 0 or x.shape[ax] != y.shape[a]:
            raise ValueError(f"cumulative_trapezoid: x of shape {x.shape} does not match y's dim {a} "
                             f"of shape {y.shape}")
        mid = P.multiply(mid, P.diff(x, axis=ax))
    elif dx is not None and dx != 1:
        mid = P.multiply(mid, dx)
    return P.cumsum(mid, axis=a)


@_pub("unique_consecutive")
def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False, dim=None):
    """input with each run of equal consecutive elements (or slices along dim) kept once; dim=None flattens.
    Adds the inverse indices and the run lengths on request."""
    x = _t(input, "unique_consecutive")
    shape = x.shape
    if dim is None:
        x, a = P.reshape(x, (-1,)), 0
    else:
        a = norm_axis(dim, max(x.ndim, 1), "unique_consecutive")
        if x.ndim == 0:
            x = P.reshape(x, (1,))
    n = x.shape[a]
    xm = P.moveaxis(x, a, 0)
    if n:
        diff = P.not_equal(xm[1:], xm[:-1])
        if diff.ndim > 1:
            diff = P.any(P.reshape(diff, (n - 1, -1)), axis=1)
        new = P.concatenate([full((1,), True, dtype=dt.bool_, device=x.device), diff])
    else:
        new = full((0,), True, dtype=dt.bool_, device=x.device)
    starts = P.reshape(P.nonzero(new)[0], (-1,))
    out = [P.take(x, starts, axis=a)]
    if return_inverse:
        inv = P.subtract(P.cumsum(P.astype(new, dt.int64)), 1)
        out.append(P.reshape(inv, shape) if dim is None else inv)
    if return_counts:
        out.append(P.diff(P.concatenate([starts, full((1,), n, dtype=dt.int64, device=x.device)])))
    return out[0] if len(out) == 1 else tuple(out)


# ---------------------------------------------------------------- linear algebra

@_pub("logdet")
def logdet(input):
    """log(det(input)): NaN where a real determinant is negative, -inf where it is 0."""
    sign, logabs = LA.slogdet(_t(input, "logdet"))
    if logabs.dtype.kind == "c" or sign.dtype.kind == "c":
        return P.add(P.log(sign), logabs)
    return P.where(P.less(sign, 0), math.nan, logabs)


@_pub("cholesky_solve")
def cholesky_solve(B, L, upper: bool = False):
    """X with A X = B for A = L L^H (upper: A = U^H U), L a Cholesky factor."""
    la = LA
    _same_device("cholesky_solve", _t(B, "cholesky_solve"), _t(L, "cholesky_solve"))
    if B.ndim < 2 or L.ndim < 2:
        raise ValueError(f"cholesky_solve: expects matrices, got shapes {B.shape} and {L.shape}")
    if upper:
        y = la.solve_triangular(adjoint(L), B, upper=False)
        return la.solve_triangular(L, y, upper=True)
    y = la.solve_triangular(L, B, upper=False)
    return la.solve_triangular(adjoint(L), y, upper=True)


@_pub("cholesky_inverse")
def cholesky_inverse(L, upper: bool = False):
    """The inverse of A = L L^H (upper: U^H U) from its Cholesky factor."""
    L = _t(L, "cholesky_inverse")
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise ValueError(f"cholesky_inverse: expects square matrices, got shape {L.shape}")
    eye_ = P.broadcast_to(eye(L.shape[-1], dtype=L.dtype, device=L.device), L.shape)
    return cholesky_solve(eye_, L, upper)


@_pub("pinverse")
def pinverse(input, rcond: float = 1e-15):
    """The pseudo-inverse, singular values below rcond * the largest dropped."""
    return LA.pinv(_t(input, "pinverse"), rcond=rcond)


def _alias(name, doc):
    def f(input, *args, **kw):
        return getattr(LA, name)(input, *args, **kw)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


for _n, _la_n, _doc in (("inverse", "inv", "The inverse"), ("det", "det", "The determinant"),
                        ("slogdet", "slogdet", "(sign, log|det|)"), ("matrix_exp", "matrix_exp", "exp"),
                        ("matrix_power", "matrix_power", "input ** n")):
    COMPOSITES[_n] = _alias(_la_n, f"{_doc} (tensor.linalg.{_la_n}).")


# ---------------------------------------------------------------- elementwise and misc

@_pub("polar", method=False)
def polar(abs, angle):  # noqa: A002  (PyTorch's name)
    """The complex numbers abs * (cos(angle) + i sin(angle))."""
    _check_parts("polar", abs, angle)
    return complex(P.multiply(abs, P.cos(angle)), P.multiply(abs, P.sin(angle)))


def _check_parts(name, a, b):
    for v in (a, b):
        if _t(v, name).dtype not in (dt.float32, dt.float64):
            raise TypeError(f"{name}: expects float32 or float64 tensors, got {v.dtype.name}")
    if a.dtype is not b.dtype:
        raise TypeError(f"{name}: expects tensors of one dtype, got {a.dtype.name} and {b.dtype.name}")
    _same_device(name, a, b)


@_pub("complex", method=False)
def complex(real, imag):  # noqa: A001  (PyTorch's name)
    """The complex tensor real + i imag (float32 -> complex64, float64 -> complex128)."""
    _check_parts("complex", real, imag)
    shape = broadcast_shapes(real.shape, imag.shape, op="complex")
    parts = [P.broadcast_to(v, shape) for v in (real, imag)]
    return P.view_as_complex(P.stack(parts, -1))


_simple("clamp_min", lambda input, min: P.clip(_t(input, "clamp_min"), min=min), "max(input, min).")
_simple("clamp_max", lambda input, max: P.clip(_t(input, "clamp_max"), max=max), "min(input, max).")
_simple("rsub", lambda input, other, *, alpha=1: P.subtract(other, _t(input, "rsub") if alpha == 1 else
        P.multiply(input, alpha)), "other - alpha * input.", method=False)
_simple("msort", lambda input: P.sort(_t(input, "msort"), axis=0), "input sorted along dim 0.")


@_pub("relu")
def relu(input):
    """max(input, 0) as one graph node (tensor/rowops.py): NaN stays NaN, the gradient at 0 is 0
    and an integer input keeps its dtype, as PyTorch's."""
    return rowops.relu(_t(input, "relu"))


def _softmax(name: str, op, input, dim, dtype):
    """op (rowops' softmax or log_softmax: one graph node, one fused pass per row) of input along
    dim, cast to dtype first (inside the op: autocast then leaves it alone, as PyTorch's)."""
    x = _t(input, name)
    if dim is None:
        raise TypeError(f"{name}: dim is required")
    d = x.dtype if dtype is None else dt.dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"{name}: expects a floating-point tensor, got {d.name}")
    return op(x, dim) if dtype is None else op(x, dim, dtype=d)


@_pub("softmax")
def softmax(input, dim=None, dtype=None):
    """exp(input) / sum(exp(input)) along dim (computed as input's dtype, or dtype's; a 16-bit
    one in float32, rounded once). A slice holding +inf or NaN, or all -inf, gives NaN."""
    return _softmax("softmax", rowops.softmax, input, dim, dtype)


@_pub("log_softmax")
def log_softmax(input, dim=None, dtype=None):
    """input - logsumexp(input) along dim (as softmax: dtype=, 16-bit inputs, inf and NaN)."""
    return _softmax("log_softmax", rowops.log_softmax, input, dim, dtype)


_simple("conj_physical", lambda input: P.conj(_t(input, "conj_physical")),
        "The complex conjugate, as a new tensor (a real tensor: a copy).")
# this library has no lazy conjugate / negative bits, so nothing is ever pending
_simple("resolve_conj", lambda input: _t(input, "resolve_conj"), "input itself (no lazy conj).")
_simple("resolve_neg", lambda input: _t(input, "resolve_neg"), "input itself (no lazy neg).")
_simple("numel", lambda input: _t(input, "numel").numel(), "The number of elements.",
        method=False)   # Tensor.numel is the tensor's own
_simple("is_tensor", lambda obj: isinstance(obj, Tensor), "Whether obj is a Tensor.", method=False)
_simple("is_floating_point", lambda input: _t(input, "is_floating_point").dtype.kind == "f",
        "Whether the dtype is float16, bfloat16, float32 or float64.")
_simple("is_complex", lambda input: _t(input, "is_complex").dtype.kind == "c",
        "Whether the dtype is complex.")
_simple("is_same_size", lambda input, other: _t(input, "is_same_size").shape == _t(
    other, "is_same_size").shape, "Whether the two tensors have the same shape.")
# the method is tensor/_methods.py's
_simple("masked_fill", lambda input, mask, value: _t(input, "masked_fill").masked_fill(
    mask, value), "value where mask is true, else input (input's dtype).", method=False)


@_pub("is_nonzero")
def is_nonzero(input) -> bool:
    """Whether the single element of input is nonzero (more or fewer elements raise)."""
    x = _t(input, "is_nonzero")
    if x.numel() != 1:
        raise ValueError(f"is_nonzero: expects a tensor of one element, got shape {x.shape}")
    return bool(P.not_equal(P.reshape(x, ()), 0))
from . import torch_extra3  # noqa: E402,F401  (more PyTorch functions, in these registries)
