"""The public ops: every function users call (module functions and Tensor methods alike),
each wrapped once by `_hook.differentiable` under its op name so autograd can record it.

Internal code calls the raw functions in the op modules; users (and derivative rules) call
these, so the graph sees exactly one node per public call.
"""
from __future__ import annotations

from . import creation, indexing, linalg, manipulation, ops, reductions, scatter, transfer, views
from . import elementwise as ew
from ._hook import differentiable
from .optable import BINARY, UNARY

PUB: dict = {}


def _add(name, fn, *aliases):
    w = differentiable(name, fn)
    PUB[name] = w
    for a in aliases:
        PUB[a] = w
    return w


def _unary_inplace(name):
    return lambda x: ew.unary(name, x, out=x)


def _binary_inplace(name):
    return lambda x, other: ew.binary(name, x, other, out=x)


for _op in UNARY:
    _add(_op.name, ops.FUNCS[_op.name], *_op.aliases)
    _add(_op.name + "_", _unary_inplace(_op.name), *(a + "_" for a in _op.aliases))
for _op in BINARY:
    _add(_op.name, ops.FUNCS[_op.name], *_op.aliases)
    _add(_op.name + "_", _binary_inplace(_op.name), *(a + "_" for a in _op.aliases))

_add("round", ops.round, "around")
_add("clip", ops.clip, "clamp")
_add("clip_", lambda x, a_min=None, a_max=None: ops.clip(x, a_min, a_max, out=x), "clamp_")
_add("where", ew.where)
_add("astype", lambda x, dtype, copy=True: ew.astype(x, dtype, copy))
_add("contiguous", ew.contiguous)
_add("copy", ew.copy, "clone")
_add("copy_", lambda x, src: (ew.copy_into(x, ew.as_operand(src), "copy_"), x)[1])
_add("to_device", transfer.to_device)
_add("fill_", creation.fill_)
_add("zero_", lambda x: creation.fill_(x, 0))
_add("tril", creation.tril)
_add("triu", creation.triu)

for _n in ("transpose", "permute", "swapaxes", "moveaxis", "reshape", "view", "flatten", "ravel",
           "squeeze", "expand_dims", "unsqueeze", "expand", "diagonal", "as_strided", "flip"):
    _add(_n, getattr(views, _n))
PUB["swapdims"], PUB["movedim"] = PUB["swapaxes"], PUB["moveaxis"]
_add("matrix_transpose", views.matrix_transpose)
_add("broadcast_to", views.broadcast_view)
_add("getitem", indexing.getitem)
_add("setitem", scatter.setitem)

for _n, _f in reductions.FUNCS.items():
    _add(_n, _f)
for _n, _f in linalg.FUNCS.items():
    _add(_n, _f)
for _n in ("take", "take_along_axis", "nonzero", "argwhere", "count_nonzero"):
    _add(_n, getattr(indexing, _n))
for _n in ("put_along_axis", "index_add", "index_add_", "scatter_add", "scatter_add_", "index_put_"):
    _add(_n, getattr(scatter, _n))
for _n in ("array_split", "atleast_1d", "atleast_2d", "atleast_3d", "cat", "chunk", "concatenate",
           "dstack", "fliplr", "flipud", "hsplit", "hstack", "pad", "repeat", "roll", "rot90",
           "split", "stack", "tile", "unbind", "vsplit", "vstack"):
    _add(_n, getattr(manipulation, _n))

INPLACE = frozenset(n for n in PUB if n.endswith("_")) | {"setitem"}
