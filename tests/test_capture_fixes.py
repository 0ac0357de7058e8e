"""tensor.compile against eager where a capture used to go wrong (a bug hunt's findings):
forward mode, autocast's cast cache, arguments and Python state keyed by identity, other
threads' memory, the default dtype and device, read-only arguments, aliasing results, the
sanitizer's pool, memory statistics, and autocast's table names.

Each test runs the eager call, the capture and replays (three calls or more) and compares with
eager, or checks the state a replay must leave.
"""
from __future__ import annotations

import ctypes
import gc
import sys
import threading
import types
import warnings

import numpy as np
import pytest

import autograd
import nn
import tensor as T


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a "not captured" warning here is a failure
        return fn(*args)


def test_jvp_through_a_compiled_function_keeps_its_tangents():
    def f(x):
        return T.sin(x) * x
    cf = T.compile(f)
    x, v = T.asarray([0.5, 1.0, 2.0]), T.ones(3)
    want = autograd.jvp(f, (x,), (v,))[1].tolist()
    for _ in range(4):   # eager, then the calls that would be the capture and replays
        assert autograd.jvp(cf, (x,), (v,))[1].tolist() == want
    for _ in range(3):   # outside forward mode it still captures and replays
        assert _quiet(cf, x).tolist() == f(x).tolist()
    assert cf.stats()["replays"] >= 1


def test_autocast_cast_cache_is_not_replayed_stale():
    """One long autocast region; the weight changes between replays (an optimizer, an EMA):
    a replay casts it again, as eager's cache (its version moved) does."""
    lin = nn.Linear(4, 3)
    x = T.ones(2, 4, dtype="float32")

    def fwd(x):
        with autograd.no_grad():
            return lin(x)
    cf = T.compile(fwd)
    with T.autocast("cpu", dtype=T.bfloat16):
        for i in range(5):
            got = _quiet(cf, x)
            with T.autocast("cpu", enabled=False):   # by hand: no cache
                bf = T.bfloat16
                # (one rounding: the bias is added on the float32 accumulator, as PyTorch's)
                want = nn.functional.linear(x.astype(bf), lin.weight.detach().astype(bf),
                                            lin.bias.detach().astype(bf))
            assert got.dtype is want.dtype and got.tolist() == want.tolist(), i
            if i >= 1:
                with autograd.no_grad():
                    lin.weight.add_(1.0)
    assert cf.stats()["replays"] >= 2


def test_requires_grad_argument_with_a_reused_id():
    """A new tensor that takes a dead argument's id (its storage kept alive by a detach())
    is not replayed on the old memory."""
    def f(w):
        with autograd.no_grad():
            return w * 2
    cf = T.compile(f)
    history = []
    for i in range(12):
        w = T.full((3,), float(i), requires_grad=True)
        assert _quiet(cf, w).tolist() == [2.0 * i] * 3, i
        history.append(w.detach())   # the storage lives on, the tensor object dies
        del w


class _Box:
    pass


def test_argument_keyed_by_identity_is_checked_at_replay():
    """An object argument is keyed by id, which CPython reuses once the object dies: the
    program keeps a weak reference and a replay given another object re-captures (the call
    with a new object of a dead one's id is what this stands for)."""
    from tensor.replay import Program

    def f(box, x):
        return x * box.t
    cf = T.compile(f)
    box, x = _Box(), T.ones(3)
    box.t = T.full((3,), 2.0)
    for _ in range(3):
        assert _quiet(cf, box, x).tolist() == [2.0] * 3
    (prog,) = [e for e in cf._cache.values() if type(e) is Program]
    other = _Box()
    other.t = T.full((3,), 5.0)
    assert prog.run([x], [other]) == (None, True)   # stale: re-capture
    res, stale = prog.run([x], [box])
    assert not stale and res.tolist() == [2.0] * 3


SCALE = T.ones(3)


