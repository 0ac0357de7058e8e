"""The products of tensor.sparse matrices: mm (SpMM / SpMV with a dense operand, through the
recorded kernel ops of tensor/sparse/_ops.py in the dtypes tensor/sparse/_dtypes.py extends
them to; spgemm, of two sparse matrices, composed from recorded ops) and sampled_addmm (SDDMM).
The matrix classes (tensor/sparse/_matrix.py) call these without being imported by them: they
take the matrices' parts, and make their sparse results through the operands' classes."""
from __future__ import annotations

from .. import dtypes as dt
from .._tensor import Tensor
from . import _dtypes
from ._checks import is_sparse
from ._ops import pub


def mm(A, B) -> Tensor:
    """A @ B with A sparse (m, k) and B dense (k, n) (SpMM) or (k,) (SpMV): a dense result,
    differentiable with respect to A's values and B; B sparse: spgemm (a sparse result)."""
    op = "mm"
    if not is_sparse(A):
        raise TypeError(f"{op}: the first operand must be a tensor.sparse matrix, got "
                        f"{type(A).__name__}")
    if is_sparse(B):
        return spgemm(A, B, op)
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: the second operand must be a dense Tensor or a sparse matrix, "
                        f"got {type(B).__name__}")
    m, k = A.shape
    if B.ndim not in (1, 2) or B.shape[0] != k:
        raise ValueError(f"{op}: shape mismatch: sparse {A.shape} @ dense {B.shape}")
    if B.device != A.device:
        raise ValueError(f"{op}: operands on different devices: {A.device} and {B.device}")
    if B.dtype is not A.dtype:
        raise TypeError(f"{op}: dtypes differ: sparse {A.dtype.name}, dense {B.dtype.name}")
    _dtypes.check(op, A.dtype)
    crow, col, vals, bal = A._csr_parts()
    vec = B.ndim == 1
    b2 = B.reshape((k, 1)) if vec else B
    out = _dtypes.spmm_any(crow, col, vals, b2, (m, k), bal)
    return out.reshape((m,)) if vec else out


def spgemm(A, B, op: str = "mm"):
    """A @ B of two sparse matrices (PyTorch's torch.sparse.mm of two): a sparse matrix of A's
    layout (a coalesced COO, or a CSR / CSC), every product A[i, k] B[k, j] of stored entries
    summed into (i, j) (expand, sort, compress); differentiable in both values. Any dtype
    (bool: the boolean product)."""
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"{op}: shape mismatch: sparse {A.shape} @ sparse {B.shape}")
    if B.device != A.device:
        raise ValueError(f"{op}: operands on different devices: {A.device} and {B.device}")
    if B.dtype is not A.dtype:
        raise TypeError(f"{op}: dtypes differ: {A.dtype.name} @ {B.dtype.name}")
    a, b = A.to_sparse_coo(), B.to_sparse_coo().coalesce()
    ar, ac = a.indices()[0], a.indices()[1]
    brow, col = b.indices()[0], b.indices()[1]
    # entry e of A meets B's row ac[e]: B's (sorted) entries lo[e] ... lo[e] + cnt[e] - 1 (found
    # by search, so nothing is sized by B's row count: a hypersparse B costs its nnz only)
    lo = pub("searchsorted")(brow, ac, side="left")
    cnt = pub("searchsorted")(brow, ac, side="right") - lo
    dev = A.device
    ent = pub("repeat_interleave")(pub("arange")(a.nnz, dtype=dt.int64, device=dev), cnt)
    first = pub("cumsum")(cnt) - cnt
    j = lo[ent] + pub("arange")(ent.shape[0], dtype=dt.int64, device=dev) - first[ent]
    vals = pub("multiply")(a.values()[ent], b.values()[j])
    out = type(a)._make(pub("stack")([ar[ent], col[j]]), vals, (A.shape[0], B.shape[1]), False)
    out = out.coalesce()
    return out if A.layout == "coo" else getattr(out, "to_sparse_" + A.layout)()


def _coef(x, name: str, d, op: str):
    """A scalar coefficient as a float (complex only for complex matrices)."""
    try:
        c = complex(x)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: {name} must be a number, got {type(x).__name__}") from None
    if c.imag and d.kind != "c":
        raise TypeError(f"{op}: a complex {name} ({x}) needs complex matrices, got {d.name}")
    return c if c.imag else c.real


def sampled_addmm(S, A, B, *, beta: float = 1.0, alpha: float = 1.0):
    """SDDMM: a CSR with S's pattern and values beta * S.values + alpha * (A @ B) at it (as
    torch.sparse.sampled_addmm); A (m, k), B (k, n), S (m, n) sparse."""
    op = "sampled_addmm"
    if not is_sparse(S):
        raise TypeError(f"{op}: S must be a tensor.sparse matrix, got {type(S).__name__}")
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, Tensor) or t.ndim != 2:
            raise ValueError(f"{op}: {name} must be a 2-D dense Tensor")
        if t.device != S.device:
            raise ValueError(f"{op}: {name} on {t.device}, S on {S.device}")
        if t.dtype is not S.dtype:
            raise TypeError(f"{op}: dtypes differ: S {S.dtype.name}, {name} {t.dtype.name}")
    if A.shape[1] != B.shape[0] or (A.shape[0], B.shape[1]) != S.shape:
        raise ValueError(f"{op}: shape mismatch: S {S.shape}, A {A.shape} @ B {B.shape}")
    _dtypes.check(op, S.dtype)
    beta, alpha = (_coef(x, name, S.dtype, op) for name, x in (("beta", beta), ("alpha", alpha)))
    csr = S.to_sparse_csr()
    crow, col, vals, bal = csr._csr_parts()
    v = _dtypes.sddmm_any(crow, col, A, B.mT, vals, beta, alpha)
    return type(csr)._make(crow, col, v, S.shape, csr._sorted_cols, bal)


__all__ = ["mm", "spgemm", "sampled_addmm"]
