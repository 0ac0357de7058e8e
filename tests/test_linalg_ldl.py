"""tensor.linalg's ldl_factor / ldl_factor_ex / ldl_solve (LAPACK sytrf / hetrf format, as
PyTorch's), polar, matrix_sqrth and vecdot (hunt 9): values against PyTorch (when installed)
and NumPy identities, derivatives against central differences and PyTorch, bad input. Small
sizes: the "cuda" device is the emulator without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T

rng = np.random.default_rng(1234)


def _np(x):
    return x.to_device("cpu").numpy()


def _rand(shape, dtype=np.float64):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _full(a, herm):
    """The symmetric / Hermitian matrix LAPACK sees in a's lower triangle."""
    low = np.tril(a, -1)
    dg = np.diagonal(a, 0, -2, -1)
    if herm:
        dg = dg.real
    up = (np.conj(low) if herm else low).swapaxes(-1, -2)
    return low + up + dg[..., None] * np.eye(a.shape[-1])


def _expand(LD, piv, herm):
    """A from LAPACK's compact (LD, pivots), one matrix: L = P(1) L(1) P(2) L(2) ..., A = L D L^T."""
    n = LD.shape[-1]
    adj = np.conj if herm else (lambda x: x)
    M = np.eye(n, dtype=LD.dtype)
    D = np.zeros((n, n), dtype=LD.dtype)
    k = 0
    while k < n:
        w = 1 if piv[k] > 0 else 2
        p = abs(int(piv[k])) - 1
        P = np.eye(n)
        s = k + w - 1
        P[[s, p]] = P[[p, s]]
        Lk = np.eye(n, dtype=LD.dtype)
        Lk[k + w:, k:k + w] = LD[k + w:, k:k + w]
        D[k:k + w, k:k + w] = np.tril(LD[k:k + w, k:k + w])
        if w == 2:
            D[k, k + 1] = adj(LD[k + 1, k])
        M = M @ P @ Lk
        k += w
    return M @ D @ adj(M).T


CASES = [(np.float64, False), (np.float32, False), (np.complex128, False), (np.complex128, True),
         (np.complex64, True)]


# ---------------------------------------------------------------- ldl_factor

@pytest.mark.parametrize("dtype, herm", CASES)
@pytest.mark.parametrize("shape", [(1, 1), (6, 6), (2, 3, 9, 9)])
def test_ldl_factor_reconstructs_and_solves(dtype, herm, shape):
    a = _rand(shape, dtype)
    LD, piv, info = T.linalg.ldl_factor_ex(T.asarray(a), hermitian=herm)
    assert LD.dtype.name == np.dtype(dtype).name and piv.dtype == T.int32 and info.dtype == T.int32
    assert LD.shape == shape and piv.shape == shape[:-1] and info.shape == shape[:-2]
    assert not _np(info).any()
    ld, pv = _np(LD).reshape((-1,) + shape[-2:]), _np(piv).reshape(-1, shape[-1])
    full = _full(a, herm).reshape(ld.shape)
    single = dtype in (np.float32, np.complex64)
    tol = 1e-4 if single else 1e-11
    for i in range(ld.shape[0]):
        assert np.allclose(np.triu(ld[i], 1), 0)
        assert np.abs(_expand(ld[i].astype(complex), pv[i], herm) - full[i]).max() <= tol * 10
    b = _rand(shape[:-1] + (3,), dtype)
    x = _np(T.linalg.ldl_solve(LD, piv, T.asarray(b), hermitian=herm))
    assert np.abs(_full(a, herm) @ x - b).max() <= tol * 100


