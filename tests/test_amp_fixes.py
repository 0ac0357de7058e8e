"""Fixes of hunt 6 in mixed precision (tensor/amp.py, tensor/amptable.py, tensor/grad_scaler.py,
nn/amp.py), on both devices (CUDA: the emulator, or a GPU): a nested region's default dtype,
GradScaler with sparse gradients, linalg and rsqrt/erfinv in float32 under autocast, and
PyTorch's custom_fwd / custom_bwd.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from autograd import Function
from nn.optim import SGD

pytestmark = pytest.mark.usefixtures("device")

F32, BF16, F16 = T.float32, T.bfloat16, T.float16


def _dev():
    return T.get_default_device().type


# ---- a nested region without dtype= inherits the enclosing one's (PyTorch's) ---------------------

def test_nested_region_without_dtype_keeps_the_enclosing_dtype():
    """Caught: the inner region fell back to the device's default (float16 inside a bfloat16
    region on CUDA, bfloat16 inside a float16 one on the CPU), silently switching dtypes."""
    dev = _dev()
    other = F16 if dev == "cpu" else BF16           # not the device's default
    x = T.ones((2, 2), dtype=F32)
    with T.autocast(dev, dtype=other):
        with T.autocast(dev):
            assert (x @ x).dtype is other
            assert T.get_autocast_dtype(dev) is other
        with T.autocast(dev, enabled=False):          # PyTorch: a disabled region sets it too
            assert (x @ x).dtype is F32
            assert T.get_autocast_dtype(dev) is other
        assert (x @ x).dtype is other
    with T.autocast(dev, dtype=other, enabled=False):
        assert T.get_autocast_dtype(dev) is other
    assert T.get_autocast_dtype(dev) is (BF16 if dev == "cpu" else F16)


def test_nested_dtype_matches_torch_on_the_cpu():
    torch = pytest.importorskip("torch")
    x, tx = T.ones((2, 2), dtype=F32, device="cpu"), torch.ones(2, 2)
    for ours, theirs in [(F16, torch.float16), (BF16, torch.bfloat16)]:
        with T.autocast("cpu", dtype=ours), T.autocast("cpu"):
            got = (x @ x).dtype.name
        with torch.autocast("cpu", dtype=theirs), torch.autocast("cpu"):
            want = str((tx @ tx).dtype).removeprefix("torch.")
        assert got == want


# ---- GradScaler with sparse gradients ------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16])
@pytest.mark.parametrize("bad", [False, True])
def test_grad_scaler_steps_sparse_gradients(dtype, bad):
    """Caught: unscale_ / step with Embedding(sparse=True) raised AttributeError ('SparseCOO'
    object has no attribute 'grad_fn'). Now the values are unscaled (inf/NaN found in them) and
    the step is taken or skipped as for dense gradients."""
    emb = nn.Embedding(5, 3, sparse=True, dtype=dtype)
    w0 = emb.weight.detach().astype(T.float64).numpy().copy()
    opt, scaler = SGD(emb.parameters(), lr=1.0), T.GradScaler(_dev(), init_scale=4.0)
    mult = np.array([np.inf if bad else 2.0, 1.0, 1.0])
    scaler.scale((emb(T.asarray([1, 1, 2])) * T.asarray(mult).astype(dtype)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    got = emb.weight.detach().astype(T.float64).numpy()
    if bad:
        assert scaler.get_scale() == 2.0
        np.testing.assert_array_equal(got, w0)
    else:
        assert scaler.get_scale() == 4.0
        want = w0.copy()
        want[1] -= 2 * mult     # row 1 looked up twice
        want[2] -= mult
        want = T.asarray(want).astype(dtype).astype(T.float64).numpy()
        np.testing.assert_array_equal(got, want)


def test_grad_scaler_sparse_unscale_leaves_the_original_matrix():
    """The unscaled values are a copy: a sparse matrix someone else holds keeps its values."""
    emb = nn.Embedding(4, 2, sparse=True, dtype=F32)
    opt, scaler = SGD(emb.parameters(), lr=1.0), T.GradScaler(_dev(), init_scale=8.0)
    scaler.scale(emb(T.asarray([0, 3])).sum()).backward()
    held = emb.weight.grad
    before = held.values().numpy().copy()
    scaler.unscale_(opt)
    np.testing.assert_array_equal(held.values().numpy(), before)
    np.testing.assert_array_equal(emb.weight.grad.values().numpy(), before / 8.0)


def test_grad_scaler_sparse_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    idx, mult = np.array([0, 5, 5, 2]), rng.standard_normal((4, 3)).astype(np.float32)
    emb = nn.Embedding(6, 3, sparse=True, dtype=F32)
    with autograd.no_grad():
        emb.weight[...] = T.asarray(w)
    opt, scaler = SGD(emb.parameters(), lr=0.5), T.GradScaler(_dev(), init_scale=3.0)
    scaler.scale((emb(T.asarray(idx)) * T.asarray(mult)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    te = torch.nn.Embedding(6, 3, sparse=True)
    te.weight.data = torch.tensor(w)
    to, ts = torch.optim.SGD(te.parameters(), lr=0.5), torch.amp.GradScaler("cpu", init_scale=3.0)
    ts.scale((te(torch.tensor(idx)) * torch.tensor(mult)).sum()).backward()
    ts.step(to)
    ts.update()
    np.testing.assert_allclose(emb.weight.detach().numpy(), te.weight.detach().numpy(), rtol=1e-6)
    assert scaler.get_scale() == ts.get_scale()


# ---- table: linalg (PyTorch's CPU list), rsqrt and erfinv (its CUDA list) in float32 ---------------

def _spd():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    return a @ a.T + 4 * np.eye(4, dtype=np.float32)


LINALG = {
    "inv": lambda a: T.linalg.inv(a), "solve": lambda a: T.linalg.solve(a, a[:, :2]),
    "cholesky": lambda a: T.linalg.cholesky(a), "det": lambda a: T.linalg.det(a),
    "qr": lambda a: T.linalg.qr(a)[1], "svdvals": lambda a: T.linalg.svd(a)[1],
    "eigh": lambda a: T.linalg.eigh(a)[0], "pinv": lambda a: T.linalg.pinv(a),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_of_16_bit_inputs_runs_in_float32(name):
    """Caught: inside a region, linalg of bfloat16 inputs ran and returned bfloat16 (PyTorch's CPU
    autocast casts them to float32). Values: the float32 result of the bfloat16-rounded input."""
    fn = LINALG[name]
    a16 = T.asarray(_spd()).astype(BF16)
    with T.autocast(_dev()):
        got = fn(a16)
    assert got.dtype is F32
    want = fn(a16.astype(F32))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    with T.autocast(_dev()):                     # float32 inputs are left alone
        assert fn(T.asarray(_spd())).dtype is F32


@pytest.mark.parametrize("name", ["rsqrt", "erfinv"])
def test_rsqrt_and_erfinv_run_in_float32(name):
    """Caught: missing from the table although PyTorch's CUDA float32 list has them."""
    x = np.array([0.1, 0.5, 0.9], dtype=np.float32)
    xb = T.asarray(x).astype(F16)
    fn = getattr(T, name)
    with T.autocast(_dev()):
        got = fn(xb)
    assert got.dtype is F32
    np.testing.assert_array_equal(got.numpy(), fn(xb.astype(F32)).numpy())


