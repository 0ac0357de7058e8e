"""nn.optim's Adagrad, Adadelta, Adamax, NAdam, RAdam (against NumPy references, hand-computed
first steps and torch.optim, state_dict round trips, master weights, errors) and the schedulers
of nn/optim/schedulers_extra.py (closed forms / hand lists and torch's sequences)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensor as T
from nn.optim import (
    SGD,
    Adadelta,
    Adagrad,
    Adam,
    Adamax,
    ChainedScheduler,
    ConstantLR,
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    ExponentialLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    NAdam,
    OneCycleLR,
    PolynomialLR,
    RAdam,
    ReduceLROnPlateau,
    SequentialLR,
    StepLR,
)

pytestmark = pytest.mark.usefixtures("device")


# ---- NumPy references (float64, PyTorch's formulas written out) ---------------------------------

def _np_run(name, p, grads, **kw):
    p = p.astype(np.float64)
    lr, wd, mx = kw.get("lr"), kw.get("weight_decay", 0.0), kw.get("maximize", False)
    b1, b2 = kw.get("betas", (0.9, 0.999))
    st = dict(s=np.full_like(p, kw.get("initial_accumulator_value", 0.0)), m=np.zeros_like(p),
              v=np.zeros_like(p), a=np.zeros_like(p), mp=1.0)
    for t, g in enumerate(grads, 1):
        g = -g.astype(np.float64) if mx else g.astype(np.float64)
        if wd and kw.get("decoupled_weight_decay"):
            p = p * (1 - lr * wd)
        elif wd:
            g = g + wd * p
        if name == "Adagrad":
            st["s"] = st["s"] + g * g
            clr = lr / (1 + (t - 1) * kw.get("lr_decay", 0.0))
            p = p - clr * g / (np.sqrt(st["s"]) + kw.get("eps", 1e-10))
        elif name == "Adadelta":
            rho, eps = kw.get("rho", 0.9), kw.get("eps", 1e-6)
            st["v"] = rho * st["v"] + (1 - rho) * g * g
            delta = np.sqrt(st["a"] + eps) / np.sqrt(st["v"] + eps) * g
            st["a"] = rho * st["a"] + (1 - rho) * delta * delta
            p = p - lr * delta
        else:
            st["m"] = b1 * st["m"] + (1 - b1) * g
            eps = kw.get("eps", 1e-8)
            if name == "Adamax":
                st["v"] = np.maximum(b2 * st["v"], np.abs(g) + eps)
                p = p - lr / (1 - b1 ** t) * st["m"] / st["v"]
                continue
            st["v"] = b2 * st["v"] + (1 - b2) * g * g
            if name == "NAdam":
                md = kw.get("momentum_decay", 4e-3)
                mu, mu1 = (b1 * (1 - 0.5 * 0.96 ** (k * md)) for k in (t, t + 1))
                st["mp"] = float(np.float32(st["mp"]) * np.float32(mu))   # torch: a float32 scalar
                den = np.sqrt(st["v"] / (1 - b2 ** t)) + eps
                p = p - lr * (1 - mu) / (1 - st["mp"]) * g / den
                p = p - lr * mu1 / (1 - st["mp"] * mu1) * st["m"] / den
            else:   # RAdam
                rinf = 2 / (1 - b2) - 1
                rt = rinf - 2 * t * b2 ** t / (1 - b2 ** t)
                mhat = st["m"] / (1 - b1 ** t)
                if rt > 5:
                    rect = math.sqrt((rt - 4) * (rt - 2) * rinf / ((rinf - 4) * (rinf - 2) * rt))
                    p = p - lr * mhat * rect * math.sqrt(1 - b2 ** t) / (np.sqrt(st["v"]) + eps)
                else:
                    p = p - lr * mhat
    return p


CLASSES = {c.__name__: c for c in (Adagrad, Adadelta, Adamax, NAdam, RAdam)}
CASES = [
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3,
                     eps=1e-6, maximize=True)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=0.5, rho=0.7, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-3, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1)),   # rho_t > 5 from step 2
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True,
                   maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _data(dtype=np.float64, n=33, steps=6, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(dtype),
            [rng.standard_normal(n).astype(dtype) for _ in range(steps)])


def _run(cls, kw, p0, grads, dtype=None):
    p = T.asarray(p0.copy()) if dtype is None else T.asarray(p0.copy()).astype(dtype)
    p.requires_grad_()
    opt = cls([p], **kw)
    for g in grads:
        p.grad = T.asarray(g.copy()) if dtype is None else T.asarray(g.copy()).astype(dtype)
        opt.step()
    return p, opt


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_against_numpy(name, kw):
    p0, grads = _data()
    want = _np_run(name, p0, grads, **kw)
    got, _ = _run(CLASSES[name], kw, p0, grads)
    np.testing.assert_allclose(np.asarray(got.detach()), want, rtol=1e-12, atol=1e-14)
    got32, _ = _run(CLASSES[name], kw, p0.astype(np.float32), [g.astype(np.float32) for g in grads])
    np.testing.assert_allclose(np.asarray(got32.detach()), want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype,tol", [(T.float16, 2e-2), (T.bfloat16, 1e-1)])
@pytest.mark.parametrize("name,kw", CASES[::2], ids=IDS[::2])
def test_16_bit_and_master_weights(name, kw, dtype, tol):
    kw = dict(kw, eps=kw.get("eps", 1e-3))   # 1e-8 underflows in float16 (as in PyTorch)
    p0, grads = _data(steps=3)
    want = _np_run(name, p0, grads, **kw)
    got, _ = _run(CLASSES[name], kw, p0, grads, dtype)
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got.detach().astype(T.float64)), want, atol=tol, rtol=tol)
    p, opt = _run(CLASSES[name], dict(kw, master_weights=True), p0, grads, dtype)
    assert p.dtype == dtype and opt.state[p]["master"].dtype == T.float32
    def rnd(x):   # the 16-bit parameter and gradients the float32 master update starts from
        return np.asarray(T.asarray(x).astype(dtype).astype(T.float64))
    want = _np_run(name, rnd(p0), [rnd(g) for g in grads], **kw)
    np.testing.assert_allclose(np.asarray(opt.state[p]["master"].astype(T.float64)), want,
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(p.detach().astype(T.float32)),
                                  np.asarray(opt.state[p]["master"].astype(dtype).astype(T.float32)))


def test_first_steps_by_hand():
    def one(cls, g, p=1.0, steps=1, **kw):
        w = T.tensor([p], dtype=T.float64, requires_grad=True)
        opt = cls([w], **kw)
        for _ in range(steps):
            w.grad = T.tensor([g], dtype=T.float64)
            opt.step()
        return w.item()
    # Adagrad: sum = 4, p -= 0.5 * 2 / 2; then sum = 8, lr / (1 + lr_decay)
    assert one(Adagrad, 2.0, lr=0.5, eps=0.0) == pytest.approx(0.5, rel=1e-12)
    assert one(Adagrad, 2.0, steps=2, lr=0.5, lr_decay=1.0, eps=0.0) == pytest.approx(
        0.5 - 0.25 * 2 / math.sqrt(8), rel=1e-12)
    assert one(Adagrad, 2.0, lr=0.5) == pytest.approx(1 - 0.5 * 2 / (2 + 1e-10), rel=1e-15)
    # Adadelta, rho 0.5: sq = 2, delta = sqrt(eps) / sqrt(2 + eps) * 2
    eps = 1e-6
    assert one(Adadelta, 2.0, rho=0.5) == pytest.approx(1 - math.sqrt(eps / (2 + eps)) * 2, rel=1e-12)
    # Adamax: m = 0.2, u = 2 + eps, lr / 0.1 * m / u
    assert one(Adamax, 2.0, lr=0.1) == pytest.approx(1 - 0.1 / 0.1 * 0.2 / (2 + 1e-8), rel=1e-12)
    # RAdam step 1 (rho_1 = 1): p -= lr * m / (1 - beta1) = lr * g
    assert one(RAdam, 2.0, lr=0.1) == pytest.approx(0.8, rel=1e-12)
    mu1, mu2 = (0.9 * (1 - 0.5 * 0.96 ** (k * 4e-3)) for k in (1, 2))
    den = math.sqrt(0.004 / 0.001) + 1e-8
    assert one(NAdam, 2.0, lr=0.1) == pytest.approx(
        1 - 0.1 * 2 / den - 0.1 * mu2 / (1 - mu1 * mu2) * 0.2 / den, rel=1e-7)


def test_state_names_and_adagrad_initial_state():
    p = T.zeros(3).requires_grad_()
    opt = Adagrad([p], initial_accumulator_value=0.5)
    sd = opt.state_dict()   # PyTorch's Adagrad has its state from construction
    assert sd["state"][0]["step"] == 0 and np.asarray(sd["state"][0]["sum"]).tolist() == [0.5] * 3
    names = {"Adadelta": {"step", "square_avg", "acc_delta"}, "Adamax": {"step", "exp_avg", "exp_inf"},
             "NAdam": {"step", "mu_product", "exp_avg", "exp_avg_sq"},
             "RAdam": {"step", "exp_avg", "exp_avg_sq"}}
    for name, keys in names.items():
        _, o = _run(CLASSES[name], dict(lr=0.1), *_data(n=3, steps=2))
        assert set(o.state_dict()["state"][0]) == keys and o.state_dict()["state"][0]["step"] == 2


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_state_dict_round_trip(name, kw):
    cls = CLASSES[name]
    p0, grads = _data(steps=6)

    def make(x, y, **kw):
        a, b = T.asarray(x.copy()).requires_grad_(), T.asarray(y.copy()).requires_grad_()
        return a, b, cls([{"params": [a]}, {"params": [b], "lr": kw["lr"] / 2}], **kw)

    def feed(a, b, opt, gs):
        for g in gs:
            a.grad, b.grad = T.asarray(g.copy()), T.asarray(g[::-1].copy())
            opt.step()
    a, b, opt = make(p0, p0[::-1], **kw)
    feed(a, b, opt, grads[:3])
    saved = opt.state_dict()
    snap = np.asarray(a.detach()).copy(), np.asarray(b.detach()).copy()
    feed(a, b, opt, grads[3:])
    a2, b2, opt2 = make(*snap, lr=7.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[1]["lr"] == kw["lr"] / 2
    feed(a2, b2, opt2, grads[3:])
    np.testing.assert_array_equal(np.asarray(a2.detach()), np.asarray(a.detach()))
    np.testing.assert_array_equal(np.asarray(b2.detach()), np.asarray(b.detach()))


@pytest.mark.parametrize("make,match", [
    (lambda p: Adagrad(p, lr=-1), "Adagrad: invalid learning rate"),
    (lambda p: Adagrad(p, lr_decay=-1), "Adagrad: invalid lr_decay"),
    (lambda p: Adagrad(p, initial_accumulator_value=-1), "Adagrad: invalid initial_accumulator"),
    (lambda p: Adagrad(p, eps=-1), "Adagrad: invalid epsilon"),
    (lambda p: Adadelta(p, rho=1.5), "Adadelta: invalid rho"),
    (lambda p: Adadelta(p, weight_decay=-1), "Adadelta: invalid weight_decay"),
    (lambda p: Adamax(p, betas=(1.0, 0.9)), "Adamax: invalid beta parameter at index 0"),
    (lambda p: NAdam(p, momentum_decay=-1), "NAdam: invalid momentum_decay"),
    (lambda p: NAdam(p, betas=(0.9, -0.1)), "NAdam: invalid beta parameter at index 1"),
    (lambda p: RAdam(p, eps=-1), "RAdam: invalid epsilon"),
    (lambda p: RAdam(p, betas=(0.9,)), "RAdam: betas must be a pair"),
])
def test_optimizer_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make([T.zeros(2).requires_grad_()])


def compare_with_torch(torch, name, kw, cls, p0, grads, rtol):
    """torch.optim's `name` and our cls over the same parameters p0 (the first in a group of its
    own, the rest in a second at half the lr) and per-step gradients: after 4 steps ours
    continues from torch's state_dict; parameters, param groups and state agree at the end."""
    groups = lambda ps: [{"params": ps[:1]}, {"params": ps[1:], "lr": kw["lr"] / 2}]  # noqa: E731
    tps = [torch.tensor(x.copy(), requires_grad=True) for x in p0]
    topt = getattr(torch.optim, name)(groups(tps), foreach=False, **kw)
    ps = [T.asarray(x.copy()).requires_grad_() for x in p0]
    opt = cls(groups(ps), **kw)
    for i, step in enumerate(grads):
        for tp, p, g in zip(tps, ps, step):
            tp.grad, p.grad = torch.tensor(g.copy()), T.asarray(g.copy())
        topt.step()
        opt.step()
        if i == 3:   # continue from torch's state_dict: its numbers map 1:1
            ps = [T.asarray(tp.detach().numpy().copy()).requires_grad_() for tp in tps]
            opt = cls(groups(ps), lr=123.0)
            opt.load_state_dict(topt.state_dict())
    for tp, p in zip(tps, ps):
        np.testing.assert_allclose(np.asarray(p.detach()), tp.detach().numpy(), rtol=rtol, atol=rtol)
    tsd, osd = topt.state_dict(), opt.state_dict()
    assert [g["params"] for g in tsd["param_groups"]] == [g["params"] for g in osd["param_groups"]]
    for k, v in osd["param_groups"][1].items():
        if k in tsd["param_groups"][1]:
            assert tsd["param_groups"][1][k] == v, k
    assert set(osd["state"]) == set(tsd["state"]) == set(range(len(p0)))
    for i, st in osd["state"].items():
        assert set(st) == set(tsd["state"][i])
        for k, v in st.items():
            np.testing.assert_allclose(np.asarray(v), tsd["state"][i][k].numpy(), rtol=rtol * 10,
                                       atol=1e-12, err_msg=k)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_torch(name, kw, dtype):
    torch = pytest.importorskip("torch")
    p0, grads = _data(dtype, steps=8)
    compare_with_torch(torch, name, kw, CLASSES[name], [p0, p0[::-1]],
                       [[g, g[::-1]] for g in grads], 1e-12 if dtype == np.float64 else 2e-6)


