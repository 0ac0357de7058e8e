"""The autograd engine: backward/grad semantics, graph bookkeeping, hooks, custom functions,
and the errors of the spec. Elementwise rules are checked against finite differences,
generated from the op table: every op with a float result, whether or not it has a rule (one
without fails here; tests/test_optable.py checks the table declares one)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import Function, gradcheck, gradgradcheck
from autograd.graph import RULES, Ctx
from tensor.optable import BINARY, NO_RULE, UNARY, ZERO

pytestmark = pytest.mark.usefixtures("device")

RNG = np.random.default_rng(7)


def leaf(a):
    return T.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def _inputs_for(domain, shape):
    x = RNG.uniform(-1.5, 1.5, shape)
    if domain in ("positive", "nonzero"):
        x = RNG.uniform(0.3, 2.0, shape)
    elif domain == "unit":
        x = RNG.uniform(-0.8, 0.8, shape)
    elif domain == "gt_m1":
        x = RNG.uniform(-0.5, 2.0, shape)
    elif domain == "ge1":
        x = RNG.uniform(1.2, 3.0, shape)
    return x


# every op with a float result but those the table declares without a derivative (NO_RULE)
DIFF_UNARY = [op for op in UNARY if "f" in op.kinds and not op.out_bool and op.grad != NO_RULE]
# (zeta has a derivative in its second operand only: tests/test_math_extra.py)
DIFF_BINARY = [op for op in BINARY if "f" in op.kinds and not op.out_bool and op.grad != NO_RULE
               and op.name != "zeta"]


@pytest.mark.parametrize("op", DIFF_UNARY, ids=lambda o: o.name)
def test_unary_rules_match_finite_differences(op):
    x = leaf(_inputs_for(op.domain, (2, 3)))
    fn = getattr(T, op.name)
    assert gradcheck(lambda t: fn(t), (x,))
    xt = leaf(_inputs_for(op.domain, (3, 2))).T  # a transposed (non-contiguous) input
    assert gradcheck(lambda t: fn(t), (xt,))
    # abs: a kink, second differences jump; lgamma: its derivative, digamma, has none (NO_RULE)
    if op.grad != ZERO and op.name not in ("abs", "lgamma"):
        assert gradgradcheck(lambda t: fn(t), (x,))


@pytest.mark.parametrize("op", DIFF_BINARY, ids=lambda o: o.name)
def test_binary_rules_with_broadcasting(op):
    a = leaf(_inputs_for("positive" if op.name == "power" else op.domain, (2, 3)))
    b = leaf(_inputs_for("nonzero" if op.domain == "nonzero_b" or op.name in ("power", "true_divide",
                                                                          "xlogy")
                         else "any", (3,)))
    fn = getattr(T, op.name)
    if op.name in ("floor_divide",):
        assert gradcheck(lambda x, y: fn(x, y), (a, b), atol=1e-4)
        return
    assert gradcheck(lambda x, y: fn(x, y), (a, b))
    assert gradgradcheck(lambda x, y: fn(x, y), (a, b))
    assert gradcheck(lambda x: fn(x, 1.7), (a,))  # a Python scalar operand
    assert gradcheck(lambda y: fn(2.5, y), (b,))


@pytest.mark.parametrize("op", DIFF_UNARY + DIFF_BINARY, ids=lambda o: o.name)
def test_jvp_rules_match_directional_finite_differences(op):
    dom = "positive" if op.name == "power" else op.domain
    args = [T.asarray(_inputs_for(dom, (4,)))]
    if op.arity == 2:
        args.append(T.asarray(_inputs_for("nonzero" if op.name in ("power", "true_divide",
                                                                    "remainder", "floor_divide", "fmod",
                                                                    "xlogy")
                                          else "any", (4,))))
    tans = [T.asarray(RNG.standard_normal(4)) for _ in args]
    fn = getattr(T, op.name)
    out = fn(*args)
    got = RULES[op.name].jvp(Ctx(tuple(args), {}, out), tuple(tans))
    eps = 1e-6
    plus = fn(*[a + eps * t for a, t in zip(args, tans)]).numpy()
    minus = fn(*[a - eps * t for a, t in zip(args, tans)]).numpy()
    expected = (plus - minus) / (2 * eps)
    got = np.broadcast_to(np.asarray(got.numpy() if hasattr(got, "numpy") else got), expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_power_and_arctan2_derivatives_at_zero_are_pytorchs():
    """x ** 0 has derivative 0 at x == 0 (the rule's 0 * 0^-1 had made NaN), to every order and
    in forward mode; arctan2's at (0, 0) is 0 for both operands (not 0 / 0)."""
    x = leaf(np.array([0.0, 1.5, -2.0]))
    for b in (0, 0.0, T.zeros(3)):
        assert autograd.grad((x ** b).sum(), [x])[0].tolist() == [0.0, 0.0, 0.0]
    g = x
    for order, want in ((1, [0.0, 3.0, -4.0]), (2, [2.0, 2.0, 2.0]), (3, [0.0, 0.0, 0.0])):
        g = autograd.grad((g if order > 1 else x ** 2).sum(), [x], create_graph=True)[0]
        assert g.tolist() == want, order
    g1 = autograd.grad((x ** 1).sum(), [x], create_graph=True)[0]
    g2 = autograd.grad(g1.sum(), [x], allow_unused=True)[0]
    assert g2 is None or g2.tolist() == [0.0, 0.0, 0.0]
    _, tan = autograd.forward.jvp(lambda v: v ** 0.0, (T.asarray(np.zeros(2)),),
                                  (T.asarray(np.ones(2)),))
    assert tan.tolist() == [0.0, 0.0]
    a, b = leaf(np.array([0.0, 1.0])), leaf(np.array([0.0, 2.0]))
    ga, gb = autograd.grad(T.arctan2(a, b).sum(), [a, b])
    np.testing.assert_allclose(ga.numpy(), [0.0, 0.4])
    np.testing.assert_allclose(gb.numpy(), [0.0, -0.2])


def test_adjoints_of_a_reused_tensor_are_summed():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x + 3.0 * x + x
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]) + 4.0)


