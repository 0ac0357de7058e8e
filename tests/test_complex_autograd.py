"""Autograd of complex tensors, PyTorch's convention: a gradient is the conjugate Wirtinger
derivative dL/dRe z + i dL/dIm z of a real loss L (so `z -= lr * z.grad` descends), and a
holomorphic op's vjp is g * conj(f'(z)).

Checked on both devices: every differentiable complex entry of the op table by gradcheck
(complex numbers as two real variables, central differences) and by forward mode against
complex central differences, on non-contiguous leaves; mixed real and complex operands (a real
input gets the real part); the non-holomorphic ops (conj, abs, angle, sign, real, imag,
view_as_real, view_as_complex, var, std); reductions, scans, matrix products, views, indexing,
sorting, casts; second derivatives; the engine's rules for complex roots; a custom Function;
and the same gradients as PyTorch's CPU build where it is installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import Function
from autograd.forward import jvp
from tensor.optable import BINARY, NO_RULE, NONE, UNARY

pytestmark = pytest.mark.usefixtures("device")

EPS = 1e-6


def _c(shape, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def _leaf(a):
    """A non-contiguous complex128 (or float64) leaf holding a: every other column of a wider
    tensor, transposed (the leaf itself is the strided view)."""
    a = np.asarray(a)
    big = np.repeat(a.swapaxes(-1, -2), 2, axis=-1) if a.ndim >= 2 else np.repeat(a, 2)
    t = T.asarray(big)[..., ::2]
    t = t.mT if a.ndim >= 2 else t
    assert not t.is_contiguous() and np.array_equal(t.numpy(), a)
    return t.detach().requires_grad_()


def _fd_jvp(f, primals, tangents):
    """(f(x + eps t) - f(x - eps t)) / 2 eps in complex arithmetic: the directional derivative
    of any (holomorphic or not) function."""
    def at(sign):
        return f(*[T.asarray(p + sign * EPS * v) for p, v in zip(primals, tangents)]).numpy()
    return (at(1) - at(-1)) / (2 * EPS)


def _differentiable(ops):
    return [op for op in ops if "c" in op.kinds and op.grad not in (NONE, NO_RULE)]


UNARY_C = _differentiable(UNARY)
BINARY_C = _differentiable(BINARY)


# ---------------------------------------------------------------- the op table

@pytest.mark.parametrize("op", UNARY_C, ids=lambda op: op.name)
def test_unary_gradcheck_and_jvp(op):
    a = _c((2, 3), seed=1)
    f = getattr(T, op.name)
    assert autograd.gradcheck(f, (_leaf(a),))
    v = _c((2, 3), seed=2)
    out, tan = jvp(f, (_leaf(a),), (T.asarray(v),))
    np.testing.assert_allclose(out.numpy(), f(T.asarray(a)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tan.numpy(), _fd_jvp(f, (a,), (v,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", BINARY_C, ids=lambda op: op.name)
def test_binary_gradcheck_and_jvp(op):
    a, b = _c((2, 3), seed=3), _c((3,), seed=4)   # broadcast: b's gradient is summed
    f = getattr(T, op.name)
    assert autograd.gradcheck(f, (_leaf(a), T.asarray(b).requires_grad_()))
    va, vb = _c((2, 3), seed=5), _c((3,), seed=6)
    _, tan = jvp(f, (_leaf(a), T.asarray(b)), (T.asarray(va), T.asarray(vb)))
    np.testing.assert_allclose(tan.numpy(), _fd_jvp(f, (a, b), (va, vb)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", BINARY_C, ids=lambda op: op.name)
def test_binary_mixed_real_and_complex(op):
    """A real operand of a complex op gets a real gradient: the real part of the complex one."""
    f = getattr(T, op.name)
    x = T.asarray(np.abs(_c((3,), seed=7).real) + 0.5).requires_grad_()
    z = T.asarray(_c((3,), seed=8)).requires_grad_()
    assert autograd.gradcheck(f, (x, z)) and autograd.gradcheck(f, (z, x))
    (gx,) = autograd.grad(T.abs(f(x, z)).sum(), [x])
    assert gx.dtype is T.float64


def test_python_complex_scalars():
    x = T.asarray([0.5, -1.5, 2.0]).requires_grad_()
    assert autograd.gradcheck(lambda t: t * (1 - 2j) + (2 + 1j) / (t + 3j), (x,))
    assert autograd.gradcheck(lambda t: (-2.0) ** (t * 1j), (x,))   # a negative real base
    z = T.asarray(_c((3,), seed=9)).requires_grad_()
    assert autograd.gradcheck(lambda t: 3j ** t + t ** (0.5 + 1j), (z,))


# ---------------------------------------------------------------- not holomorphic

NON_HOLOMORPHIC = [
    ("conj", lambda z: T.conj(z) * z),
    ("abs", lambda z: T.abs(z)),
    ("abs_squared", lambda z: T.abs(z * z)),
    ("angle", lambda z: T.angle(z)),
    ("sign", lambda z: T.sign(z)),
    ("real_imag", lambda z: T.real(z) * 2 - T.imag(z) ** 2),
    ("attributes", lambda z: z.real * z.imag),
    ("view_as_real", lambda z: T.view_as_real(z) ** 3),
    ("var", lambda z: T.var(z, axis=1)),
    ("std", lambda z: T.std(z, correction=1)),
    ("vecdot", lambda z: T.vecdot(z, T.sin(z))),
]


@pytest.mark.parametrize("name,f", NON_HOLOMORPHIC, ids=[n for n, _ in NON_HOLOMORPHIC])
def test_not_holomorphic(name, f):
    a, v = _c((2, 3), seed=10), _c((2, 3), seed=11)
    assert autograd.gradcheck(f, (_leaf(a),))
    _, tan = jvp(f, (_leaf(a),), (T.asarray(v),))
    np.testing.assert_allclose(tan.numpy(), _fd_jvp(f, (a,), (v,)), rtol=1e-6, atol=1e-8)


def test_view_as_complex():
    x = np.random.default_rng(12).standard_normal((3, 2))
    f = lambda t: T.exp(T.view_as_complex(t))   # noqa: E731
    assert autograd.gradcheck(f, (T.asarray(x).requires_grad_(),))
    _, tan = jvp(f, (T.asarray(x),), (T.asarray(np.ones((3, 2))),))
    np.testing.assert_allclose(tan.numpy(), _fd_jvp(f, (x,), (np.ones((3, 2)),)), rtol=1e-6)


def test_non_holomorphic_at_zero_is_finite():
    """|z|, angle z and sign z at z = 0: zero gradients (PyTorch's choice), never NaN."""
    z = T.zeros(2, dtype=T.complex128, requires_grad=True)
    for f in (T.abs, T.angle, lambda t: T.abs(T.sign(t) + 1)):
        (g,) = autograd.grad(f(z).sum(), [z])
        assert np.array_equal(g.numpy(), np.zeros(2, np.complex128))


# ---------------------------------------------------------------- beyond elementwise

COMPOSED = [
    ("sum_mean", lambda z: T.sum(z * z, axis=0) + T.mean(z, axis=1, keepdims=True)),
    ("prod", lambda z: T.prod(z, axis=1)),
    ("cumsum", lambda z: T.cumsum(z * z, axis=1)),
    ("cumprod", lambda z: T.cumprod(z, axis=0)),
    ("logsumexp", lambda z: T.logsumexp(z, axis=1)),   # raised "max: not defined for complex"
    ("matmul", lambda z: z @ T.exp(z.mT)),
    ("tensordot", lambda z: T.tensordot(z, z * 1j, axes=([1], [1]))),
    ("einsum", lambda z: T.einsum("ij,kj,k->ik", z, T.exp(z), z[:, 0])),
    ("dot_inner_outer", lambda z: T.outer(z[0], z[1]) + T.inner(z[0], z[1]) + T.dot(z[1], z[0])),
    ("views", lambda z: T.flip(z.T.reshape(6)[::-2], 0) * T.diagonal(z)[0]),
    ("indexing", lambda z: T.take(z, T.asarray([4, 0, 4])) + z[T.asarray([1, 0, 1]), 2]),
    ("manipulation", lambda z: T.concatenate([z, T.roll(z, 1, 1)], axis=0) @ T.stack([z[0], z[1], z[0]])),
    ("where", lambda z: T.where(T.real(z) > 0, z * z, T.exp(z))),
    ("sort", lambda z: T.sort(z * z, axis=1)),
    # complex -> real keeps the real part (NumPy's cast), real -> complex adds a zero imaginary one
    ("casts", lambda z: T.astype(T.astype(z, T.float64), T.complex128) * z),
    ("setitem", lambda z: _written(z)),
]


def _written(z):
    y = z * 1.0
    y[0, 1] = z[1, 2] * 2j
    return y


@pytest.mark.parametrize("name,f", COMPOSED, ids=[n for n, _ in COMPOSED])
def test_composed(name, f):
    a, v = _c((2, 3), seed=13), _c((2, 3), seed=14)
    assert autograd.gradcheck(f, (_leaf(a),))
    _, tan = jvp(f, (_leaf(a),), (T.asarray(v),))
    np.testing.assert_allclose(tan.numpy(), _fd_jvp(f, (a,), (v,)), rtol=1e-6, atol=1e-8)


def test_second_derivatives():
    a, b = _c((3,), seed=15), _c((3,), seed=16)
    assert autograd.gradgradcheck(lambda z, w: T.exp(z) * w + T.abs(z * w), (_leaf(a), _leaf(b)))
    assert autograd.gradgradcheck(lambda z: T.angle(z) + T.sign(z) * z, (_leaf(a),))


def test_real_leaf_through_complex():
    """x real -> complex -> real: x.grad is real, the derivative of the real function."""
    x = T.asarray([0.3, -0.7, 1.1]).requires_grad_()
    y = T.abs(T.exp(x * 1j) + x) ** 2     # |e^{ix} + x|^2 = 1 + 2x cos x + x^2
    y.sum().backward()
    xs = np.array([0.3, -0.7, 1.1])
    assert x.grad.dtype is T.float64
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(xs) - 2 * xs * np.sin(xs) + 2 * xs, rtol=1e-12)


