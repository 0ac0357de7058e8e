"""nn.optim: optimizer updates against hand-computed NumPy steps and torch.optim, the fused
kernels against their tensor-op composition, state_dict round trips, schedulers, errors, and
a small problem whose loss must fall."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd
import nn
import tensor as T
from nn.optim import SGD, Adam, AdamW, CosineAnnealingLR, LambdaLR, Optimizer, RMSprop, StepLR

pytestmark = pytest.mark.usefixtures("device")

STEPS = 5
N = 257  # odd: exercises the kernels' loop tails


def _data(dtype, n=N, steps=STEPS, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(dtype),
            [rng.standard_normal(n).astype(dtype) for _ in range(steps)])


def _run_ours(cls, kw, p0, grads, noncontig=False):
    """Apply `grads` one step each; noncontig: the parameter is a strided view."""
    if noncontig:
        base = T.asarray(np.stack([p0, np.zeros_like(p0)], axis=1))
        p = base[:, 0]
        assert not p.is_contiguous()
        p.requires_grad_()
    else:
        p = T.asarray(p0.copy()).requires_grad_()
    opt = cls([p], **kw)
    for g in grads:
        p.grad = T.asarray(g.copy())
        opt.step()
    return np.asarray(p.detach()).copy(), opt


# ---- NumPy references (textbook formulas, float64) --------------------------------------------

def _np_sgd(p, grads, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
            maximize=False):
    p, buf = p.astype(np.float64), None
    for g in grads:
        g = -g if maximize else g.astype(np.float64)
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def _np_adam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
             maximize=False, decoupled=False):
    p = p.astype(np.float64)
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    b1, b2 = betas
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g.astype(np.float64)
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vhat = (vmax if amsgrad else v) / (1 - b2 ** t)
        p = p - lr * (m / (1 - b1 ** t)) / (np.sqrt(vhat) + eps)
    return p


def _np_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False, maximize=False):
    p = p.astype(np.float64)
    sq, ga, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g.astype(np.float64)
        g = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        ga = alpha * ga + (1 - alpha) * g
        avg = np.sqrt(sq - ga * ga if centered else sq) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


CASES = [
    (SGD, _np_sgd, dict(lr=0.1)),
    (SGD, _np_sgd, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    (SGD, _np_sgd, dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    (SGD, _np_sgd, dict(lr=0.05, momentum=0.5, dampening=0.3)),
    (Adam, _np_adam, dict(lr=0.01)),
    (Adam, _np_adam, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    (Adam, _np_adam, dict(lr=0.01, betas=(0.6, 0.99), eps=1e-3, maximize=True)),
    (AdamW, lambda p, g, **kw: _np_adam(p, g, decoupled=True, **{"weight_decay": 1e-2, **kw}),
     dict(lr=0.01)),
    (AdamW, lambda p, g, **kw: _np_adam(p, g, decoupled=True, **kw),
     dict(lr=0.02, weight_decay=0.5, amsgrad=True)),
    (RMSprop, _np_rmsprop, dict(lr=0.01)),
    (RMSprop, _np_rmsprop, dict(lr=0.01, alpha=0.5, momentum=0.9, weight_decay=0.1)),
    (RMSprop, _np_rmsprop, dict(lr=0.01, alpha=0.3, centered=True, maximize=True)),
    (RMSprop, _np_rmsprop, dict(lr=0.003, centered=True, momentum=0.5, eps=1e-4)),
]
IDS = [f"{c.__name__}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for c, _, kw in CASES]


@pytest.mark.parametrize("cls,ref,kw", CASES, ids=IDS)
@pytest.mark.parametrize("noncontig", [False, True], ids=["fused", "tensor-ops"])
def test_against_numpy_float64(cls, ref, kw, noncontig):
    p0, grads = _data(np.float64)
    got, _ = _run_ours(cls, kw, p0, grads, noncontig)
    want = ref(p0, grads, **kw)
    assert not np.allclose(want, p0)  # the steps did move the parameter
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("cls,ref,kw", CASES, ids=IDS)
def test_against_numpy_float32(cls, ref, kw):
    p0, grads = _data(np.float32)
    got, opt = _run_ours(cls, kw, p0, grads)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(p0, grads, **kw), rtol=2e-5, atol=2e-6)
    for v in opt.state[opt.param_groups[0]["params"][0]].values():
        if isinstance(v, T.Tensor):
            assert v.dtype == T.float32


def _ulps(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference in units of the last place, the unit taken at |x| >= 0.1 (the
    parameters are O(1); an update that cancels to ~0 is judged at the parameters' scale)."""
    scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), a.dtype.type(0.1))
    return float(np.max(np.abs(a - b) / np.spacing(scale)))