# ---- schedulers ---------------------------------------------------------------------------------

def _opt(lr=0.5, groups=1, cls=SGD, **kw):
    return cls([{"params": [T.zeros(2).requires_grad_()], "lr": lr * (i + 1)} for i in range(groups)],
               lr=lr, **kw)


def _seq(make, n=40, lr=0.5, groups=1, cls=SGD, metrics=None, **kw):
    opt = _opt(lr, groups, cls, **kw)
    s = make(opt)
    out = [s.get_last_lr()]
    for i in range(n):
        opt.step()
        s.step() if metrics is None else s.step(metrics[i])
        out.append(s.get_last_lr())
    return out, s, opt


def _close(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_multiplicative_multistep_exponential():
    lrs, _, _ = _seq(lambda o: MultiplicativeLR(o, lambda e: 0.9), groups=2)
    _close([x for x, _ in lrs], [0.5 * 0.9 ** e for e in range(41)])
    _close([y for _, y in lrs], [1.0 * 0.9 ** e for e in range(41)])
    lrs, _, _ = _seq(lambda o: MultiStepLR(o, [5, 12, 12, 30], gamma=0.5))
    _close([x for x, in lrs], [0.5 * 0.5 ** ((e >= 5) + 2 * (e >= 12) + (e >= 30)) for e in range(41)])
    lrs, _, _ = _seq(lambda o: ExponentialLR(o, gamma=0.95))
    _close([x for x, in lrs], [0.5 * 0.95 ** e for e in range(41)])


def test_constant_linear_polynomial():
    lrs, _, _ = _seq(lambda o: ConstantLR(o, factor=0.25, total_iters=7))
    _close([x for x, in lrs], [0.5 * (0.25 if e < 7 else 1.0) for e in range(41)])
    lrs, _, _ = _seq(lambda o: LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10))
    _close([x for x, in lrs], [0.5 * (0.2 + 0.7 * min(e, 10) / 10) for e in range(41)])
    lrs, _, _ = _seq(lambda o: PolynomialLR(o, total_iters=20, power=2.0))
    _close([x for x, in lrs], [0.5 * (1 - min(e, 20) / 20) ** 2 for e in range(41)])


