"""Lead's fixes of the twelfth session."""
import numpy as np
import pytest

import tensor as T


def test_numpy_reads_our_dtypes():
    assert np.dtype(T.float32) == np.float32 and np.dtype(T.complex64) == np.complex64
    assert np.zeros(2, T.int8).dtype == np.int8
    assert np.array([1, 2], dtype=T.uint16).dtype == np.uint16
    with pytest.raises(TypeError):
        np.dtype(T.bfloat16)   # no NumPy twin
    assert T.float32.dtype == np.float32


def test_numpy_text_forms_of_a_tensor():
    x = T.arange(6.0).reshape(2, 3)[:, ::2]
    assert np.array_repr(x) == "Tensor([[0., 2.],\n        [3., 5.]])"
    assert np.array_str(x) == np.array_str(x.numpy())


@pytest.mark.parametrize("make", [lambda: T.zeros(3), lambda: T.ones(3), lambda: T.full((2,), 3.0),
                                  lambda: T.tensor([1.0, 2.0]), lambda: T.eye(2), lambda: T.linspace(0, 1, 3),
                                  lambda: T.ones(2).astype(T.int32), lambda: T.ones(2).clone(),
                                  lambda: T.ones((2, 2)).T.copy(), lambda: T.arange(3.0)])
def test_a_new_tensor_has_version_0(make):
    t = make()
    assert t._version == 0   # PyTorch's: no in-place write yet
    t.add_(1)
    assert t._version == 1


