"""Re-entrancy: tracers, profilers and finalizers that free or make tensors while the library is
inside its own allocator (or another library lock) on the same thread.

A sys.settrace / sys.setprofile / threading.settrace callback runs at every line (or call) of
the library's Python code, and gc runs finalizers at any allocation of a container. Such a
callback that dropped a tensor used to wait forever for the allocator's non-reentrant lock held
by its own thread (issue: "Deadlock in the caching allocator"). A deadlock must fail a test,
not hang the suite: the allocator-level tests run their body on a worker thread with a time
limit (their allocator is private), the tensor-level ones in a subprocess (a deadlocked thread
would hold the process-wide allocator's lock).
"""
from __future__ import annotations

import gc
import inspect
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from helpers import to_np
from test_memory import FakeRaw, check_invariants

import autograd  # noqa: F401  (the backward hook)
import tensor as T
from tensor import memory as M

pytestmark = pytest.mark.usefixtures("device")
LIMIT_S = 120   # a deadlock fails the test after this long (the bodies take well under 5 s)


def _bounded(body, *args):
    """Run body(*args) on a worker thread; fail if it raises or does not finish in time."""
    out = {}

    def run():
        try:
            out["value"] = body(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised on the test's thread
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(LIMIT_S)
    assert not t.is_alive(), f"{body.__name__} did not finish in {LIMIT_S} s: a deadlock"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _in_allocator(frame) -> bool:
    """Whether a callback fires in the allocator's own code (where the lock may be held)."""
    return frame.f_code.co_filename == M.__file__


class _Unraisable:
    """Collect what Python reports as 'Exception ignored in ...' (e.g. from a __del__)."""

    def __enter__(self):
        self.seen, self.old = [], sys.unraisablehook
        sys.unraisablehook = self.seen.append
        return self

    def __exit__(self, *exc):
        sys.unraisablehook = self.old


# ---------------------------------------------------------------- the allocator itself

def test_nested_frees_and_mallocs_from_a_tracer_keep_the_books():
    """A tracer that, at every line of memory.py, frees one of the live blocks or allocates
    a new one (in the middle of pool updates) while the thread mallocs and frees."""
    fake = FakeRaw()
    a = M.CachingAllocator(fake.alloc, fake.free)
    me = M.__file__
    rng = np.random.default_rng(0)
    sizes = [100, 1000, 5000, 70_000, 2 << 20, 12 << 20]
    live: list[M.Block] = []
    nested = {"free": 0, "malloc": 0}

    def tracer(frame, event, arg):
        if event == "line" and frame.f_code.co_filename == me:
            if live and rng.random() < 0.5:
                a.free(live.pop(int(rng.integers(len(live)))))
                nested["free"] += 1
            elif nested["malloc"] < 300:
                live.append(a.malloc(int(rng.choice(sizes)), stream=int(rng.integers(2))))
                nested["malloc"] += 1
        return tracer

    def body():
        sys.settrace(tracer)
        try:
            for i in range(300):
                live.append(a.malloc(int(rng.choice(sizes)), stream=i % 2))
                if len(live) > 20:
                    a.free(live.pop(0))
        finally:
            sys.settrace(None)

    _bounded(body)
    assert nested["free"] > 100 and nested["malloc"] == 300
    a.memory_stats()          # a locked section: settles what the last lines queued
    check_invariants(a, fake, live)
    for b in live:
        a.free(b)
    a.empty_cache()
    assert a.memory_allocated() == 0 and a.memory_reserved() == 0 and not fake.live


def test_a_bad_nested_free_is_reported_not_raised_into_the_outer_call():
    fake = FakeRaw()
    a = M.CachingAllocator(fake.alloc, fake.free)
    victim = a.malloc(1000)
    seen, fired = [], []
    old_hook = sys.unraisablehook
    sys.unraisablehook = seen.append

    def tracer(frame, event, arg):
        if (event == "line" and frame.f_code.co_filename == M.__file__ and not fired
                and threading.get_ident() in M._BUSY):   # inside a locked section
            fired.append(1)
            a.free(victim)
            a.free(victim)   # queued twice: the second is found out when the queue is done
        return tracer

    def body():
        sys.settrace(tracer)
        try:
            return a.malloc(3000)
        finally:
            sys.settrace(None)

    try:
        b = _bounded(body)
    finally:
        sys.unraisablehook = old_hook
    assert fired and len(seen) == 1 and isinstance(seen[0].exc_value, ValueError)
    a.memory_stats()
    check_invariants(a, fake, [b])


def test_a_tracer_emptying_the_cache_between_lookup_and_lock():
    """malloc's hot path looks its exact-size list up before it takes the lock. A tracer (or
    another thread) that emptied the cache in between released the parked block's segment,
    and malloc still handed the stale block out: memory given back to the system."""
    fake = FakeRaw()
    a = M.CachingAllocator(fake.alloc, fake.free)
    rng = np.random.default_rng(0)
    calls = []

    def tracer(frame, event, arg):   # at random lines outside the locked sections
        if (event == "line" and _in_allocator(frame) and threading.get_ident() not in M._BUSY
                and rng.random() < 0.3):
            a.empty_cache()
            calls.append(1)
        return tracer

    def body():
        sys.settrace(tracer)
        try:
            for _ in range(200):
                b = a.malloc(1000)   # alone in its segment: parked when freed, then asked again
                seg = b.segment
                assert seg is not None and a._segments.get(seg.ptr) is seg and seg.ptr in fake.live, b
                a.free(b)
        finally:
            sys.settrace(None)

    _bounded(body)
    assert len(calls) > 100
    check_invariants(a, fake, [])


# ---------------------------------------------------------------- tensors under callbacks
# Each test runs one of the run_* bodies below in a fresh interpreter (same device, same
# emulator setting) and fails when it raises or does not finish within LIMIT_S.

def _in_subprocess(body: str, device, *args) -> None:
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import test_reentrancy as t; t.{body}({str(device)!r}, *{args!r})")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=LIMIT_S, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{body}{args} on {device} did not finish in {LIMIT_S} s: a deadlock")
    assert r.returncode == 0, f"{body}{args} on {device} failed:\n{r.stderr[-3000:]}"
    assert "OK" in r.stdout and "Exception ignored" not in r.stderr, r.stderr[-3000:]


