"""Eight threads doing mixed ops and allocations at once, on each device: every result equals
NumPy's, nothing raises, and the allocator's books return to where they started.

The CUDA fast path for contiguous elementwise ops once kept one kernel-argument struct per
kernel for all threads: two threads filling it at once launched with each other's pointers
(wrong values on the GPU, found here under the emulator).
"""
from __future__ import annotations

import gc
import sys
import threading
import time

import numpy as np
import pytest
from helpers import to_np
from test_memory import FakeRaw, check_invariants

import autograd  # noqa: F401  (the backward hook)
import tensor as T

pytestmark = pytest.mark.usefixtures("device")
THREADS = 8
SECONDS = {"cpu": 1.5, "cuda": 3.0}   # each thread's time budget (the emulator is slow)


def _step(dev, rng, k: int) -> None:
    """One randomly sized round of elementwise, reduction, matmul, indexing, view, in-place
    and autograd ops, each checked against NumPy."""
    m, n = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    an = rng.standard_normal((m, n)).astype(np.float32)
    bn = rng.standard_normal((n, m)).astype(np.float32)
    a, b = T.asarray(an, device=dev), T.asarray(bn, device=dev)
    kind = k % 6
    if kind == 0:
        np.testing.assert_allclose(to_np(T.exp(a) * 2 + 1), np.exp(an) * 2 + 1, rtol=1e-5)
        np.testing.assert_allclose(to_np(a + b.T), an + bn.T, rtol=1e-6)
    elif kind == 1:
        np.testing.assert_allclose(to_np(a.sum(axis=0)), an.sum(axis=0), rtol=1e-5, atol=1e-6)
        assert int(to_np(a.argmax())) == int(an.argmax())
    elif kind == 2:
        np.testing.assert_allclose(to_np(a @ b), an @ bn, rtol=1e-4, atol=1e-5)
    elif kind == 3:
        idx = rng.integers(0, m, 5)
        np.testing.assert_array_equal(to_np(a[T.asarray(idx, device=dev)]), an[idx])
        c, cn = a.copy(), an.copy()
        c[c < 0] = 0.0
        cn[cn < 0] = 0
        np.testing.assert_array_equal(to_np(c), cn)
    elif kind == 4:
        c, cn = a.T.copy(), an.T.copy()
        c += b
        cn += bn
        np.testing.assert_allclose(to_np(c[::-1]), cn[::-1], rtol=1e-6)
    else:
        w = a.detach().requires_grad_()
        (T.tanh(w) * w).sum().backward()
        want = np.tanh(an) + an * (1 - np.tanh(an) ** 2)
        np.testing.assert_allclose(to_np(w.grad), want, rtol=1e-4, atol=1e-5)


def test_eight_threads_mixed_ops(device):
    dev = T.device(device)
    _step(dev, np.random.default_rng(0), 0)   # kernels compiled before the clock starts
    for k in range(6):
        _step(dev, np.random.default_rng(k), k)
    gc.collect()
    T.memory_stats(dev)   # settles frees queued by finalizers, as at the end
    base = T.memory_allocated(dev)
    errors, rounds = [], [0] * THREADS
    start = threading.Barrier(THREADS)

    def worker(i):
        rng = np.random.default_rng(100 + i)
        try:
            start.wait()
            t_end = time.perf_counter() + SECONDS[dev.type]
            k = i
            while time.perf_counter() < t_end:
                _step(dev, rng, k)
                k += 1
                rounds[i] += 1
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts), "a thread did not finish: deadlock?"
    if errors:
        raise errors[0]
    assert min(rounds) >= 3, rounds
    gc.collect()
    T.memory_stats(dev)   # settles frees queued by finalizers
    assert T.memory_allocated(dev) == base


def test_threads_reusing_blocks_while_another_empties_the_cache():
    """malloc's hot path looks its exact-size list up before it takes the lock; a thread that
    emptied the cache meanwhile released the parked block's segment and the block was still
    handed out (use after free). Fast thread switches make the window likely."""
    from tensor import memory as M
    fake = FakeRaw()
    a = M.CachingAllocator(fake.alloc, fake.free)
    errors, stop = [], time.perf_counter() + 1.0

    def reuser(size):
        try:
            while time.perf_counter() < stop:
                b = a.malloc(size)   # the size it just freed: parked in the exact-size cache
                seg = b.segment
                assert seg is not None and a._segments.get(seg.ptr) is seg, f"stale {b}"
                a.free(b)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    def emptier():
        while time.perf_counter() < stop and not errors:
            a.empty_cache()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        ts = [threading.Thread(target=reuser, args=(n,), daemon=True) for n in (100, 1000, 3000)]
        ts.append(threading.Thread(target=emptier, daemon=True))
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
    finally:
        sys.setswitchinterval(old)
    assert not any(t.is_alive() for t in ts), "a thread did not finish: deadlock?"
    if errors:
        raise errors[0]
    check_invariants(a, fake, [])


