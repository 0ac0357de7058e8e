"""The lead's fixes of the seventh hunt's session, each test naming what failed before."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensor as T
from nn import functional as F

_ACTIVATIONS = ["celu", "dropout", "elu", "gelu", "glu", "hardsigmoid", "hardswish", "hardtanh",
                "layer_norm", "leaky_relu", "linear", "log_softmax", "logsigmoid", "mish", "prelu",
                "relu", "relu6", "selu", "sigmoid", "silu", "softmax", "softmin", "softplus",
                "softsign", "tanh", "tanhshrink"]


@pytest.mark.parametrize("name", _ACTIVATIONS)
def test_functional_first_argument_is_named_input(name):
    """F.relu(input=x) raised TypeError: these functions named their first argument x where
    PyTorch names it input."""
    assert next(iter(inspect.signature(getattr(F, name)).parameters)) == "input"


def test_functional_input_keyword_calls(device):
    a = np.linspace(-2, 2, 12).reshape(3, 4)
    x = T.asarray(a, device=device)
    np.testing.assert_array_equal(F.relu(input=x).numpy(), np.maximum(a, 0))
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(F.softmax(input=x, dim=1).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-12)
    w = T.ones((2, 4), dtype=T.float64, device=device)
    np.testing.assert_allclose(F.linear(input=x, weight=w).numpy(), a @ np.ones((4, 2)))


@pytest.mark.parametrize("op,by_weight", [("mse_loss", True), ("l1_loss", True),
                                          ("huber_loss", False)])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_elementwise_losses_take_weight(device, op, by_weight, reduction):
    """mse_loss / l1_loss had no weight= (PyTorch's since 2.6): 'mean' divides by the weights'
    sum there, and by the count in huber_loss."""
    rng = np.random.default_rng(0)
    a, b, w = rng.normal(size=(3, 5)), rng.normal(size=(3, 5)), rng.uniform(0.5, 2, (3, 5))
    d = a - b
    per = {"mse_loss": d * d, "l1_loss": np.abs(d),
           "huber_loss": np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)}[op] * w
    want = {"none": per, "sum": per.sum(),
            "mean": per.sum() / (w.sum() if by_weight else per.size)}[reduction]
    got = getattr(F, op)(T.asarray(a, device=device), T.asarray(b, device=device),
                         reduction=reduction, weight=T.asarray(w, device=device))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match=f"{op}: weight shape"):
        getattr(F, op)(T.asarray(a), T.asarray(b), weight=T.ones(5, dtype=T.float64))


def test_weighted_loss_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b, w = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.uniform(0.5, 2, (4, 3))
    for op in ("mse_loss", "l1_loss", "huber_loss"):
        want = getattr(torch.nn.functional, op)(torch.tensor(a), torch.tensor(b),
                                                weight=torch.tensor(w)).item()
        got = getattr(F, op)(T.asarray(a), T.asarray(b), weight=T.asarray(w)).item()
        assert got == pytest.approx(want, rel=1e-12), op


def test_tensor_norm_nuc_and_fro_dims_as_pytorch():
    """x.norm('nuc') of a 3-D tensor returned a batch of nuclear norms, and x.norm('fro',
    dim=(0, 1, 2)) a number, where PyTorch raises (a matrix norm takes two dims)."""
    a = np.random.default_rng(2).normal(size=(2, 3, 4))
    x = T.asarray(a)
    with pytest.raises(ValueError, match="p='nuc' with dim=None needs a 2-D tensor"):
        x.norm("nuc")
    with pytest.raises(ValueError, match="p='fro' takes one or two dims"):
        x.norm("fro", dim=(0, 1, 2))
    np.testing.assert_allclose(x[0].norm("nuc").item(), np.linalg.norm(a[0], "nuc"), rtol=1e-12)
    np.testing.assert_allclose(x.norm("fro").item(), np.sqrt((a * a).sum()), rtol=1e-12)
    np.testing.assert_allclose(x.norm("nuc", dim=(1, 2)).numpy(),
                               np.linalg.norm(a, "nuc", axis=(1, 2)), rtol=1e-12)


@pytest.mark.parametrize("fn", [T.zeros, T.ones, T.empty])
def test_creation_refuses_none_shape(fn):
    """zeros(None) returned a 0-d tensor; NumPy and PyTorch raise TypeError (() is 0-d, and so
    is zeros() here)."""
    with pytest.raises(TypeError, match="got None"):
        fn(None)
    assert fn().shape == fn(()).shape == () and fn(2, 3).shape == (2, 3) and fn(shape=(4,)).shape == (4,)


@pytest.mark.parametrize("n,x,want", [
    (50, -1.5, -1.542177794502834e+44), (10, -1.5, -156.22959659323299),
    (50, -40.5, -1.3118761399254545e-18), (3, -7.25, 1558.5411952034045),
    (11, -2.5, 326999042257.06551), (2, -0.3, 67.63908119988316)])
def test_polygamma_below_zero_keeps_its_digits(device, n, x, want):
    """polygamma(50, -1.5) returned -0.0 (and polygamma(10, -1.5) lost 8 digits): the Hurwitz
    zeta of a negative q took its negative terms as a difference of two zetas, whose rounding
    (~1e15 at q = -1.5) swamped a result of 5e-21. References: the defining sum in 150-digit
    arithmetic (SciPy and PyTorch give -3.18e55 for the first)."""
    got = T.polygamma(n, T.asarray([x], device=device)).item()
    assert got == pytest.approx(want, rel=1e-13)


def test_hurwitz_zeta_far_below_zero(device):
    """zeta(3, -10000.5) lost 4 of its digits to the cancelling tails; with q = -10000.5 every
    term below 0 has a mirror above and the sum is zeta(3, 10001.5)."""
    z = T.zeta(3.0, T.asarray([-10000.5, 10001.5], device=device)).numpy()
    assert z[0] == pytest.approx(4.9990001374850013228e-09, rel=1e-14) and z[0] == z[1]


_ROF = {"exp": lambda x: T.exp(x) * x[0], "tanh": lambda x: T.tanh(x * x),
        "softmax": lambda x: T.softmax(x, 0) * x, "sqrt": lambda x: T.sqrt(x) * x[1],
        "pow": lambda x: x ** x, "cumprod": lambda x: T.cumprod(x, 0),
        "inv": lambda x: T.linalg.inv(x.reshape(2, 2) + 2 * T.eye(2, dtype=x.dtype)).reshape(4)}


@pytest.mark.parametrize("name", sorted(_ROF))
def test_reverse_over_forward(device, name):
    """The tangent of autograd.jvp, differentiated by reverse mode, lost every term through the
    op's output (exp's tangent is out * t, and out was not yet on the graph when the tangent
    was computed): d/dx sum(jvp) of exp(x) * x[0] gave [13.40, 2.72, 7.39] for [14.23, 4.08,
    11.08]. Checked against reverse over reverse (the same vector: J^T-weighted sums)."""
    import autograd
    f = _ROF[name]
    a = np.random.default_rng(5).uniform(0.5, 1.5, 4)
    v = T.asarray(np.random.default_rng(6).normal(size=4), device=device)
    x = T.asarray(a, device=device).requires_grad_()
    _, tan = autograd.jvp(f, x, v)
    (got,) = autograd.grad(tan.sum(), x)
    x2 = T.asarray(a, device=device).requires_grad_()
    (g,) = autograd.grad(f(x2).sum(), x2, create_graph=True)   # d/dx (1^T J v) = d/dx (v . J^T 1)
    (want,) = autograd.grad((g * v).sum(), x2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