def test_torch_transpose_of_two_dims_grad_and_jvp():
    torch = pytest.importorskip("torch")
    import autograd
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    x = T.tensor(a, requires_grad=True)
    w = np.arange(24.0).reshape(4, 3, 2)
    (x.transpose(-1, 0) * T.tensor(w)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (tx.transpose(-1, 0) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    _, t = autograd.jvp(lambda v: v.transpose(0, 1), (T.tensor(a),), (T.tensor(a * 2),))
    np.testing.assert_array_equal(t.numpy(), np.swapaxes(a * 2, 0, 1))


def test_torch_dtype_names_and_randint_high_size():
    assert (T.float, T.double, T.half, T.int, T.long, T.short) == (T.float32, T.float64, T.float16, T.int32,
                                                                  T.int64, T.int16)
    assert (T.cfloat, T.cdouble, T.single, T.intc, T.int_) == (T.complex64, T.complex128, T.float32, T.int32,
                                                               T.int64)
    assert T.zeros(2, dtype=T.long).dtype is T.int64
    r = T.randint(5, (3, 2))   # PyTorch's randint(high, size)
    assert r.shape == (3, 2) and r.dtype is T.int64 and 0 <= int(r.min()) and int(r.max()) < 5
    r = T.randint(3, 7, (4,))
    assert r.shape == (4,) and 3 <= int(r.min()) and int(r.max()) < 7
    r = T.randint(0, [3, 10])   # NumPy's high array
    assert r.shape == (2,) and int(r[0]) < 3
    import tensor.amp
    assert tensor.amp.GradScaler is T.GradScaler


def test_torch_save_load_order(tmp_path):
    import nn
    m = nn.Linear(3, 2)
    p = tmp_path / "ckpt.pt"
    T.save(m.state_dict(), p)   # PyTorch's torch.save(obj, f)
    sd = T.load(p)
    assert set(sd) == {"weight", "bias"}
    np.testing.assert_array_equal(sd["weight"].numpy(), m.weight.detach().numpy())
    m2 = nn.Linear(3, 2)
    m2.load_state_dict(T.load(str(p), map_location="cpu", weights_only=True))
    np.testing.assert_array_equal(m2.bias.detach().numpy(), m.bias.detach().numpy())
    assert set(nn.load(p)) == {"weight", "bias"}   # one format: nn.load reads it too
    import io
    buf = io.BytesIO()
    T.save({"step": 3, "w": T.ones(2)}, buf)
    buf.seek(0)
    back = T.load(buf)
    assert back["step"] == 3 and back["w"].tolist() == [1.0, 1.0]
    # NumPy's order and files keep NumPy's meaning
    T.save(tmp_path / "a.npy", T.arange(3.0))
    assert T.load(tmp_path / "a.npy").tolist() == [0.0, 1.0, 2.0]
    T.savez(tmp_path / "b.npz", x=T.ones(2))
    assert T.load(tmp_path / "b.npz")["x"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="expected a dict"):
        T.save(m, tmp_path / "m.pt")   # a whole module: its state_dict is what saves


def test_torch_norm_keywords_and_apply_map():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((3, 4, 5))
    x, t = T.tensor(a), torch.tensor(a)
    for kw in (dict(ord=3, dim=1), dict(dim=(0, 2), keepdim=True), dict(ord=1, dim=-1, keepdim=False)):
        np.testing.assert_allclose(T.linalg.vector_norm(x, **kw).numpy(),
                                   torch.linalg.vector_norm(t, **kw).numpy(), rtol=1e-12)
    for kw in (dict(ord="nuc", dim=(0, 2)), dict(ord=2, dim=(2, 0), keepdim=True),
               dict(ord="fro", keepdim=True), dict(ord=1, dim=(1, 2))):
        np.testing.assert_allclose(T.linalg.matrix_norm(x, **kw).numpy(),
                                   torch.linalg.matrix_norm(t, **kw).numpy(), rtol=1e-10)
    with pytest.raises(TypeError, match="both"):
        T.linalg.vector_norm(x, axis=1, dim=1)
    y = T.arange(6.0).reshape(2, 3).T   # a strided view, written in place
    y.apply_(lambda v: v * v)
    assert y.tolist() == [[0.0, 9.0], [1.0, 16.0], [4.0, 25.0]]
    z = T.zeros((2, 3)).map_(T.tensor([1.0, 2.0, 3.0]), lambda a, b: a + 2 * b)
    assert z.tolist() == [[2.0, 4.0, 6.0]] * 2
    with pytest.raises(TypeError, match="callable"):
        z.apply_(3)


def test_module_compile_and_torch_compile_keywords():
    import nn
    T.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = T.randn((5, 3)).astype(T.float32)
    want = m(x).detach().numpy()
    seen = []
    m.register_forward_hook(lambda mod, a, out: seen.append(out.shape))
    assert m.compile(mode="max-autotune", fullgraph=True) is None
    with T.no_grad():   # (a forward whose output requires grad runs eagerly: compile the whole step)
        for _ in range(3):
            np.testing.assert_array_equal(m(x).numpy(), want)
    assert len(seen) == 3 and m.forward.stats()["replays"] >= 1   # hooks on every call; replayed
    assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    f = lambda v: v * 2   # noqa: E731
    assert T.compile(f, disable=True) is f
    assert T.compile(backend="eager", dynamic=True)(f)(T.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="mode or options"):
        T.compile(f, mode="default", options={})


def test_matmul_of_two_sparse_matrices():
    a, b = np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[0.0, 3.0], [4.0, 0.0]])
    A, B = T.tensor(a).to_sparse(), T.tensor(b).to_sparse_csr()
    C = T.matmul(A, B)   # (A @ B worked; T.matmul refused a sparse right operand)
    np.testing.assert_array_equal(C.to_dense().numpy(), a @ b)
    with pytest.raises(TypeError, match="sparse"):
        T.matmul(A, B, out=T.empty((2, 2)))


def test_star_import_leaves_python_types_alone():
    ns = {}
    exec("from tensor import *", ns)   # noqa: S102
    assert not {"int", "float", "bool", "complex"} & set(ns)
    assert {"zeros", "float32", "long", "linalg", "Tensor"} <= set(ns)


def test_module_share_memory_and_tensor_pin_memory_keyword():
    import multiprocessing as mp

    import nn
    m = nn.Linear(3, 2)
    w = m.weight
    assert m.share_memory() is m and m.weight is w and m.weight.is_shared() and m.bias.is_shared()
    if "fork" in mp.get_all_start_methods():
        ctx = mp.get_context("fork")
        p = ctx.Process(target=_fill_weight, args=(m,))
        p.start()
        p.join(60)
        assert p.exitcode == 0
        assert m.weight.detach().tolist() == [[7.0] * 3] * 2   # the child's write reached us
    if T.cuda.is_available():
        t = T.tensor([1.0, 2.0], pin_memory=True)
        assert t.is_pinned() and t.tolist() == [1.0, 2.0]
    else:
        with pytest.raises(RuntimeError):
            T.tensor([1.0, 2.0], pin_memory=True)


