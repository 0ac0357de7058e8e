"""torch.sparse's functions over tensor.sparse matrices, composed from the library's recorded
ops (so they run on both devices and are differentiable in the values, in both modes):

- softmax / log_softmax(A, dim): over the stored entries of each row (dim 1) or column (dim
  0), the entries it does not store counting as -inf (graph attention): a matrix of A's
  pattern (a COO coalesced first, as PyTorch; a CSR or CSC keeps its own pattern);
- sum(A, dim=None): the sum of the stored entries, a 0-d dense tensor (dim None or both
  dims), or along one dim a dense vector (PyTorch gives a 1-D sparse tensor, which this
  module does not have);
- addmm(mat, mat1, mat2, beta=, alpha=): beta * mat + alpha * (mat1 @ mat2), mat1 sparse;
- spdiags(diagonals, offsets, shape, layout=): the matrix of the given diagonals (SciPy's
  spdiags layout: diagonal k takes diagonals[d, j] at column j), differentiable in diagonals;
- sparse_mask(x, mask): x's elements at mask's stored entries (PyTorch's x.sparse_mask(mask)).
The reductions themselves live in tensor/sparse/_reduce.py (the matrices' A.sum() uses them too).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..views import broadcast_shapes
from . import _checks, _dtypes, _reduce
from ._matrix import SparseCOO, is_sparse, mm
from ._ops import pub


def _sparse(A, op: str):
    if not is_sparse(A):
        raise TypeError(f"{op}: expects a SparseCOO, SparseCSR or SparseCSC matrix, got {type(A).__name__}")
    return A


def softmax(A, dim: int, dtype=None):
    """The softmax of each row (dim 1 / -1) or column (dim 0 / -2) over its stored entries (the
    others count as -inf, so they stay unstored): a matrix of A's pattern, a COO coalesced
    first, as torch.sparse.softmax; dtype casts the values first."""
    return _reduce.grouped_softmax(_sparse(A, "softmax"), dim, dtype, "softmax", False)


def log_softmax(A, dim: int, dtype=None):
    """log(softmax(A, dim)) at A's stored entries, computed stably (as torch.sparse.log_softmax)."""
    return _reduce.grouped_softmax(_sparse(A, "log_softmax"), dim, dtype, "log_softmax", True)


def sum(A, dim=None, dtype=None):  # noqa: A001  (torch.sparse.sum)
    """The sum of A's stored entries: a 0-d dense tensor for dim None or both dims, a dense
    vector for one dim (torch.sparse.sum gives a 1-D sparse tensor there; this module's
    matrices are 2-D), A coalesced for dim=() (as PyTorch). Integer and bool values sum as
    T.sum sums them (int64), dtype= as T.sum's; differentiable in the values. (A.sum(dim)
    is the same.)"""
    return _reduce.total(_sparse(A, "sparse.sum"), dim, dtype, "sparse.sum")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0) -> Tensor:
    """beta * mat + alpha * (mat1 @ mat2) with mat1 sparse (m, k), mat2 dense (k, n) and mat
    dense, broadcast to (m, n) (as torch.sparse.addmm; with beta 0 mat is not read, so a NaN
    in it does not propagate); differentiable in all three."""
    op = "sparse.addmm"
    _sparse(mat1, op)
    for name, t in (("mat", mat), ("mat2", mat2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a dense Tensor, got {type(t).__name__}")
        if t.device != mat1.device:
            raise ValueError(f"{op}: {name} on {t.device}, mat1 on {mat1.device}")
        if t.dtype is not mat1.dtype:
            raise TypeError(f"{op}: dtypes differ: mat1 {mat1.dtype.name}, {name} {t.dtype.name}")
    if mat2.ndim != 2 or mat2.shape[0] != mat1.shape[1]:
        raise ValueError(f"{op}: shape mismatch: sparse mat1 {mat1.shape} @ dense mat2 "
                         f"{mat2.shape} (mat2 must be 2-D)")
    _dtypes.check(op, mat1.dtype)
    shape = (mat1.shape[0], mat2.shape[1])
    try:
        fits = broadcast_shapes(mat.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: mat of shape {mat.shape} does not broadcast to the product's "
                         f"{shape}")
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (mat if beta == 1 else mat * beta)


def _offsets(offsets, op: str) -> np.ndarray:
    o = _checks.int_vector(offsets, "offsets", op).astype(np.int64)
    if np.unique(o).size != o.size:
        raise ValueError(f"{op}: offsets {o.tolist()} contain duplicates")
    return o


def spdiags(diagonals, offsets, shape, layout=None):
    """The (m, n) sparse matrix of the diagonals: row d of diagonals (2-D (len(offsets), L); a
    vector is one diagonal) goes on diagonal offsets[d] (0 main, > 0 above, < 0 below), its
    element j at column j (SciPy's spdiags layout; entries past L, past the matrix or on a
    diagonal outside it are left out; zeros on a diagonal are stored). layout None / "coo": a
    coalesced COO; "csr" / "csc": a CSR / CSC (as torch.sparse.spdiags); differentiable in
    diagonals."""
    op = "spdiags"
    if not isinstance(diagonals, Tensor):
        diagonals = pub("asarray")(diagonals)
    if diagonals.ndim == 1:
        diagonals = diagonals.reshape((1, diagonals.shape[0]))
    if diagonals.ndim != 2:
        raise ValueError(f"{op}: diagonals must be 1-D or 2-D, got shape {diagonals.shape}")
    o = _offsets(offsets, op)
    if o.size != diagonals.shape[0]:
        raise ValueError(f"{op}: {diagonals.shape[0]} diagonals but {o.size} offsets")
    if layout not in (None, "coo", "csr", "csc"):
        raise ValueError(f"{op}: layout must be None, 'coo', 'csr' or 'csc', got {layout!r}")
    if not isinstance(shape, tuple | list | Tensor) or len(shape) != 2:
        raise ValueError(f"{op}: shape must be 2 integers (2-D matrices), got {shape!r}")
    m, n = _checks.size2(shape, op)
    length = diagonals.shape[1]
    parts = []   # (rows, cols, which diagonal) of each diagonal's entries
    for d, k in enumerate(o.tolist()):
        cols = np.arange(max(0, k), max(0, min(n, m + k, length)), dtype=np.int64)
        parts.append((cols - k, cols, np.full(cols.size, d, dtype=np.int64)))
    r, c, w = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, np.int64)
               for i in range(3))
    order = np.lexsort((c, r))
    r, c, w = r[order], c[order], w[order]
    dev = diagonals.device
    vals = diagonals[pub("asarray")(w, device=dev), pub("asarray")(c, device=dev)]
    idx = pub("asarray")(np.stack([r, c]), device=dev)
    A = SparseCOO._make(idx, vals, (m, n), True)
    return A if layout in (None, "coo") else getattr(A, "to_sparse_" + layout)()


def sparse_mask(x: Tensor, mask):
    """x's elements at mask's stored entries, a matrix of mask's pattern and layout (as PyTorch's
    x.sparse_mask(mask): an uncoalesced mask keeps its duplicates); differentiable in x."""
    return _sparse(mask, "sparse_mask")._masked(x)


__all__ = ["softmax", "log_softmax", "sum", "addmm", "spdiags", "sparse_mask"]
