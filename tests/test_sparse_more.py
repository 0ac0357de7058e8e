"""torch.sparse's functions over tensor.sparse matrices (hunt 9): softmax / log_softmax over the
stored entries, sum, addmm, spdiags, x.sparse_mask / to_sparse_coo / to_sparse_csc, and the CSC
layout (sparse_csc_tensor, SparseCSC). Every test fails on the code before (the names did not
exist). NumPy references; PyTorch / SciPy comparisons guarded with importorskip."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import autograd
import tensor as T

S = T.sparse
pytestmark = pytest.mark.usefixtures("device")

# duplicates ((1, 0) twice, (0, 2) twice), an empty row (3) and an empty column (3)
IDX = np.array([[0, 1, 1, 0, 2, 2, 1], [2, 0, 0, 2, 1, 0, 1]])
VAL = np.array([0.5, -1.0, 2.0, 1.5, 0.25, -0.75, 3.0])
SHAPE = (4, 4)


def _dense(idx=IDX, val=VAL, shape=SHAPE):
    d = np.zeros(shape)
    np.add.at(d, (idx[0], idx[1]), val)
    return d


def _stored(idx=IDX, shape=SHAPE):
    m = np.zeros(shape, dtype=bool)
    m[idx[0], idx[1]] = True
    return m


def _np_softmax(d, stored, dim, log=False):
    """The softmax along dim over the stored entries (the others -inf); 0 where not stored."""
    z = np.where(stored, d, -np.inf)
    top = np.max(z, axis=dim, keepdims=True, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(stored, np.exp(z - top), 0.0)
    tot = e.sum(axis=dim, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(e) - np.log(tot) if log else e / tot
    return np.where(stored, out, 0.0)


def _layouts():
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    return {"coo": A, "csr": A.to_sparse_csr(), "csc": A.to_sparse_csc(),
            "csr_dups": S.sparse_csr_tensor([0, 2, 5, 7, 7], [2, 2, 0, 0, 1, 1, 0],
                                            [0.5, 1.5, -1.0, 2.0, 3.0, 0.25, -0.75], SHAPE)}


# ---------------------------------------------------------------- softmax / log_softmax

@pytest.mark.parametrize("log", [False, True])
def test_softmax_over_stored_entries_matches_numpy(log):
    f = S.log_softmax if log else S.softmax
    d, stored = _dense(), _stored()
    for name, A in _layouts().items():
        for dim in (0, 1, -1, -2):
            r = f(A, dim)
            assert r.layout == A.layout and r.shape == SHAPE, name
            # the result keeps the (coalesced) pattern: every stored entry, no others
            assert r.nnz == stored.sum(), name
            np.testing.assert_allclose(r.to_dense().numpy(), _np_softmax(d, stored, dim % 2, log),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{name} dim {dim}")


def test_softmax_matches_torch_and_its_edge_cases():
    torch = pytest.importorskip("torch")
    inf = float("inf")
    val = np.array([1.0, -inf, -inf, 4.0, 2.0, 700.0, -700.0])   # a row of -inf only: NaN
    A = S.sparse_coo_tensor(IDX, val, SHAPE)
    At = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(val), SHAPE)
    for dim in (0, 1):
        for ours, theirs in ((S.softmax, torch.sparse.softmax),
                             (S.log_softmax, torch.sparse.log_softmax)):
            np.testing.assert_allclose(ours(A, dim).to_dense().numpy(),
                                       theirs(At, dim).to_dense().numpy(), rtol=1e-12)
    E = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), [], (0, 3))
    assert S.softmax(E, 0).nnz == 0 and S.softmax(E, 1).shape == (0, 3)


def test_softmax_dtypes_and_errors():
    Ai = S.sparse_coo_tensor(IDX, [1, 2, 3, 4, 5, 6, 7], SHAPE, dtype=T.int32)
    r = S.softmax(Ai, 1, dtype=T.float64)          # dtype= casts first (as PyTorch)
    assert r.dtype is T.float64
    for d in (T.float32, T.float16):
        A = S.sparse_coo_tensor(IDX, T.asarray(VAL, dtype=d), SHAPE)
        r = S.softmax(A, 1)
        assert r.dtype is d
        np.testing.assert_allclose(r.to_dense().numpy().astype(np.float64),
                                   _np_softmax(_dense(), _stored(), 1), atol=2e-3)
    with pytest.raises(TypeError, match="softmax: expects a floating-point matrix, got int32"):
        S.softmax(Ai, 1)
    with pytest.raises(T.AxisError, match="softmax"):
        S.softmax(_layouts()["coo"], 2)
    with pytest.raises(TypeError, match="log_softmax: expects a SparseCOO, SparseCSR or SparseCSC"):
        S.log_softmax(T.ones((2, 2)), 1)


def test_softmax_gradients():
    W = T.asarray(np.random.default_rng(0).standard_normal(SHAPE))
    for log in (False, True):
        f = S.log_softmax if log else S.softmax
        for layout in ("coo", "csr", "csc"):
            for dim in (0, 1):
                def loss(v, layout=layout, dim=dim, f=f):
                    A = S.sparse_coo_tensor(IDX, v, SHAPE)
                    A = A if layout == "coo" else getattr(A, "to_sparse_" + layout)()
                    return (f(A, dim).to_dense() * W).sum()
                v = T.asarray(VAL.copy())
                v.requires_grad = True
                assert autograd.gradcheck(loss, (v,))
        assert autograd.gradgradcheck(loss, (v,))
        # forward mode against central differences
        t = np.linspace(-1.0, 1.0, VAL.size)
        _, tan = autograd.jvp(loss, (T.asarray(VAL),), (T.asarray(t),))
        eps = 1e-6
        fd = (loss(T.asarray(VAL + eps * t)).item() - loss(T.asarray(VAL - eps * t)).item()) / (2 * eps)
        assert abs(tan.item() - fd) < 1e-6


def test_softmax_gradients_match_torch():
    torch = pytest.importorskip("torch")
    W = np.random.default_rng(1).standard_normal(SHAPE)
    for log, theirs in ((False, torch.sparse.softmax), (True, torch.sparse.log_softmax)):
        for dim in (0, 1):
            v = T.asarray(VAL.copy())
            v.requires_grad = True
            f = S.log_softmax if log else S.softmax
            (f(S.sparse_coo_tensor(IDX, v, SHAPE), dim).to_dense() * T.asarray(W)).sum().backward()
            vt = torch.tensor(VAL.copy(), requires_grad=True)
            At = torch.sparse_coo_tensor(torch.tensor(IDX), vt, SHAPE)
            (theirs(At, dim).to_dense() * torch.tensor(W)).sum().backward()
            np.testing.assert_allclose(v.grad.numpy(), vt.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- sum

def test_sum_matches_numpy():
    d = _dense()
    for name, A in _layouts().items():
        for dim in (None, (0, 1), (1, 0), [1, 0]):
            r = S.sum(A, dim)
            assert r.shape == () and abs(r.item() - d.sum()) < 1e-12, name
        for dim in (0, 1, -1, -2, (1,), np.int64(0)):
            np.testing.assert_allclose(S.sum(A, dim).numpy(), d.sum(axis=int(np.ravel(dim)[0])),
                                       rtol=1e-12, err_msg=f"{name} {dim}")
    # dim=(): nothing summed, the matrix coalesced (as PyTorch)
    c = S.sum(_layouts()["coo"], ())
    assert c.is_coalesced() and np.allclose(c.to_dense().numpy(), d)
    Ai = S.sparse_coo_tensor(IDX, np.arange(1, 8), SHAPE, dtype=T.int32)
    assert S.sum(Ai).dtype is T.int64 and S.sum(Ai).item() == 28
    assert S.sum(Ai, 0).dtype is T.int64 and S.sum(Ai, 0).tolist() == [11, 12, 5, 0]
    assert S.sum(Ai, 1, dtype=T.float32).dtype is T.float32
    # a bool matrix's duplicates are one True (as to_dense and torch.sparse.sum have them): the
    # True at (0, 2), stored twice, counts once (hunt 11: the sums counted 5 and [2, 2, 1, 0])
    Ab = S.sparse_coo_tensor(IDX, VAL > 0, SHAPE, dtype=T.bool_)
    assert S.sum(Ab).item() == 4 and S.sum(Ab, 1).tolist() == [1, 2, 1, 0]
    assert S.sum(Ab, 1).tolist() == Ab.to_dense().numpy().sum(1).tolist()


def test_sum_matches_torch_and_errors():
    torch = pytest.importorskip("torch")
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    At = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), SHAPE)
    assert abs(S.sum(A).item() - torch.sparse.sum(At).item()) < 1e-12
    for dim in (0, 1):
        np.testing.assert_allclose(S.sum(A, dim).numpy(), torch.sparse.sum(At, dim).to_dense().numpy())
    with pytest.raises(ValueError, match="sparse.sum: dim \\(0, 0\\) names a dimension more than once"):
        S.sum(A, (0, 0))
    with pytest.raises(TypeError, match="sparse.sum: dim must be None, an int or a tuple"):
        S.sum(A, 1.5)
    with pytest.raises(T.AxisError, match="sparse.sum"):
        S.sum(A, 2)


def test_sum_gradients():
    for dim in (None, 0, 1):
        def loss(v, dim=dim):
            r = S.sum(S.sparse_coo_tensor(IDX, v, SHAPE).to_sparse_csr(), dim)
            return r if r.ndim == 0 else (r * T.asarray([1.0, -2.0, 3.0, 0.5])).sum()
        v = T.asarray(VAL.copy())
        v.requires_grad = True
        assert autograd.gradcheck(loss, (v,))


# ---------------------------------------------------------------- addmm

def test_addmm_matches_numpy_and_broadcasts():
    rng = np.random.default_rng(2)
    d = _dense()
    X = rng.standard_normal((4, 3))
    for A in _layouts().values():
        for mshape in ((4, 3), (1, 3), (3,), (4, 1), ()):
            M = rng.standard_normal(mshape)
            r = S.addmm(T.asarray(M), A, T.asarray(X), beta=0.5, alpha=-2.0)
            np.testing.assert_allclose(r.numpy(), 0.5 * M - 2.0 * (d @ X), rtol=1e-12, atol=1e-12)
    # beta 0: mat is not read (a NaN in it does not propagate), as PyTorch's
    r = S.addmm(T.full((4, 3), np.nan), _layouts()["coo"], T.asarray(X), beta=0)
    np.testing.assert_allclose(r.numpy(), d @ X, rtol=1e-12)


def test_addmm_gradients_and_errors():
    rng = np.random.default_rng(3)

    def f(v, M, X):
        return S.addmm(M, S.sparse_coo_tensor(IDX, v, SHAPE), X, beta=0.5, alpha=2.0)
    args = [T.asarray(VAL.copy()), T.asarray(rng.standard_normal((1, 2))),
            T.asarray(rng.standard_normal((4, 2)))]
    for a in args:
        a.requires_grad = True
    assert autograd.gradcheck(f, args)
    A = _layouts()["coo"]
    with pytest.raises(TypeError, match="sparse.addmm: expects a SparseCOO"):
        S.addmm(T.ones((4, 4)), T.ones((4, 4)), T.ones((4, 4)))
    with pytest.raises(ValueError, match="sparse.addmm: shape mismatch"):
        S.addmm(T.ones((4, 2)), A, T.ones((3, 2)))
    with pytest.raises(ValueError, match="sparse.addmm: shape mismatch"):
        S.addmm(T.ones((4,)), A, T.ones(4))
    with pytest.raises(ValueError, match="does not broadcast"):
        S.addmm(T.ones((3, 2)), A, T.ones((4, 2)))
    with pytest.raises(TypeError, match="sparse.addmm: dtypes differ"):
        S.addmm(T.ones((4, 2), dtype=T.float32), A, T.ones((4, 2)))


# ---------------------------------------------------------------- spdiags

def _np_spdiags(data, offsets, m, n):
    """SciPy's spdiags layout: out[j - k, j] = data[d, j] for diagonal d of offset k."""
    out = np.zeros((m, n))
    for d, k in enumerate(offsets):
        for j in range(max(0, k), min(n, m + k, data.shape[1])):
            out[j - k, j] = data[d, j]
    return out


