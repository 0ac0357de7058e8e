"""The graph's nodes as PyTorch's torch.autograd.graph.Node (name, next_functions, metadata,
register_prehook, register_hook), GradientEdge / get_gradient_edge, increment_version,
register_multi_grad_hook and Tensor._version / output_nr; against PyTorch where installed."""
import numpy as np
import pytest

import autograd
import tensor as T
from autograd.graph import AccumulateGrad, Node


def test_names_and_next_functions(device):
    a = T.tensor([1.0, 2.0], requires_grad=True, device=device)
    c = T.tensor([3.0, 4.0], device=device)
    b = T.exp(a) * c
    assert b.grad_fn.name() == "MultiplyBackward0" and repr(b.grad_fn) == "<MultiplyBackward0>"
    (e0, n0), (e1, n1) = b.grad_fn.next_functions
    assert e0.name() == "ExpBackward0" and n0 == 0 and (e1, n1) == (None, 0)   # c needs none
    acc, nr = e0.next_functions[0]
    assert isinstance(acc, AccumulateGrad) and acc.name() == "AccumulateGrad" and nr == 0
    assert acc.variable is a and acc.next_functions == ()
    assert isinstance(acc, Node) and isinstance(b.grad_fn, Node) and not isinstance(a, Node)
    assert a.grad_fn is None and a.is_leaf


def test_custom_function_name_and_output_nr():
    class Twice(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = T.ones(3, requires_grad=True)
    p, q = Twice.apply(x)
    assert p.grad_fn.name() == "TwiceBackward" and p.grad_fn is q.grad_fn
    assert (p.output_nr, q.output_nr, x.output_nr) == (0, 1, 0)


def test_metadata_is_per_node_and_kept():
    x = T.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.metadata["tag"] = "scale"
    assert y.grad_fn.metadata == {"tag": "scale"} and (x + 1).grad_fn.metadata == {}


def test_hook_order_and_values_match_pytorch(device):
    """tensor hook, retain_grad, node pre-hook, the node, node post-hook: PyTorch's order."""
    a = T.tensor([1.0, 2.0], requires_grad=True, device=device)
    b = a * 3
    b.retain_grad()
    b.register_hook(lambda g: g * 10)
    b.grad_fn.register_prehook(lambda g_out: (g_out[0] * 2,))
    seen = []
    b.grad_fn.register_hook(lambda g_in, g_out: seen.append((g_in[0].tolist(), g_out[0].tolist())))
    b.sum().backward()
    assert b.grad.tolist() == [10.0, 10.0]          # retained after the tensor hook only
    assert a.grad.tolist() == [60.0, 60.0]
    assert seen == [([60.0, 60.0], [20.0, 20.0])]


def test_post_hook_replaces_grad_inputs_and_handles_remove():
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    h = b.grad_fn.register_hook(lambda g_in, g_out: (g_out[0] * 2,))
    b.sum().backward(retain_graph=True)
    assert a.grad.tolist() == [2.0, 2.0]
    h.remove()
    h.remove()   # twice: nothing
    a.grad = None
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]


def test_accumulate_grad_hooks():
    a = T.tensor([1.0, 2.0], requires_grad=True)
    acc = (a * 1).grad_fn.next_functions[0][0]
    log = []
    acc.register_prehook(lambda g_out: log.append(("pre", a.grad)) or (g_out[0] * 5,))
    acc.register_hook(lambda g_in, g_out: log.append(("post", g_in, g_out[0].tolist(), a.grad.tolist())))
    (a * 2).sum().backward()
    assert a.grad.tolist() == [10.0, 10.0]
    assert log == [("pre", None), ("post", (), [10.0, 10.0], [10.0, 10.0])]


def test_bad_hook_results_raise_clear_errors():
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.grad_fn.register_prehook(lambda g: g[0])   # a tensor, not a tuple
    with pytest.raises(TypeError, match="MultiplyBackward0.*tuple"):
        b.sum().backward()
    b = a * 2
    b.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="returned 2 value"):
        b.sum().backward()
    b = a * 2
    b.grad_fn.register_hook(lambda gi, go: (gi[0][:1],))
    with pytest.raises(ValueError, match="shape"):
        b.sum().backward()
    b = a * T.ones(2)
    b.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, None))   # one per input; None: needs none
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]
    a.grad = None
    with pytest.raises(TypeError, match="callable"):
        b.grad_fn.register_prehook(3)
    b = a * 2

    def boom(g):
        raise KeyError("x")
    b.grad_fn.register_prehook(boom)
    with pytest.raises(KeyError) as info:
        b.sum().backward()
    assert "pre-hook 'test_bad_hook_results_raise_clear_errors.<locals>.boom'" in str(info.value.__notes__)
    # nothing was left broken: a fresh graph differentiates as usual
    a.grad = None
    (a * 3).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]


def test_pre_hook_not_run_when_the_node_is_not_needed():
    """autograd.grad with respect to y itself: y's node never runs, so its pre-hook neither."""
    x = T.ones(2, requires_grad=True)
    y = x * 2
    ran = []
    y.grad_fn.register_prehook(lambda g: ran.append(1))
    (g,) = autograd.grad(y.sum(), y)
    assert g.tolist() == [1.0, 1.0] and ran == []


