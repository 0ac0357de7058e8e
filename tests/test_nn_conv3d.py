"""3-D layers: conv3d / Conv3d (nn/conv.py: a sum over the depth taps of 2-D convolutions),
conv_transpose3d / ConvTranspose3d (one 2-D transposed convolution, its depth taps placed),
max_pool3d / avg_pool3d and their modules (nn/pooling.py: the 2-D windows of the depth taps),
BatchNorm3d, InstanceNorm3d, adaptive_avg_pool3d.

Against direct NumPy loops (stride, padding, dilation, groups, bias, ceil_mode, indices,
count_include_pad), float64 gradcheck, the modules' padding forms and modes, unbatched input,
errors, CPU = CUDA device, and PyTorch where importable.
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


def _direct_transposed(x, w, b, stride, pad, opad, dil, groups):
    """The definition: each input entry x[n, c, i] adds x * w[c, o, k] at i * s - p + k * d."""
    n, c, *size = x.shape
    _, og, *k = w.shape
    full = [(i - 1) * st + d * (kk - 1) + 1 + q
            for i, st, d, kk, q in zip(size, stride, dil, k, opad)]
    y = np.zeros((n, og * groups) + tuple(full))
    cg = c // groups
    for g in range(groups):
        for idx in np.ndindex(*size):
            for tap in np.ndindex(*k):
                at = tuple(i * st + t * d for i, st, t, d in zip(idx, stride, tap, dil))
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap]
                y[(slice(None), slice(g * og, (g + 1) * og)) + at] += xs @ ws
    y = y[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(pad, full))]
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(3, 1, 2), padding=(2, 1, 0), dilation=(1, 2, 2),
                                     output_padding=(2, 0, 1), groups=2, bias=False),
                                dict(stride=(2, 2, 1), dilation=(3, 1, 1),
                                     output_padding=(2, 1, 0))])
def test_conv_transpose3d_matches_the_definition(kw):
    groups, bias = kw.get("groups", 1), kw.get("bias", True)
    stride, pad, opad, dil = (np.broadcast_to(kw.get(k, d), 3).tolist() for k, d in
                              (("stride", 1), ("padding", 0), ("output_padding", 0), ("dilation", 1)))
    x = RNG.standard_normal((2, 4, 3, 4, 3))
    w = RNG.standard_normal((4, 3, 2, 3, 2))
    b = RNG.standard_normal(3 * groups) if bias else None
    got = F.conv_transpose3d(T.asarray(x), T.asarray(w), None if b is None else T.asarray(b),
                             stride, pad, opad, groups, dil)
    want = _direct_transposed(x, w, b, stride, pad, opad, dil, groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_conv_transpose3d_gradcheck_module_and_devices(device):
    x = T.asarray(RNG.standard_normal((1, 2, 2, 3, 2))).requires_grad_()
    w = T.asarray(RNG.standard_normal((2, 1, 2, 2, 3))).requires_grad_()
    b = T.asarray(RNG.standard_normal(2)).requires_grad_()
    if device == "cpu":
        kw = dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0), groups=2)
        assert ag.gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b, **kw), [x, w, b])
    T.manual_seed(3)
    m = nn.ConvTranspose3d(2, 4, 3, stride=2, padding=1)
    assert m.weight.shape == (2, 4, 3, 3, 3)
    assert "ConvTranspose3d(2, 4, kernel_size=(3, 3, 3)" in repr(m)
    xs = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)     # unbatched
    ref = m(T.asarray(xs), output_size=(6, 8, 10)).detach().numpy()
    assert ref.shape == (4, 6, 8, 10)
    with pytest.raises(ValueError, match="ConvTranspose3d: output_size .* is not reachable"):
        m(T.asarray(xs), output_size=(8, 8, 10))
    m.to(device)
    xd = T.asarray(xs, device=device).requires_grad_()
    y = m(xd, output_size=(6, 8, 10))
    y.sum().backward()
    np.testing.assert_allclose(y.detach().to("cpu").numpy(), ref, rtol=1e-4, atol=1e-5)
    assert xd.grad.shape == xd.shape and m.weight.grad.device == xd.device


def test_conv_transpose3d_matches_torch():
    torch = pytest.importorskip("torch")
    kw = dict(stride=(2, 1, 3), padding=(1, 1, 0), output_padding=(1, 0, 2), groups=2,
              dilation=(1, 2, 1))
    x, w, b = (RNG.standard_normal(s) for s in ((2, 4, 3, 4, 3), (4, 3, 3, 2, 2), (6,)))
    ours = [T.asarray(a).requires_grad_() for a in (x, w, b)]
    theirs = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
    o = F.conv_transpose3d(*ours, **kw)
    t = torch.nn.functional.conv_transpose3d(*theirs, **kw)
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
        # (atol: a mean near 0 cancels, and NumPy sums in another order; x depends on which
        # tests drew from RNG before)
        np.testing.assert_allclose(got[:, :, i, j, k], x[:, :, a0:a1, b0:b1, c0:c1].mean(axis=(2, 3, 4)),
                                   rtol=1e-12, atol=1e-15)
    assert nn.AdaptiveAvgPool3d(1)(T.asarray(x)).shape == (2, 3, 1, 1, 1)


def _windows(x, k, s, p, d, ceil_mode):
    """Each output position's window of (N, C, D, H, W) x, by definition: the in-bounds flat
    positions (d * H + h) * W + w, and the window's size counting its padding."""
    size = x.shape[2:]
    outs = []
    for n, kk, ss, pp, dd in zip(size, k, s, p, d):
        span = n + 2 * pp - dd * (kk - 1) - 1
        o = (-(-span // ss) if ceil_mode else span // ss) + 1
        if ceil_mode and (o - 1) * ss >= n + pp:
            o -= 1
        outs.append(o)
    for idx in np.ndindex(*outs):
        axes = []
        for i, kk, ss, pp, dd in zip(idx, k, s, p, d):
            axes.append([i * ss - pp + j * dd for j in range(kk)])
        padded = 1
        for i, n, kk, ss, pp in zip(idx, size, k, s, p):
            lo = i * ss - pp
            padded *= min(lo + kk, n + pp) - lo
        pos = [(a, b, c) for a in axes[0] for b in axes[1] for c in axes[2]
               if 0 <= a < size[0] and 0 <= b < size[1] and 0 <= c < size[2]]
        yield idx, pos, padded, tuple(outs)


@pytest.mark.parametrize("kw", [dict(k=(2, 2, 2), s=(2, 2, 2), p=(0, 0, 0), d=(1, 1, 1)),
                                dict(k=(3, 2, 3), s=(2, 1, 2), p=(1, 1, 1), d=(1, 1, 1)),
                                dict(k=(3, 3, 3), s=(2, 2, 2), p=(1, 0, 1), d=(1, 1, 1), ceil=True),
                                dict(k=(2, 2, 2), s=(1, 2, 1), p=(0, 0, 0), d=(2, 1, 2))])
def test_pool3d_matches_the_definition(kw):
    k, s, p, d, ceil = kw["k"], kw["s"], kw["p"], kw["d"], kw.get("ceil", False)
    x = RNG.standard_normal((2, 2, 5, 4, 6))
    y, ind = F.max_pool3d(T.asarray(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    flat = x.reshape(2, 2, -1)
    for idx, pos, _, outs in _windows(x, k, s, p, d, ceil):
        assert y.shape == (2, 2) + outs
        vals = [x[:, :, a, b, c] for a, b, c in pos]
        first = np.argmax(np.stack(vals), axis=0)            # the first maximum, as PyTorch
        want_i = np.array([(a * 4 + b) * 6 + c for a, b, c in pos])[first]
        np.testing.assert_array_equal(y.numpy()[(slice(None), slice(None)) + idx],
                                      np.max(np.stack(vals), axis=0))
        np.testing.assert_array_equal(ind.numpy()[(slice(None), slice(None)) + idx], want_i)
        assert np.all(np.take_along_axis(flat, want_i.reshape(2, 2, 1), 2)[..., 0]
                      == np.max(np.stack(vals), axis=0))
    if d != (1, 1, 1):
        return
    for include in (True, False):
        a = F.avg_pool3d(T.asarray(x), k, s, p, ceil_mode=ceil, count_include_pad=include).numpy()
        for idx, pos, padded, _ in _windows(x, k, s, p, d, ceil):
            total = sum(x[:, :, a, b, c] for a, b, c in pos)
            np.testing.assert_allclose(a[(slice(None), slice(None)) + idx],
                                       total / (padded if include else len(pos)), rtol=1e-12)


def test_pool3d_modules_gradients_and_devices(device):
    x = T.asarray(RNG.standard_normal((1, 2, 3, 4, 3))).requires_grad_()
    assert ag.gradcheck(lambda a: F.avg_pool3d(a, 2, 1, 1, count_include_pad=False), [x])
    assert ag.gradcheck(lambda a: F.max_pool3d(a, (2, 3, 2), 1, 1), [x])
    assert nn.MaxPool3d(2)(T.ones((3, 4, 4, 4))).shape == (3, 2, 2, 2)        # unbatched
    assert nn.AvgPool3d(2, divisor_override=1)(T.ones((1, 1, 2, 2, 2))).tolist() == [[[[[8.0]]]]]
    with pytest.raises(ValueError, match=r"MaxPool3d: expected input of shape"):
        nn.MaxPool3d(2)(T.ones((2, 4, 4)))
    with pytest.raises(TypeError, match="avg_pool3d: expected a floating input"):
        F.avg_pool3d(T.ones((1, 1, 2, 2, 2), dtype=T.int64), 2)
    v = RNG.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    ref = nn.MaxPool3d(3, 2, 1, return_indices=True)(T.asarray(v))
    got = nn.MaxPool3d(3, 2, 1, return_indices=True)(T.asarray(v, device=device))
    np.testing.assert_array_equal(got[0].to("cpu").numpy(), ref[0].numpy())
    np.testing.assert_array_equal(got[1].to("cpu").numpy(), ref[1].numpy())
    np.testing.assert_allclose(nn.AvgPool3d(2, ceil_mode=True)(T.asarray(v, device=device)).to("cpu").numpy(),
                               nn.AvgPool3d(2, ceil_mode=True)(T.asarray(v)).numpy(), rtol=1e-6)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1)])
def test_pool3d_matches_torch(kw):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 5, 6, 7))
    for ours, theirs in ((F.max_pool3d, torch.nn.functional.max_pool3d),
                         (F.avg_pool3d, torch.nn.functional.avg_pool3d)):
        xo, xt = T.asarray(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
        o, t = ours(xo, **kw), theirs(xt, **kw)
        (o * o).sum().backward()
        (t * t).sum().backward()
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    i_ours = F.max_pool3d(T.asarray(x), return_indices=True, **kw)[1]
    i_theirs = torch.nn.functional.max_pool3d(torch.from_numpy(x), return_indices=True, **kw)[1]
    np.testing.assert_array_equal(i_ours.numpy(), i_theirs.numpy())
