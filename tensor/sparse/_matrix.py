"""tensor.sparse's matrices: the SparseCOO, SparseCSR and SparseCSC classes, their constructors,
conversions, arithmetic and products (the package's docstring, tensor/sparse/__init__.py,
describes them). The package re-exports the public names; the classes say they are
tensor.sparse's (their pickles name tensor.sparse.SparseCOO / SparseCSR / SparseCSC)."""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from .._tensor import Tensor
from ..views import broadcast_shapes
from . import _checks as ck
from . import _elementwise, _ops, _reduce, _select
from ._ops import pub
from ._products import mm, sampled_addmm

__all__ = ["SparseCOO", "SparseCSR", "sparse_coo_tensor", "sparse_csr_tensor", "from_dense",
           "mm", "sampled_addmm", "is_sparse", "SparseCSC", "sparse_csc_tensor"]


def _dev(device):
    from ..device import device as mkdev
    return mkdev(device) if device is not None else None


_FROZEN = ("it holds the indices of a sparse matrix, which were checked when it was made "
           "(matrices are immutable)")


def _freeze(t: Tensor) -> Tensor:
    """t made read-only for good: the kernels and the cached patterns read it unchecked."""
    if not isinstance(t._ro, str):
        t._ro = _FROZEN
    return t


class _Sparse(ck.SparseBase):
    """What the layouts share: the shape, the values (a Tensor: its dtype, device and
    requires_grad are the matrix's) and the product with a dense operand."""

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._values.dtype)
    device = property(lambda self: self._values.device)
    nnz = property(lambda self: self._values.shape[0])
    ndim = property(lambda self: 2)
    requires_grad = property(lambda self: self._values.requires_grad)

    _tensor_defers = True   # dense (op) sparse: Tensor's operators leave it to ours
    __array_ufunc__ = None  # ndarray (op) sparse: NumPy's operators leave it to ours too

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"{type(self).__name__}: a sparse matrix does not convert to a NumPy "
                        "array implicitly; use .to_dense().numpy() (or tensor.sparse.to_scipy)")

    def to(self, *args, dtype=None, device=None, copy: bool = False):
        """PyTorch's A.to(device), A.to(dtype), A.to(device, dtype) (parsed as Tensor.to parses
        them): the values converted (differentiably), the indices moved with them."""
        v = self._values.to(*args, dtype=dtype, device=device, copy=copy)
        moved = self if v.device == self.device else self.to_device(v.device)
        return moved if v is self._values else moved._with_values(v)

    def cpu(self):
        return self.to_device("cpu")

    def cuda(self, device=None):
        return self.to_device("cuda" if device is None else device)

    def sum(self, dim=None, dtype=None):
        """PyTorch's A.sum(dim): tensor.sparse.sum(A, dim, dtype) (a dense result)."""
        return _reduce.total(self, dim, dtype, "sum")

    def _no_comparison(self, other, op: str):
        if isinstance(other, Tensor | _Sparse | np.ndarray | np.generic | int | float | complex):
            raise TypeError(f"{op}: a sparse matrix has no elementwise comparisons (PyTorch's "
                            "raise too); compare .to_dense()")
        return NotImplemented

    # without these, == / != fell back to identity: a silent False / True for any operand
    def __eq__(self, other):
        return self._no_comparison(other, "eq")

    def __ne__(self, other):
        return self._no_comparison(other, "ne")

    __hash__ = object.__hash__   # still hashable (by identity), as before

    def __bool__(self):
        """The truth value of a 1 x 1 matrix; any other raises, as a dense Tensor's (without
        this, `if A:` was True for every matrix, even an empty or an all-zero one)."""
        if self._shape != (1, 1):
            raise ValueError(f"the truth value of a sparse matrix of shape {self._shape} is "
                             "ambiguous; use .to_dense().any() or .all()")
        return bool(self.to_dense().item())

    # PyTorch's spellings for a sparse tensor's shape and kind
    is_sparse = property(lambda self: self.layout == "coo")
    is_sparse_csr = property(lambda self: self.layout == "csr")

    def size(self, dim=None):
        from ..axes import norm_axis
        return self._shape if dim is None else self._shape[norm_axis(dim, 2, "size")]

    def dim(self) -> int:
        return 2

    def index_select(self, dim: int, index):
        """PyTorch's A.index_select(dim, index): the rows (dim 0) or columns (dim 1) at index (a
        vector; repeats and negative indices allowed), a matrix of this layout."""
        return _select.index_select(self, dim, index)

    def select(self, dim: int, index: int) -> Tensor:
        """Row (dim 0) or column (dim 1) index as a dense vector (PyTorch's: a 1-D sparse one)."""
        return _select.select(self, dim, index)

    def values(self) -> Tensor:
        return self._values

    is_leaf = property(lambda self: self._values.is_leaf)

    @property
    def grad(self):
        """PyTorch's A.grad of a leaf matrix (made with requires_grad=True): its values'
        gradient as a matrix of its pattern and layout, or None; `A.grad = None` clears it."""
        g = self._values.grad
        return None if g is None else self._with_values(g)

    @grad.setter
    def grad(self, g):
        if g is not None:
            raise TypeError(f"{type(self).__name__}.grad: only None can be assigned (to clear it)")
        self._values.grad = None

    def requires_grad_(self, requires_grad: bool = True):
        """Make this matrix a leaf that requires grad (its values must be a leaf)."""
        self._values.requires_grad_(requires_grad)
        return self

    T = property(lambda self: self.t())    # PyTorch's aliases of t() for a matrix
    mT = property(lambda self: self.t())

    def transpose(self, dim0: int, dim1: int):
        """PyTorch's transpose(dim0, dim1) of a matrix: t(), or the matrix itself when the two
        dimensions are the same."""
        from ..axes import norm_axis
        a, b = norm_axis(dim0, 2, "transpose"), norm_axis(dim1, 2, "transpose")
        return self if a == b else self.t()

    def __matmul__(self, other):
        return mm(self, other)

    def __rmatmul__(self, other):
        """dense @ sparse = (A^T @ dense^T)^T (a vector: A^T @ v)."""
        if not isinstance(other, Tensor):
            return NotImplemented
        if other.ndim in (1, 2) and other.shape[-1] != self._shape[0]:   # (not A^T's shapes)
            raise ValueError(f"matmul: shape mismatch: dense {other.shape} @ sparse {self._shape}")
        if other.ndim == 1:
            return mm(self.t(), other)
        if other.ndim != 2:
            raise ValueError(f"matmul: dense @ sparse takes a 1-D or 2-D dense operand, got "
                             f"shape {other.shape}")
        return mm(self.t(), other.mT).mT

    def to_sparse_csc(self):
        """The CSC form (compressed columns): the CSR matrix of the transpose, read by column."""
        return SparseCSC._of(self.t().to_sparse_csr())

    def _masked(self, x: Tensor):
        """x.sparse_mask(self): x's elements at the stored entries, a matrix of this pattern and
        layout (Tensor's method, which may not import tensor.sparse, comes through here)."""
        op = "sparse_mask"
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}: expects a dense Tensor, got {type(x).__name__}")
        if x.shape != self._shape:
            raise ValueError(f"{op}: the tensor's shape {x.shape} differs from the mask's "
                             f"{self._shape}")
        if x.device != self.device:
            raise ValueError(f"{op}: the tensor is on {x.device}, the mask on {self.device}")
        rows, cols = self._entries()
        return self._with_values(x[rows, cols])

    def _with_values(self, values: Tensor):
        """The same pattern with other values."""
        raise NotImplementedError

    def _entries(self) -> tuple:
        """(rows, cols) of the stored entries, in the values' order."""
        raise NotImplementedError

    # sparse (op) dense gives a dense result, sparse (op) sparse a sparse one (PyTorch's);
    # products and quotients by a scalar or a dense tensor keep the pattern
    def __add__(self, other):
        if isinstance(other, Tensor):
            return self.to_dense() + other
        if isinstance(other, _Sparse):
            s = _concat(self.to_sparse_coo(), other.to_sparse_coo(), "add")
            return s if self.layout == "coo" else getattr(s, "to_sparse_" + self.layout)()
        return NotImplemented

    def __radd__(self, other):
        return other + self.to_dense() if isinstance(other, Tensor) else NotImplemented

    def __neg__(self):
        return self._with_values(-self._values)

    def __sub__(self, other):
        if isinstance(other, Tensor):
            return self.to_dense() - other
        return self + (-other) if isinstance(other, _Sparse) else NotImplemented

    def __rsub__(self, other):
        return other - self.to_dense() if isinstance(other, Tensor) else NotImplemented

    def _scaled(self, other, op: str, name: str):
        if isinstance(other, _Sparse):
            if op == "multiply":   # the entries both store (PyTorch's sparse * sparse)
                return _select.multiply(self, other)
            raise TypeError(f"{name}: a sparse matrix divides by a scalar only, not by a sparse "
                            "matrix (its unstored entries would be 0 / 0)")
        if isinstance(other, Tensor) and other.ndim:
            try:
                fits = broadcast_shapes(other.shape, self._shape) == self._shape
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(f"{name}: a dense operand of shape {other.shape} does not "
                                 f"broadcast to the sparse matrix's {self._shape}")
            if other.device != self.device:
                raise ValueError(f"{name}: the sparse matrix is on {self.device}, the dense "
                                 f"operand on {other.device}")
            if op == "true_divide":
                raise ValueError(f"{name}: a sparse matrix divides by a scalar only (the "
                                 "entries it does not store would be 0 / x)")
            rows, cols = self._entries()
            other = pub("broadcast_to")(other, self._shape)[rows, cols]
        elif not isinstance(other, Tensor | int | float | complex | np.number | np.bool_):
            return NotImplemented
        return self._with_values(pub(op)(self._values, other))

    def __mul__(self, other):
        return self._scaled(other, "multiply", "multiply")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._scaled(other, "true_divide", "true_divide")

    def __pow__(self, exponent):
        """A ** p (PyTorch's A.pow(p)) for a real p > 0: the stored entries' powers."""
        return _elementwise.power(self, exponent)

    pow = __pow__

    def __abs__(self):
        return self.abs()


