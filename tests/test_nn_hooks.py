"""Module hooks as PyTorch's: full backward hooks and backward pre-hooks (grad_input /
grad_output, replacing them, order, modules whose inputs need no gradient), forward hooks'
prepend / with_kwargs / always_call. Reference: the gradients' definitions (and PyTorch where
installed)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from nn.activation import Tanh
from nn.containers import Sequential
from nn.linear import Linear
from nn.module import Module

pytestmark = pytest.mark.usefixtures("device")


def _net():
    rng = np.random.default_rng(0)
    m = Sequential(Linear(3, 4, dtype=T.float64), Tanh(), Linear(4, 2, dtype=T.float64))
    for p in m.parameters():
        p.detach().copy_(T.asarray(rng.normal(size=p.shape)))
    return m


def test_full_backward_hooks_see_and_replace_gradients():
    m = _net()
    x = T.asarray(np.arange(6.0).reshape(2, 3) / 7).requires_grad_()
    seen = []
    m[1].register_full_backward_hook(
        lambda mod, gin, gout: (seen.append(("tanh", gin[0].numpy(), gout[0].numpy())),
                                tuple(g * 2 for g in gin))[1])
    m[2].register_full_backward_pre_hook(
        lambda mod, gout: (seen.append(("pre", gout[0].numpy())), tuple(g * 3 for g in gout))[1])
    m[0].register_full_backward_hook(lambda mod, gin, gout: seen.append(("first", gin[0].numpy())))
    m(x).sum().backward()
    assert [s[0] for s in seen] == ["pre", "tanh", "first"]
    np.testing.assert_array_equal(seen[0][1], np.ones((2, 2)))
    # by hand: h = x W0^T + b0, t = tanh h, y = t W2^T + b2; dL/dt = 3 * 1 W2
    W0, W2 = m[0].weight.detach().numpy(), m[2].weight.detach().numpy()
    h = x.detach().numpy() @ W0.T + m[0].bias.detach().numpy()
    gt = 3 * np.ones((2, 2)) @ W2
    np.testing.assert_allclose(seen[1][2], gt, rtol=1e-12)
    np.testing.assert_allclose(seen[1][1], gt * (1 - np.tanh(h) ** 2), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (gt * (1 - np.tanh(h) ** 2)) @ W0, rtol=1e-12)
    np.testing.assert_allclose(seen[2][1], x.grad.numpy(), rtol=1e-12)


def test_backward_hook_without_input_gradients_and_removal():
    m = Linear(2, 1, dtype=T.float64)
    calls = []
    h = m.register_full_backward_hook(lambda mod, gin, gout: calls.append((gin, gout[0].shape)))
    m(T.ones((3, 2), dtype=T.float64)).sum().backward()     # the input needs no gradient
    assert calls == [((None,), (3, 1))]
    h.remove()
    m(T.ones((3, 2), dtype=T.float64)).sum().backward()
    assert len(calls) == 1
    with pytest.raises(ValueError, match="returned 2 gradients for 1"):
        m.register_full_backward_hook(lambda mod, gin, gout: (gin[0], gin[0]))
        m(T.ones((3, 2), dtype=T.float64, requires_grad=True)).sum().backward()


def test_forward_hook_options():
    class Add(Module):
        def forward(self, x, *, k=1.0):
            if k < 0:
                raise ValueError("k")
            return x + k
    m, order = Add(), []
    m.register_forward_hook(lambda mod, a, out: order.append("second"))
    m.register_forward_hook(lambda mod, a, out: order.append("first"), prepend=True)
    m.register_forward_pre_hook(lambda mod, a, kw: (a, {"k": kw.get("k", 1.0) * 10}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, out: out + kw["k"], with_kwargs=True)
    y = m(T.zeros(2), k=2.0)                                   # k becomes 20: 20 + 20
    assert y.tolist() == [40.0, 40.0] and order == ["first", "second"]
    seen = []
    m.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="k"):
        m(T.zeros(2), k=-1.0)
    assert seen == [None]


def test_backward_hooks_match_torch():
    torch = pytest.importorskip("torch")
    if T.get_default_device().type != "cpu":
        pytest.skip("PyTorch's CPU build is the reference")
    ours, rec = _net(), {}
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        q.data = torch.tensor(p.detach().numpy())
    for lib, m in (("ours", ours), ("torch", theirs)):
        got = rec.setdefault(lib, [])
        m[1].register_full_backward_hook(lambda mod, gin, gout, got=got: got.append(
            [np.asarray(g.detach().numpy() if hasattr(g, "detach") else g) for g in gin + gout]))
        x = np.arange(6.0).reshape(2, 3) / 7
        m(T.asarray(x) if lib == "ours" else torch.tensor(x)).sum().backward()
    for a, b in zip(rec["ours"][0], rec["torch"][0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