def test_spdiags_matches_numpy_reference():
    rng = np.random.default_rng(4)
    # (shape, offsets, diagonal length): wide / tall, diagonals longer than the matrix (torch
    # 2.x gives (5, 3) column indices out of range there; we follow SciPy), offsets outside it
    for shape, offs, L in (((3, 4), [0, -1, 2], 4), ((5, 3), [0, -1, 2], 4), ((3, 4), [0, -9, 7], 4),
                           ((4, 4), [1], 2), ((0, 3), [0], 3), ((3, 3), [], 3)):
        data = rng.standard_normal((len(offs), L))
        ref = _np_spdiags(data, offs, *shape)
        for layout in (None, "coo", "csr", "csc"):
            A = S.spdiags(T.asarray(data), T.asarray(np.array(offs, dtype=np.int64)), shape,
                          layout=layout)
            assert A.layout == (layout or "coo") and A.shape == shape
            np.testing.assert_array_equal(A.to_dense().numpy(), ref)
        A = S.spdiags(T.asarray(data), offs, shape)
        assert A.is_coalesced() and A.nnz == sum(
            max(0, min(shape[1], shape[0] + k, L) - max(0, k)) for k in offs)
    # a vector is one diagonal; zeros on a diagonal are stored (as PyTorch)
    A = S.spdiags(T.zeros(3), 0, (3, 3))
    assert A.nnz == 3 and A.to_dense().tolist() == [[0.0] * 3] * 3


