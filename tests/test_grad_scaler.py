"""GradScaler (tensor/grad_scaler.py) and its multi-tensor unscale kernels (amp.h, amp.cuh), on
both devices (CUDA: the emulator, or a GPU): the scale sequence with injected inf/NaN gradients
(skips, backoff, growth) against PyTorch's GradScaler, unscaling of every float dtype against
NumPy, clipping after unscale_, gradient accumulation, state_dict, errors, and a captured step.
"""
from __future__ import annotations

import numpy as np
import pytest

import nn
import tensor as T
from nn.optim import SGD, Adam
from tensor.backend import multi_tensor_table

pytestmark = pytest.mark.usefixtures("device")


def _dev():
    return T.get_default_device().type


@pytest.mark.parametrize("dtype", [T.float16, T.bfloat16, T.float32, T.float64])
def test_unscale_kernel_matches_numpy(dtype):
    """Tensors of many sizes (empty, one element, several chunks) in one call: x * inv_scale
    rounded to the dtype, and the inf/NaN flag set only when one is there."""
    rng = np.random.default_rng(0)
    sizes = [0, 1, 7, 4096, 4097, 70000, 3]
    vals = [rng.standard_normal(n).astype(np.float32) * 1000 for n in sizes]
    ps = [nn.Parameter(T.asarray(v).astype(dtype)) for v in vals]
    for p, v in zip(ps, vals):
        p.grad = T.asarray(v).astype(dtype)
    opt = SGD(ps, lr=0.0)
    scaler = T.GradScaler(_dev(), init_scale=1024.0)
    scaler.unscale_(opt)
    assert not scaler._found(scaler._state(opt))
    inv = np.float32(1 / 1024)
    for p, v in zip(ps, vals):
        src = T.asarray(v).astype(dtype).astype(T.float64).numpy()
        want = T.asarray(src.astype(np.float64 if dtype is T.float64 else np.float32) * inv).astype(dtype)
        np.testing.assert_array_equal(p.grad.astype(T.float64).numpy(), want.astype(T.float64).numpy())
    for bad in (np.inf, -np.inf, np.nan):
        v = vals[5].copy()
        v[12345] = bad
        ps[5].grad = T.asarray(v).astype(dtype)
        opt2 = SGD(ps[5:6], lr=0.0)
        s2 = T.GradScaler(_dev())
        s2.unscale_(opt2)
        assert s2._found(s2._state(opt2))


def test_unscale_table():
    ts = [T.zeros(n) for n in (0, 5, 9, 0, 1)]
    t = multi_tensor_table(ts, 4)
    assert t[5:10].tolist() == [0, 5, 9, 0, 1]
    assert t[10:].tolist() == [0, 0, 2, 5, 5, 6]


def _scale_sequence(lib, make_param, scaler, opt_cls, steps, bad_steps):
    """Train y = sum(w * w) for `steps` steps, the loss made inf at bad_steps; the scales seen
    and the weights after."""
    w = make_param()
    opt = opt_cls([w], lr=0.01)
    seen = []
    for i in range(steps):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if i in bad_steps else 1.0)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        seen.append(scaler.get_scale())
    return seen, w


def test_scale_sequence_matches_pytorch():
    torch = pytest.importorskip("torch")
    kw = dict(init_scale=2.0 ** 10, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    bad = {1, 2, 9}
    ours, w = _scale_sequence(T, lambda: nn.Parameter(T.asarray(np.ones(4, np.float32))),
                              T.GradScaler(_dev(), **kw), Adam, 14, bad)
    theirs, tw = _scale_sequence(torch, lambda: torch.nn.Parameter(torch.ones(4)),
                                 torch.amp.GradScaler("cpu", **kw), torch.optim.Adam, 14, bad)
    assert ours == theirs, (ours, theirs)
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-6)
    assert ours[:4] == [2.0 ** 10, 2.0 ** 9, 2.0 ** 8, 2.0 ** 8]   # clean, two backoffs, clean


