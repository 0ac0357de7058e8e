"""Fixes from the bug hunt of fft / products / sparse / segment (findings 1, 4, 5, 7):

- sparse matrices copy a caller's index tensor and hold their index tensors read-only, so a
  later write cannot reach the kernels (it made SpMM / SDDMM read out of bounds);
- scatter_reduce with an empty index stays on the autograd graph (both modes);
- coalesce and the coalesced / sorted-column checks compare (row, col) pairs without the
  int64 key row * ncols + col, which overflowed for rows * cols > 2**63;
- small input checks and messages: fftshift axes as a NumPy integer, ihfft's errors, integer n
  in the fft functions, fftfreq's dtype, fftn(axes=()), T.matmul with a sparse operand, inner's
  and einsum's errors, tensordot's 0-d tensor axes, segment ops' num_segments and uint64 ids.

Every check runs without SciPy or PyTorch (NumPy references); comparisons with them are
guarded with pytest.importorskip.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

SP = T.sparse
BIG = (8, 2 ** 62)   # rows * cols = 2**65: the old int64 keys row * 2**62 + col wrapped


# ---------------------------------------------------------------- 1: index tensors copied

def test_coo_copies_the_callers_index_tensor():
    idx = T.asarray([[0, 1], [0, 1]])
    A = SP.sparse_coo_tensor(idx, T.asarray([1.0, 2.0]), (2, 2))
    assert A.indices() is not idx and not np.shares_memory(A.indices().numpy(), idx.numpy())
    idx[1, 1] = 10 ** 8                      # the caller reuses its buffer
    assert A.indices().tolist() == [[0, 1], [0, 1]]
    assert (A @ T.ones((2, 2), dtype=T.float64)).tolist() == [[1.0, 1.0], [2.0, 2.0]]
    S = SP.sampled_addmm(A, T.ones((2, 3), dtype=T.float64), T.ones((3, 2), dtype=T.float64))
    assert S.values().tolist() == [4.0, 5.0]


def test_csr_copies_the_callers_index_tensors():
    crow, col = T.asarray([0, 1, 2]), T.asarray([1, 0])
    A = SP.sparse_csr_tensor(crow, col, T.asarray([3.0, 4.0]), (2, 2))
    assert A.crow_indices() is not crow and A.col_indices() is not col
    col[0], crow[1] = 10 ** 8, 10 ** 5
    assert A.col_indices().tolist() == [1, 0] and A.crow_indices().tolist() == [0, 1, 2]
    x = T.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert (A @ x).tolist() == [[9.0, 12.0], [4.0, 8.0]]
    assert (A.t() @ x).tolist() == [[12.0, 16.0], [3.0, 6.0]]


def test_copied_without_checks_too():
    """check_invariants=False skips the host read, not the copy."""
    idx = T.asarray([[0, 1], [1, 0]])
    A = SP.sparse_coo_tensor(idx, T.asarray([1.0, 2.0]), (2, 2), check_invariants=False)
    idx[0, 0] = 10 ** 8
    assert (A @ T.asarray([1.0, 10.0])).tolist() == [10.0, 2.0]
    for f in (SP.sparse_coo_tensor, SP.sparse_csr_tensor):
        assert "undefined behaviour" in f.__doc__


def test_index_tensors_of_a_matrix_are_read_only():
    A = SP.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], [1.0, 2.0, 3.0], (2, 2))
    C = A.to_sparse_csr()
    held = [A.indices(), A.indices()[1], A.t().indices(), C.crow_indices(), C.col_indices(),
            C.t().col_indices(), C.t().crow_indices(), A.coalesce().indices()]
    for t in held:
        assert not t.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            t[0] = 5
    # the cached transposed pattern is intact: A^T @ x as the dense product
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    dense = np.array([[0.0, 1.0], [2.0, 3.0]])
    assert np.allclose((C.t() @ T.asarray(x)).numpy(), dense.T @ x)
    assert np.allclose((C.t() @ T.asarray(x)).numpy(), dense.T @ x)
    # a copy of them is the caller's to change
    c = A.indices().copy()
    c[0, 0] = 1
    assert c.tolist() == [[1, 1, 1], [1, 0, 1]] and A.indices().tolist() == [[0, 1, 1], [1, 0, 1]]


def test_to_scipy_gives_copies():
    pytest.importorskip("scipy")
    A = SP.sparse_coo_tensor([[1, 0], [0, 1]], [1.0, 2.0], (2, 2)).to_sparse_csr()
    s = SP.to_scipy(A)
    s.indices[0] = 0                          # scipy's arrays are its own
    assert A.col_indices().tolist() == [1, 0]


# ---------------------------------------------------------------- 4: scatter_reduce, empty index

def test_scatter_reduce_empty_index_keeps_the_graph():
    x = T.asarray([1.0, 2.0, 3.0]).requires_grad_()
    empty, src = T.zeros(0, dtype=T.int64), T.zeros(0, dtype=T.float64)
    y = T.scatter_reduce(x, 0, empty, src, "sum")
    assert y.requires_grad and y.tolist() == [1.0, 2.0, 3.0]
    (y * 2 + x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    y.detach()[0] = 9.0                       # a copy, not x
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_scatter_reduce_empty_index_forward_mode():
    empty, src = T.zeros(0, dtype=T.int64), T.zeros(0, dtype=T.float64)
    _, tan = autograd.jvp(lambda x: T.scatter_reduce(x, 0, empty, src, "amax") * 3,
                          (T.asarray([1.0, 2.0]),), (T.asarray([0.5, -1.0]),))
    assert tan.tolist() == [1.5, -3.0]


# ---------------------------------------------------------------- 5: no int64 key overflow

def test_coalesce_huge_shape_keeps_distinct_entries():
    C = SP.sparse_coo_tensor([[4, 0, 4], [7, 0, 7]], [1.0, 2.0, 3.0], BIG).coalesce()
    assert C.indices().tolist() == [[0, 4], [0, 7]] and C.values().tolist() == [2.0, 4.0]
    D = SP.sparse_coo_tensor([[4, 0], [0, 0]], [1.0, 2.0], BIG).coalesce()   # key 2**64 == 0
    assert D.indices().tolist() == [[0, 4], [0, 0]] and D.values().tolist() == [2.0, 1.0]
    assert C.is_coalesced() and C.shape == BIG


def test_coalesce_huge_shape_gradient():
    v = T.asarray([1.0, 2.0, 3.0]).requires_grad_()
    C = SP.sparse_coo_tensor([[5, 0, 5], [2 ** 61, 0, 2 ** 61]], v, BIG).coalesce()
    (C.values() * T.asarray([10.0, 100.0])).sum().backward()
    assert v.grad.tolist() == [100.0, 10.0, 100.0]


def test_coalesced_check_huge_shape():
    A = SP.sparse_coo_tensor([[4, 0], [0, 5]], [1.0, 2.0], BIG)
    assert not A.is_coalesced()
    R = A.to_sparse_csr()
    assert R.col_indices().tolist() == [5, 0] and R.values().tolist() == [2.0, 1.0]
    assert SP.sparse_coo_tensor([[0, 4], [5, 0]], [1.0, 2.0], BIG).is_coalesced()


def test_csr_sorted_columns_huge_shape():
    """Rows 0 and 2 of a (4, 2**62) CSR: row 2's key 2 * 2**62 wrapped below row 0's."""
    A = SP.sparse_csr_tensor([0, 1, 1, 2, 2], [5, 0], [1.0, 2.0], (4, 2 ** 62))
    coo = A.to_sparse_coo()
    assert coo.is_coalesced()
    assert coo.indices().tolist() == [[0, 2], [5, 0]] and coo.values().tolist() == [1.0, 2.0]
    B = SP.sparse_csr_tensor([0, 2, 2, 2, 2], [7, 3], [1.0, 2.0], (4, 2 ** 62))
    coo = B.to_sparse_coo()                   # unsorted columns: coalesced on the way
    assert coo.indices().tolist() == [[0, 0], [3, 7]] and coo.values().tolist() == [2.0, 1.0]


def test_coalesce_small_against_dense():
    rng = np.random.default_rng(0)
    r, c = rng.integers(0, 5, 40), rng.integers(0, 7, 40)
    v = rng.standard_normal(40)
    C = SP.sparse_coo_tensor(np.stack([r, c]), v, (5, 7)).coalesce()
    dense = np.zeros((5, 7))
    np.add.at(dense, (r, c), v)
    keys = sorted(set(zip(r.tolist(), c.tolist())))
    assert C.indices().numpy().T.tolist() == [list(k) for k in keys]
    assert np.allclose(C.to_dense().numpy(), dense)
    empty = SP.sparse_coo_tensor(T.zeros((2, 0), dtype=T.int64), T.zeros(0), (3, 3)).t()
    assert empty.coalesce().nnz == 0 and empty.coalesce().is_coalesced()


# ---------------------------------------------------------------- 7: fft inputs and messages

def test_fftshift_numpy_integer_axes():
    a = np.arange(12.0).reshape(3, 4)
    for f, ref in ((T.fft.fftshift, np.fft.fftshift), (T.fft.ifftshift, np.fft.ifftshift)):
        assert f(T.asarray(a), axes=np.int64(0)).tolist() == ref(a, axes=0).tolist()
        assert f(T.asarray(a), axes=np.int32(-1)).tolist() == ref(a, axes=-1).tolist()


def test_ihfft_names_itself():
    with pytest.raises(TypeError, match=r"^ihfft: expects a real input"):
        T.fft.ihfft(T.asarray([1j, 2.0]))
    with pytest.raises(TypeError, match=r"^ihfft: the number of data points"):
        T.fft.ihfft(T.asarray([1.0, 2.0]), n=2.0)
    x = np.array([1.0, 2.0, 4.0, -1.0])
    assert np.allclose(T.fft.ihfft(T.asarray(x)).numpy(), np.fft.ihfft(x))


@pytest.mark.parametrize("n", [True, 4.0, "4"])
def test_fft_n_must_be_an_integer(n):
    x = T.asarray([1.0, 2.0, 3.0])
    for f in (T.fft.fft, T.fft.ifft, T.fft.rfft, T.fft.irfft, T.fft.hfft):
        with pytest.raises(TypeError, match=f"^{f.__name__}: the number of data points"):
            f(x, n=n)
    for f in (T.fft.fftfreq, T.fft.rfftfreq):
        with pytest.raises(TypeError, match=f"^{f.__name__}:"):
            f(n)
    assert np.allclose(T.fft.fft(x, n=np.int64(4)).numpy(), np.fft.fft([1.0, 2.0, 3.0], 4))


def test_fftfreq_dtype():
    for f in (T.fft.fftfreq, T.fft.rfftfreq):
        for d in ("int64", T.int32, T.complex64, T.bool_):
            with pytest.raises(TypeError, match=f"^{f.__name__}: dtype must be a floating"):
                f(4, dtype=d)
    y = T.fft.fftfreq(4, dtype=T.float32)
    assert y.dtype is T.float32 and y.tolist() == [0.0, 0.25, -0.5, -0.25]
    assert T.fft.rfftfreq(np.int64(4), 0.5).tolist() == [0.0, 0.5, 1.0]


def test_fftn_empty_axes_returns_x():
    x = T.asarray(np.arange(6.0).reshape(2, 3))
    for f in (T.fft.fftn, T.fft.ifftn, T.fft.fft2, T.fft.ifft2):
        y = f(x, axes=())
        assert y is x and y.dtype is T.float64
    with pytest.raises(ValueError, match="norm"):
        T.fft.fftn(x, axes=(), norm="bad")
    for f in (T.fft.rfftn, T.fft.irfftn):
        with pytest.raises(ValueError, match=f"^{f.__name__}: needs at least one axis"):
            f(x, axes=())


# ---------------------------------------------------------------- 7: products, einsum

def test_matmul_with_a_sparse_operand():
    A = SP.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    d = np.array([[0.0, 1.0], [2.0, 0.0]])
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert T.matmul(A, T.asarray(x)).tolist() == (d @ x).tolist()
    assert T.matmul(T.asarray(x), A.to_sparse_csr()).tolist() == (x @ d).tolist()
    assert T.matmul(A, T.asarray([1.0, 3.0])).tolist() == [3.0, 2.0]
    out = T.zeros((2, 2), dtype=T.float64)
    assert T.matmul(A, T.asarray(x), out=out) is out and out.tolist() == (d @ x).tolist()


def test_matmul_sparse_gradients():
    v = T.asarray([1.0, 2.0]).requires_grad_()
    A = SP.sparse_coo_tensor([[0, 1], [1, 0]], v, (2, 2))
    T.matmul(A, T.asarray([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert v.grad.tolist() == [7.0, 3.0]
    B = T.ones((2, 2), dtype=T.float64).requires_grad_()
    with pytest.raises(TypeError, match=r"^matmul: out= does not support automatic diff"):
        T.matmul(A, B, out=T.zeros((2, 2), dtype=T.float64))
    (A @ B).sum().backward()                  # the operator is differentiable in both
    assert B.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]
    # T.matmul too (it had refused a dense operand needing a gradient), either side, and in
    # forward mode
    B.grad = None
    T.matmul(A, B).sum().backward()
    assert B.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]
    C = T.ones((3, 2), dtype=T.float64).requires_grad_()
    T.matmul(C, A.to_sparse_csr()).sum().backward()
    assert C.grad.tolist() == [[1.0, 2.0]] * 3
    _, tan = autograd.jvp(lambda x: T.matmul(A, x), (T.ones((2, 2), dtype=T.float64),),
                          (T.asarray([[1.0, 0.0], [0.0, 1.0]]),))
    assert tan.tolist() == [[0.0, 1.0], [2.0, 0.0]]


def test_inner_names_itself():
    with pytest.raises(ValueError, match=r"^inner: shapes \(2,\) and \(3,\)"):
        T.inner(T.ones(2), T.ones(3))
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    assert T.inner(T.asarray(a), T.asarray(b)).tolist() == np.inner(a, b).tolist()


def test_einsum_bad_operand_names_einsum():
    with pytest.raises(TypeError, match=r"^einsum: operand 0 is None"):
        T.einsum("ij", None)
    with pytest.raises(TypeError, match=r"^einsum: operand 1 is not a Tensor"):
        T.einsum("i,i", T.ones(2), object())
    assert T.einsum("i,i", T.asarray([1.0, 2.0]), [3.0, 4.0]).item() == 11.0


def test_tensordot_tensor_axes():
    a, b = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)
    ref = np.tensordot(a, b, axes=1)
    for axes in (T.asarray(1), np.int64(1), T.asarray([[1], [0]]), np.array([[1], [0]])):
        assert T.tensordot(T.asarray(a), T.asarray(b), axes=axes).tolist() == ref.tolist()
    with pytest.raises(TypeError, match="^tensordot: axes must be an integer"):
        T.tensordot(T.asarray(a), T.asarray(b), axes=T.asarray(1.0))


def test_tensordot_matches_torch_with_tensor_dims():
    torch = pytest.importorskip("torch")
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(3, 4)
    ref = torch.tensordot(torch.tensor(a), torch.tensor(b), dims=torch.tensor(2)).numpy()
    assert np.allclose(T.tensordot(T.asarray(a), T.asarray(b), axes=T.asarray(2)).numpy(), ref)


# ---------------------------------------------------------------- 7: segment ops

@pytest.mark.parametrize("k", [True, False, 2.0, "2"])
def test_num_segments_must_be_an_integer(k):
    with pytest.raises(TypeError, match="^segment_sum: num_segments must be an integer"):
        T.segment_sum(T.ones(2), T.asarray([0, 0]), num_segments=k)


def test_num_segments_integers():
    data, ids = T.asarray([1.0, 2.0]), T.asarray([0, 2])
    for k in (3, np.int64(3), T.asarray(3)):
        assert T.segment_sum(data, ids, num_segments=k).tolist() == [1.0, 0.0, 2.0]
    with pytest.raises(ValueError, match="non-negative"):
        T.segment_sum(data, ids, num_segments=-1)


def test_uint64_ids_past_int64():
    big = 2 ** 63
    for ids in ([big], [0, big], [big + 5, 2 ** 64 - 1]):
        u = T.asarray(np.array(ids, dtype=np.uint64))
        with pytest.raises(IndexError, match=f"segment_max: segment id {max(ids)} is out of"):
            T.segment_max(T.ones(len(ids)), u)
    with pytest.raises(IndexError, match=f"segment id {big} is out of bounds with size 4"):
        T.segment_sum(T.ones(1), T.asarray(np.array([big], dtype=np.uint64)), num_segments=4)
    ok = T.asarray(np.array([0, 2, 2], dtype=np.uint64))
    assert T.segment_sum(T.asarray([1.0, 2.0, 3.0]), ok).tolist() == [1.0, 0.0, 5.0]
