"""PyTorch's spellings (tensor/torch_spelling.py), second round: what an adversarial review of
the wrappers found. Each test says what it caught on the first version of the wrappers; values
are compared with NumPy, and with PyTorch where it is installed (CI has no torch)."""
import numpy as np
import pytest

import tensor as T
from tensor.axes import AxisError

A = np.array([[2.0, 5.0, 5.0], [7.0, 7.0, 3.0], [1.0, np.nan, 1.0]])


def test_numpy_std_var_of_a_tensor(device):
    # caught: np.std(t) / np.var(t) call t.std(axis=..., dtype=..., out=None, ddof=...), and the
    # std / var wrappers took no out=: TypeError (NumPy's call worked before the wrappers)
    a = np.arange(6.0).reshape(2, 3)
    t = T.asarray(a)
    np.testing.assert_allclose(np.std(t, ddof=1).numpy(), np.std(a, ddof=1))
    np.testing.assert_allclose(np.var(t, axis=1, keepdims=True).numpy(), np.var(a, axis=1, keepdims=True))
    np.testing.assert_allclose(t.std(axis=0, dtype=None, out=None, ddof=0).numpy(), a.std(axis=0))
    out = T.zeros(3)
    assert t.var(axis=0, out=out) is out and np.allclose(out.numpy(), a.var(axis=0))
    np.testing.assert_allclose(t.std(dim=1, out=T.zeros(2)).numpy(), a.std(axis=1, ddof=1))


def test_max_min_dim_gradient_goes_to_the_index():
    # caught: x.max(dim=1).values was amax's, whose gradient splits among ties ([0, .5, .5]);
    # PyTorch's max(dim) sends it to the one index it returns ([0, 1, 0])
    x = T.asarray(A).requires_grad_()
    w = T.asarray([1.0, 2.0, 3.0])
    ((x.max(dim=1).values * w).sum() + (x.min(dim=1, keepdim=True).values[:, 0] * w).sum()).backward()
    want = np.array([[1.0, 1.0, 0.0], [2.0, 0.0, 2.0], [0.0, 6.0, 0.0]])   # the NaN is max's and min's
    np.testing.assert_array_equal(x.grad.numpy(), want)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (5, 4)).astype(np.float64)   # many ties
    for name in ("max", "min"):
        for d in (0, 1, -1):
            x, t = T.asarray(a).requires_grad_(), torch.tensor(a, requires_grad=True)
            getattr(x, name)(dim=d).values.sum().backward()
            getattr(t, name)(dim=d).values.sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_out_pair_checked_and_selecting_pytorchs_form(device):
    x = T.asarray(A)
    # caught: T.sort(x, out=(v, i)) without dim= returned NumPy's copy and left out= unwritten
    v, i = T.zeros((3, 3)), T.zeros((3, 3), dtype="int64")
    r = T.sort(x, out=(v, i))
    assert r.values is v and r.indices is i
    np.testing.assert_array_equal(v.numpy(), np.sort(A, axis=-1))
    np.testing.assert_array_equal(i.numpy(), np.argsort(A, axis=-1, kind="stable"))
    # caught: T.max(x, 1, out=(v, i)) (PyTorch's positional dim) raised "out must be a Tensor"
    v, i = T.zeros(3), T.zeros(3, dtype="int64")
    r = T.max(x, 1, out=(v, i))
    assert r.values is v and i.tolist() == [1, 0, 1]
    # caught: an out= pair of the wrong dtype was cast silently (max values truncated into int32);
    # NumPy's out= and PyTorch's refuse
    with pytest.raises(TypeError, match="max: cannot cast"):
        T.max(x, dim=1, out=(T.zeros(3, dtype="int32"), T.zeros(3, dtype="int64")))
    with pytest.raises(ValueError, match="min: output of shape"):
        T.min(x, dim=1, out=(T.zeros((1, 3)), T.zeros(3, dtype="int64")))   # was broadcast into
    with pytest.raises(TypeError, match="pair of tensors"):
        T.max(x, dim=1, out=(np.zeros(3), np.zeros(3, np.int64)))