def test_rebound_global_closure_and_parameter_recapture():
    global SCALE
    x = T.ones(1, 3)
    g = T.compile(lambda x: x * SCALE)
    for _ in range(3):
        _quiet(g, x)
    old, SCALE = SCALE, T.full((3,), 5.0)   # the old one lives on
    assert _quiet(g, x).tolist() == [[5.0, 5.0, 5.0]]

    shift = T.ones(3)

    def h(x):
        return x + shift
    ch = T.compile(h)
    for _ in range(3):
        _quiet(ch, x)
    old2, shift = shift, T.full((3,), 7.0)   # noqa: F841  (a closure cell rebound)
    assert _quiet(ch, x).tolist() == [[8.0, 8.0, 8.0]]

    lin = nn.Sequential(nn.Linear(3, 2))
    opt = nn.optim.SGD(lin.parameters(), lr=0.1)   # holds the old weight

    def fwd(x):
        with autograd.no_grad():
            return lin(x)
    cf = T.compile(fwd)
    for _ in range(3):
        _quiet(cf, x)
    lin[0].weight = nn.Parameter(T.zeros(2, 3))   # re-initialise a layer
    assert _quiet(cf, x).tolist() == fwd(x).tolist()
    lin[0] = nn.Linear(3, 2)   # replace a layer (the old one kept)
    old3 = opt   # noqa: F841
    assert _quiet(cf, x).tolist() == fwd(x).tolist()
    del old


def test_other_threads_memory_is_not_pinned_by_a_capture():
    go, done = threading.Event(), threading.Event()

    def other():   # a data loader: allocates and drops 50 x 1 MiB while the step is captured
        go.wait()
        for _ in range(50):
            t = T.empty(1 << 18, dtype="float32")
            del t
        done.set()
    th = threading.Thread(target=other)
    th.start()
    calls = [0]

    def step(x):
        calls[0] += 1
        if calls[0] == 2:
            go.set()
            done.wait()
        return (x * 2).sum()
    cf = T.compile(step)
    x = T.ones(8, dtype="float32")
    before = T.memory_allocated()
    for _ in range(3):
        cf(x)
    th.join()
    gc.collect()
    assert cf.stats()["replays"] == 1
    assert T.memory_allocated() - before < (8 << 20)   # the program's pool, not 50 MiB


def test_default_dtype_and_device_are_in_the_signature():
    def g(x):
        return x + T.tensor(1.0)
    cg = T.compile(g)
    x = T.ones(3, dtype="float32")
    for _ in range(3):
        assert _quiet(cg, x).dtype is g(x).dtype
    saved = T.get_default_dtype()
    try:
        T.set_default_dtype("float32" if saved is T.float64 else "float64")
        for _ in range(3):
            assert _quiet(cg, x).dtype is g(x).dtype
    finally:
        T.set_default_dtype(saved)


def test_read_only_argument_written_by_the_step_raises():
    def f(x):
        x += 1
        return x * 2
    cf = T.compile(f)
    for _ in range(3):
        _quiet(cf, T.zeros(3))
    a = np.zeros(3)
    a.flags.writeable = False
    for _ in range(3):
        with pytest.raises(ValueError, match="read-only"):
            cf(T.asarray(a))
    assert a.tolist() == [0.0, 0.0, 0.0]
    for _ in range(2):   # a read-only argument the step only reads: captured and replayed
        b = T.asarray(a)
        assert _quiet(T.compile(lambda x: x * 2), b).tolist() == [0.0] * 3


def test_results_alias_each_other_as_eagerly():
    def f(x):
        y = x * 2
        return y, y, y[1:]
    cf = T.compile(f)
    for i in range(4):
        a, b, c = _quiet(cf, T.arange(4.0))
        assert a is b and T.shares_memory(a, c), i
        assert c.tolist() == [2.0, 4.0, 6.0]
        c[0] = 100.0
        assert a[1].item() == 100.0


