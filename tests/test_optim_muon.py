"""nn.optim.Muon: the Newton-Schulz update orthogonalises (singular values near 1), steps equal
torch.optim.Muon's (bfloat16 rounded where PyTorch's GEMMs round), state_dict round trip,
PyTorch's checks; one step on the cuda device."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from nn.optim import Muon
from nn.optim.muon import newton_schulz

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (6, 6)])
def test_newton_schulz_orthogonalises(shape):
    g = RNG.standard_normal(shape)
    o = newton_schulz(T.asarray(g)).astype(T.float32).numpy()
    assert o.shape == shape
    u, s, vt = np.linalg.svd(g, full_matrices=False)
    so = np.linalg.svd(o, compute_uv=False)
    assert 0.5 < so.min() and so.max() < 1.4   # the quintic's band around 1, not exactly 1
    # the same singular vectors: o ~ U diag(f(s)) V^T (f not monotonic: compare sorted)
    np.testing.assert_allclose(np.sort(np.abs(np.diag(u.T @ o @ vt.T))), np.sort(so), rtol=0.02)


def _run(lib, w0, grads, **kw):
    w = lib.tensor(w0, requires_grad=True)
    opt = (Muon if lib is T else lib.optim.Muon)([w], **kw)
    for g in grads:
        w.grad = lib.tensor(g)
        opt.step()
    return w.detach().numpy(), opt


@pytest.mark.parametrize("shape, kw", [
    ((6, 4), {}),
    ((4, 6), {"nesterov": False, "adjust_lr_fn": "match_rms_adamw"}),
    ((5, 5), {"adjust_lr_fn": "spectral_unclamped", "weight_decay": 0.0, "momentum": 0.5}),
    ((3, 7), {"ns_steps": 2, "ns_coefficients": (2.0, -1.5, 0.5), "lr": 0.1}),
])
def test_steps_equal_torch(shape, kw):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.optim, "Muon"):
        pytest.skip("this torch has no optim.Muon")
    w0 = RNG.standard_normal(shape).astype(np.float32)
    grads = [RNG.standard_normal(shape).astype(np.float32) for _ in range(5)]
    kw = {"lr": 0.02, **kw}
    ours, opt = _run(T, w0, grads, **kw)
    theirs, topt = _run(torch, w0, grads, **kw)
    assert np.abs(theirs - w0).max() > 1e-2   # it moved
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    np.testing.assert_allclose(opt.state_dict()["state"][0]["momentum_buffer"].numpy(),
                               topt.state_dict()["state"][0]["momentum_buffer"].numpy(), atol=1e-7)


def test_state_dict_round_trip_and_checks():
    w0 = RNG.standard_normal((4, 3)).astype(np.float32)
    grads = [RNG.standard_normal((4, 3)).astype(np.float32) for _ in range(4)]
    straight, _ = _run(T, w0, grads)
    w, opt = T.tensor(w0, requires_grad=True), None
    opt = Muon([w])
    for g in grads[:2]:
        w.grad = T.asarray(g)
        opt.step()
    opt2 = Muon([w])
    opt2.load_state_dict(opt.state_dict())
    for g in grads[2:]:
        w.grad = T.asarray(g)
        opt2.step()
    np.testing.assert_array_equal(w.detach().numpy(), straight)
    with pytest.raises(ValueError, match="2-D parameters.*\\(3,\\)"):
        Muon([T.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="adjust_lr_fn 'fast'"):
        Muon([T.zeros((2, 2), requires_grad=True)], adjust_lr_fn="fast")
    with pytest.raises(ValueError, match="learning rate"):
        Muon([T.zeros((2, 2), requires_grad=True)], lr=-1.0)
    with pytest.raises(ValueError, match="complex"):
        Muon([T.zeros((2, 2), dtype=T.complex64, requires_grad=True)])


def test_one_step_on_cuda_equals_cpu():
    w0 = RNG.standard_normal((5, 3)).astype(np.float32)
    g = RNG.standard_normal((5, 3)).astype(np.float32)
    cpu, _ = _run(T, w0, [g])
    w = T.tensor(w0, device="cuda", requires_grad=True)
    opt = Muon([w])
    w.grad = T.asarray(g, device="cuda")
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), cpu, atol=1e-6)