def test_descent_on_complex_leaf():
    """The gradient points uphill: z -= lr * z.grad minimises |z - c|^2 (grad = 2 (z - c))."""
    c = 1.5 - 0.5j
    z = T.asarray([0j, 3 + 3j]).requires_grad_()
    (T.abs(z - c) ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * (np.array([0j, 3 + 3j]) - c), rtol=1e-12)


def test_complex64_leaf():
    z = T.asarray(_c((4,), seed=17).astype(np.complex64)).requires_grad_()
    (T.abs(T.exp(z)) ** 2).sum().backward()
    zn = _c((4,), seed=17).astype(np.complex64)
    assert z.grad.dtype is T.complex64
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.exp(2 * zn.real), rtol=1e-5)


def test_engine_roots():
    z = T.asarray(_c((2,), seed=18)).requires_grad_()
    with pytest.raises(RuntimeError, match="real scalar"):
        (z * z).sum().backward()
    (z * z).sum().backward(T.asarray(1 - 1j))   # an explicit gradient: L = Re(conj(g) y)
    np.testing.assert_allclose(z.grad.numpy(), (1 - 1j) * np.conj(2 * _c((2,), seed=18)), rtol=1e-12)
    assert T.ones(2, dtype=T.complex64).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="floating-point and complex"):
        T.ones(2, dtype=T.int32).requires_grad_()


