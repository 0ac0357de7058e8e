"""The public ops: every function users call (module functions and Tensor methods alike),
each wrapped once by `_hook.differentiable` under its op name so autograd can record it.

Internal code calls the raw functions in the op modules; users (and derivative rules) call
these, so the graph sees exactly one node per public call.

One table, in three parts: the elementwise table (optable.py) and the reductions table
(redtable.py) give names, aliases and whether an op has a derivative; the ops that are not
table entries follow, grouped by module. NO_GRAD lists the ops declared without a derivative
rule (integer or bool results, or an in-place form autograd refuses), so a test can check that
every other public op has one. COMPOSITE lists the ops published unrecorded (tensor/composites.py):
they call only public functions, each of which records its own node, so they need no rule.
"""
from __future__ import annotations

import math

from . import (
    composites,
    creation,
    einsum,
    histograms,
    indexing,
    manipulation,
    nanfuncs,
    ops,
    optable,
    products,
    reductions,
    scatter,
    sorting,
    statistics,
    views,
)
from . import elementwise as ew
from ._hook import differentiable
from .optable import BINARY, NO_RULE, NONE, UNARY
from .redtable import REDUCTIONS

PUB: dict = {}
NO_GRAD: set = set()
COMPOSITE: set = set()


def _add(name, fn, *aliases, grad: bool = True):
    """Publish fn as `name` (and its aliases: the same wrapper, recorded under `name`);
    grad=False declares that it has no derivative rule."""
    w = differentiable(name, fn)
    PUB[name] = w
    for a in aliases:
        PUB[a] = w
    if not grad:
        NO_GRAD.add(name)
    return w


def _composite(name, fn):
    """Publish fn as `name` without recording it: its steps are public calls, recorded each."""
    fn.__wrapped_op__ = name
    PUB[name] = fn
    COMPOSITE.add(name)
    return fn


def _unary_inplace(name):
    return lambda x: ew.unary(name, x, out=x)


def _binary_inplace(name):
    return lambda x, other: ew.binary(name, x, other, out=x)


# ---------------------------------------------------------------- the tables
for _op in UNARY + BINARY:
    _inplace = (_unary_inplace if _op.arity == 1 else _binary_inplace)(_op.name)
    _add(_op.name, ops.FUNCS[_op.name], *_op.aliases, grad=_op.grad not in (NONE, NO_RULE))
    # autograd/rules_elementwise.py: _inplace_rule; a NONE op's in-place form (x.eq_(y) on a
    # float x) gives zero gradients: _overwritten
    _add(_op.name + "_", _inplace, *(a + "_" for a in _op.aliases), grad=_op.grad != NO_RULE)
for _r in REDUCTIONS:
    _add(_r.name, reductions.FUNCS[_r.name], *_r.aliases, grad=_r.grad)

# ---------------------------------------------------------------- not table entries
# reductions.py composites (rules of their own: autograd/rules_reduce.py)
for _n in ("mean", "var", "std", "logsumexp"):
    _add(_n, reductions.FUNCS[_n])
# ops.py composites, elementwise.py casts and copies, creation.py fills (autograd/rules_misc.py;
# where: rules_elementwise.py)
_add("round", ops.round, "around")
_add("clip", ops.clip, "clamp")
_add("clip_", lambda x, min=None, max=None, a_min=None, a_max=None: ops.clip(  # noqa: A002
    x, min, max, out=x, a_min=a_min, a_max=a_max), "clamp_")
_add("where", ew.where)
_add("astype", ew.astype)
_add("contiguous", ew.contiguous)
_add("copy", ew.copy, "clone")
_add("copy_", lambda x, src: (ew.copy_into(x, ew.as_operand(src), "copy_"), x)[1])
_add("to_device", ew.to_device)
_add("fill_", creation.fill_)
_add("zero_", lambda x: creation.fill_into(x, 0, "zero_"))
_add("tril", creation.tril)
_add("triu", creation.triu)
# views.py (autograd/rules_views.py)
for _n in ("transpose", "permute", "swapaxes", "moveaxis", "reshape", "view", "flatten", "ravel",
           "squeeze", "expand_dims", "unsqueeze", "expand", "diagonal", "as_strided", "flip"):
    _add(_n, getattr(views, _n))
PUB["swapdims"], PUB["movedim"] = PUB["swapaxes"], PUB["moveaxis"]
_add("matrix_transpose", views.matrix_transpose)
_add("view_as_real", views.view_as_real)
_add("view_as_complex", views.view_as_complex)
_add("broadcast_to", views.broadcast_view)
# indexing.py, scatter.py (autograd/rules_index.py)
_add("getitem", indexing.getitem)
_add("setitem", scatter.setitem)
for _n in ("take", "take_along_axis"):
    _add(_n, getattr(indexing, _n))
for _n in ("nonzero", "argwhere", "count_nonzero"):  # integer results
    _add(_n, getattr(indexing, _n), grad=False)
