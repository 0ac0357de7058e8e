"""Derivative rules of reductions, scans, matrix products and the small ops beside them
(autograd/rules_reduce.py, rules_misc.py, rules_linalg.py).

- vjp: float64 gradcheck (central differences) of every rule over axes / dim / keepdims /
  dtype / ddof given positionally and by keyword, on contiguous and NON-contiguous leaves
  (transposed, stepped, negative-step), matmul's 1-D and broadcast-batch cases, tensordot's
  int and list axes; hypothesis draws shapes, axes and layouts for the reductions.
- create_graph: gradgradcheck of sum, mean, var, std, prod (zeros too), max, logsumexp,
  cumsum, cumprod (zeros too), matmul.
- jvp: each rule's jvp called directly (the Ctx of the real call, tangents aligned with the
  args) against central differences of the op along the tangents.
- exact values: ties of max/min share the gradient evenly, prod/cumprod with zeros, clip's
  masks (bounds inclusive, bound tensors active where they bind), dtypes of cast gradients.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import autograd as ag
import tensor as T
from autograd.graph import RULES, Ctx
from tensor.public import PUB

pytestmark = pytest.mark.usefixtures("device")

RNG = np.random.default_rng(11)


def arr(*shape, seed=None):
    r = RNG if seed is None else np.random.default_rng(seed)
    return r.standard_normal(shape)


def leaf(a, layout="c"):
    """A float64 leaf holding the values of `a`, laid out as asked: "c" contiguous, "t" a
    transposed view (stepped for 1-D), "s" a stepped view, "n" a negative-step view."""
    a = np.asarray(a, dtype=np.float64)
    if layout == "t" and a.ndim < 2:
        layout = "s"
    if layout == "t" and a.ndim >= 2:
        x = T.asarray(np.ascontiguousarray(a.T)).T
    elif layout == "s" and a.ndim >= 1:
        big = np.zeros((2 * a.shape[0],) + a.shape[1:])
        big[::2] = a
        x = T.asarray(big)[::2]
    elif layout == "n" and a.ndim >= 1:
        x = T.asarray(np.ascontiguousarray(a[::-1]))[::-1]
    else:
        x = T.asarray(a.copy())
    if layout != "c" and a.ndim >= 1 and a.shape[0] > 1 and (
            layout != "t" or sum(n > 1 for n in a.shape) >= 2):
        assert not x.is_contiguous()
    np.testing.assert_array_equal(x.numpy(), a)
    return x.requires_grad_()


def rnd(*shape, layout="c"):
    return leaf(arr(*shape), layout)


def check(fn, *xs):
    assert ag.gradcheck(fn, xs)


def check2(fn, *xs):
    assert ag.gradcheck(fn, xs)
    assert ag.gradgradcheck(fn, xs)


# ---------------------------------------------------------------- reductions (gradcheck)

RED_CASES = {
    "sum_all": (lambda t: T.sum(t), (3, 4)),
    "sum_pos": (lambda t: T.sum(t, 1, None, True), (3, 4)),
    "sum_dtype_pos": (lambda t: T.sum(t, (0, 2), T.float64), (2, 3, 2)),
    "sum_dim": (lambda t: t.sum(dim=-1, keepdims=True), (2, 3, 2)),
    "sum_empty_axes": (lambda t: T.sum(t, axis=()), (2, 3)),
    "sum_0d": (lambda t: T.sum(t.sum()), (3,)),
    "prod_all": (lambda t: T.prod(t), (2, 3)),
    "prod_axes": (lambda t: T.prod(t, axis=(0, 2), keepdims=True), (2, 3, 2)),
    "prod_dim": (lambda t: t.prod(dim=1), (3, 4)),
    "mean_all": (lambda t: T.mean(t), (3, 4)),
    "mean_axis": (lambda t: T.mean(t, 0, None, True), (3, 4)),
    "mean_dim": (lambda t: t.mean(dim=(0, 2)), (2, 3, 2)),
    "var_all": (lambda t: T.var(t), (3, 4)),
    "var_ddof": (lambda t: T.var(t, 1, None, 1), (3, 4)),
    "var_correction": (lambda t: T.var(t, dim=0, correction=2, keepdims=True), (4, 3)),
    "var_axes": (lambda t: t.var(axis=(0, 2), ddof=1), (2, 3, 2)),
    "std_all": (lambda t: T.std(t), (3, 4)),
    "std_ddof": (lambda t: T.std(t, axis=1, ddof=1, keepdims=True), (3, 4)),
    "std_correction": (lambda t: t.std(dim=0, correction=1), (4, 3)),
    "max_all": (lambda t: T.max(t), (3, 4)),
    "max_axis": (lambda t: T.max(t, 1, True), (3, 4)),
    "min_dim": (lambda t: t.min(dim=0).values, (3, 4)),
    "amax_axes": (lambda t: T.amax(t, axis=(0, 2)), (2, 3, 2)),
    "amin_keep": (lambda t: T.amin(t, axis=-1, keepdims=True), (2, 3, 2)),
    "logsumexp_all": (lambda t: T.logsumexp(t), (3, 4)),
    "logsumexp_axis": (lambda t: T.logsumexp(t, 1, True), (3, 4)),
    "logsumexp_dim": (lambda t: t.logsumexp(dim=(0, 2)), (2, 3, 2)),
    "cumsum_flat": (lambda t: T.cumsum(t), (3, 4)),
    "cumsum_axis": (lambda t: T.cumsum(t, 1), (3, 4)),
    "cumsum_dim": (lambda t: t.cumsum(dim=0, dtype=T.float64), (3, 4)),
    "cumprod_flat": (lambda t: T.cumprod(t), (2, 3)),
    "cumprod_axis": (lambda t: T.cumprod(t, -1), (2, 3, 2)),
    "cumprod_dim": (lambda t: t.cumprod(dim=0), (3, 4)),
}


@pytest.mark.parametrize("layout", ["c", "t", "n"])
@pytest.mark.parametrize("case", list(RED_CASES))
def test_reduction_gradcheck(case, layout):
    fn, shape = RED_CASES[case]
    check(fn, rnd(*shape, layout=layout))


def test_reduction_on_a_view_built_inside_the_function():
    check(lambda t: T.var(t[::2, ::-1].T, axis=0), rnd(6, 3))
    check(lambda t: T.logsumexp(T.swapaxes(t, 0, 1)[1:], axis=1), rnd(3, 4))
    check(lambda t: T.cumprod(t.T[::-1], axis=0), rnd(3, 4))


_NAMES = ["sum", "mean", "prod", "var", "std", "max", "min", "logsumexp"]


@st.composite
def reduction_case(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    name = draw(st.sampled_from(_NAMES))
    axis = None
    if ndim and draw(st.booleans()):
        ax = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                           unique_by=lambda a: a % ndim))
        axis = ax[0] if len(ax) == 1 and draw(st.booleans()) else tuple(ax)
    keep = draw(st.booleans())
    by_dim = draw(st.booleans())
    layout = draw(st.sampled_from("ctsn"))
    return name, shape, axis, keep, by_dim, layout, draw(st.integers(0, 2**16))


@given(reduction_case())
def test_reduction_property(case):
    name, shape, axis, keep, by_dim, layout, seed = case
    x = leaf(np.random.default_rng(seed).standard_normal(shape), layout)
    kw = {"dim" if by_dim else "axis": axis, "keepdims": keep}
    check(lambda t: PUB[name](t, **kw), x)


def test_sum_with_out_records_a_gradient():
    x = rnd(3, 4)
    buf = T.zeros(4, dtype=T.float64)
    T.sum(x, axis=0, out=buf)
    (buf * T.asarray(np.arange(4.0))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(np.arange(4.0), (3, 4)))


def test_sum_dtype_gradient_is_cast_back():
    x = leaf(arr(3, 4)).astype(T.float32).detach().requires_grad_()
    T.sum(x, 0, T.float64).sum().backward()
    assert x.grad.dtype is T.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4), np.float32))


# ---------------------------------------------------------------- exact values

def test_max_ties_share_the_gradient_evenly():
    x = leaf([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0], [0.0, -1.0, 7.0, 7.0]])
    T.max(x, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, .5, .5, 0], [.25] * 4, [0, 0, .5, .5]])
    y = leaf([[2.0, 1.0], [1.0, 1.0]])
    (T.amin(y) * 3.0).backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 1.0], [1.0, 1.0]])
    z = leaf([[4.0, 4.0], [1.0, 4.0]])
    (T.max(z, axis=0, keepdims=True) * T.asarray(np.array([[2.0, 6.0]]))).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [[2.0, 3.0], [0.0, 3.0]])


def _others(a, axis):
    """Brute-force product of every element but one along axis."""
    out = np.empty_like(a)
    for idx in np.ndindex(*a.shape):
        line = [i for i in range(a.shape[axis])]
        sl = list(idx)
        vals = []
        for i in line:
            if i != idx[axis]:
                sl[axis] = i
                vals.append(a[tuple(sl)])
        out[idx] = np.prod(vals)
    return out


def test_prod_with_zeros_exact():
    a = np.array([[2.0, 0.0, 3.0, -1.5], [0.0, 0.0, 3.0, 1.0], [1.5, 2.0, -0.5, 4.0]])
    x = leaf(a)
    T.prod(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _others(a, 1), rtol=1e-14)
    np.testing.assert_array_equal(x.grad.numpy()[:2], [[0, -9, 0, 0], [0, 0, 0, 0]])
    assert not np.isnan(x.grad.numpy()).any()
    check2(lambda t: T.prod(t, axis=1), leaf(a))
    check2(lambda t: T.prod(t, axis=(0, 1)), leaf([[1.5, 0.0], [2.0, -1.0]]))
    check2(lambda t: T.prod(t.T, axis=0, keepdims=True), leaf(a, "t"))


def _cumprod_grad_brute(a, g):
    out = np.zeros_like(a)
    for i in range(a.size):
        for k in range(i, a.size):
            out[i] += g[k] * np.prod([a[j] for j in range(k + 1) if j != i])
    return out


@pytest.mark.parametrize("a", [[1.5, 0.0, 2.0, -1.0, 3.0], [0.0, 2.0, 0.0, 3.0, 0.5],
                               [2.0, -1.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 2.0],
                               [1.5, 2.0, -0.5, 3.0, 0.7]])
def test_cumprod_exact(a):
    a = np.asarray(a)
    g = np.arange(1.0, 6.0)
    x = leaf(a)
    (T.cumprod(x) * T.asarray(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _cumprod_grad_brute(a, g), rtol=1e-13, atol=0)
    # create_graph takes the form that is exact to all orders: same first derivative
    x2 = leaf(a)
    (g2,) = ag.grad((T.cumprod(x2) * T.asarray(g)).sum(), x2, create_graph=True)
    np.testing.assert_allclose(g2.numpy(), x.grad.numpy(), rtol=1e-13, atol=1e-15)
    check2(lambda t: T.cumprod(t, axis=0), leaf(a))


def test_cumprod_with_zeros_along_an_axis():
    a = np.array([[1.5, 0.0, 2.0], [0.0, 2.0, 0.0], [2.0, -1.0, 0.5], [0.3, 0.0, 0.0]])
    check2(lambda t: T.cumprod(t, axis=0), leaf(a, "t"))
    check2(lambda t: T.cumprod(t, axis=1), leaf(a, "n"))


def test_std_at_zero_spread_is_zero_not_nan():
    x = leaf([[1.0, 1.0, 1.0], [2.0, 3.0, 5.0]])
    T.std(x, axis=1).sum().backward()
    g = x.grad.numpy()
    np.testing.assert_array_equal(g[0], [0.0, 0.0, 0.0])
    a = np.array([2.0, 3.0, 5.0])
    np.testing.assert_allclose(g[1], (a - a.mean()) / (3 * a.std()), rtol=1e-14)


def test_var_exact_and_logsumexp_is_softmax():
    a = arr(3, 5)
    x = leaf(a)
    T.var(x, axis=1, ddof=1).sum().backward()
    # a - mean cancels: an absolute bound of a few ulps of |a| (the CUDA kernels sum in another
    # order; a draw with an element next to its row's mean gave 3.7e-13 relative, 5.6e-17 absolute)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (a - a.mean(1, keepdims=True)) / 4,
                               rtol=1e-13, atol=8 * np.finfo(np.float64).eps * np.abs(a).max())
    y = leaf(a)
    T.logsumexp(y, axis=0).sum().backward()
    e = np.exp(a)
    np.testing.assert_allclose(y.grad.numpy(), e / e.sum(0), rtol=1e-13)
    z = leaf([[-np.inf, -np.inf], [0.0, 1.0]])
    T.logsumexp(z, axis=1).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy()[0], [0.0, 0.0])


def test_cumsum_is_a_reverse_cumsum():
    x = rnd(2, 4, layout="n")
    (T.cumsum(x, axis=1) * T.asarray(np.array([1.0, 2.0, 3.0, 4.0]))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[10.0, 9.0, 7.0, 4.0]] * 2)


# ---------------------------------------------------------------- create_graph

SECOND_ORDER = {
    "sum": (lambda t: T.sum(t * t, axis=1, keepdims=True), (3, 4)),
    "mean": (lambda t: T.mean(t * t, dim=0), (3, 4)),
    "var": (lambda t: T.var(t, 1, ddof=1), (3, 4)),
    "var_all": (lambda t: T.var(t), (2, 3)),
    "std": (lambda t: T.std(t, axis=0), (4, 3)),
    "prod": (lambda t: T.prod(t, axis=1), (3, 4)),
    "prod_all": (lambda t: T.prod(t), (2, 3)),
    "max": (lambda t: T.max(t, axis=1) * T.max(t), (3, 4)),
    "logsumexp": (lambda t: T.logsumexp(t, axis=1), (3, 4)),
    "logsumexp_all": (lambda t: T.logsumexp(t, keepdims=True), (2, 3)),
    "cumsum": (lambda t: T.cumsum(t * t, axis=1), (3, 4)),
    "cumsum_flat": (lambda t: T.cumsum(t * t), (2, 3)),
    "cumprod": (lambda t: T.cumprod(t, axis=1), (3, 4)),
}


@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("case", list(SECOND_ORDER))
def test_second_order(case, layout):
    fn, shape = SECOND_ORDER[case]
    assert ag.gradgradcheck(fn, (rnd(*shape, layout=layout),))


MATMUL_SHAPES = [((4,), (4,)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((3, 4), (4, 2)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 4, 2)), ((3, 4), (2, 4, 2)),
                 ((2, 3, 4), (4, 5))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_second_order(sa, sb):
    check2(lambda a, b: T.matmul(a, b), rnd(*sa), rnd(*sb))


# ---------------------------------------------------------------- linalg (gradcheck)

@pytest.mark.parametrize("layout", ["c", "t", "s", "n"])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_gradcheck(sa, sb, layout):
    check(lambda a, b: a @ b, rnd(*sa, layout=layout), rnd(*sb, layout=layout))


def test_matmul_transposed_views_and_mixed_dtypes():
    check(lambda a, b: a.T @ b[::-1], rnd(4, 3), rnd(4, 2))
    a = rnd(3, 4)
    b = leaf(arr(4, 2)).astype(T.float32).detach().requires_grad_()
    (a @ b).sum().backward()
    assert a.grad.dtype is T.float64 and b.grad.dtype is T.float32
    np.testing.assert_allclose(b.grad.numpy(), np.broadcast_to(a.numpy().sum(0)[:, None], (4, 2)),
                               rtol=1e-6)
    c = rnd(4, 2)
    (T.arange(12).reshape(3, 4) @ c).sum().backward()  # integer operand: no gradient, c gets one
    np.testing.assert_array_equal(c.grad.numpy(), np.broadcast_to(
        np.arange(12).reshape(3, 4).sum(0)[:, None], (4, 2)))


def test_matmul_batch_broadcast_exact():
    a, b = arr(2, 1, 3, 4), arr(5, 4, 2)
    g = arr(2, 5, 3, 2)
    x, y = leaf(a), leaf(b)
    (T.matmul(x, y) * T.asarray(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (g @ np.swapaxes(b, -1, -2)).sum(1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), (np.swapaxes(a, -1, -2) @ g).sum(0), rtol=1e-12)


TENSORDOT_CASES = [((2, 3, 4), (4, 2, 5), 1), ((2, 3, 4), (3, 4, 2), 2), ((3, 2), (2, 4), 0),
                   ((2, 3, 4), (4, 2, 3), ([2, 0], [0, 1])), ((2, 3, 4), (4, 3), ([-1, 1], [0, -1])),
                   ((3, 4), (4, 3), ([0, 1], [1, 0])), ((2, 3), (3,), (1, 0)),
                   ((2, 3), (2, 3), 2)]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT_CASES)
def test_tensordot(sa, sb, axes):
    check(lambda a, b: T.tensordot(a, b, axes), rnd(*sa, layout="t"), rnd(*sb, layout="n"))
    check(lambda a, b: T.tensordot(a, b, axes=axes), rnd(*sa), rnd(*sb))


DOT_SHAPES = [((), (3,)), ((2, 3), ()), ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)),
              ((2, 3), (3, 4)), ((2, 2, 3), (3,)), ((2, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES)
def test_dot_inner(sa, sb):
    check(lambda a, b: T.dot(a, b), rnd(*sa, layout="t"), rnd(*sb, layout="s"))
    sb_inner = sb[:-2] + sb[-1:] + sb[-2:-1] if len(sb) >= 2 else sb  # last axes must agree
    check(lambda a, b: T.inner(a, b), rnd(*sa), rnd(*sb_inner))


def test_outer():
    check(lambda a, b: T.outer(a, b), rnd(2, 3, layout="t"), rnd(4))
    check(lambda a, b: T.outer(a, b), rnd(3), rnd())


def test_deep_chain_matches_finite_differences():
    x, w1, w2 = rnd(4, 3), rnd(3, 5, layout="t"), rnd(5, 2)

    def f(x, w1, w2):
        return ((x @ w1).tanh() @ w2).sum()
    y = f(x, w1, w2)
    y.backward()
    xa, w1a, w2a = x.numpy(), w1.numpy(), w2.numpy()
    eps = 1e-6
    for t, a, which in ((x, xa, 0), (w1, w1a, 1), (w2, w2a, 2)):
        num = np.zeros_like(a)
        for idx in np.ndindex(*a.shape):
            vals = []
            for s in (1, -1):
                args = [xa.copy(), w1a.copy(), w2a.copy()]
                args[which][idx] += s * eps
                vals.append(np.tanh(args[0] @ args[1]) @ args[2])
            num[idx] = (vals[0].sum() - vals[1].sum()) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-6, atol=1e-8)
    assert ag.gradcheck(f, (x, w1, w2))
    assert ag.gradgradcheck(f, (x, w1, w2))


# ---------------------------------------------------------------- misc ops

def test_round_has_zero_gradient():
    x = rnd(3, 4)
    (T.round(x, 1) + T.around(x) * 2.0 + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))


def test_clip_bounds_scalars_none_and_tensors():
    check(lambda t: T.clip(t, -0.5, 0.5), rnd(3, 4, layout="t"))
    check(lambda t: T.clip(t, None, 0.2), rnd(3, 4))
    check(lambda t: t.clamp(-0.2), rnd(3, 4, layout="n"))
    check(lambda t, lo, hi: T.clip(t, lo, hi), rnd(3, 4), rnd(4), rnd(3, 1) + 1.0)
    check(lambda t, lo: T.clamp(t, lo), rnd(3, 4), rnd(3, 1))
    check(lambda t, hi: T.clip(t, None, hi), rnd(4), rnd(2, 4))


def test_clip_masks_exact():
    """PyTorch 2.14's shares: tensor bounds are maximum / minimum operands (ties split g), a
    scalar bound is strict (x on it gets 0)."""
    x = leaf([-2.0, -1.0, 0.0, 1.0, 2.0, 0.5])
    lo = leaf([-1.0, -1.0, -1.0, -1.0, -1.0, 3.0])  # the last pair has lo > hi: out is hi
    hi = leaf([1.0, 1.0, 1.0, 1.0, 1.0, 2.0])
    T.clip(x, lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0.5, 1, 0.5, 0, 0])
    np.testing.assert_array_equal(lo.grad.numpy(), [1, 0.5, 0, 0, 0, 0])
    np.testing.assert_array_equal(hi.grad.numpy(), [0, 0, 0, 0.5, 1, 1])
    w = leaf([0.3])
    T.clip(leaf([[-1.0, 0.0, 1.0], [0.5, 0.2, 0.4]]), None, w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0])
    for bounds, want in (((-1.0, 1.0), [0, 0, 1, 0, 0, 1]), ((1.0, -1.0), [0] * 6),
                         ((-1.0, None), [0, 0, 1, 1, 1, 1]), ((None, 1.0), [1, 1, 1, 0, 0, 1])):
        x = leaf([-2.0, -1.0, 0.0, 1.0, 2.0, 0.5])
        T.clip(x, *bounds).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), want)
    x = leaf([np.inf, 0.0, -np.inf])            # a clipped infinity passes no NaN
    T.clip(x * 1.0, -1.0, 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])


def test_clip_inplace():
    check(lambda t: (t * 1.0).clip_(-0.5, 0.5), rnd(3, 4))
    check(lambda t: (t + 0.0).clamp_(a_max=0.3), rnd(3, 4, layout="t"))
    lo = T.asarray(np.array([-0.2, 0.0, 0.1, 0.5]))
    check(lambda t: (t * 1.0).clip_(lo, None), rnd(3, 4))
    x, b = rnd(3), rnd(3)
    with pytest.raises(NotImplementedError, match="clip_"):
        (x * 1.0).clip_(b, None).sum().backward()


def test_clip_keyword_tensor_bounds_get_their_gradient_or_a_clear_error():
    x = leaf([-2.0, 0.0, 2.0])
    b = leaf([-1.0, -1.0, -1.0])
    T.clip(x, a_min=b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0])
    x, w = leaf([-2.0, 0.0, 2.0]), leaf([1.0, 1.0, 1.0])
    try:  # a_max by keyword after a skipped a_min: tracked, or refused; never silently dropped
        T.clip(x, a_max=w).sum().backward()
    except NotImplementedError as e:
        assert "keyword" in str(e)
    else:
        np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0, 1.0])


def test_astype_gradient_is_cast_back():
    x = leaf(arr(3, 4)).astype(T.float32).detach().requires_grad_()
    y = x.astype(T.float64)
    (y * T.asarray(arr(3, 4))).sum().backward()
    assert x.grad.dtype is T.float32 and x.grad.shape == (3, 4)
    check(lambda t: t.astype(T.float64, copy=True) * t, rnd(3, 4))


def test_contiguous_copy_clone_are_identities():
    check(lambda t: t.T.contiguous() * 2.0, rnd(3, 4, layout="t"))
    check(lambda t: PUB["copy"](t[::-1]) + t.clone() + t.T.copy().T, rnd(3, 4))


def test_copy_inplace():
    x, s = rnd(3, 4), leaf(arr(4)).astype(T.float32).detach().requires_grad_()
    w = arr(3, 4)
    y = x * 2.0
    y.copy_(s)
    (y * T.asarray(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))  # overwritten: no gradient
    assert s.grad.dtype is T.float32
    np.testing.assert_allclose(s.grad.numpy(), w.sum(0), rtol=1e-6)
    check(lambda t, s: (t * 1.0).copy_(s) * t, rnd(3, 4), rnd(3, 1))


def test_fill_and_zero_inplace():
    x, v = rnd(3, 4), leaf(0.7)
    w = arr(3, 4)
    y = x * 1.0
    y.fill_(v)
    (y * T.asarray(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))
    np.testing.assert_allclose(v.grad.numpy(), w.sum(), rtol=1e-14)
    check(lambda t, v: (t * 1.0).fill_(v) * t, rnd(2, 3), leaf(0.3))
    check(lambda t: (t * 1.0).fill_(2.5) + (t * 1.0).zero_() * t + t, rnd(2, 3))


def test_tril_triu():
    check(lambda t: T.tril(t) + T.triu(t, 1) * 2.0, rnd(3, 4, layout="t"))
    check(lambda t: t.tril(-1) * t.triu(-1), rnd(2, 3, 3))
    x = rnd(3, 3)
    T.tril(x, 0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.tril(np.ones((3, 3))))


# ---------------------------------------------------------------- jvp rules

def _copy_args(args):
    return [a.detach().copy() if isinstance(a, T.Tensor) else a for a in args]


def jvp_check(name, fn, args, kwargs=None, diff=None, inplace=False, eps=1e-6, rtol=1e-5,
              atol=None):
    """RULES[name].jvp on the real call's Ctx against (f(x + e t) - f(x - e t)) / 2e."""
    kwargs = kwargs or {}
    args = [a.detach() if isinstance(a, T.Tensor) else a for a in args]
    diff = range(len(args)) if diff is None else diff
    tans = tuple(T.asarray(RNG.standard_normal(a.shape)) if isinstance(a, T.Tensor) and i in diff
                 and a.dtype is T.float64 else None for i, a in enumerate(args))
    call = _copy_args(args) if inplace else list(args)
    with ag.no_grad():
        out = fn(*call, **kwargs)
    got = RULES[name].jvp(Ctx(tuple(call), kwargs, out), tans)

    def at(s):
        moved = [a + s * eps * t if t is not None else a for a, t in zip(args, tans)]
        return fn(*(_copy_args(moved) if inplace else moved), **kwargs).numpy()
    expected = (at(1) - at(-1)) / (2 * eps)
    assert got.shape == out.shape and got.dtype is out.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=rtol / 100 if atol is None else atol)