def test_gradient_edge_and_increment_version():
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    edge = autograd.graph.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    z = (y * 2).sum()
    (gy,) = autograd.grad(z, edge, retain_graph=True)
    assert gy.tolist() == [2.0, 2.0, 2.0]
    gx, gy2 = autograd.grad(z, [x, edge])
    assert gx.tolist() == [4.0, 8.0, 12.0] and gy2.tolist() == [2.0, 2.0, 2.0]
    leaf = autograd.graph.get_gradient_edge(x)
    assert leaf.node.name() == "AccumulateGrad"
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.graph.get_gradient_edge(T.ones(2))
    with pytest.raises(RuntimeError, match="not part of the graph"):
        autograd.grad((x * 2).sum(), edge)
    # increment_version: a write autograd did not see makes backward refuse the saved tensor
    w = T.tensor([1.0, 2.0], requires_grad=True)
    s = w * 1
    out = (s * s).sum()
    v = s._version
    autograd.graph.increment_version(s)
    assert s._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.backward()


def test_version_counter_follows_in_place_writes():
    x = T.zeros(4)
    v = x[1:]
    before = x._version
    v += 1
    assert x._version == v._version == before + 1


def test_multi_grad_hook_all_and_any():
    a, b, c = (T.ones(2, requires_grad=True) for _ in range(3))
    got = []
    h = autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: got.append(
        [None if g is None else g.tolist() for g in gs]))
    (a * 2 + b * 3).sum().backward()
    assert got == [[[2.0, 2.0], [3.0, 3.0], None]]
    (c * 4).sum().backward()       # a new pass: called again
    assert got[1] == [None, None, [4.0, 4.0]]
    h.remove()
    (a * 2).sum().backward()
    assert len(got) == 2
    first = []
    autograd.graph.register_multi_grad_hook((a, b), lambda g: first.append(g.tolist()), mode="any")
    (a * 5 + b * 7).sum().backward()
    assert len(first) == 1 and first[0] in ([5.0, 5.0], [7.0, 7.0])
    with pytest.raises(ValueError, match="mode"):
        autograd.graph.register_multi_grad_hook((a,), print, mode="some")
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.graph.register_multi_grad_hook((T.ones(1),), print)


def test_saved_hooks_names_on_graph():
    assert autograd.graph.saved_tensors_hooks is autograd.saved_tensors_hooks
    assert autograd.graph.save_on_cpu is autograd.save_on_cpu


def test_against_pytorch_graph_walk():
    """Walking next_functions from a small MLP's loss reaches the same node kinds, leaf count
    and depth as PyTorch's graph (names differ where our op names differ)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w1, w2, xb = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal((5, 4))

    def walk(root):
        leaves, seen, depth = 0, set(), 0
        frontier = [root]
        while frontier:
            depth += 1
            nxt = []
            for n in frontier:
                for m, _ in n.next_functions:
                    if m is None or id(m) in seen:
                        continue
                    seen.add(id(m))
                    if m.name().endswith("AccumulateGrad"):
                        leaves += 1
                    else:
                        nxt.append(m)
            frontier = nxt
        return leaves, depth

    tw1, tw2 = (torch.tensor(w, requires_grad=True) for w in (w1, w2))
    tl = torch.tanh(torch.tensor(xb) @ tw1) @ tw2
    ow1, ow2 = (T.tensor(w, requires_grad=True) for w in (w1, w2))
    ol = T.tanh(T.tensor(xb) @ ow1) @ ow2
    assert walk(tl.sum().grad_fn) == walk(ol.sum().grad_fn) == (2, 4)


def test_repr_shows_autograd_state():
    """As PyTorch's repr: grad_fn=<...> on a result, requires_grad=True on a leaf."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], dtype=float64, device=cpu, requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], dtype=float64, device=cpu, grad_fn=<MultiplyBackward0>)"
    assert T.array_repr(T.exp(x)).endswith("grad_fn=<ExpBackward0>)")
    assert repr(x.detach()) == "tensor([1., 2.], dtype=float64, device=cpu)"


def test_jacobians_of_parameter_dicts():
    """jacrev / jacfwd / hessian take a dict (any tuple / list / dict tree) of tensors, as
    torch.func does for a model's parameters: blocks in the argument's tree (raised TypeError)."""
    from autograd.func import hessian, jacfwd, jacrev
    rng = np.random.default_rng(0)
    w, b, x = rng.standard_normal((3, 2)), rng.standard_normal(3), rng.standard_normal(2)
    p = {"W": T.asarray(w), "b": T.asarray(b)}

    def f(p, x):
        return T.tanh(p["W"] @ x + p["b"])
    y = np.tanh(w @ x + b)
    d = 1 - y ** 2                                   # dy_i / dz_i
    for jac in (jacrev, jacfwd):
        J = jac(f)(p, T.asarray(x))
        assert set(J) == {"W", "b"} and J["W"].shape == (3, 3, 2) and J["b"].shape == (3, 3)
        np.testing.assert_allclose(J["b"].numpy(), np.diag(d), atol=1e-12)
        np.testing.assert_allclose(J["W"].numpy(), np.einsum("ij,k->ijk", np.diag(d), x), atol=1e-12)
    H = hessian(lambda p, x: (f(p, x) ** 2).sum())(p, T.asarray(x))
    assert H["W"]["b"].shape == (3, 2, 3) and H["b"]["b"].shape == (3, 3)
    hb = np.diag(2 * d * d - 4 * y * y * d)          # d2/db2 sum tanh(z)^2
    np.testing.assert_allclose(H["b"]["b"].numpy(), hb, atol=1e-12)
    a, c = jacrev(lambda u, v: u * v, argnums=(0, 1))(T.ones(2), T.tensor([2.0, 3.0]))
    assert np.array_equal(a.numpy(), np.diag([2.0, 3.0])) and np.array_equal(c.numpy(), np.eye(2))
    with pytest.raises(TypeError, match="tuple / list / dict of tensors"):
        jacrev(lambda d: d["a"])({"a": 1.0})
