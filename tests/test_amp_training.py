"""Mixed-precision training end to end: the digits MLP and CNN (examples/train_digits.py, on the
CPU) and a tiny GPT (benchmarks/tiny_gpt.py, both devices) train under bfloat16 autocast and
under float16 autocast with a GradScaler to within a small margin of float32 training; master
weights for float16 parameters; an overflow forced mid-training is skipped and training
recovers.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from nn import functional as F
from nn.optim import SGD, AdamW, RMSprop

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod   # (dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def digits():
    pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn")
    mod = _load(ROOT / "examples" / "train_digits.py", "train_digits_amp")
    mod.DEVICE = "cpu"   # (it picks "cuda" when the tests' emulator is on: minutes)
    return mod, mod.load_data(0)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_digits_train_in_mixed_precision(digits, model, capsys):
    """4 epochs each: bf16 and fp16 reach float32's test accuracy within 3 points and its last
    epoch's loss within 25%."""
    mod, data = digits
    make = {"mlp": mod.make_mlp, "cnn": mod.make_cnn}[model]
    res = {}
    for amp in (None, "bf16", "fp16"):
        T.manual_seed(0)
        res[amp] = mod.train(model, make(), data, 4, mod.SETTINGS[model]["lr"], False, amp=amp)
    capsys.readouterr()
    acc32, loss32 = res[None]["acc"][-1], res[None]["loss"][-1]
    assert acc32 > 0.85
    for amp in ("bf16", "fp16"):
        assert res[amp]["acc"][-1] > acc32 - 0.03, (amp, res[amp]["acc"], acc32)
        assert abs(res[amp]["loss"][-1] - loss32) < 0.25 * loss32 + 0.02, (amp, res[amp]["loss"], loss32)


def _gpt():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return _load(ROOT / "benchmarks" / "tiny_gpt.py", "tiny_gpt_amp")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.usefixtures("device")
def test_tiny_gpt_trains_in_mixed_precision():
    """Overfitting one batch for 25 AdamW steps (8 on CUDA, whose emulator is slow): the bf16
    and fp16 (scaled) loss curves follow the float32 one within 10%."""
    G = _gpt()
    dev = T.get_default_device().type
    steps = 25 if dev == "cpu" else 8
    cfg = G.GPTConfig(vocab=16, context=8, d_model=16, n_heads=2, n_layers=1, batch=4, lr=3e-3,
                      weight_decay=0.0)
    idx, tgt = G.random_batch(cfg, dev)
    curves = {}
    for amp in (None, T.bfloat16, T.float16):
        T.manual_seed(0)
        model = G.TinyGPT(cfg, dev)
        opt = G.optimizer(model)
        scaler = T.GradScaler(dev, enabled=amp is T.float16)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            with T.autocast(dev, dtype=amp or T.bfloat16, enabled=amp is not None):
                loss = G.loss(model, idx, tgt)
            assert loss.dtype is T.float32
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        curves[amp] = losses
    ref = curves[None]
    assert ref[-1] < (0.6 if steps == 25 else 0.95) * ref[0]
    for amp in (T.bfloat16, T.float16):
        np.testing.assert_allclose(curves[amp], ref, rtol=0.1)


@pytest.mark.usefixtures("device")
def test_master_weights_keep_small_updates():
    """float16 parameters: a plain SGD step of 1e-4 on a weight of 1.0 is lost to rounding
    (float16's spacing there is 2^-10), the master-weight step accumulates it in float32."""
    dev = T.get_default_device().type
    res = {}
    for master in (False, True):
        w = nn.Parameter(T.ones(4, dtype=T.float16, device=dev))
        opt = SGD([w], lr=1e-4, master_weights=master)
        for _ in range(20):
            opt.zero_grad()
            (w.astype(T.float32).sum()).backward()
            opt.step()
        res[master] = (w.astype(T.float32).tolist(), opt.state[w])
    assert res[False][0] == [1.0] * 4
    w16, st = res[True]
    assert w16[0] < 1.0 and st["master"].dtype is T.float32
    assert abs(st["master"].tolist()[0] - (1.0 - 20 * 1e-4)) < 1e-6


def test_master_weights_adamw_state_dict_round_trip():
    """AdamW with master weights on a half() model: float32 moments and master; a state_dict
    round trip resumes bitwise; a parameter written between steps re-seeds its master."""
    T.manual_seed(0)
    model = nn.Linear(4, 3).half()
    opt = AdamW(model.parameters(), lr=1e-2, master_weights=True)
    x = T.ones((2, 4), dtype=T.float16)

    def step(o, m):
        o.zero_grad()
        F.mse_loss(m(x).astype(T.float32), T.zeros((2, 3), dtype=T.float32)).backward()
        o.step()
    step(opt, model)
    st = opt.state[model.weight]
    assert {st[k].dtype for k in ("master", "exp_avg", "exp_avg_sq")} == {T.float32}
    assert model.weight.dtype is T.float16
    sd = opt.state_dict()
    twin = nn.Linear(4, 3).half()
    twin.load_state_dict(model.state_dict())
    opt2 = AdamW(twin.parameters(), lr=1e-2, master_weights=True)
    opt2.load_state_dict(sd)
    step(opt, model)
    step(opt2, twin)
    np.testing.assert_array_equal(opt.state[model.weight]["master"].numpy(),
                                  opt2.state[twin.weight]["master"].numpy())
    with autograd.no_grad():
        model.weight.fill_(0.5)
    step(opt, model)
    assert abs(opt.state[model.weight]["master"].numpy() - 0.5).max() < 0.05


