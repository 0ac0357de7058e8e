"""F.ctc_loss / nn.CTCLoss (nn/ctc.py).

- torch-free: the loss equals -log of the summed probability of every alignment that
  collapses (repeats merged, blanks dropped) to the target, enumerated by brute force over all
  C^T paths, for padded and concatenated targets, repeated labels, empty targets, short inputs
  (impossible: inf, or 0 with zero_infinity) and each reduction; float64 gradcheck through
  log_softmax; errors; the CPU and CUDA device agree;
- PyTorch (where importable): losses and the logits' gradients equal torch's in float64.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import autograd as ag
import nn
import tensor as T
from nn import functional as F

RNG = np.random.default_rng(5)


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _brute(lp, target, length, blank=0):
    """-log sum over paths of length `length` collapsing to target (lp: (T, C) log-probs)."""
    total = 0.0
    for path in itertools.product(range(lp.shape[1]), repeat=length):
        collapsed = [k for i, k in enumerate(path) if k != blank and (i == 0 or path[i - 1] != k)]
        if collapsed == list(target):
            total += math.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -math.log(total) if total > 0 else math.inf


def _case():
    lp = _log_softmax(RNG.standard_normal((5, 4, 3)))     # T=5, N=4, C=3
    targets = np.array([[1, 2, 1], [2, 2, 0], [1, 0, 0], [2, 1, 1]])
    tl, il = np.array([3, 2, 0, 3]), np.array([5, 4, 3, 2])  # the last cannot fit in 2 steps
    return lp, targets, tl, il


def test_matches_the_brute_force_definition():
    lp, targets, tl, il = _case()
    want = np.array([_brute(lp[:il[i], i], targets[i, :tl[i]], il[i]) for i in range(4)])
    assert math.isinf(want[3]) and want[2] > 0
    got = F.ctc_loss(T.asarray(lp), T.asarray(targets), il, tl, reduction="none")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    flat = np.concatenate([targets[i, :tl[i]] for i in range(4)])
    got = F.ctc_loss(T.asarray(lp), T.asarray(flat), T.asarray(il), T.asarray(tl), reduction="none")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    z = F.ctc_loss(T.asarray(lp), T.asarray(targets), il, tl, reduction="none", zero_infinity=True)
    np.testing.assert_allclose(z.numpy(), np.where(np.isinf(want), 0, want), rtol=1e-12)
    fin = np.where(np.isinf(want), 0, want)
    m = nn.CTCLoss(zero_infinity=True)(T.asarray(lp), T.asarray(targets), il, tl)
    assert m.item() == pytest.approx(np.mean(fin / np.maximum(tl, 1)), rel=1e-12)
    s = F.ctc_loss(T.asarray(lp), T.asarray(targets), il, tl, reduction="sum", zero_infinity=True)
    assert s.item() == pytest.approx(fin.sum(), rel=1e-12)
    # unbatched, and another blank index
    one = F.ctc_loss(T.asarray(lp[:, 0]), T.asarray([0, 2, 0]), [5], [3], blank=1, reduction="sum")
    assert one.item() == pytest.approx(_brute(lp[:, 0], [0, 2, 0], 5, blank=1), rel=1e-12)


def test_gradcheck_through_log_softmax():
    logits = T.asarray(RNG.standard_normal((4, 2, 3))).requires_grad_()
    tg = T.asarray([[1, 1], [2, 0]])

    def f(x):
        return F.ctc_loss(F.log_softmax(x, -1), tg, [4, 3], [2, 1])
    assert ag.gradcheck(f, [logits])
    # an impossible entry with zero_infinity: finite gradients, none from that entry
    x = T.asarray(RNG.standard_normal((2, 2, 3))).requires_grad_()
    F.ctc_loss(F.log_softmax(x, -1), tg, [2, 2], [2, 1], zero_infinity=True).backward()
    g = x.grad.numpy()
    assert np.isfinite(g).all() and (g[:, 0] == 0).all() and (g[:, 1] != 0).any()


def test_errors():
    lp = T.zeros((4, 2, 3))
    with pytest.raises(ValueError, match=r"ctc_loss: input_lengths \[5, 4\] must lie in \[0, 4\]"):
        F.ctc_loss(lp, T.asarray([[1], [2]]), [5, 4], [1, 1])
    with pytest.raises(ValueError, match="ctc_loss: target labels must lie in .* differ from blank"):
        F.ctc_loss(lp, T.asarray([[0], [2]]), [4, 4], [1, 1])
    with pytest.raises(ValueError, match="1-D targets hold 3 labels but target_lengths sum to 2"):
        F.ctc_loss(lp, T.asarray([1, 2, 1]), [4, 4], [1, 1])
    with pytest.raises(ValueError, match="target_lengths must be 2 integers"):
        F.ctc_loss(lp, T.asarray([[1], [2]]), [4, 4], [1])
    with pytest.raises(ValueError, match="a target length of 3 exceeds the padded targets' 1"):
        F.ctc_loss(lp, T.asarray([[1], [2]]), [4, 4], [3, 1])
    with pytest.raises(ValueError, match="blank=3 is not a class"):
        F.ctc_loss(lp, T.asarray([[1], [2]]), [4, 4], [1, 1], blank=3)
    with pytest.raises(TypeError, match="ctc_loss: targets must be an integer tensor"):
        F.ctc_loss(lp, T.asarray([[1.0], [2.0]]), [4, 4], [1, 1])


def test_devices_agree(device):
    lp, targets, tl, il = _case()
    lp = lp.astype(np.float32)
    want = F.ctc_loss(T.asarray(lp, device="cpu"), T.asarray(targets, device="cpu"), il, tl,
                      reduction="none").numpy()
    x = T.asarray(lp, device=device).requires_grad_()
    got = F.ctc_loss(x, T.asarray(targets, device=device), il, tl, zero_infinity=True,
                     reduction="none")
    np.testing.assert_allclose(got.detach().to("cpu").numpy(), np.where(np.isinf(want), 0, want),
                               rtol=1e-5)
    got.sum().backward()
    assert x.grad.device == x.device and np.isfinite(x.grad.to("cpu").numpy()).all()


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("flat", [False, True])
def test_matches_torch(reduction, flat):
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((9, 3, 6))
    tl, il = np.array([4, 1, 3]), np.array([9, 6, 7])
    tg = RNG.integers(1, 6, (3, 4))
    tg[0, 1] = tg[0, 0]                                  # a repeated label
    if flat:
        tg = np.concatenate([tg[i, :tl[i]] for i in range(3)])
    lt = torch.tensor(logits, requires_grad=True)
    want = torch.nn.functional.ctc_loss(torch.log_softmax(lt, -1), torch.tensor(tg),
                                        torch.tensor(il), torch.tensor(tl), reduction=reduction)
    lo = T.asarray(logits).requires_grad_()
    got = F.ctc_loss(F.log_softmax(lo, -1), T.asarray(tg), il, tl, reduction=reduction)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    w = RNG.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * T.asarray(w)).sum().backward()
    np.testing.assert_allclose(lo.grad.numpy(), lt.grad.numpy(), rtol=1e-10, atol=1e-12)
