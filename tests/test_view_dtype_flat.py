"""x.view(dtype) (the bits read as another dtype), x.flat (NumPy's flat iterator),
angle(deg=True) and linalg.svd's NumPy arguments (compute_uv, hermitian), against NumPy."""
import numpy as np
import pytest

import tensor as T

DTYPES = ["float32", "float64", "int8", "uint8", "int16", "int32", "int64", "complex64", "complex128"]


@pytest.mark.parametrize("src", ["float32", "int16", "complex128", "uint8"])
def test_view_dtype_matches_numpy(device, src):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 16)) * 100).astype(src)
    t = T.asarray(a, device=device)
    for d in DTYPES:
        r = np.dtype(src).itemsize / np.dtype(d).itemsize
        if r < 1 and 16 % int(1 / r):
            continue
        want = a.view(d)
        got = t.view(getattr(T, d))
        assert got.shape == want.shape and got.dtype.name == d
        assert np.array_equal(got.numpy().view(np.uint8), want.view(np.uint8))   # bit for bit
        assert np.array_equal(t.view(d).numpy().view(np.uint8), want.view(np.uint8))   # by name


def test_view_dtype_strided_views_and_writes():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = T.asarray(a.copy())
    v = t[1:, 2:].view(T.int32)                 # row stride 6, offset 8: same size is any layout
    assert np.array_equal(v.numpy(), a[1:, 2:].view(np.int32))
    assert np.array_equal(t[:, ::2].T.view(T.int32).numpy(), a[:, ::2].T.view(np.int32))
    w = t[:, 2:].view(T.float64)                # offset 2, row stride 6: both even
    assert np.array_equal(w.numpy(), a[:, 2:].view(np.float64))
    b = t[:, :4].view(T.uint8)                  # a narrower dtype: the last axis 4x as long
    assert b.shape == (4, 16) and np.array_equal(b.numpy(), a[:, :4].copy().view(np.uint8))
    t.view(T.int32)[0, 0] = 1065353216          # writes go into t: 1.0f's bits
    assert t[0, 0].item() == 1.0
    with pytest.raises(ValueError, match="stride 1"):
        t.T.view(T.float16)
    with pytest.raises(ValueError, match="multiples of 2"):
        t[:, 1:].view(T.float64)
    with pytest.raises(ValueError, match="0-d"):
        T.tensor(1.0).view(T.float32)
    with pytest.raises(TypeError, match="not both"):
        t.view((24,), dtype=T.int32)
    assert t.view(-1).shape == (24,) and t.view(6, 4).shape == (6, 4)   # shapes as before


def test_view_dtype_is_not_differentiable_and_tracks_versions():
    x = T.ones(4, requires_grad=True)
    y = x * 2
    assert not y.view(T.int32).requires_grad and not x.view(T.float32).requires_grad
    z = T.exp(x)            # saves its output
    out = z.sum()
    z.detach().view(T.int32)[0] = 0   # a write through a dtype view bumps the shared version
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.backward()


