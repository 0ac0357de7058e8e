"""Ops of tensor.sparse matrices that select stored entries, written with the library's recorded
ops on the matrices' own parts (so they run on both devices and are differentiable in the
values), without importing the matrix classes (tensor/sparse/_matrix.py calls them; new
matrices are made through the classes of the operands):

- multiply(a, b): the elementwise product of two sparse matrices, the entries both store (a
  coalesced COO, or a's layout; PyTorch's sparse * sparse);
- index_select(A, dim, index): the rows (dim 0) or columns (dim 1) of A at index, in index's
  order, repeats and negative indices (counted from the end) allowed (PyTorch's
  A.index_select(dim, index));
- select(A, dim, index): one row (dim 0) or column (dim 1) as a dense vector (PyTorch's
  A.select(dim, index) gives a 1-D sparse tensor, which this package does not have; as
  tensor.sparse.sum(A, dim) gives a dense one).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from .._tensor import Tensor
from ..axes import norm_axis
from ._checks import int_vector
from ._ops import pub, row_major_order


def _relayout(coo, layout: str):
    return coo if layout == "coo" else getattr(coo, "to_sparse_" + layout)()


def multiply(a, b, op: str = "multiply"):
    """a * b for two sparse matrices of one shape and device: the entries both store (duplicates
    summed first), their values multiplied in the promoted dtype, as a coalesced COO (or a CSR /
    CSC when a is one); differentiable in both values."""
    if a.shape != b.shape or a.device != b.device:
        raise ValueError(f"{op}: sparse operands differ: {a.shape} on {a.device} and {b.shape} "
                         f"on {b.device}")
    ca, cb = a.to_sparse_coo().coalesce(), b.to_sparse_coo().coalesce()
    m, n = a.shape
    # both coalesced: a key appears at most once in each, so after a stable sort of the
    # concatenation an entry stored by both is a pair of neighbours, a's first
    idx = pub("concatenate")([ca.indices(), cb.indices()], axis=1)
    order = row_major_order(idx[0], idx[1], m, n)
    r, c = idx[0][order], idx[1][order]
    both = pub("nonzero")((r[1:] == r[:-1]) & (c[1:] == c[:-1]))[0]
    ia, ib = order[both], order[both + 1] - ca.nnz
    vals = pub("multiply")(ca.values()[ia], cb.values()[ib])
    out = type(ca)._make(pub("stack")([r[both], c[both]]), vals, (m, n), True)
    return _relayout(out, a.layout)


def _index(index, size: int, dim: int, device, op: str) -> Tensor:
    """index as an int64 vector on device, negative entries counted from the end, each checked
    against size (one host read)."""
    h = int_vector(index, "index", op)
    if h.dtype.kind == "u" and h.size and int(h.max()) >= size:
        bad = int(h.max())
        raise IndexError(f"{op}: index {bad} is out of range for dimension {dim} of size {size}")
    h = h.astype(np.int64)
    bad = h[(h < -size) | (h >= size)]
    if bad.size:
        raise IndexError(f"{op}: index {int(bad[0])} is out of range for dimension {dim} of size "
                         f"{size}")
    return pub("asarray")(np.where(h < 0, h + size, h), device=device)


def index_select(A, dim, index, op: str = "index_select"):
    """The rows (dim 0) or columns (dim 1) of A at index, in index's order (a repeated index
    repeats its row / column): a matrix of A's layout with index's length along dim, A's
    duplicates kept (a COO is not coalesced); differentiable in the values."""
    d = norm_axis(dim, 2, op)
    coo = A.to_sparse_coo()
    size = A.shape[d]
    ix = _index(index, size, d, A.device, op)
    rows, cols = coo.indices()[0], coo.indices()[1]
    key = rows if d == 0 else cols
    # entry e goes to each position p with ix[p] == key[e]: the positions of a key are a run
    # [lo, hi) of the stable order of ix
    perm = pub("argsort")(ix, stable=True)
    srt = ix[perm]
    lo = pub("searchsorted")(srt, key, side="left")
    cnt = pub("searchsorted")(srt, key, side="right") - lo
    nnz = coo.nnz
    ent = pub("repeat_interleave")(pub("arange")(nnz, dtype=dt.int64, device=A.device), cnt)
    first = pub("cumsum")(cnt) - cnt   # where each entry's copies start in the result
    k = ent.shape[0]
    nth = pub("arange")(k, dtype=dt.int64, device=A.device) - first[ent]
    pos = perm[lo[ent] + nth]
    new = (pos, cols[ent]) if d == 0 else (rows[ent], pos)
    shape = (ix.shape[0], A.shape[1]) if d == 0 else (A.shape[0], ix.shape[0])
    out = type(coo)._make(pub("stack")(list(new)), coo.values()[ent], shape, False)
    return _relayout(out, A.layout)


def select(A, dim, index):
    """Row (dim 0) or column (dim 1) index of A (negative from the end) as a dense vector;
    differentiable in the values."""
    op = "select"
    d = norm_axis(dim, 2, op)
    if isinstance(index, bool) or not isinstance(index, int | np.integer) and not (
            isinstance(index, Tensor) and index.ndim == 0):
        raise TypeError(f"{op}: index must be an integer, got {type(index).__name__}")
    row = index_select(A, d, [index] if not isinstance(index, Tensor) else index.reshape((1,)), op)
    return row.to_dense().reshape((A.shape[1 - d],))


__all__ = ["multiply", "index_select", "select"]