class _Square(Function):
    """z^2 with its backward written by the user in the convention: g * conj(2z)."""
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * T.conj(2 * z)


def test_custom_function_is_not_conjugated_again():
    a = _c((3,), seed=19)
    z = T.asarray(a).requires_grad_()
    T.abs(_Square.apply(z)).sum().backward()
    z2 = T.asarray(a).requires_grad_()
    T.abs(z2 * z2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), z2.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- PyTorch as a second reference

TORCH_CASES = [
    ("chain", lambda m, z, w: (m.exp(z) * w / (z + 2)).abs().sum()),
    ("trig", lambda m, z, w: (m.sin(z) * m.cosh(w) + m.arctan(z * 0.3)).real.sum()),
    ("sqrt_log", lambda m, z, w: (m.sqrt(z) + m.log(w * w)).imag.sum()),
    ("matmul", lambda m, z, w: m.abs(z.reshape(2, 2) @ w.reshape(2, 2)).sum()),
    ("angle_sign", lambda m, z, w: (m.angle(z) + (m.sgn(w) if m.__name__ == "torch" else m.sign(w)).real
                                    + m.conj(z).imag).sum()),
    ("prod_var", lambda m, z, w: (z.prod().real + w.var() if m.__name__ == "torch" else
                                  z.prod().real + w.var(correction=1))),
]


