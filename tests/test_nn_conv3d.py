"""conv3d and nn.Conv3d (nn/conv.py: a sum over the depth taps of 2-D convolutions).

Against a direct NumPy loop (stride, padding, dilation, groups, bias), float64 gradcheck,
the module's padding forms and modes, unbatched input, errors, CPU = CUDA device, and
PyTorch where importable.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import functional as F

RNG = np.random.default_rng(11)


def _direct(x, w, b, stride, pad, dil, groups):
    """The definition: out[n, o, z, y, x] = sum over c in o's group and the kernel taps."""
    x = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in pad))
    n, c, *size = x.shape
    o, cg, *k = w.shape
    out_sz = [(s - d * (kk - 1) - 1) // st + 1 for s, kk, st, d in zip(size, k, stride, dil)]
    y = np.zeros((n, o) + tuple(out_sz))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for idx in np.ndindex(*out_sz):
            for kz, ky, kx in np.ndindex(*k):
                z, yy, xx = (i * st + kk * d for i, st, kk, d in zip(idx, stride, (kz, ky, kx), dil))
                y[(slice(None), oc) + idx] += x[:, g * cg:(g + 1) * cg, z, yy, xx] @ w[oc, :, kz, ky, kx]
    return y if b is None else y + b.reshape(1, o, 1, 1, 1)


@pytest.mark.parametrize("kw", [dict(), dict(stride=(2, 1, 2), padding=(1, 0, 2)),
                                dict(dilation=(2, 1, 1), groups=2, bias=False)])
def test_conv3d_matches_the_definition(kw):
    groups, bias = kw.get("groups", 1), kw.get("bias", True)
    stride, pad, dil = (kw.get(k, d) for k, d in (("stride", (1,) * 3), ("padding", (0,) * 3),
                                                  ("dilation", (1,) * 3)))
    x = RNG.standard_normal((2, 4, 5, 4, 6))
    w = RNG.standard_normal((4, 4 // groups, 2, 3, 2))
    b = RNG.standard_normal(4) if bias else None
    got = F.conv3d(T.asarray(x), T.asarray(w), None if b is None else T.asarray(b), stride, pad,
                   dil, groups)
    np.testing.assert_allclose(got.numpy(), _direct(x, w, b, stride, pad, dil, groups),
                               rtol=1e-12, atol=1e-12)


def test_conv3d_gradcheck():
    x = T.asarray(RNG.standard_normal((1, 2, 3, 3, 4))).requires_grad_()
    w = T.asarray(RNG.standard_normal((2, 2, 2, 2, 2))).requires_grad_()
    b = T.asarray(RNG.standard_normal(2)).requires_grad_()
    assert ag.gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1), [x, w, b])


def test_module_padding_forms_and_unbatched():
    T.manual_seed(0)
    m = nn.Conv3d(2, 3, (3, 1, 2), padding="same", padding_mode="circular", dtype=T.float64)
    assert m.weight.shape == (3, 2, 3, 1, 2) and m.bias.shape == (3,)
    x = T.asarray(RNG.standard_normal((2, 2, 4, 5, 6)))
    y = m(x)
    assert y.shape == (2, 3, 4, 5, 6)
    # 'same' with an even kernel puts the extra padding after, as PyTorch
    want = F.conv3d(T.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0), (0, 1)), mode="wrap"), m.weight, m.bias)
    np.testing.assert_allclose(y.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(m(x[1]).detach().numpy(), y[1].detach().numpy(), rtol=1e-12)
    assert "Conv3d(2, 3, kernel_size=(3, 1, 2)" in repr(m)
    with pytest.raises(ValueError, match=r"conv3d: weight must be 5-D"):
        F.conv3d(T.ones((1, 1, 3, 3, 3)), T.ones((1, 1, 3, 3)))
    with pytest.raises(ValueError, match=r"Conv3d: expected input of shape \(N, 2, D0, D1, D2\)"):
        m(T.ones((1, 3, 4, 4, 4)))


def test_conv3d_devices_agree(device):
    T.manual_seed(2)
    m = nn.Conv3d(3, 4, 3, stride=2, padding=1)
    x = RNG.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    ref = m(T.asarray(x)).detach().numpy()
    m.to(device)
    xd = T.asarray(x, device=device).requires_grad_()
    y = m(xd)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().to("cpu").numpy(), ref, rtol=1e-4, atol=1e-5)
    assert xd.grad.shape == xd.shape and m.weight.grad.device == xd.device


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(padding="same", dilation=(1, 2, 1)),
                                dict(groups=2, stride=(1, 2, 3))])
def test_conv3d_matches_torch(kw):
    torch = pytest.importorskip("torch")
    groups = kw.get("groups", 1)
    x, w, b = (RNG.standard_normal(s) for s in ((2, 4, 5, 6, 7), (6, 4 // groups, 3, 2, 3), (6,)))
    ours = [T.asarray(a).requires_grad_() for a in (x, w, b)]
    theirs = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
    o = F.conv3d(*ours, **kw)
    t = torch.nn.functional.conv3d(*theirs, **kw)
    (o * o).sum().backward()
    (t * t).sum().backward()
    np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-10)
    for a, c in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), c.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_batch_norm_instance_norm_and_adaptive_pool_3d():
    x = RNG.standard_normal((2, 3, 4, 5, 6))
    bn = nn.BatchNorm3d(3, dtype=T.float64)
    y = bn(T.asarray(x)).detach().numpy()
    mean, var = x.mean(axis=(0, 2, 3, 4), keepdims=True), x.var(axis=(0, 2, 3, 4), keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean.reshape(-1), rtol=1e-12)
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected input of shape \(N, 3, D, H, W\)"):
        bn(T.ones((2, 3, 4, 5)))
    y = nn.InstanceNorm3d(3)(T.asarray(x)).numpy()
    mean, var = x.mean(axis=(2, 3, 4), keepdims=True), x.var(axis=(2, 3, 4), keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-12)
    got = F.adaptive_avg_pool3d(T.asarray(x), (3, 2, 4)).numpy()
    assert got.shape == (2, 3, 3, 2, 4)
    # output (i, j, k) averages its bins [floor(i n / o), ceil((i + 1) n / o)) on each axis
    bins = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip((4, 5, 6), (3, 2, 4))]
    for (i, (a0, a1)), (j, (b0, b1)), (k, (c0, c1)) in (
            (p, q, r) for p in enumerate(bins[0]) for q in enumerate(bins[1]) for r in enumerate(bins[2])):
        np.testing.assert_allclose(got[:, :, i, j, k], x[:, :, a0:a1, b0:b1, c0:c1].mean(axis=(2, 3, 4)),
                                   rtol=1e-12)
    assert nn.AdaptiveAvgPool3d(1)(T.asarray(x)).shape == (2, 3, 1, 1, 1)
