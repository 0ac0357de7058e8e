"""tensor.sparse against NumPy dense references (and scipy.sparse where installed): COO / CSR
construction, coalesce, conversions, SpMM / SpMV / SDDMM on random patterns (empty rows,
duplicate COO entries, one huge row, 0 nnz, 1x1), gradients (gradcheck in float64, forward
mode) and bad input; on both devices (CUDA: cuda_src/sparse.cuh on the emulator or a GPU, the
warp-per-row and the nnz-balanced kernels)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

S = T.sparse
pytestmark = pytest.mark.usefixtures("device")


def _pattern(rng, m, n, density, dup=0, huge_row=None):
    """(rows, cols, vals, dense): a random pattern with empty rows, dup duplicated entries and
    optionally row huge_row full."""
    mask = rng.random((m, n)) < density
    mask[rng.integers(0, m, max(1, m // 4))] = False      # empty rows
    if huge_row is not None:
        mask[huge_row] = True
    r, c = np.nonzero(mask)
    if dup and r.size:
        k = rng.integers(0, r.size, dup)
        r, c = np.concatenate([r, r[k]]), np.concatenate([c, c[k]])
    p = rng.permutation(r.size)
    r, c = r[p], c[p]
    v = rng.standard_normal(r.size)
    dense = np.zeros((m, n))
    np.add.at(dense, (r, c), v)
    return r, c, v, dense


def _coo(r, c, v, shape, dtype=T.float64):
    return S.sparse_coo_tensor(np.stack([r, c]), T.asarray(v, dtype=dtype), shape)


def _close(got, want, tol=1e-12):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert np.abs(got - want).max(initial=0.0) <= tol * scale, np.abs(got - want).max()


CASES = [  # (m, k, density, duplicates, huge row)
    (37, 29, 0.15, 9, None),
    (64, 700, 0.01, 3, 5),      # one huge row: the nnz-balanced kernel on CUDA
    (5, 4, 0.0, 0, None),       # 0 nnz
    (1, 1, 1.0, 0, None),       # 1x1
]


@pytest.mark.parametrize("case", CASES)
def test_coo_csr_conversions_and_spmm(case):
    m, k, density, dup, huge = case
    rng = np.random.default_rng(m * 7 + k)
    r, c, v, dense = _pattern(rng, m, k, density, dup, huge)
    A = _coo(r, c, v, (m, k))
    assert A.layout == "coo" and A.shape == (m, k) and A.nnz == r.size and A.dtype is T.float64
    _close(A.to_dense(), dense)
    C = A.coalesce()
    assert C.is_coalesced() and C.nnz == len(set(zip(r.tolist(), c.tolist())))
    idx = C.indices().numpy()
    keys = idx[0] * k + idx[1]
    assert np.all(np.diff(keys) > 0)                      # sorted row-major, no duplicates
    _close(C.to_dense(), dense)
    R = A.to_sparse_csr()
    assert R.layout == "csr" and R.crow_indices().shape == (m + 1,)
    _close(R.to_dense(), dense)
    _close(R.to_sparse_coo().to_dense(), dense)
    _close(A.t().to_dense(), dense.T)
    _close(R.t().to_dense(), dense.T)
    B = rng.standard_normal((k, 33))
    for X in (A, R):
        _close(X @ T.asarray(B), dense @ B)
        _close(S.mm(X, T.asarray(B[:, 0].copy())), dense @ B[:, 0])
    b32 = B.astype(np.float32)   # float32: straight from NumPy CSR arrays (no other kernels)
    R32 = S.sparse_csr_tensor(R.crow_indices().numpy(), R.col_indices().numpy(),
                              R.values().numpy().astype(np.float32), (m, k))
    assert R32.dtype is T.float32 and R._csr_parts()[3] == (huge is not None)
    _close(R32 @ T.asarray(b32), dense.astype(np.float32) @ b32, 1e-5)


def test_coalesce_sums_duplicates_deterministically():
    idx = np.array([[1, 0, 1, 1, 0], [2, 1, 2, 2, 1]])
    A = S.sparse_coo_tensor(idx, T.asarray([1.0, 2.0, 3.0, 4.0, 5.0]), (2, 3))
    assert not A.is_coalesced()
    C = A.coalesce()
    assert C.indices().tolist() == [[0, 1], [1, 2]] and C.values().tolist() == [7.0, 8.0]
    assert C.coalesce() is C
    assert S.sparse_coo_tensor(np.array([[0, 1], [0, 0]]), T.asarray([1.0, 2.0])).shape == (2, 1)


def test_from_dense_and_sddmm():
    rng = np.random.default_rng(3)
    r, c, v, dense = _pattern(rng, 20, 15, 0.2)
    X = T.asarray(dense)
    for s, layout in ((S.from_dense(X), "coo"), (S.from_dense(X, "csr"), "csr"),
                      (X.to_sparse(), "coo"), (X.to_sparse_csr(), "csr")):
        assert s.layout == layout and s.nnz == np.count_nonzero(dense)
        _close(s.to_dense(), dense)
    a, b = rng.standard_normal((20, 6)), rng.standard_normal((6, 15))
    Ssp = S.from_dense(X, "csr")
    out = S.sampled_addmm(Ssp, T.asarray(a), T.asarray(b), beta=0.5, alpha=2.0)
    mask = dense != 0
    _close(out.to_dense(), np.where(mask, 0.5 * dense + 2.0 * (a @ b), 0.0))
    assert out.crow_indices().tolist() == Ssp.crow_indices().tolist()
    out = S.sampled_addmm(S.from_dense(X, "coo"), T.asarray(a), T.asarray(b), beta=0.0)
    _close(out.to_dense(), np.where(mask, a @ b, 0.0))


def test_gradients_of_mm_and_sampled_addmm():
    rng = np.random.default_rng(4)
    r, c, v, dense = _pattern(rng, 6, 5, 0.4, dup=2)
    vals = T.tensor(v, requires_grad=True)
    B = T.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    idx = np.stack([r, c])

    def f(vals, B):
        return S.mm(S.sparse_coo_tensor(idx, vals, (6, 5)), B)
    assert autograd.gradcheck(f, (vals, B))
    crow = np.searchsorted(np.sort(r), np.arange(7))
    order = np.argsort(r, kind="stable")
    cv = T.tensor(v[order], requires_grad=True)
    assert autograd.gradcheck(
        lambda w, B: S.sparse_csr_tensor(crow, c[order], w, (6, 5)) @ B[:, 0], (cv, B))
    # the values' gradient keeps the pattern: d/dv sum(A @ B) = B.sum(1)[col]
    y = f(vals, B).sum()
    gv, gb = autograd.grad(y, [vals, B])
    _close(gv, B.detach().numpy().sum(1)[c])
    _close(gb, np.repeat(dense.sum(0)[:, None], 3, 1))
    assert autograd.gradgradcheck(f, (vals, B))
    # forward mode
    tv, tb = rng.standard_normal(v.shape), rng.standard_normal((5, 3))
    out, tan = autograd.jvp(f, (T.asarray(v), B.detach()), (T.asarray(tv), T.asarray(tb)))
    td = np.zeros((6, 5))
    np.add.at(td, (r, c), tv)
    _close(tan, td @ B.detach().numpy() + dense @ tb)
    # SDDMM
    Ssp = S.from_dense(T.asarray(dense), "csr")
    a = T.tensor(rng.standard_normal((6, 4)), requires_grad=True)
    b = T.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    sv = T.tensor(Ssp.values().numpy(), requires_grad=True)
    crow2, col2 = Ssp.crow_indices(), Ssp.col_indices()

    def g(sv, a, b):
        s = S.sparse_csr_tensor(crow2, col2, sv, (6, 5))
        return S.sampled_addmm(s, a, b, beta=0.7, alpha=1.3).values()
    assert autograd.gradcheck(g, (sv, a, b))


def test_spmm_deterministic_and_huge_row():
    rng = np.random.default_rng(5)
    m, k = 40, 3000
    r, c, v, dense = _pattern(rng, m, k, 0.002, 0, huge_row=7)
    R = _coo(r, c, v, (m, k)).to_sparse_csr()
    B = T.asarray(rng.standard_normal((k, 40)))
    y1, y2 = (R @ B).numpy(), (R @ B).numpy()
    assert np.array_equal(y1, y2)
    _close(y1, dense @ B.numpy())


def test_device_round_trip_and_repr():
    A = _coo(np.array([0, 1]), np.array([1, 0]), np.array([1.0, 2.0]), (2, 2))
    assert "SparseCOO" in repr(A) and "nnz=2" in repr(A)
    B = A.to_device("cpu")
    assert B.device.type == "cpu"
    _close(B.to_dense(), np.array([[0.0, 1.0], [2.0, 0.0]]))
    R = A.to_sparse_csr()
    assert "SparseCSR" in repr(R) and R.to_device("cpu").nnz == 2


def test_bad_input_raises_before_kernels():
    v = T.asarray([1.0, 2.0])
    with pytest.raises(IndexError, match="sparse_coo_tensor"):
        S.sparse_coo_tensor(np.array([[0, 5], [0, 0]]), v, (3, 3))
    with pytest.raises(IndexError, match="sparse_coo_tensor"):
        S.sparse_coo_tensor(np.array([[0, -1], [0, 0]]), v, (3, 3))
    with pytest.raises(ValueError, match="sparse_coo_tensor"):
        S.sparse_coo_tensor(np.array([[0, 1, 2], [0, 0, 0]]), v, (3, 3))
    with pytest.raises(ValueError, match="non-decreasing"):
        S.sparse_csr_tensor(np.array([0, 2, 1, 2]), np.array([0, 1]), v, (3, 3))
    with pytest.raises(ValueError, match="start at 0"):
        S.sparse_csr_tensor(np.array([1, 1, 2, 2]), np.array([0, 1]), v, (3, 3))
    with pytest.raises(ValueError, match="crow_indices"):
        S.sparse_csr_tensor(np.array([0, 2]), np.array([0, 1]), v, (3, 3))
    with pytest.raises(IndexError, match="column index 3"):
        S.sparse_csr_tensor(np.array([0, 1, 2, 2]), np.array([0, 3]), v, (3, 3))
    A = S.sparse_csr_tensor(np.array([0, 1, 2, 2]), np.array([0, 1]), v, (3, 3))
    with pytest.raises(ValueError, match="mm: shape mismatch"):
        A @ T.ones((4, 2), dtype=T.float64)
    with pytest.raises(TypeError, match="mm: dtypes differ"):
        A @ T.asarray(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="sampled_addmm: shape mismatch"):
        S.sampled_addmm(A, T.ones((3, 2), dtype=T.float64), T.ones((2, 4), dtype=T.float64))


def test_scipy_interop():
    sps = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(6)
    M = sps.random(30, 20, density=0.1, format="csr", random_state=1)
    R = S.from_scipy(M)
    assert R.layout == "csr"
    _close(R.to_dense(), M.toarray())
    C = S.from_scipy(M.tocoo())
    assert C.layout == "coo"
    assert abs(S.to_scipy(R) - M).max() == 0 and abs(S.to_scipy(C) - M).max() == 0
    B = rng.standard_normal((20, 8))
    _close(R @ T.asarray(B), M @ B)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_arithmetic_with_dense_sparse_and_scalars(layout):
    """PyTorch's rules: sparse (+|-) dense, either side, is dense; sparse + sparse is sparse (in
    the left operand's layout); sparse * scalar, dense or a broadcast row and sparse / scalar
    keep the pattern; all against NumPy, and differentiable in the values and the dense side."""
    rng = np.random.default_rng(12)
    r, c, v, A = _pattern(rng, 5, 4, 0.4, dup=2)
    s = _coo(r, c, v, (5, 4))
    s = s if layout == "coo" else s.to_sparse_csr()
    D = rng.standard_normal((5, 4))
    d, row = T.asarray(D), T.asarray(D[0])
    cases = {"s + d": (s + d, A + D), "d + s": (d + s, D + A), "d - s": (d - s, D - A),
             "s - d": (s - d, A - D), "s + s": (s + s, 2 * A), "s - s": (s - s, 0 * A),
             "s * 2": (s * 2, 2 * A), "2.5 * s": (2.5 * s, 2.5 * A), "-s": (-s, -A),
             "s / 4": (s / 4, A / 4), "s * d": (s * d, A * D), "d * s": (d * s, D * A),
             "s * row": (s * row, A * D[0]), "s * 0-d": (s * T.asarray(3.0), 3 * A)}
    for name, (got, want) in cases.items():
        sparse_result = name not in ("s + d", "d + s", "d - s", "s - d")
        assert S.is_sparse(got) == sparse_result, name
        if sparse_result:
            assert got.layout == layout, name
            if name != "s + s" and name != "s - s":   # the pattern is kept (values rescaled)
                assert got.nnz == s.nnz, name
            got = got.to_dense()
        _close(got, want)
    # dtype promotion: float32 + float64 sparse, float64 dense + float32 sparse
    s32 = _coo(r, c, v, (5, 4), T.float32)
    assert (s32 + _coo(r, c, v, (5, 4))).dtype is T.float64 and (d + s32).dtype is T.float64
    # gradients through the values and the dense operand
    vals = T.tensor(v, requires_grad=True)
    Dg = T.tensor(D, requires_grad=True)
    idx = np.stack([r, c])

    def f(vals, Dg):
        sp = S.sparse_coo_tensor(idx, vals, (5, 4))
        sp = sp if layout == "coo" else sp.to_sparse_csr()
        return ((sp * Dg) / 3 - sp).to_dense() * (Dg - sp)
    assert autograd.gradcheck(f, (vals, Dg))
    # dense @ sparse (and a vector on the left)
    _close(d.mT @ s, D.T @ A)
    _close(T.asarray(D[:, 0]) @ s, D[:, 0] @ A)
    assert autograd.gradcheck(lambda vals, Dg: Dg.mT @ S.sparse_coo_tensor(idx, vals, (5, 4)),
                              (vals, Dg))
    # bad input names the op
    # sparse * sparse: the entries both store (tests/test_sparse_hunt.py); not a quotient
    _close((s * s).to_dense(), A * A)
    with pytest.raises(TypeError, match="true_divide: a sparse matrix divides by a scalar only"):
        s / s
    with pytest.raises(ValueError, match="multiply: a dense operand of shape \\(3, 4\\)"):
        s * T.ones((3, 4), dtype=T.float64)
    with pytest.raises(ValueError, match="divides by a scalar only"):
        s / d
    with pytest.raises(ValueError, match="add: sparse operands differ"):
        s + _coo(r, c, v, (6, 4))
    with pytest.raises(TypeError):
        s + "x"