def test_read_only_stays_read_only():
    t = T.broadcast_to(T.ones(3), (2, 3))
    with pytest.raises(ValueError):
        t.view(T.int64)[0, 0] = 1


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_flat_matches_numpy(device, layout):
    def make(m):
        a = m.arange(30.0).reshape(5, 6) if m is np else T.arange(30.0, device=device).reshape(5, 6)
        return {"contiguous": a, "transposed": a.T, "sliced": a[::2, 1::2]}[layout]
    a, t = make(np), make(T)
    assert len(t.flat) == a.size and t.flat.base is t
    assert [v.item() for v in t.flat] == list(a.flat)
    mask = np.array([True, False] * (a.size // 2) + [True] * (a.size % 2))
    for key in (3, -1, slice(1, 7, 2), [0, 4, 2], mask):
        assert np.array_equal(t.flat[key].numpy(), a.flat[key])
    a.flat[[1, 5, 7]] = [-1, -2]              # NumPy repeats a short value array
    t.flat[[1, 5, 7]] = [-1, -2]
    a.flat[2:9:3] = 100
    t.flat[2:9:3] = 100
    assert np.array_equal(t.numpy(), a)
    a.flat = [7, 8, 9, 10]
    t.flat = [7, 8, 9, 10]
    assert np.array_equal(t.numpy(), a)
    assert np.array_equal(np.asarray(t.flat), a.flatten())
    assert np.array_equal(t.flat.copy().numpy(), a.flatten())


def test_angle_deg():
    z = np.array([1 + 1j, -1j, -2 + 0j, 0j])
    assert np.allclose(T.angle(T.asarray(z), deg=True).numpy(), np.angle(z, deg=True))
    assert np.allclose(T.asarray(z).angle().numpy(), np.angle(z))
    assert np.allclose(T.angle(T.asarray([-1.0, 2.0]), deg=True).numpy(), [180.0, 0.0])
    x = T.asarray(z[:3], dtype=T.complex128).requires_grad_()
    T.angle(x, deg=True).sum().backward()      # d angle / d z (PyTorch's convention) times 180/pi
    y = T.asarray(z[:3], dtype=T.complex128).requires_grad_()
    T.angle(y).sum().backward()
    assert np.allclose(x.grad.numpy(), y.grad.numpy() * 180 / np.pi)


def test_svd_numpy_arguments():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 5, 3))
    assert np.allclose(T.linalg.svd(T.asarray(a), compute_uv=False).numpy(),
                       np.linalg.svd(a, compute_uv=False))
    u, s, vh = T.linalg.svd(T.asarray(a), False)          # full_matrices positionally, as NumPy
    assert u.shape == (2, 5, 3) and np.allclose((u.numpy() * s.numpy()[:, None]) @ vh.numpy(), a)
    for h in (a[:, :3] + a[:, :3].transpose(0, 2, 1),
              (a[:, :3] - a[:, :3].transpose(0, 2, 1)) * 1j + np.eye(3)):
        u, s, vh = T.linalg.svd(T.asarray(h), hermitian=True)
        nu, ns, nvh = np.linalg.svd(h, hermitian=True)
        assert np.allclose(s.numpy(), ns)
        assert np.allclose((u.numpy() * s.numpy()[:, None]) @ vh.numpy(), h)
        assert np.allclose(np.abs(np.conj(u.numpy()).transpose(0, 2, 1) @ nu), np.eye(3), atol=1e-8)
        assert np.allclose(T.linalg.svd(T.asarray(h), compute_uv=False, hermitian=True).numpy(), ns)
    with pytest.raises(ValueError, match="driver"):
        T.linalg.svd(T.asarray(a), driver="lapack")


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_numpy_put_writes_in_place(mode):
    """np.put(x, ind, v) on a tensor: NumPy's in-place put (it passes mode=; before, our
    PyTorch-style put refused the keyword), through a transposed view too."""
    ind = [0, 2, -1] if mode == "raise" else [0, 2, 7, -1, -9]
    for make in (lambda m: m.zeros(5), lambda m: m.zeros((2, 3)).T):
        a, t = make(np), make(T)
        assert np.put(a, ind, [5, 6], mode=mode) is None and np.put(t, ind, [5, 6], mode=mode) is None
        assert np.array_equal(t.numpy(), a)
    with pytest.raises(IndexError, match="out of bounds"):
        np.put(T.zeros(5), [9], [1])
    with pytest.raises(ValueError, match="mode"):
        T.put(T.zeros(2), [0], [1.0], mode="bounce")
    out = T.put(T.zeros(3), T.tensor([1]), T.tensor([2.0]))   # PyTorch's, without mode: a copy
    assert out.tolist() == [0.0, 2.0, 0.0]


def test_reshape_order_f_is_differentiable():
    import autograd
    rng = np.random.default_rng(0)
    x = T.asarray(rng.standard_normal((2, 3, 4))).requires_grad_()
    w = T.arange(24.0).reshape(4, 6)
    y = x.reshape((4, 6), order="F")
    assert np.array_equal(y.detach().numpy(), x.detach().numpy().reshape((4, 6), order="F"))
    (y * w).sum().backward()   # the gradient goes back in F order: w's elements, regrouped
    assert np.array_equal(x.grad.numpy(), w.numpy().reshape((2, 3, 4), order="F"))
    assert autograd.gradcheck(lambda t: (T.sin(t.reshape((4, 6), order="F")) * w).sum(), (x,))
    assert autograd.gradcheck(lambda t: (T.sin(T.ravel(t, order="F")) * T.arange(24.0)).sum(), (x,))
    with pytest.raises(NotImplementedError, match="order='A'"):
        x.reshape((4, 6), order="A")


def test_view_as_bool_needs_0_1_bytes(device):
    """A byte other than 0 / 1 seen as bool would count as its value in sums and casts (the
    review found .sum() == 28 for arange(8) where NumPy gives 7): refused by name."""
    m = T.asarray(np.array([0, 1, 1, 0], dtype=np.uint8), device=device)
    b = m.view(T.bool)
    assert b.dtype is T.bool and b.sum().item() == 2 and b.tolist() == [False, True, True, False]
    with pytest.raises(ValueError, match="not all 0 or 1"):
        T.arange(8, dtype=T.uint8, device=device).view(T.bool)
    assert T.zeros(0, dtype=T.int8, device=device).view(T.bool).shape == (0,)