@pytest.mark.parametrize("dtype, herm", CASES)
def test_ldl_factor_equals_torch(dtype, herm):
    torch = pytest.importorskip("torch")
    for shape in [(2, 2), (5, 5), (4, 7, 7), (30, 30)]:
        a = _rand(shape, dtype)
        LD, piv, info = T.linalg.ldl_factor_ex(T.asarray(a), hermitian=herm)
        tLD, tp, ti = torch.linalg.ldl_factor_ex(torch.from_numpy(a), hermitian=herm)
        assert np.array_equal(_np(piv), tp.numpy()) and np.array_equal(_np(info), ti.numpy())
        tol = 1e-4 if np.dtype(dtype).itemsize <= 8 else 1e-12
        np.testing.assert_allclose(_np(LD), tLD.numpy(), rtol=tol, atol=tol)
        # ldl_solve with torch's factors
        b = _rand(shape[:-1] + (2,), dtype)
        x = T.linalg.ldl_solve(T.asarray(tLD.numpy()), T.asarray(tp.numpy()), T.asarray(b), hermitian=herm)
        tx = torch.linalg.ldl_solve(tLD, tp, torch.from_numpy(b), hermitian=herm).numpy()
        np.testing.assert_allclose(_np(x), tx, rtol=tol * 100, atol=tol * 100)


def test_ldl_forced_2x2_blocks_and_lower_triangle_only():
    # zero diagonal: every pivot is a 2x2 block; the upper triangle (garbage here) is not read
    z = _rand((8, 8))
    z = np.tril(z + z.T, -1) + np.triu(np.full((8, 8), 99.0), 1)
    LD, piv = T.linalg.ldl_factor(T.asarray(z))
    pv = _np(piv)
    assert (pv < 0).any()
    assert np.abs(_expand(_np(LD), pv, False) - _full(z, False)).max() < 1e-12
    x = _np(T.linalg.ldl_solve(LD, piv, T.asarray(np.eye(8))))
    np.testing.assert_allclose(x, np.linalg.inv(_full(z, False)), atol=1e-10)


def test_ldl_singular_info_and_errors():
    a = np.stack([np.diag([1.0, 0.0, 0.0]), np.zeros((3, 3)), np.diag([0.0, 0.0, 1.0]), np.eye(3)])
    LD, piv, info = T.linalg.ldl_factor_ex(T.asarray(a))
    assert _np(info).tolist() == [2, 1, 1, 0]          # LAPACK's (PyTorch's) codes
    assert _np(piv).tolist() == [[1, 2, 3]] * 4
    np.testing.assert_array_equal(_np(LD), a)
    with pytest.raises(T.linalg.LinAlgError, match=r"ldl_factor_ex: \(Batch element 0\).*D\[1, 1\]"):
        T.linalg.ldl_factor_ex(T.asarray(a), check_errors=True)
    # PyTorch's ldl_factor fails an internal assert here; this one names the zero block
    with pytest.raises(T.linalg.LinAlgError, match=r"ldl_factor: .*exactly zero"):
        T.linalg.ldl_factor(T.asarray(a[0]))
    # a solve with a zero block divides by zero, as LAPACK's (no crash, no exception)
    x = _np(T.linalg.ldl_solve(LD[0], piv[0], T.asarray(np.ones((3, 1)))))
    assert not np.isfinite(x[1:]).all()


def test_ldl_nan_and_inf_do_not_spread():
    # caught (in this module's first version): the symmetric matrix was assembled with
    # diag * eye, so a NaN / inf on the diagonal became NaN across its row: L[1, 0] was NaN
    # (PyTorch / LAPACK: pivots [2, 2], LD [[2, 0], [0.5, nan]], info 2)
    LD, piv, info = T.linalg.ldl_factor_ex(T.asarray([[np.nan, 1.0], [1.0, 2.0]]))
    assert _np(piv).tolist() == [2, 2] and int(info) == 2
    assert _np(LD)[:, 0].tolist() == [2.0, 0.5] and np.isnan(_np(LD)[1, 1])
    LD, piv, info = T.linalg.ldl_factor_ex(T.asarray([[np.inf, 1.0], [1.0, 2.0]]))
    assert _np(LD).tolist() == [[np.inf, 0.0], [0.0, 2.0]] and int(info) == 0


