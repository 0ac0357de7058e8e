"""The APIs on top of the autograd engine: forward mode (jvp), vjp, jacobian / hessian / hvp,
and activation checkpointing (checkpoint, checkpoint_sequential).

Derivatives are checked against float64 central differences and analytic forms, forward mode
against reverse mode (J t against the rows v^T J), and checkpointing against the same program
run without it: gradients must be bitwise identical.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import autograd
import tensor as T
from autograd.checkpoint import checkpoint, checkpoint_sequential
from autograd.forward import jvp, vjp
from autograd.functional import hessian, hvp, jacobian
from autograd.grad_mode import state

EPS = 1e-6


def arr(rng, *shape, lo=-1.5, hi=1.5):
    return rng.uniform(lo, hi, size=shape)


def t(a, rg=False):
    x = T.asarray(np.asarray(a, dtype=np.float64))
    return x.requires_grad_() if rg else x


def npv(x):
    return x.detach().numpy().copy()


def fd_jvp(f, primals, tangents, eps=EPS):
    """Central difference of f along the tangents: (f(x + eps t) - f(x - eps t)) / 2 eps."""
    plus = f(*[t(p + eps * v) for p, v in zip(primals, tangents)])
    minus = f(*[t(p - eps * v) for p, v in zip(primals, tangents)])
    if isinstance(plus, T.Tensor):
        return (npv(plus) - npv(minus)) / (2 * eps)
    return [(npv(a) - npv(b)) / (2 * eps) for a, b in zip(plus, minus)]


def fd_jacobian(f, x, eps=EPS):
    """d f / d x (flattened output rows, flattened input columns) by central differences."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for k in range(x.size):
        d = np.zeros(x.size)
        d[k] = eps
        d = d.reshape(x.shape)
        cols.append((npv(f(t(x + d))).reshape(-1) - npv(f(t(x - d))).reshape(-1)) / (2 * eps))
    return np.stack(cols, axis=1)


# Elementwise chains (sin, exp, mul, div, tanh, where), with broadcasting between operands.
CHAINS = [
    ("sin_exp", lambda x: T.sin(x) * T.exp(x), [(3, 4)]),
    ("tanh_div", lambda x, y: T.tanh(x * y) / (1.5 + y * y), [(3, 4), (3, 4)]),
    ("broadcast", lambda x, y: T.exp(-(x * x)) * T.sin(y) + x / (2.0 + T.tanh(y)), [(3, 1), (4,)]),
    ("where", lambda x, y: T.where(x > y, T.sin(x) * y, T.exp(y) / (1.0 + x * x)),
     [(2, 5), (2, 5)]),
    ("nested", lambda x: T.exp(T.tanh(x)) / (2.0 + T.sin(x)), [(6,)]),
]


# ---------------------------------------------------------------- jvp