def test_cosine_warm_restarts():
    lrs, _, _ = _seq(lambda o: CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01))
    want, t_i, t_cur = [], 5, 0
    for _ in range(41):   # restarts at 5, 15, 35 (periods 5, 10, 20)
        want.append(0.01 + 0.49 * (1 + math.cos(math.pi * t_cur / t_i)) / 2)
        t_cur += 1
        if t_cur == t_i:
            t_cur, t_i = 0, t_i * 2
    _close([x for x, in lrs], want)
    s = CosineAnnealingWarmRestarts(_opt(), T_0=4)
    s.step(9.5)   # a fractional epoch: T_cur = 1.5
    assert s.get_last_lr() == [pytest.approx(0.25 * (1 + math.cos(math.pi * 1.5 / 4)))]


def _tri(e, lo, hi, up, down):
    c = e % (up + down)
    return lo + (hi - lo) * (c / up if c <= up else (up + down - c) / down), e // (up + down)


def test_cyclic_lr_modes_and_momentum():
    lrs, _, opt = _seq(lambda o: CyclicLR(o, 0.1, 1.0, step_size_up=4, step_size_down=6),
                       momentum=0.5)
    _close([x for x, in lrs], [_tri(e, 0.1, 1.0, 4, 6)[0] for e in range(41)])
    hi_m, lo_m = 0.9, 0.8
    frac = (_tri(40, 0.1, 1.0, 4, 6)[0] - 0.1) / 0.9
    assert opt.param_groups[0]["momentum"] == pytest.approx(hi_m - (hi_m - lo_m) * frac)
    lrs, _, _ = _seq(lambda o: CyclicLR(o, 0.1, 1.0, step_size_up=5, mode="triangular2",
                                        cycle_momentum=False))
    want = [0.1 + (_tri(e, 0.1, 1.0, 5, 5)[0] - 0.1) / 2 ** _tri(e, 0, 1, 5, 5)[1] for e in range(41)]
    _close([x for x, in lrs], want)
    lrs, _, opt = _seq(lambda o: CyclicLR(o, 0.1, 1.0, step_size_up=5, mode="exp_range",
                                          gamma=0.9), cls=Adam)
    _close([x for x, in lrs], [0.1 + (_tri(e, 0.1, 1.0, 5, 5)[0] - 0.1) * 0.9 ** e for e in range(41)])
    assert opt.param_groups[0]["betas"][1] == 0.999


