"""The lead's fixes of the sixth hunt's session, each test naming what failed before."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T


def test_diff_takes_n_and_axis_positionally_and_dim(device):
    """diff(x, 2) raised TypeError (n and axis were keyword-only); NumPy and PyTorch take them
    positionally in this order, and PyTorch names the axis dim."""
    a = np.arange(24.0).reshape(4, 6) ** 2
    x = T.asarray(a, device=device)
    np.testing.assert_array_equal(T.diff(x, 2).numpy(), np.diff(a, 2))
    np.testing.assert_array_equal(T.diff(x, 1, 0).numpy(), np.diff(a, 1, 0))
    np.testing.assert_array_equal(T.diff(x, dim=0, n=2).numpy(), np.diff(a, 2, axis=0))
    np.testing.assert_array_equal(x.diff(1, 0).numpy(), np.diff(a, 1, 0))
    with pytest.raises(TypeError, match="diff: give axis or dim"):
        T.diff(x, axis=0, dim=1)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_copy_and_sparse(device, indexing):
    """meshgrid had neither copy= (NumPy's writable grids) nor sparse=."""
    xs = [np.arange(3.0), np.arange(2.0) + 10, np.arange(4.0) - 5]
    ts = [T.asarray(v, device=device) for v in xs]
    for sparse in (False, True):
        got = T.meshgrid(*ts, indexing=indexing, sparse=sparse, copy=True)
        want = np.meshgrid(*xs, indexing=indexing, sparse=sparse, copy=True)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w)
    g = T.meshgrid(*ts, indexing=indexing, copy=True)
    g[0][0, 0, 0] = 99.0                   # writable, one element of its own memory
    assert int((g[0].numpy() == 99.0).sum()) == 1 and ts[0][0].item() == 0.0
    views = T.meshgrid(*ts, indexing=indexing)
    with pytest.raises(ValueError, match="read-only"):
        views[0][0, 0, 0] = 1.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_rms_and_instance_norm_compute_in_float32(device, dtype):
    """float16 rms_norm / instance_norm of values near 300 returned all zeros (the mean of x**2
    overflowed float16 to inf); rms_norm's default eps was the 16-bit dtype's (bfloat16's 7.8e-3,
    PyTorch's is float32's), which made it 3-5x less accurate."""
    from nn import functional as F
    a = np.full((4, 64), 300.0, np.float32)
    a[:, ::2] = -300.0
    a[1] *= 1e-3                       # rows where float16's eps would be visible
    x = T.asarray(a, device=device).astype(dtype)
    y = F.rms_norm(x, (64,))
    assert y.dtype.name == dtype
    xf = x.astype(T.float32).to("cpu").numpy().astype(np.float64)
    want = xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + np.finfo(np.float32).eps)
    got = y.to("cpu").astype(T.float32).numpy()
    np.testing.assert_allclose(got, want, rtol=2 ** -7 if dtype == "bfloat16" else 2 ** -10)
    z = F.instance_norm(x[None])
    np.testing.assert_array_equal(np.abs(z.to("cpu").astype(T.float32).numpy()), 1.0)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(xf).to(getattr(torch, dtype))
    ty = torch.nn.functional.rms_norm(tx, (64,)).float().numpy()
    np.testing.assert_array_equal(got, ty)


def test_checkpoint_takes_pytorchs_keywords():
    """checkpoint(fn, x, use_reentrant=False) passed use_reentrant on to fn (TypeError: f() got
    an unexpected keyword argument); PyTorch code passes it everywhere."""
    from autograd import checkpoint, checkpoint_sequential
    x = T.asarray(np.linspace(-1, 1, 5), dtype=T.float64).requires_grad_()
    grads = []
    for kw in ({}, {"use_reentrant": False}, {"use_reentrant": True, "determinism_check": "none",
                                              "debug": False}):
        x.grad = None
        y = checkpoint(lambda a, k=2.0: T.sin(a) * k, x, k=3.0, **kw)
        y.sum().backward()
        grads.append(x.grad.numpy())
        x.grad = None
        checkpoint_sequential([T.sin, T.exp], 2, x, use_reentrant=False).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.cos(x.numpy()) * np.exp(np.sin(x.numpy())))
    for g in grads:
        np.testing.assert_allclose(g, 3.0 * np.cos(x.numpy()))
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(T.sin, x, determinism_check="strict")
    with pytest.raises(TypeError, match="context_fn"):
        checkpoint(T.sin, x, context_fn=lambda: None)


