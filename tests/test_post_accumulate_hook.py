"""Tensor.register_post_accumulate_grad_hook (PyTorch 2.1+): called with the leaf once backward
has summed its gradient into .grad; the optimizer-in-backward recipe; errors. Caught the
method's absence (AttributeError on the old code)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import nn
import tensor as T


@pytest.mark.usefixtures("device")
def test_hook_sees_the_summed_gradient(device):
    w = T.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    seen = []
    h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.to_device("cpu").numpy().copy()))
    ((w * w).sum() + (3 * w).sum()).backward()   # two paths into w: one call, after both
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [5.0, 7.0, 9.0])
    (w * 2).sum().backward()                     # accumulated: the hook sees .grad's new total
    np.testing.assert_allclose(seen[1], [7.0, 9.0, 11.0])
    autograd.grad((w * 2).sum(), w)              # autograd.grad touches no .grad: no call
    (w * 1).sum().backward(inputs=[w])
    assert len(seen) == 3
    h.remove()
    (w * 1).sum().backward()
    assert len(seen) == 3


def test_optimizer_in_backward_matches_a_plain_step():
    x = T.asarray(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    opts = {p: nn.optim.SGD([p], lr=0.1) for p in a.parameters()}

    def step(p):
        opts[p].step()
        opts[p].zero_grad()
    for p in a.parameters():
        p.register_post_accumulate_grad_hook(step)
    a(x).sum().backward()
    opt = nn.optim.SGD(b.parameters(), lr=0.1)
    b(x).sum().backward()
    opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)
        assert p.grad is None


def test_errors():
    w = T.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="does not require grad"):
        T.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    w.register_post_accumulate_grad_hook(lambda p: p.grad)
    with pytest.raises(RuntimeError, match="must return None"):
        w.sum().backward()