def test_overflow_mid_training_is_skipped_and_recovers():
    """fp16 autocast with a loss made inf at one step: that step is skipped (weights as
    before), the scale halves, and later steps train on."""
    T.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = AdamW(model.parameters(), lr=1e-2)
    scaler = T.GradScaler("cpu", init_scale=2.0 ** 8)
    rng = np.random.default_rng(0)
    x = T.asarray(rng.standard_normal((32, 8)).astype(np.float32))
    y = T.asarray(rng.integers(0, 2, 32))
    losses, scales = [], []
    for i in range(12):
        before = [p.numpy().copy() for p in model.parameters()]
        opt.zero_grad()
        with T.autocast("cpu", dtype=T.float16):
            loss = F.cross_entropy(model(x), y) * (float("inf") if i == 5 else 1.0)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        losses.append(loss.item())
        if i == 5:
            assert all(np.array_equal(b, p.numpy()) for b, p in zip(before, model.parameters()))
    assert scales[5] == scales[4] / 2 and scales[6] == scales[5]
    assert losses[-1] < losses[0]


MASTER_CASES = [
    (SGD, dict(lr=0.1)), (SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (AdamW, dict(lr=1e-2)), (AdamW, dict(lr=1e-2, amsgrad=True)),
    (RMSprop, dict(lr=1e-2, momentum=0.5, centered=True, weight_decay=0.1)),
]


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("dtype", [T.float16, T.bfloat16])
@pytest.mark.parametrize("case", range(len(MASTER_CASES)))
def test_master_weights_one_kernel_bitwise_the_float32_update(case, dtype, monkeypatch):
    """Three 16-bit parameters (one past a chunk of the kernel) step through one multi-tensor
    kernel call a step, bitwise what a float32 optimizer on float32 copies, fed the widened
    gradients, computes (then rounded), on either device."""
    from tensor.backend import backend_for
    cls, kw = MASTER_CASES[case]
    dev = T.get_default_device().type
    rng = np.random.default_rng(case)
    shapes = [(3, 5), (70000,), (1,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ps = [nn.Parameter(T.asarray(a).astype(dtype)) for a in init]
    refs = [nn.Parameter(p.astype(T.float32)) for p in ps]
    opt, ref = cls(ps, master_weights=True, **kw), cls(refs, **kw)
    be = backend_for(ps[0].device)
    calls = []
    orig = be.optim_master
    monkeypatch.setattr(be, "optim_master", lambda *a: (calls.append(a[0]), orig(*a))[1]
                        if a[1][0].dtype is dtype else orig(*a))   # (ref's float32 ones too)
    for _ in range(3):
        for p, r in zip(ps, refs):
            g = T.asarray(rng.standard_normal(p.shape).astype(np.float32)).astype(dtype)
            p.grad, r.grad = g, g.astype(T.float32)
        opt.step()
        ref.step()
        for p, r in zip(ps, refs):
            np.testing.assert_array_equal(opt.state[p]["master"].numpy(), r.numpy())
            np.testing.assert_array_equal(p.astype(T.float32).numpy(),
                                          r.astype(dtype).astype(T.float32).numpy())
    assert len(calls) == 3, (dev, calls)


def test_compiled_mixed_precision_step_equals_eager():
    """tensor.compile of a float16 autocast step with a GradScaler (forward, scaled backward,
    scaler step and update): replays give eager's losses and weights bit for bit."""
    def run(compiled):
        T.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
        opt = AdamW(model.parameters(), lr=1e-2)
        scaler = T.GradScaler("cpu")
        rng = np.random.default_rng(0)
        x = T.asarray(rng.standard_normal((32, 8)).astype(np.float32))
        y = T.asarray(rng.integers(0, 4, 32))

        def step():
            opt.zero_grad()
            with T.autocast("cpu", dtype=T.float16):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return loss.detach()
        f = T.compile(step) if compiled else step
        losses = [f().item() for _ in range(6)]
        return losses, [p.numpy().copy() for p in model.parameters()], f
    eager, ew, _ = run(False)
    comp, cw, f = run(True)
    assert eager == comp and f.stats()["replays"] == 4
    assert all(np.array_equal(a, b) for a, b in zip(ew, cw))
