"""Fixes from the optimizer / scheduler / init / clipping / GradScaler differential hunt: state
of the wrong shape or dtype kept away from the fused kernels, a failed step that changes
nothing, float T_max / step_size, scheduler.step(epoch), GradScaler's float32 scale,
clip_grad_norm_ with norm_type 0 and -inf, and nn.init's trunc_normal_, orthogonal_, sparse_,
dirac_. Each runs without torch; a few also compare with torch where it is installed."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import nn
import nn.functional as F
import tensor as T
from nn import init
from nn.optim import (
    SGD,
    Adam,
    Adamax,
    AdamW,
    CosineAnnealingLR,
    ExponentialLR,
    NAdam,
    PolynomialLR,
    RAdam,
    ReduceLROnPlateau,
    RMSprop,
    StepLR,
)


class _One(nn.Module):
    def __init__(self, values, dtype="float32"):
        super().__init__()
        self.w = nn.Parameter(T.asarray(values, dtype=dtype))


def _stepped(cls, dtype="float32", **kw):
    """A one-parameter model and its optimizer after one step with gradient ones."""
    m = _One([1.0, 2.0, 3.0], dtype)
    opt = cls(m.parameters(), **kw)
    m.w.grad = T.ones(3, dtype=dtype)
    opt.step()
    return m, opt


# ---- findings 1 and 2: state whose shape or dtype is not its parameter's -----------------------

@pytest.mark.parametrize("cls,kw,key", [(Adam, {}, "exp_avg"), (SGD, {"momentum": 0.9},
                                                                   "momentum_buffer"),
                                        (RMSprop, {}, "square_avg")])
def test_load_state_dict_refuses_a_state_of_another_shape(cls, kw, key):
    small = T.zeros(2, dtype="float32").requires_grad_()
    o1 = cls([small], lr=0.1, **kw)
    small.grad = T.ones(2, dtype="float32")
    o1.step()
    big = T.zeros(1000, dtype="float32").requires_grad_()
    o2 = cls([big], lr=0.1, **kw)
    with pytest.raises(ValueError, match=rf"{key}.*parameter 0.*\(2,\).*\(1000,\)"):
        o2.load_state_dict(o1.state_dict())
    assert not o2.state   # nothing loaded


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_step_refuses_state_of_another_shape_before_changing_anything(dtype):
    a = T.ones(4, dtype=dtype).requires_grad_()
    opt = Adam([a], lr=0.1)
    a.grad = T.ones(4, dtype=dtype)
    opt.step()
    before = a.numpy().copy()
    opt.state[a]["exp_avg_sq"] = T.zeros(2, dtype=dtype)   # set by hand: not via load_state_dict
    with pytest.raises(ValueError, match=r"exp_avg_sq.*\(2,\).*\(4,\)"):
        opt.step()
    np.testing.assert_array_equal(a.numpy(), before)
    assert opt.state[a]["step"] == 1


def test_sgd_promotes_after_double_keeping_its_float32_buffer():
    """PyTorch keeps the float32 momentum buffer and updates the float64 parameter with it
    (exact numbers here: momentum and lr powers of two)."""
    m, opt = _stepped(SGD, lr=0.5, momentum=0.5)            # buf 1, w [0.5, 1.5, 2.5]
    m.double()
    m.w.grad = T.ones(3, dtype="float64")
    opt.step()                                             # buf 0.5 * 1 + 1 = 1.5
    buf = opt.state[m.w]["momentum_buffer"]
    assert buf.dtype == T.float32 and buf.tolist() == [1.5, 1.5, 1.5]
    assert m.w.dtype == T.float64 and m.w.tolist() == [-0.25, 0.75, 1.75]


@pytest.mark.parametrize("kw", [{"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.3},
                                {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}])
def test_sgd_after_double_matches_torch(kw):
    torch = pytest.importorskip("torch")
    m, opt = _stepped(SGD, lr=0.1, **kw)
    m.double()
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
    topt = torch.optim.SGD([tp], lr=0.1, **kw)
    tp.grad = torch.ones(3)
    topt.step()
    tp.data = tp.data.double()
    for g in ([0.3, -1.1, 2.0], [1.7, 0.2, -0.4]):
        m.w.grad, tp.grad = T.asarray(g, dtype="float64"), torch.tensor(g, dtype=torch.float64)
        opt.step()
        topt.step()
    np.testing.assert_allclose(m.w.numpy(), tp.detach().numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("cls,kw", [(Adam, {}), (Adam, {"amsgrad": True}), (AdamW, {}),
                                    (Adamax, {}), (NAdam, {}), (RAdam, {}),
                                    (RMSprop, {"centered": True, "momentum": 0.9})])
def test_adam_family_refuses_state_of_another_dtype_as_torch(cls, kw):
    m, opt = _stepped(cls, lr=0.1, **kw)
    m.double()
    m.w.grad = T.ones(3, dtype="float64")
    before = m.w.numpy().copy()
    with pytest.raises(TypeError, match=r"float32 but its parameter \(3,\) is float64"):
        opt.step()
    np.testing.assert_array_equal(m.w.numpy(), before)
    assert opt.state[m.w]["step"] == 1
    opt.load_state_dict(opt.state_dict())   # the way out the message names: casts the state
    opt.step()
    assert opt.state[m.w]["step"] == 2 and np.isfinite(m.w.numpy()).all()
    assert all(v.dtype == T.float64 for v in opt.state[m.w].values() if isinstance(v, T.Tensor))


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_rmsprop_promotes_after_double(momentum):
    """Non-centered RMSprop promotes in PyTorch: its float32 state stays float32."""
    m, opt = _stepped(RMSprop, lr=0.01, alpha=0.5, momentum=momentum)
    m.double()
    m.w.grad = T.full((3,), 2.0, dtype="float64")
    w = m.w.numpy().copy()
    opt.step()
    sq = opt.state[m.w]["square_avg"]
    assert sq.dtype == T.float32 and sq.tolist() == [2.25, 2.25, 2.25]   # 0.5 * 0.5 + 0.5 * 4
    step = 2.0 / (1.5 + 1e-8)
    if momentum:   # plus the first step's buffer, 1 / (sqrt(0.5) + eps), times momentum
        step += momentum / (math.sqrt(0.5) + 1e-8)
    np.testing.assert_allclose(m.w.numpy(), w - 0.01 * step, rtol=1e-7)


def test_fused_path_never_sees_a_mismatched_buffer():
    from nn.optim.optimizer import _fusable
    p = T.zeros(4, dtype="float32")
    g = T.zeros(4, dtype="float32")
    assert _fusable(p, g, T.zeros(4, dtype="float32"))
    assert not _fusable(p, g, T.zeros(2, dtype="float32"))
    assert not _fusable(p, g, T.zeros(4, dtype="float64"))
    assert not _fusable(p, g, T.zeros((4, 2), dtype="float32")[:, 0])
    assert not _fusable(p, T.zeros(4, dtype="float64"))
    assert not _fusable(T.zeros(4, dtype="float64"), T.zeros(4, dtype="float64"),
                        T.zeros(4, dtype="float32"))


# ---- finding 3: a step that raises part-way changes nothing -----------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls,kw", [(Adam, {}), (SGD, {"momentum": 0.9, "dampening": 0.5})])
def test_failed_step_leaves_every_parameter_consistent(cls, kw, dtype):
    def fresh():
        a = T.ones(3, dtype=dtype).requires_grad_()
        b = T.ones(2, dtype=dtype).requires_grad_()
        return a, b, cls([a, b], lr=0.1, **kw)

    a, b, opt = fresh()
    a.grad = T.ones(3, dtype=dtype)
    b._grad = T.ones(3, dtype=dtype)  # wrong shape (past the .grad setter): raises at b, after a
    with pytest.raises(ValueError, match="gradient"):
        opt.step()
    assert a.tolist() == [1.0, 1.0, 1.0] and not opt.state.get(a)
    b.grad = T.ones(2, dtype=dtype)
    opt.step()
    ca, cb, clean = fresh()
    ca.grad, cb.grad = T.ones(3, dtype=dtype), T.ones(2, dtype=dtype)
    clean.step()
    assert a.tolist() == ca.tolist() and b.tolist() == cb.tolist()
    # and the next step too (Adam's bias correction, SGD's dampening of an existing buffer)
    a.grad, ca.grad = T.full((3,), 0.5, dtype=dtype), T.full((3,), 0.5, dtype=dtype)
    b.grad, cb.grad = T.ones(2, dtype=dtype), T.ones(2, dtype=dtype)
    opt.step()
    clean.step()
    assert a.tolist() == ca.tolist()


def test_param_group_without_params_raises_like_torch():
    with pytest.raises(KeyError, match="params"):
        SGD([{"lr": 0.1}])
    p = T.zeros(1).requires_grad_()
    opt = SGD([p], lr=0.1)
    with pytest.raises(KeyError, match="params"):
        opt.add_param_group({"lr": 0.2})
    assert len(opt.param_groups) == 1


# ---- findings 4, 5, 15: schedulers ------------------------------------------------------------

def _lrs(sched_fn, steps, lr=1.0, epochs=None):
    p = T.zeros(1).requires_grad_()
    opt = SGD([p], lr=lr)
    s = sched_fn(opt)
    out = [opt.param_groups[0]["lr"]]
    for i in range(steps):
        opt.step()
        s.step() if epochs is None else s.step(epochs[i])
        out.append(opt.param_groups[0]["lr"])
    return out, s


def test_cosine_annealing_keeps_a_float_t_max():
    lrs, s = _lrs(lambda o: CosineAnnealingLR(o, T_max=7.5), 3)
    assert s.T_max == 7.5
    assert lrs[3] == pytest.approx((1 + math.cos(3 * math.pi / 7.5)) / 2, rel=1e-12)  # 0.6545...
    with pytest.raises(ValueError, match="T_max"):
        CosineAnnealingLR(SGD([T.zeros(1).requires_grad_()], lr=1.0), T_max=0)


def test_step_lr_keeps_a_float_step_size():
    lrs, s = _lrs(lambda o: StepLR(o, 2.5, gamma=0.5), 11)
    assert s.step_size == 2.5
    assert lrs == [1.0] * 5 + [0.5] * 5 + [0.25] * 2   # decays where epoch % 2.5 == 0: 5, 10
    lrs, _ = _lrs(lambda o: PolynomialLR(o, total_iters=2.5), 3)
    assert lrs[1] == pytest.approx(1 - 1 / 2.5)


def test_cosine_annealing_resumed_keeps_the_current_lr():
    a = T.zeros(1).requires_grad_()
    o = SGD([{"params": [a], "lr": 0.3, "initial_lr": 0.5}])
    s = CosineAnnealingLR(o, 6, last_epoch=4)
    assert o.param_groups[0]["lr"] == 0.3 and s.get_last_lr() == [0.3]
    o.step()
    s.step()   # the recursive step from 0.3 at epoch 6 = T_max: eta_min
    assert o.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-15)


def test_scheduler_step_with_epoch_warns_and_jumps_to_the_closed_form():
    with pytest.warns(UserWarning, match="epoch parameter"):
        lrs, _ = _lrs(lambda o: StepLR(o, 2, gamma=0.5), 3, epochs=[3, 7, 1])
    assert lrs == [1.0, 0.5, 0.125, 1.0]
    with pytest.warns(UserWarning, match="epoch parameter"):
        lrs, _ = _lrs(lambda o: ExponentialLR(o, 0.5), 2, epochs=[3, 1])
    assert lrs == [1.0, 0.125, 0.5]
    with pytest.warns(UserWarning, match="epoch parameter"):
        lrs, _ = _lrs(lambda o: CosineAnnealingLR(o, 6), 1, epochs=[2])
    assert lrs[1] == pytest.approx((1 + math.cos(2 * math.pi / 6)) / 2, rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _lrs(lambda o: StepLR(o, 2), 3)   # no epoch: no warning


def test_plateau_step_with_epoch():
    p = T.zeros(1).requires_grad_()
    opt = SGD([p], lr=1.0)
    s = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    with pytest.warns(UserWarning, match="epoch parameter"):
        for i, v in enumerate([3.0, 2.0, 2.0, 2.0, 2.0]):
            s.step(v, epoch=10 + 2 * i)
    assert s.last_epoch == 18 and opt.param_groups[0]["lr"] == 0.5
    s.step(1.0)
    assert s.last_epoch == 19


def test_schedulers_match_torch_with_float_periods_and_epochs():
    torch = pytest.importorskip("torch")
    cases = [(lambda m, o: m.CosineAnnealingLR(o, T_max=7.5), 10, None),
             (lambda m, o: m.StepLR(o, 2.5), 8, None),
             (lambda m, o: m.CosineAnnealingLR(o, 6), 4, [3, 7, 1, 4]),
             (lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=10), 3, [3, 5, 2])]
    for mk, n, epochs in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, _ = _lrs(lambda o, mk=mk: mk(nn.optim, o), n, epochs=epochs)
        tp = torch.zeros(1, requires_grad=True)
        topt = torch.optim.SGD([tp], lr=1.0)
        ts = mk(torch.optim.lr_scheduler, topt)
        theirs = [topt.param_groups[0]["lr"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(n):
                topt.step()
                ts.step() if epochs is None else ts.step(epochs[i])
                theirs.append(topt.param_groups[0]["lr"])
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


# ---- finding 6: GradScaler's scale is a float32 value ------------------------------------------

def _overflowing_steps(scaler, n):
    w = T.ones(3, dtype="float32").requires_grad_()
    opt = SGD([w], lr=0.01)
    for _ in range(n):
        opt.zero_grad()
        scaler.scale((w * w).sum() * float("inf")).backward()
        scaler.step(opt)
        scaler.update()


def test_grad_scaler_rounds_its_scale_to_float32_at_every_update():
    s = T.GradScaler("cpu", init_scale=3.3, backoff_factor=0.3)
    assert s.get_scale() == 3.3   # as given until scale() (PyTorch's lazy float32 tensor)
    _overflowing_steps(s, 3)
    want = np.float32(3.3)
    for _ in range(3):
        want = np.float32(float(want) * 0.3)   # the product in double, rounded, as PyTorch's
    assert s.get_scale() == float(want) == 0.08909999579191208   # PyTorch 2.14's value
    assert s.state_dict()["scale"] == float(want)


def test_grad_scaler_growth_rounds_and_never_reaches_inf():
    s = T.GradScaler("cpu", init_scale=1.1, growth_factor=1.3, growth_interval=1)
    w = T.ones(2, dtype="float32").requires_grad_()
    opt = SGD([w], lr=0.0)
    want = np.float32(1.1)
    for _ in range(3):
        opt.zero_grad()
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update()
        want = np.float32(float(want) * 1.3)
    assert s.get_scale() == float(want)
    big = T.GradScaler("cpu", init_scale=3e38, growth_factor=2.0, growth_interval=1)
    opt.zero_grad()
    big.scale(w.sum()).backward()
    big.step(opt)
    big.update()
    assert big.get_scale() == float(np.float32(3e38))


# ---- finding 16: clip_grad_norm_ with norm_type 0 and -inf --------------------------------------

def _params(grads):
    ps = []
    for g in grads:
        p = T.zeros(len(g), dtype="float64").requires_grad_()
        p.grad = T.asarray(np.array(g, dtype=np.float64))
        ps.append(p)
    return ps


def test_clip_grad_norm_zero_and_minus_inf_norms():
    grads = [[0.0, -3.0, 0.5], [2.0, -0.25], [0.0, 0.0]]
    # PyTorch: the norm of the per-tensor norms; order 0 counts the tensors with a non-zero
    assert float(nn.utils.get_total_norm([T.asarray(g) for g in grads], 0)) == 2.0
    assert float(nn.utils.get_total_norm([T.asarray(g) for g in grads[:2]], -math.inf)) == 0.0
    assert float(nn.utils.get_total_norm([T.asarray(grads[1])], -math.inf)) == 0.25
    ps = _params(grads[1:2])
    total = nn.utils.clip_grad_norm_(ps, max_norm=0.1, norm_type=-math.inf)
    assert float(total) == 0.25
    np.testing.assert_allclose(ps[0].grad.numpy(), np.array([2.0, -0.25]) * 0.1 / (0.25 + 1e-6))
    with pytest.raises(ValueError, match="norm_type"):
        nn.utils.clip_grad_norm_(_params(grads), 1.0, norm_type=math.nan)


def test_clip_grad_norm_orders_match_torch():
    torch = pytest.importorskip("torch")
    grads = [[0.0, -3.0, 0.5], [2.0, 0.0], [0.0, 0.0, 0.0]]
    for nt in (0, -math.inf, -1.0, 0.5, math.inf):
        ps = _params(grads)
        tp = [torch.zeros(len(g), dtype=torch.float64, requires_grad=True) for g in grads]
        for p, g in zip(tp, grads):
            p.grad = torch.tensor(g, dtype=torch.float64)
        ours = float(nn.utils.clip_grad_norm_(ps, 1.0, norm_type=nt))
        theirs = float(torch.nn.utils.clip_grad_norm_(tp, 1.0, norm_type=nt))
        assert ours == pytest.approx(theirs, rel=1e-14, abs=0), nt
        for p, q in zip(ps, tp):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-14)


# ---- finding 13: nn.init's trunc_normal_, orthogonal_, sparse_, dirac_ ---------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_bounds_and_moments(dtype):
    mean, std, a, b = 0.5, 1.0, -1.0, 1.5
    w = init.trunc_normal_(T.empty(200_000, dtype=dtype), mean, std, a, b,
                           generator=T.random.Generator(0)).numpy()
    assert w.dtype == np.dtype(dtype) and w.min() >= a and w.max() <= b
    # the truncated normal's mean and sd (alpha = -1.5, beta = 1)
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    al, be = (a - mean) / std, (b - mean) / std
    z = cdf(be) - cdf(al)
    m = mean + std * (pdf(al) - pdf(be)) / z
    sd = std * math.sqrt(1 + (al * pdf(al) - be * pdf(be)) / z - ((pdf(al) - pdf(be)) / z) ** 2)
    assert abs(w.mean() - m) < 5 * sd / math.sqrt(w.size)
    assert abs(w.std() - sd) < 0.01
    # the default: N(0, 1) cut to [-2, 2]; a warning when the mean is far outside [a, b]
    d = init.trunc_normal_(T.empty(1000), generator=T.random.Generator(1)).numpy()
    assert d.min() >= -2 and d.max() <= 2 and d.std() > 0.7
    with pytest.warns(UserWarning, match="2 std"):
        init.trunc_normal_(T.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)
    with pytest.raises(TypeError, match="real floating"):
        init.trunc_normal_(T.empty(3, dtype="complex64"))


@pytest.mark.parametrize("shape,gain", [((6, 6), 1.0), ((3, 8), 2.0), ((8, 3), 0.5),
                                        ((4, 2, 3), 1.0)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, gain):
    w = init.orthogonal_(T.empty(*shape, dtype="float64"), gain=gain,
                         generator=T.random.Generator(3))
    q = w.numpy().reshape(shape[0], -1)
    gram = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(gram.shape[0]), atol=1e-12)
    again = init.orthogonal_(T.empty(*shape, dtype="float64"), gain=gain,
                             generator=T.random.Generator(3))
    np.testing.assert_array_equal(again.numpy(), w.numpy())
    with pytest.raises(ValueError, match="2 or more"):
        init.orthogonal_(T.empty(3))


def test_orthogonal_is_haar_distributed():
    """The sign fix makes Q uniform (Haar): a Householder QR's Q alone has diagonal entries of
    mean about -0.5, -0.5, 0.5 (3x3); a uniform Q's have mean 0."""
    g = T.random.Generator(5)
    diag = np.array([np.diag(init.orthogonal_(T.empty(3, 3, dtype="float64"), generator=g).numpy())
                     for _ in range(400)])
    assert np.abs(diag.mean(axis=0)).max() < 0.15   # standard error about 0.03