def test_memory_stats_count_the_pools_and_have_torch_keys():
    cf = T.compile(lambda x: (x * 2).sum())
    for _ in range(3):
        cf(T.ones(1000))
    assert cf.stats()["pool_reserved"] > 0
    s = T.memory_stats()
    assert s["reserved_bytes.current"] == T.memory_reserved()
    assert s["allocated_bytes.current"] == T.memory_allocated()
    assert s["allocated_bytes.all.current"] == s["allocated_bytes.current"]
    assert s["reserved_bytes.all.peak"] == s["reserved_bytes.peak"]
    assert s["segment.all.current"] == s["segments"]


def _fake_asan(monkeypatch, events: list):
    """ctypes.CDLL(None) with the two ASan entry points recorded in events (no sanitizer)."""
    def fn(kind):
        def f(ptr, n):
            events.append((kind, ptr, n))
        return f
    lib = types.SimpleNamespace(__asan_poison_memory_region=fn("poison"),
                                __asan_unpoison_memory_region=fn("unpoison"))
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: lib)


def test_sanitizer_pool_is_unpoisoned_when_the_program_is_sealed(monkeypatch):
    """Under STRIDEX_SANITIZE=address a capture's pool is a PoisoningAllocator: the blocks
    the step freed are the program's, reused by every replay, so none may stay poisoned."""
    from tensor.backend import cpu as cpu_backend
    from tensor.cpu.alloc import PoisoningAllocator, cpu_allocator, cpu_raw_alloc, cpu_raw_free
    from tensor.memory import private_pool
    events: list = []
    _fake_asan(monkeypatch, events)
    pools = []

    def new_pool(device):
        p = PoisoningAllocator(cpu_raw_alloc, cpu_raw_free, "cpu (pool)")
        pools.append(p)
        return private_pool(p, cpu_allocator())
    monkeypatch.setattr(cpu_backend, "new_pool", new_pool)
    a = T.asarray(np.ones((5, 7), np.float32))
    cf = T.compile(lambda a: (a @ a.T) @ a, fuse=False)
    for _ in range(3):
        r = cf(a)
    assert cf.stats()["replays"] == 1 and r.tolist() == ((a @ a.T) @ a).tolist()
    (pool,) = pools
    assert any(k == "poison" for k, _, _ in events)   # the step freed blocks during the capture
    for seg, info in pool._segments.items():   # every segment's last word: unpoisoned whole
        last = max(i for i, (k, p, _) in enumerate(events)
                   if p == seg or (k == "poison" and seg <= p < seg + info.size))
        assert events[last] == ("unpoison", seg, info.size)
    n = len(events)
    b = pool.malloc(100)
    pool.free(b)   # a block freed after the seal stays usable by the replays
    assert all(k == "unpoison" for k, _, _ in events[n:])


def _recorded_op_names() -> set:
    """Names under which ops are recorded (tensor._hook.differentiable) or declared to autocast
    (tensor.amp.autocast_op): the wrappers' __wrapped_op__ (a composite published unwrapped has
    the attribute but no __wrapped__: it is never dispatched by name)."""
    import nn.functional  # noqa: F401  (its declared composites)
    names = {"where"}
    for name, mod in list(sys.modules.items()):
        if mod is None or name.split(".")[0] not in ("tensor", "nn", "autograd"):
            continue
        for obj in list(vars(mod).values()):
            op = getattr(obj, "__wrapped_op__", None) if callable(obj) else None
            if isinstance(op, str) and getattr(obj, "__wrapped__", None) is not None:
                names.add(op)
    return names


def test_every_autocast_table_name_is_a_recorded_op():
    from tensor.amptable import TABLE
    names = _recorded_op_names()
    missing = sorted(n for n in TABLE if n not in names)
    assert not missing, f"autocast table names that no recorded or declared op has: {missing}"


@pytest.mark.parametrize("fn", [lambda x: T.linalg.norm(x), lambda x: T.linalg.vector_norm(x),
                                lambda x: T.linalg.matrix_norm(x), lambda x: x.norm()])
def test_norms_run_in_float32_under_autocast(fn):
    x = T.ones((4, 4), dtype=T.bfloat16)
    with T.autocast("cpu", dtype=T.bfloat16):
        assert fn(x).dtype is T.float32
