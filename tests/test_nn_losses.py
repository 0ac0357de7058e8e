"""Losses: nn.functional's and the modules of nn/loss.py.

- the fused cross_entropy (class indices: log-softmax + NLL gather in one pass per row, with
  ignore_index, class weights and label_smoothing) against its composition of primitives,
  values and gradients through the fused C backward and the composed create_graph path;
- hand-computed values, float64 gradcheck / gradgradcheck, jvp (torch-free);
- PyTorch (when importable): every loss and option, outputs and input (and target)
  gradients, float32 and float64;
- shape / dtype / range errors.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import synced

import autograd as ag
import tensor as T
from autograd.forward import jvp
from autograd.functional import jacobian
from nn import _fused
from nn import functional as F
from nn.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss

pytestmark = pytest.mark.usefixtures("device")

RNG = np.random.default_rng(3)


def arr(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def leaf(a, dtype=T.float64):
    return T.asarray(np.asarray(a, dtype=np.float64)).astype(dtype).requires_grad_()


def close(t, ref, rtol=1e-10, atol=1e-12):
    v = t.astype(T.float64).numpy() if isinstance(t, T.Tensor) else t
    np.testing.assert_allclose(np.asarray(v), np.asarray(ref, dtype=np.float64), rtol=rtol, atol=atol)


def targets(n, c, ignore=None, seed=0):
    t = np.random.default_rng(seed).integers(0, c, n)
    if ignore is not None:
        t[::3] = ignore
    return T.asarray(t)


# ---------------------------------------------------------------- cross_entropy: fused vs composed


def ce_composed(x, t, w, ignore, eps, reduction):
    """PyTorch's definition in primitives: (1-eps) * nll + eps/C * smooth, mean over weights."""
    c = x.shape[1]
    logp = x - T.logsumexp(x, axis=1, keepdims=True)
    valid = (t != ignore).astype(x.dtype)
    st = T.where(t != ignore, t, 0)
    wt = (T.take(w, st) if w is not None else T.ones(t.shape[0], dtype=x.dtype)) * valid
    nll = -T.take_along_axis(logp, st[:, None], 1)[:, 0] * wt
    smooth = -(logp * (w if w is not None else 1.0)).sum(axis=1) * valid
    loss = (1 - eps) * nll + eps / c * smooth
    if reduction == "none":
        return loss
    return loss.sum() / wt.sum() if reduction == "mean" else loss.sum()


CE_CASES = [(None, 0.0, None), ("w", 0.0, None), (None, 0.15, None), ("w", 0.3, -100),
            (None, 0.0, 2), ("w", 0.1, 0)]


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("wkind,eps,ignore", CE_CASES)
def test_cross_entropy_fused_vs_composition(dtype, reduction, wkind, eps, ignore):
    n, c = 9, 5
    a = arr(n, c, scale=3.0)
    t = targets(n, c, ignore)
    ign = -100 if ignore is None else ignore
    w = T.asarray(RNG.random(c) + 0.5).astype(dtype) if wkind else None
    g = arr(n) if reduction == "none" else np.array(1.7)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype is T.float32 else dict(rtol=1e-10, atol=1e-12)

    def run(fn, create_graph):
        x = leaf(a, dtype)
        y = fn(x)
        (gx,) = ag.grad(y, x, T.asarray(g).astype(dtype), create_graph=create_graph)
        return y, gx

    y, gx = run(lambda x: F.cross_entropy(x, t, w, ign, reduction, eps), False)
    yc, gxc = run(lambda x: ce_composed(x, t, w, ign, eps, reduction), False)
    _, gxg = run(lambda x: F.cross_entropy(x, t, w, ign, reduction, eps), True)
    assert y.dtype is dtype and gx.dtype is dtype and y.shape == yc.shape
    close(y, yc.detach().numpy(), **tol)
    close(gx, gxc.numpy(), **tol)
    close(gxg, gxc.numpy(), **tol)