def test_skipped_steps_leave_parameters_and_state():
    w = nn.Parameter(T.asarray(np.ones(3, np.float32)))
    opt = Adam([w], lr=0.1)
    scaler = T.GradScaler(_dev(), init_scale=8.0)
    (scaler.scale((w * w).sum() * float("nan"))).backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [1.0, 1.0, 1.0] and not opt.state and scaler.get_scale() == 4.0


def test_clipping_after_unscale_and_accumulation():
    """unscale_ then clip: the clip sees true gradients; two accumulated backwards unscale
    once; the step is PyTorch's plain step on the summed gradient."""
    from nn.utils import clip_grad_norm_
    a = np.array([3.0, 4.0], np.float32)
    w = nn.Parameter(T.asarray(a.copy()))
    opt = SGD([w], lr=0.1)
    scaler = T.GradScaler(_dev(), init_scale=2.0 ** 12)
    for _ in range(2):
        scaler.scale((w * w).sum()).backward()   # accumulates 2 * 2w, scaled
    scaler.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), 4 * a)
    norm = clip_grad_norm_([w], 1.0)
    assert abs(float(norm) - 20.0) < 1e-4
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(w.numpy(), a - 0.1 * (4 * a) / 20.0, rtol=1e-5)
    with pytest.raises(RuntimeError, match="no inf checks"):
        scaler.update()


def test_state_dict_round_trip_and_disabled():
    s = T.GradScaler(_dev(), init_scale=256.0, growth_interval=5)
    s._growth_tracker = 3
    sd = s.state_dict()
    assert sd == {"scale": 256.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                  "growth_interval": 5, "_growth_tracker": 3}
    s2 = T.GradScaler(_dev())
    s2.load_state_dict(sd)
    assert s2.state_dict() == sd
    off = T.GradScaler(_dev(), enabled=False)
    loss = T.asarray(np.float32(2.0))
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(RuntimeError, match="state dict is empty"):
        s2.load_state_dict({})


def test_errors():
    w = nn.Parameter(T.asarray(np.ones(2, np.float32)))
    opt = SGD([w], lr=0.1)
    s = T.GradScaler(_dev())
    s.scale((w * w).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="closure"):
        s.step(opt, closure=lambda: None)
    with pytest.raises(ValueError, match="growth_factor"):
        T.GradScaler(_dev(), growth_factor=0.5)
    with pytest.raises(TypeError, match="GradScaler.scale"):
        s.scale(3.0)


def test_float16_loss_is_scaled_in_float32():
    """A float16 loss times 2^16 would overflow float16: scale() returns float32, as PyTorch's."""
    s = T.GradScaler(_dev())
    y = s.scale(T.asarray(np.float16(2.0)))
    assert y.dtype is T.float32 and y.item() == 131072.0


def test_captured_step_sees_the_current_scale():
    """tensor.compile of a whole scaled step: the scale backs off and grows across replays as
    in eager, and skipped steps stay skipped."""
    def run(compiled):
        w = nn.Parameter(T.asarray(np.ones(3, np.float32)))
        opt = SGD([w], lr=0.01)
        scaler = T.GradScaler(_dev(), init_scale=2.0 ** 8, growth_interval=2)
        flag = T.asarray(np.ones(1, np.float32))

        def step():
            opt.zero_grad()
            scaler.scale((w * w).sum() * flag.sum()).backward()
            scaler.step(opt)
            scaler.update()
        f = T.compile(step) if compiled else step
        scales = []
        for i in range(8):
            flag.fill_(float("inf") if i == 4 else 1.0)
            f()
            scales.append(scaler.get_scale())
        return scales, w.numpy()
    eager, ew = run(False)
    comp, cw = run(True)
    assert eager == comp and eager[4] == eager[3] / 2
    np.testing.assert_array_equal(ew, cw)