def _layout_args(shapes, layout="c"):
    return [leaf(arr(*s), layout) for s in shapes]


JVP_CASES = [
    ("sum", PUB["sum"], [(3, 4)], {"axis": 1, "keepdims": True}),
    ("sum", PUB["sum"], [(3, 4)], {"dim": 0, "dtype": T.float64}),
    ("mean", PUB["mean"], [(2, 3, 2)], {"axis": (0, 2)}),
    ("prod", PUB["prod"], [(3, 4)], {"axis": 1}),
    ("prod", PUB["prod"], [(2, 3)], {}),
    ("var", PUB["var"], [(3, 4)], {"axis": 1, "ddof": 1}),
    ("var", PUB["var"], [(4, 3)], {"dim": 0, "correction": 2, "keepdims": True}),
    ("std", PUB["std"], [(3, 4)], {"axis": 0}),
    ("max", PUB["max"], [(3, 4)], {"axis": 1}),
    ("min", PUB["min"], [(3, 4)], {}),
    ("amax", PUB["amax"], [(2, 3, 2)], {"axis": (0, 2), "keepdims": True}),
    ("amin", PUB["amin"], [(2, 3, 2)], {"dim": -1}),
    ("logsumexp", PUB["logsumexp"], [(3, 4)], {"axis": 1}),
    ("logsumexp", PUB["logsumexp"], [(2, 3)], {"keepdims": True}),
    ("cumsum", PUB["cumsum"], [(3, 4)], {"axis": 1}),
    ("cumsum", PUB["cumsum"], [(3, 4)], {}),
    ("cumprod", PUB["cumprod"], [(3, 4)], {"axis": 0}),
    ("cumprod", PUB["cumprod"], [(2, 3)], {}),
    ("matmul", PUB["matmul"], [(2, 1, 3, 4), (5, 4, 2)], {}),
    ("matmul", PUB["matmul"], [(4,), (2, 4, 3)], {}),
    ("matmul", PUB["matmul"], [(4,), (4,)], {}),
    ("dot", PUB["dot"], [(2, 2, 3), (4, 3, 2)], {}),
    ("dot", PUB["dot"], [(3,), (3, 2)], {}),
    ("tensordot", PUB["tensordot"], [(2, 3, 4), (4, 2, 3)], {"axes": ([2, 0], [0, 1])}),
    ("inner", PUB["inner"], [(2, 3), (4, 3)], {}),
    ("outer", PUB["outer"], [(2, 3), (4,)], {}),
    ("tril", PUB["tril"], [(3, 4)], {"k": 1}),
    ("triu", PUB["triu"], [(2, 3, 3)], {}),
    ("astype", lambda t: PUB["astype"](t, T.float64), [(3, 4)], {}),
    ("contiguous", PUB["contiguous"], [(3, 4)], {}),
    ("copy", PUB["copy"], [(3, 4)], {}),
]