def test_spdiags_matches_torch_gradients_and_errors():
    torch = pytest.importorskip("torch")
    data = np.arange(1.0, 13.0).reshape(3, 4)
    A = S.spdiags(T.asarray(data), [0, -1, 2], (3, 4))
    At = torch.sparse.spdiags(torch.tensor(data), torch.tensor([0, -1, 2]), (3, 4))
    np.testing.assert_array_equal(A.to_dense().numpy(), At.to_dense().numpy())
    assert A.nnz == At._nnz()
    W = T.asarray(np.arange(12.0).reshape(3, 4))
    d = T.asarray(data)
    d.requires_grad = True
    assert autograd.gradcheck(lambda d: (S.spdiags(d, [0, -1, 2], (3, 4)).to_dense() * W).sum(), (d,))
    with pytest.raises(ValueError, match="spdiags: offsets \\[0, 0\\] contain duplicates"):
        S.spdiags(T.ones((2, 3)), [0, 0], (3, 3))
    with pytest.raises(ValueError, match="spdiags: 2 diagonals but 1 offsets"):
        S.spdiags(T.ones((2, 3)), [0], (3, 3))
    with pytest.raises(TypeError, match="spdiags: offsets must be integers"):
        S.spdiags(T.ones((2, 3)), [0.0, 1.0], (3, 3))
    with pytest.raises(ValueError, match="spdiags: shape must be 2 integers"):
        S.spdiags(T.ones((2, 3)), [0, 1], (3, 3, 1))
    with pytest.raises(ValueError, match="spdiags: layout must be"):
        S.spdiags(T.ones((2, 3)), [0, 1], (3, 3), layout="bsr")