for _n in ("index_add", "index_add_", "scatter_add", "scatter_add_", "index_put_"):
    _add(_n, getattr(scatter, _n))
# in place, returns None, no rule yet: it refuses tensors that need a gradient (scatter.py)
_add("put_along_axis", scatter.put_along_axis, grad=False)
# products.py (autograd/rules_linalg.py)
for _n, _f in products.FUNCS.items():
    _add(_n, _f)
_matmul_op = PUB["matmul"]


def _matmul(a, b, out=None):
    # a sparse operand: A @ B, recorded by tensor.sparse's own ops (a dense product's rule
    # would not see the sparse matrix)
    if getattr(a, "_tensor_defers", False) or getattr(b, "_tensor_defers", False):
        return products.sparse_matmul(a, b, out)
    return _matmul_op(a, b) if out is None else _matmul_op(a, b, out=out)


_matmul.__doc__, _matmul.__wrapped_op__ = products.matmul.__doc__, "matmul"
PUB["matmul"] = _matmul
_angle_op = PUB["angle"]


def _angle(x, deg: bool = False, out=None):
    """The complex argument atan2(imag, real) in radians, or in degrees with deg=True (NumPy's
    angle); a real x gives 0 or pi by its sign."""
    r = _angle_op(x) if out is None else _angle_op(x, out=out)
    if not deg:
        return r
    return PUB["multiply_"](r, 180 / math.pi) if out is not None else r * (180 / math.pi)


_angle.__name__, _angle.__wrapped_op__ = "angle", "angle"
PUB["angle"] = _angle
# manipulation.py (autograd/rules_manip.py)
for _n in ("array_split", "atleast_1d", "atleast_2d", "atleast_3d", "cat", "chunk", "concatenate",
           "dstack", "fliplr", "flipud", "hsplit", "hstack", "pad", "repeat", "roll", "rot90",
           "split", "stack", "tile", "unbind", "vsplit", "vstack", "concat"):
    _add(_n, getattr(manipulation, _n))
# sorting.py: sort (autograd/rules_sort.py); argsort and searchsorted give integers; unique_*
# and topk are compositions of the public sort, take, cumsum...
_add("sort", sorting.sort)
for _n in ("argsort", "searchsorted"):
    _add(_n, sorting.FUNCS[_n], grad=False)
for _n, _f in sorting.COMPOSITES.items():
    _composite(_n, _f)
# statistics.py (median, quantile, kthvalue: sort, take, where...) and histograms.py (bincount,
# histogram: searchsorted, index_add...): compositions, differentiable where they pick values
for _n, _f in (statistics.COMPOSITES | histograms.COMPOSITES).items():
    _composite(_n, _f)
# nanfuncs.py: nan- reductions and scans (where, then sum, max...), cummax/cummin/logcumsumexp,
# cov, corrcoef, average, trapezoid, partition: compositions of the public functions
for _n, _f in nanfuncs.COMPOSITES.items():
    _composite(_n, _f)
# composites.py: the array API standard's compositions of the public functions above
for _n, _f in composites.FUNCS.items():
    _composite(_n, _f)
# einsum.py: permutes, diagonals, sums and matmuls of the public functions
_composite("einsum", einsum.einsum)
# array_extra.py, math_extra.py, numpy_extra.py, torch_extra.py: NumPy's and PyTorch's
# remaining functions, compositions of the public ones (each module's COMPOSITES; its
# NOT_METHODS have no Tensor method)
from . import array_extra, math_extra, numpy_extra, torch_extra  # noqa: E402

for _m in (array_extra, math_extra, numpy_extra, torch_extra):
    for _n, _f in _m.COMPOSITES.items():
        if _n in PUB:
            raise RuntimeError(f"tensor.public: {_m.__name__} publishes {_n!r}, which exists")
        _composite(_n, _f)
# torch_index.py: PyTorch's index_select, scatter_, index_copy_, put_, *_scatter...: setitem,
# index_put_, take, scatter_reduce... with keys built from the index
from . import torch_index  # noqa: E402

for _n, _f in torch_index.COMPOSITES.items():
    if _n in PUB:
        raise RuntimeError(f"tensor.public: torch_index publishes {_n!r}, which exists")
    _composite(_n, _f)
# segment.py: scatter_reduce, segment_sum/prod/max/min/mean, gather: public ops around one
# recorded op, segment.segment_reduce (autograd/rules_segment.py)
from . import segment as _segment  # noqa: E402

for _n in _segment.__all__[:-1]:
    _composite(_n, getattr(_segment, _n))

# PyTorch's keyword spellings (keepdim, dim, dims...) and its dim= forms (max -> (values,
# indices)...): wrappers around the functions above (tensor/torch_spelling.py)
from . import torch_spelling  # noqa: E402

TORCH_METHODS = torch_spelling.apply(PUB)
optable.T.bind(PUB)   # the op table's derivatives call the recorded public functions
INPLACE = frozenset(n for n in PUB if n.endswith("_")) | {"setitem"}
