"""T.softmax / T.log_softmax / T.relu and their Tensor methods as one recorded op each
(tensor/rowops.py, rules in autograd/rules_rowops.py), the ops nn.functional records too:
values against NumPy and PyTorch (every float dtype, every dim, views, 0-d, 0-size, inf and
NaN), gradients against PyTorch and finite differences, double backward, forward mode,
autocast, capture, one graph node, and both softmax paths (the row kernel, and the composition
a non-last dim of a larger tensor takes)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from autograd import forward_ad as fwAD
from tensor import rowops

RNG = np.random.default_rng(20261129)
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INF, NAN = float("inf"), float("nan")


@pytest.fixture(params=["rows", "composed"])
def path(request, monkeypatch):
    """Both ways softmax runs along a non-last dim: the row kernel on a transposed copy
    ("rows", what small tensors take) or the composition ("composed": every non-last dim)."""
    if request.param == "composed":
        monkeypatch.setattr(rowops, "_TRANSPOSE_MAX", 0)
    return request.param


def _np_softmax(v: np.ndarray, axis: int, log: bool) -> np.ndarray:
    if not v.size:
        return v
    with np.errstate(invalid="ignore", over="ignore"):
        z = v - v.max(axis=axis, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=axis, keepdims=True))
        return z - lse if log else np.exp(z - lse)


def _tol(d: str) -> dict:
    return {"float16": dict(rtol=2e-3, atol=2e-3), "bfloat16": dict(rtol=1.6e-2, atol=1.6e-2),
            "float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-13, atol=1e-14)}[d]


def _f64(t: T.Tensor) -> np.ndarray:
    return t.astype(T.float64).numpy()


# ---------------------------------------------------------------- values

SHAPES = [(), (7,), (3, 5), (2, 3, 4), (4, 1, 6), (2, 0, 3), (0,)]


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("d", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_values_every_dim_and_dtype_vs_numpy(path, shape, d, log):
    a = RNG.standard_normal(shape) * 4
    x = T.asarray(a).astype(d)
    ref_in = _f64(x)
    fn = T.log_softmax if log else T.softmax
    for dim in range(-max(len(shape), 1), max(len(shape), 1)):
        y = fn(x, dim)
        assert y.dtype.name == d and y.shape == shape
        want = _np_softmax(ref_in.reshape(shape or (1,)), dim, log).reshape(shape)
        np.testing.assert_allclose(_f64(y), want, **_tol(d), err_msg=f"dim {dim}")
        meth = getattr(x, "log_softmax" if log else "softmax")(dim)
        np.testing.assert_array_equal(_f64(meth), _f64(y))


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_views_vs_contiguous(path, log):
    fn = T.log_softmax if log else T.softmax
    base = T.asarray(RNG.standard_normal((6, 8)) * 3).astype(T.float32)
    views = {"transposed": base.T, "negative strides": base[::-1, ::-2],
             "broadcast": T.broadcast_to(base[:1], (5, 8)), "sliced": base[1:5, 2:7]}
    for name, v in views.items():
        for dim in (0, 1, -1):
            got = fn(v, dim)
            want = fn(T.ascontiguousarray(v), dim)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7, err_msg=name)


def test_zero_d_and_empty():
    for d in FLOATS:
        x = T.asarray(2.5).astype(d)
        assert T.softmax(x, 0).item() == 1.0 and T.log_softmax(x, -1).item() == 0.0
        assert T.softmax(x, 0).dtype.name == d and T.softmax(x, 0).shape == ()
    for shape, dim in (((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((3, 0), 0)):
        assert T.softmax(T.zeros(shape), dim).shape == shape
        assert T.log_softmax(T.zeros(shape), dim).shape == shape


@pytest.mark.parametrize("dim", [0, 1])
def test_inf_and_nan_slices_as_torch(path, dim):
    torch = pytest.importorskip("torch")
    v = np.array([[1.0, 2.0, INF, 0.0], [-INF, 0.0, 1.0, 2.0], [INF, -INF, 0.0, 1.0],
                  [-INF, -INF, -INF, -INF], [NAN, 0.0, 1.0, 2.0], [3.0, -1.0, 0.5, 1e30]])
    v = v if dim == 1 else np.ascontiguousarray(v.T)
    for d in ("float32", "float64"):
        for name in ("softmax", "log_softmax"):
            got = getattr(T, name)(T.asarray(v).astype(d), dim).numpy()
            want = getattr(torch, name)(torch.tensor(v).to(getattr(torch, d)), dim).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, err_msg=f"{name} {d}")


@pytest.mark.parametrize("d", FLOATS)
def test_against_torch_with_dtype_argument(d):
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((5, 7)) * 3
    for name in ("softmax", "log_softmax"):
        for dim in (0, 1):
            x, xt = T.asarray(a).astype(d), torch.tensor(a).to(getattr(torch, d))
            np.testing.assert_allclose(_f64(getattr(T, name)(x, dim)),
                                       getattr(torch, name)(xt, dim).double().numpy(), **_tol(d))
            y = getattr(T, name)(x, dim, dtype=T.float64)
            assert y.dtype is T.float64
            np.testing.assert_allclose(y.numpy(), getattr(torch, name)(xt, dim, dtype=torch.float64).numpy(),
                                       rtol=1e-12, atol=1e-12)
    # dtype= casts an integer input first
    np.testing.assert_allclose(T.softmax(T.asarray([1, 2, 3]), 0, dtype=T.float32).numpy(),
                               torch.softmax(torch.tensor([1, 2, 3]), 0, dtype=torch.float32).numpy(),
                               rtol=1e-6)


def test_errors_name_the_op():
    with pytest.raises(TypeError, match="softmax: dim is required"):
        T.softmax(T.ones(3))
    with pytest.raises(TypeError, match="log_softmax: dim is required"):
        T.ones(3).log_softmax()
    with pytest.raises(TypeError, match="softmax: expects a floating-point tensor, got int64"):
        T.softmax(T.asarray([1, 2]), 0)
    with pytest.raises(TypeError, match="log_softmax: expects a floating-point tensor, got complex64"):
        T.log_softmax(T.ones(2, dtype=T.complex64), 0)
    with pytest.raises(TypeError, match="softmax: expects a floating-point tensor, got int32"):
        T.softmax(T.ones(2), 0, dtype=T.int32)
    with pytest.raises(T.AxisError, match="softmax: axis 2 is out of bounds"):
        T.softmax(T.ones((2, 2)), 2)
    with pytest.raises(TypeError, match="softmax: expected a tensor, got list"):
        T.softmax([1.0, 2.0], 0)
    for bad in (T.asarray([True]), T.ones(2, dtype=T.complex128)):
        with pytest.raises(TypeError, match=f"relu: not supported for {bad.dtype.name}"):
            T.relu(bad)
    with pytest.raises(TypeError, match="relu: expected a tensor, got list"):
        T.relu([1.0])


# ---------------------------------------------------------------- relu

@pytest.mark.parametrize("d", FLOATS + ["int8", "uint8", "int32", "int64"])
def test_relu_values_and_dtypes(d):
    a = np.array([[-3, 0, 2], [5, -1, 7]]) if d != "uint8" else np.array([[0, 1, 2], [250, 3, 0]])
    x = T.asarray(a).astype(d)
    for y in (T.relu(x), x.relu(), T.relu(x.T).T):
        assert y.dtype.name == d
        np.testing.assert_array_equal(_f64(y), np.maximum(a, 0).astype(np.float64))
    v = T.asarray([NAN, -INF, INF, -0.5])
    assert np.isnan(T.relu(v)[0].item()) and T.relu(v)[1:].tolist() == [0.0, INF, 0.0]


def test_relu_grad_at_zero_and_vs_torch():
    torch = pytest.importorskip("torch")
    a = np.array([-1.5, 0.0, 0.0, 2.0, 3.5])
    x = T.asarray(a).requires_grad_()
    xt = torch.tensor(a, requires_grad=True)
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    T.relu(x).backward(T.asarray(g))
    torch.relu(xt).backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    assert autograd.gradcheck(lambda t: T.relu(t), [T.asarray([0.5, -0.7, 1.2]).requires_grad_()])


# ---------------------------------------------------------------- one graph node

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_one_graph_node(dim):
    x = T.asarray(RNG.standard_normal((3, 4))).requires_grad_()
    for y, name in ((T.softmax(x, dim), "SoftmaxBackward0"), (x.log_softmax(dim), "LogSoftmaxBackward0"),
                    (T.relu(x), "ReluBackward0"), (x.relu(), "ReluBackward0"),
                    (T.softmax(x, dim, dtype=T.float32), "SoftmaxBackward0"),
                    (nn.functional.softmax(x, dim), "SoftmaxBackward0")):
        assert y.grad_fn.name() == name
        (edge, _), = y.grad_fn.next_functions
        assert edge.name() == "AccumulateGrad" and edge.variable is x, name


# ---------------------------------------------------------------- gradients

def _leaf(shape, seed=0):
    return T.asarray(np.random.default_rng(seed).standard_normal(shape)).requires_grad_()


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((2, 3), 1), ((2, 3), 0), ((2, 3, 2), 1), ((4,), 0), ((), 0)])
def test_gradcheck_and_double_backward(path, name, shape, dim):
    fn = getattr(T, name)
    x = _leaf(shape)
    assert autograd.gradcheck(lambda t: fn(t, dim), [x])
    assert autograd.gradgradcheck(lambda t: fn(t, dim), [x])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("d", ["float32", "float64", "float16", "bfloat16"])
def test_gradients_vs_torch(path, name, d):
    torch = pytest.importorskip("torch")
    a, g = RNG.standard_normal((4, 6)) * 2, RNG.standard_normal((4, 6))
    for dim in (0, 1):
        x = T.asarray(a).astype(d).requires_grad_()
        xt = torch.tensor(a).to(getattr(torch, d)).requires_grad_()
        getattr(T, name)(x, dim).backward(T.asarray(g).astype(d))
        getattr(torch, name)(xt, dim).backward(torch.tensor(g).to(getattr(torch, d)))
        assert x.grad.dtype.name == d
        tol = _tol(d) if d in ("float32", "float64") else dict(rtol=5e-2, atol=5e-2)
        np.testing.assert_allclose(_f64(x.grad), xt.grad.double().numpy(), **tol)
    # dtype=: the gradient comes back in the input's dtype
    x = T.asarray(a).astype(T.float32).requires_grad_()
    getattr(T, name)(x, 1, dtype=T.float64).backward(T.asarray(g))
    xt = torch.tensor(a, dtype=torch.float32, requires_grad=True)
    getattr(torch, name)(xt, 1, dtype=torch.float64).backward(torch.tensor(g))
    assert x.grad.dtype is T.float32
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backward_runs_the_fused_kernel_unless_create_graph(path, monkeypatch):
    calls = []
    real = rowops.softmax_backward
    monkeypatch.setattr(rowops, "softmax_backward", lambda *a: calls.append(a[3]) or real(*a))
    x = _leaf((3, 4))
    fns = ((lambda: (T.softmax(x, 1) * T.log_softmax(x, 0)).sum() + nn.functional.softmax(x, 0).sum(),
            [False, False, True]),   # (log=) of each softmax node's backward
           (lambda: (x.softmax(0) * nn.functional.log_softmax(x, 1)).sum(), [False, True]))
    for fn, want in fns:
        ref = autograd.grad(fn(), x)[0].numpy()
        assert sorted(calls) == want
        calls.clear()
        np.testing.assert_allclose(autograd.grad(fn(), x, create_graph=True)[0].detach().numpy(), ref,
                                   rtol=1e-12, atol=1e-14)
        assert calls == []


def test_double_backward_vs_torch():
    torch = pytest.importorskip("torch")
    a, w = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    for name in ("softmax", "log_softmax"):
        x = T.asarray(a).requires_grad_()
        (gx,) = autograd.grad((getattr(T, name)(x, 0) * T.asarray(w)).sum(), x, create_graph=True)
        (ggx,) = autograd.grad((gx * gx).sum(), x)
        xt = torch.tensor(a, requires_grad=True)
        yt = (getattr(torch, name)(xt, 0) * torch.tensor(w)).sum()
        (gt,) = torch.autograd.grad(yt, xt, create_graph=True)
        (ggt,) = torch.autograd.grad((gt * gt).sum(), xt)
        np.testing.assert_allclose(ggx.numpy(), ggt.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "relu"])
def test_forward_mode_vs_finite_differences(path, name):
    a, t = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    fn = (lambda v: T.relu(v)) if name == "relu" else (lambda v: getattr(T, name)(v, 0))
    with fwAD.dual_level():
        y = fn(fwAD.make_dual(T.asarray(a), T.asarray(t)))
        tan = fwAD.unpack_dual(y).tangent.numpy()
    eps = 1e-6
    fd = (fn(T.asarray(a + eps * t)).numpy() - fn(T.asarray(a - eps * t)).numpy()) / (2 * eps)
    np.testing.assert_allclose(tan, fd, rtol=1e-6, atol=1e-8)
    # dtype=: the float32 tangent is carried into the float64 result
    if name != "relu":
        with fwAD.dual_level():
            x32 = fwAD.make_dual(T.asarray(a).astype(T.float32), T.asarray(t).astype(T.float32))
            tan64 = fwAD.unpack_dual(getattr(T, name)(x32, 0, dtype=T.float64)).tangent
        assert tan64.dtype is T.float64
        np.testing.assert_allclose(tan64.numpy(), fd, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- autocast, capture

@pytest.mark.parametrize("low", [T.bfloat16, T.float16])
def test_autocast_runs_in_float32_unless_dtype_given(low):
    """The table's float32 class (PyTorch's CUDA list, ours on both devices): 16-bit inputs
    give a float32 result, as nn.functional.softmax; dtype= is left alone, as PyTorch's."""
    x = T.asarray(RNG.standard_normal((3, 4))).astype(low)
    with T.autocast("cpu", dtype=low):
        for name in ("softmax", "log_softmax"):
            y = getattr(T, name)(x, -1)
            assert y.dtype is T.float32
            np.testing.assert_allclose(y.numpy(), getattr(T, name)(x.astype(T.float32), -1).numpy())
            assert getattr(T, name)(x, -1, dtype=low).dtype is low
            assert getattr(x, name)(0).dtype is T.float32
            # nn.functional's too (it returned float32 for an explicit 16-bit dtype)
            assert getattr(nn.functional, name)(x, -1).dtype is T.float32
            z = getattr(nn.functional, name)(x, -1, dtype=low)
            assert z.dtype is low
            np.testing.assert_array_equal(z.astype(T.float32).numpy(),
                                          y.astype(low).astype(T.float32).numpy())
        assert T.relu(x).dtype is low   # not in the table


def test_compiled_step_matches_eager():
    def f(x):
        return T.softmax(x, -1) + T.log_softmax(x, 0) * T.relu(x)
    cf = T.compile(f)
    for seed in range(4):
        x = T.asarray(np.random.default_rng(seed).standard_normal((3, 5)))
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())


# ---------------------------------------------------------------- devices

@pytest.mark.parametrize("name", ["softmax", "log_softmax", "relu"])
def test_cuda_matches_cpu(path, device, name):
    a, g = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    for dim in (0, 1):
        out = []
        for dev in ("cpu", device):
            x = T.asarray(a, device=dev).astype(T.float32).requires_grad_()
            y = T.relu(x) if name == "relu" else getattr(T, name)(x, dim)
            y.backward(T.asarray(g, device=dev).astype(T.float32))
            out.append((y.detach().to("cpu").numpy(), x.grad.to("cpu").numpy()))
        for u, v in zip(*out):
            np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
