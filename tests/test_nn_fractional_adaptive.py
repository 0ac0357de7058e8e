"""nn.FractionalMaxPool2d / 3d with F.fractional_max_pool2d / 3d (nn/fractional_pool.py) and
nn.AdaptiveLogSoftmaxWithLoss (nn/adaptive_softmax.py): against a NumPy reference of the
windows (always) and PyTorch with the same random samples / weights (where installed), both
devices; gradients. Each test caught the name's absence (AttributeError on the old code)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import nn
import tensor as T
from autograd import gradcheck
from nn import functional as F

RNG = np.random.default_rng(20261128)


def _np(t):
    return t.to_device("cpu").numpy()


def _starts(u, n, k, out):
    if out == 1:
        return [n - k]
    a = (n - k) / (out - 1)
    return [int((i + u) * a) - int(u * a) for i in range(out - 1)] + [n - k]


def _reference2d(x, k, out, u):
    N, C, H, W = x.shape
    res = np.empty((N, C) + out)
    ind = np.empty((N, C) + out, dtype=np.int64)
    for n, c in itertools.product(range(N), range(C)):
        hs = _starts(u[n, c, 1], H, k[0], out[0])   # the samples: width first, then height
        ws = _starts(u[n, c, 0], W, k[1], out[1])
        for i, j in itertools.product(range(out[0]), range(out[1])):
            win = x[n, c, hs[i]:hs[i] + k[0], ws[j]:ws[j] + k[1]]
            a, b = np.unravel_index(np.argmax(win), win.shape)
            res[n, c, i, j] = win[a, b]
            ind[n, c, i, j] = (hs[i] + a) * W + ws[j] + b
    return res, ind


@pytest.mark.usefixtures("device")
def test_fractional_max_pool2d_windows(device):
    x, u = RNG.standard_normal((2, 3, 9, 11)), RNG.random((2, 3, 2))
    got, ind = F.fractional_max_pool2d(T.asarray(x, device=device), (2, 3), output_size=(4, 5),
                                       return_indices=True, _random_samples=T.asarray(u, device=device))
    want, want_ind = _reference2d(x, (2, 3), (4, 5), u)
    np.testing.assert_array_equal(_np(got), want)
    np.testing.assert_array_equal(_np(ind), want_ind)
    m = nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=T.asarray(u[:1], device=device))
    got = m(T.asarray(x[0], device=device))   # unbatched (C, H, W): the ratio of 9 x 11 -> 4 x 5
    np.testing.assert_array_equal(_np(got), _reference2d(x[:1], (3, 3), (4, 5), u[:1])[0][0])
    drawn = nn.FractionalMaxPool2d(2, output_size=3)(T.asarray(x, device=device))
    assert drawn.shape == (2, 3, 3, 3)


def test_fractional_max_pool_errors_and_gradients():
    x = T.asarray(RNG.standard_normal((1, 1, 5, 5)))
    with pytest.raises(ValueError, match="output_size or output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ValueError, match="does not fit"):
        F.fractional_max_pool2d(x, 3, output_size=4)
    with pytest.raises(ValueError, match="_random_samples"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=T.ones((1, 1, 3)) * 0.5)
    u = T.asarray(RNG.random((1, 2, 3)))
    xs = T.tensor(RNG.standard_normal((1, 2, 4, 5, 5)), requires_grad=True)
    assert gradcheck(lambda z: F.fractional_max_pool3d(z, 2, output_size=(2, 3, 3), _random_samples=u), (xs,))


def test_fractional_max_pool_matches_torch():
    torch = pytest.importorskip("torch")
    for dtype in (np.float32, np.float64):
        x, u = RNG.standard_normal((2, 2, 40, 37)).astype(dtype), RNG.random((2, 2, 2)).astype(dtype)
        a, ai = F.fractional_max_pool2d(T.asarray(x), 3, output_size=(13, 17), return_indices=True,
                                        _random_samples=T.asarray(u))
        b, bi = torch.nn.functional.fractional_max_pool2d(
            torch.tensor(x), 3, output_size=(13, 17), return_indices=True, _random_samples=torch.tensor(u))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(ai.numpy(), bi.numpy())
    x, u = RNG.standard_normal((2, 2, 16, 17, 18)), RNG.random((2, 2, 3))
    a, ai = F.fractional_max_pool3d(T.asarray(x), (1, 2, 3), output_size=(7, 8, 9), return_indices=True,
                                    _random_samples=T.asarray(u))
    b, bi = torch.nn.functional.fractional_max_pool3d(
        torch.tensor(x), (1, 2, 3), output_size=(7, 8, 9), return_indices=True,
        _random_samples=torch.tensor(u))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ai.numpy(), bi.numpy())


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@pytest.mark.usefixtures("device")
def test_adaptive_log_softmax_against_its_definition(device):
    m = nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[5, 12], div_value=2.0, head_bias=True,
                                      dtype=T.float64).to(device)
    x, t = RNG.standard_normal((7, 16)), np.array([0, 4, 5, 11, 12, 19, 3])
    out = m(T.asarray(x, device=device), T.asarray(t, device=device))
    W = {k: _np(v) for k, v in m.state_dict().items()}
    head = _log_softmax(x @ W["head.weight"].T + W["head.bias"])
    full = [head[:, :5]]
    for i in range(2):
        tail = _log_softmax(x @ W[f"tail.{i}.0.weight"].T @ W[f"tail.{i}.1.weight"].T)
        full.append(tail + head[:, 5 + i:6 + i])
    full = np.concatenate(full, axis=1)
    np.testing.assert_allclose(_np(out.output), full[np.arange(7), t], rtol=1e-12)
    np.testing.assert_allclose(_np(out.loss), -full[np.arange(7), t].mean(), rtol=1e-12)
    np.testing.assert_allclose(_np(m.log_prob(T.asarray(x, device=device))), full, rtol=1e-12)
    np.testing.assert_array_equal(_np(m.predict(T.asarray(x, device=device))), full.argmax(1))
    one = m(T.asarray(x[2], device=device), T.asarray(t[2], device=device))
    assert one.output.shape == () and float(one.output) == pytest.approx(full[2, t[2]])


def test_adaptive_log_softmax_gradients_errors_and_torch():
    m = nn.AdaptiveLogSoftmaxWithLoss(6, 9, cutoffs=[3, 6], div_value=2.0, dtype=T.float64)
    t = T.asarray([0, 4, 8, 7])
    xs = T.tensor(RNG.standard_normal((4, 6)), requires_grad=True)
    assert gradcheck(lambda z: m(z, t).output, (xs,))
    with pytest.raises(RuntimeError, match="target values"):
        m(xs, T.asarray([0, 1, 2, 9]))
    with pytest.raises(ValueError, match="cutoffs"):
        nn.AdaptiveLogSoftmaxWithLoss(6, 9, cutoffs=[6, 3])
    torch = pytest.importorskip("torch")
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(6, 9, cutoffs=[3, 6], div_value=2.0).double()
    m.load_state_dict({k: T.asarray(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tx = torch.tensor(xs.detach().numpy(), requires_grad=True)
    tm(tx, torch.tensor([0, 4, 8, 7])).loss.backward()
    m(xs, t).loss.backward()
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
