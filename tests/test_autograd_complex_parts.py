"""In-place writes through a view of the other kind of memory: x.real / x.imag /
view_as_real(x) of a complex tensor on the graph, and view_as_complex of a real one. Their
gradients (PyTorch's convention) and tangents pass through the (Re, Im) pairs (autograd's
copy_parts rule). References: PyTorch 2.14's values, written out, and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import gradcheck

pytestmark = pytest.mark.usefixtures("device")

Z0 = np.array([1 + 2j, 3 - 1j, -2 + 0.5j])
W0 = np.array([0.5, -1.5])


def _real_write(y, w):
    y.real[:2] = 3 * w


def _imag_mul(y, w):
    y.imag[1:] *= w


def _pairs_write(y, w):
    T.view_as_real(y)[0, 1] = w[0] ** 2


@pytest.mark.parametrize("body,gz,gw", [
    (_real_write, [-6 + 12j, 10 - 20j, -20 + 5j], [9.0, -27.0]),
    (_imag_mul, [10 + 20j, 22.5 + 5j, -27.5 + 20j], [25.0, -27.0]),
    (_pairs_write, [16 + 8j, 30 - 10j, -20 + 5j], [0.5, 0.0]),
])
def test_writes_through_real_views_of_complex_memory(body, gz, gw):
    z = T.asarray(Z0).requires_grad_()
    w = T.asarray(W0).requires_grad_()
    y = z * (2 - 1j)
    body(y, w)
    (T.abs(y) ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), gz, rtol=1e-13)   # PyTorch 2.14's
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-13)

    def f(zz, ww):
        yy = zz * (2 - 1j)
        body(yy, ww)
        return T.abs(yy) ** 2
    assert gradcheck(f, (T.asarray(Z0).requires_grad_(), T.asarray(W0).requires_grad_()))


def test_one_element_real_part_write_keeps_the_imaginary_gradient():
    # one element: the real view's extent fits inside the complex base, which had hidden the bug
    z = T.asarray([1 + 2j]).requires_grad_()
    w = T.asarray([0.5]).requires_grad_()
    y = z * 1
    y.real[:] = 5 * w
    (T.abs(y) ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [4j])
    np.testing.assert_allclose(w.grad.numpy(), [25.0])


def test_tangents_through_part_writes():
    def f(z, w):
        y = z * 1
        y.real[:] = 5 * w
        return y
    _, t = autograd.jvp(f, (T.asarray([1 + 2j]), T.asarray([0.5])),
                        (T.asarray([1 + 1j]), T.asarray([1.4])))
    np.testing.assert_allclose(t.numpy(), [7 + 1j])   # Re: 5 * 1.4, Im: Im of z's tangent


def test_write_through_a_complex_view_of_real_memory():
    def f(x, v):
        y = x * 2.0
        T.view_as_complex(y)[1] = v * (1 - 1j)
        return y * y
    x = T.asarray(np.arange(1.0, 7.0).reshape(3, 2)).requires_grad_()
    v = T.asarray([0.7 + 0.2j]).requires_grad_()
    assert gradcheck(f, (x, v))
    y = x * 2.0
    T.view_as_complex(y)[1] = v * (1 - 1j)
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[8.0, 16.0], [0.0, 0.0], [40.0, 48.0]])
    # y[1] = (Re, Im) of u = v (1 - i); d(Re^2 + Im^2) = 2u, so v's gradient is 2u conj(1 - i)
    u = (0.7 + 0.2j) * (1 - 1j)
    np.testing.assert_allclose(v.grad.numpy(), [2 * u * (1 + 1j)])