def test_cross_entropy_values_by_hand():
    x = T.tensor([[2.0, 0.0], [0.0, 0.0]])
    lse0 = math.log(math.exp(2) + 1)
    l0, l1 = lse0 - 2, math.log(2)
    close(F.cross_entropy(x, T.tensor([0, 1]), reduction="none"), [l0, l1])
    close(F.cross_entropy(x, T.tensor([0, 1])), (l0 + l1) / 2)
    close(F.cross_entropy(x, T.tensor([0, -100])), l0)                 # ignored row
    close(F.cross_entropy(x, T.tensor([0, 1]), T.tensor([3.0, 1.0])), (3 * l0 + l1) / 4)
    sm = 0.9 * l0 + 0.05 * (l0 + lse0)                                  # label smoothing 0.1
    close(F.cross_entropy(x[:1], T.tensor([0]), label_smoothing=0.1), sm)
    assert math.isnan(F.cross_entropy(x, T.tensor([-100, -100])).item())  # 0 / 0, as PyTorch


def test_cross_entropy_extremes_are_finite():
    x = leaf([[1000.0, -1000.0, 0.0], [-1e4, -1e4, -1e4]])
    y = F.cross_entropy(x, T.tensor([1, 2]), reduction="none")
    close(y, [2000.0, math.log(3)])
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_cross_entropy_nd_and_unbatched_layouts():
    a = arr(2, 4, 3, 5)
    t = T.asarray(np.random.default_rng(1).integers(0, 4, (2, 3, 5)))
    x = leaf(a)
    y = F.cross_entropy(x, t, reduction="none")
    assert y.shape == (2, 3, 5)
    flat = F.cross_entropy(T.moveaxis(x, 1, -1).reshape(-1, 4), t.reshape(-1), reduction="none")
    close(y, flat.detach().numpy().reshape(2, 3, 5))
    u = F.cross_entropy(T.tensor([1.0, 2.0, 0.5]), T.tensor(1))
    assert u.shape == () and abs(u.item() - F.cross_entropy(T.tensor([[1.0, 2.0, 0.5]]),
                                                            T.tensor([1])).item()) < 1e-15


def test_cross_entropy_16bit():
    a = arr(6, 10, scale=2.0)
    t = targets(6, 10)
    for d in (T.float16, T.bfloat16):
        x = T.asarray(a).astype(d)
        ref = ce_composed(x.astype(T.float32), t, None, -100, 0.1, "none")
        y = F.cross_entropy(x, t, reduction="none", label_smoothing=0.1)
        assert y.dtype is d
        close(y, ref.numpy(), rtol=1e-2, atol=1e-2)


def test_cross_entropy_probability_targets():
    a = arr(4, 3)
    p = np.abs(arr(4, 3))
    p /= p.sum(1, keepdims=True)
    x = leaf(a)
    logp = a - np.log(np.exp(a).sum(1, keepdims=True))
    close(F.cross_entropy(x, T.asarray(p)), -(p * logp).sum(1).mean())
    w = np.array([0.5, 1.0, 2.0])
    close(F.cross_entropy(x, T.asarray(p), T.asarray(w), reduction="sum"), -(p * logp * w).sum())
    ps = p * 0.8 + 0.2 / 3
    close(F.cross_entropy(x, T.asarray(p), label_smoothing=0.2, reduction="none"),
          -(ps * logp).sum(1))
    assert ag.gradcheck(lambda x, p: F.cross_entropy(x, p), (leaf(a), leaf(p)))


# ---------------------------------------------------------------- gradcheck / jvp (no torch)

