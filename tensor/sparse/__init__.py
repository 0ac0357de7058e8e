"""tensor.sparse: 2-D sparse matrices in COO, CSR and CSC form on both devices, conversions, and
sparse @ dense (SpMM / SpMV) and SDDMM with our own kernels (family "sparse":
tensor/cpu/csrc/sparse.h, cuda_src/sparse.cuh), differentiable with respect to the values
(keeping the pattern) and the dense operands, in both modes.

>>> import tensor as T
>>> A = T.sparse.sparse_coo_tensor(T.asarray([[0, 1, 1], [2, 0, 0]]), T.asarray([1.0, 2.0, 3.0]), (2, 3))
>>> A.coalesce().values().tolist()          # duplicates (1, 0) summed
[1.0, 5.0]
>>> (A @ T.ones(3, dtype=T.float64)).tolist()
[1.0, 5.0]
>>> T.sparse.softmax(A, 1).values().tolist()   # over each row's stored entries
[1.0, 1.0]
>>> T.sparse.sum(A, 0).tolist()                 # a dense vector (PyTorch: a sparse one)
[5.0, 0.0, 1.0]

Values are 1-D (one scalar per stored entry), of any dtype (a values Tensor keeps its own,
dtype= is honoured; Python / NumPy integer or bool data without dtype= reads as float64);
indices int64. The index structure of a matrix is checked on the host when it is made
(check_invariants=True; also by the SparseCOO / SparseCSR classes, and again when a pickle or
a copy is rebuilt), so a bad index raises naming the op before any kernel runs; matrices are
immutable (ops return new ones): a caller's index tensor is copied when it is made, and the
index tensors a matrix holds are read-only, so what was checked is what the kernels read.
With check_invariants=False nothing is checked: invalid indices are then undefined behaviour
(the kernels may read out of bounds), as in PyTorch. A COO matrix multiplies through a CSR
form of its pattern (a stable argsort by row, cached; duplicates are summed by the kernel in
their original order). The kernels take float32 and float64; float16 / bfloat16 products are
computed in float32 and complex ones from their real parts (tensor/sparse/_dtypes.py);
integer and bool matrices have no product.

A CSC matrix (sparse_csc_tensor, to_sparse_csc(), SparseCSC) is held as the CSR matrix of its
transpose. torch.sparse's softmax, log_softmax, sum, addmm and spdiags, and x.sparse_mask(A),
are composed from the recorded ops (tensor/sparse/_funcs.py), so they run on both devices and
are differentiable in the values. So are A * B of two sparse matrices (the entries both store,
as PyTorch's), A.index_select(dim, index) (a matrix of A's layout) and A.select(dim, index) (a
dense vector; PyTorch's is a 1-D sparse tensor): tensor/sparse/_select.py; and A @ B of two
sparse matrices (a sparse result of A's layout: tensor/sparse/_products.py), and the functions
that keep 0 at 0, A.abs(), A.sqrt(), A.sin(), ..., A ** p for p > 0, of the entries with their
duplicates summed (tensor/sparse/_elementwise.py). A bool matrix's duplicate entries are one
True (to_dense, coalesce and the sums OR them).

The constructors take PyTorch's requires_grad=True: the matrix is then a leaf (its values a
leaf tensor), and backward fills A.grad, a matrix of A's pattern and layout (PyTorch gives a
CSR / CSC leaf a dense gradient; its values at the stored entries are the same).
"""
from ._funcs import addmm, log_softmax, softmax, sparse_mask, spdiags, sum  # noqa: A004
from ._matrix import (
    SparseCOO,
    SparseCSC,
    SparseCSR,
    from_dense,
    is_sparse,
    mm,
    sampled_addmm,
    sparse_coo_tensor,
    sparse_csc_tensor,
    sparse_csr_tensor,
)
from ._scipy_io import from_scipy, to_scipy

for _c in (SparseCOO, SparseCSR, SparseCSC):
    _c.__module__ = __name__   # tensor.sparse.SparseCOO in reprs, docs and pickles
del _c

__all__ = ["SparseCOO", "SparseCSR", "SparseCSC", "sparse_coo_tensor", "sparse_csr_tensor",
           "sparse_csc_tensor", "from_dense", "from_scipy", "to_scipy", "mm", "sampled_addmm",
           "is_sparse", "softmax", "log_softmax", "sum", "addmm", "spdiags", "sparse_mask"]