def test_broadcast_operand_gradients_are_reduced_to_its_shape():
    a = leaf(RNG.standard_normal((4, 3)))
    b = leaf(RNG.standard_normal((3,)))
    c = leaf(RNG.standard_normal((4, 1)))
    ((a * b) + c).sum().backward()
    assert b.grad.shape == (3,) and c.grad.shape == (4, 1)
    np.testing.assert_allclose(b.grad.numpy(), a.numpy().sum(axis=0))
    np.testing.assert_allclose(c.grad.numpy(), np.full((4, 1), 3.0))


def test_grad_accumulates_across_backward_calls_and_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])
    (g,) = autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])


def test_leaf_and_graph_attributes():
    x = leaf([1.0])
    y = x * 2
    assert x.is_leaf and x.grad_fn is None and not y.is_leaf and y.requires_grad
    assert repr(y.grad_fn) == "<MultiplyBackward0>"
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and T.shares_memory(d, y)
    with pytest.raises(RuntimeError, match="only floating-point"):
        T.arange(3).requires_grad_()


def test_backward_inputs_restricts_accumulation():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])


def test_no_grad_enable_grad_set_grad_enabled_as_contexts_and_decorators():
    x = leaf([1.0])
    with autograd.no_grad():
        assert not (x * 2).requires_grad
        with autograd.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @autograd.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad and autograd.is_grad_enabled()
    autograd.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        autograd.set_grad_enabled(True)
    with autograd.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert (x + 1).requires_grad


def test_higher_order_derivatives_and_hessian_vector_product():
    x = leaf([0.5, -1.0, 2.0])
    y = (x * x * x).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    v = T.tensor([1.0, 0.0, 2.0])
    (hv,) = autograd.grad((g * v).sum(), x)
    np.testing.assert_allclose(hv.numpy(), 6 * x.numpy() * v.numpy())


def test_hooks_can_observe_and_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[30.0, 30.0]]
    np.testing.assert_array_equal(x.grad.numpy(), [30.0, 30.0])
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert seen == [[30.0, 30.0]]


def test_retain_grad_keeps_non_leaf_gradients():
    x = leaf([1.0, 2.0])
    y = x * x
    y.retain_grad()
    (y * 2).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0])


def test_custom_function_with_ctx_save_for_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, t, scale):
            ctx.save_for_backward(t)
            ctx.scale = scale
            return t * t * t * scale

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 3 * t * t * ctx.scale, None

    x = leaf([1.0, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 24.0])


def test_custom_function_returning_its_input_leaves_the_input_alone():
    """Marking the returned input itself rewrote every other use of it: (x * 2).sum() then took
    the custom backward (gradient 20, not 2) and the leaf x was no longer a leaf."""
    class Ident10(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 10

    x = leaf([1.0, 1.0])
    y = Ident10.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None and y.grad_fn is not None
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    x.grad = None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 10.0])
    w = leaf([1.0, 1.0])
    h = w * 3
    Ident10.apply(h)
    (h * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 6.0])


def test_custom_function_materializes_zero_grads_for_unused_outputs():
    class Twice(Function):
        @staticmethod
        def forward(ctx, a, materialize):
            ctx.set_materialize_grads(materialize)
            b = a * 2
            return b, b          # one tensor returned twice: two outputs

        @staticmethod
        def backward(ctx, g1, g2):
            if g1 is None:
                return 5 * g2, None
            return g1 + 3 * g2, None

    x = leaf([1.0, 2.0])
    p, q = Twice.apply(x, True)
    assert p is not q
    q.sum().backward()           # g1 is zeros, as PyTorch's default
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    x.grad = None
    Twice.apply(x, False)[1].sum().backward()    # set_materialize_grads(False): None
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])


def test_same_program_gives_bitwise_identical_gradients():
    def run():
        x = T.tensor(np.linspace(-2, 2, 1000), requires_grad=True)
        w = T.tensor(np.linspace(0, 1, 1000), requires_grad=True)
        ((T.tanh(x * w) + T.exp(-x * x)) * w).sum().backward()
        return x.grad.numpy().tobytes(), w.grad.numpy().tobytes()
    assert run() == run()