def test_one_cycle_lr():
    lrs, _, opt = _seq(lambda o: OneCycleLR(o, max_lr=1.0, total_steps=40, pct_start=0.25,
                                            anneal_strategy="linear"), n=39, momentum=0.9)
    lo, end = 1.0 / 25, 1.0 / 25 / 1e4
    want = [lo + (1 - lo) * e / 9 if e <= 9 else 1 + (end - 1) * (e - 9) / 30 for e in range(40)]
    _close([x for x, in lrs], want)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)   # back at max_momentum
    lrs, s, opt = _seq(lambda o: OneCycleLR(o, max_lr=[1.0, 2.0], epochs=4, steps_per_epoch=10),
                       n=39, groups=2, cls=Adam)
    cos = [end + (1 - end) / 2 * (1 + math.cos(math.pi * (e - 11) / 28)) for e in range(12, 40)]
    _close([x for x, _ in lrs[12:]], cos)
    assert opt.param_groups[1]["betas"][0] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="OneCycleLR: tried to step 41 times"):
        s.step(), s.step()


def test_reduce_lr_on_plateau():
    metrics = [5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3] + [3] * 28
    lrs, s, _ = _seq(lambda o: ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1,
                                                 min_lr=0.1), metrics=metrics)
    # 4 is not beaten at epochs 3, 4, 5: cut at 5 (num_bad_epochs 3 > patience); 6 is in the
    # cooldown; 7, 8, 9: cut; 10 cooldown; 11, 12, 13: cut to 0.0625, held at min_lr 0.1
    want = [0.5] * 5 + [0.25] * 4 + [0.125] * 4 + [0.1] * 28
    _close([x for x, in lrs], want)
    lrs, _, _ = _seq(lambda o: ReduceLROnPlateau(o, mode="max", threshold=0.5, threshold_mode="abs",
                                                 patience=0), n=4, metrics=[1, 1.4, 2.0, 2.6])
    _close([x for x, in lrs], [0.5, 0.5, 0.05, 0.05, 0.05])   # 1.4 < 1 + 0.5: cut
    sd = s.state_dict()
    s2 = ReduceLROnPlateau(_opt(), mode="max")
    s2.load_state_dict(sd)
    assert s2.mode == "min" and s2.best == 3 and s2._is_better(2.0, 3)