def test_sparse_zeros_per_column():
    w = init.sparse_(T.empty(10, 50, dtype="float64"), sparsity=0.25, std=0.5,
                     generator=T.random.Generator(2)).numpy()
    assert ((w == 0).sum(axis=0) == 3).all()   # ceil(0.25 * 10) in every column
    rows_hit = np.argwhere(w == 0)[:, 0]
    assert len(set(rows_hit.tolist())) > 5   # at random rows, not the same three
    assert 0.35 < w[w != 0].std() < 0.65
    with pytest.raises(ValueError, match="2 dimensions"):
        init.sparse_(T.empty(2, 2, 2), 0.5)


@pytest.mark.parametrize("groups", [1, 2])
def test_dirac_is_the_identity_convolution(groups):
    x = T.random.randn(2, 4, 5, 5, dtype="float64")
    w = init.dirac_(T.empty(4, 4 // groups, 3, 3, dtype="float64"), groups=groups)
    np.testing.assert_allclose(F.conv2d(x, w, padding=1, groups=groups).numpy(), x.numpy())
    w1 = init.dirac_(T.empty(6, 4, 3, dtype="float64"))   # more outputs than inputs: zeros after
    x1 = T.random.randn(1, 4, 7, dtype="float64")
    y1 = F.conv1d(x1, w1, padding=1).numpy()
    np.testing.assert_allclose(y1[:, :4], x1.numpy())
    assert not y1[:, 4:].any()
    with pytest.raises(ValueError, match="divisible"):
        init.dirac_(T.empty(3, 1, 3, 3), groups=2)
    with pytest.raises(ValueError, match="3, 4, or 5"):
        init.dirac_(T.empty(3, 3))


def test_calculate_correct_fan():
    w = T.empty(8, 4, 3, 3)
    assert init._calculate_correct_fan(w, "fan_in") == 36
    assert init._calculate_correct_fan(w, "FAN_OUT") == 72
    with pytest.raises(ValueError, match="fan_in"):
        init._calculate_correct_fan(w, "fan")
