"""The reductions of tensor.sparse matrices over their stored entries (softmax, log_softmax and
sum along a dim), written with the recorded ops on the matrix's own parts, so that both the
matrix classes (A.sum()) and tensor.sparse's functions (tensor/sparse/_funcs.py, which check
their arguments) use them without importing each other."""
from __future__ import annotations

import operator

from .. import dtypes as dt
from ..axes import norm_axis
from ._ops import pub


def unique_entries(A):
    """A with its duplicates summed (a COO coalesced; a CSR / CSC with unsorted or repeated
    indices in a row / column through a coalesced COO), and (rows, cols) of its entries in the
    values' order."""
    if A.layout == "coo":
        A = A.coalesce()
    elif not (A._tr if A.layout == "csc" else A)._sorted_cols:
        A = getattr(A.to_sparse_coo(), "to_sparse_" + A.layout)()
    rows, cols = A._entries()
    return A, rows, cols


def grouped_softmax(A, dim, dtype, op: str, log: bool):
    """softmax / log_softmax (log=True) of A over the stored entries along dim."""
    d = norm_axis(dim, 2, op)
    if dtype is not None:
        A = A._with_values(A._values.astype(dt.dtype(dtype)))
    if A.dtype.kind != "f":
        raise TypeError(f"{op}: expects a floating-point matrix, got {A.dtype.name}")
    A, rows, cols = unique_entries(A)
    v = A._values
    if A.nnz == 0:
        return A._with_values(v)
    ids, groups = (cols, A.shape[1]) if d == 0 else (rows, A.shape[0])
    if groups > 2 * A.nnz:   # hypersparse (e.g. 10**9 rows): per-group buffers of the groups used
        uniq, ids = pub("unique")(ids, return_inverse=True)
        groups = uniq.shape[0]
    # the shift by each group's maximum does not change the result, so it is held constant
    start = pub("zeros")(groups, dtype=v.dtype, device=v.device)
    top = pub("scatter_reduce")(start, 0, ids, v.detach(), "amax", include_self=False)
    z = v - top[ids]
    e = pub("exp")(z)
    norm = pub("index_add")(pub("zeros")(groups, dtype=v.dtype, device=v.device), 0, ids, e)
    out = z - pub("log")(norm)[ids] if log else e / norm[ids]
    return A._with_values(out)


def sum_dims(dim, op: str) -> tuple:
    """dim (None, an int or a sequence of ints) as the tuple of distinct dims it names."""
    if dim is None:
        return (0, 1)
    try:
        dims = (operator.index(dim),) if not isinstance(dim, tuple | list) else tuple(dim)
        dims = tuple(operator.index(x) for x in dims)
    except TypeError:
        raise TypeError(f"{op}: dim must be None, an int or a tuple of ints, got {dim!r}") from None
    out = tuple(norm_axis(x, 2, op) for x in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dim {dim} names a dimension more than once")
    return out


def total(A, dim, dtype, op: str):
    """The sum of A's stored entries over dim (tensor.sparse.sum's)."""
    dims = sum_dims(dim, op)
    if len(dims) == 0:
        return A.coalesce() if A.layout == "coo" else A
    if A.dtype is dt.bool_:
        # a bool matrix's duplicate entries are one True (to_dense and coalesce OR them, as
        # PyTorch's), so they are merged before counting: summing them counted each
        A = unique_entries(A)[0]
    v = A._values
    if len(dims) == 2:
        return pub("sum")(v, dtype=dtype)
    rows, cols = A._entries()
    keep = 1 - dims[0]
    acc = pub("sum")(v[:0], dtype=dtype).dtype   # T.sum's result dtype for these values
    vals = v if v.dtype is acc else v.astype(acc)
    out = pub("zeros")(A.shape[keep], dtype=acc, device=v.device)
    return pub("index_add")(out, 0, rows if keep == 0 else cols, vals)


__all__ = ["unique_entries", "grouped_softmax", "sum_dims", "total"]