def test_sequential_and_chained():
    lrs, _, _ = _seq(lambda o: SequentialLR(o, [LinearLR(o, 0.1, total_iters=5),
                                                ExponentialLR(o, 0.9), StepLR(o, 3, 0.5)],
                                            milestones=[5, 20]))
    want = ([0.5 * (0.1 + 0.9 * e / 5) for e in range(5)] + [0.5 * 0.9 ** k for k in range(15)]
            + [0.5 * 0.5 ** (k // 3) for k in range(21)])
    _close([x for x, in lrs], want)
    lrs, _, _ = _seq(lambda o: ChainedScheduler([ConstantLR(o, 0.5, total_iters=4),
                                                 ExponentialLR(o, 0.9)]))
    _close([x for x, in lrs], [0.5 * 0.9 ** e * (0.5 if e < 4 else 1) for e in range(41)])


def test_scheduler_state_dicts_resume():
    for make in (lambda o: OneCycleLR(o, max_lr=1.0, total_steps=50),
                 lambda o: CyclicLR(o, 0.1, 1.0, step_size_up=3),
                 lambda o: CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
                 lambda o: SequentialLR(o, [ConstantLR(o, 0.5, 3), MultiStepLR(o, [4, 9])], [3]),
                 lambda o: ChainedScheduler([LinearLR(o, 0.5, total_iters=4), PolynomialLR(o, 30)])):
        full, _, _ = _seq(make, n=20)
        half, s, opt = _seq(make, n=8)
        sd, osd = s.state_dict(), opt.state_dict()
        assert "optimizer" not in sd
        opt2 = _opt(momentum=0.9)
        s2 = make(opt2)
        opt2.load_state_dict(osd)
        s2.load_state_dict(sd)
        rest = []
        for _ in range(12):
            opt2.step()
            s2.step()
            rest.append(s2.get_last_lr())
        _close([x for x, in half + rest], [x for x, in full])


@pytest.mark.parametrize("make,match", [
    (lambda o: ConstantLR(o, factor=1.5), "ConstantLR: factor"),
    (lambda o: LinearLR(o, start_factor=0), "LinearLR: start_factor"),
    (lambda o: LinearLR(o, end_factor=2), "LinearLR: end_factor"),
    (lambda o: PolynomialLR(o, total_iters=0), "PolynomialLR: total_iters"),
    (lambda o: MultiplicativeLR(o, [lambda e: 1, lambda e: 1]), "MultiplicativeLR: expected 1"),
    (lambda o: CosineAnnealingWarmRestarts(o, T_0=0), "CosineAnnealingWarmRestarts: .*T_0"),
    (lambda o: CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), "CosineAnnealingWarmRestarts: .*T_mult"),
    (lambda o: CyclicLR(o, 0.1, 1.0, mode="square"), "CyclicLR: mode"),
    (lambda o: CyclicLR(o, [0.1, 0.2], 1.0), "CyclicLR: base_lr must have one value per"),
    (lambda o: OneCycleLR(o, 1.0), "OneCycleLR: you must define"),
    (lambda o: OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5), "OneCycleLR: .*pct_start"),
    (lambda o: OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="x"), "OneCycleLR: anneal"),
    (lambda o: ReduceLROnPlateau(o, factor=1.0), "ReduceLROnPlateau: factor"),
    (lambda o: ReduceLROnPlateau(o, mode="up"), "ReduceLROnPlateau: mode"),
    (lambda o: ReduceLROnPlateau(o, threshold_mode="x"), "ReduceLROnPlateau: threshold mode"),
    (lambda o: SequentialLR(o, [ExponentialLR(o, 0.9)], [3]), "SequentialLR expects one more"),
    (lambda o: SequentialLR(o, [ReduceLROnPlateau(o)], []), "SequentialLR does not support"),
    (lambda o: ChainedScheduler([ExponentialLR(o, 0.9), ExponentialLR(_opt(), 0.9)]),
     "ChainedScheduler expects all schedulers to belong"),
    (lambda o: ChainedScheduler([]), "ChainedScheduler expects at least one"),
])
def test_scheduler_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make(_opt())
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        CyclicLR(_opt(cls=Adagrad), 0.1, 1.0)


