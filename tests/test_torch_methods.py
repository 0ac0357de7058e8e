"""PyTorch's Tensor methods that had no method here (tensor/torch_methods.py), against NumPy
(and PyTorch where installed)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T


def _a(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def test_where_select_and_numpy_spelled_views(device):
    a = _a((3, 4))
    x = T.asarray(a, device=device)
    np.testing.assert_array_equal(x.where(x > 0, -1.0).numpy(), np.where(a > 0, a, -1.0))
    np.testing.assert_array_equal(x.select(1, -1).numpy(), a[:, -1])
    np.testing.assert_array_equal(x.select(0, 2).numpy(), a[2])
    with pytest.raises(IndexError, match="select: index 4 is out of range for dimension 1"):
        x.select(1, 4)
    np.testing.assert_array_equal(x.fliplr().numpy(), np.fliplr(a))
    np.testing.assert_array_equal(x.flipud().numpy(), np.flipud(a))
    np.testing.assert_array_equal(x.rot90(1, [1, 0]).numpy(), np.rot90(a, 1, (1, 0)))
    np.testing.assert_array_equal(x.rot90().numpy(), np.rot90(a))
    assert [p.shape for p in x.hsplit(2)] == [(3, 2), (3, 2)]
    assert [p.shape for p in x.vsplit([1])] == [(1, 4), (2, 4)]
    np.testing.assert_array_equal(x.argwhere().numpy(), np.argwhere(a))
    v = T.asarray(a[0], device=device)
    np.testing.assert_allclose(v.outer(v).numpy(), np.outer(a[0], a[0]), rtol=1e-14)
    np.testing.assert_allclose(v.inner(v).item(), np.inner(a[0], a[0]), rtol=1e-14)
    np.testing.assert_array_equal(x.hardshrink(0.5).numpy(), np.where(np.abs(a) > 0.5, a, 0))
    np.testing.assert_array_equal(x.compress([True, False, True], axis=0).numpy(),
                                  a.compress([True, False, True], axis=0))


def test_in_place_forms(device):
    a = _a((3, 3), 1)
    cases = {
        "relu_": ((), np.maximum(a, 0)),
        "cumsum_": ((1,), np.cumsum(a, 1)),
        "cumprod_": ((0,), np.cumprod(a, 0)),
        "clamp_min_": ((0.1,), np.maximum(a, 0.1)),
        "clamp_max_": ((0.1,), np.minimum(a, 0.1)),
        "round_": ((1,), np.round(a, 1)),
        "addmm_": ((T.asarray(a, device=device), T.asarray(a, device=device)), a + a @ a),
        "fill_diagonal_": ((7.0,), np.where(np.eye(3, dtype=bool), 7.0, a)),
        "hardshrink_": ((), np.where(np.abs(a) > 0.5, a, 0)),
    }
    for name, (args, want) in cases.items():
        x = T.asarray(a.copy(), device=device)
        r = getattr(x, name)(*args)
        assert r is x, name
        np.testing.assert_allclose(x.numpy(), want, rtol=1e-13, err_msg=name)
    x = T.asarray(a.copy(), device=device)
    assert x.fill(2.5) is None and (x.numpy() == 2.5).all()   # NumPy's ndarray.fill
    with pytest.raises(ValueError, match="addr_: the result.s shape"):
        T.asarray(a[0].copy(), device=device).addr_(T.ones(2, dtype=T.float64, device=device),
                                                     T.ones(3, dtype=T.float64, device=device))


def test_in_place_view_changes(device):
    x = T.arange(6.0, device=device).reshape(2, 3)
    base = x
    assert x.unsqueeze_(0) is base and x.shape == (1, 2, 3)
    x.squeeze_(0)
    assert x.shape == (2, 3)
    x.t_()
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3).T)
    x.transpose_(0, 1)
    assert x.shape == (2, 3) and x.is_contiguous()
    x.swapaxes_(0, 1).swapdims_(0, 1)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
    x.as_strided_((3,), (2,))
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0, 4.0])
    x[0] = 9.0                                      # still the same memory
    y = T.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="unsqueeze_: cannot change the shape of a tensor that "
                                           "requires grad"):
        y.unsqueeze_(0)
    assert y.shape == (3,)


def test_type_layout_and_dense():
    x = T.ones(2)
    assert x.type() == "tensor.DoubleTensor" or x.type() == "tensor.FloatTensor"
    assert x.type(T.int32).dtype is T.int32
    assert x.type("tensor.LongTensor").dtype is T.int64
    with pytest.raises(ValueError, match="type: unknown type name"):
        x.type("torch.Nope")
    assert x.is_sparse is False and x.layout == "strided" and x.to_dense() is x
    e = x.new_empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype is x.dtype


def test_methods_match_torch():
    torch = pytest.importorskip("torch")
    a = _a((4, 5), 3)
    x, t = T.asarray(a), torch.tensor(a)
    for name, args in [("fliplr", ()), ("flipud", ()), ("rot90", (3, [0, 1])), ("argwhere", ()),
                       ("hardshrink", (0.3,)), ("select", (0, 2))]:
        np.testing.assert_array_equal(getattr(x, name)(*args).numpy(),
                                      getattr(t, name)(*args).numpy(), err_msg=name)
    np.testing.assert_array_equal(x.where(x < 0, 1.0).numpy(),
                                  t.where(t < 0, torch.tensor(1.0, dtype=t.dtype)).numpy())
    for name, args in [("cumsum_", (0,)), ("relu_", ()), ("logit_", (0.1,)), ("sinc_", ()),
                       ("nan_to_num_", ()), ("renorm_", (2, 0, 1.0))]:
        got, want = getattr(T.asarray(a.copy()), name)(*args), getattr(t.clone(), name)(*args)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, err_msg=name)


def test_grad_mode_names_at_top_level():
    # caught: torch.no_grad() & co. had no tensor.* name (only autograd.no_grad)
    import autograd
    x = T.ones(2, requires_grad=True)
    with T.no_grad():
        assert not (x * 2).requires_grad
        with T.enable_grad():
            assert (x * 2).requires_grad
    with T.set_grad_enabled(False):
        assert not T.is_grad_enabled()
    assert T.is_grad_enabled() and T.no_grad is autograd.no_grad
    assert not T.inference_mode()(lambda: x * 2)().requires_grad
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        T.no_such_name  # noqa: B018