def test_ldl_hermitian_reads_real_diagonal():
    a = np.array([[1j, 5.0], [3.0, 1 - 2j]])
    LD, piv = T.linalg.ldl_factor(T.asarray(a), hermitian=True)
    np.testing.assert_allclose(_np(LD), [[0, 0], [3, 1]])
    assert _np(piv).tolist() == [-2, -2]
    LD, piv = T.linalg.ldl_factor(T.asarray(a))       # complex symmetric: the diagonal as is
    np.testing.assert_allclose(_np(LD), [[1 - 2j, 0], [0.6 + 1.2j, -1.8 - 2.6j]])
    assert _np(piv).tolist() == [2, 2]


def test_ldl_empty_int_and_not_differentiable():
    LD, piv = T.linalg.ldl_factor(T.zeros((2, 0, 0)))
    assert LD.shape == (2, 0, 0) and piv.shape == (2, 0)
    assert T.linalg.ldl_solve(LD, piv, T.zeros((2, 0, 3))).shape == (2, 0, 3)
    LD, piv = T.linalg.ldl_factor(T.asarray([[2, 1], [1, 3]]))      # integers: float64
    assert LD.dtype == T.float64 and _np(LD).tolist() == [[2.0, 0.0], [0.5, 2.5]]
    x = T.asarray([[2.0, 1.0], [1.0, 3.0]])
    x.requires_grad = True
    with pytest.raises(NotImplementedError, match="ldl_factor.*not differentiable"):
        T.linalg.ldl_factor(x)
    with pytest.raises(ValueError, match="square"):
        T.linalg.ldl_factor(T.zeros((3, 2)))


# ---------------------------------------------------------------- ldl_solve

def test_ldl_solve_broadcast_and_gradient():
    # (PyTorch's ldl_solve crashes with a segmentation fault on broadcast batches)
    a = _rand((3, 4, 4))
    a = a + a.swapaxes(-1, -2)
    LD, piv = T.linalg.ldl_factor(T.asarray(a))
    b = _rand((2, 1, 4, 2))
    x = _np(T.linalg.ldl_solve(LD, piv, T.asarray(b)))
    assert x.shape == (2, 3, 4, 2)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), atol=1e-10)
    # gradient in B: A^-1 G (A symmetric)
    bt = T.asarray(b[0, 0])
    bt.requires_grad = True
    G = _rand((4, 2))
    (T.linalg.ldl_solve(LD[0], piv[0], bt) * T.asarray(G)).sum().backward()
    np.testing.assert_allclose(_np(bt.grad), np.linalg.solve(a[0], G), atol=1e-10)


def test_ldl_solve_bad_input():
    a = _rand((4, 4))
    LD, piv = T.linalg.ldl_factor(T.asarray(a + a.T))
    B = T.asarray(_rand((4, 2)))
    with pytest.raises(TypeError, match="pivots must be integers"):
        T.linalg.ldl_solve(LD, piv.astype(T.float32), B)
    with pytest.raises(ValueError, match=r"pivots must have shape LD.shape\[:-1\]"):
        T.linalg.ldl_solve(LD, piv[:3], B)
    for bad in ([1, 2, 3, 9], [1, 2, 3, 0], [1, -7, -7, 4]):
        with pytest.raises(ValueError, match=r"1 <= \|pivot\| <= 4"):
            T.linalg.ldl_solve(LD, T.asarray(bad, dtype=T.int32), B)
    # PyTorch reads past the matrix here and returns garbage
    with pytest.raises(ValueError, match="2x2 block at the last column"):
        T.linalg.ldl_solve(LD, T.asarray([1, 2, 3, -4], dtype=T.int32), B)
    with pytest.raises(ValueError, match="with 4 rows"):
        T.linalg.ldl_solve(LD, piv, T.asarray(_rand((3, 2))))
    with pytest.raises(ValueError, match="with 4 rows"):
        T.linalg.ldl_solve(LD, piv, T.asarray(_rand((4,))))
    with pytest.raises(ValueError, match="square"):
        T.linalg.ldl_solve(LD[:, :3], piv, B)
    with pytest.raises(ValueError, match="do not broadcast"):
        T.linalg.ldl_solve(T.stack([LD] * 3), T.stack([piv] * 3), T.asarray(_rand((2, 4, 2))))


