"""autograd.saved_hooks (torch.autograd.graph's saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks): gradients equal those without hooks (ops, in-place, custom
Functions, create_graph), every packed tensor unpacked per backward, the memory freed, version
checks kept, per-thread and nested contexts, the fast path restored."""
from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import autograd
import tensor as T
from autograd import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from tensor import _hook

RNG = np.random.default_rng(7)


class Square(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2.0 * x * g


def _f(x, w):
    h = T.tanh(x @ w)                  # saves its output
    z = T.exp(h) * h
    z2 = z.clone()
    z2.mul_(2.0)                       # in place
    parts = T.split(z2, 2, axis=1)     # several outputs
    return (Square.apply(parts[0]) + parts[1] ** 3).sum()


class Recorder:
    def __init__(self):
        self.store, self.unpacked = [], 0

    def pack(self, t):
        self.store.append(t.numpy().copy())
        return len(self.store) - 1

    def unpack(self, i):
        self.unpacked += 1
        return T.asarray(self.store[i])


def _args():
    return (T.tensor(RNG.random((3, 4)), requires_grad=True),
            T.tensor(RNG.random((4, 2)), requires_grad=True))


def test_gradients_equal_and_each_saved_tensor_is_unpacked():
    x, w = _args()
    want = autograd.grad(_f(x, w), (x, w))
    r = Recorder()
    with saved_tensors_hooks(r.pack, r.unpack):
        y = _f(x, w)
    assert len(r.store) >= 6
    got = autograd.grad(y, (x, w), retain_graph=True)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert r.unpacked == len(r.store)
    autograd.grad(y, (x, w))           # again (retain_graph): unpacked again
    assert r.unpacked == 2 * len(r.store)


def test_create_graph_through_restored_tensors():
    x, w = _args()
    g = autograd.grad(_f(x, w), (x,), create_graph=True)[0]
    want = autograd.grad((g * g).sum(), (w,))[0]
    r = Recorder()
    with saved_tensors_hooks(r.pack, r.unpack):
        y = _f(x, w)
    g = autograd.grad(y, (x,), create_graph=True)[0]
    got = autograd.grad((g * g).sum(), (w,))[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13)


def test_memory_is_released_and_versions_still_checked():
    a = T.tensor(RNG.random(1000), requires_grad=True)
    r = Recorder()
    with saved_tensors_hooks(r.pack, r.unpack):
        b = a * 2.0
        c = T.sin(b)
    storage = weakref.ref(b._storage)
    del b
    gc.collect()
    assert storage() is None           # only the pack hook's copy holds b's values
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.cos(2 * a.detach().numpy()), rtol=1e-14)
    with saved_tensors_hooks(r.pack, r.unpack):
        b = a * 1.0
        c = b * b
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        c.sum().backward()


def test_save_on_cpu_moves_device_tensors():
    x = T.tensor(RNG.random((4, 3)), device="cuda", requires_grad=True)
    want = autograd.grad((T.exp(x) * x).sum(), x)[0]
    with save_on_cpu():
        y = T.exp(x) * x
    places = [p.packed[1].device.type for p, _, _ in y.grad_fn.saved]
    assert places and set(places) == {"cpu"}
    got = autograd.grad(y.sum(), x)[0]
    assert got.device == x.device
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_nesting_threads_disable_and_bad_unpack():
    outer, inner = Recorder(), Recorder()
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(outer.pack, outer.unpack):
        with saved_tensors_hooks(inner.pack, inner.unpack):
            y = x * x
        z = T.sin(x)
        seen = []
        t = threading.Thread(target=lambda: seen.append(x * x))   # another thread: no hooks
        t.start()
        t.join()
    assert len(inner.store) == 2 and len(outer.store) == 1
    assert all(type(a) is T.Tensor for a in seen[0].grad_fn.ctx.args)
    assert _hook.fast_graph is not None   # the C fast path is back
    (y.sum() + z.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0]) + np.cos([1.0, 2.0]))
    with disable_saved_tensors_hooks("no hooks in here"):
        with pytest.raises(RuntimeError, match="no hooks in here"):
            with saved_tensors_hooks(outer.pack, outer.unpack):
                pass
    with saved_tensors_hooks(outer.pack, outer.unpack), pytest.raises(RuntimeError, match="not here"):
        with disable_saved_tensors_hooks("not here"):
            pass
    with saved_tensors_hooks(lambda t: t, lambda t: t[:1]):
        y = x * x
    with pytest.raises(RuntimeError, match="unpack_hook returned a tensor of shape \\(1,\\)"):
        y.sum().backward()
    with pytest.raises(TypeError, match="callable"):
        saved_tensors_hooks(1, 2)


def test_checkpoint_packs_nothing_it_drops_and_compile_runs_eagerly_under_hooks():
    from autograd.checkpoint import checkpoint
    r = Recorder()
    x = T.tensor(np.array([0.5, 1.0, 2.0]), requires_grad=True)
    with saved_tensors_hooks(r.pack, r.unpack):
        y = checkpoint(lambda a: T.exp(T.sin(a) * a), x).sum()
    assert r.store == []   # (each packed tensor was dropped by checkpoint at once: 4 copies)
    y.backward()
    a = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.sin(a) * a) * (np.cos(a) * a + np.sin(a)),
                               rtol=1e-14)

    def step(x):
        (g,) = autograd.grad(T.exp(T.sin(x * 3.0)).sum(), x)
        return g
    f = T.compile(step)
    for _ in range(3):
        f(x)   # captured and replayed without hooks
    lossy = (lambda t: t.astype(T.float16), lambda t: t.astype(T.float64))
    with saved_tensors_hooks(*lossy):
        got = f(x)   # a replay would skip the pack hook: this runs eagerly
        want = step(x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert not np.array_equal(got.numpy(), f(x).numpy())   # the hooks' rounding shows


def test_function_saving_its_output_frees_it_without_gc_and_keeps_create_graph():
    from test_review9 import _ExpSavingOutput as Exp
    x = T.tensor(np.array([0.5, 1.0]), requires_grad=True)
    gc.disable()
    try:   # (was a cycle ctx -> y -> node -> ctx: freed only by the garbage collector)
        y = Exp.apply(x)
        storage, node = weakref.ref(y._storage), weakref.ref(y.grad_fn)
        del y
        assert storage() is None and node() is None
    finally:
        gc.enable()
    (g,) = autograd.grad(Exp.apply(x).sum(), x, create_graph=True)   # d/dx e^x through y
    (h,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp([0.5, 1.0]), rtol=1e-15)
    r = Recorder()
    with saved_tensors_hooks(r.pack, r.unpack):
        y = Exp.apply(x)
    (g,) = autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(autograd.grad(g.sum(), x)[0].numpy(), np.exp([0.5, 1.0]), rtol=1e-15)