def test_ops_in_threads_while_another_empties_the_cache(device):
    dev = T.device(device)
    _step(dev, np.random.default_rng(0), 0)
    errors, stop = [], time.perf_counter() + SECONDS[dev.type]

    def worker(i):
        rng, k = np.random.default_rng(200 + i), i
        try:
            while time.perf_counter() < stop:
                _step(dev, rng, k)
                k += 1
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    def emptier():
        while time.perf_counter() < stop and not errors:
            T.empty_cache(dev)
            time.sleep(0)

    ts = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(3)]
    ts.append(threading.Thread(target=emptier, daemon=True))
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts), "a thread did not finish: deadlock?"
    if errors:
        raise errors[0]


def test_memory_stats_from_a_tracer_while_another_thread_adds_segments():
    """A profiler reading memory_stats at every line inside the allocator (where it reads the
    books without the lock) while another thread adds and releases segments: 'dictionary
    changed size during iteration' escaped into the profiler."""
    from tensor import memory as M
    fake = FakeRaw()
    a = M.CachingAllocator(fake.alloc, fake.free)
    errors, reads, stop = [], [0], time.perf_counter() + 1.0

    def tracer(frame, event, arg):
        if (event == "line" and frame.f_code.co_filename == M.__file__
                and threading.get_ident() in M._BUSY):
            try:
                assert a.memory_stats()["segments"] >= 0
                reads[0] += 1
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)
        return tracer

    def profiled():
        sys.settrace(tracer)
        try:
            while time.perf_counter() < stop and not errors:
                a.free(a.malloc(1000))
        finally:
            sys.settrace(None)

    def churner():
        while time.perf_counter() < stop and not errors:
            blocks = [a.malloc(3 << 20) for _ in range(20)]   # a segment each
            for b in blocks:
                a.free(b)
            a.empty_cache()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        ts = [threading.Thread(target=profiled, daemon=True), threading.Thread(target=churner, daemon=True)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
    finally:
        sys.setswitchinterval(old)
    assert not any(t.is_alive() for t in ts), "a thread did not finish: deadlock?"
    if errors:
        raise errors[0]
    assert reads[0] > 100
    a.memory_stats()
    check_invariants(a, fake, [])


def test_processes_building_one_kernel_build_it_once(tmp_path):
    """Processes that start together (test workers, one per rank or GPU) and miss the disk cache
    for the same product: one builds it, the others wait on its file lock and read it."""
    import subprocess
    code = ("import sys, time; from pathlib import Path; from tensor import kernel_cache as kc\n"
            "d = Path(sys.argv[1])\n"
            "def build():\n"
            "    with open(d / 'builds', 'a') as f: f.write('x')\n"
            "    time.sleep(0.5); return b'image'\n"
            "print(kc.fetch(d / 'k.bin', build).decode())\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert outs == ["image"] * 3 and all(p.returncode == 0 for p in procs)
    assert (tmp_path / "builds").read_text() == "x"


# ---------------------------------------------------------------- shared leaves, fork safety

def _run_threads(target, n: int, timeout: float = 60) -> None:
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    assert not any(t.is_alive() for t in ts), "a thread did not finish: deadlock?"
    if errors:
        raise errors[0]


def test_backward_from_threads_into_a_shared_leaf_sums_every_gradient(device):
    """Caught: _accumulate read `leaf.grad is None`, then set it or added into it in place with
    no lock, so concurrent backward passes into one parameter overwrote each other's gradient
    (w.grad 2 or 6 instead of 8 in ~10% of rounds); PyTorch's AccumulateGrad holds a mutex."""
    dev = T.device(device)
    n, rounds = 4, (300 if dev.type == "cpu" else 4)
    xn = np.arange(1.0, 4.0, dtype=np.float32)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for r in range(rounds):
            w = T.asarray(xn, device=dev).requires_grad_()
            grad_set = r % 2   # the racing threads set .grad first, or add into it in place
            if grad_set:
                (w * 0.0).sum().backward()
            start = threading.Barrier(n)

            def work(i, w=w, start=start):
                start.wait(10)
                (w * w * (i + 1)).sum().backward()

            _run_threads(work, n)
            want = 2 * xn * sum(range(1, n + 1))
            np.testing.assert_allclose(to_np(w.grad), want, rtol=1e-6, err_msg=f"round {r}")
    finally:
        sys.setswitchinterval(old)


def test_backward_with_inputs_from_threads_sums_every_gradient(device):
    """backward(inputs=[w]) took the same unlocked check-then-set path."""
    if device != "cpu":
        pytest.skip("the lock is device-independent; once is enough")
    n = 8
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            w = T.ones(200_000).requires_grad_()   # a long add (GIL released): a wide window
            start = threading.Barrier(n)

            def work(i, w=w, start=start):
                start.wait(10)
                (w * 2.0).sum().backward(inputs=[w])

            _run_threads(work, n)
            np.testing.assert_array_equal(to_np(w.grad), np.full(200_000, 2.0 * n, np.float32))
    finally:
        sys.setswitchinterval(old)


def _run_child_script(code: str, timeout: float = 90) -> str:
    """Run `code` in a fresh interpreter (it forks there); a hang fails instead of blocking."""
    import subprocess
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the script hung (a forked child deadlocked?): {e.stdout!r} {e.stderr!r}")
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


_WAIT_CHILD = '''
def wait_child(pid, seconds=30):
    import os, time
    end = time.time() + seconds
    while time.time() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hung"
'''


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_forked_child_runs_kernels_after_the_parent_ran_openmp(device):
    """Caught: once the parent had run an OpenMP kernel on several threads, a forked child's
    first parallel kernel waited forever for the parent's (absent) libgomp pool threads."""
    if device != "cpu":
        pytest.skip("OpenMP: CPU kernels")
    code = _WAIT_CHILD + '''
import os, numpy as np, tensor as T
T.set_num_threads(2)
a = T.ones((400, 400)) * 0.5
want = float((a @ a).sum()), float((a + a).sum())
pid = os.fork()
if pid == 0:
    try:
        got = float((a @ a).sum()), float((T.exp(a) + a).sum())
        ok = got[0] == want[0] and abs(got[1] - 160000 * (np.exp(0.5) + 0.5)) < 1
        import warnings
        with warnings.catch_warnings(record=True) as w:   # asking for threads back warns
            warnings.simplefilter("always")
            T.set_num_threads(1)
            T.set_num_threads(3)
            T.set_num_threads(1)
        ok = ok and len(w) == 1 and "forked" in str(w[0].message)
        os._exit(0 if ok and T.get_num_threads() == 1 else 3)
    except BaseException:
        os._exit(4)
import warnings
warnings.simplefilter("error")
T.set_num_threads(2)   # the parent itself is no forked child: no warning
print("child", wait_child(pid), "parent threads", T.get_num_threads())
'''
    assert _run_child_script(code).split() == ["child", "0", "parent", "threads", "2"]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_fork_while_another_thread_holds_library_locks(device):
    """Caught: a child forked while another thread held a kernel-build key lock (a build takes
    seconds) or was inside an allocator's locked section inherited the lock held by a thread it
    does not have, and hung on its first use of it."""
    if device != "cpu":
        pytest.skip("the locks are device-independent")
    code = _WAIT_CHILD + '''
import os, threading, time, numpy as np, tensor as T
from tensor import kernel_cache as kc
from tensor import memstats
alloc = memstats.allocator("cpu")
x = T.ones(10)   # the allocator and the fast path exist
inside, leave = threading.Event(), threading.Event()

def hold():
    with kc.key_lock("test:held"):          # a build in progress on this thread
        with alloc._lock:                    # and a locked section of the allocator
            inside.set()
            time.sleep(0.3)                  # the fork waits for the allocator's lock
        leave.wait(30)

t = threading.Thread(target=hold, daemon=True)
t.start()
inside.wait(30)
pid = os.fork()
if pid == 0:
    with kc.key_lock("test:held"):
        y = T.arange(5.0) * 2
    os._exit(0 if y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0] else 3)
status = wait_child(pid)
leave.set()
t.join(30)
print("child", status)
'''
    assert _run_child_script(code).split() == ["child", "0"]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_fork_during_a_kernel_build_child_gets_the_product(device, tmp_path):
    """Caught: the child inherited the building thread's descriptor of the build's lock file and
    never closed it, so the lock outlived the parent's close and the child, asking for the same
    product, waited for its own copy forever."""
    if device != "cpu":
        pytest.skip("the kernel cache is device-independent")
    code = _WAIT_CHILD + f'''
import os, threading, time
from pathlib import Path
from tensor import kernel_cache as kc
path = Path({str(tmp_path)!r}) / "k.bin"
building = threading.Event()

def build():
    building.set()
    time.sleep(0.5)
    return b"image"

t = threading.Thread(target=kc.fetch, args=(path, build), daemon=True)
t.start()
building.wait(30)
pid = os.fork()
if pid == 0:
    os._exit(0 if kc.fetch(path, lambda: b"rebuilt") in (b"image", b"rebuilt") else 3)
status = wait_child(pid)
t.join(30)
print("child", status)
'''
    assert _run_child_script(code).split() == ["child", "0"]


def test_memory_stats_while_another_thread_makes_pools(device):
    """Caught: the device-level statistics iterate the allocator's WeakSet of private pools; a
    pool made meanwhile on another thread (a capture or CUDA graph starting) raised
    'RuntimeError: Set changed size during iteration' out of T.memory_allocated()."""
    if device != "cpu":
        pytest.skip("memstats is device-independent")
    from tensor.cpu.alloc import private_allocator
    T.ones(1)
    errors, keep, stop = [], [], time.perf_counter() + 1.5

    def maker(_):
        while time.perf_counter() < stop and not errors:
            keep.append(private_allocator())
            if len(keep) > 50:
                keep.clear()

    def reader(_):
        while time.perf_counter() < stop and not errors:
            try:
                T.memory_allocated()
                assert T.memory_stats()["allocated_bytes.all.current"] >= 0
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        _run_threads(lambda i: (maker, reader)[i](i), 2)
    finally:
        sys.setswitchinterval(old)
    keep.clear()
    if errors:
        raise errors[0]


def test_one_no_grad_instance_entered_by_two_threads(device):
    """Caught: the modes found on entry were one stack per instance, shared by the threads, so a
    module-level `NG = no_grad()` entered by two threads gave thread A, on exit, the mode that
    thread B had (A left with grad mode off)."""
    if device != "cpu":
        pytest.skip("grad mode is device-independent")
    for ctx in (autograd.no_grad(), autograd.enable_grad(), autograd.inference_mode()):
        a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
        before, after = {}, {}

        def run(i, ctx=ctx, a_in=a_in, b_in=b_in, a_out=a_out, before=before, after=after):
            autograd.set_grad_enabled(i == 0)   # thread 0 on, thread 1 off
            if i == 1:
                a_in.wait(10)
            before[i] = autograd.is_grad_enabled()
            with ctx:
                (a_in if i == 0 else b_in).set()
                (b_in if i == 0 else a_out).wait(10)
            after[i] = autograd.is_grad_enabled()
            if i == 0:
                a_out.set()

        _run_threads(run, 2)
        assert after == before == {0: True, 1: False}, type(ctx).__name__


def test_one_stream_entered_by_two_threads(device):
    """Caught: `with s:` kept the streams current on entry in one stack per Stream, shared by
    the threads: thread A, leaving after thread B entered, got B's stream back as current."""
    if device != "cuda":
        pytest.skip("CUDA streams")
    import tensor.cuda as tc
    shared, other = tc.Stream(), tc.Stream()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    before, after = {}, {}

    def run(i):
        if i == 1:
            a_in.wait(10)
        with tc.stream(other if i == 1 else None):   # thread 1 runs on `other`, 0 on the default
            before[i] = tc.current_stream().id
            with shared:
                (a_in if i == 0 else b_in).set()
                (b_in if i == 0 else a_out).wait(10)
            after[i] = tc.current_stream().id
            if i == 0:
                a_out.set()

    _run_threads(run, 2)
    assert after == before and before[1] == other.id and before[0] != other.id


def test_threads_find_one_accumulator_per_leaf(device, monkeypatch):
    """Caught: a leaf's AccumulateGrad (and its AGMeta) were made by a check-then-set; two threads
    starting backward(inputs=[w]) over a fresh shared leaf could each make one, and the edge a
    thread's graph held was not the one its capture looked for: its gradient was silently lost
    (8 threads summed to 10 for 16, under load)."""
    if device != "cpu":
        pytest.skip("the graph is device-independent")
    from autograd import graph as G

    class Slow(G.AccumulateGrad):   # widen the window: switch threads while making the node
        def __init__(self, t):
            time.sleep(0.01)
            super().__init__(t)
    monkeypatch.setattr(G, "AccumulateGrad", Slow)
    w = T.ones(3).requires_grad_()
    start, edges = threading.Barrier(4), []

    def run(i):
        start.wait(10)
        edges.append(G.edge_of(w))

    _run_threads(run, 4)
    assert len({id(e[0]) for e in edges}) == 1