# ---------------------------------------------------------------- polar, matrix_sqrth

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 3, 6, 2)])
def test_polar_identities(dtype, shape):
    a = _rand(shape, dtype)
    U, H = T.linalg.polar(T.asarray(a))
    assert U.shape == shape and H.shape == shape[:-2] + (shape[-1],) * 2
    assert U.dtype.name == H.dtype.name == np.dtype(dtype).name
    u, h = _np(U).astype(complex), _np(H).astype(complex)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    eye = np.eye(shape[-1])
    assert np.abs(np.conj(u.swapaxes(-1, -2)) @ u - eye).max() < tol
    assert np.abs(u @ h - a).max() < tol * 10
    assert np.abs(h - np.conj(h.swapaxes(-1, -2))).max() < tol
    assert np.linalg.eigvalsh(h).min() > -tol
    torch = pytest.importorskip("torch")
    tU, tH = torch.linalg.polar(torch.from_numpy(a))
    np.testing.assert_allclose(_np(U), tU.numpy(), atol=tol * 10)
    np.testing.assert_allclose(_np(H), tH.numpy(), atol=tol * 10)


def _central(f, a, G, eps=1e-6):
    """d/da of sum(Re(conj(G) * f(a))) by central differences (real a)."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        g[idx] = (np.sum(np.real(np.conj(G) * (f(a + d) - f(a - d))))) / (2 * eps)
    return g


def _grad(f, a, G):
    x = T.asarray(a)
    x.requires_grad = True
    (f(x) * T.asarray(G)).sum().backward()
    return _np(x.grad)


@pytest.mark.parametrize("a", [rng.standard_normal((4, 3)), np.eye(3), np.eye(4)[:, :3] * 2.0,
                               np.diag([2.0, 2.0, 1.0])])
def test_polar_gradients(a):
    # repeated singular values (identity, scaled orthonormal columns): an SVD composition
    # divides by s_i^2 - s_j^2 there and gives NaN; PyTorch's is finite, so is this one's
    G1, G2 = rng.standard_normal(a.shape), rng.standard_normal((a.shape[1],) * 2)
    gU = _grad(lambda x: T.linalg.polar(x).U, a, G1)
    gH = _grad(lambda x: T.linalg.polar(x).H, a, G2)
    fU = _central(lambda m: _np(T.linalg.polar(T.asarray(m)).U), a, G1)
    fH = _central(lambda m: _np(T.linalg.polar(T.asarray(m)).H), a, G2)
    np.testing.assert_allclose(gU, fU, atol=1e-7)
    np.testing.assert_allclose(gH, fH, atol=1e-7)


def test_polar_and_sqrth_gradients_vs_torch_second_order():
    torch = pytest.importorskip("torch")
    import autograd as ag
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    G = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    x = T.asarray(a)
    x.requires_grad = True
    U, H = T.linalg.polar(x)
    (T.real(U * T.asarray(G)).sum() + T.real(H * T.asarray(G)).sum()).backward()
    tx = torch.from_numpy(a).requires_grad_()
    tU, tH = torch.linalg.polar(tx)
    ((tU * torch.from_numpy(G)).real.sum() + (tH * torch.from_numpy(G)).real.sum()).backward()
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), atol=1e-10)
    # second derivatives of polar (the Hessian of a loss of U and H) and of matrix_sqrth
    from autograd import func
    ar, G1, G2 = a.real[:, :2].copy(), G.real[:, :2].copy(), G.real[:2, :2].copy()

    def loss(x, P, conv):
        U, H = P(x)
        return (U * conv(G1)).sum() + (H ** 2 * conv(G2)).sum()

    hs = _np(func.hessian(lambda x: loss(x, T.linalg.polar, T.asarray))(T.asarray(ar)))
    ths = torch.autograd.functional.hessian(lambda x: loss(x, torch.linalg.polar, torch.from_numpy),
                                            torch.from_numpy(ar))
    np.testing.assert_allclose(hs, ths.numpy(), atol=1e-10)
    Gr = G.real

    def grads(s, create):
        x = T.asarray(s)
        x.requires_grad = True
        (g,) = ag.grad((T.linalg.matrix_sqrth(x) * T.asarray(Gr)).sum(), x, create_graph=create)
        return x, g

    s = a.real @ a.real.T + np.eye(3)
    x, g = grads(s, True)
    (gg,) = ag.grad((g * T.asarray(Gr)).sum(), x)
    tx = torch.from_numpy(s).requires_grad_()
    (tg,) = torch.autograd.grad((torch.linalg.matrix_sqrth(tx) * torch.from_numpy(Gr)).sum(), tx,
                                create_graph=True)
    (tgg,) = torch.autograd.grad((tg * torch.from_numpy(Gr)).sum(), tx)
    np.testing.assert_allclose(_np(g), tg.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(_np(gg), tgg.numpy(), atol=1e-9)


def test_matrix_sqrth_second_derivative_at_repeated_eigenvalue():
    # PyTorch's second derivative is NaN here (through eigh); this one's matches central
    # differences of the (exact) gradient along symmetric directions
    import autograd as ag
    Gr = rng.standard_normal((3, 3))

    def grads(s, create):
        x = T.asarray(s)
        x.requires_grad = True
        (g,) = ag.grad((T.linalg.matrix_sqrth(x) * T.asarray(Gr)).sum(), x, create_graph=create)
        return x, g

    s = np.diag([2.0, 2.0, 5.0])
    x, g = grads(s, True)
    (gg,) = ag.grad((g * T.asarray(Gr)).sum(), x)
    Gs = (Gr + Gr.T) / 2
    f = _central(lambda m: _np(grads((m + m.T) / 2, False)[1]), s, Gs)
    np.testing.assert_allclose(_np(gg), (f + f.T) / 2, atol=1e-6)


def test_matrix_sqrth_values_and_gradient():
    a = _rand((2, 4, 4))
    s = a @ a.swapaxes(-1, -2) + np.eye(4)
    X = _np(T.linalg.matrix_sqrth(T.asarray(np.tril(s))))     # the lower triangle is read
    np.testing.assert_allclose(X @ X, s, atol=1e-10)
    assert np.linalg.eigvalsh(X).min() > 0
    # negative eigenvalues are taken as zero (PyTorch's)
    np.testing.assert_allclose(_np(T.linalg.matrix_sqrth(T.asarray(np.diag([1.0, -1.0, 4.0])))),
                               np.diag([1.0, 0.0, 2.0]))
    # gradient (Hermitian, as eigh's) vs central differences along symmetric directions
    G = rng.standard_normal((4, 4))
    g = _grad(T.linalg.matrix_sqrth, 2.0 * np.eye(4), G)
    assert np.allclose(g, g.T)
    Gs = (G + G.T) / 2   # <g, E> for a symmetric E equals <sym part, E>
    f = _central(lambda m: _np(T.linalg.matrix_sqrth(T.asarray((m + m.T) / 2))), 2.0 * np.eye(4), Gs)
    np.testing.assert_allclose(g, (f + f.T) / 2, atol=1e-7)


def test_polar_sqrth_bad_input_and_empty():
    with pytest.raises(ValueError, match=r"polar: .*m >= n.*\(2, 3\)"):
        T.linalg.polar(T.zeros((2, 3)))
    with pytest.raises(TypeError, match="polar: expected a floating point"):
        T.linalg.polar(T.ones((3, 2), dtype=T.int64))
    with pytest.raises(ValueError, match="polar: expected a matrix"):
        T.linalg.polar(T.zeros((3,)))
    with pytest.raises(ValueError, match="matrix_sqrth: expected square"):
        T.linalg.matrix_sqrth(T.zeros((3, 2)))
    with pytest.raises(TypeError, match="matrix_sqrth: expected a floating point"):
        T.linalg.matrix_sqrth(T.eye(2, dtype=T.int64))
    U, H = T.linalg.polar(T.zeros((3, 0)))
    assert U.shape == (3, 0) and H.shape == (0, 0)
    assert T.linalg.matrix_sqrth(T.zeros((2, 0, 0))).shape == (2, 0, 0)


# ---------------------------------------------------------------- vecdot, matmul

def test_linalg_vecdot_dim_broadcast_conj():
    x, y = _rand((3, 4), np.complex128), _rand((2, 1, 4), np.complex128)
    r = _np(T.linalg.vecdot(T.asarray(x), T.asarray(y)))        # the batch dims broadcast
    np.testing.assert_allclose(r, (np.conj(x) * y).sum(-1))
    with pytest.raises(ValueError, match="lengths 1 != 4"):     # the contracted ones do not: the
        T.linalg.vecdot(T.asarray(x[:, :1]), T.asarray(y))      # array API's rule (PyTorch's would)
    y = _rand((3, 4), np.complex128)
    r = _np(T.linalg.vecdot(T.asarray(y), T.asarray(y), dim=0))
    np.testing.assert_allclose(r, (np.abs(y) ** 2).sum(0))
    assert _np(T.linalg.vecdot(T.asarray(y), T.asarray(y), axis=0)).shape == (4,)
    with pytest.raises(TypeError, match="not both"):
        T.linalg.vecdot(T.asarray(y), T.asarray(y), dim=0, axis=0)
    with pytest.raises(ValueError, match="vecdot"):
        T.linalg.vecdot(T.asarray(x[:2]), T.asarray(y))
    np.testing.assert_allclose(_np(T.linalg.matmul(T.asarray(y.T), T.asarray(y))), y.T @ y)


# ---------------------------------------------------------------- both devices

def test_ldl_polar_sqrth_on_device(device):
    a = _rand((2, 4, 4))
    a[0] = np.eye(4)[::-1]                                  # 2x2 blocks with zero diagonals
    A = T.asarray(a, device=device)
    LD, piv, info = T.linalg.ldl_factor_ex(A)
    assert LD.device == A.device and not _np(info).any()
    ref = _full(a, False)
    for i in range(2):
        assert np.abs(_expand(_np(LD)[i], _np(piv)[i], False) - ref[i]).max() < 1e-12
    b = _rand((2, 4, 1))
    np.testing.assert_allclose(_np(T.linalg.ldl_solve(LD, piv, T.asarray(b, device=device))),
                               np.linalg.solve(ref, b), atol=1e-10)
    c = np.array([[0.1j, 0, 0], [2 + 1j, 0, 0], [0.5, 0.3j, 1.0]])   # (lower triangle read)
    # hermitian: its diagonal 0, 0, 1 and a large c[1, 0]: a 2x2 block first (a fixed matrix: a
    # random one only usually gives one)
    LD, piv = T.linalg.ldl_factor(T.asarray(c, device=device), hermitian=True)
    assert _np(piv)[0] < 0
    assert np.abs(_expand(_np(LD), _np(piv), True) - _full(c, True)).max() < 1e-12
    x = _np(T.linalg.ldl_solve(LD, piv, T.asarray(np.eye(3), device=device), hermitian=True))
    np.testing.assert_allclose(x, np.linalg.inv(_full(c, True)), atol=1e-10)
    m = _rand((3, 2), np.complex128)
    U, H = T.linalg.polar(T.asarray(m, device=device))
    np.testing.assert_allclose(_np(U) @ _np(H), m, atol=1e-12)
    s = T.asarray(np.eye(2) * 4.0, device=device)
    s.requires_grad = True
    T.linalg.matrix_sqrth(s).sum().backward()
    np.testing.assert_allclose(_np(s.grad), np.full((2, 2), 0.25), atol=1e-12)
