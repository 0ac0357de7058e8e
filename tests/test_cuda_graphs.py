"""CUDA Graphs (tensor.cuda.CUDAGraph, tensor.cuda.graph): capture, replay with new inputs,
the capture's private pool, what cannot be captured (a clear error, nothing left broken), and
the driver's rule that a launch's arguments are copied when it is recorded. On the CUDA
emulator without a GPU (its driver records and replays graphs: tensor/cuda/emulator/driver.py)
and on a GPU."""
from __future__ import annotations

import ctypes as C

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT
from helpers import to_np

import tensor as T
from tensor.cuda.runtime import CudaError

pytestmark = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")


def _f32(a):
    return T.asarray(np.asarray(a, np.float32), device="cuda")


def _step(x, w):
    """Elementwise, a reduction, a matmul and a view: the kinds of work a step records."""
    h = T.maximum(x @ w, 0.0)
    return (h * 2 - 1).sum(axis=1), T.exp(h.T[:2]) + x.mean()


def test_replay_reads_the_static_inputs_and_rewrites_the_outputs():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((6, 5)).astype(np.float32) for _ in range(3)]
    w = _f32(rng.standard_normal((5, 4)))
    x = _f32(xs[0])
    _step(x, w)   # warm-up: kernels compile and load outside the capture
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        a, b = _step(x, w)
    for v in xs[1:] + xs[:1]:
        x.copy_(_f32(v))
        g.replay()
        ea, eb = _step(_f32(v), w)
        np.testing.assert_allclose(to_np(a), to_np(ea), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(to_np(b), to_np(eb), rtol=1e-6, atol=1e-6)


def test_capture_runs_nothing_and_outputs_keep_their_addresses():
    x = _f32(np.arange(8))
    y = x * 3
    g = T.cuda.CUDAGraph()
    y.fill_(-1.0)
    with T.cuda.graph(g):
        z = y + x          # recorded: y still holds -1 when it runs for real
        y.copy_(x * 3)     # an in-place write is recorded too
    assert to_np(y).tolist() == [-1.0] * 8
    ptr = z.data_ptr()
    g.replay()
    assert z.data_ptr() == ptr and to_np(z).tolist() == list(np.arange(8) - 1.0)
    assert to_np(y).tolist() == list(np.arange(8) * 3.0)
    g.replay()   # y is 3x now: z = 3x + x
    assert to_np(z).tolist() == list(np.arange(8) * 4.0)


def test_host_reads_inside_a_capture_raise_and_leave_the_device_working():
    x = _f32(np.ones(16))
    (x * 3).sum()
    dev = x.device
    before = T.backend.backend_for(dev)
    g = T.cuda.CUDAGraph()
    with pytest.raises(CudaError) as e:   # the host read
        with T.cuda.graph(g):
            (x * 3).sum().item()
    assert "CUDA graph" in str(e.value)
    assert T.backend.backend_for(dev) is before and not T.cuda.is_current_stream_capturing()
    assert T.cuda.current_stream() == T.cuda.default_stream()
    assert (x * 3).sum().item() == 48.0          # eager work runs again
    with pytest.raises(RuntimeError, match="nothing captured"):
        g.replay()
    with T.cuda.graph(g):                        # the graph object can capture afresh
        y = x + 1
    g.replay()
    assert to_np(y).tolist() == [2.0] * 16


def test_an_exception_in_the_block_ends_the_capture():
    x = _f32(np.ones(4))
    x + 1
    g = T.cuda.CUDAGraph()
    with pytest.raises(ZeroDivisionError):
        with T.cuda.graph(g):
            x + 1
            raise ZeroDivisionError("the block fails")
    assert not T.cuda.is_current_stream_capturing()
    assert to_np(x + 1).tolist() == [2.0] * 4


def test_bad_uses_are_refused():
    g = T.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="default stream"):
        g.capture_begin(stream=T.cuda.default_stream())
    with pytest.raises(ValueError, match="capture_error_mode"):
        g.capture_begin(capture_error_mode="strict")
    with pytest.raises(RuntimeError, match="no capture"):
        g.capture_end()
    x = _f32(np.ones(4))
    x * 2
    with T.cuda.graph(g):
        x * 2
    with pytest.raises(RuntimeError, match="reset"):
        g.capture_begin()
    g.reset()
    with pytest.raises(RuntimeError, match="nothing captured"):
        g.replay()


