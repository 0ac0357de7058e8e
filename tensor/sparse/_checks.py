"""The argument checks of tensor.sparse's constructors (sparse_coo_tensor, sparse_csr_tensor and
the SparseCOO / SparseCSR classes themselves): index tensors as int64 copies no caller holds,
values as a 1-D tensor, sizes as two int64-sized integers, and the host checks of the index
structure that keep a bad index from ever reaching a kernel."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes as dt
from .._tensor import Tensor
from ._ops import pub

_INT64_MAX = 2 ** 63 - 1


def _fits_int64(a: np.ndarray, op: str, what: str) -> None:
    """Unsigned index values past int64 raise rather than wrap to negative ones."""
    if a.dtype.kind == "u" and a.size and int(a.max()) > _INT64_MAX:
        raise IndexError(f"{op}: {what} value {int(a.max())} does not fit int64")


def as_index(x, op: str, what: str, device) -> Tensor:
    """x as an int64 tensor on device that no one else holds (a caller's tensor is copied, so a
    later write to it cannot change what was checked). Unsigned values past int64 raise rather
    than wrap to negative ones."""
    given = x
    if not isinstance(x, Tensor):
        a = np.asarray(x)
        _fits_int64(a, op, what)
        x = pub("asarray")(a.astype(np.int64) if a.dtype.kind in "iu" or a.size == 0 else a,
                           device=device)
    if x.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be integers, got {x.dtype.name}")
    if x.dtype is not dt.int64:
        if x.dtype is dt.uint64:
            _fits_int64(x.numpy(), op, what)
        x = x.astype(dt.int64)
    if device is not None and x.device != device:
        x = x.to_device(device)
    return x.copy() if x is given else x


def as_values(v, op: str, dtype, device, requires_grad: bool = False) -> Tensor:
    """The values as a 1-D tensor: in dtype when one is given, else a tensor's own dtype, else
    (Python or NumPy data) the data's, integers and bools read as float64 (so that a matrix
    written with integer literals multiplies float operands). requires_grad (PyTorch's
    factory argument): the values become a leaf that requires grad (detached from any history,
    sharing the tensor's memory), so the matrix is a leaf whose A.grad backward fills."""
    data = not isinstance(v, Tensor)
    if data:
        v = pub("asarray")(v, dtype=dtype, device=device)
    if dtype is not None and v.dtype is not dtype:
        v = v.astype(dtype)
    if device is not None and v.device != device:
        v = v.to_device(device)
    if v.ndim != 1:
        raise ValueError(f"{op}: values must be 1-D (one scalar per entry), got shape {v.shape}")
    if data and dtype is None and v.dtype.kind in "iub":
        v = v.astype(dt.float64)
    if requires_grad:
        if v.dtype.kind not in "fc":
            raise TypeError(f"{op}: only floating-point and complex values can require "
                            f"gradients, got {v.dtype.name}")
        v = v.detach()
        v.requires_grad_(True)
    return v


def infer_csr_size(crow: Tensor, col: Tensor, op: str, names) -> tuple:
    """The (m, n) of CSR indices given without a size (PyTorch's): m from crow's length, n one
    past the largest column index (0 without entries)."""
    if crow.ndim != 1 or crow.shape[0] < 1:
        raise ValueError(f"{op}: {names[0]} must be 1-D of length {names[2]}s + 1, got shape "
                         f"{crow.shape}")
    k = col.numpy()
    return crow.shape[0] - 1, int(k.max()) + 1 if k.size else 0


def size2(size, op: str):
    """size as two non-negative int64-sized integers (None stays None)."""
    if size is None:
        return None
    try:
        size = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{op}: size must be 2 integers, got {tuple(size)!r}") from None
    if len(size) != 2 or any(s < 0 for s in size):
        raise ValueError(f"{op}: size must be 2 non-negative numbers (2-D matrices), got {size}")
    if any(s > _INT64_MAX for s in size):
        raise ValueError(f"{op}: size {size} does not fit int64")
    return size


def increasing(r: np.ndarray, c: np.ndarray) -> bool:
    """Whether the (r, c) pairs are strictly increasing row-major (no key, no overflow)."""
    return bool(np.all((r[1:] > r[:-1]) | ((r[1:] == r[:-1]) & (c[1:] > c[:-1]))))


def coo_structure(indices: Tensor, values: Tensor, op: str) -> int:
    """The shapes a COO matrix needs ((2, nnz) indices, nnz values); nnz."""
    if indices.ndim != 2 or indices.shape[0] != 2:
        raise ValueError(f"{op}: indices must have shape (2, nnz) (2-D matrices), got "
                         f"{indices.shape}")
    nnz = indices.shape[1]
    if values.shape[0] != nnz:
        raise ValueError(f"{op}: {nnz} index pairs but {values.shape[0]} values")
    return nnz


def coo_host(indices: Tensor, size, op: str):
    """(size, coalesced) of COO indices checked on the host (size inferred when None):
    non-negative, within size."""
    h = indices.numpy()
    nnz = h.shape[1]
    if nnz and h.min() < 0:
        raise IndexError(f"{op}: negative index {int(h.min())}")
    if size is None:
        size = tuple(int(h[d].max()) + 1 if nnz else 0 for d in range(2))
    for d in range(2):
        if nnz and h[d].max() >= size[d]:
            raise IndexError(f"{op}: index {int(h[d].max())} out of range for dimension {d} "
                             f"of size {size[d]}")
    return size, nnz <= 1 or increasing(h[0], h[1])


# what compressed indices are called: CSR's (compressed rows), CSC's (compressed columns)
CSR_NAMES = ("crow_indices", "col_indices", "row", "column")
CSC_NAMES = ("ccol_indices", "row_indices", "column", "row")


def csr_structure(crow: Tensor, col: Tensor, values: Tensor, size, op: str,
                  names=CSR_NAMES) -> int:
    """The shapes a CSR matrix of size (m, n) needs ((m + 1,) crow, (nnz,) col and values); nnz.
    (A CSC matrix is checked as the CSR matrix of its transpose, names=CSC_NAMES.)"""
    m = size[0]
    if crow.ndim != 1 or crow.shape[0] != m + 1:
        raise ValueError(f"{op}: {names[0]} must have shape ({m + 1},) for {m} {names[2]}s, got "
                         f"{crow.shape}")
    if col.ndim != 1 or col.shape[0] != values.shape[0]:
        raise ValueError(f"{op}: {names[1]} {col.shape} and values {values.shape} must be 1-D "
                         "of length nnz")
    return col.shape[0]


def csr_host(crow: Tensor, col: Tensor, size, op: str, names=CSR_NAMES) -> bool:
    """Check CSR indices on the host (crow from 0 non-decreasing to nnz, col within n); whether
    each row's columns are strictly increasing (sorted, no duplicates)."""
    m, n = size
    c, k = crow.numpy(), col.numpy()
    nnz = k.shape[0]
    if c[0] != 0 or c[-1] != nnz:
        raise ValueError(f"{op}: {names[0]} must start at 0 and end at nnz = {nnz}, got "
                         f"{int(c[0])} ... {int(c[-1])}")
    if np.any(np.diff(c) < 0):
        raise ValueError(f"{op}: {names[0]} must be non-decreasing (sorted)")
    if nnz and (k.min() < 0 or k.max() >= n):
        bad = int(k.min()) if k.min() < 0 else int(k.max())
        raise IndexError(f"{op}: {names[3]} index {bad} out of range for {n} {names[3]}s")
    return nnz <= 1 or increasing(np.repeat(np.arange(m), np.diff(c)), k)


class SparseBase:
    """The base of the matrix classes (tensor/sparse/_matrix.py), so that the modules they
    import can recognise a matrix without importing them."""

    __slots__ = ()


def is_sparse(x) -> bool:
    return isinstance(x, SparseBase)


def trusted_parts(op: str, values, *indices) -> None:
    """What a constructor that skips the host checks still checks (no read of the data): tensors,
    int64 indices, 1-D values, one device."""
    if not isinstance(values, Tensor) or values.ndim != 1:
        raise ValueError(f"{op}: values must be a 1-D Tensor, got "
                         f"{getattr(values, 'shape', type(values).__name__)}")
    for t in indices:
        if not isinstance(t, Tensor) or t.dtype is not dt.int64:
            raise TypeError(f"{op}: index tensors must be int64 Tensors, got "
                            f"{getattr(t, 'dtype', type(t).__name__)}")
        if t.device != values.device:
            raise ValueError(f"{op}: indices on {t.device}, values on {values.device}")


__all__ = ["SparseBase", "is_sparse", "as_index", "as_values", "infer_csr_size", "size2", "increasing",
           "coo_structure", "coo_host", "csr_structure", "csr_host", "trusted_parts", "CSR_NAMES",
           "CSC_NAMES"]


def int_vector(values, what: str, op: str) -> np.ndarray:
    """values (a tensor, an int or a sequence of ints) as a 1-d NumPy integer array on the host;
    TypeError for other dtypes, ValueError past one dimension (`what` names them in errors)."""
    if isinstance(values, Tensor):
        if values.dtype.kind not in "iu":
            raise TypeError(f"{op}: {what} must be integers, got {values.dtype.name}")
        h = values.numpy()
    else:
        h = np.asarray(values)
        if h.dtype.kind not in "iu" and h.size:
            raise TypeError(f"{op}: {what} must be integers, got {h.dtype}")
    if h.ndim > 1:
        raise ValueError(f"{op}: {what} must be a scalar or a vector, got shape {h.shape}")
    return h.reshape(-1)