# ---------------------------------------------------------------- errors of the spec

def test_second_backward_without_retain_graph_says_so():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()  # fine: the graph was kept
    np.testing.assert_array_equal(x.grad.numpy(), [2.0 + 4.0, 4.0 + 8.0])


def test_non_scalar_backward_without_gradient_names_the_shape():
    x = leaf([[1.0, 2.0]])
    with pytest.raises(RuntimeError, match=r"\(1, 2\)"):
        (x * 2).backward()
    (x * 2).backward(T.ones((1, 2)))
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 2.0]])


def test_grad_outputs_of_the_wrong_shape_names_both_shapes():
    x = leaf([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        autograd.grad(x * 2, x, grad_outputs=T.ones(3))


def test_grad_of_a_tensor_outside_the_graph_needs_allow_unused():
    x, z = leaf([1.0]), leaf([2.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [2.0]


def test_in_place_change_of_a_saved_tensor_is_caught_at_backward():
    x = leaf([1.0, 2.0])
    h = x * 2
    y = h * h  # saves h
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_in_place_on_a_leaf_that_requires_grad_raises_at_once():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        x *= 2
    with autograd.no_grad():
        x.add_(1.0)  # allowed: no recording
    assert x.tolist() == [2.0, 3.0]


def test_in_place_ops_on_non_leaves_are_differentiated():
    x = leaf([1.0, 2.0])
    y = x * 2
    y += 1.0
    y *= 3.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_an_op_without_a_rule_is_a_clear_error_not_a_wrong_gradient():
    x = leaf([1.0, 2.0])
    y = x * 1
    with pytest.raises(NotImplementedError, match="nextafter_"):   # (no derivative)
        y.nextafter_(T.asarray([0.0, 0.0]))
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 2.0])   # refused before the write


def test_in_place_through_a_view_of_a_graph_tensor_is_differentiated():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1.0
    y[0:2].mul_(3.0)   # through a view: y's graph sees it
    y[1] = 7.0         # through the base itself
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0, 1.0])


def test_in_place_through_a_view_of_a_leaf_is_refused():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="view .* leaf"):
        x[0:2].add_(1.0)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0, 4.0])


def test_tensors_passed_by_keyword_get_gradients():
    x, s = leaf([1.0, 2.0, 3.0]), leaf([10.0])
    y = T.index_add(x * 1.0, 0, T.tensor([1]), source=s)
    y.sum().backward()
    np.testing.assert_array_equal(s.grad.numpy(), [1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])


def test_rules_bind_matches_inspect():
    """rules_util.bind (the rules' fast argument binding) gives inspect's binding, defaults
    applied and in parameter order, for positional and keyword calls, and inspect's errors."""
    import inspect

    from autograd.rules_util import bind

    def f(a, b=2, *c, d, e=5): pass
    def g(a, /, b, c=3, *, d=4, **kw): pass
    def h(x, axis=0, keepdims=False): pass
    for fn, args, kwargs in [(f, (1,), {"d": 1}), (f, (1, 2, 3, 4), {"d": 1, "e": 0}),
                             (f, (), {"a": 1, "d": 2}), (g, (1, 2), {}), (g, (1,), {"b": 2, "z": 3}),
                             (h, (1,), {"keepdims": True}), (h, (1,), {"axis": 1}), (h, (), {"x": 1})]:
        sig = inspect.signature(fn)
        want = sig.bind(*args, **kwargs)
        want.apply_defaults()
        got = bind(sig, args, kwargs)
        assert list(got.items()) == list(want.arguments.items()), (fn, args, kwargs)
    for fn, args, kwargs, msg in [(h, (1,), {"x": 2}, "multiple values"), (h, (), {}, "missing"),
                                  (f, (1,), {}, "missing")]:
        with pytest.raises(TypeError, match=msg):
            bind(inspect.signature(fn), args, kwargs)


def test_function_mark_non_differentiable_and_mark_dirty():
    class SortWithIndices(Function):
        @staticmethod
        def forward(ctx, x):
            i = T.argsort(x)
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return x[i], i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            g = T.zeros_like(gv)
            g[i] = gv
            return g

    x = leaf(np.array([3.0, 1.0, 2.0]))
    v, i = SortWithIndices.apply(x)
    assert v.requires_grad and not i.requires_grad and i.grad_fn is None
    (v * T.asarray(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 2.0]

    class Double_(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    a = leaf(np.array([1.0, 2.0]))
    b = a * 1.0
    c = Double_.apply(b)
    assert c is b and b.tolist() == [2.0, 4.0] and type(b.grad_fn).__name__ != "NoneType"
    (c * c).sum().backward()
    assert a.grad.tolist() == [8.0, 16.0]                  # d/da (2a)^2
    with pytest.raises(RuntimeError, match="Double_: a leaf tensor that requires grad was modified"):
        Double_.apply(leaf(np.array([1.0])))
