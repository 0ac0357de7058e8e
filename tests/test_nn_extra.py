"""The activations, losses and distances of nn/_functional_extra.py and their modules.

- hand values and derivatives at the kinks (torch-free): hardtanh's 0 at its bounds, elu's
  alpha at 0, softplus's linear region, logsigmoid and soft_margin_loss at +-800, kl_div's
  0 log 0, smooth_l1 with beta = 0 as l1;
- float64 gradcheck of a handful, jvp against the Jacobian for three;
- PyTorch (when importable): every function forward and input gradients, with inputs on the
  kinks, float32 and float64;
- modules against their functions, reprs, in-place forms, autocast, error messages, the
  docstring examples; a few functions on the cuda device (a GPU, else the emulator) as on cpu.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from autograd.forward import jvp
from autograd.functional import jacobian
from nn import functional as F

RNG = np.random.default_rng(23)
TOL = {T.float32: dict(rtol=2e-5, atol=2e-6), T.float64: dict(rtol=1e-10, atol=1e-12)}


def arr(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def leaf(a, dtype=T.float64):
    return T.asarray(np.asarray(a, dtype=np.float64)).astype(dtype).requires_grad_()


def close(t, ref, dtype=T.float64, **kw):
    tol = {**TOL[dtype], **kw}
    v = t.detach().astype(T.float64).numpy() if isinstance(t, T.Tensor) else t
    np.testing.assert_allclose(np.asarray(v), np.asarray(ref, dtype=np.float64), **tol)


def grad(fn, *xs):
    return ag.grad(fn(*xs).sum(), list(xs))


# ---------------------------------------------------------------- by hand (no torch)


def test_kinks_by_hand():
    x = leaf([-1.0, 1.0, 0.0, -2.0])
    assert grad(F.hardtanh, x)[0].tolist() == [0.0, 0.0, 1.0, 0.0]        # 0 at the bounds
    x = leaf([0.0, 6.0, 3.0])
    assert grad(F.relu6, x)[0].tolist() == [0.0, 0.0, 1.0]
    x = leaf([-3.0, 3.0, 0.0])
    assert grad(F.hardswish, x)[0].tolist() == [0.0, 1.0, 0.5]
    assert grad(F.hardsigmoid, x)[0].tolist() == [0.0, 0.0, 1 / 6]
    x = leaf([0.0, 800.0, -800.0])
    y = F.elu(x, 2.0)
    assert y.tolist() == [0.0, 800.0, -2.0]
    assert grad(lambda v: F.elu(v, 2.0), x)[0].tolist() == [2.0, 1.0, 0.0]   # alpha at 0
    close(grad(F.celu, leaf([0.0]))[0], [1.0])
    close(grad(F.selu, leaf([0.0]))[0], [1.6732632423543772 * 1.0507009873554805])
    x = leaf([0.0, -1.0, 1.0])
    assert grad(lambda v: F.prelu(v, T.tensor([0.25])), x)[0].tolist() == [0.25, 0.25, 1.0]
    a, b = leaf([1.0, 2.0]), leaf([1.0, 1.0])   # clamp_min: no gradient at 0 (PyTorch 2.14's)
    ga, gb = grad(lambda a, b: F.margin_ranking_loss(a, b, T.tensor([1.0, -1.0]),
                                                     reduction="none"), a, b)
    assert ga.tolist() == [0.0, 1.0] and gb.tolist() == [0.0, -1.0]
    nan = F.hardtanh(T.tensor([math.nan])).item()
    assert math.isnan(nan) and math.isnan(F.elu(T.tensor([math.nan])).item())


def test_smooth_values_by_hand():
    x = leaf([20.0, 20.5, 0.0, -800.0, 800.0])
    y = F.softplus(x)
    close(y, [math.log1p(math.exp(20.0)), 20.5, math.log(2), 0.0, 800.0])
    close(grad(F.softplus, x)[0], [1 / (1 + math.exp(-20.0)), 1.0, 0.5, 0.0, 1.0])
    close(F.softplus(T.tensor([2.5, 2.6]), beta=2.0, threshold=5.0),
          [math.log1p(math.exp(5.0)) / 2, 2.6])
    x = leaf([-800.0, 800.0, 0.0])
    close(F.logsigmoid(x), [-800.0, 0.0, -math.log(2)])
    close(grad(F.logsigmoid, x)[0], [1.0, 0.0, 0.5])
    close(F.mish(T.tensor([0.0, 800.0, -800.0])), [0.0, 800.0, 0.0])
    close(grad(F.mish, leaf([0.0]))[0], [0.6])
    close(F.softsign(T.tensor([-3.0, 1.0])), [-0.75, 0.5])
    close(F.glu(T.tensor([[1.0, 2.0, 0.0, 0.0]])), [[0.5, 1.0]])
    close(F.softmin(T.tensor([0.0, math.log(3)]), 0), [0.75, 0.25])


def test_loss_values_by_hand():
    x, t = leaf([0.0, 0.5, -2.0, 1.0]), T.tensor([0.0, 0.0, 0.0, 0.0])
    for beta in (1.0, 0.5):
        d = np.abs([0.0, 0.5, -2.0, 1.0])
        ref = np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
        close(F.smooth_l1_loss(x, t, reduction="none", beta=beta), ref)
        close(F.huber_loss(x, t, reduction="none", delta=beta), beta * ref)
    y0, g0 = F.smooth_l1_loss(x, t, beta=0.0), grad(lambda v: F.smooth_l1_loss(v, t, beta=0.0), x)
    assert y0.item() == F.l1_loss(x, t).item()
    assert g0[0].tolist() == grad(lambda v: F.l1_loss(v, t), x)[0].tolist() == [0.0, 0.25, -0.25, 0.25]
    w = T.tensor([1.0, 2.0, 3.0, 4.0])
    close(F.huber_loss(x, t, delta=1.0, weight=w), (0.125 * 2 + 1.5 * 3 + 0.5 * 4) / 4)
    # kl_div: 0 log 0 = 0, finite input gradients; batchmean divides by the batch
    lp, q = leaf([[-1.0, -2.0], [-0.5, -3.0]]), T.tensor([[0.0, 1.0], [0.25, 0.75]])
    ref = np.array([[0.0, 2.0], [0.25 * (math.log(0.25) + 0.5), 0.75 * (math.log(0.75) + 3.0)]])
    close(F.kl_div(lp, q, reduction="none"), ref)
    close(F.kl_div(lp, q, reduction="batchmean"), ref.sum() / 2)
    close(F.kl_div(lp[1], T.log(q[1]), reduction="sum", log_target=True), ref[1].sum())
    assert np.isfinite(grad(lambda v: F.kl_div(v, q, reduction="sum"), lp)[0].numpy()).all()
    # soft margin without overflow where log1p(exp(800)) is inf
    x = leaf([800.0, -800.0, 0.0])
    close(F.soft_margin_loss(x, T.tensor([-1.0, 1.0, 1.0]), reduction="none"),
          [800.0, 800.0, math.log(2)])
    close(grad(lambda v: F.soft_margin_loss(v, T.tensor([-1.0, 1.0, 1.0]), reduction="sum"),
               x)[0], [1.0, -1.0, -0.5])
    # poisson: Stirling's term only where target > 1
    t = T.tensor([0.0, 1.0, 5.0])
    st = 5 * math.log(5) - 5 + 0.5 * math.log(2 * math.pi * 5)
    close(F.poisson_nll_loss(T.tensor([0.0, 0.0, 0.0]), t, full=True, reduction="none"),
          [1.0, 1.0, 1.0 + st])
    close(F.poisson_nll_loss(T.tensor([2.0]), T.tensor([3.0]), log_input=False, eps=0.0),
          2 - 3 * math.log(2))
    # gaussian: var as a float, and clamped at eps in value only
    i, tg = T.tensor([1.0, 2.0]), T.tensor([3.0, 2.0])
    close(F.gaussian_nll_loss(i, tg, 1.0, reduction="sum"), 2.0)
    close(F.gaussian_nll_loss(i, tg, 1.0, full=True), 1.0 + 0.5 * math.log(2 * math.pi))
    v = leaf([0.0, 4.0])
    close(F.gaussian_nll_loss(i, tg, v, eps=0.5, reduction="none"),
          [0.5 * (math.log(0.5) + 8.0), 0.5 * math.log(4.0)])
    close(grad(lambda v: F.gaussian_nll_loss(i, tg, v, eps=0.5, reduction="sum"), v)[0],
          [0.5 * (1 / 0.5 - 4 / 0.25), 0.5 * 0.25])
    # target gradients where PyTorch's are NaN (its backward meets 0 * log 0): finite here
    t = leaf([0.0, 1.0, 5.0])
    close(grad(lambda t: F.poisson_nll_loss(T.full((3,), 0.5), t, full=True, reduction="sum"),
               t)[0], [-0.5, -0.5, -0.5 + math.log(5) + 0.1])
    q = leaf([0.0, 0.5])
    close(grad(lambda q: F.kl_div(T.tensor([-1.0, -2.0]), q, reduction="sum"), q)[0],
          [1.0, math.log(0.5) + 3.0])
    close(F.pairwise_distance(T.tensor([[3.0, 4.0]]), T.tensor([0.0, 0.0]), eps=0.0), [5.0])
    close(F.cosine_similarity(T.tensor([[1.0, 0.0], [0.0, 0.0]]), T.tensor([1.0, 1.0])),
          [math.sqrt(0.5), 0.0])


# ---------------------------------------------------------------- gradcheck / jvp (no torch)

GRADCHECK = {
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0), 1),
    "elu": (lambda x: F.elu(x, 1.5), 1),
    "mish": (F.mish, 1),
    "glu": (lambda x: F.glu(x, 1), 1),
    "prelu": (lambda x, w: F.prelu(x, w), 2),
    "smooth_l1": (lambda x, y: F.smooth_l1_loss(x, y, beta=0.7), 2),
    "kl_div_log": (lambda x, y: F.kl_div(x, y, reduction="batchmean", log_target=True), 2),
    "poisson_full": (lambda x: F.poisson_nll_loss(x, T.tensor([[0.0, 2.0, 3.0, 7.0]] * 3),
                                                  full=True), 1),
    "gaussian": (lambda x, v: F.gaussian_nll_loss(x, T.ones((3, 4)), v * v + 0.1), 2),
    "cosine_embedding": (lambda a, b: F.cosine_embedding_loss(a, b, T.tensor([1, -1, 1]),
                                                              margin=-0.5), 2),
    "triplet_swap": (lambda a, p: F.triplet_margin_loss(a, p, T.zeros((3, 4)), margin=2.0,
                                                        swap=True), 2),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b, dim=0), 2),
    "pairwise_p3": (lambda a, b: F.pairwise_distance(a, b, p=3.0), 2),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck(name):
    fn, n = GRADCHECK[name]
    xs = [leaf(arr(3, 4) + 0.05), leaf(arr(4) if name == "prelu" else arr(3, 4))][:n]
    assert ag.gradcheck(fn, tuple(xs))


def test_gradgradcheck():
    for fn in (F.mish, lambda x: F.softplus(x, 2.0), F.logsigmoid):
        assert ag.gradgradcheck(fn, (leaf(arr(2, 3)),))


@pytest.mark.parametrize("fn", [F.mish,
                                lambda x: F.kl_div(x, T.full((3, 4), 0.5), reduction="none"),
                                lambda x: F.cosine_similarity(x, T.ones((3, 4)))],
                         ids=["mish", "kl_div", "cosine_similarity"])
def test_jvp_matches_jacobian(fn):
    x, t = T.asarray(arr(3, 4)), T.asarray(arr(3, 4))
    _, tan = jvp(fn, x, t)
    jac = jacobian(fn, x).numpy().reshape(-1, 12)
    close(tan, (jac @ t.numpy().reshape(-1)).reshape(tan.shape), atol=1e-10)


# ---------------------------------------------------------------- modules, in place, autocast


def test_modules_call_their_functions():
    x = leaf(arr(2, 4, 3))
    pairs = [(nn.Softplus(2.0, 5.0), F.softplus(x, 2.0, 5.0)), (nn.ELU(0.5), F.elu(x, 0.5)),
             (nn.SELU(), F.selu(x)), (nn.CELU(2.0), F.celu(x, 2.0)), (nn.ReLU6(), F.relu6(x)),
             (nn.Hardtanh(-2.0, 0.5), F.hardtanh(x, -2.0, 0.5)),
             (nn.Hardsigmoid(), F.hardsigmoid(x)), (nn.Hardswish(), F.hardswish(x)),
             (nn.LogSigmoid(), F.logsigmoid(x)), (nn.Mish(), F.mish(x)),
             (nn.Softsign(), F.softsign(x)), (nn.Tanhshrink(), F.tanhshrink(x)),
             (nn.GLU(1), F.glu(x, 1)), (nn.Softmin(2), F.softmin(x, 2))]
    for m, ref in pairs:
        assert np.array_equal(m(x).detach().numpy(), ref.detach().numpy()), m
    y, v = T.asarray(arr(2, 4, 3)), T.asarray(RNG.random((2, 4, 3)) + 0.1)
    lab = T.tensor([1.0, -1.0])
    losses = [(nn.SmoothL1Loss("sum", 0.5)(x, y), F.smooth_l1_loss(x, y, "sum", 0.5)),
              (nn.HuberLoss(delta=2.0)(x, y), F.huber_loss(x, y, delta=2.0)),
              (nn.KLDivLoss("batchmean", True)(x, y), F.kl_div(x, y, "batchmean", True)),
              (nn.PoissonNLLLoss(full=True)(x, v), F.poisson_nll_loss(x, v, full=True)),
              (nn.GaussianNLLLoss(full=True)(x, y, v), F.gaussian_nll_loss(x, y, v, full=True)),
              (nn.SoftMarginLoss()(x, y), F.soft_margin_loss(x, y)),
              (nn.MarginRankingLoss(0.5)(x, y, y), F.margin_ranking_loss(x, y, y, 0.5)),
              (nn.HingeEmbeddingLoss(2.0)(x, y), F.hinge_embedding_loss(x, y, 2.0)),
              (nn.CosineEmbeddingLoss(0.1)(x[0].T, y[0].T, T.tensor([1.0, -1.0, 1.0])),
               F.cosine_embedding_loss(x[0].T, y[0].T, T.tensor([1.0, -1.0, 1.0]), 0.1)),
              (nn.TripletMarginLoss(p=1.0, swap=True)(x[0], y[0], v[0]),
               F.triplet_margin_loss(x[0], y[0], v[0], p=1.0, swap=True))]
    for got, ref in losses:
        assert got.item() == ref.item()
    assert nn.CosineEmbeddingLoss(reduction="none")(x[:, :, 0], y[:, :, 0], lab).shape == (2,)
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(nn.ELU(inplace=True)) == "ELU(alpha=1.0, inplace=True)"
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.ReLU6(True)) == "ReLU6(inplace=True)" and repr(nn.Hardswish(True)) == "Hardswish()"
    assert repr(nn.KLDivLoss("batchmean")) == "KLDivLoss(reduction='batchmean')"


def test_prelu_module():
    m = nn.PReLU(3, init=0.1)
    assert repr(m) == "PReLU(num_parameters=3)" and [n for n, _ in m.named_parameters()] == ["weight"]
    assert m.weight.dtype is T.float32 and m.weight.tolist() == [np.float32(0.1)] * 3
    x = T.asarray(np.array([[[-1.0, 2.0]], [[-2.0, 0.0]], [[3.0, -4.0]]]).transpose(1, 0, 2),
                  dtype=T.float32)                            # (1, 3, 2): channel c on dim 1
    y = m(x)
    y.sum().backward()
    close(m.weight.grad, [-1.0, -2.0, -4.0], T.float32)
    close(y, [[[-0.1, 2.0], [-0.2, 0.0], [3.0, -0.4]]], T.float32)
    assert nn.PReLU()(T.tensor([-4.0], dtype=T.float32)).tolist() == [-1.0]


def test_inplace_forms():
    xa = np.array([[-3.5, -1.0, 0.25, 0.5, 2.0, 7.0]])
    for f in (F.elu, F.selu, F.celu, F.relu6, F.hardtanh, F.hardsigmoid, F.hardswish, F.mish):
        grads = []
        for ip in (False, True):
            x = T.tensor(xa, requires_grad=True)
            h = x * 2.0
            y = f(h, inplace=ip)
            assert (y is h) == ip
            (y * y * T.arange(1.0, 7.0)).sum().backward()
            grads.append(x.grad.numpy())
        assert np.array_equal(grads[0], grads[1]), f
    z = T.tensor([-1.0, 2.0])
    nn.Hardtanh(inplace=True)(z)
    assert z.tolist() == [-1.0, 1.0]


def test_autocast_losses_run_in_float32():
    x = T.asarray(arr(3, 4)).astype(T.bfloat16)
    with T.autocast("cpu", dtype=T.bfloat16):
        for fn in (F.smooth_l1_loss, F.huber_loss, F.kl_div):
            assert fn(x, x).dtype is T.float32


DEVICE_FNS = {
    "softplus": lambda x: F.softplus(x, 2.0), "elu": F.elu, "hardtanh": F.hardtanh,
    "hardswish": F.hardswish, "logsigmoid": F.logsigmoid, "mish": F.mish,
    "glu": lambda x: F.glu(x, 1), "prelu": lambda x: F.prelu(x, T.full((4,), 0.3)),
    "smooth_l1": lambda x: F.smooth_l1_loss(x, x * 0.5, reduction="none"),
    "kl_div": lambda x: F.kl_div(x, T.abs(x), reduction="batchmean"),
    "cosine_similarity": lambda x: F.cosine_similarity(x, x + 1.0),
    "triplet": lambda x: F.triplet_margin_loss(x, x * 2.0, x + 1.0, swap=True, reduction="none"),
    "gaussian_nll": lambda x: F.gaussian_nll_loss(x, x * 0.0, T.abs(x), reduction="sum"),
}


@pytest.mark.parametrize("device", ["cuda"], indirect=True)
def test_on_cuda_as_on_cpu(device):
    """A smoke test of the compositions on the other device (a GPU, else the emulator)."""
    a, g = arr(3, 4, 6), arr(3, 4, 6)
    for name, fn in DEVICE_FNS.items():
        out = []
        for dev in ("cpu", device):
            T.set_default_device(dev)             # the constants fn makes (the fixture resets it)
            x = T.asarray(a).requires_grad_()
            y = fn(x)
            (gx,) = ag.grad(y, x, T.asarray(g.reshape(-1)[:y.numel()].reshape(y.shape)))
            assert y.device.type == dev and gx.device.type == dev
            out.append((y.detach().numpy(), gx.numpy()))
        for u, v in zip(*out):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12, err_msg=name)


def test_docstring_examples():
    import doctest

    import nn._functional_extra as mod
    r = doctest.testmod(mod)
    assert r.failed == 0 and r.attempted > 0


# ---------------------------------------------------------------- errors


def test_error_messages():
    x = T.ones((4, 3))
    cases = [
        (lambda: F.softplus(T.ones(2, dtype=T.int64)), TypeError,
         "softplus: expected a floating-point tensor"),
        (lambda: F.hardtanh(x, 1.0, -1.0), ValueError, r"hardtanh: min_val \(1.0\) cannot be"),
        (lambda: nn.Hardtanh(1.0, -1.0), ValueError, "Hardtanh: min_val"),
        (lambda: F.celu(x, 0.0), ValueError, "celu: alpha cannot be 0"),
        (lambda: F.glu(x, 1), ValueError, r"glu: halving dimension must be even, but dimension "
                                          r"1 of input shape \(4, 3\) is size 3"),
        (lambda: F.glu(T.tensor(1.0)), ValueError, "glu: a 0-d input"),
        (lambda: F.glu(x, 2), IndexError, r"glu: dim 2 is out of range for input shape \(4, 3\)"),
        (lambda: F.prelu(x, T.ones(2)), ValueError,
         r"prelu: weight has 2 parameters but input shape \(4, 3\) has 3 channel"),
        (lambda: F.prelu(x, T.ones((1, 1))), ValueError, "prelu: weight must be a scalar or 1-D"),
        (lambda: F.prelu(x, T.ones(3, dtype=T.float32)), TypeError, "prelu: weight is float32"),
        (lambda: F.smooth_l1_loss(x, x, beta=-1.0), ValueError, "smooth_l1_loss: beta must be >= 0"),
        (lambda: F.smooth_l1_loss(x, T.ones(3)), ValueError,
         r"smooth_l1_loss: input shape \(4, 3\) and target shape \(3,\) differ"),
        (lambda: F.huber_loss(x, x, delta=0.0), ValueError, "huber_loss: delta must be > 0"),
        (lambda: F.huber_loss(x, x, weight=T.ones(3)), ValueError, "huber_loss: weight shape"),
        (lambda: F.huber_loss(x, x, reduction="avg"), ValueError,
         "huber_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'"),
        (lambda: F.kl_div(x, x, reduction="avg"), ValueError,
         "kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none'"),
        (lambda: nn.KLDivLoss(reduction="max"), ValueError, "KLDivLoss: reduction"),
        (lambda: nn.SmoothL1Loss(reduction="max"), ValueError, "SmoothL1Loss: reduction"),
        (lambda: F.kl_div(x, T.ones(2)), ValueError,
         r"kl_div: shapes input \(4, 3\), target \(2,\) do not broadcast"),
        (lambda: F.kl_div(x, T.ones(3, dtype=T.float32)), TypeError,
         "kl_div: input dtype float64 and target dtype float32 differ"),
        (lambda: F.margin_ranking_loss(x, T.ones(3), T.ones(3)), ValueError,
         "margin_ranking_loss: input1, input2 and target must have the same number of dims"),
        (lambda: F.cosine_embedding_loss(x, x, T.ones((4, 1))), ValueError,
         "cosine_embedding_loss: target must be 0-d or 1-D"),
        (lambda: F.cosine_embedding_loss(x, x, T.tensor(1.0)), ValueError,
         r"cosine_embedding_loss: a 0-D target expects 1-D inputs, got shapes \(4, 3\)"),
        (lambda: F.cosine_embedding_loss(x, x, T.ones(3)), ValueError,
         r"cosine_embedding_loss: shapes target \(3,\), rows \(4,\) do not broadcast"),
        (lambda: F.triplet_margin_loss(x, x, x, margin=0.0), ValueError,
         "triplet_margin_loss: margin must be greater than 0, got 0.0"),
        (lambda: F.triplet_margin_loss(x, T.ones(3), x), ValueError,
         "triplet_margin_loss: anchor, positive and negative must have the same number of dims"),
        (lambda: F.gaussian_nll_loss(x, x, T.ones(3)), ValueError,
         r"gaussian_nll_loss: var shape \(3,\) does not fit input shape \(4, 3\)"),
        (lambda: F.gaussian_nll_loss(x, x, T.ones((2, 3))), ValueError, "var shape"),
        (lambda: F.gaussian_nll_loss(x, x, -T.ones((4, 3))), ValueError,
         "gaussian_nll_loss: var has negative entry"),
        (lambda: F.gaussian_nll_loss(x, x, -1.0), ValueError,
         "gaussian_nll_loss: var has negative entry"),
        (lambda: F.pairwise_distance(x, T.ones(2)), ValueError,
         r"pairwise_distance: shapes x1 \(4, 3\), x2 \(2,\) do not broadcast"),
        (lambda: F.cosine_similarity(x, x, dim=2), IndexError,
         r"cosine_similarity: dim 2 is out of range for input shape \(4, 3\)"),
        (lambda: F.soft_margin_loss(x, x, reduction=None), ValueError,
         "soft_margin_loss: reduction must be"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


# ---------------------------------------------------------------- PyTorch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _ours_theirs(torch, values, dtype, grads):
    npd = np.float32 if dtype is T.float32 else np.float64
    ours, theirs = [], []
    for v, g in zip(values, grads):
        if type(v) is float:                         # a float argument (gaussian var)
            ours.append(v)
            theirs.append(v)
            continue
        a = np.asarray(v)
        a = a.astype(npd) if a.dtype.kind == "f" else a
        o, t = T.asarray(a), torch.tensor(a)
        if g:
            o.requires_grad_()
            t.requires_grad_()
        ours.append(o)
        theirs.append(t)
    return ours, theirs


def _against_torch(torch, name, values, grads, kw, dtype, grad_tol=None, theirs_kw=None):
    ours, theirs = _ours_theirs(torch, values, dtype, grads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # kl_div's note about reduction='mean'
        y = getattr(F, name)(*ours, **kw)
        yt = getattr(torch.nn.functional, name)(*theirs, **{**kw, **(theirs_kw or {})})
    assert y.dtype is dtype and y.shape == tuple(yt.shape)
    close(y, yt.detach().numpy(), dtype)
    xs = [o for o, g in zip(ours, grads) if g]
    if not xs:
        return
    g = arr(*yt.shape)
    gs = ag.grad(y, xs, T.asarray(g).astype(dtype))
    gts = torch.autograd.grad(yt, [t for t, g in zip(theirs, grads) if g],
                              torch.tensor(g, dtype=yt.dtype), allow_unused=True)
    for u, v in zip(gs, gts):      # unused: PyTorch's p = 0 norm records no gradient
        close(u, np.zeros(u.shape) if v is None else v.numpy(), dtype, **(grad_tol or {}))


# inputs on the kinks: hardtanh's / hardswish's / relu6's bounds, softplus's threshold (20 and
# 2.5 with beta=2, threshold=5), elu's 0, extremes where an unguarded exp would overflow
KINK_X = np.array([[-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], [20.0, 2.5, -10.0, 10.0, 100.0, -100.0],
                   [0.5, 2.0, -0.5, -2.0, 5.0, -5.0], [0.1, -0.1, 4.0, -4.0, 1.5, -1.5]])

ACTS = [("softplus", {}), ("softplus", dict(beta=2.0, threshold=5.0)),
        ("softplus", dict(beta=-1.0, threshold=10.0)), ("elu", {}), ("elu", dict(alpha=2.0)),
        ("selu", {}), ("celu", dict(alpha=0.5)), ("relu6", {}),
        ("hardtanh", dict(min_val=-1.0, max_val=3.0)), ("hardsigmoid", {}), ("hardswish", {}),
        ("logsigmoid", {}), ("mish", {}), ("softsign", {}), ("tanhshrink", {}),
        ("glu", dict(dim=0)), ("glu", {}), ("softmin", dict(dim=1))]


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("name,kw", ACTS, ids=[f"{n}{i}" for i, (n, _) in enumerate(ACTS)])
def test_activations_match_torch(torch, dtype, name, kw):
    # PyTorch's hardsigmoid backward multiplies by the float constant 1.0f / 6 in every dtype
    tol = dict(rtol=1e-7) if name == "hardsigmoid" else None
    _against_torch(torch, name, [KINK_X], [True], kw, dtype, tol)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
def test_prelu_matches_torch(torch, dtype):
    x = np.array([[[0.0, -1.0], [2.0, -0.5], [-3.0, 0.0]]] * 2)
    _against_torch(torch, "prelu", [x, np.array([0.25, -0.5, 2.0])], [True, True], {}, dtype)
    _against_torch(torch, "prelu", [x, np.array([0.1])], [True, True], {}, dtype)
    _against_torch(torch, "prelu", [x[0, 0], np.array(0.3)], [True, True], {}, dtype)


def _pos(*shape):
    return RNG.random(shape) + 0.2


def _labels(*shape, values=(1.0, -1.0)):
    return RNG.choice(values, shape).astype(np.float64)


B, D = 3, 4
A0 = arr(B, D)
DIFF = A0 + np.array([0.0, 0.5, -1.0, 2.0])          # |d| = 0, beta (0.5), delta (1.0)
PROBS = np.array([[0.0, 0.3, 0.7, 0.0], [0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]])
COUNTS = np.array([[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 8.0], [1.5, 4.0, 0.0, 2.0]])
VAR = _pos(B, D)
VAR[0, :2] = [1e-9, 0.0]                              # clamped to eps: gradient passes anyway
ZEROROW = A0.copy()
ZEROROW[0], ZEROROW[1] = 0.0, 1e-10                   # norms at and below eps

LOSSES = [
    ("smooth_l1_loss", [DIFF, A0], [True, True], dict(beta=0.5)),
    ("smooth_l1_loss", [DIFF, A0], [True, True], dict(beta=0.0)),
    ("smooth_l1_loss", [DIFF, A0], [True, True], {}),
    ("huber_loss", [DIFF, A0], [True, True], dict(delta=0.5)),
    ("huber_loss", [DIFF, A0], [True, True], dict(delta=1.0, weight=None)),
    ("kl_div", [-_pos(B, D), PROBS], [True, False], {}),           # 0 log 0 (target grad: see below)
    ("kl_div", [-_pos(B, D), _pos(B, D)], [True, True], {}),
    ("kl_div", [-_pos(B, D), -_pos(B, D)], [True, True], dict(log_target=True)),
    ("poisson_nll_loss", [arr(B, D), COUNTS], [True, True], {}),
    ("poisson_nll_loss", [arr(B, D), COUNTS], [True, False], dict(full=True)),
    ("poisson_nll_loss", [_pos(B, D), COUNTS], [True, True], dict(log_input=False)),
    ("gaussian_nll_loss", [A0, arr(B, D), VAR], [True, True, True], {}),
    ("gaussian_nll_loss", [A0, arr(B, D), _pos(B)], [True, True, True], dict(full=True)),
    ("gaussian_nll_loss", [A0, arr(B, D), _pos(1, D)], [True, True, True], {}),
    ("gaussian_nll_loss", [A0, arr(B, D), 0.5], [True, True, False], {}),
    ("soft_margin_loss", [arr(B, D, scale=3.0), _labels(B, D)], [True, False], {}),
    ("margin_ranking_loss", [A0, A0 * np.array([1.0, 0.5, 2.0, 1.0]), _labels(B, D)],
     [True, True, True], {}),
    ("margin_ranking_loss", [A0, arr(1, D), _labels(B, D)], [True, True, True], dict(margin=0.4)),
    ("hinge_embedding_loss", [np.array([[0.5, 1.0, 2.0, 0.3], [1.0, -1.0, 0.0, 2.5]]),
                              np.array([[1.0, -1.0, -1.0, 0.0], [1.0, -1.0, -1.0, -1.0]])],
     [True, False], {}),
    ("hinge_embedding_loss", [arr(B, D), np.array([1, -1, -1, 1])], [True, False],
     dict(margin=0.5)),
    ("cosine_embedding_loss", [A0, arr(B, D), _labels(B)], [True, True, False], {}),
    ("cosine_embedding_loss", [A0, arr(B, D), np.array([1.0, -1.0, 0.0])], [True, True, False],
     dict(margin=-0.3)),
    ("cosine_embedding_loss", [A0[0], arr(D), np.array(-1.0)], [True, True, False],
     dict(margin=-0.5)),
    ("triplet_margin_loss", [A0, arr(B, D), arr(B, D)], [True, True, True], {}),
    ("triplet_margin_loss", [A0, arr(B, D), arr(B, D)], [True, True, True],
     dict(margin=0.5, p=1.0, swap=True)),
    ("triplet_margin_loss", [A0, arr(1, D), A0 + 0.1], [True, True, True],
     dict(p=3.0, eps=1e-3, swap=True)),
]


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", range(len(LOSSES)), ids=[f"{c[0]}{i}" for i, c in enumerate(LOSSES)])
def test_losses_match_torch(torch, dtype, reduction, case):
    name, values, grads, kw = LOSSES[case]
    _against_torch(torch, name, values, grads, dict(kw, reduction=reduction), dtype)


def test_kl_div_batchmean_matches_torch(torch):
    for log_target, t in ((False, PROBS), (True, -_pos(B, D))):
        _against_torch(torch, "kl_div", [-_pos(B, D), t], [True, log_target],
                       dict(reduction="batchmean", log_target=log_target), T.float64)
    _against_torch(torch, "kl_div", [-_pos(1)[0], np.array(0.5)], [True, False],
                   dict(reduction="batchmean"), T.float64)


def test_huber_weight_matches_torch(torch):
    w = T.asarray(_pos(B, D))
    for reduction in ("none", "mean", "sum"):
        _against_torch(torch, "huber_loss", [DIFF, A0], [True, True],
                       dict(delta=0.5, reduction=reduction, weight=w), T.float64,
                       theirs_kw=dict(weight=torch.tensor(w.numpy())))


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("kw", [{}, dict(p=1.0), dict(p=3.0, keepdim=True), dict(p=math.inf),
                                dict(p=0.0), dict(p=-1.5, eps=0.0)], ids=str)
def test_pairwise_distance_matches_torch(torch, dtype, kw):
    _against_torch(torch, "pairwise_distance", [A0, arr(B, D)], [True, True], kw, dtype)
    _against_torch(torch, "pairwise_distance", [A0[0], arr(D)], [True, True], kw, dtype)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("shapes,kw", [(((B, D), (B, D)), {}), (((B, D), (D,)), {}),
                                       (((B, D), (B, D)), dict(dim=0, eps=1e-3)),
                                       (((2, B, D), (B, 1)), dict(dim=-1))], ids=str)
def test_cosine_similarity_matches_torch(torch, dtype, shapes, kw):
    a, b = arr(*shapes[0]), arr(*shapes[1])
    if shapes[0] == (B, D):
        a = ZEROROW.copy()                 # a zero row and a row below eps: clamped norms
    _against_torch(torch, "cosine_similarity", [a, b], [True, True], kw, dtype,
                   dict(rtol=1e-4, atol=1e-4) if dtype is T.float32 else None)