def test_grid_sample_under_autocast_runs_in_float32(device):
    """Under autocast a bfloat16 input met a float32 grid (from float32 parameters) and
    grid_sample raised TypeError; it runs in float32 there, as PyTorch's CPU autocast."""
    from nn import functional as F
    rng = np.random.default_rng(3)
    img = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32)
    x = T.asarray(img, device=device).astype(T.bfloat16)
    g = T.asarray(grid, device=device)
    with T.autocast(device, dtype=T.bfloat16):
        y = F.grid_sample(x, g, align_corners=False)
    assert y.dtype is T.float32
    want = F.grid_sample(x.astype(T.float32), g, align_corners=False)
    np.testing.assert_array_equal(y.to("cpu").numpy(), want.to("cpu").numpy())


def test_addr_promotes_mixed_dtypes(device):
    """addr(f32, bf16, f32) raised "expected operands of one dtype" (PyTorch promotes: addr is
    elementwise, unlike mm / addmm, which both refuse mixed dtypes)."""
    v1 = T.asarray([1.0, 2.0, 3.0], device=device).astype(T.bfloat16)
    v2 = T.asarray([1.0, -1.0], device=device, dtype=T.float32)
    inp = T.ones((3, 2), device=device, dtype=T.float32)
    r = T.addr(inp, v1, v2, beta=2, alpha=3)
    assert r.dtype is T.float32
    np.testing.assert_array_equal(r.to("cpu").numpy(), 2 + 3 * np.outer([1, 2, 3], [1, -1]))
    with pytest.raises(TypeError, match="mm: expected operands of one dtype"):
        T.addmm(inp, T.ones((3, 3), device=device, dtype=T.bfloat16), inp)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_batch_and_group_norm_compute_in_float32(device, dtype):
    """float16 batch_norm / group_norm of values near 300 returned all zeros (the float16
    variance, 9e4, overflowed to inf); the statistics and the normalization run in float32 and
    round once, as PyTorch's."""
    from nn import functional as F
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((4, 6, 5)) * 300).astype(np.float32)
    x = T.asarray(a, device=device).astype(dtype)
    xf = x.astype(T.float32).to("cpu").numpy().astype(np.float64)
    m, v = xf.mean((0, 2), keepdims=True), xf.var((0, 2), keepdims=True)
    bn = F.batch_norm(x, None, None, training=True)
    assert bn.dtype.name == dtype
    tol = 2 ** -7 if dtype == "bfloat16" else 2 ** -10
    np.testing.assert_allclose(bn.to("cpu").astype(T.float32).numpy(), (xf - m) / np.sqrt(v + 1e-5),
                               rtol=tol, atol=tol)
    g = xf.reshape(4, 2, 15)
    want = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)).reshape(a.shape)
    gn = F.group_norm(x, 2)
    assert gn.dtype.name == dtype
    np.testing.assert_allclose(gn.to("cpu").astype(T.float32).numpy(), want, rtol=tol, atol=tol)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(xf).to(getattr(torch, dtype))
    np.testing.assert_allclose(bn.to("cpu").astype(T.float32).numpy(),
                               torch.nn.functional.batch_norm(tx, None, None, training=True).float().numpy(),
                               rtol=tol, atol=tol)


def test_conv_modules_follow_autocast(device):
    """Under autocast nn.Conv3d, the ConvTranspose modules and grouped Conv2d returned float32
    (their forward skipped the autocast-declared functions; PyTorch gives the region's dtype)."""
    import nn
    mods = [nn.Conv1d(2, 4, 3), nn.Conv2d(2, 4, 3, groups=2), nn.Conv3d(2, 4, 2),
            nn.ConvTranspose1d(2, 4, 3), nn.ConvTranspose2d(2, 4, 3, groups=2),
            nn.ConvTranspose3d(2, 4, 2)]
    for m in mods:
        m = m.to(device)
        x = T.ones((1, 2) + (4,) * m._nd, device=device, dtype=T.float32)
        with T.autocast(device, dtype=T.bfloat16):
            y = m(x)
        assert y.dtype is T.bfloat16, type(m).__name__
        want = m(x.astype(T.bfloat16).astype(T.float32))
        np.testing.assert_allclose(y.astype(T.float32).to("cpu").numpy(), want.to("cpu").numpy(),
                                   rtol=3e-2, atol=3e-2)
        y.astype(T.float32).sum().backward()
        assert m.weight.grad.dtype is T.float32