class SparseCOO(_Sparse):
    """A 2-D sparse matrix of (row, col) -> value entries, duplicates allowed until coalesce()."""

    layout = "coo"

    def __init__(self, indices, values, shape, coalesced: bool = False, *,
                 check_invariants: bool = True):
        """The matrix of int64 indices (2, nnz) and values (nnz,), checked as sparse_coo_tensor
        checks them (indices copied); coalesced=True claims sorted unique entries (checked).
        check_invariants=False (for indices known to be valid, e.g. made by this library):
        only the shapes, dtypes and devices are checked, the matrix takes the index tensor as
        it is (frozen read-only) and trusts the claim; invalid indices are then undefined
        behaviour, as in sparse_coo_tensor."""
        op = "SparseCOO"
        if check_invariants:
            s = sparse_coo_tensor(indices, values, shape)
            if coalesced and not s._coalesced:
                raise ValueError(f"{op}: coalesced=True but the entries are not sorted row-major "
                                 "without duplicates")
            indices, values, shape, coalesced = s._indices, s._values, s._shape, s._coalesced
        else:
            ck.trusted_parts(op, values, indices)
            ck.coo_structure(indices, values, op)
            shape = ck.size2(shape, op)
            if shape is None:
                raise ValueError(f"{op}: shape is required with check_invariants=False")
        self._init(indices, values, shape, coalesced)

    def _init(self, indices: Tensor, values: Tensor, shape, coalesced: bool) -> None:
        self._indices, self._values, self._shape = _freeze(indices), values, tuple(shape)
        self._coalesced = bool(coalesced)
        self._pattern = None   # (crow, col, perm, balanced): the CSR form of the pattern

    @classmethod
    def _make(cls, indices: Tensor, values: Tensor, shape, coalesced: bool) -> SparseCOO:
        """A matrix of parts this module made valid (nothing checked)."""
        self = cls.__new__(cls)
        self._init(indices, values, shape, coalesced)
        return self

    def __reduce__(self):
        """Pickles and copies rebuild through the checked constructor (so a copy's indices are
        read-only again, and a corrupted pickle raises instead of reaching the kernels)."""
        return (SparseCOO, (self._indices, self._values, self._shape))

    def indices(self) -> Tensor:
        return self._indices

    def is_coalesced(self) -> bool:
        return self._coalesced

    def coalesce(self) -> SparseCOO:
        """Entries sorted row-major, duplicates summed (deterministically: index_add in the
        order of a stable sort)."""
        if self._coalesced:
            return self
        m, n = self._shape
        if self.nnz == 0:
            return SparseCOO._make(self._indices, self._values, self._shape, True)
        order = _ops.row_major_order(self._indices[0], self._indices[1], m, n)
        r, c = self._indices[0][order], self._indices[1][order]
        new = pub("concatenate")([pub("ones")(1, dtype=dt.bool_, device=self.device),
                                  (r[1:] != r[:-1]) | (c[1:] != c[:-1])])
        seg = pub("cumsum")(new.astype(dt.int64)) - 1
        vals = pub("zeros")(int(seg[-1].item()) + 1, dtype=self.dtype, device=self.device)
        vals = pub("index_add")(vals, 0, seg, self._values[order])
        return SparseCOO._make(pub("stack")([r[new], c[new]]), vals, self._shape, True)

    def _csr_parts(self):
        if self._pattern is None:
            if self._coalesced:   # sorted by row already: the values need no permutation
                crow = _ops.crow_of(self._indices[0], self._shape[0])
                col, perm = self._indices[1], None
            else:
                crow, col, perm = _ops.by_row(self._indices[0], self._indices[1], self._shape[0])
            self._pattern = (crow, col, perm, _ops.skewed(crow))
        crow, col, perm, bal = self._pattern
        return crow, col, self._values if perm is None else self._values[perm], bal

    def to_dense(self) -> Tensor:
        m, n = self._shape
        flat = pub("zeros")(m * n, dtype=self.dtype, device=self.device)
        flat = pub("index_add")(flat, 0, self._indices[0] * n + self._indices[1], self._values)
        return flat.reshape((m, n))

    def to_sparse_coo(self) -> SparseCOO:
        return self

    def to_sparse_csr(self) -> SparseCSR:
        c = self.coalesce()
        crow = _ops.crow_of(c._indices[0], self._shape[0])
        return SparseCSR._make(crow, c._indices[1], c._values, self._shape, sorted_cols=True)

    def t(self) -> SparseCOO:
        idx = pub("stack")([self._indices[1], self._indices[0]])
        return SparseCOO._make(idx, self._values, self._shape[::-1], False)

    def to_device(self, device) -> SparseCOO:
        device = _dev(device)
        if device == self.device:
            return self
        return SparseCOO._make(self._indices.to_device(device), self._values.to_device(device),
                               self._shape, self._coalesced)

    def detach(self) -> SparseCOO:
        return SparseCOO._make(self._indices, self._values.detach(), self._shape, self._coalesced)

    def _with_values(self, values: Tensor) -> SparseCOO:
        s = SparseCOO._make(self._indices, values, self._shape, self._coalesced)
        s._pattern = self._pattern
        return s

    def _entries(self) -> tuple:
        return self._indices[0], self._indices[1]

    def __repr__(self):
        return (f"SparseCOO(shape={self._shape}, nnz={self.nnz}, dtype={self.dtype.name}, "
                f"device={self.device}, coalesced={self._coalesced})")