# ---------------------------------------------------------------- Tensor methods

def test_to_sparse_coo_csc_and_sparse_mask():
    x = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    c = T.asarray(x).to_sparse_coo()
    assert c.layout == "coo" and c.is_coalesced() and c.to_dense().tolist() == x.tolist()
    k = T.asarray(x).to_sparse_csc()
    assert k.layout == "csc" and k.ccol_indices().tolist() == [0, 1, 2, 3]
    assert k.row_indices().tolist() == [1, 0, 1] and k.values().tolist() == [2.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="to_sparse_coo: tensor.sparse matrices are 2-D"):
        T.ones(3).to_sparse_coo()
    y = np.arange(16.0).reshape(4, 4)
    copies = np.zeros(SHAPE)
    np.add.at(copies, (IDX[0], IDX[1]), 1.0)
    for name, mask in _layouts().items():
        r = T.asarray(y).sparse_mask(mask)
        assert r.layout == mask.layout and r.nnz == mask.nnz, name
        # y at each stored entry: an uncoalesced mask keeps its duplicates (as PyTorch's)
        dups = name in ("coo", "csr_dups")
        np.testing.assert_array_equal(r.to_dense().numpy(), y * (copies if dups else _stored()))
    with pytest.raises(ValueError, match="sparse_mask: the tensor's shape \\(3,\\) differs"):
        T.ones(3).sparse_mask(_layouts()["coo"])
    with pytest.raises(TypeError, match="sparse_mask: the mask must be a tensor.sparse matrix"):
        T.ones((2, 2)).sparse_mask(T.ones((2, 2)))
    xg = T.asarray(y)
    xg.requires_grad = True
    assert autograd.gradcheck(lambda x: (x.sparse_mask(_layouts()["csc"]).to_dense() ** 2).sum(), (xg,))