def test_complex_zero_scalars_keep_their_signs(device):
    """The scalar-operand cache keyed complex scalars by value, and 0j == -0-0j: full(n, 0j)
    after a full(n, complex(-0.0, -0.0)) filled with -0-0j (found by the array API suite's
    test_repeat, flaky because it depended on what ran before)."""
    for first, then in ((complex(-0.0, -0.0), 0j), (0j, complex(-0.0, -0.0)),
                        (complex(0.0, -0.0), complex(-0.0, 0.0))):
        T.full((3,), first, dtype=T.complex64, device=device)
        z = T.full((3,), then, dtype=T.complex64, device=device).to("cpu").numpy()
        assert (np.signbit(z.real) == np.signbit(then.real)).all()
        assert (np.signbit(z.imag) == np.signbit(then.imag)).all()
    x = T.full((2,), complex(-0.0, -0.0), dtype=T.complex128, device=device)
    for s in (0j, complex(-0.0, -0.0)):   # -0 + 0 = +0, -0 + -0 = -0, per part
        got = (x + s).to("cpu").numpy()
        want = np.full(2, complex(-0.0, -0.0)) + s
        assert (np.signbit(got.real) == np.signbit(want.real)).all()
        assert (np.signbit(got.imag) == np.signbit(want.imag)).all()


@pytest.mark.skipif(not __import__("conftest").CUDA_OK, reason="needs the CUDA backend or its emulator")
def test_fused_kernels_refuse_operands_on_another_device():
    """layer_norm with a CPU weight and a CUDA input, cross_entropy with a CPU target or weight
    and attention with a CPU mask returned results on the emulator: the fused kernels were
    handed host pointers, which a real GPU cannot read (a fault, or garbage)."""
    import nn
    from nn import functional as F
    x = T.ones((2, 3), device="cuda", dtype=T.float32)
    tgt = T.zeros(2, dtype=T.int64)
    with pytest.raises(ValueError, match="layer_norm: input is on cuda:0 but weight is on cpu"):
        F.layer_norm(x, 3, T.ones(3, dtype=T.float32))
    with pytest.raises(ValueError, match="cross_entropy: input is on cuda:0 but target is on cpu"):
        F.cross_entropy(x, tgt)
    with pytest.raises(ValueError, match="but weight is on cpu"):
        F.cross_entropy(x, tgt.to("cuda"), weight=T.ones(3, dtype=T.float32))
    q = T.ones((1, 2, 4, 8), device="cuda", dtype=T.float32)
    with pytest.raises(ValueError, match="attn_mask is on cpu but query is on cuda:0"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=T.ones((4, 4), dtype=T.bool_))
    assert nn.LayerNorm(3).to("cuda")(x).device == x.device     # one device: fine