class SparseCSR(_Sparse):
    """A 2-D sparse matrix in compressed sparse row form: row i's entries are
    col[crow[i]:crow[i+1]] with values[crow[i]:crow[i+1]]."""

    layout = "csr"

    def __init__(self, crow, col, values, shape, sorted_cols: bool = False, balanced=None, *,
                 check_invariants: bool = True):
        """The matrix of int64 crow (m + 1,), col (nnz,) and values (nnz,), checked as
        sparse_csr_tensor checks them (indices copied; sorted_cols and balanced, hints, are
        worked out again). check_invariants=False (for indices known to be valid): only the
        shapes, dtypes and devices are checked, the index tensors are taken as they are (frozen
        read-only) and the hints trusted; invalid indices are then undefined behaviour."""
        op = "SparseCSR"
        if check_invariants:
            s = sparse_csr_tensor(crow, col, values, shape)
            crow, col, values, shape = s._crow, s._col, s._values, s._shape
            sorted_cols, balanced = s._sorted_cols, None
        else:
            ck.trusted_parts(op, values, crow, col)
            shape = ck.size2(shape, op)
            if shape is None:
                raise ValueError(f"{op}: shape is required")
            ck.csr_structure(crow, col, values, shape, op)
        self._init(crow, col, values, shape, sorted_cols, balanced)

    def _init(self, crow, col, values, shape, sorted_cols, balanced) -> None:
        self._crow, self._col = _freeze(crow), _freeze(col)
        self._values, self._shape = values, tuple(shape)
        self._sorted_cols = bool(sorted_cols)   # each row's columns strictly increasing
        self._balanced = balanced

    @classmethod
    def _make(cls, crow: Tensor, col: Tensor, values: Tensor, shape, sorted_cols=False,
              balanced=None) -> SparseCSR:
        """A matrix of parts this module made valid (nothing checked)."""
        self = cls.__new__(cls)
        self._init(crow, col, values, shape, sorted_cols, balanced)
        return self

    def __reduce__(self):
        """Pickles and copies rebuild through the checked constructor (as SparseCOO's)."""
        return (SparseCSR, (self._crow, self._col, self._values, self._shape))

    def crow_indices(self) -> Tensor:
        return self._crow

    def col_indices(self) -> Tensor:
        return self._col

    def _csr_parts(self):
        if self._balanced is None:
            self._balanced = _ops.skewed(self._crow)
        return self._crow, self._col, self._values, self._balanced

    def _rows(self) -> Tensor:
        return _ops.row_ids(self._crow, self.nnz)

    def _with_values(self, values: Tensor) -> SparseCSR:
        return SparseCSR._make(self._crow, self._col, values, self._shape, self._sorted_cols,
                               self._balanced)

    def _entries(self) -> tuple:
        return self._rows(), self._col

    def to_dense(self) -> Tensor:
        m, n = self._shape
        flat = pub("zeros")(m * n, dtype=self.dtype, device=self.device)
        flat = pub("index_add")(flat, 0, self._rows() * n + self._col, self._values)
        return flat.reshape((m, n))

    def to_sparse_coo(self) -> SparseCOO:
        idx = pub("stack")([self._rows(), self._col])
        if self._sorted_cols:
            return SparseCOO._make(idx, self._values, self._shape, True)
        return SparseCOO._make(idx, self._values, self._shape, False).coalesce()

    def to_sparse_csr(self) -> SparseCSR:
        return self

    def t(self) -> SparseCSR:
        crt, colt, perm, bal = _ops.transposed(self._crow, self._col, self._shape[1])
        # sorted, and unique when this matrix's entries are (a duplicate stays one)
        return SparseCSR._make(crt, colt, self._values[perm], self._shape[::-1],
                               self._sorted_cols, bal)

    def to_device(self, device) -> SparseCSR:
        device = _dev(device)
        if device == self.device:
            return self
        return SparseCSR._make(self._crow.to_device(device), self._col.to_device(device),
                               self._values.to_device(device), self._shape, self._sorted_cols)

    def detach(self) -> SparseCSR:
        return SparseCSR._make(self._crow, self._col, self._values.detach(), self._shape,
                               self._sorted_cols, self._balanced)

    def __repr__(self):
        return (f"SparseCSR(shape={self._shape}, nnz={self.nnz}, dtype={self.dtype.name}, "
                f"device={self.device})")