@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("i", range(len(JVP_CASES)))
def test_jvp_rules(i, layout):
    name, fn, shapes, kw = JVP_CASES[i]
    jvp_check(name, fn, _layout_args(shapes, layout), kw)


def test_jvp_to_a_lower_precision_output():
    # sum is linear: a large step keeps float32 rounding out of the finite difference
    # (the outputs round to float32 at both ends of the difference: atol ~ their ulp, whatever
    # values the shared RNG gives in this test's place in the run)
    jvp_check("sum", PUB["sum"], [leaf(arr(3, 4))], {"dim": 0, "dtype": T.float32}, eps=0.5,
              rtol=1e-5, atol=1e-6)
    jvp_check("astype", lambda t: t.astype(T.float32), [leaf(arr(3, 4))], eps=0.5, rtol=1e-6,
              atol=1e-6)


def test_jvp_with_zeros_and_ties():
    z = leaf([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 1.0], [1.0, 2.0, 0.5, -0.7]])
    jvp_check("prod", PUB["prod"], [z], {"axis": 1})
    jvp_check("cumprod", PUB["cumprod"], [z], {"axis": 1})
    jvp_check("cumprod", PUB["cumprod"], [z], {"axis": 0})
    # ties: the tangent is the mean of the tied tangents (finite differences do not apply)
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    t = T.asarray(np.array([[5.0, 1.0, 2.0], [3.0, 6.0, 9.0]]))
    got = RULES["max"].jvp(Ctx((x.detach(), 1), {}, T.max(x.detach(), 1)), (t, None))
    np.testing.assert_array_equal(got.numpy(), [1.5, 6.0])


