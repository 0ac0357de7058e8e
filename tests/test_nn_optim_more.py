"""nn.optim's Rprop, ASGD and Adafactor (nn/optim/algorithms_more.py): against NumPy references
written out here, hand-computed steps, argument errors, state_dict round trips, failed steps,
16-bit parameters with and without master weights, complex parameters, and torch.optim (where
installed) with its state_dict loaded mid-run."""
from __future__ import annotations

import numpy as np
import pytest
from test_nn_optim_extra import compare_with_torch

import tensor as T
from nn.optim import ASGD, Adafactor, Rprop

pytestmark = pytest.mark.usefixtures("device")

CLASSES = {"Rprop": Rprop, "ASGD": ASGD, "Adafactor": Adafactor}


def _f32(x):
    return float(np.float32(x))


# ---- NumPy references (float64, PyTorch's formulas written out) ---------------------------------

def _np_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    prev, size = np.zeros_like(p), np.full_like(p, lr)
    for g in grads:
        g = -g if maximize else g
        prod = g * prev
        size = np.clip(size * np.where(prod > 0, etas[1], np.where(prod < 0, etas[0], 1.0)),
                       *step_sizes)
        g = np.where(prod < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
    return p, dict(prev=prev, step_size=size)


def _np_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    eta, mu, ax = _f32(lr), 1.0, np.zeros_like(p)   # torch: float32 scalar tensors
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p.copy() if mu == 1 else ax + mu * (p - ax)
        eta = _f32(lr / (1 + lambd * lr * t) ** alpha)
        mu = _f32(1 / max(1, t - t0))
    return p, dict(ax=ax, eta=eta, mu=mu)


def _np_adafactor(p, grads, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
                  maximize=False, eps_dtype=np.float64):
    eps1 = np.finfo(eps_dtype).eps if eps[0] is None else eps[0]
    if p.ndim > 1:
        st = dict(row_var=np.zeros(p.shape[:-1] + (1,)), col_var=np.zeros(p.shape[:-2] + (1, p.shape[-1])))
    else:
        st = dict(variance=np.zeros(p.shape))
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        w = t ** beta2_decay
        step = max(eps[1], np.sqrt(np.mean(p * p))) * min(lr, 1 / np.sqrt(t))
        p = p * (1 - lr * weight_decay)
        if p.ndim > 1:
            st["row_var"] = (1 - w) * st["row_var"] + w * np.mean(g * g, axis=-1, keepdims=True)
            st["col_var"] = (1 - w) * st["col_var"] + w * np.mean(g * g, axis=-2, keepdims=True)
            v = st["row_var"] * st["col_var"] / np.maximum(st["row_var"].mean(axis=-2, keepdims=True), eps1)
        else:
            st["variance"] = (1 - w) * st["variance"] + w * g * g
            v = st["variance"]
        u = g / np.sqrt(np.maximum(v, eps1 * eps1))
        u = u / max(1.0, np.sqrt(np.mean(u * u)) / d)
        p = p - step * u
    return p, st


NP = {"Rprop": _np_rprop, "ASGD": _np_asgd, "Adafactor": _np_adafactor}
CASES = [
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(0.02, 0.08), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.05, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict(lr=0.05)),
    ("Adafactor", dict(lr=0.5, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5, weight_decay=0.1,
                       maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
SHAPES = [(7,), (3, 4), (2, 3, 5)]   # Adafactor: unfactored, factored, factored over a batch


def _data(shape, steps=6, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape).astype(dtype),
            [rng.standard_normal(shape).astype(dtype) for _ in range(steps)])


def _run(cls, kw, p0, grads, dtype=None):
    def arr(x):
        t = T.asarray(x.copy())
        return t if dtype is None else t.astype(dtype)
    p = arr(p0).requires_grad_()
    opt = cls([p], **kw)
    for g in grads:
        p.grad = arr(g)
        opt.step()
    return p, opt


def _np(x):
    return np.asarray(x.detach() if isinstance(x, T.Tensor) else x)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_against_numpy(name, kw, shape):
    p0, grads = _data(shape)
    eps_dtype = {"eps_dtype": np.float64} if name == "Adafactor" else {}
    want, want_state = NP[name](p0, grads, **kw, **eps_dtype)
    got, opt = _run(CLASSES[name], kw, p0, grads)
    np.testing.assert_allclose(_np(got), want, rtol=1e-12, atol=1e-13)
    st = opt.state[got]
    assert st["step"] == len(grads)
    for k, v in want_state.items():
        np.testing.assert_allclose(_np(st[k]), v, rtol=1e-12, atol=1e-13, err_msg=k)
    if name == "Adafactor":
        eps_dtype = {"eps_dtype": np.float32}
        want, _ = NP[name](p0, grads, **kw, **eps_dtype)
    got32, _ = _run(CLASSES[name], kw, p0.astype(np.float32), [g.astype(np.float32) for g in grads])
    assert got32.dtype == T.float32
    np.testing.assert_allclose(_np(got32), want, rtol=3e-5, atol=3e-5)


def test_rprop_sign_changes_and_step_size_bounds():
    w = T.tensor([1.0], dtype=T.float64, requires_grad=True)
    opt = Rprop([w], lr=0.1, etas=(0.5, 1.2), step_sizes=(0.05, 0.15))
    seen = []
    for g in (1.0, 1.0, 1.0, 1.0, -1.0, -1.0, 1.0):
        w.grad = T.tensor([g], dtype=T.float64)
        opt.step()
        seen.append((w.item(), opt.state[w]["step_size"].item(), opt.state[w]["prev"].item()))
    want = [(0.9, 0.1, 1.0), (0.78, 0.12, 1.0), (0.636, 0.144, 1.0),
            (0.486, 0.15, 1.0),      # 0.1728 clipped to the largest step size
            (0.486, 0.075, 0.0),     # a sign flip: etaminus, no step, prev forgotten
            (0.561, 0.075, -1.0),    # after a forgotten sign: same size, a step
            (0.561, 0.05, 0.0)]      # flip again: 0.0375 clipped to the smallest
    for (p, s, prev), (wp, ws, wprev) in zip(seen, want):
        assert p == pytest.approx(wp, rel=1e-12) and s == pytest.approx(ws, rel=1e-12)
        assert prev == wprev
    # lr is only the first step size: changing it later does nothing (as PyTorch's)
    opt.param_groups[0]["lr"] = 10.0
    w.grad = T.tensor([1.0], dtype=T.float64)
    opt.step()
    assert opt.state[w]["step_size"].item() == pytest.approx(0.05, rel=1e-12)


def test_asgd_averaging_after_t0_and_its_schedule():
    w = T.zeros(2, dtype=T.float64).requires_grad_()
    opt = ASGD([w], lr=0.5, lambd=0.0, t0=2)
    axs = []
    for _ in range(6):
        w.grad = T.ones(2, dtype=T.float64)
        opt.step()
        axs.append(opt.state[w]["ax"].tolist()[0])
    # iterates -0.5, -1, ..., -3; ax is the last iterate until mu < 1 (mu = 1 / (t - t0) is set
    # after step t), then their running mean from step t0 + 2 = 4 on (mu a float32, as torch's)
    assert axs == pytest.approx([-0.5, -1.0, -1.5, -2.0, -2.25, -2.25 - 0.75 * _f32(1 / 3)],
                                rel=1e-15)
    assert abs(axs[-1] + 2.5) < 1e-8
    assert opt.state[w]["mu"] == _f32(1 / 4) and opt.state[w]["eta"] == _f32(0.5)
    w2 = T.ones(2, dtype=T.float64).requires_grad_()
    opt = ASGD([w2], lr=0.5, lambd=0.01, alpha=0.75)
    assert opt.state.get(w2) is None   # created at the first step, as PyTorch's
    for t in range(1, 4):
        eta = opt.state[w2]["eta"] if t > 1 else _f32(0.5)
        before = w2.tolist()[0]
        w2.grad = T.ones(2, dtype=T.float64)
        opt.step()
        assert w2.tolist()[0] == pytest.approx(before * (1 - 0.01 * eta) - eta, rel=1e-14)
        assert opt.state[w2]["eta"] == _f32(0.5 / (1 + 0.01 * 0.5 * t) ** 0.75)
        assert isinstance(opt.state[w2]["eta"], float) and opt.state[w2]["mu"] == 1.0


def test_adafactor_factored_state_and_first_step():
    p0 = np.arange(1.0, 13.0).reshape(3, 4)
    g = np.array([[1.0, 2.0, 0.0, 1.0], [0.5, 0.0, 3.0, 1.0], [2.0, 1.0, 1.0, 0.0]])
    p, opt = _run(Adafactor, dict(lr=0.01), p0, [g])
    st = opt.state[p]
    assert sorted(st) == ["col_var", "row_var", "step"] and st["step"] == 1
    assert st["row_var"].shape == (3, 1) and st["col_var"].shape == (1, 4)
    # step 1: beta2_1 = 0, so the factors are the gradient's row and column mean squares
    row, col = (g * g).mean(1, keepdims=True), (g * g).mean(0, keepdims=True)
    np.testing.assert_allclose(_np(st["row_var"]), row, rtol=1e-15)
    np.testing.assert_allclose(_np(st["col_var"]), col, rtol=1e-15)
    u = g / np.sqrt(np.maximum(row * col / row.mean(), np.finfo(np.float64).eps ** 2))
    u = u / max(1.0, np.sqrt((u * u).mean()))
    want = p0 - np.sqrt((p0 * p0).mean()) * 0.01 * u
    np.testing.assert_allclose(_np(p), want, rtol=1e-14)
    q, o = _run(Adafactor, dict(lr=0.01), p0[0], [g[0]])   # 1-D: an unfactored variance
    assert sorted(o.state[q]) == ["step", "variance"]
    np.testing.assert_allclose(_np(o.state[q]["variance"]), g[0] ** 2, rtol=1e-15)
    # a 0-d parameter, and a transposed (strided) one
    s, _ = _run(Adafactor, dict(lr=0.1), np.array(2.0), [np.array(-3.0)])
    assert s.item() == pytest.approx(2.0 + 2.0 * 0.1, rel=1e-14)
    base = T.asarray(p0.copy())
    v = base.T.requires_grad_()
    o = Adafactor([v], lr=0.01)
    v.grad = T.asarray(g.T.copy())
    o.step()
    np.testing.assert_allclose(_np(base), _np_adafactor(p0.T, [g.T], lr=0.01)[0].T, rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adafactor_eps1_none_is_the_dtypes_epsilon(dtype):
    # step 1: variance = g^2, so each element moves by g / max(|g|, eps1) of the common step
    g = np.array([1e-9, 1.0, -1.0, 1.0], dtype=dtype)
    p, _ = _run(Adafactor, dict(lr=0.1, eps=(None, 1.0)), np.zeros(4, dtype=dtype), [g])
    want, _ = _np_adafactor(np.zeros(4), [g.astype(np.float64)], lr=0.1, eps=(None, 1.0),
                            eps_dtype=dtype)
    np.testing.assert_allclose(_np(p), want, rtol=1e-5)
    assert abs(_np(p)[0]) == pytest.approx(abs(_np(p)[1]) * 1e-9 / max(1e-9, np.finfo(dtype).eps),
                                           rel=1e-4)


@pytest.mark.parametrize("make,match", [
    (lambda p: Rprop(p, lr=-1), "Rprop: invalid learning rate"),
    (lambda p: Rprop(p, etas=(1.5, 1.2)), "Rprop: invalid eta values"),
    (lambda p: Rprop(p, etas=(0.5, 0.9)), "Rprop: invalid eta values"),
    (lambda p: Rprop(p, etas=(0.0, 1.2)), "Rprop: invalid eta values"),
    (lambda p: Rprop(p, etas=(0.5,)), "Rprop: etas must be a pair"),
    (lambda p: Rprop(p, step_sizes=(1e-6, 1.0, 2.0)), "Rprop: step_sizes must be a pair"),
    (lambda p: ASGD(p, lr=-0.1), "ASGD: invalid learning rate"),
    (lambda p: ASGD(p, weight_decay=-1), "ASGD: invalid weight_decay"),
    (lambda p: Adafactor(p, lr=-1), "Adafactor: learning rate should be >= 0"),
    (lambda p: Adafactor(p, beta2_decay=0.5), "Adafactor: beta2_decay should be <= 0"),
    (lambda p: Adafactor(p, eps=(-1.0, 1e-3)), "Adafactor: epsilon1 should be >= 0"),
    (lambda p: Adafactor(p, eps=(None, -1.0)), "Adafactor: epsilon2 should be >= 0"),
    (lambda p: Adafactor(p, eps=(1e-3,)), "Adafactor: eps must be a pair"),
    (lambda p: Adafactor(p, d=0.5), "Adafactor: clipping threshold d should be >= 1"),
    (lambda p: Adafactor(p, weight_decay=-1), "Adafactor: weight_decay should be >= 0"),
    (lambda p: Rprop(p).add_param_group({"params": [T.zeros(1).requires_grad_()], "lr": -1}),
     "Rprop: invalid learning rate"),
])
def test_optimizer_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make([T.zeros(2).requires_grad_()])


def _pair(name, x, y, lr=0.05, **kw):
    """Two parameter groups (the second with half the lr): a 2-D and a 1-D parameter."""
    a, b = T.asarray(x.copy()).requires_grad_(), T.asarray(y.copy()).requires_grad_()
    return a, b, CLASSES[name]([{"params": [a]}, {"params": [b], "lr": lr / 2}], lr=lr, **kw)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_state_dict_round_trip(name, kw):
    (x, gx), (y, gy) = _data((3, 4), seed=1), _data((5,), seed=2)

    def feed(a, b, opt, i, j):
        for g, h in zip(gx[i:j], gy[i:j]):
            a.grad, b.grad = T.asarray(g.copy()), T.asarray(h.copy())
            opt.step()
    a, b, opt = _pair(name, x, y, **kw)
    feed(a, b, opt, 0, 3)
    saved = opt.state_dict()
    snap = _np(a).copy(), _np(b).copy()
    feed(a, b, opt, 3, 6)
    keys = {"Rprop": ({"step", "prev", "step_size"},) * 2, "ASGD": ({"step", "eta", "mu", "ax"},) * 2,
            "Adafactor": ({"step", "row_var", "col_var"}, {"step", "variance"})}[name]
    assert [set(saved["state"][i]) for i in (0, 1)] == list(keys) and saved["state"][0]["step"] == 3
    a2, b2, opt2 = _pair(name, *snap, lr=7.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[1]["lr"] == kw["lr"] / 2 and opt2.state[a2]["step"] == 3
    feed(a2, b2, opt2, 3, 6)
    np.testing.assert_array_equal(_np(a2), _np(a))
    np.testing.assert_array_equal(_np(b2), _np(b))


def test_adafactor_refuses_state_that_does_not_fit():
    (x, gx), (y, gy) = _data((3, 4)), _data((5,))
    a, b, opt = _pair("Adafactor", x, y)
    a.grad, b.grad = T.asarray(gx[0]), T.asarray(gy[0])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["row_var"] = T.zeros((4, 1), dtype=T.float64)
    a2, b2, opt2 = _pair("Adafactor", x, y)
    with pytest.raises(ValueError, match="row_var"):
        opt2.load_state_dict(sd)
    assert not opt2.state.get(a2)
    opt.state[a]["col_var"] = T.zeros((1, 3), dtype=T.float64)   # behind load_state_dict
    before = _np(a).copy(), _np(b).copy()
    with pytest.raises(ValueError, match="col_var"):
        opt.step()
    np.testing.assert_array_equal(_np(a), before[0])
    np.testing.assert_array_equal(_np(b), before[1])
    assert opt.state[b]["step"] == 1
    opt.state[a]["col_var"] = T.zeros((1, 4), dtype=T.float32)   # PyTorch's lerp_ refuses too
    with pytest.raises(TypeError, match="col_var"):
        opt.step()


@pytest.mark.parametrize("name", list(CLASSES))
def test_failed_step_changes_nothing(name):
    def fresh():
        a = T.ones((2, 3), dtype=T.float64).requires_grad_()
        b = T.ones(2, dtype=T.float64).requires_grad_()
        return a, b, CLASSES[name]([a, b], lr=0.1)

    ga = T.asarray(np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]))
    a, b, opt = fresh()
    a.grad = ga
    b._grad = T.ones(3, dtype=T.float64)   # wrong shape, past the .grad setter: raises at b
    with pytest.raises(ValueError, match="gradient"):
        opt.step()
    assert _np(a).tolist() == [[1.0] * 3] * 2 and not opt.state.get(a)
    ca, cb, clean = fresh()
    for _ in range(2):
        a.grad, b.grad = ga, T.asarray(np.array([1.0, -1.0]))
        ca.grad, cb.grad = ga, T.asarray(np.array([1.0, -1.0]))
        opt.step()
        clean.step()
    np.testing.assert_array_equal(_np(a), _np(ca))
    np.testing.assert_array_equal(_np(b), _np(cb))


@pytest.mark.parametrize("name,kw", CASES[::2], ids=IDS[::2])
def test_16_bit_and_master_weights(name, kw):
    p0, grads = _data((3, 4), steps=3)
    got, opt = _run(CLASSES[name], kw, p0, grads, T.float16)   # plain float16: tensor ops
    assert got.dtype == T.float16 and opt.state[got]["step"] == 3
    assert np.isfinite(_np(got.astype(T.float32))).all()
    for dtype in (T.float16, T.bfloat16):
        p, opt = _run(CLASSES[name], dict(kw, master_weights=True), p0, grads, dtype)
        st = opt.state[p]
        assert p.dtype == dtype and st["master"].dtype == T.float32
        assert all(v.dtype == T.float32 for v in st.values() if isinstance(v, T.Tensor))

        def rnd(x, dtype=dtype):   # the 16-bit values the float32 master update starts from
            return np.asarray(T.asarray(x).astype(dtype).astype(T.float64))
        extra = {"eps_dtype": np.float32} if name == "Adafactor" else {}
        want, _ = NP[name](rnd(p0), [rnd(g) for g in grads], **kw, **extra)
        np.testing.assert_allclose(_np(st["master"].astype(T.float64)), want, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(_np(p.astype(T.float32)),
                                      _np(st["master"].astype(dtype).astype(T.float32)))


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_complex_parameters(name):
    # a complex parameter is updated as its (real, imaginary) pairs (PyTorch's view_as_real)
    kw = dict(lr=0.05) if name == "Rprop" else dict(lr=0.05, weight_decay=0.1, t0=1)
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    grads = [rng.standard_normal(6) + 1j * rng.standard_normal(6) for _ in range(5)]
    got, opt = _run(CLASSES[name], kw, p0, grads)
    as_real = lambda z: np.stack([z.real, z.imag], -1)  # noqa: E731
    want, want_state = NP[name](as_real(p0), [as_real(g) for g in grads], **kw)
    np.testing.assert_allclose(as_real(_np(got)), want, rtol=1e-12, atol=1e-14)
    for k, v in want_state.items():
        got_v = opt.state[got][k]
        if isinstance(got_v, T.Tensor):
            assert got_v.dtype == T.complex128
            got_v = as_real(_np(got_v))
        np.testing.assert_allclose(got_v, v, rtol=1e-12, atol=1e-14, err_msg=k)


def test_adafactor_refuses_complex_before_any_change():
    a = T.ones(3, dtype=T.float64).requires_grad_()
    z = T.asarray(np.ones(3, dtype=np.complex128)).requires_grad_()
    opt = Adafactor([a, z])
    a.grad, z.grad = T.ones(3, dtype=T.float64), T.asarray(np.ones(3, dtype=np.complex128))
    with pytest.raises(RuntimeError, match="Adafactor does not support complex"):
        opt.step()
    assert a.tolist() == [1.0] * 3 and not opt.state.get(a)


# ---- against torch.optim ------------------------------------------------------------------------

TORCH_SHAPES = {"Rprop": [(5,), (3, 4)], "ASGD": [(5,), (3, 4)], "Adafactor": [(5,), (3, 4), (2, 3, 4)]}


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_torch(name, kw, dtype):
    torch = pytest.importorskip("torch")
    shapes = TORCH_SHAPES[name]
    rng = np.random.default_rng(4)
    p0 = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(10)]
    compare_with_torch(torch, name, kw, CLASSES[name], p0, grads,
                       1e-12 if dtype == np.float64 else 5e-6)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_complex_against_torch(name):
    torch = pytest.importorskip("torch")
    kw = dict(lr=0.05, maximize=True) if name == "Rprop" else dict(lr=0.05, t0=3, weight_decay=0.1)
    rng = np.random.default_rng(5)
    z = lambda: rng.standard_normal(6) + 1j * rng.standard_normal(6)  # noqa: E731
    p0, grads = z(), [z() for _ in range(10)]
    tp = torch.tensor(p0.copy(), requires_grad=True)
    topt = getattr(torch.optim, name)([tp], foreach=False, **kw)
    p = T.asarray(p0.copy()).requires_grad_()
    opt = CLASSES[name]([p], **kw)
    for g in grads:
        tp.grad, p.grad = torch.tensor(g.copy()), T.asarray(g.copy())
        topt.step()
        opt.step()
    np.testing.assert_allclose(_np(p), tp.detach().numpy(), rtol=1e-12, atol=1e-12)
    for k, v in opt.state_dict()["state"][0].items():
        np.testing.assert_allclose(np.asarray(v), topt.state_dict()["state"][0][k].numpy(),
                                   rtol=1e-12, atol=1e-12, err_msg=k)
