"""Higher-order derivatives: double backward (reverse over reverse), forward over reverse and
reverse over forward, checked against central differences of our own first gradient (NumPy)
and against PyTorch where it is installed; gradcheck's forward-mode check and gradgradcheck's
PyTorch semantics (grad_outputs, check_fwd_over_rev).

Most cases run on "cpu" only (float64); test_hvp_on_device also runs on "cuda" (the emulator
without a GPU), kept small.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import nn.functional as F
import tensor as T
from autograd import GradcheckError, gradcheck, gradgradcheck
from autograd.forward import jvp
from autograd.graph import RULES, Rule

RNG = np.random.default_rng(11)


def _leaf(a, device="cpu"):
    return T.asarray(np.asarray(a, dtype=np.float64), device=device).requires_grad_()


def _grad(f, xs):
    return [g.numpy() for g in autograd.grad(f(*xs), list(xs))]


def _hvp_ror(f, xs, vs):
    gs = autograd.grad(f(*xs), list(xs), create_graph=True)
    s = sum((g * v).sum() for g, v in zip(gs, vs))
    return [h.numpy() for h in autograd.grad(s, list(xs))]


def _hvp_for(f, xs, vs):
    def first(*a):
        return tuple(autograd.grad(f(*a), list(a), create_graph=True))
    _, hv = jvp(first, tuple(xs), tuple(vs))
    return [h.numpy() for h in hv]


def _hvp_rof(f, xs, vs):
    _, tan = jvp(f, tuple(xs), tuple(vs))
    return [h.numpy() for h in autograd.grad(tan, list(xs))]


def _hvp_fd(f, arrays, vs, device="cpu", eps=1e-6):
    """Central difference of our own first gradient along vs."""
    def g(sign):
        return _grad(f, [_leaf(a + sign * eps * v.numpy(), device) for a, v in zip(arrays, vs)])
    return [(p - m) / (2 * eps) for p, m in zip(g(1), g(-1))]


def _check_all_modes(f, arrays, device="cpu", rtol=1e-5, atol=1e-7, modes=("ror", "for", "rof")):
    xs = [_leaf(a, device) for a in arrays]
    vs = [T.asarray(RNG.standard_normal(np.shape(a)), device=device) for a in arrays]
    want = _hvp_fd(f, arrays, vs, device)
    fns = {"ror": _hvp_ror, "for": _hvp_for, "rof": _hvp_rof}
    for m in modes:
        got = fns[m](f, xs, vs)
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{m}, input {k}")


def _spd(n=3):
    a = RNG.standard_normal((n, n))
    return a @ a.T + np.diag(np.arange(1.0, n + 1) * 2)


# ---------------------------------------------------------------- linalg.eig (rules_la)

def test_eig_double_backward():
    # caught: the eig vjp called solve_op without `left`; recorded under create_graph, the solve's
    # vjp unpacked (A, B, left) from 2 args: ValueError at the second backward
    a = _spd()
    _check_all_modes(lambda x: (T.real(T.linalg.eigvals(x)) ** 3).sum(), [a])
    _check_all_modes(lambda x: (T.real(T.linalg.eig(x)[1]) ** 2 * T.arange(3.0)).sum(), [a])


def test_eig_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    a = _spd()
    v = RNG.standard_normal((3, 3))
    x = _leaf(a)
    (g,) = autograd.grad((T.real(T.linalg.eigvals(x)) ** 3).sum(), x, create_graph=True)
    (h,) = autograd.grad((g * T.asarray(v)).sum(), x)
    tx = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.linalg.eigvals(tx).real ** 3).sum(), tx, create_graph=True)
    (th,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tx)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-8, atol=1e-10)


def test_solve_recorded_without_left():
    # the solve rules read `left` with solve_op's default when it was not passed
    from tensor.linalg import _core as C
    a, b = _spd(), RNG.standard_normal((3, 2))
    _check_all_modes(lambda x, y: (C.solve_op(x, y) ** 2).sum(), [a, b])


# ---------------------------------------------------------------- pow_ (rules_elementwise)

def test_pow_inplace_then_write():
    # caught: power_ saved x after its write ("out"), so a later in-place write into x raised
    # "a tensor saved by 'power_' ... was modified" at backward (PyTorch's pow_ keeps self's old
    # value only)
    a0 = np.array([0.5, 1.5, -0.7])
    a = _leaf(a0)
    c = a * 1.0
    c.sin_()
    c.pow_(2.0)
    c.add_(a)
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.sin(a0) * np.cos(a0) + 1, rtol=1e-13)


def test_pow_inplace_tensor_exponent_all_modes():
    a0, b0 = np.array([0.5, 1.5, 0.7]), np.array([2.0, -1.3, 0.4])

    def f(x, y):
        c = x * 1.0
        c.pow_(y)
        c.mul_(2.0)   # a write after pow_: fine, pow_ saved no result
        return (c * x).sum()
    _check_all_modes(f, [a0, b0])
    x, y = _leaf(a0), _leaf(b0)
    f(x, y).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (b0 + 1) * a0 ** b0, rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), 2 * a0 ** (b0 + 1) * np.log(a0), rtol=1e-12)


# ---------------------------------------------------------------- a sweep, all three modes

_SWEEP = {
    "tanh*x": (lambda x: (T.tanh(x) * x).sum(), [(3, 4)]),
    "softmax": (lambda x: (T.softmax(x, 1) * T.arange(4.0)).sum(), [(3, 4)]),
    "logsumexp": (lambda x: (T.logsumexp(x * x, axis=1) ** 2).sum(), [(3, 4)]),
    "std": (lambda x: (T.std(x, axis=1, ddof=1) * x[:, 0]).sum(), [(3, 4)]),
    "cumprod": (lambda x: T.cumprod(x, axis=1).sum(), [(3, 4)]),
    "matmul": (lambda x, y: ((x @ y) ** 2).sum(), [(3, 4), (4, 2)]),
    "pow t": (lambda x, y: (T.abs(x) + 1) ** y, [(5,), (5,)]),
    "det": (lambda x: T.linalg.det(x + 3 * T.eye(3, dtype=T.float64)), [(3, 3)]),
    "eigvalsh": (lambda x: (T.linalg.eigvalsh(x + x.T) ** 3).sum(), [(3, 3)]),
    "svdvals": (lambda x: (T.linalg.svdvals(x) ** 3).sum(), [(3, 2)]),
    "gather": (lambda x: (T.take_along_axis(x, T.asarray([[0, 2], [1, 1], [3, 0]]), axis=1) ** 3).sum(),
               [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(_SWEEP))
def test_hvp_three_modes_match_finite_differences(name):
    f, shapes = _SWEEP[name]

    def scalar(*xs):
        y = f(*xs)
        return y if y.ndim == 0 else y.sum()
    _check_all_modes(scalar, [RNG.standard_normal(s) for s in shapes])


def _written(op, view):
    """x * 1.0 written in place by op (whole, or through the view [1:]), times x."""
    def f(x):
        c = x * 1.0
        getattr(c[1:] if view else c, op)()
        return (c * x).sum()
    return f


@pytest.mark.parametrize("view", [False, True], ids=["whole", "view"])
@pytest.mark.parametrize("op", ["exp_", "sqrt_", "tanh_", "sigmoid_", "reciprocal_", "sin_"])
def test_hvp_through_inplace_ops(op, view):
    # caught: reverse mode over forward mode built exp_'s tangent (out * t) on x's history before
    # the write (x.exp_(): [3.00, 0.29] for [3.10, 0.65]); through a view, on the view's stale
    # history ([1, 1] for exp(x))
    _check_all_modes(_written(op, view), [np.abs(RNG.standard_normal((2, 3))) + 0.2])


@pytest.mark.parametrize("name", ["cosine_similarity", "gaussian_nll_loss"])
def test_hvp_through_clamped_norms(name):
    # caught: their eps clamp (an in-place write under no_grad) cut the tangent's graph: reverse
    # mode over forward mode was off by up to 0.4
    def f(a, b):
        if name == "cosine_similarity":
            return F.cosine_similarity(a, b).sum()
        return F.gaussian_nll_loss(a, b, b * b + 0.1)
    _check_all_modes(f, [RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))])
    # the clamp itself: value max(t, eps), gradient passed through
    x = _leaf([1e-12, 0.5, 2.0])
    y = F.cosine_similarity(x[None], x[None] * 0 + 1.0, dim=1)
    assert np.isfinite(y.numpy()).all()


@pytest.mark.usefixtures("device")
def test_hvp_on_device(device):
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    _check_all_modes(lambda x, y: (T.sin(x) * y * T.exp(x).sum()).sum(), [a, b], device=device)
    _check_all_modes(lambda x: (T.real(T.linalg.eigvals(x)) ** 2).sum(), [_spd()], device=device,
                     modes=("ror",))


def test_functional_third_order_through_hessian():
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TAF

    from autograd import functional as AF
    a0 = RNG.standard_normal(3)
    x, tx = _leaf(a0), torch.tensor(a0, requires_grad=True)
    for s in ("reverse-mode", "forward-mode"):
        h = AF.hessian(lambda z: (T.sin(z) * z.prod()).sum(), x, create_graph=True, strategy=s)
        th = TAF.hessian(lambda z: (torch.sin(z) * z.prod()).sum(), tx, create_graph=True)
        (g,) = autograd.grad((h * h).sum(), x)
        (tg,) = torch.autograd.grad((th * th).sum(), tx)
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- gradcheck / gradgradcheck

def test_gradcheck_forward_ad():
    x = _leaf([0.3, -1.2, 2.0])
    assert gradcheck(lambda t: T.sin(t) * t, (x,), check_forward_ad=True)
    z = T.asarray(np.array([0.3 + 1j, -1.2 - 0.5j])).requires_grad_()
    assert gradcheck(lambda t: T.exp(t) * t, (z,), check_forward_ad=True)


def test_gradcheck_forward_ad_catches_a_wrong_jvp(monkeypatch):
    sin = RULES["sin"]
    monkeypatch.setitem(RULES, "sin", Rule("sin", sin.vjp, lambda ctx, tans: tans[0] * 2.0,
                                           sin.save, sin.conj))
    x = _leaf([0.3, -1.2])
    assert gradcheck(lambda t: T.sin(t), (x,))           # backward is still right
    assert not gradcheck(lambda t: T.sin(t), (x,), check_forward_ad=True, raise_exception=False)
    with pytest.raises(GradcheckError, match="forward-mode"):
        gradcheck(lambda t: T.sin(t), (x,), check_forward_ad=True)


def test_gradgradcheck_pytorch_semantics():
    a = _leaf(_spd())
    assert gradgradcheck(T.linalg.det, (a,), check_fwd_over_rev=True)
    assert gradgradcheck(lambda x: T.real(T.linalg.eigvals(x)), (a,), check_fwd_over_rev=True)
    # explicit grad_outputs (the third positional argument, as PyTorch's), several outputs
    gos = (T.ones((3, 3), dtype=T.float64), T.asarray(2.0))
    assert gradgradcheck(lambda x: (x * x, (x ** 3).sum()), (a,), gos, check_fwd_over_rev=True)
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] has shape \(3,\)"):
        gradgradcheck(lambda x: x * x, (a,), T.ones(3, dtype=T.float64))
    with pytest.raises(ValueError, match="2 differentiable outputs but 1"):
        gradgradcheck(lambda x: (x * x, x.sum()), (a,), [T.ones((3, 3), dtype=T.float64)])


def test_gradgradcheck_catches_a_wrong_second_derivative(monkeypatch):
    # a backward written with a detached intermediate: first derivative right, second wrong
    tanh = RULES["tanh"]

    def vjp(ctx, g):
        return (g * (1.0 - ctx.out.detach() ** 2),)
    monkeypatch.setitem(RULES, "tanh", Rule("tanh", vjp, tanh.jvp, tanh.save, tanh.conj))
    x = _leaf([0.3, -1.2])
    assert gradcheck(T.tanh, (x,))
    assert not gradgradcheck(T.tanh, (x,), raise_exception=False)


# ---------------------------------------------------------------- not fixed here (other files)

def _nth(x, f, n):
    y = f(x).sum()
    for _ in range(n):
        (y,) = autograd.grad(y, x, create_graph=True)
        y = y.sum()
    return float(y)


def test_third_derivative_through_saved_output():
    # caught: the saved-output alias was unlinked after each rule, so tanh's 1 - y * y saw a
    # constant y one order later: the third derivative was 0.927 for 0.1216
    t = np.tanh(0.7)
    assert _nth(_leaf([0.7]), T.tanh, 3) == pytest.approx(-2 * (1 - t * t) * (1 - 3 * t * t), rel=1e-10)
    s = 1 - t * t
    assert _nth(_leaf([0.7]), T.tanh, 4) == pytest.approx(4 * t * s - 12 * t ** 3 * s + 12 * t * s * s,
                                                          rel=1e-10)


def _stack3(z):
    return T.stack([z[0], z[1], z[0] * z[1]])


# ops whose backward reads their saved output (and composites of them), up to the 4th order
_SAVED_OUT = {
    "tanh": lambda z: T.tanh(z),
    "sigmoid": lambda z: T.sigmoid(z),
    "tan": lambda z: T.tan(z),
    "sqrt": lambda z: T.sqrt(z + 2),
    "reciprocal": lambda z: T.reciprocal(z + 2),
    "exp*exp": lambda z: T.exp(z) * T.exp(z),
    "softmax": lambda z: F.softmax(z * z, dim=0)[0],
    "logsumexp": lambda z: T.logsumexp(z * z, axis=0),
    "layer_norm": lambda z: F.layer_norm(_stack3(z), (3,))[0],
    "cross_entropy": lambda z: F.cross_entropy(_stack3(z)[None], T.asarray([1])),
    "pow tensor": lambda z: (z * z + 1) ** (z + 2),
    "eigvalsh": lambda z: (T.linalg.eigvalsh(T.stack([T.stack([z[0] + 3, z[1]]),
                                                      T.stack([z[1], z[0] * z[1]])])) ** 2)[0],
}


def _orders(f, x, n):
    """[d^k/dx^k sum(f)] for k = 1..n, each differentiated after a sum."""
    y, out = f(x).sum(), []
    for _ in range(n):
        (y,) = autograd.grad(y, x, create_graph=True)
        out.append(y)
        y = y.sum()
    return out


@pytest.mark.parametrize("name", sorted(_SAVED_OUT))
def test_fourth_order_matches_differences_of_the_third(name):
    # each order against central differences of the one below (the first and second are
    # checked elsewhere); PyTorch is no reference here: its layer_norm's third derivative is
    # wrong (4.485 where the differences of its own second derivative give 4.314)
    f = _SAVED_OUT[name]
    a0 = np.array([0.7, -0.3])
    got = [g.numpy() for g in _orders(f, _leaf(a0), 4)]
    eps = 1e-5
    for k in (2, 3):   # order k + 1 from order k
        num = []
        for i in range(2):
            e = np.zeros(2)
            e[i] = eps
            hi = _orders(f, _leaf(a0 + e), k)[-1].numpy().sum()
            lo = _orders(f, _leaf(a0 - e), k)[-1].numpy().sum()
            num.append((hi - lo) / (2 * eps))
        np.testing.assert_allclose(got[k], num, rtol=1e-6, atol=1e-6, err_msg=f"order {k + 1}")


def test_sinc_derivatives_at_zero():
    # caught: sinc was where(x == 0, 1, ...): every derivative at 0 was 0 (sinc''(0) = -pi^2/3)
    assert _nth(_leaf([0.0]), T.sinc, 1) == 0
    assert _nth(_leaf([0.0]), T.sinc, 2) == pytest.approx(-np.pi ** 2 / 3, rel=1e-12)
    assert _nth(_leaf([0.0]), T.sinc, 4) == pytest.approx(np.pi ** 4 / 5, rel=1e-10)
    x = np.concatenate([np.linspace(-1, 1, 2001), [1e-300, 0.5 / np.pi, 1e300]])
    np.testing.assert_allclose(T.sinc(T.asarray(x)).numpy(), np.sinc(x), rtol=2e-16, atol=1e-300)
    # second derivatives by the series match those of sin(pi x) / (pi x) away from 0
    a = np.array([0.05, 0.15, 0.16, 0.3])
    xs = _leaf(a)
    (g,) = autograd.grad(T.sinc(xs).sum(), xs, create_graph=True)
    (h,) = autograd.grad(g.sum(), xs)
    z = np.pi * a
    d2 = np.pi ** 2 * ((2 / z ** 3 - 1 / z) * np.sin(z) - 2 * np.cos(z) / z ** 2)
    np.testing.assert_allclose(h.numpy(), d2, rtol=1e-9)
    # the branch not taken gives no NaN gradient (1e300 and 0 in one tensor)
    xs = _leaf([0.0, 1e300])
    (g,) = autograd.grad(T.sinc(xs).sum(), xs)
    assert np.isfinite(g.numpy()).all()


# ---------------------------------------------------------------- functional: PyTorch's keywords

def test_functional_pytorch_keywords():
    # caught: strict / vectorize / outer_jacobian_strategy raised TypeError, hvp/vhp required v
    # (PyTorch allows None for one one-element input), autograd.functional had no vjp
    from autograd import functional as AF
    x = T.asarray([1.0, 2.0])
    cube = lambda z: (z ** 3).sum()  # noqa: E731
    want = np.diag(6 * x.numpy())
    np.testing.assert_allclose(AF.hessian(cube, x, vectorize=True).numpy(), want)
    np.testing.assert_allclose(AF.hessian(cube, x, outer_jacobian_strategy="forward-mode").numpy(), want)
    np.testing.assert_allclose(AF.jacobian(lambda z: z * z, x, vectorize=True, strict=True).numpy(),
                               np.diag(2 * x.numpy()))
    y, hv = AF.hvp(cube, T.asarray([2.0]))
    assert float(y) == 8.0 and hv.tolist() == [12.0]
    assert AF.vhp(cube, T.asarray([2.0]))[1].tolist() == [12.0]
    with pytest.raises(ValueError, match="v can be omitted only for a single one-element input"):
        AF.hvp(cube, x)
    out, g = AF.vjp(lambda z: z * z, x, T.ones(2, dtype=T.float64))
    assert isinstance(g, T.Tensor) and g.tolist() == [2.0, 4.0] and out.tolist() == [1.0, 4.0]
    _, gs = AF.vjp(lambda z, w: z * w, (x, x), T.ones(2, dtype=T.float64))
    assert isinstance(gs, tuple) and [t.tolist() for t in gs] == [[1.0, 2.0], [1.0, 2.0]]


def test_functional_strict():
    from autograd import functional as AF
    x = T.asarray([1.0, 2.0])
    with pytest.raises(RuntimeError, match="jacobian: output 0 of f is independent of input 1"):
        AF.jacobian(lambda z, w: z * 2, (x, x), strict=True)
    assert AF.jacobian(lambda z, w: z * 2, (x, x))[1].numpy().tolist() == [[0, 0], [0, 0]]
    with pytest.raises(ValueError, match="strict=True is not supported with strategy='forward-mode'"):
        AF.jacobian(lambda z: z, x, strict=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="hvp: the gradient of f for input 0 is independent of input 1"):
        AF.hvp(lambda z, w: (z * z).sum() + w.sum(), (x, x), (x, x), strict=True)
    with pytest.raises(RuntimeError, match="hessian: the gradient of f for input 0 is independent"):
        AF.hessian(lambda z: z.sum() * 2, x, strict=True)
    with pytest.raises(RuntimeError, match="vjp: output 0 of f is independent of input 1"):
        AF.vjp(lambda z, w: z * 2, (x, x), x, strict=True)
    h = AF.hessian(lambda z, w: (z * z * w * w).sum(), (x, x), strict=True)
    np.testing.assert_allclose(h[0][1].numpy(), np.diag(4 * x.numpy() ** 2))  # d2(z^2 w^2)/dz dw = 4 z w
