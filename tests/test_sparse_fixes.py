"""Fixes from bug hunt 6 (sparse): the ways an index could still reach the kernels unchecked
(pickles and copies, the SparseCOO / SparseCSR classes called directly), a transposed CSR with
duplicate entries that claimed to be coalesced, dtypes the constructors dropped, and small
argument checks. NumPy references; PyTorch comparisons guarded with importorskip."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import autograd
import tensor as T

S = T.sparse
pytestmark = pytest.mark.usefixtures("device")


def _dense(rows, cols, vals, shape):
    vals = np.asarray(vals)
    d = np.zeros(shape, dtype=np.result_type(vals.dtype, np.float64))
    np.add.at(d, (np.asarray(rows), np.asarray(cols)), vals)
    return d


class _Payload:
    """Pickles as a SparseCOO of the given parts (what a corrupted or hostile pickle holds)."""

    def __init__(self, *args):
        self.args = args

    def __reduce__(self):
        return (S.SparseCOO, self.args)


# ---------------------------------------------------------------- pickles and copies

def test_pickles_and_copies_rebuild_checked_matrices():
    # caught: an unpickled matrix's index tensor was writable and never checked, so a write
    # (or a corrupted pickle) sent an index of 10**9 to SpMM (SIGSEGV)
    r, c, v = [1, 0, 1], [0, 2, 0], [1.0, 2.0, 3.0]
    vals = T.tensor(v, requires_grad=True)
    A = S.sparse_coo_tensor([r, c], vals, (3, 3))
    B = T.asarray(np.arange(6.0).reshape(3, 2))
    A @ B   # fills the pattern cache, which must not travel
    want = _dense(r, c, v, (3, 3))
    for M in (A, A.to_sparse_csr()):
        for K in (pickle.loads(pickle.dumps(M)), copy.deepcopy(M), copy.copy(M)):
            assert type(K) is type(M) and K.shape == (3, 3) and K.device == M.device
            np.testing.assert_array_equal(K.to_dense().detach().numpy(), want)
            np.testing.assert_array_equal((K @ B).detach().numpy(), want @ B.numpy())
            idx = K.indices() if K.layout == "coo" else K.col_indices()
            with pytest.raises(ValueError, match="read-only"):
                idx[0] = 10 ** 9
    assert pickle.loads(pickle.dumps(A)).requires_grad   # a leaf's values keep it
    assert pickle.loads(pickle.dumps(A.coalesce())).is_coalesced()
    bad = pickle.dumps(_Payload(T.asarray([[0, 1], [10 ** 9, 0]]), T.asarray([1.0, 2.0]), (3, 3)))
    with pytest.raises(IndexError, match="out of range"):
        pickle.loads(bad)


# ---------------------------------------------------------------- the classes' own checks

def test_classes_check_their_arguments():
    # caught: SparseCOO / SparseCSR (public, in __all__) took anything: an index of 10**9
    # reached SpMM (SIGSEGV), int32 indices were read as int64, and the caller's index tensor
    # was frozen read-only
    B = T.ones((3, 2), dtype=T.float64)
    vals = T.asarray([1.0, 2.0])
    with pytest.raises(IndexError, match="out of range"):
        S.SparseCOO(T.asarray([[0, 1], [10 ** 9, 0]]), vals, (3, 3))
    with pytest.raises(ValueError, match="nnz|values"):
        S.SparseCOO(T.asarray([[0, 1, 2], [0, 0, 0]]), vals, (3, 3))
    with pytest.raises(IndexError, match="column index 7"):
        S.SparseCSR(T.asarray([0, 1, 2, 2]), T.asarray([0, 7]), vals, (3, 3))
    with pytest.raises(ValueError, match="non-decreasing"):
        S.SparseCSR(T.asarray([0, 2, 1, 2]), T.asarray([0, 1]), vals, (3, 3))
    with pytest.raises(ValueError, match="coalesced=True"):
        S.SparseCOO(T.asarray([[1, 0], [0, 0]]), vals, (3, 3), True)
    idx = T.asarray(np.array([[0, 1], [1, 0]], np.int32))
    A = S.SparseCOO(idx, vals, (3, 3))
    idx[0, 0] = 2   # the caller's tensor stays its own (writable)
    assert A.indices().dtype is T.int64 and A.indices().tolist() == [[0, 1], [1, 0]]
    np.testing.assert_array_equal((A @ B).numpy(), _dense([0, 1], [1, 0], [1, 2], (3, 3)) @ B.numpy())
    assert A.is_coalesced()   # found sorted, as sparse_coo_tensor finds it
    assert not S.SparseCOO(T.asarray([[1, 0], [0, 1]]), vals, (3, 3)).is_coalesced()
    R = S.SparseCSR(T.asarray(np.array([0, 1, 2, 2], np.int32)), T.asarray([2, 0]), vals, (3, 3))
    np.testing.assert_array_equal((R @ B).numpy(), _dense([0, 1], [2, 0], [1, 2], (3, 3)) @ B.numpy())
    # check_invariants=False trusts the indices but still checks dtypes and shapes
    with pytest.raises(TypeError, match="int64"):
        S.SparseCOO(idx, vals, (3, 3), check_invariants=False)
    with pytest.raises(ValueError, match="index pairs"):
        S.SparseCOO(T.asarray([[0], [0]]), vals, (3, 3), check_invariants=False)
    with pytest.raises(ValueError, match="crow_indices"):
        S.SparseCSR(T.asarray([0, 2]), T.asarray([0, 1]), vals, (3, 3), check_invariants=False)
    ok = S.SparseCOO(T.asarray([[0, 2], [1, 1]]), vals, (3, 3), check_invariants=False)
    np.testing.assert_array_equal(ok.to_dense().numpy(), _dense([0, 2], [1, 1], [1, 2], (3, 3)))


# ---------------------------------------------------------------- duplicates through t()

def test_csr_transpose_with_duplicates_is_not_coalesced():
    # caught: SparseCSR.t() claimed sorted unique columns, so the COO form of a transposed CSR
    # holding a duplicate said is_coalesced() and coalesce() left the duplicate unsummed
    R = S.sparse_csr_tensor([0, 2, 3], [1, 1, 0], [1.0, 2.0, 5.0], (2, 3))   # (0, 1) twice
    C = R.t().to_sparse_coo()
    want = _dense([1, 1, 0], [0, 0, 1], [1.0, 2.0, 5.0], (3, 2))
    for K in (C, C.coalesce()):   # old: indices [[0, 1, 1], [1, 0, 0]], values [5, 1, 2]
        assert K.indices().tolist() == [[0, 1], [1, 0]] and K.values().tolist() == [5.0, 3.0]
        np.testing.assert_array_equal(K.to_dense().numpy(), want)
    np.testing.assert_array_equal(R.t().to_dense().numpy(), want)
    # a CSR without duplicates still transposes to a coalesced one (no needless coalesce)
    U = S.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 2.0, 5.0], (2, 3)).t().to_sparse_coo()
    assert U.is_coalesced() and U.indices().tolist() == [[0, 1, 2], [0, 1, 0]]


# ---------------------------------------------------------------- dtypes

def test_constructors_keep_integer_and_bool_dtypes():
    # caught: an explicit dtype=int64 / bool (and an integer values Tensor) came back float64,
    # while to_sparse() kept them and PyTorch keeps them
    A = S.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1, 2, 5], dtype=T.int64)
    assert A.dtype is T.int64
    assert A.coalesce().values().tolist() == [3, 5]
    np.testing.assert_array_equal(A.to_dense().numpy(), np.array([[0, 3], [5, 0]]))
    assert S.sparse_coo_tensor([[0], [1]], T.asarray([4], dtype=T.int32)).dtype is T.int32
    Bm = S.sparse_csr_tensor([0, 1, 2], [1, 0], [True, True], (2, 2), dtype=T.bool_)
    assert Bm.dtype is T.bool_ and Bm.to_dense().tolist() == [[False, True], [True, False]]
    # integer literals without dtype= still read as float64 (the matrix multiplies floats)
    assert S.sparse_coo_tensor([[0], [1]], [3]).dtype is T.float64
    with pytest.raises(TypeError, match="mm: sparse products take .* got int64"):
        A @ T.ones((2, 2), dtype=T.int64)
    sps = pytest.importorskip("scipy.sparse")
    m = sps.csr_matrix(np.array([[0, 3], [5, 0]], np.int32))
    for M in (S.from_scipy(m), S.from_scipy(m.tocoo())):   # old: float64
        assert M.dtype is T.int32
        np.testing.assert_array_equal(M.to_dense().numpy(), m.toarray())
    assert S.to_scipy(S.from_scipy(m)).dtype == np.int32
    torch = pytest.importorskip("torch")
    t = torch.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1, 2, 5], check_invariants=True).coalesce()
    assert str(t.dtype) == "torch.int64"
    np.testing.assert_array_equal(A.coalesce().values().numpy(), t.values().numpy())


# ---------------------------------------------------------------- products in more dtypes

@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float16", "bfloat16"])
def test_products_in_complex_and_half_dtypes(dtype):
    # caught: mm / @ / sampled_addmm refused these dtypes (TypeError) while the matrices could be
    # made in them; PyTorch multiplies COO matrices of all four
    d = getattr(T, dtype)
    wide = T.complex128 if d.kind == "c" else T.float64
    rng = np.random.default_rng(0)
    r, c = np.array([0, 2, 2, 1, 0]), np.array([1, 0, 0, 3, 1])
    cx = d.kind == "c"
    v = rng.standard_normal(5) + (1j * rng.standard_normal(5) if cx else 0)
    b = rng.standard_normal((4, 3)) + (1j * rng.standard_normal((4, 3)) if cx else 0)
    x, y = rng.standard_normal((3, 2)), rng.standard_normal((2, 4))

    def held(a):   # a as the dtype holds it, widened for the NumPy reference
        return T.asarray(a).astype(d).astype(wide).numpy()
    D = _dense(r, c, held(v), (3, 4))
    tol = {"complex128": 1e-12, "complex64": 1e-5, "float16": 1e-2, "bfloat16": 5e-2}[dtype]
    A = S.sparse_coo_tensor([r, c], T.asarray(v).astype(d), (3, 4))
    B = T.asarray(b).astype(d)
    for M in (A, A.to_sparse_csr()):
        for got, want in ((M @ B, D @ held(b)), (M @ B[:, 0], D @ held(b)[:, 0]),
                          (B.mT[:, :3] @ M, held(b).T[:, :3] @ D)):
            assert got.dtype is d
            np.testing.assert_allclose(got.astype(wide).numpy(), want, rtol=tol, atol=tol)
        out = S.sampled_addmm(M, T.asarray(x).astype(d), T.asarray(y).astype(d), beta=0.5, alpha=2.0)
        mask = _dense(r, c, np.ones(5), (3, 4)) != 0
        assert out.dtype is d
        np.testing.assert_allclose(out.to_dense().astype(wide).numpy(),
                                   np.where(mask, 0.5 * D + 2.0 * (held(x) @ held(y)), 0),
                                   rtol=4 * tol, atol=4 * tol)
    if dtype == "complex128":   # gradients (both operands) against central differences
        vals = T.tensor(v, requires_grad=True)
        bb = T.tensor(b, requires_grad=True)
        xa = T.tensor(x + 1j * rng.standard_normal((3, 2)), requires_grad=True)
        ya = T.tensor(y + 1j * rng.standard_normal((2, 4)), requires_grad=True)
        assert autograd.gradcheck(lambda w, q: S.sparse_coo_tensor([r, c], w, (3, 4)) @ q,
                                  (vals, bb))
        assert autograd.gradcheck(lambda w, p, q: S.sampled_addmm(
            S.sparse_coo_tensor([r, c], w, (3, 4)), p, q, beta=0.3, alpha=1.5).values(),
            (vals, xa, ya))


# ---------------------------------------------------------------- small checks

def test_size_index_and_conversion_errors(device):
    # caught: a float size was truncated, a size past int64 accepted, a uint64 index past
    # int64 reported as a negative one, np.asarray gave a 0-d object array, and a CUDA matrix
    # times a CPU dense tensor failed inside indexing
    with pytest.raises(TypeError, match="sparse_coo_tensor: size must be 2 integers"):
        S.sparse_coo_tensor([[0], [1]], [1.0], (2.5, 3))
    with pytest.raises(ValueError, match="does not fit int64"):
        S.sparse_csr_tensor([0, 1], [0], [1.0], (1, 2 ** 64))
    with pytest.raises(IndexError, match="9223372036854775813 does not fit int64"):
        S.sparse_coo_tensor(np.array([[2 ** 63 + 5], [0]], np.uint64), [1.0])
    with pytest.raises(IndexError, match="does not fit int64"):
        S.sparse_coo_tensor(T.asarray(np.array([[2 ** 63 + 5], [0]], np.uint64)), [1.0])
    assert S.sparse_coo_tensor(np.array([[1], [2]], np.uint64), [1.0]).shape == (2, 3)
    assert S.sparse_coo_tensor([[0], [1]], [1.0], (np.int64(2), T.asarray(3))).shape == (2, 3)
    A = S.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0])
    with pytest.raises(TypeError, match="to_dense"):
        np.asarray(A)
    with pytest.raises(TypeError):
        np.ones((2, 2)) * A
    if device != "cpu":
        with pytest.raises(ValueError, match="multiply: the sparse matrix is on cuda"):
            A * T.ones((2, 2), dtype=T.float64, device="cpu")
    np.testing.assert_array_equal((A * T.asarray([[1.0, 3.0], [5.0, 7.0]])).to_dense().numpy(),
                                  np.array([[0.0, 3.0], [10.0, 0.0]]))


def test_transpose_aliases():
    # caught: A.T / A.mT / A.transpose(0, 1) (PyTorch's spellings) raised AttributeError
    r, c, v = [0, 2], [1, 0], [1.0, 2.0]
    want = _dense(r, c, v, (3, 2)).T
    for A in (S.sparse_coo_tensor([r, c], v, (3, 2)), S.sparse_csr_tensor([0, 1, 1, 2], [1, 0], v, (3, 2))):
        for B in (A.T, A.mT, A.transpose(0, 1), A.transpose(-1, 0)):
            assert B.layout == A.layout and B.shape == (2, 3)
            np.testing.assert_array_equal(B.to_dense().numpy(), want)
        assert A.transpose(1, -1) is A
        with pytest.raises(Exception, match="transpose: axis 2"):
            A.transpose(0, 2)