@pytest.mark.parametrize("name,f", TORCH_CASES, ids=[n for n, _ in TORCH_CASES])
def test_gradients_match_torch(name, f):
    torch = pytest.importorskip("torch")
    a, b = _c((4,), seed=20), _c((4,), seed=21)
    z, w = T.asarray(a).requires_grad_(), T.asarray(b).requires_grad_()
    f(T, z, w).backward()
    zt, wt = (torch.tensor(v, requires_grad=True) for v in (a, b))
    f(torch, zt, wt).backward()
    np.testing.assert_allclose(z.grad.numpy(), zt.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- optimizers

def test_sgd_on_a_complex_parameter_descends():
    from nn import optim
    c = np.array([1.5 - 0.5j, -2 + 1j])
    z = T.zeros(2, dtype=T.complex128, requires_grad=True)
    opt = optim.SGD([z], lr=0.25)
    for _ in range(2):
        opt.zero_grad()
        (T.abs(z - T.asarray(c)) ** 2).sum().backward()
        opt.step()
    np.testing.assert_allclose(z.detach().numpy(), 0.75 * c, rtol=1e-12)   # z <- z - 0.5 (z - c)


OPTIMIZERS = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
              ("Adam", dict(lr=0.1, amsgrad=True)),
              ("AdamW", dict(lr=0.1, weight_decay=0.1)),
              ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True))]


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_optimizers_match_torch_on_complex_parameters(name, kw):
    """Each algorithm updates a complex parameter as its (real, imaginary) pairs, as PyTorch;
    the state stays complex, and state_dict round-trips."""
    torch = pytest.importorskip("torch")
    from nn import optim
    a = _c((2, 3), seed=22)
    z, zt = T.asarray(a).requires_grad_(), torch.tensor(a, requires_grad=True)
    opt, opt_t = getattr(optim, name)([z], **kw), getattr(torch.optim, name)([zt], **kw)
    for _ in range(3):
        opt.zero_grad()
        (T.abs(T.exp(z) - 1) ** 2).sum().backward()
        opt.step()
        opt_t.zero_grad()
        ((torch.exp(zt) - 1).abs() ** 2).sum().backward()
        opt_t.step()
    np.testing.assert_allclose(z.detach().numpy(), zt.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert all(v.dtype is T.complex128 for v in opt.state[z].values() if isinstance(v, T.Tensor))
    opt.load_state_dict(opt.state_dict())


def test_complex_logsumexp_values():
    a = _c((3, 4), seed=21)
    a[0, 0] = 800 + 1j   # exp overflows unless the largest real part comes out first
    for axis in (None, 0, 1):
        m = np.max(a.real, axis=axis, keepdims=True)
        want = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
        got = T.logsumexp(T.asarray(a), axis=axis, keepdims=True)
        assert got.dtype is T.complex128
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)
