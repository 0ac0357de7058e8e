"""Failure injection, autograd and global modes: an exception raised wherever a user can raise
one (a bad argument, a hook, a callback, a recomputation, KeyboardInterrupt from a hook) leaves
the library as it was: the modes restored, no half-done write, the next call right.

(nn, optimizers, tensor.compile, the allocator, data loading and files:
tests/test_fail_injection2.py.)
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import engine, graph
from autograd import forward_ad as fwAD
from autograd.checkpoint import checkpoint
from autograd.saved_hooks import saved_tensors_hooks
from tensor import amp


def _boom(*_):
    raise RuntimeError("injected")


def _clean_state():
    """The per-thread and global autograd / autocast state outside any context."""
    st = graph.state
    return (st.grad_enabled, st.depth, st.fw_level, list(st.saved_hooks), st.sac, graph._HOOKED[0],
            engine._RUNS.depth, len(engine._PASSES.stack), len(engine._RUNS.callbacks),
            autograd.is_anomaly_enabled(), amp._state.regions, amp._state.depth, amp._active)


CLEAN = (True, 0, 0, [], None, 0, 0, 0, 0, False, {}, 0, 0)


# ---------------------------------------------------------------- grad modes

@pytest.mark.parametrize("make, inside", [
    (lambda: autograd.no_grad(), False),
    (lambda: autograd.inference_mode(), False),
    (lambda: autograd.set_grad_enabled(False), False),
])
def test_grad_mode_decorates_a_generator(make, inside):
    """A decorated generator function runs its own code in the mode (each resumption), and the
    caller keeps its mode between the items (the old wrapper only covered the generator's
    creation: the body ran in the caller's mode)."""
    @make()
    def gen():
        got = yield autograd.is_grad_enabled()
        try:
            yield (got, autograd.is_grad_enabled())
        except KeyError:
            yield ("thrown", autograd.is_grad_enabled())

    it = gen()
    assert autograd.is_grad_enabled()
    assert next(it) is inside
    assert autograd.is_grad_enabled()
    assert it.send(5) == (5, inside)
    assert autograd.is_grad_enabled()
    assert it.throw(KeyError) == ("thrown", inside)
    assert autograd.is_grad_enabled()
    it.close()
    assert list(gen()) == [inside, (None, inside)]
    with autograd.no_grad():   # enable_grad's generator turns it on inside only
        g = autograd.enable_grad()(lambda: (yield autograd.is_grad_enabled()))()
        assert next(g) is True and not autograd.is_grad_enabled()
    assert _clean_state() == CLEAN


def test_grad_mode_generator_exception_restores_mode():
    @autograd.no_grad()
    def gen():
        yield 1
        raise ValueError("inside the generator")

    it = gen()
    next(it)
    with pytest.raises(ValueError, match="inside the generator"):
        next(it)
    assert autograd.is_grad_enabled()
    x = T.ones(2, requires_grad=True)
    assert (x * 2).requires_grad


@pytest.mark.parametrize("bad", ["no", None, 1.5, [True]])
def test_set_grad_enabled_rejects_non_bool(bad):
    """bool("no") is True: set_grad_enabled("no") used to switch recording on; now a TypeError
    (PyTorch's) that leaves the mode alone."""
    with autograd.no_grad():
        with pytest.raises(TypeError, match="set_grad_enabled: mode must be a bool"):
            autograd.set_grad_enabled(bad)
        assert not autograd.is_grad_enabled()
    assert autograd.is_grad_enabled()


@pytest.mark.parametrize("bad", ["off", None])
def test_set_detect_anomaly_rejects_non_bool(bad):
    with pytest.raises(TypeError, match="set_detect_anomaly: mode must be a bool"):
        autograd.set_detect_anomaly(bad)
    assert not autograd.is_anomaly_enabled()
    with pytest.raises(TypeError, match="check_nan must be a bool"):
        autograd.set_detect_anomaly(True, check_nan="x")
    assert not autograd.is_anomaly_enabled()


def test_modes_restored_after_exceptions_in_blocks_and_threads():
    def raising_blocks():
        for ctx in (autograd.no_grad(), autograd.inference_mode(), autograd.set_grad_enabled(False),
                    autograd.detect_anomaly(), T.autocast("cpu"), fwAD.dual_level(),
                    saved_tensors_hooks(lambda t: t, lambda t: t)):
            with pytest.raises(KeyboardInterrupt):
                with ctx:
                    raise KeyboardInterrupt
        with pytest.raises(KeyError):
            autograd.no_grad()(lambda: (_ for _ in ()).throw(KeyError()))()

    with pytest.warns(UserWarning, match="anomaly"):
        raising_blocks()
    assert _clean_state() == CLEAN
    errors = []

    def worker():
        try:
            for _ in range(20):
                raising_blocks()
            assert _clean_state()[:5] == CLEAN[:5]
        except BaseException as e:   # (reported by the main thread)
            errors.append(e)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = [threading.Thread(target=worker) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
    assert not errors and not any(t.is_alive() for t in ts)
    assert _clean_state() == CLEAN


# ---------------------------------------------------------------- in-place writes that fail to record

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("view", [False, True])
def test_inplace_op_whose_pack_hook_raises_changes_nothing(view, device):
    """b.mul_(b) under a pack hook that raises: the write used to stay (b = b * b) with b's old
    graph (b = a + 1), so b.sum().backward() gave a.grad = 1 silently. Now b keeps its values,
    version and graph, as PyTorch's (which packs before it writes)."""
    torch = _torch()
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a + 1
    target = b[1:] if view else b
    v0, fn0 = b._storage.version, b.grad_fn
    with pytest.raises(RuntimeError, match="injected"):
        with saved_tensors_hooks(_boom, lambda p: p):
            target.mul_(target)
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0, 4.0])
    assert b._storage.version == v0 and b.grad_fn is fn0
    (b * T.tensor([1.0, 2.0, 3.0])).sum().backward()
    ta = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tb = ta + 1
    tt = tb[1:] if view else tb
    with pytest.raises(RuntimeError, match="injected"):
        with torch.autograd.graph.saved_tensors_hooks(_boom, lambda p: p):
            tt.mul_(tt)
    (tb * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    # the write goes through once the hooks are gone, recorded
    target.mul_(target)
    a.grad = None
    b.sum().backward()
    want = [1.0, 6.0, 8.0] if view else [4.0, 6.0, 8.0]   # d(b * b)/da = 2 b where written
    np.testing.assert_allclose(a.grad.numpy(), want)
    assert _clean_state() == CLEAN


def test_inplace_op_without_forward_rule_on_dual_tensor_changes_nothing():
    """An in-place op with no derivative rule on a dual tensor wrote its result and then raised
    NotImplementedError, leaving new values with the old tangent; now it raises first."""
    with fwAD.dual_level():
        x = fwAD.make_dual(T.tensor([0.5, 0.25]), T.tensor([1.0, 2.0]))
        with pytest.raises(NotImplementedError, match="no derivative rule for 'nextafter_'"):
            x.nextafter_(T.tensor([1.0, 1.0]))
        np.testing.assert_array_equal(x.numpy(), [0.5, 0.25])
        np.testing.assert_array_equal(fwAD.unpack_dual(x).tangent.numpy(), [1.0, 2.0])
        y = x.mul_(3.0)   # the next in-place op is right, tangent included
        np.testing.assert_array_equal(y.numpy(), [1.5, 0.75])
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 6.0])
    assert _clean_state() == CLEAN


