"""autograd.forward_ad (PyTorch's dual tensors): tangents against central differences and
against torch.autograd.forward_ad, on both devices; levels, no_grad, in-place ops, reverse over
forward, and bad use."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import forward_ad as fw

RNG = np.random.default_rng(5)


def _f(x, w):
    y = T.exp(x) @ w.T
    return T.tanh(y).sum(-1) + (x * x).mean()


def _central(f, x0, t0, *args, h=1e-6):
    return (f(T.asarray(x0 + h * t0), *args).numpy() - f(T.asarray(x0 - h * t0), *args).numpy()) / (2 * h)


def test_tangents_match_central_differences(device):
    x0, t0, w0 = RNG.random((3, 4)), RNG.random((3, 4)), RNG.random((2, 4))
    w = T.asarray(w0, device=device)
    with fw.dual_level() as level:
        assert level == 0
        x = fw.make_dual(T.asarray(x0, device=device), T.asarray(t0, device=device))
        primal, tangent = fw.unpack_dual(_f(x, w))
    np.testing.assert_allclose(primal.numpy(), _f(T.asarray(x0), T.asarray(w0)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(tangent.numpy(), _central(_f, x0, t0, T.asarray(w0)), rtol=1e-7)


def test_no_grad_and_in_place_ops_still_push_tangents():
    x0, t0 = RNG.random(5), RNG.random(5)

    def g(x):
        z = x * 2.0
        z.mul_(x)
        z[1:].exp_()
        return z
    with fw.dual_level():
        with autograd.no_grad():
            z = g(fw.make_dual(T.asarray(x0), T.asarray(t0)))
        tangent = fw.unpack_dual(z).tangent
    np.testing.assert_allclose(tangent.numpy(), _central(g, x0, t0), rtol=1e-7)


def test_levels_drop_tangents_and_do_not_nest():
    x = T.asarray([1.0, 2.0])
    with fw.dual_level():
        d = fw.make_dual(x, T.ones(2))
        y = T.sin(d)
        assert fw.unpack_dual(y).tangent is not None
        with pytest.raises(RuntimeError, match="nested"):
            fw.enter_dual_level()
        with pytest.raises(NotImplementedError, match="nested"):
            autograd.jvp(T.sin, x, T.ones(2))
    assert fw.unpack_dual(y).tangent is None and fw.unpack_dual(d).tangent is None
    assert fw.unpack_dual(x) == (x, None)   # a tensor without a tangent comes back as it is
    assert x._ag is None or x._ag.tangent is None   # the caller's tensor never got one
    with pytest.raises(RuntimeError, match="no forward-mode level"):
        fw.make_dual(x, T.ones(2))
    with pytest.raises(RuntimeError, match="no forward-mode level"):
        fw.exit_dual_level()
    assert fw.enter_dual_level() == 0   # the functional form, as PyTorch's
    fw.exit_dual_level(level=0)
    # after an exception inside the level, the next level works
    with pytest.raises(ZeroDivisionError), fw.dual_level():
        fw.make_dual(x, T.ones(2))
        raise ZeroDivisionError
    with fw.dual_level():
        assert fw.unpack_dual(T.cos(fw.make_dual(x, T.ones(2)))).tangent is not None


def test_bad_input_is_refused_by_name():
    with fw.dual_level():
        with pytest.raises(ValueError, match="make_dual.*shape"):
            fw.make_dual(T.ones(3), T.ones(2))
        with pytest.raises(TypeError, match="make_dual.*int64"):
            fw.make_dual(T.arange(3), T.ones(3))
        with pytest.raises(TypeError, match="make_dual: expects a tensor.Tensor, got numpy"):
            fw.make_dual(np.ones(3), T.ones(3))
        with pytest.raises(ValueError, match="level 1"):
            fw.unpack_dual(T.ones(2), level=1)
        d = fw.make_dual(T.ones(2, dtype=T.float32), T.ones(2, dtype=T.float64))
        assert fw.unpack_dual(d).tangent.dtype == T.float32   # cast to the primal's dtype


def test_reverse_over_forward_and_torch_parity():
    torch = pytest.importorskip("torch")
    tfw = torch.autograd.forward_ad
    x0, t0 = RNG.random((3, 4)), RNG.random((3, 4))
    a = T.tensor(x0, requires_grad=True)
    with fw.dual_level():
        d = fw.make_dual(a, T.asarray(t0))
        out = (T.sin(d) * d).sum()
        primal, tangent = fw.unpack_dual(out)
        assert primal.requires_grad and tangent.requires_grad
    tangent.backward()
    ta = torch.tensor(x0, requires_grad=True)
    with tfw.dual_level():
        td = tfw.make_dual(ta, torch.tensor(t0))
        ttangent = tfw.unpack_dual((torch.sin(td) * td).sum()).tangent
    ttangent.backward()
    assert float(tangent) == pytest.approx(ttangent.item(), rel=1e-14)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-14)