def test_capture_allocates_from_the_graphs_pool_and_pools_can_be_shared():
    x = _f32(np.ones(1 << 12))
    x * 2
    import gc
    gc.collect()   # earlier tests' graphs and their pools
    gc.disable()   # none goes while the figures are compared
    try:
        before = T.cuda.memory_allocated()
        device_own = T.memstats.allocator("cuda").memory_allocated()
        g1, g2 = T.cuda.CUDAGraph(), T.cuda.CUDAGraph()
        with T.cuda.graph(g1):
            y = x * 2
        assert y._storage._alloc is g1.pool()      # y lives in g1's pool, not the device's own
        assert T.memstats.allocator("cuda").memory_allocated() == device_own
        assert T.cuda.memory_allocated() == before + 4 * (1 << 12)   # the device's figure has it
        assert T.cuda.max_memory_allocated() >= T.cuda.memory_allocated()
    finally:
        gc.enable()
    with T.cuda.graph(g2, pool=g1.pool()):
        z = y + 1
    assert z._storage._alloc is g1.pool()
    g1.replay()
    g2.replay()
    assert to_np(z)[:3].tolist() == [3.0] * 3


def test_a_launch_keeps_the_arguments_it_had_when_recorded():
    """The driver copies kernel arguments at capture: changing them after does not change the
    graph (the runtime reuses argument structs between launches)."""
    from tensor.cuda import index as CI
    t = T.zeros(4, dtype="int64", device="cuda")
    val = C.c_int64(7)
    CI._launch(t.device, "sx_fill_i64", 4, CI._p(t), C.c_int64(4), val)
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        CI._launch(t.device, "sx_fill_i64", 4, CI._p(t), C.c_int64(4), val)
    val.value = 9
    t.fill_(0)
    g.replay()
    assert to_np(t).tolist() == [7] * 4


def test_a_kernel_first_used_inside_the_capture_loads_there():
    """Compiling and loading a kernel (and new pool memory) inside a capture: the runtime
    makes those driver calls in relaxed capture mode, as they record nothing."""
    x = T.asarray(np.linspace(-1, 1, 7), device="cuda")   # float64
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        assert T.cuda.is_current_stream_capturing()
        y = T.arctanh(x * 0.5)
    assert not T.cuda.is_current_stream_capturing()
    g.replay()
    np.testing.assert_allclose(to_np(y), np.arctanh(np.linspace(-1, 1, 7) * 0.5), rtol=1e-15)


def _mlp_steps(compiled: bool, n: int = 5):
    from nn import Linear, ReLU, Sequential
    from nn import functional as F
    from nn.optim import Adam
    T.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Sequential(Linear(12, 16), ReLU(), Linear(16, 4)).to("cuda")
    x = T.asarray(rng.random((8, 12), dtype=np.float32), device="cuda")
    y = T.asarray(rng.integers(0, 4, 8), device="cuda")
    opt = Adam(model.parameters(), lr=1e-2)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    f = T.compile(step) if compiled else step
    losses = [to_np(f()).item() for _ in range(n)]
    return losses, f.stats() if compiled else None


def test_compiled_cuda_step_replays_through_graphs_with_eager_bits():
    eager, _ = _mlp_steps(False)
    got, st = _mlp_steps(True)
    assert got == eager                       # bit for bit, every step
    assert st["replays"] >= 2 and st["cuda_graphs"] >= 1, st
    assert st["fused_calls"] > 0, st           # fused kernels inside the graphs
    assert st["inputs_in_place"] == st["outputs_in_place"] == 0   # a graph keeps its addresses


def test_graphs_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("STRIDEX_CUDA_GRAPHS", "0")
    eager, _ = _mlp_steps(False, 4)
    got, st = _mlp_steps(True, 4)
    assert got == eager and st["cuda_graphs"] == 0 and st["fused_calls"] > 0


def test_a_capture_after_frees_deferred_on_another_stream():
    """Memory freed while another stream may still read it waits on an event; the allocator
    polls those events (queries, which do not wait) when a capture allocates: allowed."""
    x = _f32(np.ones(1 << 10))
    s = T.cuda.Stream()
    with s:
        y = x * 2
    x.record_stream(s)
    del x   # a deferred free: its block waits for s, polled at the next allocation
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        z = y + 1
    g.replay()
    assert to_np(z)[:2].tolist() == [3.0, 3.0]


def test_a_dead_pool_freed_during_a_capture_waits_for_its_end():
    """Another graph's pool that the garbage collector frees while a capture records would
    free device memory (a synchronization): the frees wait until the capture ends."""
    import gc
    gc.collect()   # earlier tests' garbage graphs go now, not inside the capture below
    x = _f32(np.ones(1 << 12))
    x * 2
    old = T.cuda.CUDAGraph()
    with T.cuda.graph(old):
        y = x * 3
    reserved = T.cuda.memory_reserved()
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        del old, y
        gc.collect()          # the old pool goes: its segment's free is held back
        z = x + 1
    g.replay()
    assert to_np(z)[:2].tolist() == [2.0, 2.0]
    assert T.cuda.memory_reserved() == reserved   # the device's own pool: untouched