def test_out_pair_on_another_device_refused(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    # caught: a cpu out= pair for a cuda max was written silently (PyTorch refuses)
    x = T.asarray(A, device="cuda")
    with pytest.raises(ValueError, match="max: out is on cpu"):
        T.max(x, dim=1, out=(T.zeros(3, device="cpu"), T.zeros(3, dtype="int64", device="cpu")))


def test_dim_of_a_0d_tensor(device):
    # caught: PyTorch lets a 0-d tensor's reductions take dim=0 / -1 (x.sum(dim=-1) of a scalar
    # loss); the wrappers passed it on and NumPy's axis check raised AxisError
    s = T.asarray(np.float64(3.0))
    assert T.logsumexp(s).item() == 3.0 and T.prod(s).item() == 3.0 and T.any(s).item()
    for name in ("sum", "prod", "mean", "amax", "amin", "logsumexp", "nansum", "any", "all"):
        for d in (0, -1, (0,)):
            r = getattr(T, name)(s, dim=d)
            assert r.shape == () and r.item() == getattr(T, name)(s).item(), (name, d)
        assert getattr(T, name)(s, dim=0, keepdim=True).shape == ()
    assert T.argmax(s, dim=0).item() == 0 and T.count_nonzero(s, dim=-1).item() == 1
    for name in ("max", "min", "median", "nanmedian"):
        v, i = getattr(s, name)(dim=0)
        assert v.item() == 3.0 and i.item() == 0 and i.dtype == T.int64
        with pytest.raises(AxisError):
            getattr(s, name)(dim=1)
    assert np.isnan(s.std(dim=0).item()) and s.var(dim=-1, unbiased=False).item() == 0.0
    with pytest.raises(AxisError):
        T.sum(s, axis=0)   # NumPy's spelling keeps NumPy's answer
    with pytest.raises(AxisError):
        T.sum(s, dim=1)
    with pytest.raises(AxisError):
        T.mean(s, axis=0, keepdim=True)   # NumPy's axis= with PyTorch's keepdim: still NumPy's axis


def test_alpha_keeps_a_python_numbers_weak_dtype(device):
    # caught: T.add(float32 x, 1, alpha=2) made the 1 * 2 a 0-d int64 tensor first, which
    # promoted the sum to float64 (PyTorch's and x + 2's: float32)
    x = T.ones(2, dtype="float32")
    assert T.add(x, 1, alpha=2).dtype == T.float32 and T.sub(x, 1.5, alpha=2).tolist() == [-2.0, -2.0]
    h = T.ones(2, dtype="float16")
    assert T.add(h, 3, alpha=0.5).dtype == T.float16
    i8 = T.ones(2, dtype="int8")
    assert T.add(i8, 1, alpha=2).dtype == T.int8 and T.add(i8, 1, alpha=2).tolist() == [3, 3]
    y = T.ones(2, dtype="float32")
    y.sub_(1, alpha=3)
    assert y.dtype == T.float32 and y.tolist() == [-2.0, -2.0]


def test_array_likes_in_the_pytorch_forms():
    # caught: T.sort(list, dim=0) and T.squeeze(list, dim=0) raised AttributeError ('list' has
    # no ndim); NumPy's forms and PyTorch's max(list, dim=) took them
    L = [[1.0, 3.0], [2.0, 0.0]]
    v, i = T.sort(L, dim=0)
    assert v.tolist() == [[1.0, 0.0], [2.0, 3.0]] and i.tolist() == [[0, 1], [1, 0]]
    assert T.squeeze([[1.0, 2.0]], dim=0).tolist() == [1.0, 2.0]
    assert T.squeeze([[1.0, 2.0]], dim=1).shape == (1, 2)


def test_std_var_dim_none_is_pytorchs(device):
    # caught: x.std(dim=None) (what `def f(x, dim=None): return x.std(dim=dim)` passes) was
    # NumPy's ddof=0; PyTorch's dim= keyword, None too, means its unbiased default
    a = np.arange(12.0).reshape(3, 4)
    x = T.asarray(a)
    np.testing.assert_allclose(x.std(dim=None).numpy(), a.std(ddof=1))
    np.testing.assert_allclose(T.var(x, dim=None, keepdim=True).numpy(), a.var(ddof=1, keepdims=True))
    np.testing.assert_allclose(x.std().numpy(), a.std())          # no PyTorch keyword: NumPy's
    np.testing.assert_allclose(x.std(None).numpy(), a.std())      # positional: NumPy's
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(x.var(dim=None).numpy(), torch.tensor(a).var(dim=None).numpy())


def test_axis_and_dim_together_refused():
    # caught: T.sort(x, 1, dim=0), T.split(x, 2, 1, dim=0) and T.squeeze(x, 0, dim=1) used dim=
    # and dropped the positional axis silently (max / std / median raise for both)
    x = T.asarray(np.arange(12.0).reshape(3, 4))
    for call in (lambda: T.sort(x, 1, dim=0), lambda: T.split(x, 2, 1, dim=0),
                 lambda: T.squeeze(x[None], 0, dim=1)):
        with pytest.raises(TypeError, match="not both"):
            call()
    assert T.sort(x, 0).shape == (3, 4) and len(T.split(x, 2, 1)) == 2   # NumPy's positional forms
    v, i = T.sort(x, 0, out=(T.zeros((3, 4)), T.zeros((3, 4), dtype="int64")))   # PyTorch's dim
    assert i.tolist() == [[0] * 4, [1] * 4, [2] * 4]


def test_pytorchs_positional_keepdim_and_unbiased():
    # caught: x.sum(1, True) / x.mean(-1, True) (PyTorch's positional keepdim) and x.std(1, True)
    # (its positional unbiased) read the bool as a dtype: TypeError; no dtype is True or False,
    # so the bool is PyTorch's, and NumPy's positional forms keep their meaning
    a = np.array([[2.0, 5.0, 5.0], [7.0, 7.0, 3.0]])
    x = T.asarray(a)
    for name in ("sum", "mean", "prod", "nansum", "nanmean", "nanprod"):
        np.testing.assert_allclose(getattr(x, name)(1, True).numpy(), getattr(np, name)(a, 1, keepdims=True))
        assert getattr(T, name)(x, -1, False).shape == (2,)
    np.testing.assert_allclose(x.std(1, True).numpy(), a.std(1, ddof=1))
    np.testing.assert_allclose(x.var(1, False, True).numpy(), a.var(1, keepdims=True))
    assert x.sum(0, T.float32).dtype == T.float32 and x.sum(0, bool).dtype == T.bool_   # dtypes
    np.testing.assert_allclose(x.std(1, None, 1).numpy(), a.std(1, ddof=1))            # NumPy's
    with pytest.raises(TypeError, match="keepdim given twice"):
        x.sum(1, True, keepdim=True)
    torch = pytest.importorskip("torch")
    t = torch.tensor(a)
    np.testing.assert_allclose(x.var(0, True, True).numpy(), t.var(0, True, True).numpy())


def test_median_out_pair_and_sort_of_a_0d_tensor():
    # caught: torch.median(x, dim, out=(v, i)) raised "unexpected keyword argument 'out'", and
    # T.sort(s, dim=0) of a 0-d tensor raised AxisError (PyTorch: (s, 0))
    a = np.array([[1.0, 2.0, 3.0], [4.0, 0.0, 2.0]])
    v, i = T.zeros(2), T.zeros(2, dtype="int64")
    r = T.median(T.asarray(a), dim=1, out=(v, i))
    assert r.values is v and v.tolist() == [2.0, 2.0] and i.tolist() == [1, 2]
    r = T.nanmedian(T.asarray(a), 0, out=(T.zeros(3), T.zeros(3, dtype="int64")))
    assert r.values.tolist() == [1.0, 0.0, 2.0] and r.indices.tolist() == [0, 1, 1]
    with pytest.raises(TypeError, match="median: out= is PyTorch's"):
        T.median(T.asarray(a), out=T.zeros(()))
    v, i = T.sort(T.asarray(np.float64(3.0)), dim=0)
    assert v.item() == 3.0 and i.item() == 0 and i.dtype == T.int64


def test_max_min_other_keyword(device):
    # caught: torch.max(x, other=y) (PyTorch's keyword for the element-wise form) raised
    # "unexpected keyword argument 'other'"
    a, b = np.array([1.0, 5.0, np.nan]), np.array([3.0, 3.0, 0.0])
    x, y = T.asarray(a), T.asarray(b)
    np.testing.assert_array_equal(T.max(x, other=y).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(x.min(other=y).numpy(), np.minimum(a, b))
    with pytest.raises(TypeError, match="max: other= .* takes no axis"):
        T.max(x, 0, other=y)


def test_ddof_and_correction_together_refused():
    # caught: x.std(ddof=1, correction=0) let correction win silently (NumPy raises when both
    # say something: ddof other than 0 and a correction)
    a = np.arange(6.0)
    x = T.asarray(a)
    with pytest.raises(ValueError, match="std: ddof and correction"):
        x.std(ddof=1, correction=0)
    with pytest.raises(ValueError, match="var: ddof and correction"):
        T.var(x, dim=0, ddof=2, correction=1)
    np.testing.assert_allclose(x.var(ddof=0, correction=1).numpy(), np.var(a, ddof=0, correction=1))


def test_nonzero_as_tuple_of_a_0d_tensor():
    # caught: T.nonzero(s, as_tuple=True) of a 0-d tensor raised NumPy's 0-d error; PyTorch's
    # as_tuple reads it as 1-d: (tensor([0]),) or (tensor([]),)
    (i,) = T.nonzero(T.tensor(3.0), as_tuple=True)
    assert i.tolist() == [0] and i.dtype == T.int64
    (j,) = T.nonzero(T.tensor(0.0), as_tuple=True)
    assert j.shape == (0,)
    assert T.nonzero(T.tensor(3.0), as_tuple=False).shape == (1, 0)
    with pytest.raises(ValueError, match="0d"):
        T.nonzero(T.tensor(3.0))   # NumPy's form keeps NumPy's refusal
