"""PyTorch's spellings of the NumPy-rooted functions (tensor/torch_spelling.py): keepdim, dim,
dims, shifts, diagonal, unbiased, alpha, as_tuple, and the dim= forms whose answer differs from
NumPy's (max / min / median / sort -> (values, indices), torch.split, squeeze's no-op, std /
var's unbiased default), against PyTorch where installed and fixed values otherwise. Each of
these raised TypeError or answered NumPy's way before (`_, pred = out.max(dim=1)` unpacked a
2-row batch's values)."""
import numpy as np
import pytest

import tensor as T

A = np.array([[1.0, 5.0, 2.0, 4.0], [7.0, np.nan, 3.0, 1.0], [2.0, 2.0, 0.0, 2.0]])


def test_keepdim_and_dim_everywhere(device):
    x = T.asarray(np.arange(12.0).reshape(3, 4))
    for name in ("sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "any", "all",
                 "logsumexp", "nansum", "nanmean", "nanmax", "nanmin", "count_nonzero"):
        r = getattr(T, name)(x, dim=1, keepdim=True)
        want = getattr(T, name)(x, axis=1, keepdims=True)
        assert r.shape == (3, 1) and np.array_equal(r.numpy(), want.numpy()), name
    assert x.sum(dim=1, keepdim=True).shape == (3, 1)
    assert T.quantile(x, 0.5, dim=1, keepdim=True).shape == (3, 1)
    assert T.stack([x, x], dim=1).shape == (3, 2, 4)
    assert np.array_equal(T.argsort(x, dim=0).numpy(), np.argsort(x.numpy(), axis=0))
    assert np.array_equal(x.flip(dims=[1]).numpy(), np.flip(x.numpy(), 1))
    assert np.array_equal(x.roll(shifts=1, dims=1).numpy(), np.roll(x.numpy(), 1, 1))
    assert np.array_equal(T.triu(x, diagonal=1).numpy(), np.triu(x.numpy(), 1))
    assert np.array_equal(T.tril(x, diagonal=-1).numpy(), np.tril(x.numpy(), -1))
    with pytest.raises(TypeError, match="both keepdim"):
        T.sum(x, dim=1, keepdim=True, keepdims=True)
    with pytest.raises(TypeError, match="both dims"):
        x.flip(dims=[1], axis=0)


def test_max_min_median_dim_forms():
    x = T.asarray(A)
    v, i = x.max(dim=1)                       # the classic `_, pred = out.max(dim=1)`
    assert np.array_equal(v.numpy(), [5.0, np.nan, 2.0], equal_nan=True) and i.tolist() == [1, 1, 0]
    r = T.min(x, dim=0, keepdim=True)
    assert type(r).__name__ == "MinResult" and r.values.shape == (1, 4)
    assert r.indices.tolist() == [[0, 1, 2, 1]] and r.values.numpy()[0, 1] != r.values.numpy()[0, 1]
    assert np.array_equal(x.max(1).numpy(), np.max(A, 1), equal_nan=True)   # positional: NumPy's
    assert np.array_equal(T.max(x, T.zeros(4)).numpy(), np.maximum(A, 0), equal_nan=True)
    assert np.array_equal(x.min(T.tensor(1.5)).numpy(), np.minimum(A, 1.5), equal_nan=True)
    m = x.median(dim=1)                       # the lower middle value; NaN propagates
    assert np.array_equal(m.values.numpy(), [2.0, np.nan, 2.0], equal_nan=True)
    assert m.indices.tolist() == [2, 1, 0]
    n = T.nanmedian(x, dim=1, keepdim=True)
    assert n.values.numpy().ravel().tolist() == [2.0, 3.0, 2.0] and n.indices.tolist() == [[2], [2], [0]]
    assert x.median(axis=1).numpy()[0] == 3.0   # NumPy's: the mean of the two middle values
    with pytest.raises(TypeError, match="give axis or dim"):
        T.median(x, axis=0, dim=0)