def _program(dev):
    """Ops of every kind, checked against NumPy; returns nothing (the tensors die here)."""
    rng = np.random.default_rng(1)
    an = rng.standard_normal((6, 7)).astype(np.float32)
    bn = rng.standard_normal((7, 5)).astype(np.float32)
    a, b = T.asarray(an, device=dev), T.asarray(bn, device=dev)
    np.testing.assert_allclose(to_np(T.exp(a) * 2 + a.T.T), np.exp(an) * 2 + an, rtol=1e-5)
    np.testing.assert_allclose(to_np(a @ b), an @ bn, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(a.sum(axis=1)), an.sum(axis=1), rtol=1e-5)
    idx = T.asarray(np.array([3, 0, 3, 5]), device=dev)
    np.testing.assert_array_equal(to_np(a[idx, 1:4]), an[[3, 0, 3, 5], 1:4])
    c = a.copy()
    c[c > 0] = 0.0
    np.testing.assert_array_equal(to_np(c), np.where(an > 0, 0, an))
    w = a.detach().requires_grad_()
    (w * w).sum().backward()
    np.testing.assert_allclose(to_np(w.grad), 2 * an, rtol=1e-6)


def _settled_allocated(dev) -> int:
    gc.collect()
    T.memory_stats(dev)            # a locked section: settles queued frees
    return T.memory_allocated(dev)


def _start(device):
    """The device, with warm kernels, and the bytes allocated on it at rest."""
    dev = T.device(device)
    _program(dev)
    return dev, _settled_allocated(dev)


def _in_allocator(frame) -> bool:
    """Whether a callback fires in the allocator's own code (where its lock may be held)."""
    return frame.f_code.co_filename == M.__file__