class SparseCSC(_Sparse):
    """A 2-D sparse matrix in compressed sparse column form: column j's entries are
    row[ccol[j]:ccol[j + 1]] with values[ccol[j]:ccol[j + 1]]. Held as the CSR matrix of its
    transpose (the same three arrays), so products and conversions are CSR's."""

    layout = "csc"

    def __init__(self, ccol, row, values, shape, *, check_invariants: bool = True):
        """The matrix of int64 ccol (n + 1,), row (nnz,) and values (nnz,), checked as
        sparse_csc_tensor checks them; check_invariants=False as SparseCSR's."""
        if check_invariants:
            self._init(sparse_csc_tensor(ccol, row, values, shape)._tr)
            return
        op = "SparseCSC"
        ck.trusted_parts(op, values, ccol, row)
        shape = ck.size2(shape, op)
        if shape is None:
            raise ValueError(f"{op}: shape is required")
        ck.csr_structure(ccol, row, values, shape[::-1], op, ck.CSC_NAMES)
        self._init(SparseCSR._make(ccol, row, values, shape[::-1]))

    def _init(self, tr: SparseCSR) -> None:
        self._tr, self._values, self._shape = tr, tr._values, tr._shape[::-1]

    @classmethod
    def _of(cls, tr: SparseCSR) -> SparseCSC:
        """The CSC matrix whose transpose is the CSR matrix tr."""
        self = cls.__new__(cls)
        self._init(tr)
        return self

    def __reduce__(self):
        """Pickles and copies rebuild through the checked constructor (as SparseCOO's)."""
        return (SparseCSC, (self._tr._crow, self._tr._col, self._values, self._shape))

    def ccol_indices(self) -> Tensor:
        return self._tr._crow

    def row_indices(self) -> Tensor:
        return self._tr._col

    def _csr_parts(self):
        return self._tr.t()._csr_parts()

    def _with_values(self, values: Tensor) -> SparseCSC:
        return SparseCSC._of(self._tr._with_values(values))

    def _entries(self) -> tuple:
        return self._tr._col, self._tr._rows()

    def to_dense(self) -> Tensor:
        m, n = self._shape
        rows, cols = self._entries()
        flat = pub("zeros")(m * n, dtype=self.dtype, device=self.device)
        return pub("index_add")(flat, 0, rows * n + cols, self._values).reshape((m, n))

    def to_sparse_coo(self) -> SparseCOO:
        return SparseCOO._make(pub("stack")(list(self._entries())), self._values, self._shape,
                               False).coalesce()

    def to_sparse_csr(self) -> SparseCSR:
        return self._tr.t() if self._tr._sorted_cols else self.to_sparse_coo().to_sparse_csr()

    def to_sparse_csc(self) -> SparseCSC:
        return self

    def t(self) -> SparseCSR:
        """The transpose, a CSR matrix of the same arrays (as PyTorch's CSC t())."""
        return self._tr

    def to_device(self, device) -> SparseCSC:
        return SparseCSC._of(self._tr.to_device(device))

    def detach(self) -> SparseCSC:
        return SparseCSC._of(self._tr.detach())

    def __repr__(self):
        return (f"SparseCSC(shape={self._shape}, nnz={self.nnz}, dtype={self.dtype.name}, "
                f"device={self.device})")