def test_sparse_mask_matches_torch():
    torch = pytest.importorskip("torch")
    y = np.arange(16.0).reshape(4, 4)
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    At = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), SHAPE)
    for ours, theirs in ((A, At), (A.to_sparse_csr(), At.coalesce().to_sparse_csr())):
        np.testing.assert_array_equal(T.asarray(y).sparse_mask(ours).to_dense().numpy(),
                                      torch.tensor(y).sparse_mask(theirs).to_dense().numpy())


# ---------------------------------------------------------------- CSC

def test_csc_matches_torch_layout():
    torch = pytest.importorskip("torch")
    d = _dense()
    Ct = torch.tensor(d).to_sparse_csc()
    C = T.asarray(d).to_sparse_csc()
    assert C.ccol_indices().tolist() == Ct.ccol_indices().tolist()
    assert C.row_indices().tolist() == Ct.row_indices().tolist()
    np.testing.assert_array_equal(C.values().numpy(), Ct.values().numpy())
    C2 = S.sparse_csc_tensor(Ct.ccol_indices().numpy(), Ct.row_indices().numpy(),
                             Ct.values().numpy(), SHAPE)
    np.testing.assert_array_equal(C2.to_dense().numpy(), d)


def test_csc_conversions_products_and_arithmetic():
    rng = np.random.default_rng(5)
    d = _dense()
    B = rng.standard_normal((4, 2))
    W = rng.standard_normal(SHAPE)
    dups = S.SparseCSC([0, 3, 5, 7, 7], [1, 2, 1, 2, 1, 0, 0],
                       [-1.0, -0.75, 2.0, 0.25, 3.0, 0.5, 1.5], SHAPE)   # duplicates in a column
    for C in (_layouts()["csc"], S.from_dense(T.asarray(d), "csc"),
              _layouts()["csr_dups"].to_sparse_csc(), dups):
        assert C.layout == "csc" and C.shape == SHAPE
        np.testing.assert_allclose(C.to_dense().numpy(), d, atol=1e-12)
        coo = C.to_sparse_coo()
        assert coo.is_coalesced() and np.allclose(coo.to_dense().numpy(), d)
        assert C.to_sparse_csr().layout == "csr" and np.allclose(C.to_sparse_csr().to_dense().numpy(), d)
        assert C.t().layout == "csr" and np.allclose(C.T.to_dense().numpy(), d.T)
        np.testing.assert_allclose((C @ T.asarray(B)).numpy(), d @ B, atol=1e-12)
        np.testing.assert_allclose((C @ T.asarray(B[:, 0])).numpy(), d @ B[:, 0], atol=1e-12)
        np.testing.assert_allclose((T.asarray(B.T) @ C).numpy(), B.T @ d, atol=1e-12)
        assert (C + C).layout == "csc" and np.allclose((C + C).to_dense().numpy(), 2 * d)
        assert (C * 2).layout == "csc" and np.allclose((-C * 2).to_dense().numpy(), -2 * d)
        np.testing.assert_allclose((C * T.asarray(W)).to_dense().numpy(), d * W, atol=1e-12)
        np.testing.assert_allclose((C - T.asarray(W)).numpy(), d - W, atol=1e-12)
        for P in (pickle.loads(pickle.dumps(C)), copy.deepcopy(C), C.to_device(C.device), C.detach()):
            assert P.layout == "csc" and np.allclose(P.to_dense().numpy(), d)
        X, Y = rng.standard_normal((4, 2)), rng.standard_normal((2, 4))
        r = S.sampled_addmm(C, T.asarray(X), T.asarray(Y), beta=0.0)
        np.testing.assert_allclose(r.to_dense().numpy(), np.where(_stored(), X @ Y, 0.0),
                                   atol=1e-12)


