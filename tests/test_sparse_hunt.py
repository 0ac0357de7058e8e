"""tensor.sparse against PyTorch (hunt 11). Fixes: the sum of a bool matrix with duplicate
entries (counted each duplicate), the truth value of a matrix (was True for any), NumPy scalar
operands of * and / (were refused with a NumPy error), dense @ sparse shape errors (named A^T's
shapes), sampled_addmm's complex coefficients. PyTorch's features that were missing: sparse *
sparse (the entries both store), index_select / select, sparse @ sparse, requires_grad= / A.grad
/ is_coalesced= / inferred CSR sizes, size() / dim() / is_sparse, and the unary functions that
keep 0 at 0 with A ** p. On both devices, gradients against PyTorch's (dense equivalents where
PyTorch has no sparse one). PyTorch comparisons are guarded with importorskip."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

S = T.sparse
pytestmark = [pytest.mark.usefixtures("device"),
              pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta:UserWarning")]

# duplicates ((1, 0) twice, (0, 2) twice), an empty row (3) and an empty column (3)
IDX = np.array([[0, 1, 1, 0, 2, 2, 1], [2, 0, 0, 2, 1, 0, 1]])
VAL = np.array([0.5, -1.0, 2.0, 1.5, 0.25, -0.75, 3.0])
SHAPE = (4, 4)
LAYOUTS = ("coo", "csr", "csc")


def _dense(idx=IDX, val=VAL, shape=SHAPE):
    d = np.zeros(shape, dtype=np.asarray(val).dtype)
    np.add.at(d, (idx[0], idx[1]), val)
    return d


def _as(A, layout):
    return A if layout == "coo" else getattr(A, "to_sparse_" + layout)()


def _np(t):
    return (t.to_dense() if S.is_sparse(t) else t).detach().numpy()


# ---------------------------------------------------------------- bool sums

def test_bool_sum_merges_duplicates_as_to_dense_does():
    """A bool matrix's duplicates are one True (to_dense / coalesce OR them): the sums counted
    each duplicate (4 here, torch.sparse.sum and to_dense().sum() give 3)."""
    idx = np.array([[0, 1, 1, 2, 0], [2, 0, 0, 1, 2]])
    vals = np.array([True, True, False, True, True])
    A = S.sparse_coo_tensor(idx, T.asarray(vals), (3, 4))
    dense = A.to_dense().numpy()
    assert dense.sum() == 3
    for layout in LAYOUTS:
        X = _as(A, layout)
        assert X.sum().item() == 3 and S.sum(X).dtype is T.int64
        for d in (0, 1, -1):
            np.testing.assert_array_equal(X.sum(d).numpy(), dense.sum(d if d >= 0 else 1))
    # a CSR with a repeated column in a row (kept as given) merges it too
    C = S.sparse_csr_tensor([0, 2, 2], [1, 1], T.asarray([True, True]), (2, 2))
    assert C.sum().item() == 1 and C.sum(0).numpy().tolist() == [0, 1]
    torch = pytest.importorskip("torch")
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (3, 4))
    assert int(torch.sparse.sum(t)) == A.sum().item()
    # integer duplicates still add
    Ai = S.sparse_coo_tensor(idx, T.asarray(np.array([1, 2, 3, 4, 5], np.int32)), (3, 4))
    assert Ai.sum().item() == 15 and Ai.sum(1).numpy().tolist() == [6, 5, 4]


# ---------------------------------------------------------------- truth value, NumPy scalars

def test_truth_value_raises_unless_one_element():
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    Z = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (2, 2))
    for X in (A, A.to_sparse_csr(), A.to_sparse_csc(), Z):
        with pytest.raises(ValueError, match="truth value of a sparse matrix of shape"):
            bool(X)
    assert bool(S.sparse_coo_tensor([[0], [0]], [2.0], (1, 1)))
    assert not bool(S.sparse_coo_tensor([[0, 0], [0, 0]], [2.0, -2.0], (1, 1)))
    assert not bool(S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (1, 1)))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_numpy_scalar_operands(layout):
    A = _as(S.sparse_coo_tensor(IDX, T.asarray(VAL, dtype=T.float32), SHAPE), layout)
    d = _dense(val=VAL.astype(np.float32))
    for s in (np.float32(2.5), np.int64(3), np.float64(-0.5), np.bool_(True)):
        for r in (A * s, s * A):
            assert r.layout == layout
            np.testing.assert_allclose(_np(r), d * s, rtol=1e-6)
        np.testing.assert_allclose(_np(A / s), d / s, rtol=1e-6)
    assert (A * np.float32(2)).dtype is T.float32
    assert (A * np.float64(2)).dtype is T.float64   # a NumPy scalar's dtype counts, as for Tensor
    with pytest.raises(TypeError, match="true_divide: a sparse matrix divides by a scalar only"):
        A / A


# ---------------------------------------------------------------- sparse * sparse

IDX2 = np.array([[0, 2, 1, 3, 1, 0], [2, 1, 1, 3, 0, 0]])
VAL2 = np.array([2.0, 3.0, 7.0, 1.0, -4.0, 5.0])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sparse_times_sparse_matches_torch(layout):
    A = _as(S.sparse_coo_tensor(IDX, VAL, SHAPE), layout)
    B = _as(S.sparse_coo_tensor(IDX2, VAL2, SHAPE), layout)
    ref = _dense() * _dense(IDX2, VAL2)
    for P in (A * B, B * A, A * B.to_sparse_coo()):
        np.testing.assert_allclose(_np(P), ref, rtol=1e-12)
    P = A * B
    assert P.layout == layout
    if layout == "coo":
        # the entries both store, coalesced; not A's (2, 0) nor B's (0, 0), (3, 3)
        assert P.is_coalesced() and P.indices().numpy().tolist() == [[0, 1, 1, 2], [2, 0, 1, 1]]
        np.testing.assert_allclose(P.values().numpy(), [4.0, -4.0, 21.0, 0.75])
    np.testing.assert_allclose(_np(A * A), _dense() ** 2, rtol=1e-12)
    torch = pytest.importorskip("torch")
    ta = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), SHAPE)
    tb = torch.sparse_coo_tensor(torch.tensor(IDX2), torch.tensor(VAL2), SHAPE)
    np.testing.assert_allclose(_np(P), (ta * tb).to_dense().numpy(), rtol=1e-12)


def test_sparse_times_sparse_dtypes_empty_huge_and_errors():
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    Bi = S.sparse_coo_tensor(IDX2, T.asarray(np.array([2, 3, 7, 1, -4, 5], np.int32)), SHAPE)
    P = A * Bi
    assert P.dtype is T.float64
    np.testing.assert_allclose(_np(P), _dense() * _dense(IDX2, VAL2))
    Ab = S.sparse_coo_tensor(IDX, T.asarray(VAL > 0), SHAPE)
    Bb = S.sparse_coo_tensor(IDX2, T.asarray(VAL2 > 0), SHAPE)
    assert (Ab * Bb).dtype is T.bool_
    np.testing.assert_array_equal(_np(Ab * Bb), _np(Ab) & _np(Bb))
    Ac = S.sparse_coo_tensor(IDX, T.asarray(VAL + 1j * VAL[::-1]), SHAPE)
    np.testing.assert_allclose(_np(Ac * Ac), _np(Ac) ** 2)
    Z = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), SHAPE)
    for P in (A * Z, Z * A, Z * Z, A.to_sparse_csr() * Z):
        assert P.nnz == 0 and P.shape == SHAPE
    E = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (0, 3))
    assert (E * E).shape == (0, 3)
    # a shape whose row-major keys do not fit int64
    big = 2 ** 40
    H1 = S.sparse_coo_tensor([[big - 1, 0, 5, big - 1], [big - 1, 3, 2, big - 1]],
                             [1.0, 2.0, 3.0, 4.0], (big, big))
    H2 = S.sparse_coo_tensor([[5, big - 1, 7], [2, big - 1, 7]], [10.0, 100.0, 1.0], (big, big))
    P = H1 * H2
    assert P.indices().numpy().tolist() == [[5, big - 1], [2, big - 1]]
    np.testing.assert_allclose(P.values().numpy(), [30.0, 500.0])
    with pytest.raises(ValueError, match="multiply: sparse operands differ"):
        A * S.sparse_coo_tensor(IDX, VAL, (4, 5))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sparse_times_sparse_gradients(layout):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    G = rng.standard_normal(SHAPE)
    va, vb = T.tensor(VAL, requires_grad=True), T.tensor(VAL2, requires_grad=True)
    P = _as(S.sparse_coo_tensor(IDX, va, SHAPE), layout) * _as(S.sparse_coo_tensor(IDX2, vb, SHAPE),
                                                               layout)
    ga, gb = autograd.grad(T.sum(P.to_dense() * T.asarray(G)), [va, vb])
    ta, tb = torch.tensor(VAL, requires_grad=True), torch.tensor(VAL2, requires_grad=True)

    def dense(i, v):
        return torch.zeros(SHAPE, dtype=v.dtype).index_put((torch.tensor(i[0]), torch.tensor(i[1])),
                                                           v, accumulate=True)
    tga, tgb = torch.autograd.grad((dense(IDX, ta) * dense(IDX2, tb) * torch.tensor(G)).sum(),
                                   [ta, tb])
    np.testing.assert_allclose(ga.numpy(), tga.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), tgb.numpy(), rtol=1e-12, atol=1e-12)

    def f(a, b):
        return (S.sparse_coo_tensor(IDX, a, SHAPE) * S.sparse_coo_tensor(IDX2, b, SHAPE)).values()
    assert autograd.gradcheck(f, (va, vb))


# ---------------------------------------------------------------- index_select

@pytest.mark.parametrize("layout", LAYOUTS)
def test_index_select_matches_torch(layout):
    A = _as(S.sparse_coo_tensor(IDX, VAL, SHAPE), layout)
    d = _dense()
    cases = [(0, [2, 0, 0]), (1, [3, 2, 2, 0]), (0, [-1, 1]), (-1, [-4]), (1, []),
             (0, np.array([1, 2, 3, 0], np.int32)), (1, T.asarray([0, 1, 2, 3])), (0, 2)]
    for dim, ix in cases:
        R = A.index_select(dim, ix)
        assert R.layout == layout
        h = np.atleast_1d(ix.numpy() if isinstance(ix, T.Tensor) else np.asarray(ix, np.int64))
        np.testing.assert_allclose(_np(R), np.take(d, h, axis=dim), rtol=0, atol=0)
    torch = pytest.importorskip("torch")
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), SHAPE)
    for dim, ix in cases[:5]:
        ref = t.index_select(dim, torch.tensor(ix, dtype=torch.int64)).to_dense().numpy()
        np.testing.assert_allclose(_np(A.index_select(dim, ix)), ref, rtol=0, atol=0)
    # a COO keeps its duplicates, in the order of its entries
    R = S.sparse_coo_tensor(IDX, VAL, SHAPE).index_select(0, [1, 1])
    assert R.nnz == 6 and not R.is_coalesced()


def test_index_select_empty_dtypes_and_errors():
    Z = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (3, 0))
    assert Z.index_select(0, [2, 2]).shape == (2, 0)
    Ai = S.sparse_coo_tensor(IDX, T.asarray(np.arange(7), dtype=T.int16), SHAPE)
    R = Ai.index_select(1, [2, 0])
    assert R.dtype is T.int16
    np.testing.assert_array_equal(R.to_dense().numpy(), _dense(val=np.arange(7, dtype=np.int16))[:, [2, 0]])
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    with pytest.raises(IndexError, match="index_select: index 4 is out of range for dimension 0 of size 4"):
        A.index_select(0, [0, 4])
    with pytest.raises(IndexError, match="index -5 is out of range for dimension 1"):
        A.index_select(1, [-5])
    with pytest.raises(TypeError, match="index_select: index must be integers, got float"):
        A.index_select(0, [0.0])
    with pytest.raises(TypeError, match="index must be integers, got bool"):
        A.index_select(0, T.asarray([True]))
    with pytest.raises(ValueError, match="index must be a scalar or a vector"):
        A.index_select(0, [[0]])
    with pytest.raises(IndexError, match="index_select: axis 2 is out of bounds"):
        A.index_select(2, [0])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_index_select_gradients(layout):
    torch = pytest.importorskip("torch")
    G = np.random.default_rng(1).standard_normal((3, 4))
    v = T.tensor(VAL, requires_grad=True)
    R = _as(S.sparse_coo_tensor(IDX, v, SHAPE), layout).index_select(0, [2, -3, 1])
    (g,) = autograd.grad(T.sum(R.to_dense() * T.asarray(G)), [v])
    tv = torch.tensor(VAL, requires_grad=True)
    td = torch.zeros(SHAPE, dtype=tv.dtype).index_put((torch.tensor(IDX[0]), torch.tensor(IDX[1])),
                                                      tv, accumulate=True)
    (tg,) = torch.autograd.grad((td.index_select(0, torch.tensor([2, 1, 1])) * torch.tensor(G)).sum(),
                                [tv])
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12, atol=1e-12)
    assert autograd.gradcheck(
        lambda w: S.sparse_coo_tensor(IDX, w, SHAPE).index_select(1, [0, 0, 2]).values(), (v,))


def test_torch_spelled_shape_queries():
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    C = A.to_sparse_csr()
    assert A.size() == SHAPE and A.size(-1) == 4 and A.dim() == 2 and C.size(0) == 4
    assert A.is_sparse and not A.is_sparse_csr and C.is_sparse_csr and not C.is_sparse
    assert not A.to_sparse_csc().is_sparse and not A.to_sparse_csc().is_sparse_csr


# ---------------------------------------------------------------- messages, coefficients

def test_dense_at_sparse_mismatch_names_the_shapes_written():
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE).index_select(1, [0, 1, 2])   # (4, 3)
    for other in (T.ones(3, dtype=T.float64), T.ones((2, 3), dtype=T.float64)):
        with pytest.raises(ValueError, match=f"matmul: shape mismatch: dense \\{other.shape}"[:-1]
                           + ".* @ sparse \\(4, 3\\)"):
            other @ A   # was reported as sparse (3, 4) @ dense (3,): A^T's shapes


def test_sampled_addmm_coefficients():
    rng = np.random.default_rng(2)
    idx, vals = np.array([[0, 1, 2, 2], [1, 0, 2, 0]]), np.array([1 + 1j, 2.0, -1j, 0.5])
    Sc = S.sparse_coo_tensor(idx, T.asarray(vals), (3, 3))
    X = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    Y = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    d = Sc.to_dense().numpy()
    R = S.sampled_addmm(Sc, T.asarray(X), T.asarray(Y), beta=0.5j, alpha=2 - 1j)
    np.testing.assert_allclose(R.to_dense().numpy(), (0.5j * d + (2 - 1j) * (X @ Y)) * (d != 0),
                               rtol=1e-12, atol=1e-12)
    Sr = S.sparse_coo_tensor(idx, T.asarray(vals.real), (3, 3))
    Xr, Yr = T.asarray(X.real), T.asarray(Y.real)
    R = S.sampled_addmm(Sr, Xr, Yr, beta=np.float32(0.5), alpha=1 + 0j)   # real numbers
    dr, stored = Sr.to_dense().numpy(), np.zeros((3, 3), bool)
    stored[idx[0], idx[1]] = True   # (2, 2) stores a 0
    np.testing.assert_allclose(R.to_dense().numpy(), (0.5 * dr + X.real @ Y.real) * stored,
                               rtol=1e-12)
    assert R.dtype is T.float64
    with pytest.raises(TypeError, match="sampled_addmm: a complex alpha \\(1j\\) needs complex matrices"):
        S.sampled_addmm(Sr, Xr, Yr, alpha=1j)
    with pytest.raises(TypeError, match="sampled_addmm: beta must be a number, got list"):
        S.sampled_addmm(Sr, Xr, Yr, beta=[1])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_select_gives_a_dense_row_or_column(layout):
    A = _as(S.sparse_coo_tensor(IDX, VAL, SHAPE), layout)
    d = _dense()
    for dim, i in ((0, 1), (0, -1), (1, 0), (1, -2), (0, np.int64(2)), (1, T.asarray(3))):
        r = A.select(dim, i)
        assert isinstance(r, T.Tensor) and r.shape == (4,)
        np.testing.assert_array_equal(r.numpy(), np.take(d, int(i), axis=dim))
    with pytest.raises(IndexError, match="select: index 4 is out of range for dimension 1 of size 4"):
        A.select(1, 4)
    with pytest.raises(TypeError, match="select: index must be an integer, got float"):
        A.select(0, 1.0)
    v = T.tensor(VAL, requires_grad=True)
    assert autograd.gradcheck(lambda w: _as(S.sparse_coo_tensor(IDX, w, SHAPE), layout).select(1, 0),
                              (v,))
    torch = pytest.importorskip("torch")
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), SHAPE)
    for dim, i in ((0, 1), (1, 2), (0, 3)):
        np.testing.assert_array_equal(A.select(dim, i).numpy(), t.select(dim, i).to_dense().numpy())


def test_sparse_times_sparse_forward_mode():
    rng = np.random.default_rng(3)
    ta, tb = rng.standard_normal(VAL.shape), rng.standard_normal(VAL2.shape)

    def f(a, b):
        return (S.sparse_coo_tensor(IDX, a, SHAPE) * S.sparse_coo_tensor(IDX2, b, SHAPE)).to_dense()
    out, tan = autograd.jvp(f, (T.asarray(VAL), T.asarray(VAL2)), (T.asarray(ta), T.asarray(tb)))
    np.testing.assert_allclose(out.numpy(), _dense() * _dense(IDX2, VAL2), rtol=1e-12)
    want = _dense(val=ta) * _dense(IDX2, VAL2) + _dense() * _dense(IDX2, tb)
    np.testing.assert_allclose(tan.numpy(), want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- PyTorch's factory arguments

@pytest.mark.parametrize("layout", LAYOUTS)
def test_leaf_matrices_get_a_grad_of_their_layout(layout):
    """requires_grad=True (PyTorch's factory argument) makes a leaf matrix; backward fills A.grad,
    a matrix of its pattern and layout (PyTorch: sparse for a COO leaf; dense for a CSR / CSC
    leaf, equal at the stored entries)."""
    rng = np.random.default_rng(4)
    B, G = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    coo = S.sparse_coo_tensor(IDX, VAL, SHAPE).coalesce()
    X = _as(coo, layout)
    parts = {"coo": lambda: (X.indices(),), "csr": lambda: (X.crow_indices(), X.col_indices()),
             "csc": lambda: (X.ccol_indices(), X.row_indices())}[layout]()
    make = getattr(S, f"sparse_{layout}_tensor")
    A = make(*parts, X.values().numpy(), SHAPE, requires_grad=True)
    assert A.requires_grad and A.is_leaf and A.grad is None
    T.sum(S.mm(A, T.asarray(B)) * T.asarray(G)).backward()
    g = A.grad
    assert g.layout == layout and g.nnz == A.nnz and g.dtype is T.float64
    stored = _np(coo) != 0
    want = (G @ B.T) * stored
    np.testing.assert_allclose(_np(g), want, rtol=1e-12, atol=1e-12)
    A.grad = None
    assert A.grad is None
    with pytest.raises(TypeError, match="grad: only None can be assigned"):
        A.grad = g
    torch = pytest.importorskip("torch")
    tl = {"coo": torch.sparse_coo, "csr": torch.sparse_csr, "csc": torch.sparse_csc}[layout]
    tA = torch.tensor(_np(coo)).to_sparse(layout=tl).requires_grad_()
    ((tA @ torch.tensor(B)) * torch.tensor(G)).sum().backward()
    tg = tA.grad.to_dense() if tA.grad.layout != torch.strided else tA.grad
    np.testing.assert_allclose(_np(g), tg.numpy() * stored, rtol=1e-12, atol=1e-12)


def test_requires_grad_argument_and_method():
    v = T.asarray(VAL)
    A = S.sparse_coo_tensor(IDX, v, SHAPE, requires_grad=True)
    assert not v.requires_grad and A.values() is not v   # a leaf of its own, v's memory
    v[0] = 10.0
    assert A.values().numpy()[0] == 10.0
    w = T.tensor(VAL, requires_grad=True)
    A = S.sparse_coo_tensor(IDX, w * 2, SHAPE, requires_grad=True)
    assert A.is_leaf and A.requires_grad   # cut from w's history, as a PyTorch factory's
    B = S.sparse_coo_tensor(IDX, VAL, SHAPE).requires_grad_()
    assert B.requires_grad and B.is_leaf
    T.sum(B.to_dense()).backward()
    np.testing.assert_array_equal(B.grad.values().numpy(), np.ones(7))
    assert not B.grad.is_coalesced()   # the leaf's own (uncoalesced) pattern
    with pytest.raises(TypeError, match="sparse_coo_tensor: only floating-point and complex values"):
        S.sparse_coo_tensor(IDX, np.arange(7), SHAPE, dtype=T.int64, requires_grad=True)
    with pytest.raises(TypeError, match="sparse_csr_tensor: only floating-point"):
        S.sparse_csr_tensor([0, 1], [0], T.asarray([True]), (1, 1), requires_grad=True)


def test_is_coalesced_argument_and_inferred_compressed_sizes():
    ok = dict(indices=[[0, 1], [1, 0]], values=[1.0, 2.0], size=(3, 3))
    assert not S.sparse_coo_tensor(**ok, is_coalesced=False).is_coalesced()
    assert S.sparse_coo_tensor(**ok, is_coalesced=True).is_coalesced()
    assert S.sparse_coo_tensor(**ok).is_coalesced()
    with pytest.raises(ValueError, match="sparse_coo_tensor: is_coalesced=True but the indices"):
        S.sparse_coo_tensor(IDX, VAL, SHAPE, is_coalesced=True)
    # sizes inferred as PyTorch infers them
    assert S.sparse_csr_tensor([0, 1, 1, 2], [3, 0], [1.0, 2.0]).shape == (3, 4)
    assert S.sparse_csc_tensor([0, 1, 1, 2], [3, 0], [1.0, 2.0]).shape == (4, 3)
    assert S.sparse_csr_tensor([0, 0], [], []).shape == (1, 0)
    with pytest.raises(ValueError, match="sparse_csr_tensor: crow_indices must be 1-D of length rows"):
        S.sparse_csr_tensor([[0, 1]], [0], [1.0])
    torch = pytest.importorskip("torch")
    assert tuple(torch.sparse_csr_tensor([0, 1, 1, 2], [3, 0], [1.0, 2.0]).shape) == (3, 4)
    assert tuple(torch.sparse_csc_tensor([0, 1, 1, 2], [3, 0], [1.0, 2.0]).shape) == (4, 3)


# ---------------------------------------------------------------- sparse @ sparse

IDXB = np.array([[0, 2, 1, 3, 1, 0, 0], [1, 1, 0, 2, 0, 2, 1]])   # (0, 1) and (1, 0) twice
VALB = np.array([1.5, -2.0, 0.5, 4.0, 1.0, 3.0, -0.25])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sparse_at_sparse_matches_torch(layout):
    A = _as(S.sparse_coo_tensor(IDX, VAL, SHAPE), layout)
    B = _as(S.sparse_coo_tensor(IDXB, VALB, (4, 3)), layout)
    ref = _dense() @ _dense(IDXB, VALB, (4, 3))
    for P in (A @ B, S.mm(A, B), A @ B.to_sparse_coo()):
        assert S.is_sparse(P) and P.layout == layout and P.shape == (4, 3)
        np.testing.assert_allclose(_np(P), ref, rtol=1e-12, atol=1e-12)
    if layout == "coo":
        assert (A @ B).is_coalesced()
    np.testing.assert_allclose(_np(A.t() @ A), _dense().T @ _dense(), rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    ta = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), SHAPE)
    tb = torch.sparse_coo_tensor(torch.tensor(IDXB), torch.tensor(VALB), (4, 3))
    np.testing.assert_allclose(_np(A @ B), torch.sparse.mm(ta, tb).to_dense().numpy(), rtol=1e-12)


def test_sparse_at_sparse_dtypes_empty_and_errors():
    Ab = S.sparse_coo_tensor(IDX, T.asarray(VAL > 0), SHAPE)
    Bb = S.sparse_coo_tensor(IDXB, T.asarray(VALB > 0), (4, 3))
    P = Ab @ Bb
    assert P.dtype is T.bool_
    np.testing.assert_array_equal(_np(P), (_np(Ab).astype(int) @ _np(Bb).astype(int)) > 0)
    Ai = S.sparse_coo_tensor(IDX, T.asarray(np.arange(7), dtype=T.int64), SHAPE)
    Bi = S.sparse_coo_tensor(IDXB, T.asarray(np.arange(7), dtype=T.int64), (4, 3))
    np.testing.assert_array_equal(_np(Ai @ Bi), _np(Ai) @ _np(Bi))
    Z = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (4, 3))
    A = S.sparse_coo_tensor(IDX, VAL, SHAPE)
    assert (A @ Z).nnz == 0 and (A @ Z).shape == (4, 3)
    E = S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (4, 0))
    assert (E @ S.sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0), (0, 5))).shape == (4, 5)
    # a hypersparse inner dimension costs the entries only (no (10**12 + 1,) CSR rows of B)
    big = 10 ** 12
    H1 = S.sparse_coo_tensor([[0, 1, 1], [5, big - 1, 7]], [1.0, 2.0, 3.0], (2, big))
    H2 = S.sparse_coo_tensor([[5, 7, big - 1, 3], [0, 1, 1, 0]], [10.0, 20.0, 30.0, 40.0], (big, 2))
    P = H1 @ H2
    assert P.indices().numpy().tolist() == [[0, 1], [0, 1]] and P.values().numpy().tolist() == [10, 120]
    with pytest.raises(ValueError, match="mm: shape mismatch: sparse \\(4, 4\\) @ sparse \\(3, 4\\)"):
        A @ Z.t()
    with pytest.raises(TypeError, match="mm: dtypes differ: float64 @ int64"):
        A @ Ai


@pytest.mark.parametrize("layout", ("coo", "csr"))
def test_sparse_at_sparse_gradients(layout):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    G = rng.standard_normal((4, 3))
    va, vb = T.tensor(VAL, requires_grad=True), T.tensor(VALB, requires_grad=True)

    def f(a, b):
        A = _as(S.sparse_coo_tensor(IDX, a, SHAPE), layout)
        return (A @ _as(S.sparse_coo_tensor(IDXB, b, (4, 3)), layout)).to_dense()
    ga, gb = autograd.grad(T.sum(f(va, vb) * T.asarray(G)), [va, vb])
    ta, tb = torch.tensor(VAL, requires_grad=True), torch.tensor(VALB, requires_grad=True)
    tA = torch.sparse_coo_tensor(torch.tensor(IDX), ta, SHAPE)
    tB = torch.sparse_coo_tensor(torch.tensor(IDXB), tb, (4, 3))
    tga, tgb = torch.autograd.grad((torch.sparse.mm(tA, tB).to_dense() * torch.tensor(G)).sum(), [ta, tb])
    np.testing.assert_allclose(ga.numpy(), tga.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), tgb.numpy(), rtol=1e-12, atol=1e-12)
    assert autograd.gradcheck(f, (va, vb))
    out, tan = autograd.jvp(f, (T.asarray(VAL), T.asarray(VALB)), (T.asarray(VAL * 0 + 1),
                                                                    T.asarray(VALB * 0)))
    np.testing.assert_allclose(tan.numpy(), _dense(val=np.ones(7)) @ _dense(IDXB, VALB, (4, 3)),
                               rtol=1e-12)


# ---------------------------------------------------------------- unary functions, powers

@pytest.mark.parametrize("layout", LAYOUTS)
def test_zero_keeping_unary_functions_match_torch(layout):
    from tensor.sparse._elementwise import UNARY
    vals = np.array([-0.3, -0.2, 0.4, 0.25, 0.9, -0.6, 0.1])   # |.| < 1 (asin, atanh, erfinv)
    A = _as(S.sparse_coo_tensor(IDX, vals, SHAPE), layout)
    # duplicates are summed first: sin(0.5 + 1.5), not sin(0.5) + sin(1.5) (PyTorch's too)
    B = _as(S.sparse_coo_tensor(IDX, VAL, SHAPE), layout)
    np.testing.assert_allclose(_np(B.sin()), np.sin(_dense()), rtol=1e-12)
    np.testing.assert_allclose(_np(abs(B)), np.abs(_dense()), rtol=1e-12)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(_np(B.sqrt().square()), np.sqrt(_dense()) ** 2, rtol=1e-12)
    C = S.sparse_csr_tensor([0, 2, 2], [1, 1], [-1.0, -2.0], (2, 2))   # a repeated column
    np.testing.assert_allclose(_np(C.abs()), [[0, 3], [0, 0]])
    assert A.isnan().dtype is T.bool_ and not _np(A.isnan()).any()
    torch = pytest.importorskip("torch")
    tA = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(vals), SHAPE)
    for name in UNARY:
        R = getattr(A, name)()
        assert R.layout == layout, name
        ref = getattr(torch, name)(tA).to_dense().numpy()
        np.testing.assert_allclose(_np(R), ref, rtol=1e-12, atol=1e-15, err_msg=name)


@pytest.mark.parametrize("layout", ("coo", "csc"))
def test_powers_and_their_gradients(layout):
    A = _as(S.sparse_coo_tensor(IDX, VAL, SHAPE), layout)
    for p in (2, 0.5, np.float32(3.0), T.asarray(1.5)):
        with np.errstate(invalid="ignore"):
            want = _dense() ** float(p)
        np.testing.assert_allclose(_np(A ** p), np.where(_dense() != 0, want, 0), rtol=1e-6)
    np.testing.assert_allclose(_np(A.pow(2)), _dense() ** 2, rtol=1e-12)
    for p, err in ((0, ValueError), (-1, ValueError), (True, TypeError), ("2", TypeError),
                   (T.ones(2), TypeError)):
        with pytest.raises(err, match="pow: "):
            A ** p
    v = T.tensor(np.abs(VAL) + 0.5, requires_grad=True)
    assert autograd.gradcheck(
        lambda w: (_as(S.sparse_coo_tensor(IDX, w, SHAPE), layout) ** 1.5).sqrt().sin().values(), (v,))