def test_jvp_clip_and_inplace_rules():
    x, lo, hi = leaf(arr(3, 4)), leaf(arr(4) - 0.5), leaf(arr(3, 1) + 0.5)
    jvp_check("clip", PUB["clip"], [x, lo, hi])
    jvp_check("clip", PUB["clip"], [x, -0.3, hi])
    jvp_check("clip", PUB["clip"], [x, None, 0.2])
    jvp_check("clip_", PUB["clip_"], [x, -0.3, 0.4], inplace=True)
    jvp_check("copy_", PUB["copy_"], [x, leaf(arr(4))], inplace=True)
    jvp_check("fill_", PUB["fill_"], [x, leaf(0.5)], inplace=True)
    jvp_check("round", PUB["round"], [x])
    with pytest.raises(NotImplementedError, match="clip_"):
        jvp_check("clip_", PUB["clip_"], [x, lo, None], inplace=True)
    out = PUB["zero_"](x.detach().copy())
    got = RULES["zero_"].jvp(Ctx((out,), {}, out), (T.ones((3, 4), dtype=T.float64),))
    np.testing.assert_array_equal(got.numpy(), np.zeros((3, 4)))


def test_forward_mode_end_to_end():
    from autograd import forward
    x, w1, w2 = rnd(4, 3), rnd(3, 5), rnd(5, 2)
    tx = T.asarray(arr(4, 3))
    f = lambda x: T.logsumexp(T.cumsum((x @ w1).tanh() @ w2, axis=0), axis=1).var()  # noqa: E731
    _, tan = forward.jvp(f, (x,), (tx,))
    eps = 1e-6
    num = (f(x.detach() + eps * tx).numpy() - f(x.detach() - eps * tx).numpy()) / (2 * eps)
    np.testing.assert_allclose(tan.numpy(), num, rtol=1e-6)