def test_csc_checks_name_the_op_and_csc_terms():
    with pytest.raises(ValueError, match="sparse_csc_tensor: ccol_indices must have shape \\(4,\\) "
                                         "for 3 columns"):
        S.sparse_csc_tensor([0, 1, 3], [2, 0, 1], [1.0, 2.0, 3.0], (3, 3))
    with pytest.raises(IndexError, match="sparse_csc_tensor: row index 5 out of range for 3 rows"):
        S.sparse_csc_tensor([0, 1, 3, 3], [2, 0, 5], [1.0, 2.0, 3.0], (3, 3))
    with pytest.raises(ValueError, match="ccol_indices must be non-decreasing"):
        S.sparse_csc_tensor([0, 2, 1, 3], [2, 0, 1], [1.0, 2.0, 3.0], (3, 3))
    with pytest.raises(ValueError, match="sparse_csc_tensor: row_indices \\(3,\\) and values \\(2,\\)"):
        S.sparse_csc_tensor([0, 1, 3, 3], [2, 0, 1], [1.0, 2.0], (3, 3))
    with pytest.raises(IndexError, match="row index 7"):
        S.SparseCSC([0, 1, 3, 3], [2, 0, 7], [1.0, 2.0, 3.0], (3, 3))
    # the caller's index tensor is copied and the matrix's are read-only (as CSR's)
    ccol = T.asarray(np.array([0, 1, 3, 3]))
    C = S.sparse_csc_tensor(ccol, [2, 0, 1], [1.0, 2.0, 3.0], (3, 3))
    ccol[1] = 3
    assert C.ccol_indices().tolist() == [0, 1, 3, 3]
    with pytest.raises(Exception, match="read-only|sparse matrix"):
        C.row_indices()[0] = 9


def test_csc_gradients():
    def f(v, B):
        C = S.sparse_coo_tensor(IDX, v, SHAPE).to_sparse_csc()
        return (C @ B).sum() + (S.softmax(C, 0).to_dense() * T.asarray(np.arange(16.0).reshape(4, 4))).sum()
    v = T.asarray(VAL.copy())
    B = T.asarray(np.random.default_rng(6).standard_normal((4, 2)))
    v.requires_grad = True
    B.requires_grad = True
    assert autograd.gradcheck(f, (v, B))


def test_csc_scipy_round_trip():
    sps = pytest.importorskip("scipy.sparse")
    d = _dense()
    C = S.from_scipy(sps.csc_matrix(d))
    assert C.layout == "csc" and np.allclose(C.to_dense().numpy(), d)
    m = S.to_scipy(_layouts()["csc"])
    assert m.format == "csc" and np.allclose(m.toarray(), d)


# ---------------------------------------------------------------- comparisons, A.sum()

def test_comparisons_raise_instead_of_identity():
    # caught: == / != had no definition, so `dense == A`, `A == dense`, `A == 0` fell back to
    # Python's identity test: a silent False (True for !=) instead of an error (PyTorch raises)
    A = _layouts()["csr"]
    x = T.asarray(_dense())
    for other in (x, A, 0, 1.5, np.ones(SHAPE)):
        with pytest.raises(TypeError, match="eq: a sparse matrix has no elementwise comparisons"):
            A == other   # noqa: B015
        with pytest.raises(TypeError, match="ne: a sparse matrix has no elementwise comparisons"):
            A != other   # noqa: B015
    with pytest.raises(TypeError, match="eq: a sparse matrix has no elementwise comparisons"):
        x == A   # noqa: B015
    # still hashable by identity, and None / other objects compare as before
    assert (A == None) is False and {A: 1}[A] == 1 and A in [A]   # noqa: E711


