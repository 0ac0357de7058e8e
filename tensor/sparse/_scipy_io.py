"""tensor.sparse matrices to and from scipy.sparse (SciPy is optional: imported when called)."""
from __future__ import annotations

import numpy as np

from ._matrix import SparseCOO, SparseCSC, SparseCSR, sparse_coo_tensor, sparse_csc_tensor, sparse_csr_tensor
from ._ops import pub


def _scipy(op: str):
    try:
        import scipy.sparse as sps
    except ImportError as e:
        raise ImportError(f"{op}: needs SciPy (pip install scipy)") from e
    return sps


def from_scipy(m, *, device=None):
    """A scipy.sparse matrix as a SparseCSR (csr input), SparseCSC (csc input) or SparseCOO (any
    other format), in the matrix's own dtype."""
    sps = _scipy("from_scipy")
    if not sps.issparse(m):
        raise TypeError(f"from_scipy: expects a scipy.sparse matrix, got {type(m).__name__}")
    if m.format in ("csr", "csc"):
        make = sparse_csr_tensor if m.format == "csr" else sparse_csc_tensor
        return make(m.indptr.astype(np.int64), m.indices.astype(np.int64),
                    pub("asarray")(np.asarray(m.data)), m.shape, device=device)
    c = m.tocoo()
    return sparse_coo_tensor(np.stack([c.row, c.col]).astype(np.int64),
                             pub("asarray")(np.asarray(c.data)), c.shape, device=device)


def to_scipy(s):
    """A SparseCOO as scipy.sparse.coo_matrix, a SparseCSR as csr_matrix, a SparseCSC as
    csc_matrix (host copies)."""
    sps = _scipy("to_scipy")
    if isinstance(s, SparseCSC):
        return to_scipy(s.t()).T.tocsc()
    if isinstance(s, SparseCSR):
        return sps.csr_matrix((s._values.detach().numpy().copy(), s._col.numpy().copy(),
                               s._crow.numpy().copy()), shape=s.shape)
    if isinstance(s, SparseCOO):
        i = s._indices.numpy().copy()
        return sps.coo_matrix((s._values.detach().numpy().copy(), (i[0], i[1])), shape=s.shape)
    raise TypeError(f"to_scipy: expects a SparseCOO, SparseCSR or SparseCSC, got {type(s).__name__}")


__all__ = ["from_scipy", "to_scipy"]
