"""The recorded ops of tensor.sparse and the pattern helpers they share.

Two ops are recorded on the autograd graph (rules: autograd/rules_sparse.py):
  sparse_spmm(crow, col, values, b, shape, balanced) -> (m, n) dense = A @ b, A the CSR
      matrix (crow, col, values) of `shape`; balanced picks the nnz-balanced CUDA kernel.
  sparse_sddmm(crow, col, x, y, s, beta, alpha) -> (nnz,) = beta * s + alpha * (x @ y^T) at
      the pattern (s None when beta is 0).
Both take the pattern's int64 index tensors as plain arguments, so gradients reach the
values (keeping the pattern) and the dense operands. The transposed pattern the rules need
(A^T's CSR and the permutation of the values into it) is built with a stable argsort by
column, on the device, and cached per column tensor.
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes as dt
from .. import elementwise as ew
from .._hook import differentiable
from .._tensor import Tensor
from ..backend import backend_for

KERNEL_DTYPES = (dt.float32, dt.float64)


def pub(name: str):
    """The public function `name` (recorded where differentiable; creation unrecorded)."""
    if name == "asarray":
        from ..convert import asarray
        return asarray
    if name in ("zeros", "ones", "arange"):
        from .. import creation
        return getattr(creation, name)
    from ..public import PUB
    return PUB[name]


def _c(t: Tensor) -> Tensor:
    return ew.contiguous(t)


def _spmm_raw(crow, col, values, b, shape, balanced=False) -> Tensor:
    m = shape[0]
    bc = _c(b)
    out = ew.empty_tensor((m, bc.shape[1]), values.dtype, values.device)
    backend_for(values.device).spmm_csr(_c(crow), _c(col), _c(values), bc, out, bool(balanced))
    return out


def _sddmm_raw(crow, col, x, y, s=None, beta=0.0, alpha=1.0) -> Tensor:
    xc, yc = _c(x), _c(y)
    nnz = col.shape[0]
    out = ew.empty_tensor((nnz,), xc.dtype, xc.device)
    sc = _c(s) if (s is not None and beta != 0.0) else out
    backend_for(xc.device).sddmm_csr(_c(crow), _c(col), sc, xc, yc, out,
                                     float(beta) if s is not None else 0.0, float(alpha))
    return out


spmm = differentiable("sparse_spmm", _spmm_raw)
sddmm = differentiable("sparse_sddmm", _sddmm_raw)


# ---------------------------------------------------------------- patterns

def skewed(crow: Tensor) -> bool:
    """Whether the rows are skewed enough for the nnz-balanced CUDA kernel (one host read of
    crow; the CPU kernel balances by nnz whatever the hint)."""
    c = crow.numpy()
    m = c.shape[0] - 1
    if m <= 0 or c[-1] == 0:
        return False
    longest = int(np.max(np.diff(c)))
    return longest > 8 * (int(c[-1]) / m) + 64


def row_ids(crow: Tensor, nnz: int) -> Tensor:
    """The row of each nonzero of a CSR pattern (int64 (nnz,))."""
    ar = pub("arange")(nnz, dtype=dt.int64, device=crow.device)
    return pub("searchsorted")(crow, ar, side="right") - 1


def crow_of(sorted_rows: Tensor, m: int) -> Tensor:
    """crow (m + 1,) of row ids sorted ascending."""
    ar = pub("arange")(m + 1, dtype=dt.int64, device=sorted_rows.device)
    return pub("searchsorted")(sorted_rows, ar, side="left")


def by_row(rows: Tensor, cols: Tensor, m: int):
    """(crow, col, perm): the CSR pattern of the (row, col) pairs, perm the stable order by row
    (the values go into it as values[perm]); duplicates kept."""
    perm = pub("argsort")(rows, stable=True)
    return crow_of(rows[perm], m), cols[perm], perm


def row_major_order(rows: Tensor, cols: Tensor, m: int, n: int) -> Tensor:
    """The stable row-major order of the (row, col) pairs: one sort of row * n + col where that
    fits in int64, else by col then (stably) by row, so no key overflows for any shape."""
    argsort = pub("argsort")
    if m * n < 2 ** 63:
        return argsort(rows * n + cols, stable=True)
    p = argsort(cols, stable=True)
    return p[argsort(rows[p], stable=True)]


_TRANSPOSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def transposed(crow: Tensor, col: Tensor, ncols: int):
    """(crowT, colT, perm, balanced) of the transposed pattern: A^T's values are A's [perm].
    Cached per col storage: the patterns are immutable (a matrix's index tensors are its own,
    read-only copies: tensor/sparse/_matrix.py), and the key is the whole layout of both."""
    key = (crow._storage, crow._offset, crow._strides, crow.shape[0], col._offset, col._strides,
           col.shape[0], ncols)
    hit = _TRANSPOSED.get(col._storage)
    if hit is not None and hit[0] == key:
        return hit[1]
    rows = row_ids(crow, col.shape[0])
    r = by_row(col, rows, ncols)
    res = (r[0], r[1], r[2], skewed(r[0]))
    _TRANSPOSED[col._storage] = (key, res)
    return res


__all__ = ["spmm", "sddmm", "skewed", "row_ids", "crow_of", "by_row", "row_major_order",
           "transposed", "KERNEL_DTYPES"]
