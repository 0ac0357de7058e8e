"""Review of the day's autograd graph API and tensor features (hunt 10): each test caught a bug
(its repro: /tmp/hunt10/review/repro_N.py, where PyTorch's behaviour is shown) and checks real
values against NumPy or the closed form."""
import threading
import warnings

import numpy as np
import pytest

import autograd
import tensor as T


def test_grad_does_not_hook_tensors_off_the_path():
    # repro_1: autograd.grad(out, x) ran w's hook (and computed its gradient), as a gradient
    # penalty would with every parameter; PyTorch never reaches w
    seen = []
    w = T.tensor([2.0, 3.0], requires_grad=True)
    x = T.tensor([1.0, 1.0], requires_grad=True)
    w.register_hook(lambda g: seen.append(g.tolist()))
    out = (w * x).sum()
    (g,) = autograd.grad(out, x, retain_graph=True)
    np.testing.assert_array_equal(g.numpy(), np.array([2.0, 3.0]))
    assert seen == []
    out.backward(inputs=[w])
    assert seen == [[1.0, 1.0]] and x.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), np.array([1.0, 1.0]))


def test_multi_grad_hook_sees_only_the_inputs_of_grad():
    # repro_1: register_multi_grad_hook reported b's gradient in autograd.grad(out, [a])
    a0, b0 = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([3.0], requires_grad=True)
    a, b = a0 * 1, b0 * 1
    got = []
    autograd.graph.register_multi_grad_hook(
        (a, b), lambda gs: got.append([None if g is None else g.tolist() for g in gs]))
    out = (a * b).sum()
    autograd.grad(out, [a], retain_graph=True)
    out.backward(inputs=[b0])
    assert got == [[[3.0, 3.0], None], [None, [3.0]]]


def test_compiled_step_with_node_hooks_runs_them_every_call():
    # repro_2: replays skipped the node hooks of w's AccumulateGrad silently
    w = T.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    acc = autograd.graph.get_gradient_edge(w).node
    acc.register_prehook(lambda go: (calls.append("pre"), (go[0] * 10,))[1])

    @T.compile
    def step(x):
        w.grad = None
        (w * x).sum().backward()
        return w.grad

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            np.testing.assert_array_equal(step(T.tensor([1.0, 2.0])).numpy(), np.array([10.0, 20.0]))
    assert calls == ["pre"] * 4
    assert any("pre-hook" in str(m.message) and "AccumulateGrad" in str(m.message) for m in caught)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("key, value", [([[0, 1], [2, 3]], [1.0, 2.0]), ([[0, 1], [2, 3]], np.array(5.0)),
                                        (slice(None), []), (slice(2, None, 3), [])])
def test_flat_setitem_matches_numpy(device, key, value, transposed):
    # repro_3: a 2-D key (or a 0-d value) raised "shape mismatch", an empty value raised
    a = np.arange(12.0).reshape(3, 4)
    t = T.asarray(a, device=device)
    if transposed:
        a, t = a.T, t.T
    a.flat[key] = value
    t.flat[key] = value
    np.testing.assert_array_equal(t.cpu().numpy(), a)


def test_flat_single_element_from_several_values_raises():
    # repro_3: x.flat[3] = [1, 2] silently wrote the first value; NumPy raises
    a = np.arange(6.0)
    with pytest.raises(ValueError):
        a.flat[3] = [1.0, 2.0]
    t = T.arange(6.0)
    with pytest.raises(ValueError, match="single element"):
        t.flat[3] = [1.0, 2.0]
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0))


@pytest.mark.parametrize("idx, v", [([], [1.0]), ([True, False], [5.0, 6.0])])
def test_np_put_empty_and_boolean_indices(idx, v):
    # repro_4: TypeError for both; NumPy does nothing / uses 0 and 1
    a, t = np.zeros(3), T.zeros(3)
    np.put(a, idx, v)
    assert np.put(t, idx, v) is None
    np.testing.assert_array_equal(t.numpy(), a)


def test_reshape_order_a_forward_mode_follows_the_primal():
    # repro_5: the tangent was reshaped by its own (C) layout while the primal, Fortran-
    # contiguous, was reshaped in F order
    A = np.arange(12.0).reshape(3, 4)
    t = np.arange(12.0).reshape(4, 3) * 10
    y, jv = autograd.jvp(lambda z: T.reshape(z, (2, 6), order="A"), (T.asarray(A).T,), (T.asarray(t),))
    np.testing.assert_array_equal(y.numpy(), np.reshape(A.T, (2, 6), order="A"))
    np.testing.assert_array_equal(jv.numpy(), np.reshape(t, (2, 6), order="F"))


@pytest.mark.parametrize("a", [np.diag([1.0, 0.0, -2.0]), np.zeros((2, 2)),
                               np.diag([0.0, 3.0]).astype(np.complex128)])
def test_svd_hermitian_zero_eigenvalue_keeps_vh_unitary(device, a):
    # repro_6: sign(0) = 0 zeroed Vh's row; NumPy uses copysign(1, eigenvalue)
    u, s, vh = np.linalg.svd(a, hermitian=True)
    U, S, Vh = (r.cpu().numpy() for r in T.linalg.svd(T.asarray(a, device=device), hermitian=True))
    np.testing.assert_allclose(S, s, atol=1e-12)
    np.testing.assert_allclose(Vh @ Vh.conj().T, np.eye(len(a)), atol=1e-12)
    np.testing.assert_allclose(Vh, vh, atol=1e-12)
    np.testing.assert_allclose((U * S) @ Vh, a, atol=1e-12)


