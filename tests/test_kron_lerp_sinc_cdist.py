"""T.kron, T.lerp, T.sinc (tensor/composites.py) and F.cdist (nn/_functional_more.py).

Against NumPy's kron and sinc over shapes of different ranks and dtypes, lerp's formula (exact
at weight 1), cdist against a NumPy loop for p = 0, 1, 2, 3, inf; float64 gradcheck (sinc at
0, cdist at a zero distance, where its gradient is 0); the CPU and CUDA device agree; torch's
lerp / sinc / cdist values and gradients where importable.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd as ag
import tensor as T
from nn import functional as F

RNG = np.random.default_rng(17)


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)),
                                   ((), (3,)), ((2, 2), ()), ((0, 2), (3, 1))])
def test_kron_matches_numpy(sa, sb):
    a, b = RNG.integers(-5, 5, sa), RNG.standard_normal(sb)
    got = T.kron(T.asarray(a), T.asarray(b))
    np.testing.assert_array_equal(got.numpy(), np.kron(a, b))
    assert T.kron(T.asarray(a), T.asarray(a)).dtype == T.int64


def test_sinc_and_lerp():
    x = np.array([0.0, 0.5, -1.5, 1e-9, 3.0, 2.25])
    np.testing.assert_allclose(T.sinc(T.asarray(x)).numpy(), np.sinc(x), rtol=1e-14)
    np.testing.assert_allclose(T.sinc(T.tensor([0, 1, 2])).numpy(), np.sinc([0, 1, 2]), atol=1e-16)
    assert T.sinc(T.tensor([0.0], dtype=T.float16)).tolist() == [1.0]
    assert ag.gradcheck(T.sinc, [T.asarray(np.array([0.0, 0.3, -1.2])).requires_grad_()])
    s, e = RNG.standard_normal(5), RNG.standard_normal(5)
    w = np.array([0.0, 0.3, 0.5, 0.8, 1.0])
    got = T.lerp(T.asarray(s), T.asarray(e), T.asarray(w)).numpy()
    np.testing.assert_allclose(got, s + w * (e - s), rtol=1e-14, atol=1e-15)
    assert got[-1] == e[-1] and got[0] == s[0]
    assert (T.lerp(T.asarray(s), T.asarray(e), 1.0).numpy() == e).all()
    ts, te = (T.asarray(v).requires_grad_() for v in (s, e))
    assert ag.gradcheck(lambda a, b: T.lerp(a, b, T.asarray(w)), [ts, te])


def _cdist(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(float)
    if math.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, math.inf])
def test_cdist_matches_the_definition(p):
    a, b = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((1, 5, 3))
    np.testing.assert_allclose(F.cdist(T.asarray(a), T.asarray(b), p).numpy(), _cdist(a, b, p),
                               rtol=1e-12)
    b[0, 0] = a[1, 2]                               # a zero distance: gradient 0 there
    if p >= 1:
        x, y = T.asarray(a).requires_grad_(), T.asarray(b).requires_grad_()
        assert ag.gradcheck(lambda u, v: F.cdist(u, v, p), [x, y])
    with pytest.raises(ValueError, match=r"cdist: expected x1 \(\*, P, M\) and x2"):
        F.cdist(T.asarray(a), T.ones((5, 4)))


def test_devices_agree(device):
    a, b = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((5, 4)).astype(np.float32)
    want = F.cdist(T.asarray(a, device="cpu"), T.asarray(b, device="cpu")).numpy()
    got = F.cdist(T.asarray(a, device=device), T.asarray(b, device=device))
    np.testing.assert_allclose(got.to("cpu").numpy(), want, rtol=1e-5)
    k = T.kron(T.asarray(a[:2, :2], device=device), T.asarray(b[:2, :2], device=device))
    np.testing.assert_allclose(k.to("cpu").numpy(), np.kron(a[:2, :2], b[:2, :2]), rtol=1e-6)


def test_match_torch():
    torch = pytest.importorskip("torch")
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4))
    b[1, 2] = a[1, 0]
    for p in (1.0, 2.0, math.inf):
        ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
        oa, ob = (T.asarray(v).requires_grad_() for v in (a, b))
        torch.cdist(ta, tb, p=p).sum().backward()
        F.cdist(oa, ob, p).sum().backward()
        np.testing.assert_allclose(oa.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ob.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
    x = np.array([0.0, 0.4, -2.3])
    tx, ox = torch.tensor(x, requires_grad=True), T.asarray(x).requires_grad_()
    torch.sinc(tx).sum().backward()
    T.sinc(ox).sum().backward()
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    s, e, w = (RNG.standard_normal(4) for _ in range(3))
    np.testing.assert_allclose(T.lerp(T.asarray(s), T.asarray(e), T.asarray(w)).numpy(),
                               torch.lerp(torch.tensor(s), torch.tensor(e), torch.tensor(w)).numpy(),
                               rtol=1e-14, atol=1e-15)