def _fill_weight(m):
    with T.no_grad():
        m.weight.fill_(7.0)


def test_torch_size_keyword_of_the_factories():
    assert T.zeros(size=(2, 3)).shape == (2, 3) and T.ones(size=[2]).shape == (2,)
    assert T.empty(size=(1, 2)).shape == (1, 2) and T.full(size=(2,), fill_value=3.0).tolist() == [3.0, 3.0]
    assert T.rand(size=(2, 2)).shape == (2, 2) and T.randn(size=3).shape == (3,)
    assert T.zeros(2, 3).shape == T.zeros((2, 3)).shape == T.zeros(shape=(2, 3)).shape == (2, 3)
    for bad in (lambda: T.zeros(2, size=(3,)), lambda: T.full((2,), 1.0, size=(2,)),
                lambda: T.rand(2, size=(2,)), lambda: T.full((2,))):
        with pytest.raises(TypeError, match="shape"):
            bad()


def test_to_sparse_sparse_dim():
    x = T.tensor([[0.0, 1.0], [2.0, 0.0]])
    assert x.to_sparse(2).to_dense().tolist() == x.tolist()
    assert x.to_sparse(sparse_dim=2).to_dense().tolist() == x.tolist()
    with pytest.raises(ValueError, match="sparse_dim 1"):
        x.to_sparse(1)


def test_partition_is_differentiable_both_modes(device):
    import autograd
    a = np.array([[0.3, 0.9, 0.1, 0.5], [0.7, 0.2, 0.8, 0.4]])
    x = T.tensor(a, device=device, requires_grad=True)
    assert autograd.gradcheck(lambda t: T.partition(t, 1, axis=1), (x,))
    _, tan = autograd.jvp(lambda t: T.partition(t, [0, 3], axis=1), (T.tensor(a, device=device),),
                          (T.tensor(a * 10, device=device),))
    got = T.partition(T.tensor(a, device=device), [0, 3], axis=1).numpy()
    np.testing.assert_allclose(tan.numpy(), got * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_vector_products_on_views(device, dtype):
    rng = np.random.default_rng(3)
    m = (rng.standard_normal((40, 300)) * 10).astype(dtype)
    t = T.asarray(m, device=device)
    for v_np, v in ((m[3], t[3]), (m[3, ::-1], t[3, ::-1]), (m[:, 7], t[:, 7]), (m[5, ::3], t[5, ::3])):
        tol = dict(rtol=1e-5) if dtype == np.float32 else dict(rtol=1e-12)
        np.testing.assert_allclose((v @ v).numpy(), v_np @ v_np, **tol)
        w_np = m[:, : v_np.shape[0]] if v_np.shape[0] <= 300 else None
        np.testing.assert_allclose((T.asarray(w_np, device=device) @ v).numpy(), w_np @ v_np, **tol)
        np.testing.assert_allclose((v @ T.asarray(w_np.T, device=device)).numpy(), v_np @ w_np.T, **tol)
    assert (t[0] @ t[0]).shape == () and (t @ t[0]).shape == (40,)


def test_vector_product_gradients():
    import autograd
    a = T.tensor(np.random.default_rng(0).standard_normal(300), requires_grad=True)
    M = T.tensor(np.random.default_rng(1).standard_normal((5, 300)), requires_grad=True)
    assert autograd.gradcheck(lambda x, y: x @ y, (a, a[::-1].detach().requires_grad_()))
    assert autograd.gradcheck(lambda m, x: m @ x, (M, a))


def test_mask_aliasing_the_destination_is_read_before_writing(device):
    m = np.array([[[0, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0]],
                  [[1, 0, 1, 1], [0, 0, 1, 0], [1, 0, 0, 1]]], bool)
    t = T.asarray(m.copy(), device=device)
    x = T.flip(t)   # a reversed view of the mask itself
    x[t] = False    # every position the original mask names is written (NumPy's streaming loop
    want = m.copy()   # skips those its own earlier writes cleared: the fuzzer's reference copies)
    np.flip(want)[m.copy()] = False
    np.testing.assert_array_equal(t.numpy(), want)