GRADCHECK = {
    "ce": lambda x: F.cross_entropy(x, T.tensor([0, 2, -100]), reduction="sum"),
    "ce_all": lambda x: F.cross_entropy(x, T.tensor([0, 2, 1]), T.tensor([1.0, 2.0, 0.5]),
                                        label_smoothing=0.2),
    "nll": lambda x: F.nll_loss(x, T.tensor([1, 0, -100]), T.tensor([1.0, 2.0, 0.5])),
    "mse": lambda x: F.mse_loss(x, T.ones((3, 3), dtype=T.float64)),
    "l1": lambda x: F.l1_loss(x, T.ones((3, 3), dtype=T.float64), reduction="sum"),
    "bce": lambda x: F.binary_cross_entropy(T.sigmoid(x), T.full((3, 3), 0.3, dtype=T.float64)),
    "bce_logits": lambda x: F.binary_cross_entropy_with_logits(
        x, T.full((3, 3), 0.3, dtype=T.float64), pos_weight=T.tensor([1.0, 2.0, 3.0])),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_and_gradgradcheck(name):
    x = leaf(arr(3, 3) * 2 + 0.1)
    assert ag.gradcheck(GRADCHECK[name], (x,))
    assert ag.gradgradcheck(GRADCHECK[name], (x,))


def test_gradcheck_targets_of_elementwise_losses():
    x, y = leaf(RNG.random((2, 3)) * 0.8 + 0.1), leaf(RNG.random((2, 3)))
    assert ag.gradcheck(F.binary_cross_entropy, (x, y))
    assert ag.gradgradcheck(F.binary_cross_entropy, (x, y))
    assert ag.gradcheck(F.binary_cross_entropy_with_logits, (leaf(arr(2, 3)), y))
    assert ag.gradcheck(F.mse_loss, (leaf(arr(2, 3)), leaf(arr(2, 3))))


@pytest.mark.parametrize("eps,w", [(0.0, None), (0.25, [1.0, 2.0, 0.5, 1.5])])
def test_cross_entropy_jvp(eps, w):
    wt = None if w is None else T.tensor(w)
    fn = lambda x: F.cross_entropy(x, T.tensor([3, -100, 1]), wt, label_smoothing=eps,
                                   reduction="none")
    x, t = T.asarray(arr(3, 4)), T.asarray(arr(3, 4))
    _, tan = jvp(fn, x, t)
    jac = jacobian(fn, x).numpy().reshape(3, 12)
    close(tan, jac @ t.numpy().reshape(-1), atol=1e-10)
    _, (_, tlse) = jvp(lambda x: _fused.cross_entropy(x, T.tensor([0, 1, 2]), None, -100, 0.0),
                       x, t)
    p = np.exp(x.numpy()) / np.exp(x.numpy()).sum(1, keepdims=True)
    close(tlse, (p * t.numpy()).sum(1))


def test_bce_gradient_at_the_edges_as_torch():
    """d/dx = (x - t) / max(x (1 - x), 1e-12): finite at x = 0 and 1 (PyTorch's rule)."""
    x = leaf([0.0, 1.0, 0.5])
    t = T.tensor([0.0, 1.0, 1.0])
    loss = F.binary_cross_entropy(x, t, reduction="sum")
    loss.backward()
    close(loss, math.log(2))
    close(x.grad, [0.0, 0.0, -2.0])
    close(F.binary_cross_entropy(T.tensor([0.0]), T.tensor([1.0])), 100.0)   # log clamped at -100


def test_nll_loss_ignored_rows_take_no_part():
    """PyTorch's kernel skips ignored rows: an -inf in the column they would read does not
    make the loss NaN, and a mean over no rows (NaN) leaves zero gradients, not NaN ones."""
    x = np.array([[-0.5, -1.0, -2.0], [-np.inf, -1.0, -3.0]])
    a = T.tensor(x, requires_grad=True)
    loss = F.nll_loss(a, T.tensor([2, -100]))
    loss.backward()
    assert float(loss) == 2.0
    assert a.grad.tolist() == [[0.0, 0.0, -1.0], [0.0, 0.0, 0.0]]
    b = T.tensor(x, requires_grad=True)
    loss = F.nll_loss(b, T.tensor([-100, -100]))
    loss.backward()
    assert math.isnan(float(loss)) and not b.grad.numpy().any()
    assert float(F.nll_loss(T.tensor(x), T.tensor([-100, -100]), reduction="sum")) == 0.0


def test_values_by_hand():
    a, b = T.tensor([1.0, -2.0, 4.0]), T.tensor([0.0, 0.0, 1.0])
    assert F.mse_loss(a, b).item() == pytest.approx((1 + 4 + 9) / 3)
    assert F.mse_loss(a, b, reduction="sum").item() == 14.0
    assert F.l1_loss(a, b, reduction="none").tolist() == [1.0, 2.0, 3.0]
    lp = T.tensor([[-0.5, -1.5], [-2.0, -0.1]])
    assert F.nll_loss(lp, T.tensor([1, 0]), reduction="none").tolist() == [1.5, 2.0]
    close(F.nll_loss(lp, T.tensor([1, 0]), T.tensor([1.0, 3.0])), (3 * 1.5 + 2.0) / 4)
    close(F.nll_loss(lp, T.tensor([1, -1]), ignore_index=-1), 1.5)
    x = T.tensor([0.0, 3.0, -3.0])
    y = T.tensor([1.0, 0.0, 1.0])
    ref = [math.log(2), 3 + math.log1p(math.exp(-3)), math.log1p(math.exp(-3)) + 3]
    close(F.binary_cross_entropy_with_logits(x, y, reduction="none"), ref)
    close(F.binary_cross_entropy_with_logits(T.tensor([-800.0]), T.tensor([1.0])), 800.0)
    pw = T.tensor([2.0, 2.0, 2.0])
    close(F.binary_cross_entropy_with_logits(x, y, pos_weight=pw, reduction="none"),
          [2 * ref[0], ref[1], 2 * ref[2]])
    close(F.binary_cross_entropy(T.tensor([0.25]), T.tensor([0.0]), T.tensor([2.0])),
          -2 * math.log(0.75))


def test_loss_modules():
    x, t = leaf(arr(4, 3)), T.tensor([0, 2, 1, 2])
    assert CrossEntropyLoss()(x, t).item() == F.cross_entropy(x, t).item()
    w = T.tensor([1.0, 2.0, 3.0])
    m = CrossEntropyLoss(weight=w, ignore_index=1, reduction="sum", label_smoothing=0.1)
    assert [n for n, _ in m.named_buffers()] == ["weight"] and m.weight is w
    assert m(x, t).item() == F.cross_entropy(x, t, w, 1, "sum", 0.1).item()
    assert repr(m) == "CrossEntropyLoss(reduction='sum')"
    lp = F.log_softmax(x, 1)
    assert NLLLoss(w)(lp, t).item() == F.nll_loss(lp, t, w).item()
    y = T.asarray(arr(4, 3))
    assert MSELoss(reduction="none")(x, y).shape == (4, 3)
    assert L1Loss()(x, y).item() == F.l1_loss(x, y).item()
    p, q = T.sigmoid(x), T.asarray(RNG.random((4, 3)))
    assert BCELoss()(p, q).item() == F.binary_cross_entropy(p, q).item()
    pw = T.tensor([1.0, 2.0, 3.0])
    assert BCEWithLogitsLoss(pos_weight=pw)(x, q).item() == \
        F.binary_cross_entropy_with_logits(x, q, pos_weight=pw).item()
    m(x, t).backward()
    assert x.grad is not None and x.grad.shape == (4, 3)


# ---------------------------------------------------------------- errors


def test_error_messages():
    x = T.ones((4, 3))
    with pytest.raises(ValueError, match=r"mse_loss: input shape \(4, 3\) and target shape \(4,\) differ"):
        F.mse_loss(x, T.ones(4))
    with pytest.raises(TypeError, match="l1_loss: input dtype float64 and target dtype float32"):
        F.l1_loss(x, T.ones((4, 3), dtype=T.float32))
    with pytest.raises(ValueError, match=r"cross_entropy: target shape \(3,\) does not match input "
                                         r"shape \(4, 3\) \(expected target shape \(4,\)\)"):
        F.cross_entropy(x, T.tensor([0, 1, 2]))
    with pytest.raises(IndexError, match="cross_entropy: target 3 is out of bounds for 3 classes"):
        synced(F.cross_entropy(x, T.tensor([0, 1, 3, 0])))
    with pytest.raises(IndexError, match="nll_loss: target 5 is out of bounds for 3 classes"):
        synced(F.nll_loss(x, T.tensor([0, 5, 1, 0])))
    with pytest.raises(ValueError, match=r"cross_entropy: class-probability target shape"):
        F.cross_entropy(x, T.ones((4, 2)))
    with pytest.raises(TypeError, match="cross_entropy: input dtype float64 and target dtype float32"):
        F.cross_entropy(x, T.ones((4, 3), dtype=T.float32))
    with pytest.raises(ValueError, match=r"cross_entropy: weight shape \(2,\) != \(num_classes,\)"):
        F.cross_entropy(x, T.tensor([0, 1, 2, 0]), T.ones(2))
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(x, T.tensor([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(TypeError, match="nll_loss: class-index target must be an integer"):
        F.nll_loss(x, T.ones(4))
    with pytest.raises(ValueError, match="binary_cross_entropy: all elements of input should be "
                                         "between 0 and 1"):
        F.binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0]))
    with pytest.raises(ValueError, match="reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="MSELoss: reduction"):
        MSELoss(reduction="max")
    with pytest.raises(TypeError, match="cross_entropy: expected a floating-point tensor"):
        F.cross_entropy(T.ones((2, 3), dtype=T.int64), T.tensor([0, 1]))
    xw = T.ones((2, 3)).requires_grad_()
    wg = T.ones(3).requires_grad_()
    with pytest.raises(NotImplementedError, match="gradient with respect to weight"):
        F.cross_entropy(xw, T.tensor([0, 1]), wg).backward()


# ---------------------------------------------------------------- PyTorch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _t(torch, a, dtype, grad=True):
    npd = np.float32 if dtype is T.float32 else np.float64
    ours = T.asarray(np.asarray(a).astype(npd))
    theirs = torch.tensor(np.asarray(a).astype(npd))
    if grad:
        ours.requires_grad_()
        theirs.requires_grad_()
    return ours, theirs


def _compare(torch, y, yt, ins, ins_t, dtype):
    tol = dict(rtol=2e-5, atol=2e-6) if dtype is T.float32 else dict(rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), **tol)
    g = arr(*yt.shape)
    gs = ag.grad(y, ins, T.asarray(g).astype(dtype))
    gts = torch.autograd.grad(yt, ins_t, torch.tensor(g, dtype=yt.dtype))
    for u, v in zip(gs, gts):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("wkind,eps,ignore", CE_CASES)
@pytest.mark.parametrize("shape", [(7, 5), (3, 5, 2, 2), (5,)])
def test_cross_entropy_matches_torch(torch, dtype, reduction, wkind, eps, ignore, shape):
    a = arr(*shape, scale=2.0)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    c = shape[0] if len(shape) == 1 else shape[1]
    tn = np.random.default_rng(2).integers(0, c, tshape)
    ign = -100 if ignore is None else ignore
    if ignore is not None and tn.ndim:
        tn.reshape(-1)[::3] = ign
    wn = RNG.random(c) + 0.5 if wkind else None
    x, xt = _t(torch, a, dtype)
    w, wt = (_t(torch, wn, dtype, grad=False) if wn is not None else (None, None))
    y = F.cross_entropy(x, T.asarray(tn), w, ign, reduction, eps)
    yt = torch.nn.functional.cross_entropy(xt, torch.tensor(tn), wt, ignore_index=ign,
                                           reduction=reduction, label_smoothing=eps)
    _compare(torch, y, yt, [x], [xt], dtype)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities_match_torch(torch, dtype, reduction):
    a, p = arr(6, 4, 3), np.abs(arr(6, 4, 3))
    p /= p.sum(1, keepdims=True)
    x, xt = _t(torch, a, dtype)
    q, qt = _t(torch, p, dtype)
    wn = RNG.random(4) + 0.5
    w, wt = _t(torch, wn, dtype, grad=False)
    y = F.cross_entropy(x, q, w, reduction=reduction, label_smoothing=0.1)
    yt = torch.nn.functional.cross_entropy(xt, qt, wt, reduction=reduction, label_smoothing=0.1)
    _compare(torch, y, yt, [x, q], [xt, qt], dtype)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_torch(torch, dtype, reduction, weighted):
    a = arr(6, 4, 3)
    tn = np.random.default_rng(4).integers(0, 4, (6, 3))
    tn[0, 0] = tn[2, 1] = -100
    x, xt = _t(torch, a, dtype)
    w, wt = _t(torch, RNG.random(4) + 0.5, dtype, grad=False) if weighted else (None, None)
    y = F.nll_loss(x, T.asarray(tn), w, reduction=reduction)
    yt = torch.nn.functional.nll_loss(xt, torch.tensor(tn), wt, reduction=reduction)
    _compare(torch, y, yt, [x], [xt], dtype)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_elementwise_losses_match_torch(torch, dtype, reduction, name):
    if name == "binary_cross_entropy":
        a, b = RNG.random((5, 4)) * 0.98 + 0.01, RNG.random((5, 4))
    else:
        a, b = arr(5, 4, scale=3.0), (RNG.random((5, 4)) if "entropy" in name else arr(5, 4))
    x, xt = _t(torch, a, dtype)
    y_, yt_ = _t(torch, b, dtype)
    y = getattr(F, name)(x, y_, reduction=reduction)
    yt = getattr(torch.nn.functional, name)(xt, yt_, reduction=reduction)
    _compare(torch, y, yt, [x, y_], [xt, yt_], dtype)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
def test_weighted_binary_losses_match_torch(torch, dtype):
    a, b, wn, pn = arr(5, 4, scale=3.0), RNG.random((5, 4)), RNG.random(4), RNG.random(4) * 3
    x, xt = _t(torch, a, dtype)
    y_, yt_ = _t(torch, b, dtype)
    w, wt = _t(torch, wn, dtype, grad=False)
    pw, pwt = _t(torch, pn, dtype, grad=False)
    y = F.binary_cross_entropy_with_logits(x, y_, w, pos_weight=pw)
    yt = torch.nn.functional.binary_cross_entropy_with_logits(xt, yt_, wt, pos_weight=pwt)
    _compare(torch, y, yt, [x, y_], [xt, yt_], dtype)
    p, pt = _t(torch, 1 / (1 + np.exp(-a)), dtype)
    y = BCELoss(w, reduction="sum")(p, y_)
    yt = torch.nn.BCELoss(wt, reduction="sum")(pt, yt_)
    _compare(torch, y, yt, [p], [pt], dtype)


@pytest.mark.parametrize("dtype", [T.float32, T.float64])
def test_loss_modules_match_torch(torch, dtype):
    a = arr(8, 6)
    tn = np.random.default_rng(5).integers(0, 6, 8)
    wn = RNG.random(6) + 0.5
    x, xt = _t(torch, a, dtype)
    w, wt = _t(torch, wn, dtype, grad=False)
    y = CrossEntropyLoss(w, ignore_index=2, label_smoothing=0.05)(x, T.asarray(tn))
    yt = torch.nn.CrossEntropyLoss(wt, ignore_index=2, label_smoothing=0.05)(xt, torch.tensor(tn))
    _compare(torch, y, yt, [x], [xt], dtype)