def run_tracer(device, hook):
    """A settrace / setprofile callback that, in the allocator's code, drops a tensor at every
    event and makes a new one at the first 40."""
    dev, base = _start(device)
    pool, made = [T.ones(3, device=dev) for _ in range(400)], []

    def callback(frame, event, arg):
        if _in_allocator(frame):
            if pool:
                pool.pop()           # its storage dies here, inside the allocator
            if len(made) < 40:
                made.append(T.zeros(2, device=dev))
        return callback if hook == "settrace" else None

    setter = getattr(sys, hook)
    setter(callback)
    try:
        _program(dev)
    finally:
        setter(None)
    assert len(pool) < 400 and len(made) == 40
    pool.clear()
    made.clear()
    assert _settled_allocated(dev) == base
    print("OK")


def run_threading_settrace(device):
    """threading.settrace: eight threads run the program, each one's tracer dropping its own
    tensors in the allocator's code."""
    dev, base = _start(device)
    pools = [[T.ones(3, device=dev) for _ in range(64)] for _ in range(8)]
    errors = []

    def tracer(frame, event, arg):
        name = threading.current_thread().name
        if not name.startswith("traced-"):   # threads the library starts (timers, ...)
            return None
        mine = pools[int(name[7:])]
        if mine and _in_allocator(frame):
            mine.pop()
        return tracer

    def worker():
        try:
            _program(dev)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threading.settrace(tracer)
    try:
        ts = [threading.Thread(target=worker, name=f"traced-{i}") for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        threading.settrace(None)
    if errors:
        raise errors[0]
    assert sum(map(len, pools)) < 8 * 64
    pools.clear()
    assert _settled_allocated(dev) == base
    print("OK")


class _Cycle:
    """A reference cycle holding a tensor; its finalizer makes a small tensor too."""

    made = 0

    def __init__(self, dev):
        self.me, self.t, self.dev = self, T.ones(5, device=dev), dev

    def __del__(self):
        T.zeros(1, device=self.dev)
        _Cycle.made += 1


def run_finalizers(device):
    """gc at (nearly) every container allocation, collecting cycles whose finalizers free a
    tensor and make one, while the program runs."""
    dev, base = _start(device)
    old = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        for _ in range(3):
            for _ in range(20):
                _Cycle(dev)
            _program(dev)
    finally:
        gc.set_threshold(*old)
    gc.collect()
    assert _Cycle.made == 60 and _settled_allocated(dev) == base
    print("OK")


def run_tracer_during_first_use(device):
    """A tracer that makes a tensor at every line of the device's first-use set-up (the CPU
    allocator's creation; the CUDA device state's initialisation and stream set-up), which
    runs under a library lock the nested call asks for again on the same thread."""
    from tensor.cpu import alloc
    from tensor.cuda import runtime
    watched = ({(alloc.__file__, "cpu_allocator")} if device == "cpu" else
               {(runtime.__file__, "device_state"), (runtime.__file__, "__init__")})
    made, locked_from = [], {}

    def under_lock(frame) -> bool:
        """Whether the frame is past its function's first `with` (where the lock is taken;
        the whole function when it has none: its caller holds the lock)."""
        code = frame.f_code
        if code not in locked_from:
            lines, first = inspect.getsourcelines(code)
            locked_from[code] = next((first + i + 1 for i, ln in enumerate(lines)
                                      if ln.lstrip().startswith("with ")), first)
        return frame.f_lineno > locked_from[code]

    def tracer(frame, event, arg):
        if (event == "line" and (frame.f_code.co_filename, frame.f_code.co_name) in watched
                and under_lock(frame)):
            made.append(T.ones(2, device=device) + 1)
        return tracer

    sys.settrace(tracer)
    try:
        first = T.zeros(3, device=device)   # the first use (T.device("cuda") initialises)
    finally:
        sys.settrace(None)
    dev = T.device(device)
    assert len(made) >= 2 and to_np(first).tolist() == [0, 0, 0]
    a = T.memstats.allocator(dev)
    assert all(to_np(t).tolist() == [2, 2] and t._storage._alloc is a for t in made)
    if dev.type == "cuda":
        assert runtime.device_state(dev.index or 0).default_handle is not None
    _program(dev)
    del made[:], first
    assert _settled_allocated(dev) == 0
    print("OK")


def run_lock_cycle(device):
    """Thread A builds or loads the first kernel module of a program (holding that module's
    lock) and frees a tensor meanwhile (a finalizer, a tracer); thread B, inside the
    allocator's locked section, has a tracer run the same program, which waits for that
    module's lock. A's free used to wait for B's allocator lock: a deadlock across threads."""
    from tensor import kernel_cache
    from tensor.cuda import runtime
    dev = T.device(device)
    a_in, b_in = threading.Event(), threading.Event()
    victim, results = [T.empty(3, device=dev)], {}   # allocations that need no kernel

    def program():
        return to_np(T.ones(3, device=dev) * 3).tolist()

    def in_module_lock(frame) -> bool:   # the key lock of a build, or the device's module lock
        code, up = frame.f_code, frame.f_back.f_code if frame.f_back else None
        return ((code.co_filename, code.co_name) == (kernel_cache.__file__, "read_cached")
                or (code.co_name == "check" and up is not None and up.co_name == "_load_module"
                    and up.co_filename == runtime.__file__))

    def tracer_a(frame, event, arg):
        if event == "call" and not a_in.is_set() and in_module_lock(frame):
            a_in.set()
            assert b_in.wait(LIMIT_S)
            victim.clear()            # its storage is freed here, the module's lock held
        return None

    def tracer_b(frame, event, arg):
        if (event == "line" and not b_in.is_set() and frame.f_code.co_name == "_malloc_locked"
                and _in_allocator(frame)):
            b_in.set()
            results["b"] = program()   # waits for A's module lock, B's allocator lock held
        return tracer_b

    def run_a():
        sys.settrace(tracer_a)
        try:
            results["a"] = program()
        finally:
            sys.settrace(None)

    def run_b():
        assert a_in.wait(LIMIT_S)
        sys.settrace(tracer_b)
        try:
            T.empty(70_000, device=dev)   # no parked block of this size: _malloc_locked
        finally:
            sys.settrace(None)

    ts = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert a_in.is_set() and b_in.is_set() and not victim
    assert results == {"a": [3, 3, 3], "b": [3, 3, 3]}, results
    assert _settled_allocated(dev) == 0
    print("OK")


def run_first_use_in_two_threads(device):
    """Thread A's first use of the device is paused in the middle of the set-up (a tracer, a
    slow driver); thread B uses the device meanwhile. B used to get the CUDA device state
    before its streams existed ('NoneType' object has no attribute 'handle')."""
    from tensor import memory
    from tensor.cuda import runtime
    paused_at = (runtime._DeviceState.__init__ if device != "cpu"
                 else memory.CachingAllocator.__init__).__code__
    a_in, b_done, results = threading.Event(), threading.Event(), {}

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is paused_at and not a_in.is_set():
            a_in.set()
            b_done.wait(1.0)      # B either finishes meanwhile or waits for A's set-up
        return None

    def run_a():
        sys.settrace(tracer)
        try:
            results["a"] = to_np(T.ones(3, device=device) + 1).tolist()
        finally:
            sys.settrace(None)

    def run_b():
        assert a_in.wait(LIMIT_S)
        try:
            results["b"] = to_np(T.ones(3, device=device) + 2).tolist()
        except BaseException as e:  # noqa: BLE001 - reported below
            results["b"] = repr(e)
        b_done.set()

    ts = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == {"a": [2, 2, 2], "b": [3, 3, 3]}, results
    print("OK")


def test_tracer_making_tensors_during_the_devices_first_use(device):
    _in_subprocess("run_tracer_during_first_use", device)


def test_free_while_holding_a_module_lock_that_an_allocator_holder_waits_for(device):
    _in_subprocess("run_lock_cycle", device)


def test_a_thread_using_the_device_during_anothers_first_use(device):
    _in_subprocess("run_first_use_in_two_threads", device)


@pytest.mark.parametrize("hook", ["settrace", "setprofile"])
def test_tracer_or_profiler_dropping_and_making_tensors(device, hook):
    _in_subprocess("run_tracer", device, hook)


def test_threading_settrace_in_eight_threads(device):
    _in_subprocess("run_threading_settrace", device)


def test_finalizers_run_by_gc_inside_allocations(device):
    _in_subprocess("run_finalizers", device)