# ---- custom_fwd / custom_bwd (torch.amp's) ---------------------------------------------------------

def _mul_fn(seen, **fwd_kw):
    class Mul(Function):
        @staticmethod
        @nn.amp.custom_fwd(device_type=_dev(), **fwd_kw)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen["fwd"] = (a.dtype, T.is_autocast_enabled(_dev()))
            return a @ b

        @staticmethod
        @nn.amp.custom_bwd(device_type=_dev())
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga, gb = g @ b.mT, a.mT @ g
            seen["bwd"] = (ga.dtype, T.is_autocast_enabled(_dev()))
            return ga, gb
    return Mul


def test_custom_fwd_bwd_run_backward_under_the_forward_autocast_state():
    """Caught: nn.amp had no custom_fwd / custom_bwd (PyTorch's torch.amp names)."""
    seen: dict = {}
    mul = _mul_fn(seen)
    a = T.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=F32).requires_grad_()
    b = T.asarray([[0.5, -1.0], [2.0, 0.25]], dtype=F32).requires_grad_()
    with T.autocast(_dev(), dtype=BF16):
        y = mul.apply(a, b)
    assert y.dtype is BF16 and seen["fwd"] == (F32, True)
    y.astype(F32).sum().backward()
    assert seen["bwd"] == (BF16, True)           # backward's products under the region again
    assert a.grad.dtype is F32
    np.testing.assert_allclose(a.grad.numpy(), np.ones((2, 2)) @ b.detach().numpy().T, rtol=1e-2)
    seen.clear()
    y = mul.apply(a, b)                             # outside a region: nothing changes
    y.sum().backward()
    assert seen == {"fwd": (F32, False), "bwd": (F32, False)}


