"""autograd.func (torch.func's transforms) against closed forms and torch.func where installed."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from autograd.func import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap


def _a(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def f3(x):
    return (T.sin(x) * x ** 2).sum()


def df3(a):
    return np.cos(a) * a ** 2 + 2 * a * np.sin(a)


def test_grad_grad_and_argnums(device):
    a, b = _a(5), _a(5, 1)
    x, y = T.asarray(a, device=device), T.asarray(b, device=device)
    np.testing.assert_allclose(grad(f3)(x).numpy(), df3(a), rtol=1e-12)
    g, v = grad_and_value(f3)(x)
    np.testing.assert_allclose(v.item(), (np.sin(a) * a * a).sum(), rtol=1e-12)
    gx, gy = grad(lambda x, y: (x * y * y).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.numpy(), b * b, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), 2 * a * b, rtol=1e-12)
    # second derivative of a scalar function, and a tree argument
    np.testing.assert_allclose(grad(grad(lambda s: s ** 4))(T.asarray(1.5)).item(), 12 * 1.5 ** 2)
    gd = grad(lambda d: (d["u"] * d["v"]).sum())({"u": x, "v": y})
    np.testing.assert_allclose(gd["u"].numpy(), b) and np.testing.assert_allclose(gd["v"].numpy(), a)
    g, aux = grad(lambda x: ((x * x).sum(), x.shape), has_aux=True)(x)
    assert aux == (5,) and not g.requires_grad and not x.requires_grad
    with pytest.raises(ValueError, match="grad_and_value: f must return a one-element tensor"):
        grad(lambda x: x * 2)(x)
    with pytest.raises(ValueError, match="argnums 2 out of range"):
        grad(f3, argnums=2)(x)


def test_grad_result_differentiable_when_argument_requires_grad():
    a = _a(4)
    x = T.asarray(a).requires_grad_()
    g = grad(lambda x: (x ** 3).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * a, rtol=1e-12)


def test_vjp_jvp_jacobians_hessian(device):
    a = _a((3,), 2)
    x = T.asarray(a, device=device)
    f = lambda x: T.stack([x[0] * x[1], T.exp(x[2]), x.sum()])   # noqa: E731
    J = np.array([[a[1], a[0], 0], [0, 0, np.exp(a[2])], [1, 1, 1]])
    np.testing.assert_allclose(jacrev(f)(x).numpy(), J, rtol=1e-12)
    np.testing.assert_allclose(jacfwd(f)(x).numpy(), J, rtol=1e-12)
    out, fn = vjp(f, x)
    c = _a(3, 3)
    (g,) = fn(T.asarray(c, device=device))
    np.testing.assert_allclose(g.numpy(), c @ J, rtol=1e-12)
    (g2,) = fn(T.asarray(2 * c, device=device))    # callable again
    np.testing.assert_allclose(g2.numpy(), 2 * c @ J, rtol=1e-12)
    t = _a(3, 4)
    o, jt = jvp(f, (x,), (T.asarray(t, device=device),))
    np.testing.assert_allclose(jt.numpy(), J @ t, rtol=1e-12)
    H = hessian(lambda x: (x[0] ** 2 * x[1] + T.sin(x[2])))(x)
    want = np.array([[2 * a[1], 2 * a[0], 0], [2 * a[0], 0, 0], [0, 0, -np.sin(a[2])]])
    np.testing.assert_allclose(H.numpy(), want, rtol=1e-12, atol=1e-15)


def test_vmap_dims_trees_and_nesting(device):
    a, b = _a((4, 3)), _a((3, 4), 1)
    x, y = T.asarray(a, device=device), T.asarray(b, device=device)
    np.testing.assert_allclose(vmap(T.dot, in_dims=(0, 1))(x, y).numpy(),
                               np.einsum("ij,ji->i", a, b), rtol=1e-12)
    np.testing.assert_allclose(vmap(lambda r, s: r * s, in_dims=(0, None))(x, y[:, 0]).numpy(),
                               a * b[:, 0], rtol=1e-12)
    out = vmap(lambda r: {"s": r.sum(), "d": (r * 2, r.max())}, out_dims={"s": 0, "d": (1, 0)})(x)
    np.testing.assert_allclose(out["s"].numpy(), a.sum(1), rtol=1e-12)
    np.testing.assert_allclose(out["d"][0].numpy(), 2 * a.T, rtol=1e-12)
    np.testing.assert_allclose(vmap(vmap(lambda e: e * e))(x).numpy(), a * a, rtol=1e-12)
    # per-sample gradients: vmap of grad
    w = T.asarray(_a(3, 5), device=device)
    ps = vmap(grad(lambda w, r: (T.tanh(r @ w)) ** 2), in_dims=(None, 0))(w, x)
    wn = _a(3, 5)
    want = np.stack([2 * np.tanh(r @ wn) * (1 - np.tanh(r @ wn) ** 2) * r for r in a])
    np.testing.assert_allclose(ps.numpy(), want, rtol=1e-12)


def test_vmap_errors_and_randomness():
    x = T.ones((3, 2))
    with pytest.raises(ValueError, match="vmap: the mapped dims have different sizes"):
        vmap(lambda a, b: a + b)(x, T.ones((4, 2)))
    with pytest.raises(ValueError, match="vmap: no input is mapped"):
        vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(ValueError, match="in_dims has 1 entries for 2"):
        vmap(lambda a, b: a, in_dims=(0,))(x, x)
    with pytest.raises(ValueError, match="in_dim 2 is out of range"):
        vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(TypeError, match="in_dims must be an int"):
        vmap(lambda a: a, in_dims="0")(x)
    with pytest.raises(RuntimeError, match="vmap: func drew random numbers"):
        vmap(lambda a: a + T.rand(2))(x)
    T.random.seed(3)
    same = vmap(lambda a: a + T.rand(2), randomness="same")(x).numpy()
    assert (same == same[0]).all()
    diff = vmap(lambda a: a + T.rand(2), randomness="different")(x).numpy()
    assert not (diff == diff[0]).all()


def test_against_torch_func():
    torch = pytest.importorskip("torch")
    tf = torch.func
    a, b = _a((4, 3)), _a((3,), 1)
    f = lambda x, w: T.tanh(x @ w).sum()        # noqa: E731
    g = lambda x, w: torch.tanh(x @ w).sum()    # noqa: E731
    np.testing.assert_allclose(grad(f, argnums=1)(T.asarray(a), T.asarray(b)).numpy(),
                               tf.grad(g, argnums=1)(torch.tensor(a), torch.tensor(b)).numpy(),
                               rtol=1e-12)
    ours = vmap(grad(f, argnums=1), in_dims=(0, None))(T.asarray(a[:, None]), T.asarray(b))
    theirs = tf.vmap(tf.grad(g, argnums=1), in_dims=(0, None))(torch.tensor(a[:, None]),
                                                                 torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    h = lambda w: T.sum(T.exp(w) * w[0])      # noqa: E731
    ht = lambda w: torch.sum(torch.exp(w) * w[0])   # noqa: E731
    np.testing.assert_allclose(hessian(h)(T.asarray(b)).numpy(),
                               tf.hessian(ht)(torch.tensor(b)).numpy(), rtol=1e-12)


def test_jacobians_compose():
    """hessian is jacfwd of jacrev; jacrev of jacfwd (reverse over forward) and jacrev of jacrev
    agree with it (jacfwd under an outer transform takes the reverse-mode path)."""
    a = np.array([0.5, 1.0, 2.0])
    h = lambda x: (T.exp(x) * x[0]).sum()     # noqa: E731
    e = np.exp(a)
    want = np.diag(e * a[0])
    want[0, :] += e
    want[:, 0] += e
    want[0, 0] = e[0] * (a[0] + 2)
    for H in (hessian(h), jacrev(jacfwd(h)), jacrev(jacrev(h)), jacfwd(jacrev(h))):
        np.testing.assert_allclose(H(T.asarray(a)).numpy(), want, rtol=1e-12)


def test_linearize_matches_jvp_and_torch():
    from autograd.func import linearize
    rng = np.random.default_rng(2)
    x0, w0, t1, t2 = rng.random((3, 4)), rng.random((4, 2)), rng.random((3, 4)), rng.random((4, 2))

    def f(x, w):
        return T.tanh(x @ w), (x * x).sum()
    x = T.tensor(x0)   # (a copy: asarray would share x0's memory)
    out, jvp_fn = linearize(f, x, T.asarray(w0))
    x[0, 0] = 100.0   # a later write to the primal changes nothing
    got = jvp_fn(T.asarray(t1), T.asarray(t2))
    np.testing.assert_allclose(out[0].numpy(), np.tanh(x0 @ w0), rtol=1e-13)
    sech2 = 1 - np.tanh(x0 @ w0) ** 2
    np.testing.assert_allclose(got[0].numpy(), sech2 * (t1 @ w0 + x0 @ t2), rtol=1e-13)
    assert float(got[1]) == pytest.approx(float((2 * x0 * t1).sum()), rel=1e-13)
    with pytest.raises(ValueError, match="2 tangent"):
        jvp_fn(T.asarray(t1))
    with pytest.raises(TypeError, match="argument 0 must be a Tensor"):
        linearize(f, x0, T.asarray(w0))
