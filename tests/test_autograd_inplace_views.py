"""In-place writes and views under autograd (PyTorch's semantics): a write through a view
rewrites its base's graph, a view taken before its base was written follows the write, and
in-place products keep what their gradient needs. Each case gave a wrong gradient (or a
needless error) before, without a word."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def leaf(a):
    return T.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def test_chained_index_write_into_a_buffer_reaches_the_buffers_graph():
    a = leaf([1.0, 2.0])
    buf = T.zeros((2, 2), dtype="float64")   # needs no grad itself
    buf[0][1] = a[0] * 3.0                   # through the view buf[0]
    buf[1] = a * 2.0
    assert buf.requires_grad
    buf.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [5.0, 2.0])


def test_a_view_taken_before_its_base_is_written_follows_the_write():
    a = leaf(np.arange(6.0).reshape(2, 3))
    b = leaf(np.ones((2, 3)))
    x = a * 1.0
    v = x[0]
    x.add_(b * 2.0)
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0, 4.0])
    (v * v).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[4.0, 6.0, 8.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(b.grad.numpy(), [[8.0, 12.0, 16.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("whole", [False, True])
def test_writes_through_a_view_taken_before_another_write(whole):
    """v = y[2] made before y (or y[0]) was written, then written itself: the graph v gets
    from its base (an as_strided node) keeps the base's layout, not its values, so the write
    through v is no 'modified by an in-place operation' error (PyTorch's results)."""
    x, w = leaf(np.ones((4, 4))), leaf([1.0, 2.0, 3.0, 4.0])
    y = x + 0.0
    v = y[2]
    (y if whole else y[0]).add_(w[1])
    v.add_(w[3])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((4, 4)))
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 16.0 if whole else 4.0, 0.0, 4.0])


def test_a_product_by_a_number_keeps_no_operand():
    """x * 2.0 needs nothing of x for backward (as PyTorch: only the other operand's partial
    reads x), so writing x afterwards is fine; a product of two tracked tensors still checks."""
    x = leaf(np.ones((4, 4)))
    y = x * 1.0
    z = y * 2.0
    y.add_(1.0)
    y[1] = y[1] * 3.0
    (z.sum() + (y * y).sum()).backward()
    want = np.full((4, 4), 6.0)
    want[1] = 38.0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    a, b = leaf([1.0, 2.0]), T.tensor([3.0, 4.0], dtype="float64")
    y = a * b            # a's gradient reads b: b is kept and checked
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_write_through_a_view_of_a_permuted_result():
    # x.T * 1 is laid out as a permuted view of a new buffer: it is a base of its own
    x0 = np.array([[0.41, -0.69, -1.37], [-1.45, 0.93, 1.23]])
    w = T.asarray(np.random.default_rng(0).uniform(-1, 1, (3, 2)))

    def f(x):
        v = x.T
        y = v * 1.0
        t = y[..., ::2]
        t += v[..., ::2]
        return (y * w).sum()
    assert autograd.gradcheck(f, (leaf(x0),))


@pytest.mark.parametrize("op", ["mul", "div"])
def test_in_place_product_with_an_operand_that_requires_grad(op):
    def f(x, s):
        y = x * 1.0
        if op == "mul":
            y *= s
        else:
            y /= s
        return y
    x, s = leaf([0.5, -1.2, 2.0]), leaf([1.5, 0.7, -2.5])
    assert autograd.gradcheck(f, (x, s))
    assert autograd.gradgradcheck(f, (x, s))
    # forward mode: the other operand's tangent counts too
    tx, ts = T.tensor([0.3, 0.1, -0.2]), T.tensor([1.0, -0.5, 0.25])
    _, tan = autograd.jvp(f, (x.detach(), s.detach()), (tx, ts))
    xv, sv = x.detach().numpy(), s.detach().numpy()
    want = (tx.numpy() * sv + xv * ts.numpy() if op == "mul"
            else tx.numpy() / sv - xv * ts.numpy() / sv ** 2)
    np.testing.assert_allclose(tan.numpy(), want, rtol=1e-12)


def test_in_place_product_with_itself_and_an_overlapping_view():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y *= y
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y *= T.flip(y, 0)    # reads y's old values, reversed
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 4.0, 2.0])


def test_forward_mode_through_a_write_into_a_view():
    def f(x):
        y = x * 1.0
        y[1:] *= x[:1]
        return y
    out, tan = autograd.jvp(f, T.tensor([2.0, 3.0, 4.0]), T.tensor([1.0, 0.0, 0.0]))
    np.testing.assert_array_equal(out.numpy(), [2.0, 6.0, 8.0])
    np.testing.assert_array_equal(tan.numpy(), [1.0, 3.0, 4.0])
    x = leaf([2.0, 3.0, 4.0])
    f(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 2.0, 2.0])


def test_in_place_on_a_view_of_a_leaf_is_refused_before_writing():
    p = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="view .* of a leaf tensor that requires grad"):
        p[0:1].mul_(2.0)
    np.testing.assert_array_equal(p.detach().numpy(), [1.0, 2.0])


def test_a_view_made_under_no_grad_stays_a_constant():
    p = leaf([1.0, 2.0])
    with autograd.no_grad():
        v = p[0:1]
        p.mul_(3.0)   # an optimizer-style update
    assert not v.requires_grad
    y = v * p
    y.sum().backward()
    # v == [3] counted as a constant (were it p[0], the first entry would be 3 + 3 + 6)
    np.testing.assert_array_equal(p.grad.numpy(), [3.0, 3.0])


def test_single_output_unbind_backward():
    x = leaf([[0.3, 0.5, 0.1]])
    (a,) = T.unbind(x)
    (a * a).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.6, 1.0, 0.2]])


def test_checkpoint_of_a_view_whose_base_was_written():
    x = leaf([0.3, -0.4, 0.9])

    def f(x):
        y = x * 1.0
        w = y[::-1]
        y *= x
        return autograd.checkpoint(lambda a: T.sin(a) * a, w).sum()
    assert autograd.gradcheck(f, (x,))