SCHEDS = [
    ("MultiplicativeLR", lambda M, o: M.MultiplicativeLR(o, lambda e: 0.97), {}),
    ("MultiStepLR", lambda M, o: M.MultiStepLR(o, [3, 10, 10, 25], gamma=0.3), {}),
    ("ExponentialLR", lambda M, o: M.ExponentialLR(o, 0.93), {}),
    ("ConstantLR", lambda M, o: M.ConstantLR(o, 0.3, 8), {}),
    ("LinearLR", lambda M, o: M.LinearLR(o, 0.1, 0.8, 15), {}),
    ("PolynomialLR", lambda M, o: M.PolynomialLR(o, 25, 1.5), {}),
    ("CosineAnnealingWarmRestarts", lambda M, o: M.CosineAnnealingWarmRestarts(o, 4, 2, 0.01), {}),
    ("CyclicLR-tri", lambda M, o: M.CyclicLR(o, 0.05, [0.5, 0.7], 3, 5), dict(momentum=0.9)),
    ("CyclicLR-tri2", lambda M, o: M.CyclicLR(o, 0.05, 0.5, 4, mode="triangular2"), dict(momentum=0.9)),
    ("CyclicLR-exp", lambda M, o: M.CyclicLR(o, 0.05, 0.5, 4, mode="exp_range", gamma=0.97), "adam"),
    ("OneCycleLR-cos", lambda M, o: M.OneCycleLR(o, [1.0, 2.0], 41), dict(momentum=0.9)),
    ("OneCycleLR-lin3", lambda M, o: M.OneCycleLR(o, 1.0, 41, anneal_strategy="linear",
                                                  three_phase=True), "adam"),
    ("SequentialLR", lambda M, o: M.SequentialLR(o, [M.LinearLR(o, 0.2, total_iters=6),
                                                     M.CosineAnnealingLR(o, 12, 0.01),
                                                     M.MultiStepLR(o, [5, 8])], [6, 20]), {}),
    ("ChainedScheduler", lambda M, o: M.ChainedScheduler([M.ConstantLR(o, 0.5, 5),
                                                          M.ExponentialLR(o, 0.95)]), {}),
]