def test_custom_fwd_cast_inputs():
    seen: dict = {}
    mul = _mul_fn(seen, cast_inputs=F32)
    a = T.ones((2, 2), dtype=BF16).requires_grad_()
    with T.autocast(_dev()):
        y = mul.apply(a, T.ones((2, 2), dtype=F16))
    assert seen["fwd"] == (F32, False) and y.dtype is F32
    y.sum().backward()
    assert seen["bwd"] == (F32, False) and a.grad.dtype is BF16
    np.testing.assert_array_equal(a.grad.astype(F32).numpy(), np.full((2, 2), 2.0))
    seen.clear()
    mul.apply(a, a)                                  # outside a region: not cast
    assert seen["fwd"] == (BF16, False)


def test_custom_fwd_errors():
    with pytest.raises(ValueError, match="device_type"):
        nn.amp.custom_fwd(device_type="tpu")
    assert nn.amp.is_autocast_available("cpu") and not nn.amp.is_autocast_available("tpu")

    class NoFwd(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        @nn.amp.custom_bwd(device_type=_dev())
        def backward(ctx, g):
            return g * 2
    a = T.ones(2, dtype=F32).requires_grad_()
    with pytest.raises(RuntimeError, match="custom_fwd"):
        NoFwd.apply(a).sum().backward()


def test_unscale_uses_the_reciprocal_of_the_float32_scale():
    """Caught: unscale_ took 1/init_scale in double before rounding, PyTorch 1/float32(scale):
    for init_scale 2^16 * 1.1 the two inverse scales are one float32 ulp apart."""
    s0 = 2 ** 16 * 1.1
    w = nn.Parameter(T.ones(1, dtype=F32))
    opt, scaler = SGD([w], lr=0.0), T.GradScaler(_dev(), init_scale=s0)
    w.grad = T.ones(1, dtype=F32)
    scaler.unscale_(opt)
    want = np.float32(1.0 / float(np.float32(s0)))
    assert want != np.float32(1.0 / s0)
    assert w.grad.numpy()[0] == want


def test_unscale_does_not_write_into_read_only_gradients():
    """Caught: a gradient aliasing a read-only NumPy array was unscaled in place (the user's
    array changed, which every in-place op refuses); a broadcast-view gradient raised after the
    group's other gradients were unscaled already. Both now get an unscaled copy."""
    v = nn.Parameter(T.ones(3, dtype=F32))
    u = nn.Parameter(T.ones((2, 3), dtype=F32))
    v.grad = T.full(3, 4.0, dtype=F32)
    held = T.broadcast_to(T.asarray([2.0, 4.0, 8.0], dtype=F32), (2, 3))
    u.grad = held
    scaler = T.GradScaler(_dev(), init_scale=2.0)
    scaler.unscale_(SGD([v, u], lr=1.0))
    np.testing.assert_array_equal(v.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(u.grad.numpy(), [[1.0, 2.0, 4.0]] * 2)
    assert u.grad.is_contiguous()
    np.testing.assert_array_equal(held.numpy(), [[2.0, 4.0, 8.0]] * 2)


def test_unscale_leaves_a_read_only_numpy_buffer():
    if _dev() != "cpu":
        pytest.skip("a NumPy buffer lives on the host")
    a = np.array([1.0, np.inf, 3.0], dtype=np.float32)
    a.flags.writeable = False
    w = nn.Parameter(T.ones(3, dtype=F32))
    w.grad = T.asarray(a)
    scaler = T.GradScaler("cpu", init_scale=2.0)
    opt = SGD([w], lr=1.0)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(a, [1.0, np.inf, 3.0])
    np.testing.assert_array_equal(w.grad.numpy(), [0.5, np.inf, 1.5])
    assert scaler.get_scale() == 1.0 and w.tolist() == [1.0, 1.0, 1.0]