def test_against_pytorch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (5, 6)).astype(np.float64)   # ties
    a[1, 2] = np.nan
    x, t = T.asarray(a), torch.tensor(a)
    for d in (0, 1, -1):
        for name in ("max", "min", "median", "nanmedian"):
            ours, theirs = getattr(x, name)(dim=d), getattr(t, name)(dim=d)
            assert np.array_equal(ours.values.numpy(), theirs.values.numpy(), equal_nan=True), (name, d)
            assert np.array_equal(ours.indices.numpy(), theirs.indices.numpy()), (name, d)
        for name in ("std", "var"):
            for kw in ({}, {"unbiased": False}, {"keepdim": True}, {"correction": 0}):
                np.testing.assert_allclose(getattr(x, name)(dim=d, **kw).numpy(),
                                           getattr(t, name)(dim=d, **kw).numpy(), rtol=1e-12)
        sv, si = x.sort(dim=d, descending=True)
        tv, ti = t.sort(dim=d, descending=True, stable=True)
        assert np.array_equal(sv.numpy(), tv.numpy(), equal_nan=True)
        assert np.array_equal(si.numpy(), ti.numpy())
    for size in (1, 2, 4, [1, 5]):
        ours, theirs = x.split(size, dim=1), t.split(size, dim=1)
        assert [p.shape for p in ours] == [tuple(p.shape) for p in theirs]
        assert T.split(x, size, dim=1)[-1].shape == tuple(theirs[-1].shape)
    assert np.array_equal(T.nonzero(x, as_tuple=False).numpy(), torch.nonzero(t).numpy())
    assert x.squeeze(dim=0).shape == tuple(t.squeeze(dim=0).shape)
    y = T.ones((1, 3, 1))
    assert y.squeeze(dim=(0, 1)).shape == (3, 1) and y.squeeze(dim=-1).shape == (1, 3)


def test_std_var_defaults():
    x = T.asarray(np.arange(6.0).reshape(2, 3))
    a = x.numpy()
    np.testing.assert_allclose(x.std(dim=1).numpy(), a.std(axis=1, ddof=1))   # PyTorch's dim=
    np.testing.assert_allclose(x.std(axis=1).numpy(), a.std(axis=1))          # NumPy's axis=
    np.testing.assert_allclose(x.var(1, unbiased=True).numpy(), a.var(axis=1, ddof=1))
    np.testing.assert_allclose(x.var(dim=1, unbiased=False).numpy(), a.var(axis=1))
    np.testing.assert_allclose(x.var(dim=1, correction=0).numpy(), a.var(axis=1))
    assert x.std().item() == pytest.approx(a.std())                          # no keyword: NumPy's
    with pytest.raises(TypeError, match="one of unbiased"):
        x.var(dim=1, unbiased=True, ddof=1)


def test_sort_method_and_alpha():
    x = T.tensor([[3.0, 1.0, 2.0]])
    v, i = x.sort(dim=1)
    assert v.tolist() == [[1.0, 2.0, 3.0]] and i.tolist() == [[1, 2, 0]]
    v, i = x.sort(descending=True)
    assert v.tolist() == [[3.0, 2.0, 1.0]]
    v, i = T.sort(x, dim=-1)
    assert i.tolist() == [[1, 2, 0]]
    assert T.sort(x).tolist() == [[1.0, 2.0, 3.0]]           # NumPy's / the array API's: a copy
    with pytest.raises(TypeError, match="say which"):
        x.sort()
    y = T.tensor([3.0, 1.0, 2.0])
    assert y.sort(axis=0) is None and y.tolist() == [1.0, 2.0, 3.0]   # NumPy's: in place
    z = T.tensor([1.0, 2.0])
    assert T.add(z, z, alpha=3).tolist() == [4.0, 8.0] and T.sub(z, z, alpha=0.5).tolist() == [0.5, 1.0]
    z.add_(T.ones(2), alpha=-2)
    assert z.tolist() == [-1.0, 0.0]


def test_gradients_through_the_dim_forms():
    import autograd
    x = T.asarray(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])).requires_grad_()
    (x.max(dim=1).values.sum() + x.median(dim=1).values.sum()).backward()
    assert x.grad.tolist() == [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    assert autograd.gradcheck(lambda t: t.std(dim=0).sum(), (x.detach().requires_grad_(),))


def test_squeeze_copy_dim_leaves_other_sizes():
    """T.squeeze_copy(x, dim=1) is PyTorch's: a dim whose size is not 1 stays (it raised)."""
    x = T.ones((1, 3))
    assert T.squeeze_copy(x, dim=1).shape == (1, 3) and T.squeeze_copy(x).shape == (3,)
    assert T.squeeze_copy(x, dim=0).shape == (3,)