def test_sum_method():
    d = _dense()
    for name, A in _layouts().items():
        assert abs(A.sum().item() - d.sum()) < 1e-12, name
        np.testing.assert_allclose(A.sum(0).numpy(), d.sum(axis=0), rtol=1e-12)
        np.testing.assert_allclose(A.sum(dim=1).numpy(), d.sum(axis=1), rtol=1e-12)
    with pytest.raises(ValueError, match="sum: dim"):
        A.sum((1, -1))


def test_graph_attention_pipeline_matches_torch():
    # SDDMM scores at the graph's edges -> softmax over each row's edges -> SpMM, with gradients
    # for Q, K and V against PyTorch's dense masked attention
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    n, d = 8, 3
    adj = rng.random((n, n)) < 0.3
    np.fill_diagonal(adj, True)
    r, c = np.nonzero(adj)
    Q, K, V, W = (rng.standard_normal((n, d)) for _ in range(4))
    pattern = S.sparse_csr_tensor(np.searchsorted(r, np.arange(n + 1)), c, np.zeros(r.size), (n, n))
    q, k, v = (T.asarray(a) for a in (Q, K, V))
    for t in (q, k, v):
        t.requires_grad = True
    out = S.softmax(S.sampled_addmm(pattern, q, k.mT, beta=0.0, alpha=0.5), 1) @ v
    (out * T.asarray(W)).sum().backward()
    qt, kt, vt = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    s = ((qt @ kt.T) * 0.5).masked_fill(~torch.tensor(adj), float("-inf"))
    ot = torch.softmax(s, 1) @ vt
    (ot * torch.tensor(W)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ot.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in ((q, qt), (k, kt), (v, vt)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_to_cpu_cuda(device):
    # PyTorch's A.to(device / dtype), A.cpu(), A.cuda() (the values converted, indices moved)
    d = _dense()
    for A in _layouts().values():
        assert A.to(A.device) is A and A.to(dtype=T.float64) is A
        f = A.to(T.float32)
        assert f.layout == A.layout and f.dtype is T.float32 and f.device == A.device
        np.testing.assert_allclose(f.to_dense().numpy(), d, rtol=1e-6)
        c = A.cpu()
        assert c.layout == A.layout and str(c.device) == "cpu"
        np.testing.assert_array_equal(c.to_dense().numpy(), d)
        if device == "cuda":
            back = c.to("cuda", T.float32)
            assert back.device == A.device and back.dtype is T.float32
            assert c.cuda().device == A.device
    v = T.asarray(VAL.copy(), dtype=T.float32)
    v.requires_grad = True
    S.sparse_coo_tensor(IDX, v, SHAPE).to(T.float64).to_dense().sum().backward()
    assert v.grad.tolist() == [1.0] * VAL.size


def test_softmax_of_a_hypersparse_matrix():
    # 2**40 rows and columns, 7 entries: the per-row / per-column buffers cover only the rows /
    # columns that hold entries (a (2**40,) buffer would need 8 TiB); same values as the small
    # matrix with the same entries
    big = 2 ** 40
    spread = np.array([0, 5, big - 7, 12345678901, big - 1])
    A = S.sparse_coo_tensor(spread[IDX], VAL, (big, big))
    small = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    for dim in (0, 1):
        for log in (False, True):
            f = S.log_softmax if log else S.softmax
            r, e = f(A, dim), f(small, dim)
            assert r.indices().tolist() == spread[e.indices().numpy()].tolist()
            np.testing.assert_allclose(r.values().numpy(), e.values().numpy(), rtol=1e-12)


def test_top_level_constructors_are_torch_spelled():
    import tensor.sparse as S
    assert T.sparse_coo_tensor is S.sparse_coo_tensor and T.sparse_csr_tensor is S.sparse_csr_tensor
    a = T.sparse_coo_tensor(T.asarray([[0, 1], [1, 0]]), T.asarray([2.0, 3.0]), (2, 2))
    np.testing.assert_array_equal(a.to_dense().numpy(), [[0.0, 2.0], [3.0, 0.0]])