def test_backward_inputs_runs_accumulate_grad_node_hooks():
    # repro_7: backward(inputs=[w]) skipped the pre-hook (w.grad 3 instead of 30) and post-hook
    w = T.tensor([1.0, 2.0], requires_grad=True)
    log = []
    acc = autograd.graph.get_gradient_edge(w).node
    acc.register_prehook(lambda go: (log.append("pre"), (go[0] * 10,))[1])
    acc.register_hook(lambda gi, go: log.append(("post", gi, go[0].tolist())))
    (w * 3).sum().backward(inputs=[w])
    np.testing.assert_array_equal(w.grad.numpy(), np.array([30.0, 30.0]))
    assert log == ["pre", ("post", (), [30.0, 30.0])]


def test_multi_grad_hook_concurrent_passes():
    # repro_8: two threads' interleaved passes shared one state: calls lost, a None gradient
    a, b = T.tensor([1.0], requires_grad=True), T.tensor([2.0], requires_grad=True)
    calls, errors = [], []
    autograd.graph.register_multi_grad_hook((a, b), lambda gs: calls.append(tuple(g.item() for g in gs)))
    bar = threading.Barrier(2, timeout=20)

    def work(k):
        try:
            x2 = (a * k).sum() + 0
            x2.register_hook(lambda g: (bar.wait(), None)[1])   # both passes half-way at once
            (x2 + (b * k).sum()).backward()
        except Exception as e:   # (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in (1.0, 10.0)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and sorted(calls) == [(1.0, 1.0), (10.0, 10.0)]


def test_backward_inputs_takes_gradient_edges():
    # repro_9: backward(inputs=[edge]) raised AttributeError ('GradientEdge' has no .grad)
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward(inputs=[autograd.graph.get_gradient_edge(x)])   # a leaf's: into x.grad
    np.testing.assert_array_equal(x.grad.numpy(), np.array([3.0, 3.0]))
    x.grad = None
    h = x * 1
    h.retain_grad()
    (h * 3).sum().backward(inputs=autograd.graph.get_gradient_edge(h))    # a non-leaf's: nothing
    assert x.grad is None
    np.testing.assert_array_equal(h.grad.numpy(), np.array([3.0, 3.0]))


def test_view_retain_grad_and_edge_follow_a_base_write():
    # repro_12: retain_grad made before the base's in-place write was lost (v.grad None), and
    # get_gradient_edge(v) gave the stale node, whose hooks the backward never runs
    x = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    base = x * 1
    v = base[1:3]
    v.retain_grad()
    base.mul_(2)
    seen = []
    autograd.graph.get_gradient_edge(v).node.register_prehook(lambda go: seen.append(go[0].tolist()))
    (v * T.tensor([1.0, 10.0])).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), np.array([1.0, 10.0]))
    np.testing.assert_array_equal(x.grad.numpy(), np.array([0.0, 2.0, 20.0, 0.0]))
    assert seen == [[1.0, 10.0]]


def test_retained_grad_is_differentiable_with_create_graph():
    # repro_13: the retained y.grad was detached under create_graph, so a loss built from it
    # lost that term (here: nothing to differentiate)
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x ** 2
    y.retain_grad()
    (y ** 2).sum().backward(create_graph=True)
    assert y.grad.requires_grad
    x.grad = None
    (y.grad ** 2).sum().backward()   # sum(4 x^4): 16 x^3
    np.testing.assert_allclose(x.grad.numpy(), 16 * np.array([1.0, 2.0]) ** 3)


def test_hooks_may_return_sparse_gradients():
    # repro_14: a hook returning nn.Embedding(sparse=True)'s sparse gradient raised TypeError
    import nn

    emb = nn.Embedding(5, 2, sparse=True)
    emb.weight.register_hook(lambda g: g * 3)
    autograd.graph.get_gradient_edge(emb.weight).node.register_prehook(lambda go: (go[0] * 2,))
    emb(T.tensor([0, 3, 3])).sum().backward()
    want = np.zeros((5, 2))
    want[0], want[3] = 6.0, 12.0
    np.testing.assert_array_equal(emb.weight.grad.to_dense().numpy(), want)


def test_hook_handle_remove_twice_and_context_manager():
    # repro_15: a second remove() took off another registration of the same function; the
    # handle was no context manager
    seen = []

    def fn(g):
        seen.append(g.tolist())

    x = T.ones(2, requires_grad=True)
    h1 = x.register_hook(fn)
    x.register_hook(fn)
    h1.remove()
    h1.remove()
    with (x * 1).grad_fn.register_prehook(lambda go: None):
        pass
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]]
    with x.register_hook(fn):
        pass
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.parametrize("key", [4, -1, np.int64(7), slice(1, None, 4), slice(None, None, -3), Ellipsis])
def test_flat_setitem_int_and_slice_keys_non_contiguous(device, key):
    # fix_3 (performance): ints and slices of a non-contiguous x no longer build all of x's
    # positions (a write was O(x.numel())); the values still match NumPy's
    a = np.arange(12.0).reshape(3, 4).T
    t = T.asarray(np.arange(12.0).reshape(3, 4), device=device).T
    a.flat[key] = -5.0
    t.flat[key] = -5.0
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    with pytest.raises(IndexError):
        t.flat[12] = 1.0