for _name in _elementwise.UNARY:   # A.abs(), A.sqrt(), ... (the functions keeping 0 at 0)
    setattr(_Sparse, _name, _elementwise.method(_name))
del _name


def _concat(a: SparseCOO, b: SparseCOO, op: str) -> SparseCOO:
    """a + b: the entries of both, concatenated (uncoalesced, as PyTorch's; how sparse
    gradients accumulate), in the promoted dtype."""
    if a.shape != b.shape or a.device != b.device:
        raise ValueError(f"{op}: sparse operands differ: {a.shape} on {a.device} and "
                         f"{b.shape} on {b.device}")
    d = dt.result_type(a._values, b._values)
    va = a._values if a.dtype is d else a._values.astype(d)
    vb = b._values if b.dtype is d else b._values.astype(d)
    idx = pub("concatenate")([a._indices, b._indices], axis=1)
    return SparseCOO._make(idx, pub("concatenate")([va, vb]), a._shape,
                           b.nnz == 0 and a._coalesced or a.nnz == 0 and b._coalesced)


is_sparse = ck.is_sparse


# ---------------------------------------------------------------- construction

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      check_invariants: bool = True, requires_grad: bool = False,
                      is_coalesced=None) -> SparseCOO:
    """A COO matrix of int64 indices (2, nnz) and values (nnz,); size inferred (max + 1) when
    None. The indices are copied when given as a Tensor (the matrix holds them read-only).
    check_invariants: check on the host that the indices fit (one read of them); with False
    nothing is checked and invalid indices are undefined behaviour (as in PyTorch: the kernels
    may read out of bounds), for indices known to be valid. requires_grad: a leaf matrix (its
    values a leaf; A.grad after backward). is_coalesced (PyTorch's): True claims sorted unique
    indices (checked unless check_invariants is False), False marks the matrix uncoalesced."""
    op = "sparse_coo_tensor"
    device = _dev(device) or (values.device if isinstance(values, Tensor) else None)
    values = ck.as_values(values, op, dtype, device, requires_grad)
    device = values.device
    indices = ck.as_index(indices, op, "indices", device)
    nnz = ck.coo_structure(indices, values, op)
    size = ck.size2(size, op)
    coalesced = nnz <= 1
    if check_invariants or size is None:
        size, coalesced = ck.coo_host(indices, size, op)
        if is_coalesced and not coalesced:
            raise ValueError(f"{op}: is_coalesced=True but the indices are not sorted row-major "
                             "without duplicates")
    if is_coalesced is not None:
        coalesced = bool(is_coalesced) and (coalesced or not check_invariants)
    return SparseCOO._make(indices, values, size, coalesced)