@pytest.mark.parametrize("make,okw", [s[1:] for s in SCHEDS], ids=[s[0] for s in SCHEDS])
def test_schedulers_against_torch(make, okw):
    torch = pytest.importorskip("torch")
    import nn.optim as O
    kind = "Adam" if okw == "adam" else "SGD"
    okw = {} if okw == "adam" else okw
    ours, _, opt = _seq(lambda o: make(O, o), groups=2, lr=0.1, cls=getattr(O, kind), **okw)
    topt = getattr(torch.optim, kind)([{"params": [torch.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
                                       for i in range(2)], lr=0.1, **okw)
    ts = make(torch.optim.lr_scheduler, topt)
    theirs = [ts.get_last_lr()]
    for _ in range(40):
        topt.step()
        ts.step()
        theirs.append(ts.get_last_lr())
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-13, abs=1e-16)
    for g, tg in zip(opt.param_groups, topt.param_groups):
        for k in ("momentum", "betas", "initial_lr", "max_lr", "min_lr"):
            if k in tg:
                assert g[k] == pytest.approx(tg[k], rel=1e-13), k


def test_reduce_lr_on_plateau_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    metrics = list(np.round(np.cumsum(rng.standard_normal(40)) * 0.1 + 3, 2))
    for kw in (dict(factor=0.5, patience=2, cooldown=2, min_lr=[0.01, 0.02]),
               dict(mode="max", threshold=0.01, threshold_mode="abs", patience=1)):
        ours, _, _ = _seq(lambda o, kw=kw: ReduceLROnPlateau(o, **kw), groups=2, lr=0.1, metrics=metrics)
        topt = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": 0.1 * (i + 1)}
                                for i in range(2)], lr=0.1)
        ts = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kw)
        theirs = [ts.get_last_lr()]
        for m in metrics:
            topt.step()
            ts.step(m)
            theirs.append(ts.get_last_lr())
        assert ours == theirs