def test_bad_input_hunt_leftovers():
    """From the bad-input sweep: indices((2**31, 2**31)) built two 16 GiB aranges before the
    size check (the process was killed); round(x, 1.5) rounded to 1.2333 places; size(x, (0, 0))
    counted the axis twice; diff(x, 2**62) and polygamma(2**62, x) never returned (2**62
    passes; the exact factorial of 2**62)."""
    x = T.asarray([[1.234, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="indices: array is too big"):
        T.indices((2**31, 2**31))
    with pytest.raises(TypeError, match="round: decimals must be an int"):
        T.round(x, 1.5)
    with pytest.raises(ValueError, match="size: repeated axis"):
        T.size(x, (0, 0))
    assert T.size(x, (0, 1)) == 4
    assert T.diff(T.arange(5.0), 2**62).shape == (0,) and T.diff(x, 5, axis=0).shape == (0, 2)
    assert T.polygamma(2**62, T.asarray([1.0])).item() == -np.inf


def test_internal_errors_no_longer_leak():
    """The bad-input sweep's leaks: AttributeError / IndexError from inside the functions
    instead of an error naming the op."""
    from nn import functional as F
    x = T.ones((2, 3))
    cases = [(lambda: T.bmm(x, None), TypeError, "bmm"),
             (lambda: T.permutation(x, 5), TypeError, "permutation"),
             (lambda: T.shares_memory(x, None), TypeError, "shares_memory"),
             (lambda: F.linear(x, None), TypeError, "linear"),
             (lambda: F.conv1d(T.ones((1, 1, 4)), None), TypeError, "conv1d"),
             (lambda: F.conv_transpose1d(T.ones((1, 1, 4)), None), TypeError, "conv_transpose1d"),
             (lambda: F.embedding(T.zeros(2, dtype=T.int64), None), TypeError, "embedding"),
             (lambda: x.tofile(None), TypeError, "tofile"),
             (lambda: T.linalg.cross(x, x, axis=5), ValueError, "linalg.cross"),
             (lambda: T.linalg.lstsq(x, 5), ValueError, "linalg.lstsq"),
             (lambda: T.slice_copy(x, 5), ValueError, "slice_copy")]
    for f, exc, name in cases:
        with pytest.raises(exc, match=name):
            f()


def test_module_to_complex_instance_norm_bias_and_mixed_device_convolve(device):
    """Module.to(complex64) raised (PyTorch casts the floating parameters); InstanceNorm had no
    bias= (PyTorch 2's); convolve / correlate moved a tensor on another device silently."""
    import nn
    m = nn.Linear(2, 3).to(T.complex64)
    assert m.weight.dtype is T.complex64 and m(T.ones(2, dtype=T.complex64)).dtype is T.complex64
    assert m.to(T.float32).weight.dtype is T.complex64      # a float dtype leaves complex ones
    with pytest.raises(TypeError, match="floating or complex"):
        m.to(T.int32)
    inorm = nn.InstanceNorm2d(3, affine=True, bias=False)
    assert inorm.bias is None and inorm.weight.shape == (3,)
    if device == "cuda":
        with pytest.raises(ValueError, match="convolve: tensors on different devices"):
            T.convolve(T.ones(3, device="cuda"), T.ones(2, device="cpu"))
        assert T.convolve(T.ones(3, device="cuda"), [1.0, 2.0]).device == T.ones(1, device="cuda").device


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_sparse_gradient(mode):
    """EmbeddingBag(sparse=True) / F.embedding_bag(sparse=True) raised NotImplementedError; the
    weight's gradient is a SparseCOO now, equal to the dense one (padding rows left out), and
    an optimizer taking sparse gradients steps with it."""
    import autograd
    import nn
    from nn import functional as F
    from tensor.sparse import SparseCOO
    w0 = np.random.default_rng(1).standard_normal((6, 3))
    ids, off = T.asarray([0, 2, 1, 2, 5, 1, 3]), T.asarray([0, 2, 5])
    grads = []
    for sparse in (True, False):
        w = T.asarray(w0).requires_grad_()
        (F.embedding_bag(ids, w, off, mode=mode, sparse=sparse, padding_idx=1) ** 2).sum().backward()
        grads.append(w.grad)
    assert isinstance(grads[0], SparseCOO)
    np.testing.assert_allclose(grads[0].to_dense().numpy(), grads[1].numpy(), rtol=1e-12)
    after = []
    for sparse in (True, False):   # an SGD step with the sparse gradient equals the dense one's
        bag = nn.EmbeddingBag(6, 3, mode=mode, sparse=sparse)
        with autograd.no_grad():
            bag.weight.copy_(T.asarray(w0, dtype=T.float32))
        opt = nn.optim.SGD(bag.parameters(), lr=0.5)
        (bag(ids, off) ** 2).sum().backward()
        opt.step()
        after.append(bag.weight.numpy())
    np.testing.assert_allclose(after[0], after[1], rtol=1e-6)
    np.testing.assert_array_equal(after[0][4], w0[4].astype(np.float32))   # row 4 is never read


def test_adagrad_takes_sparse_gradients():
    """Adagrad refused sparse gradients (PyTorch's takes them: its classic use with
    Embedding(sparse=True)); it updates the sum and the rows present, as the dense step does
    there (lr_decay and maximize included), and refuses weight_decay as PyTorch's."""
    import autograd
    import nn
    w0 = np.random.default_rng(2).standard_normal((6, 3))
    ids = T.asarray([0, 2, 2, 5, 1])
    weights = []
    for sparse in (True, False):
        e = nn.Embedding(6, 3, sparse=sparse, dtype=T.float64)
        with autograd.no_grad():
            e.weight.copy_(T.asarray(w0))
        opt = nn.optim.Adagrad(e.parameters(), lr=0.3, lr_decay=0.01, initial_accumulator_value=0.1,
                               maximize=True)
        for _ in range(3):
            opt.zero_grad()
            (e(ids) ** 2).sum().backward()
            opt.step()
        weights.append(e.weight.numpy())
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-12)
    e = nn.Embedding(6, 3, sparse=True)
    opt = nn.optim.Adagrad(e.parameters(), weight_decay=0.1)
    e(ids).sum().backward()
    with pytest.raises(RuntimeError, match="weight_decay is not compatible with sparse"):
        opt.step()