def _compressed(op: str, names, crow, col, values, size, dtype, device, check: bool,
                grad: bool) -> SparseCSR:
    """The CSR matrix of size (inferred when None) of these compressed indices (a CSC's: the
    CSR of its transpose, named as CSC's in the errors)."""
    device = _dev(device) or (values.device if isinstance(values, Tensor) else None)
    values = ck.as_values(values, op, dtype, device, grad)
    device = values.device
    crow = ck.as_index(crow, op, names[0], device)
    col = ck.as_index(col, op, names[1], device)
    if size is None:
        size = ck.infer_csr_size(crow, col, op, names)
    ck.csr_structure(crow, col, values, size, op, names)
    sorted_cols = ck.csr_host(crow, col, size, op, names) if check else False
    return SparseCSR._make(crow, col, values, size, sorted_cols)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      check_invariants: bool = True, requires_grad: bool = False) -> SparseCSR:
    """A CSR matrix: crow (m + 1,) from 0 non-decreasing to nnz, col (nnz,) in [0, n). The
    index tensors are copied when given as Tensors (the matrix holds them read-only).
    check_invariants: check them on the host (one read); with False nothing is checked and
    invalid indices are undefined behaviour (as in PyTorch: the kernels may read out of
    bounds), for indices known to be valid. size None: (len(crow) - 1, max(col) + 1), as
    PyTorch's; requires_grad as sparse_coo_tensor's."""
    op = "sparse_csr_tensor"
    return _compressed(op, ck.CSR_NAMES, crow_indices, col_indices, values, ck.size2(size, op),
                       dtype, device, check_invariants, requires_grad)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      check_invariants: bool = True, requires_grad: bool = False) -> SparseCSC:
    """A CSC matrix (m, n): ccol (n + 1,) from 0 non-decreasing to nnz, row (nnz,) in [0, m),
    column j's entries row[ccol[j]:ccol[j + 1]]; checked and copied as sparse_csr_tensor's."""
    op = "sparse_csc_tensor"
    size = ck.size2(size, op)
    return SparseCSC._of(_compressed(op, ck.CSC_NAMES, ccol_indices, row_indices, values,
                                     None if size is None else size[::-1], dtype, device,
                                     check_invariants, requires_grad))


def from_dense(x: Tensor, layout: str = "coo"):
    """The nonzero entries of the 2-D x as a COO (coalesced), CSR or CSC matrix; the values
    are taken from x differentiably."""
    if not isinstance(x, Tensor) or x.ndim != 2:
        raise ValueError("from_dense: expects a 2-D Tensor, got "
                         f"{getattr(x, 'shape', type(x).__name__)}")
    if layout not in ("coo", "csr", "csc"):
        raise ValueError(f"from_dense: layout must be 'coo', 'csr' or 'csc', got {layout!r}")
    r, c = pub("nonzero")(x)
    coo = SparseCOO._make(pub("stack")([r, c]), x[r, c], x.shape, True)
    return coo if layout == "coo" else getattr(coo, "to_sparse_" + layout)()