@pytest.mark.parametrize("name,f,shapes", CHAINS, ids=[c[0] for c in CHAINS])
def test_jvp_matches_finite_differences(name, f, shapes):
    rng = np.random.default_rng(1)
    ps = [arr(rng, *s) for s in shapes]
    ts = [arr(rng, *s) for s in shapes]
    out, tan = jvp(f, tuple(t(p) for p in ps), tuple(t(v) for v in ts))
    np.testing.assert_allclose(npv(out), npv(f(*[t(p) for p in ps])), rtol=0, atol=0)
    np.testing.assert_allclose(npv(tan), fd_jvp(f, ps, ts), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,f,shapes", CHAINS, ids=[c[0] for c in CHAINS])
def test_jvp_matches_vjp_rows(name, f, shapes):
    """J t computed forward equals sum_i <(v^T J)_i, t_i> over one-hot cotangents v."""
    rng = np.random.default_rng(2)
    ps = tuple(t(arr(rng, *s)) for s in shapes)
    ts = tuple(t(arr(rng, *s)) for s in shapes)
    out, tan = jvp(f, ps, ts)
    rows = []
    for k in range(out.numel()):
        e = np.zeros(out.numel())
        e[k] = 1.0
        _, gs = vjp(f, ps, t(e.reshape(out.shape)))
        rows.append(sum(float((npv(g) * npv(v)).sum()) for g, v in zip(gs, ts)))
    np.testing.assert_allclose(npv(tan).reshape(-1), rows, rtol=1e-12, atol=1e-12)


def test_jvp_non_contiguous_primals_and_tangents():
    rng = np.random.default_rng(8)
    a, v = arr(rng, 5, 4), arr(rng, 4, 5)
    x = t(a).T                               # (4, 5) transposed view
    tv = t(v[:, ::-1].copy())[:, ::-1]       # negative-step view holding v
    assert not x.is_contiguous() and not tv.is_contiguous()
    f = lambda z: T.tanh(z) * T.exp(z * 0.5)  # noqa: E731
    _, tan = jvp(f, x, tv)
    np.testing.assert_allclose(npv(tan), fd_jvp(f, [a.T], [v]), rtol=1e-6, atol=1e-8)


def test_jvp_matmul_sum_and_several_outputs():
    rng = np.random.default_rng(3)
    x, w = arr(rng, 4, 3), arr(rng, 3, 2)
    tx, tw = arr(rng, 4, 3), arr(rng, 3, 2)

    def f(x, w):
        h = T.tanh(x @ w)
        return h, (h * h).sum(), x * 2.0

    out, tans = jvp(f, (t(x), t(w)), (t(tx), t(tw)))
    assert isinstance(out, tuple) and isinstance(tans, tuple) and len(tans) == 3
    for got, want in zip(tans, fd_jvp(f, [x, w], [tx, tw])):
        np.testing.assert_allclose(npv(got), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(npv(tans[2]), 2.0 * tx)  # linear: exact


def test_jvp_list_primals_constant_outputs_and_identity():
    x = t([1.0, 2.0])
    out, tans = jvp(lambda a, b: [a * 3.0, T.ones(2), b], [x, t([5.0])], [t([1.0, -1.0]), t([7.0])])
    assert isinstance(out, list) and isinstance(tans, list)
    assert tans[0].tolist() == [3.0, -3.0]
    assert tans[1].tolist() == [0.0, 0.0]          # no dependence on the primals: zeros
    assert tans[2].tolist() == [7.0]               # an output that is a primal: its tangent


def test_jvp_errors_and_no_leak():
    x = t([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        jvp(T.sin, x, t([1.0, 2.0]))
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(NotImplementedError, match="nested"):
        jvp(lambda a: jvp(T.sin, a, a)[1], x, x)
    assert state.fw_level == 0                      # restored after the error
    with pytest.raises(RuntimeError, match="boom"):
        jvp(lambda a: (_ for _ in ()).throw(RuntimeError("boom")), x, x)
    assert state.fw_level == 0
    out, tan = jvp(lambda a: T.exp(a) * 2.0, x, t([1.0, 1.0, 1.0]))
    assert x._ag is None or x._ag.tangent is None   # the caller's tensor never gets one
    assert out._ag is None or out._ag.tangent is None
    y = T.exp(x) * 2.0                              # later ops see no tangents
    assert y._ag is None or y._ag.tangent is None
    np.testing.assert_array_equal(npv(y), npv(out))


def test_jvp_leaves_no_stale_tangent_on_intermediates():
    kept = []

    def f(a):
        h = T.sin(a)
        kept.append(h)
        return h * 2.0

    jvp(f, t([1.0]), t([1.0]))
    _, tan = jvp(lambda a: a * kept[0], t([2.0]), t([1.0]))   # kept[0] is a constant here
    assert tan.tolist() == [np.sin(1.0)]


def test_jvp_results_differentiable_in_primals():
    """Reverse over forward: the outputs and the tangents stay in the graph of the primals."""
    xv = np.array([0.3, -0.8, 1.1])
    vv = np.array([1.0, 2.0, -0.5])
    x = t(xv, rg=True)
    out, tan = jvp(lambda a: T.sin(a) * a, x, t(vv))
    np.testing.assert_allclose(npv(tan), (np.sin(xv) + xv * np.cos(xv)) * vv, rtol=1e-12)
    (gx,) = autograd.grad(out.sum(), x, retain_graph=True)
    np.testing.assert_allclose(npv(gx), np.sin(xv) + xv * np.cos(xv), rtol=1e-12)
    (ggx,) = autograd.grad(tan.sum(), x)            # d/dx of f'(x) v = f''(x) v
    np.testing.assert_allclose(npv(ggx), (2 * np.cos(xv) - xv * np.sin(xv)) * vv, rtol=1e-12)
    assert x.grad is None


def test_vjp():
    xv = np.array([[0.5, -1.0], [2.0, 0.25]])
    x = t(xv, rg=True)
    out, (g,) = vjp(lambda a: T.exp(a) * a, x, t(np.ones((2, 2)) * 3.0))
    np.testing.assert_allclose(npv(g), 3.0 * np.exp(xv) * (1 + xv), rtol=1e-12)
    assert not out.requires_grad and not g.requires_grad and x.grad is None
    out, gs = vjp(lambda a, b: (a * b).sum(), (t([1.0, 2.0]), t([3.0, 4.0])))
    assert out.item() == 11.0 and [v.tolist() for v in gs] == [[3.0, 4.0], [1.0, 2.0]]
    _, (g,) = vjp(lambda a: T.ones(2), t([1.0, 2.0]), t([1.0, 1.0]))
    assert g.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="shape"):
        vjp(T.sin, t([1.0, 2.0]), t([1.0]))


# ---------------------------------------------------------------- jacobian, hessian, hvp


def test_jacobian_against_finite_differences_both_modes():
    rng = np.random.default_rng(4)
    xv, wv = arr(rng, 2, 3), arr(rng, 3, 4)
    w = t(wv)

    def f(x):
        return T.tanh(x @ w) * T.sin(x).sum()

    num = fd_jacobian(f, xv).reshape(2, 4, 2, 3)
    for strategy in ("reverse-mode", "forward-mode"):
        j = jacobian(f, t(xv), strategy=strategy)
        assert j.shape == (2, 4, 2, 3)
        np.testing.assert_allclose(npv(j), num, rtol=1e-6, atol=1e-8)


def test_jacobian_structures():
    x, y = t([1.0, 2.0]), t([3.0, 4.0, 5.0])
    jx, jy = jacobian(lambda a, b: a.sum() * b, (x, y))      # tuple in, one out
    assert jx.shape == (3, 2) and jy.shape == (3, 3)
    np.testing.assert_array_equal(npv(jx), np.array([[3.0, 3.0], [4.0, 4.0], [5.0, 5.0]]))
    np.testing.assert_array_equal(npv(jy), 3.0 * np.eye(3))
    blocks = jacobian(lambda a, b: (a * a, b.sum() + 0.0 * a.sum(), T.ones(1)), (x, y),
                      strategy="forward-mode")
    assert len(blocks) == 3 and all(len(r) == 2 for r in blocks)
    np.testing.assert_array_equal(npv(blocks[0][0]), np.diag([2.0, 4.0]))
    np.testing.assert_array_equal(npv(blocks[0][1]), np.zeros((2, 3)))
    assert blocks[1][1].shape == (3,) and blocks[1][1].tolist() == [1.0, 1.0, 1.0]
    assert blocks[2][0].tolist() == [[0.0, 0.0]]   # a constant output
    single = jacobian(lambda a: (a * 2.0, a.sum()), x)        # one in, tuple out
    assert isinstance(single, tuple) and single[1].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="strategy"):
        jacobian(T.sin, x, strategy="sideways")


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_create_graph(strategy):
    xv = np.array([0.5, -1.0, 2.0])
    x = t(xv, rg=True)
    j = jacobian(lambda a: a * a * a, x, create_graph=True, strategy=strategy)
    np.testing.assert_array_equal(npv(j), np.diag(3 * xv * xv))
    assert j.requires_grad
    j.sum().backward()                       # d/dx sum(diag(3 x^2)) = 6 x
    np.testing.assert_array_equal(npv(x.grad), 6 * xv)
    j = jacobian(lambda a: a * a, t(xv))     # without create_graph: detached
    assert not j.requires_grad


def test_hessian_analytic():
    xv = np.array([0.3, -1.2, 2.0])
    f = lambda x: (T.sin(x) * x * x).sum()  # noqa: E731
    want = np.diag(2 * np.sin(xv) + 4 * xv * np.cos(xv) - xv * xv * np.sin(xv))
    for strategy in ("reverse-mode", "forward-mode"):
        np.testing.assert_allclose(npv(hessian(f, t(xv), strategy=strategy)), want, rtol=1e-12,
                                   atol=1e-12)
    a = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [0.0, 1.0, 2.0]])
    h = hessian(lambda x: ((x @ t(a)) * x).sum(), t(xv))  # x^T A x
    np.testing.assert_allclose(npv(h), a + a.T, rtol=1e-12)
    xv2, yv = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    (hxx, hxy), (hyx, hyy) = hessian(lambda x, y: (x * x * y).sum(), (t(xv2), t(yv)))
    np.testing.assert_array_equal(npv(hxx), np.diag(2 * yv))
    np.testing.assert_array_equal(npv(hxy), np.diag(2 * xv2))
    np.testing.assert_array_equal(npv(hyx), np.diag(2 * xv2))
    np.testing.assert_array_equal(npv(hyy), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one-element"):
        hessian(lambda x: x * x, t(xv))


def test_hessian_against_finite_differences_of_gradient():
    rng = np.random.default_rng(5)
    xv, wv = arr(rng, 4), arr(rng, 4, 3)
    w = t(wv)

    def f(x):
        return (T.tanh(x @ w) * T.exp(x.sum() * 0.1)).sum()

    def g(x):
        x = x.detach().requires_grad_()
        return autograd.grad(f(x), x)[0]

    np.testing.assert_allclose(npv(hessian(f, t(xv))), fd_jacobian(g, xv), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("strategy", ["reverse-over-reverse", "forward-over-reverse"])
def test_hvp_matches_hessian(strategy):
    rng = np.random.default_rng(6)
    xv, vv = arr(rng, 5), arr(rng, 5)
    f = lambda x: (T.sin(x) * T.cos(x * x) * x).sum() + (x * x * x).sum()  # noqa: E731
    y, hv = hvp(f, t(xv), t(vv), strategy=strategy)
    assert y.item() == f(t(xv)).item()
    np.testing.assert_allclose(npv(hv), npv(hessian(f, t(xv))) @ vv, rtol=1e-10, atol=1e-12)
    y, (h1, h2) = hvp(lambda a, b: (a * a * b).sum(), (t([1.0, 2.0]), t([3.0, 4.0])),
                      (t([1.0, 0.0]), t([0.0, 1.0])), strategy=strategy)
    assert h1.tolist() == [6.0, 4.0] and h2.tolist() == [2.0, 0.0]
    _, hv = hvp(lambda a: a.sum() * 2.0, t([1.0, 2.0]), t([1.0, 1.0]), strategy=strategy)
    assert hv.tolist() == [0.0, 0.0]   # linear: zero Hessian


@pytest.mark.parametrize("name,f,shapes", CHAINS, ids=[c[0] for c in CHAINS])
def test_hvp_forward_over_reverse_matches_double_backward(name, f, shapes):
    """Pushing tangents through the backward pass (rules that save their output, as exp, tanh
    and div, included) equals differentiating the gradient again."""
    rng = np.random.default_rng(7)
    xs = tuple(t(arr(rng, *s)) for s in shapes)
    vs = tuple(t(arr(rng, *s)) for s in shapes)
    g = lambda *a: f(*a).sum()  # noqa: E731
    _, rr = hvp(g, xs, vs)
    _, fr = hvp(g, xs, vs, strategy="forward-over-reverse")
    for a, b in zip(rr, fr):
        np.testing.assert_allclose(npv(b), npv(a), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- checkpoint


def same(a, b):
    """Bitwise equality of two tensors (or None)."""
    if a is None or b is None:
        assert a is None and b is None
        return
    assert a.shape == b.shape and a.dtype is b.dtype
    np.testing.assert_array_equal(npv(a), npv(b))


def params(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [t(arr(rng, *s), rg=True) for s in shapes]


def layer(w, b):
    return lambda x: T.tanh(x @ w + b)


def test_checkpoint_gradients_bitwise_with_closure_parameters():
    def run(ck):
        x, w1, b1, w2 = params(10, (4, 3), (3, 5), (5,), (5, 2))

        def block(x):
            return T.sin(layer(w1, b1)(x) @ w2) * T.exp(x.sum() * 0.1)

        y = checkpoint(block, x) if ck else block(x)
        assert y.requires_grad
        (y * y).sum().backward()
        return [x.grad, w1.grad, b1.grad, w2.grad]

    for a, b in zip(run(False), run(True)):
        same(a, b)


def test_checkpoint_several_outputs_and_non_tensor_args():
    def run(ck):
        x, y, w = params(11, (3, 4), (3, 4), (4,))

        def fn(x, scale, y, mode="sum", extra=None):
            a = T.tanh(x * w) * scale
            b = T.exp(y / (1.0 + x * x)) if mode == "sum" else y
            return a, [b, "tag", extra], 7

        out = checkpoint(fn, x, 2.5, y, mode="sum", extra=None) if ck else \
            fn(x, 2.5, y, mode="sum", extra=None)
        a, (b, tag, _), n = out
        assert tag == "tag" and n == 7
        (a.sum() + (a * b).sum()).backward()
        return [x.grad, y.grad, w.grad]

    for a, b in zip(run(False), run(True)):
        same(a, b)


def test_checkpoint_inputs_without_grad():
    def run(ck):
        (w,) = params(12, (4,))
        x = t(np.linspace(-1, 1, 12).reshape(3, 4))        # requires no grad
        fn = lambda x, k: T.sin(x * w) * k  # noqa: E731
        y = checkpoint(fn, x, x * 2.0) if ck else fn(x, x * 2.0)
        y.sum().backward()
        assert x.grad is None
        return w.grad

    same(run(False), run(True))
    x = t([1.0, 2.0])                                        # nothing requires grad: plain call
    y = checkpoint(lambda a: T.exp(a), x)
    assert not y.requires_grad and y.grad_fn is None
    with autograd.no_grad():
        w = t([1.0], rg=True)
        assert not checkpoint(lambda a: a * w, x).requires_grad


def test_checkpoint_nested():
    def run(ck):
        x, w1, w2 = params(13, (3, 3), (3, 3), (3, 3))
        inner = lambda h: T.tanh(h @ w1) * T.sin(h)  # noqa: E731

        def outer(x):
            h = checkpoint(inner, x * 2.0) if ck else inner(x * 2.0)
            h2 = checkpoint(inner, h) if ck else inner(h)
            return T.exp(h2 @ w2 * 0.1)

        y = checkpoint(outer, x) if ck else outer(x)
        y.sum().backward()
        return [x.grad, w1.grad, w2.grad]

    for a, b in zip(run(False), run(True)):
        same(a, b)


def test_checkpoint_autograd_grad_leaves_dot_grad_alone():
    def run(ck):
        x, w = params(14, (2, 3), (3, 3))
        fn = lambda x: T.tanh(x @ w) * x  # noqa: E731
        y = checkpoint(fn, x) if ck else fn(x)
        gx, gw = autograd.grad((y * y).sum(), (x, w))
        assert x.grad is None and w.grad is None
        return [gx, gw]

    for a, b in zip(run(False), run(True)):
        same(a, b)
    (w,) = params(15, (3,))                                  # only a closure parameter
    y = checkpoint(lambda a: T.sin(a) * w, t([1.0, 2.0, 3.0]))
    (gw,) = autograd.grad(y.sum(), w)
    np.testing.assert_array_equal(npv(gw), np.sin([1.0, 2.0, 3.0]))


def test_checkpoint_dropout_mask_recomputed():
    def run(ck):
        x, w = params(16, (8, 6), (6, 6))

        def fn(x):
            h = x @ w
            mask = T.rand(h.shape) > 0.5
            return T.tanh(h * mask * 2.0), T.rand(h.shape) * x

        T.random.seed(1234)
        y, z = checkpoint(fn, x) if ck else fn(x)
        after_forward = T.random.get_rng_state()
        (y * y + y * z).sum().backward()
        assert T.random.get_rng_state() == after_forward   # the recomputation put it back
        return [y, z, x.grad, w.grad]

    plain, ck = run(False), run(True)
    for a, b in zip(plain, ck):
        same(a, b)
    assert 0.2 < float((npv(plain[0]) == 0).mean()) < 0.8    # the mask did drop something


def test_checkpoint_without_preserving_rng_draws_again():
    (x,) = params(17, (64,))
    T.random.seed(5)
    y = checkpoint(lambda a: a * (T.rand(64) > 0.5), x, preserve_rng_state=False)
    mask = npv(y) != 0
    y.sum().backward()
    assert not np.array_equal(npv(x.grad) != 0, mask)        # another mask was drawn


def test_checkpoint_sequential_bitwise():
    def run(ck, segments):
        ps = params(18, *[(4, 4)] * 7, (4,))
        x = ps.pop(0)
        b = ps.pop()
        fns = [layer(w, b) for w in ps] + [lambda h: h * T.sin(h)]
        y = checkpoint_sequential(fns, segments, x) if ck else \
            checkpoint_sequential(fns, 1, x)                 # one segment: no checkpoint
        y.sum().backward()
        return [y, x.grad, b.grad] + [w.grad for w in ps]

    plain = run(False, 1)
    for segments in (2, 3, 7, 50):
        for a, b in zip(plain, run(True, segments)):
            same(a, b)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential([T.sin], 0, t([1.0]))


def test_checkpoint_recompute_mismatch_is_an_error():
    calls = []

    def fn(x):
        calls.append(1)
        return x * 2.0 if len(calls) == 1 else (x * 2.0).sum()

    (x,) = params(19, (3,))
    y = checkpoint(fn, x)
    with pytest.raises(RuntimeError, match=r"shape \(3,\).*forward.*shape \(\)|shape \(\).*shape \(3,\)"):
        y.sum().backward()

    calls.clear()

    def fn2(x):   # same output, another graph
        calls.append(1)
        return x * 2.0 if len(calls) == 1 else x + x

    (x,) = params(19, (3,))
    with pytest.raises(RuntimeError, match="another graph"):
        checkpoint(fn2, x).sum().backward()


def test_checkpoint_input_modified_in_place_is_an_error():
    (w,) = params(20, (3,))
    x = t([1.0, 2.0, 3.0])
    y = checkpoint(lambda a: T.sin(a * w), x)
    x[0] = 5.0
    with pytest.raises(RuntimeError, match="modified in place"):
        y.sum().backward()


def test_checkpoint_retain_graph_and_second_backward():
    (x,) = params(21, (4,))
    y = checkpoint(lambda a: T.exp(T.sin(a)), x).sum()
    y.backward(retain_graph=True)
    g1 = npv(x.grad)
    y.backward()
    np.testing.assert_array_equal(npv(x.grad), 2 * g1)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_checkpoint_double_backward():
    def run(ck):
        x, w = params(22, (3,), (3,))
        fn = lambda a: T.exp(T.sin(a) * w) / (1.0 + a * a)  # noqa: E731
        y = (checkpoint(fn, x) if ck else fn(x)).sum()
        (gx,) = autograd.grad(y, x, create_graph=True)
        (gx * gx).sum().backward()
        return [gx, x.grad, w.grad]

    for a, b in zip(run(False), run(True)):
        same(a, b)


def test_checkpoint_forward_mode_passes_through():
    xv, vv = np.array([0.1, 0.7]), np.array([1.0, -2.0])
    f = lambda a: T.tanh(a) * T.exp(a)  # noqa: E731
    _, t1 = jvp(f, t(xv), t(vv))
    _, t2 = jvp(lambda a: checkpoint(f, a), t(xv), t(vv))
    same(t1, t2)


def test_checkpoint_forward_over_reverse_and_list_arguments():
    """hvp by forward over reverse through a checkpoint (the recomputation carries tangents), and
    an op taking a list of tensors (stack) inside the checkpointed function."""
    (w,) = params(24, (3,))
    f = lambda a: (T.stack([T.exp(a) * w, T.tanh(a)]) * T.sin(a)).sum()  # noqa: E731
    x, v = t([0.2, -0.4, 0.9]), t([1.0, 0.5, -2.0])
    for strategy in ("reverse-over-reverse", "forward-over-reverse"):
        y1, h1 = hvp(f, x, v, strategy=strategy)
        y2, h2 = hvp(lambda a: checkpoint(f, a), x, v, strategy=strategy)
        same(y1, y2)
        same(h1, h2)
    assert w.grad is None


def test_checkpoint_frees_activations():
    """What the graph keeps after the forward: every intermediate without checkpoint, only the
    arguments and the output with it."""
    n, depth = 1 << 16, 12

    def fn(x):
        for _ in range(depth):
            x = T.sin(x) * 1.5
        return x

    def held(ck):
        gc.collect()
        (x,) = params(23, (n,))
        base = T.memory_allocated()
        y = checkpoint(fn, x) if ck else fn(x)
        kept = T.memory_allocated() - base
        y.sum().backward()
        del y
        left = T.memory_allocated() - base  # no gc.collect(): freed by reference counting
        return kept, left, x.grad

    plain, _, g_plain = held(False)
    kept, left, g_ck = held(True)
    assert plain >= depth * n * 8            # sin saves its input at every step
    assert kept <= 2 * n * 8                 # the output (and its scalar factors) only
    assert left <= n * 8 + 4096              # x.grad: the recomputed tensors are gone
    same(g_plain, g_ck)


def test_docstring_examples():
    import doctest
    import importlib

    # (autograd.checkpoint is the function; the module is reached through importlib)
    mods = [importlib.import_module(f"autograd.{m}") for m in ("forward", "functional", "checkpoint")]
    for mod in mods:
        r = doctest.testmod(mod)
        assert r.failed == 0 and r.attempted > 0, mod.__name__
