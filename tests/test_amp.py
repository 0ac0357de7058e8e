"""Autocast (tensor/amp.py, tensor/amptable.py): which ops it casts and to what, values and
gradients against PyTorch's CPU autocast where the two tables agree, nesting, the cast cache,
checkpointing, threads; on both devices (CUDA: the emulator, or a GPU).

Our one table is PyTorch's CUDA table on both devices (and `mean` in float32, as the issue
asks): PyTorch's CPU autocast also runs the products in 16 bits and the losses in float32, but
leaves softmax, the norms, the reductions and exp/log of 16-bit inputs in 16 bits; those are
checked against our table, not against torch.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from autograd.checkpoint import checkpoint
from nn import functional as F
from tensor import amp

pytestmark = pytest.mark.usefixtures("device")

F32, BF16, F16 = T.float32, T.bfloat16, T.float16


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((4, 6)).astype(np.float32),
            "w": rng.standard_normal((5, 6)).astype(np.float32),
            "img": rng.standard_normal((2, 3, 8, 8)).astype(np.float32),
            "k": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "q": rng.standard_normal((2, 2, 4, 8)).astype(np.float32),
            "p": rng.random((4, 6)).astype(np.float32),
            "t": rng.integers(0, 5, 4)}


# op name -> (ours, torch's), each a function of the data dict's tensors
PRODUCTS = {
    "matmul": (lambda d: d["x"] @ d["w"].T, lambda d, t: d["x"] @ d["w"].T),
    "linear": (lambda d: F.linear(d["x"], d["w"]), lambda d, t: t.nn.functional.linear(d["x"], d["w"])),
    "einsum": (lambda d: T.einsum("ij,kj->ik", d["x"], d["w"]),
               lambda d, t: t.einsum("ij,kj->ik", d["x"], d["w"])),
    "conv2d": (lambda d: F.conv2d(d["img"], d["k"], padding=1),
               lambda d, t: t.nn.functional.conv2d(d["img"], d["k"], padding=1)),
    "conv_transpose2d": (lambda d: F.conv_transpose2d(d["img"], T.swapaxes(d["k"], 0, 1)),
                         lambda d, t: t.nn.functional.conv_transpose2d(d["img"], d["k"].transpose(0, 1))),
    "sdpa": (lambda d: F.scaled_dot_product_attention(d["q"], d["q"], d["q"]),
             lambda d, t: t.nn.functional.scaled_dot_product_attention(d["q"], d["q"], d["q"])),
}
LOSSES = {
    "cross_entropy": (lambda d: F.cross_entropy(d["x"][:, :5], d["t"]),
                      lambda d, t: t.nn.functional.cross_entropy(d["x"][:, :5], d["t"])),
    "nll_loss": (lambda d: F.nll_loss(d["x"][:, :5], d["t"]),
                 lambda d, t: t.nn.functional.nll_loss(d["x"][:, :5], d["t"])),
    "mse_loss": (lambda d: F.mse_loss(d["x"], d["p"]), lambda d, t: t.nn.functional.mse_loss(d["x"], d["p"])),
    "l1_loss": (lambda d: F.l1_loss(d["x"], d["p"]), lambda d, t: t.nn.functional.l1_loss(d["x"], d["p"])),
    "bce_with_logits": (lambda d: F.binary_cross_entropy_with_logits(d["x"], d["p"]),
                        lambda d, t: t.nn.functional.binary_cross_entropy_with_logits(d["x"], d["p"])),
}
# float32 in our table (16-bit inputs cast up); PyTorch's CPU table keeps most of these in 16 bits
FP32_OURS = {
    "softmax": lambda d: F.softmax(d["x"], -1), "log_softmax": lambda d: F.log_softmax(d["x"], -1),
    "layer_norm": lambda d: F.layer_norm(d["x"], (6,)), "group_norm": lambda d: F.group_norm(d["img"], 1),
    "sum": lambda d: d["x"].sum(), "mean": lambda d: d["x"].mean(), "prod": lambda d: d["x"].prod(),
    "cumsum": lambda d: T.cumsum(d["x"], axis=0), "logsumexp": lambda d: T.logsumexp(d["x"], axis=0),
    "var": lambda d: T.var(d["x"]), "exp": lambda d: T.exp(d["x"]), "log": lambda d: T.log(T.abs(d["x"])),
    "pow": lambda d: d["x"] ** 2, "reciprocal": lambda d: T.reciprocal(d["x"]),
}
UNLISTED = {   # not cast: the result keeps the (promoted) input dtype
    "add": lambda d: d["x"] + d["p"], "sqrt": lambda d: T.sqrt(T.abs(d["x"])),
    "tanh": lambda d: T.tanh(d["x"]), "max": lambda d: T.max(d["x"]), "relu": lambda d: F.relu(d["x"]),
}


def _ours(data, dtype=F32):
    return {k: (T.asarray(v).astype(dtype) if v.dtype == np.float32 else T.asarray(v))
            for k, v in data.items()}


def _theirs(torch, data, dtype=None):
    out = {k: torch.from_numpy(v) for k, v in data.items()}
    return {k: (v.to(dtype) if dtype is not None and v.is_floating_point() else v) for k, v in out.items()}


def _np(t):
    return t.astype(F32).numpy() if t.dtype in (BF16, F16) else t.numpy()


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(PRODUCTS) + sorted(LOSSES))
def test_products_and_losses_as_pytorch(torch, name, low):
    """float32 inputs: products run in the low dtype, losses in float32; dtypes as PyTorch's,
    values within the low dtype's rounding of PyTorch's."""
    ours, theirs = {**PRODUCTS, **LOSSES}[name]
    data = _data()
    with T.autocast(T.get_default_device().type, dtype=getattr(T, low)):
        y = ours(_ours(data))
    with torch.autocast("cpu", dtype=getattr(torch, low)):
        ty = theirs(_theirs(torch, data), torch)
    assert y.dtype.name == str(ty.dtype).replace("torch.", ""), (name, y.dtype, ty.dtype)
    tol = 2e-2 if low == "bfloat16" else 4e-3
    np.testing.assert_allclose(_np(y), ty.float().detach().numpy(), rtol=tol, atol=tol * 4)


@pytest.mark.parametrize("low", [BF16, F16])
def test_float32_ops_cast_16_bit_inputs_up(low):
    data = _data(1)
    for name, fn in FP32_OURS.items():
        x16 = _ours(data, low)
        with T.autocast(T.get_default_device().type, dtype=low):
            y = fn(x16)
        assert y.dtype is F32, name
        ref = fn(_ours(data, low) | {k: v.astype(F32) for k, v in x16.items() if v.dtype is low})
        np.testing.assert_allclose(_np(y), ref.numpy(), rtol=1e-6, atol=1e-6, err_msg=name)
    for name, fn in UNLISTED.items():
        with T.autocast(T.get_default_device().type, dtype=low):
            assert fn(_ours(data, low)).dtype is low, name
            assert fn(_ours(data)).dtype is F32, name


def test_left_alone():
    """float64, explicit dtype= and out=, in-place ops, other device types, outside regions."""
    x64 = T.ones((3, 3), dtype=T.float64)
    x = T.ones((3, 3), dtype=F32)
    x16 = T.ones((3, 3), dtype=BF16)
    dev = T.get_default_device().type
    other = "cuda" if dev == "cpu" else "cpu"
    with T.autocast(dev):
        assert (x64 @ x64).dtype is T.float64
        assert T.sum(x16, dtype=BF16).dtype is BF16
        out = T.empty((3, 3), dtype=F32)
        assert T.matmul(x, x, out=out) is out
        y = x16.copy()
        y.exp_()
        assert y.dtype is BF16
    with T.autocast(other):
        assert (x @ x).dtype is F32
    assert (x @ x).dtype is F32


def test_nesting_disabled_and_decorator():
    dev = T.get_default_device().type
    x = T.ones((2, 2), dtype=F32)
    assert not T.is_autocast_enabled(dev)
    with T.autocast(dev, dtype=F16):
        assert T.is_autocast_enabled(dev) and T.get_autocast_dtype(dev) is F16
        with T.autocast(dev, enabled=False):
            assert not T.is_autocast_enabled(dev)
            assert (x @ x).dtype is F32
        with T.autocast(dev, dtype=BF16):
            assert (x @ x).dtype is BF16
        assert (x @ x).dtype is F16

    @T.autocast(dev)
    def f(a):
        return a @ a
    assert f(x).dtype is T.get_autocast_dtype(dev) and (x @ x).dtype is F32
    with pytest.raises(ValueError, match="autocast: device_type"):
        T.autocast("tpu")
    with pytest.raises(ValueError, match="autocast: dtype must be float16 or bfloat16"):
        T.autocast(dev, dtype=T.int32)
    # float32 (nanoGPT passes its training dtype): PyTorch's warning and a disabled region
    with pytest.warns(UserWarning, match="autocast is disabled"), T.autocast(dev, dtype=T.float32):
        assert (x @ x).dtype is F32 and not T.is_autocast_enabled(dev)


def test_gradients_flow_to_float32_parameters(torch):
    """A linear layer and a loss: parameters keep float32 gradients, equal to PyTorch's under
    its autocast within bfloat16 rounding; the backward ran with autocast off."""
    data = _data(2)
    lin = nn.Linear(6, 5)
    tlin = torch.nn.Linear(6, 5)
    with torch.no_grad():
        tlin.weight.copy_(torch.from_numpy(lin.weight.numpy()))
        tlin.bias.copy_(torch.from_numpy(lin.bias.numpy()))
    x = T.asarray(data["x"]).requires_grad_()
    with T.autocast(T.get_default_device().type, dtype=BF16):
        y = lin(x)
        loss = F.cross_entropy(y, T.asarray(data["t"]))
    assert y.dtype is BF16 and loss.dtype is F32
    loss.backward()
    tx = torch.from_numpy(data["x"]).requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tloss = torch.nn.functional.cross_entropy(tlin(tx), torch.from_numpy(data["t"]))
    tloss.backward()
    for ours, theirs in ((lin.weight.grad, tlin.weight.grad), (lin.bias.grad, tlin.bias.grad),
                         (x.grad, tx.grad)):
        assert ours.dtype is F32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=3e-2, atol=3e-2)


def test_cast_cache():
    """A parameter's cast is made once in a region and reused, made again after an in-place
    update, and dropped when the outermost region ends."""
    dev = T.get_default_device().type
    w = nn.Parameter(T.ones((3, 3), dtype=F32))
    x = T.ones((2, 3), dtype=F32)
    with T.autocast(dev, dtype=BF16):
        a, b = x @ w, x @ w
        (c,) = {id(v[2]): v[2] for v in amp._state.cache.values()}.values()
        assert len(amp._state.cache) == 1 and c.dtype is BF16
        assert a.grad_fn.next[1][0] is b.grad_fn.next[1][0]   # one cast node feeds both
        with autograd.no_grad():
            w.mul_(2.0)
        d = x @ w
        assert d.tolist() == [[6.0] * 3] * 2          # the new values, cast again
        with T.autocast(dev, enabled=False):
            pass
        assert amp._state.cache
    assert not amp._state.cache
    (a.sum() + b.sum() + d.sum()).backward()
    assert w.grad.dtype is F32 and w.grad.numpy().tolist() == [[6.0] * 3] * 3


def test_checkpoint_replays_the_autocast_state():
    """A checkpointed segment under autocast recomputes in the same dtypes: its gradients are
    bitwise those of the plain run."""
    dev = T.get_default_device().type
    T.manual_seed(0)
    lin1, lin2 = nn.Linear(6, 8), nn.Linear(8, 3)
    x = T.asarray(_data(3)["x"])

    def seg(h):
        return F.gelu(lin1(h))

    grads = []
    for use_ckpt in (False, True):
        for p in (*lin1.parameters(), *lin2.parameters()):
            p.grad = None
        with T.autocast(dev, dtype=BF16):
            h = checkpoint(seg, x) if use_ckpt else seg(x)
            out = F.softmax(lin2(h), -1).sum()
        out.backward()
        grads.append([p.grad.numpy() for p in (*lin1.parameters(), *lin2.parameters())])
        assert h.dtype is BF16
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_regions_are_per_thread():
    dev = T.get_default_device().type
    x = T.ones((2, 2), dtype=F32)
    seen = []
    entered, done = threading.Event(), threading.Event()

    def other():
        entered.wait()
        seen.append((x @ x).dtype)
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with T.autocast(dev, dtype=BF16):
        entered.set()
        done.wait()
        assert (x @ x).dtype is BF16
    th.join()
    assert seen == [F32]


@pytest.mark.parametrize("low", [F16, BF16])
def test_16_bit_kernels_accumulate_in_float32(low):
    """Sums of 5000 ones would stop at 2048 (float16) or 256 (bfloat16) if accumulated in 16
    bits: the GEMM, reductions, scans, softmax, layer_norm and cross-entropy kernels of 16-bit
    inputs accumulate in float32 (results rounded once to the dtype)."""
    n = 5000
    want = float(T.asarray(np.float32(n)).astype(low).astype(F32).item())   # n in the dtype
    ones = T.ones(n, dtype=low)
    assert T.sum(ones).astype(F32).item() == want
    assert (T.ones((1, n), dtype=low) @ T.ones((n, 1), dtype=low)).astype(F32).item() == want
    assert T.cumsum(ones, axis=0)[-1].astype(F32).item() == want
    assert T.mean(ones).astype(F32).item() == 1.0
    sm = F.softmax(T.zeros((2, n), dtype=low), -1).astype(F32).numpy()
    np.testing.assert_allclose(sm, 1.0 / n, rtol=2 ** -7)
    x = T.asarray(np.tile(np.arange(n, dtype=np.float32) % 7, (2, 1))).astype(low)
    ln = F.layer_norm(x, (n,)).astype(F32).numpy()
    x64 = x.astype(T.float64).numpy()
    ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln, ref, atol=3e-2)
    ce = F.cross_entropy(T.zeros((3, n), dtype=low), T.asarray([0, 1, 2])).astype(F32).item()
    assert abs(ce - np.log(n)) < 0.05
