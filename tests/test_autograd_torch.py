"""Values and gradients against PyTorch's CPU build (skipped where torch is not installed)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T

pytestmark = pytest.mark.usefixtures("device")

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(3)


def _pair(a):
    return (T.tensor(a, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


CASES = [
    ("exp*sin", lambda m, x: (m.exp(x) * m.sin(x)).sum(), [(3, 4)]),
    ("tanh-sigmoid", lambda m, x: (m.tanh(x) - m.sigmoid(x) * x).sum(), [(5,)]),
    ("log-sqrt", lambda m, x: (m.log(x * x + 1.0) + m.sqrt(x * x + 2.0)).sum(), [(2, 3)]),
    ("erf-abs", lambda m, x: (m.erf(x) * m.abs(x)).sum(), [(6,)]),
    ("pow-div", lambda m, x, y: ((x * x + 1.0) ** y / (y * y + 1.0)).sum(), [(3,), (3,)]),
    ("max-min", lambda m, x, y: (m.maximum(x, y) - m.minimum(x, y) * 2.0).sum(), [(4,), (4,)]),
    ("atan2", lambda m, x, y: m.arctan2(x, y).sum(), [(4,), (4,)]),
    ("broadcast", lambda m, x, y: (x * y + y).sum(), [(3, 4), (4,)]),
    ("matmul", lambda m, x, y: m.tanh(x @ y).sum(), [(2, 3, 4), (4, 5)]),
    ("matvec", lambda m, x, y: (x @ y).sum(), [(3, 4), (4,)]),
    ("sum-axis", lambda m, x: (x.sum(axis=1) ** 2).sum() if m is T else (x.sum(dim=1) ** 2).sum(),
     [(3, 4)]),
    ("mean-var", lambda m, x: (T.var(x, axis=0) + x.mean()) .sum() if m is T else
     (torch.var(x, dim=0, unbiased=False) + x.mean()).sum(), [(5, 3)]),
    ("amax", lambda m, x: (T.amax(x, axis=1) if m is T else torch.amax(x, dim=1)).sum(), [(4, 6)]),
    ("logsumexp", lambda m, x: (T.logsumexp(x, axis=0) if m is T else torch.logsumexp(x, 0)).sum(),
     [(4, 3)]),
    ("cumsum", lambda m, x: ((T.cumsum(x, axis=1) if m is T else torch.cumsum(x, 1)) ** 2).sum(),
     [(2, 5)]),
    ("prod", lambda m, x: (T.prod(x, axis=0) if m is T else torch.prod(x, 0)).sum(), [(3, 4)]),
    ("views", lambda m, x: (x.T.reshape(6, 2)[::2] * 3.0).sum(), [(4, 3)]),
    ("index", lambda m, x: (x[[0, 2, 2]] ** 2).sum(), [(4, 3)]),
    ("mask", lambda m, x: (x[x > 0.0] ** 3).sum(), [(4, 3)]),
    ("where", lambda m, x: m.where(x > 0.0, x * x, -x).sum(), [(7,)]),
    ("concat", lambda m, x, y: ((m.concatenate if m is T else torch.cat)([x, y * 2.0]) ** 2).sum(),
     [(2, 3), (1, 3)]),
    ("stack", lambda m, x, y: (m.stack([x, y]) * m.stack([y, x])).sum(), [(3,), (3,)]),
    ("clip", lambda m, x: (T.clip(x, -0.5, 0.5) if m is T else torch.clamp(x, -0.5, 0.5)).sum()
     * 3.0, [(9,)]),
]


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, fn, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    ours = [T.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    yo = fn(T, *ours)
    yt = fn(torch, *theirs)
    np.testing.assert_allclose(yo.item(), yt.item(), rtol=1e-12, atol=1e-12)
    yo.backward()
    yt.backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_second_derivatives_match_torch():
    a = RNG.standard_normal(5)
    x, xt = _pair(a)
    (g,) = __import__("autograd").grad((T.sin(x) * x * x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((torch.sin(xt) * xt * xt).sum(), xt, create_graph=True)
    (g * g).sum().backward()
    (gt * gt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