@pytest.mark.parametrize("cls,ref,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_matches_tensor_ops(cls, ref, kw, dtype):
    """The C kernel against the same update composed of tensor ops (taken for strided params)."""
    p0, grads = _data(dtype)
    fused, _ = _run_ours(cls, kw, p0, grads)
    composed, _ = _run_ours(cls, kw, p0, grads, noncontig=True)
    assert _ulps(fused, composed) <= 256  # different roundings (no fma), same formula


TORCH = {"SGD": "SGD", "Adam": "Adam", "AdamW": "AdamW", "RMSprop": "RMSprop"}


@pytest.mark.parametrize("cls,ref,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_torch(cls, ref, kw, dtype):
    torch = pytest.importorskip("torch")
    p0, grads = _data(dtype, steps=8)
    tp = torch.tensor(p0.copy(), requires_grad=True)
    topt = getattr(torch.optim, TORCH[cls.__name__])([tp], foreach=False, **kw)
    for g in grads:
        tp.grad = torch.tensor(g)
        topt.step()
    got, opt = _run_ours(cls, kw, p0, grads)
    want = tp.detach().numpy()
    # bitwise-close: the same op sequence in the same precision; PyTorch's float32 sqrt is not
    # correctly rounded (ours is), which can move the last bit or two
    assert _ulps(got, want) <= 8, _ulps(got, want)
    if cls is SGD:
        np.testing.assert_array_equal(got, want)
    tstate, ostate = topt.state_dict(), opt.state_dict()
    assert ostate["param_groups"][0]["params"] == tstate["param_groups"][0]["params"] == [0]
    assert list(ostate["state"]) == list(tstate["state"])  # SGD without momentum keeps none
    for i, st in ostate["state"].items():
        assert set(st) == set(tstate["state"][i])
        for k, v in st.items():
            if isinstance(v, T.Tensor):
                np.testing.assert_allclose(np.asarray(v), tstate["state"][i][k].numpy(), rtol=1e-5,
                                           atol=1e-6)
            else:
                assert v == float(tstate["state"][i][k])
    for k, v in ostate["param_groups"][0].items():
        if k in tstate["param_groups"][0] and k != "params":
            assert tstate["param_groups"][0][k] == v, k


def test_threads_do_not_change_the_result():
    p0, grads = _data(np.float32, n=100_003, steps=3)  # over the kernels' parallel threshold
    n0 = T.get_num_threads()
    try:
        T.set_num_threads(1)
        one, _ = _run_ours(Adam, dict(lr=0.01, amsgrad=True), p0, grads)
        T.set_num_threads(4)
        many, _ = _run_ours(Adam, dict(lr=0.01, amsgrad=True), p0, grads)
    finally:
        T.set_num_threads(n0)
    np.testing.assert_array_equal(one, many)


# ---- state_dict --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,ref,kw", CASES, ids=IDS)
def test_state_dict_round_trip_resumes_identically(cls, ref, kw):
    p0, grads = _data(np.float32, steps=6)
    a = T.asarray(p0.copy()).requires_grad_()
    b0 = T.asarray(p0.copy() * 2).requires_grad_()  # a second parameter, in its own group
    opt = cls([{"params": [a]}, {"params": [b0], "lr": kw["lr"] / 2}], **kw)
    for g in grads[:3]:
        a.grad, b0.grad = T.asarray(g.copy()), T.asarray(g[::-1].copy())
        opt.step()
    saved, snap = opt.state_dict(), (np.asarray(a.detach()).copy(), np.asarray(b0.detach()).copy())
    for g in grads[3:]:
        a.grad, b0.grad = T.asarray(g.copy()), T.asarray(g[::-1].copy())
        opt.step()
    a2, b2 = (T.asarray(s.copy()).requires_grad_() for s in snap)
    opt2 = cls([{"params": [a2]}, {"params": [b2]}], lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[1]["lr"] == kw["lr"] / 2 and opt2.param_groups[0]["lr"] == kw["lr"]
    for g in grads[3:]:
        a2.grad, b2.grad = T.asarray(g.copy()), T.asarray(g[::-1].copy())
        opt2.step()
    np.testing.assert_array_equal(np.asarray(a2.detach()), np.asarray(a.detach()))
    np.testing.assert_array_equal(np.asarray(b2.detach()), np.asarray(b0.detach()))


def test_state_dict_layout():
    a, b = T.zeros(3).requires_grad_(), T.zeros(2).requires_grad_()
    opt = Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, amsgrad=True)
    a.grad = T.ones(3)
    opt.step()
    sd = opt.state_dict()
    assert list(sd["state"]) == [0]  # b had no gradient: no state
    assert sd["state"][0]["step"] == 1
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.5]
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
    sd["state"][0]["exp_avg"].fill_(7.0)  # a snapshot: editing it leaves the optimizer alone
    assert opt.state[a]["exp_avg"].tolist() == pytest.approx([0.1] * 3)
    with pytest.raises(ValueError, match="groups"):
        SGD([a], lr=0.1).load_state_dict(sd)


# ---- optimizer behaviour -----------------------------------------------------------------------

def test_param_groups_have_their_own_options():
    a, b = T.ones(2).requires_grad_(), T.ones(2).requires_grad_()
    opt = SGD([{"params": a}, {"params": [b], "lr": 1.0, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[0]["momentum"] == 0.0 and opt.param_groups[1]["momentum"] == 0.5
    for _ in range(2):
        a.grad, b.grad = T.ones(2), T.ones(2)
        opt.step()
    assert a.tolist() == pytest.approx([0.8, 0.8])
    assert b.tolist() == pytest.approx([1 - 1 - 1.5] * 2)  # buf 1, then 1.5
    assert a not in opt.state and "momentum_buffer" in opt.state[b]
    c = T.ones(1).requires_grad_()
    opt.add_param_group({"params": [c], "lr": 2.0})
    assert opt.param_groups[2]["lr"] == 2.0 and opt.param_groups[2]["nesterov"] is False
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_zero_grad_and_closure():
    w = T.tensor([1.0, 2.0]).requires_grad_()
    opt = SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 5.0
    assert w.tolist() == [0.0, 0.0]
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no gradient: nothing happens
    assert w.tolist() == [0.0, 0.0]


def test_step_is_an_in_place_change_that_autograd_sees():
    w = T.tensor([1.0, 2.0], dtype=T.float32).requires_grad_()
    opt = SGD([w], lr=0.1)
    y = (w * w).sum()  # saves w for backward
    w.grad = T.ones(2, dtype=T.float32)
    opt.step()
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


def test_other_dtypes_take_the_tensor_op_path():
    w = T.tensor([1.0, -1.0], dtype=T.float16).requires_grad_()
    opt = Adam([w], lr=0.1)
    w.grad = T.tensor([1.0, -1.0], dtype=T.float16)
    opt.step()
    assert w.dtype == T.float16 and w.tolist() == pytest.approx([0.9, -0.9], abs=1e-3)


def test_gradient_mismatch_is_an_error():
    w = T.zeros(3, dtype=T.float32).requires_grad_()
    with pytest.raises(RuntimeError, match="gradient of dtype float64 to a tensor of dtype float32"):
        w.grad = T.zeros(3, dtype=T.float64)
    w._grad = T.zeros(3, dtype=T.float64)   # behind the setter's back: the step checks again
    with pytest.raises(ValueError, match=r"SGD.step: gradient \(3,\) float64"):
        SGD([w], lr=0.1).step()


# ---- construction errors -----------------------------------------------------------------------

def _p():
    return T.zeros(2).requires_grad_()


@pytest.mark.parametrize("make,match", [
    (lambda: SGD([], lr=0.1), "empty parameter list"),
    (lambda: Adam(iter([])), "empty parameter list"),
    (lambda: SGD([_p()], lr=-0.1), "learning rate"),
    (lambda: SGD([_p()], lr=0.1, momentum=-1), "momentum"),
    (lambda: SGD([_p()], lr=0.1, weight_decay=-1), "weight_decay"),
    (lambda: SGD([_p()], lr=0.1, nesterov=True), "Nesterov"),
    (lambda: SGD([_p()], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov"),
    (lambda: Adam([_p()], lr=-1e-3), "learning rate"),
    (lambda: Adam([_p()], betas=(1.0, 0.999)), "beta parameter at index 0"),
    (lambda: Adam([_p()], betas=(0.9, -0.1)), "beta parameter at index 1"),
    (lambda: AdamW([_p()], eps=-1e-8), "epsilon"),
    (lambda: AdamW([_p()], weight_decay=-0.1), "weight_decay"),
    (lambda: RMSprop([_p()], alpha=-0.5), "alpha"),
    (lambda: RMSprop([_p()], lr=-0.5), "learning rate"),
    (lambda: RMSprop([_p()], momentum=-0.5), "momentum"),
    (lambda: SGD([{"params": [_p()], "lr": -1.0}], lr=0.1), "learning rate"),
    (lambda: SGD([(_p() * 2)], lr=0.1), "non-leaf"),
])
def test_construction_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_construction_type_errors():
    with pytest.raises(TypeError, match="iterable of Tensors"):
        SGD(_p(), lr=0.1)
    with pytest.raises(TypeError, match="only optimize Tensors"):
        SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="floating-point"):
        SGD([T.zeros(2, dtype=T.int32)], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        SGD([{"params": {_p()}}], lr=0.1)
    assert isinstance(SGD([_p()], lr=0.0), Optimizer)  # lr = 0 is allowed, as in PyTorch


# ---- schedulers --------------------------------------------------------------------------------

def _lrs(make_sched, n=12, lr=0.5, groups=1):
    params = [{"params": [_p()], "lr": lr * (i + 1)} for i in range(groups)]
    opt = SGD(params, lr=lr)
    s = make_sched(opt)
    out = [s.get_last_lr()]
    for _ in range(n):
        opt.step()
        s.step()
        out.append(s.get_last_lr())
    return out, s, opt


def test_step_lr():
    lrs, _, _ = _lrs(lambda o: StepLR(o, step_size=3, gamma=0.5), groups=2)
    for e, (a, b) in enumerate(lrs):
        assert a == pytest.approx(0.5 * 0.5 ** (e // 3), rel=1e-15)
        assert b == pytest.approx(1.0 * 0.5 ** (e // 3), rel=1e-15)


def test_cosine_annealing_lr():
    lrs, _, _ = _lrs(lambda o: CosineAnnealingLR(o, T_max=5, eta_min=0.01), n=15)
    for e, (lr,) in enumerate(lrs):  # past T_max it rises again (PyTorch's periodic form)
        assert lr == pytest.approx(0.01 + (0.5 - 0.01) * (1 + math.cos(math.pi * e / 5)) / 2,
                                   abs=1e-12)


def test_lambda_lr_and_its_state_dict():
    lrs, s, opt = _lrs(lambda o: LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
                       groups=2)
    for e, (a, b) in enumerate(lrs):
        assert (a, b) == (0.5 * 0.9 ** e, 1.0 / (e + 1))
    sd = s.state_dict()
    assert sd["last_epoch"] == 12 and sd["lr_lambdas"] == [None, None]
    s2 = LambdaLR(opt, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])
    s2.load_state_dict(sd)
    s2.step()
    assert s2.get_last_lr() == [0.5 * 0.9 ** 13, 1.0 / 14]
    with pytest.raises(ValueError, match="expected 2 lr_lambdas"):
        LambdaLR(opt, [lambda e: 1.0])


def test_scheduler_state_dict_resumes():
    _, s, opt = _lrs(lambda o: StepLR(o, step_size=2, gamma=0.1), n=3)
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    opt2 = SGD([_p()], lr=7.0)
    opt2.load_state_dict(opt.state_dict())
    s2 = StepLR(opt2, step_size=99)
    s2.load_state_dict(sd)
    s.step()
    s2.step()
    assert s2.get_last_lr() == s.get_last_lr()


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=4, gamma=0.3)),
                                     ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
                                     ("CosineAnnealingLR", dict(T_max=3))])
def test_schedulers_against_torch(name, kw):
    torch = pytest.importorskip("torch")
    import nn.optim as O
    ours, _, _ = _lrs(lambda o: getattr(O, name)(o, **kw), n=20, lr=0.1)
    topt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
    ts = getattr(torch.optim.lr_scheduler, name)(topt, **kw)
    theirs = [ts.get_last_lr()]
    for _ in range(20):
        topt.step()
        ts.step()
        theirs.append(ts.get_last_lr())
    assert ours == theirs


def test_scheduler_errors():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        StepLR(object(), step_size=2)
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(SGD([_p()], lr=0.1), step_size=2, last_epoch=3)
    with pytest.raises(ValueError, match="T_max"):
        CosineAnnealingLR(SGD([_p()], lr=0.1), T_max=0)


# ---- a problem that has to be solved -----------------------------------------------------------

def _logistic_problem(seed=0, n=200):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2)).astype(np.float32)
    y = (x @ np.array([2.0, -3.0]) + 0.5 > 0).astype(np.float32)
    return T.asarray(x), T.asarray(y)


@pytest.mark.parametrize("make", [lambda ps: SGD(ps, lr=0.5, momentum=0.9),
                                  lambda ps: Adam(ps, lr=0.3),
                                  lambda ps: AdamW(ps, lr=0.3, weight_decay=1e-4),
                                  lambda ps: RMSprop(ps, lr=0.1)],
                         ids=["SGD", "Adam", "AdamW", "RMSprop"])
def test_logistic_regression_loss_falls(make):
    x, y = _logistic_problem()
    w = T.zeros(2, dtype=T.float32).requires_grad_()
    b = T.zeros(1, dtype=T.float32).requires_grad_()
    opt = make([w, b])
    sched = StepLR(opt, step_size=100, gamma=0.5)

    def loss_fn():  # binary cross-entropy with logits, in raw tensor ops
        z = x @ w + b
        return (T.maximum(z, 0.0) - z * y + T.log1p(T.exp(-abs(z)))).mean()

    first = loss_fn().item()
    for _ in range(150):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        sched.step()
    with autograd.no_grad():
        final = loss_fn().item()
        acc = (((x @ w + b) > 0) == (y > 0.5)).astype(T.float32).mean().item()
    assert first == pytest.approx(math.log(2), rel=1e-6)
    assert final < 0.1 and acc >= 0.98


def test_linear_regression_with_nn_modules():
    from nn.linear import Linear
    T.manual_seed(0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25
    xt, yt = T.asarray(x), T.asarray(y)
    model = Linear(3, 1)
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(150):
        opt.zero_grad()
        loss = ((model(xt) - yt) ** 2).mean()
        loss.backward()
        opt.step()
    assert loss.item() < 1e-6
    np.testing.assert_allclose(np.asarray(model.weight.detach()), [[1.5, -2.0, 0.5]], atol=1e-3)
    np.testing.assert_allclose(np.asarray(model.bias.detach()), [0.25], atol=1e-3)


def test_strided_gradient_of_a_contiguous_parameter():
    """A transposed gradient (as a weight's often is) is copied once, then updated fused."""
    p0, grads = _data(np.float32, n=12 * 7, steps=3)
    a = T.asarray(p0.reshape(12, 7).copy()).requires_grad_()
    b = T.asarray(p0.reshape(12, 7).copy()).requires_grad_()
    oa, ob = Adam([a], lr=0.01), Adam([b], lr=0.01)
    for g in grads:
        a.grad = T.asarray(g.reshape(12, 7).copy())
        b.grad = T.asarray(np.ascontiguousarray(g.reshape(12, 7).T)).T  # strides (1, 12)
        assert not b.grad.is_contiguous()
        oa.step()
        ob.step()
    np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))


@pytest.mark.parametrize("cls,kw", [
    (Adam, dict(lr=1e-2)), (AdamW, dict(lr=1e-2, weight_decay=0.1, amsgrad=True)),
    (SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (RMSprop, dict(lr=1e-2, centered=True, momentum=0.5))])
def test_float32_params_step_in_one_multi_tensor_call(cls, kw, monkeypatch):
    """Float32 parameters whose update has a fused kernel step through one multi-tensor call a
    group (the backend's optim_master, each parameter its own master: PyTorch's foreach), bitwise
    what one optimizer a parameter (the per-parameter kernel) computes."""
    from tensor.backend import backend_for
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,), (7000,), (2, 3, 5)]]
    ps = [nn.Parameter(T.asarray(a)) for a in init]
    refs = [nn.Parameter(T.asarray(a)) for a in init]
    opt, singles = cls(ps, **kw), [cls([r], **kw) for r in refs]
    be = backend_for(ps[0].device)
    calls = []
    for name in ("optim_master", "optim_step"):
        orig = getattr(be, name)
        monkeypatch.setattr(be, name, lambda *a, _o=orig, _n=name: (calls.append(_n), _o(*a))[1])
    for _ in range(3):
        for p, r in zip(ps, refs):
            p.grad = T.asarray(rng.standard_normal(p.shape).astype(np.float32))
            r.grad = p.grad.clone()
        calls.clear()
        opt.step()
        assert calls == ["optim_master"], calls
        for s in singles:
            s.step()
        for p, r in zip(ps, refs):
            np.testing.assert_array_equal(p.numpy(), r.numpy())