def test_inplace_on_leaf_refused_before_the_write():
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for f in (lambda: x.add_(1), lambda: x.__setitem__(0, 5.0), lambda: x[1:].mul_(2),
              lambda: x.copy_(T.zeros(3))):
        with pytest.raises(RuntimeError, match="in place"):
            f()
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    assert x._storage.version == 0 and x.is_leaf
    b = T.zeros(5)
    with pytest.raises(IndexError):
        b[T.tensor([0, 1, 7])] = T.tensor([1.0, 2.0, 3.0])
    with pytest.raises(IndexError):
        b.scatter_(0, T.tensor([1, 9]), T.tensor([4.0, 5.0]))
    np.testing.assert_array_equal(b.numpy(), np.zeros(5))


# ---------------------------------------------------------------- backward interrupted

def test_backward_interrupted_by_a_hook_then_rerun():
    """KeyboardInterrupt from a hook half-way through backward: no engine state left behind, the
    callbacks queued by the failed pass dropped, and a rerun (retain_graph) right."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    z = x * 3
    z.register_hook(lambda g: None if calls.count("armed") else _interrupt())
    u = x * 5

    def hook(g):
        engine.queue_callback(lambda: calls.append("callback"))
        calls.append("hook")
    u.register_hook(hook)
    y = (z * z).sum() + u.sum()
    with pytest.raises(KeyboardInterrupt):
        y.backward(retain_graph=True)
    assert x.grad is None and _clean_state() == CLEAN
    assert "callback" not in calls
    calls.append("armed")
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [23.0, 41.0])   # 18 x + 5
    assert calls.count("callback") == 1 and _clean_state() == CLEAN


def _interrupt():
    raise KeyboardInterrupt


def test_unpack_hook_raising_then_backward_again():
    x = T.tensor([1.0, 2.0], requires_grad=True)
    fail = [True]
    with saved_tensors_hooks(lambda t: t, lambda t: _boom() if fail[0] else t):
        y = (x * x).sum()
    with pytest.raises(RuntimeError, match="injected"):
        y.backward()
    assert x.grad is None and _clean_state() == CLEAN
    fail[0] = False
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_custom_function_raising_in_forward_backward_jvp():
    class F(autograd.Function):
        mode = None

        @staticmethod
        def forward(ctx, x):
            if F.mode == "fwd":
                raise ValueError("fwd")
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if F.mode == "bwd":
                raise KeyboardInterrupt
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            if F.mode == "jvp":
                raise ValueError("jvp")
            return t * 2

    x = T.tensor([1.0, 2.0], requires_grad=True)
    F.mode = "fwd"
    with pytest.raises(ValueError):
        F.apply(x)
    F.mode = None
    y = F.apply(x).sum()
    F.mode = "bwd"
    with pytest.raises(KeyboardInterrupt):
        y.backward(retain_graph=True)
    F.mode = None
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    F.mode = "jvp"
    with pytest.raises(ValueError):
        with fwAD.dual_level():
            F.apply(fwAD.make_dual(T.tensor([1.0]), T.tensor([1.0])))
    F.mode = None
    _, tan = autograd.jvp(F.apply, (T.tensor([1.0, 2.0]),), (T.tensor([1.0, 3.0]),))
    np.testing.assert_array_equal(tan.numpy(), [2.0, 6.0])
    assert _clean_state() == CLEAN


def test_function_transforms_raising_leave_no_level():
    def bad(a):
        raise KeyError("f")
    for call in (lambda: autograd.jvp(bad, (T.ones(2),), (T.ones(2),)),
                 lambda: autograd.functional.jacobian(bad, T.ones(2)),
                 lambda: autograd.func.vmap(bad)(T.ones((2, 2))),
                 lambda: autograd.func.jacfwd(bad)(T.ones(2)),
                 lambda: autograd.func.grad(bad)(T.ones(2))):
        with pytest.raises(KeyError):
            call()
        assert _clean_state() == CLEAN
    g = autograd.func.grad(lambda a: (a * a).sum())(T.tensor([1.0, 3.0]))
    np.testing.assert_array_equal(g.numpy(), [2.0, 6.0])
    with fwAD.dual_level():   # a level can be entered again
        t = fwAD.unpack_dual(T.sin(fwAD.make_dual(T.tensor([0.0]), T.tensor([2.0])))).tangent
    np.testing.assert_allclose(t.numpy(), [2.0])


# ---------------------------------------------------------------- checkpoint

@pytest.mark.parametrize("selective", [False, True])
def test_checkpoint_recomputation_raising_then_retry(selective):
    import functools

    from autograd.checkpoint import create_selective_checkpoint_contexts
    w = T.tensor([1.0, 2.0], requires_grad=True)
    x = T.tensor([3.0, 4.0], requires_grad=True)
    fail = [False]

    def fn(x):
        y = T.sin(x * w)
        if fail[0]:
            raise ValueError("recompute")
        return y * w
    ctx = functools.partial(create_selective_checkpoint_contexts, ["multiply"]) if selective else None
    y = checkpoint(fn, x, context_fn=ctx) if ctx else checkpoint(fn, x)
    fail[0] = True
    state = T.random.get_rng_state()
    with pytest.raises(ValueError, match="recompute"):
        y.sum().backward(retain_graph=True)
    assert T.random.get_rng_state() == state and _clean_state() == CLEAN
    assert x.grad is None and w.grad is None
    fail[0] = False
    y.sum().backward()
    xn, wn = x.detach().numpy(), w.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xn * wn) * wn * wn)
    np.testing.assert_allclose(w.grad.numpy(), np.cos(xn * wn) * xn * wn + np.sin(xn * wn))


def test_checkpoint_context_fn_and_policy_raising():
    import functools

    from autograd.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(KeyError):
        checkpoint(lambda a: a * 2, x, context_fn=lambda: (_ for _ in ()).throw(KeyError()))
    assert _clean_state() == CLEAN

    def policy(ctx, op, *a, **k):
        if ctx.is_recompute:
            raise IndexError("policy")
        return CheckpointPolicy.PREFER_RECOMPUTE
    y = checkpoint(lambda a: T.exp(a) * a, x,
                   context_fn=functools.partial(create_selective_checkpoint_contexts, policy))
    with pytest.raises(IndexError):
        y.sum().backward()
    assert _clean_state() == CLEAN
    (T.exp(x) * x).sum().backward()
    xn = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xn) * (1 + xn))


# ---------------------------------------------------------------- autocast

def test_autocast_exceptions_restore_regions():
    w = T.ones((2, 2), dtype=T.float32, requires_grad=True)
    with pytest.raises(ValueError):
        with T.autocast("cpu"):
            T.ones((2, 3)) @ T.ones((2, 3))
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        T.autocast("cpu", dtype=T.int32)
    with pytest.raises(KeyError):
        T.autocast("cpu")(lambda: (_ for _ in ()).throw(KeyError()))()
    assert _clean_state() == CLEAN and T._hook.amp is None
    with T.autocast("cpu"):
        with pytest.raises(ValueError):
            with T.autocast("cpu", enabled=False):
                raise ValueError
        assert (w @ w).dtype is T.bfloat16
    assert (w @ w).dtype is T.float32 and _clean_state() == CLEAN


def test_multi_grad_hook_state_of_a_failed_pass_is_dropped():
    """register_multi_grad_hook kept each pass's gradients until the pass's end callback; a
    pass that raised ran none, so every failed backward leaked the gradients it had reached."""
    from autograd.graph import edge_of
    a, b = T.ones(2, requires_grad=True), T.ones(3, requires_grad=True)
    fail = [True]
    a.register_hook(lambda g: _boom() if fail[0] else None)   # a's gradient comes after b's
    seen = []
    autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append([g.tolist() for g in gs]))
    for _ in range(3):
        with pytest.raises(RuntimeError, match="injected"):
            ((a * 2).sum() + (b * 3).sum()).backward()
    hook = edge_of(b)[0].hooks[0][-1]
    passes = next(c.cell_contents for c in hook.__closure__ if isinstance(c.cell_contents, dict))
    assert passes == {} and seen == [] and _clean_state() == CLEAN
    fail[0] = False
    ((a * 2).sum() + (b * 3).sum()).backward()
    assert seen == [[[2.0, 2.0], [3.0, 3.0, 3.0]]] and passes == {}


def test_backward_callbacks_are_per_thread():
    """The engine's pass count and callbacks were process-wide: a callback queued by a pass in
    one thread waited for another thread's pass to end (and was dropped if that one raised)."""
    started, release = threading.Event(), threading.Event()
    out = {}

    def slow_failing_pass():
        x = T.ones(2, requires_grad=True)
        y = x * 2

        def hook(g):
            started.set()
            release.wait(30)
            raise RuntimeError("other thread")
        y.register_hook(hook)
        try:
            y.sum().backward()
        except RuntimeError as e:
            out["b"] = str(e)
    tb = threading.Thread(target=slow_failing_pass)
    tb.start()
    try:
        assert started.wait(30)
        ran = []
        x = T.ones(3, requires_grad=True)
        z = x * 3
        z.register_hook(lambda g: engine.queue_callback(lambda: ran.append(x.grad.tolist())))
        z.sum().backward()
        assert ran == [[3.0, 3.0, 3.0]]   # at the end of this thread's pass
        assert not engine.backward_running()
    finally:
        release.set()
        tb.join(30)
    assert out == {"b": "other thread"} and ran == [[3.0, 3.0, 3.0]]
    assert _clean_state() == CLEAN


def test_function_transform_depth_is_per_thread():
    """func's count of transforms being evaluated was process-wide (and raced on by +=): while
    one thread was inside func.grad, another thread's func.grad results kept their graph."""
    inside, release = threading.Event(), threading.Event()

    def slow(a):
        inside.set()
        release.wait(30)
        return (a * a).sum()
    t = threading.Thread(target=lambda: autograd.func.grad(slow)(T.ones(2)))
    t.start()
    try:
        assert inside.wait(30)
        g = autograd.func.grad(lambda a: (a * a * a).sum())(T.tensor([1.0, 2.0]))
    finally:
        release.set()
        t.join(30)
    np.testing.assert_array_equal(g.numpy(), [3.0, 12.0])
    assert not g.requires_grad and g.grad_fn is None
