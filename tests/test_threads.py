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