def test_cosine_annealing_closed_form_in_sequential():
    lrs, _, _ = _seq(lambda o: SequentialLR(o, [ConstantLR(o, 0.5, 2), CosineAnnealingLR(o, 10)], [2]),
                     n=12)
    _close([x for x, in lrs], [0.25, 0.25] + [0.25 * (1 + math.cos(math.pi * k / 10)) for k in range(11)])


@pytest.mark.parametrize("name", list(CLASSES))
def test_complex_and_strided_parameters(name):
    # a complex parameter is updated as its (real, imaginary) pairs (PyTorch's view_as_real)
    kw = dict(lr=0.05, weight_decay=0.1)
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    grads = [rng.standard_normal(6) + 1j * rng.standard_normal(6) for _ in range(4)]
    got, opt = _run(CLASSES[name], kw, p0, grads)
    as_real = lambda z: np.stack([z.real, z.imag], -1).reshape(-1)  # noqa: E731
    want = _np_run(name, as_real(p0), [as_real(g) for g in grads], **kw)
    np.testing.assert_allclose(as_real(np.asarray(got.detach())), want, rtol=1e-12, atol=1e-14)
    assert all(v.dtype == T.complex128 for v in opt.state[got].values() if isinstance(v, T.Tensor))
    base = T.asarray(np.stack([p0.real, np.zeros(6)], 1))   # a strided view as the parameter
    q = base[:, 0].requires_grad_()
    o = CLASSES[name]([q], **kw)
    for g in grads:
        q.grad = T.asarray(g.real.copy())
        o.step()
    np.testing.assert_allclose(np.asarray(q.detach()), _np_run(name, p0.real, [g.real for g in grads], **kw),
                               rtol=1e-12, atol=1e-14)
    assert np.asarray(base)[:, 1].tolist() == [0.0] * 6
