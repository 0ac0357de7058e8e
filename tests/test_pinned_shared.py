"""Pinned (page-locked) host memory and shared memory for CPU tensors (tensor/pinned.py,
tensor/backend/pinned.py, tensor/shared.py): pin_memory / is_pinned, the factories'
pin_memory=True, non_blocking copies and the pinned caching allocator's event rule, DataLoader
pinning, share_memory_ / is_shared across fork and spawn.

The pinned tests run on a real GPU or the CUDA emulator (whose copies from and into pinned
memory wait on their stream as a DMA engine's do: tensor/cuda/emulator/driver.py); the ones that
watch a copy still pending run on the emulator only. Without CUDA, a subprocess checks the
errors and the DataLoader's warning.
"""
from __future__ import annotations

import collections
import gc
import multiprocessing as mp
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT

import tensor as T
from nn.data import DataLoader, Dataset, TensorDataset
from tensor import pinned
from tensor.cpu.alloc import cpu_allocator
from tensor.cuda import runtime as R

cuda = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
emulator = pytest.mark.skipif(not (CUDA_OK and R.emulated()),
                              reason="watches a copy still pending: the emulator's queued copies")


def _settle():
    """Every queued copy done and every parked pinned block given back."""
    gc.collect()
    T.cuda.synchronize()
    pinned.host_memory_allocated()   # (processes the events)


# ---------------------------------------------------------------- pin_memory, is_pinned

@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16", "bfloat16",
                                   "complex64", "uint8"])
def test_pin_memory_keeps_values_and_views_are_pinned(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 5)) * 4).astype(np.float64)
    x = T.asarray(a).astype(dtype)
    ref = x.astype("float64" if dtype != "complex64" else "complex128").numpy()
    for src in (x, x.T, x[::2, 1::2], x[1], x[0, 0], x[:0]):   # non-contiguous, 0-d, 0-size
        p = src.pin_memory()
        assert p.is_pinned() and not src.is_pinned()
        assert p.shape == src.shape and p.dtype == src.dtype and p.device == T.device("cpu")
        np.testing.assert_array_equal(p.astype(ref.dtype.name).numpy(),
                                      src.astype(ref.dtype.name).numpy())
    p = x.pin_memory()
    assert p.pin_memory() is p                       # already pinned: itself (PyTorch's)
    for v in (p[1:], p.T, p.reshape(-1)[::3], p[2, 4]):
        assert v.is_pinned()
    np.testing.assert_array_equal(p.astype(ref.dtype.name).numpy(), ref)


@cuda
def test_pinned_tensor_is_an_ordinary_cpu_tensor_and_aliases_its_views():
    p = T.arange(12.0).reshape(3, 4).pin_memory()
    v = p[1]
    v[:] = -1.0                                      # a write through a view reaches the base
    p[0, 0] = 7.0
    assert p.tolist() == [[7.0, 1.0, 2.0, 3.0], [-1.0] * 4, [8.0, 9.0, 10.0, 11.0]]
    assert (p * 2 + 1).sum().item() == 2 * (7 + 1 + 2 + 3 - 4 + 38) + 12
    assert T.shares_memory(p, v) and not p.is_shared()


@cuda
def test_pin_memory_is_differentiable():
    x = T.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.pin_memory()
    assert y.is_pinned() and y.requires_grad
    (y * y).sum().backward()
    assert x.grad.tolist() == [2.0, -4.0, 6.0]


@cuda
def test_factories_pin_memory():
    ref = {"empty": lambda **k: T.empty((2, 3), **k), "zeros": lambda **k: T.zeros(2, 3, **k),
           "ones": lambda **k: T.ones((2, 3), dtype=T.int32, **k),
           "full": lambda **k: T.full((4,), 2.5, **k),
           "empty_like": lambda **k: T.empty_like(T.ones(3), **k),
           "zeros_like": lambda **k: T.zeros_like(T.ones(3), **k),
           "ones_like": lambda **k: T.ones_like(T.ones(3, dtype=T.int8), **k),
           "full_like": lambda **k: T.full_like(T.ones(3), 9.0, **k),
           "arange": lambda **k: T.arange(1, 7, 2, **k), "linspace": lambda **k: T.linspace(0, 1, 5, **k),
           "eye": lambda **k: T.eye(3, k=1, **k)}
    for name, make in ref.items():
        plain, pin = make(), make(pin_memory=True)
        assert pin.is_pinned() and not plain.is_pinned(), name
        assert pin.dtype == plain.dtype and pin.shape == plain.shape, name
        if not name.startswith("empty"):
            assert pin.tolist() == plain.tolist(), name
    assert T.zeros(3, pin_memory=True, requires_grad=True).requires_grad
    for op, call in (("empty", lambda: T.empty(2, device="cuda", pin_memory=True)),
                     ("zeros", lambda: T.zeros(2, device="cuda", pin_memory=True)),
                     ("arange", lambda: T.arange(3, device="cuda", pin_memory=True))):
        with pytest.raises(RuntimeError, match=f"{op}: pin_memory=True needs a CPU tensor.*cuda"):
            call()


@cuda
def test_pin_memory_errors():
    with pytest.raises(RuntimeError, match="pin_memory: cannot pin a tensor on cuda:0: only CPU"):
        T.ones(2, device="cuda").pin_memory()
    with pytest.raises(TypeError, match="is_pinned: expected a Tensor, got list"):
        pinned.is_pinned([1.0])
    with pytest.raises(TypeError, match="pin_memory: expected a Tensor, got int"):
        pinned.pin_memory(3)
    assert not T.ones(2, device="cuda").is_pinned()   # PyTorch's: device memory is not pinned


# ---------------------------------------------------------------- non_blocking copies

@cuda
@pytest.mark.parametrize("how", ["to", "cuda", "positional"])
def test_non_blocking_host_to_device_values(how):
    a = np.arange(24, dtype=np.float32).reshape(4, 6) / 3
    x = T.asarray(a).pin_memory()
    y = {"to": lambda: x.to("cuda", non_blocking=True), "cuda": lambda: x.cuda(non_blocking=True),
         "positional": lambda: x.to("cuda", T.float64, True)}[how]()
    assert y.device == T.device("cuda:0")
    np.testing.assert_array_equal(y.cpu().numpy(), a.astype(y.dtype.name))
    # from pageable memory, from a non-contiguous pinned view: ordinary copies, same values
    for src in (T.asarray(a), x.T, x[:, ::2]):
        np.testing.assert_array_equal(src.to("cuda", non_blocking=True).cpu().numpy(), src.numpy())


@emulator
def test_non_blocking_copy_is_queued_until_ordered():
    x = T.arange(6.0).pin_memory()
    y = x.to("cuda", non_blocking=True)
    s = T.cuda.current_stream()
    assert not s.query()                             # the DMA has not run yet
    assert pinned.host_memory_stats()["pending_copies"] == 1
    x.fill_(-1.0)                                    # a race, as on a GPU: the copy reads it later
    assert y.cpu().tolist() == [-1.0] * 6            # (y.cpu() synchronizes: the copy runs now)
    assert s.query()
    # without non_blocking the copy has read the source when it returns
    x2 = T.arange(6.0).pin_memory()
    y2 = x2.to("cuda")
    x2.fill_(-1.0)
    assert y2.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # later work on the stream sees the copied bytes (the copy is ordered before it)
    x3 = T.arange(4.0).pin_memory()
    assert (x3.to("cuda", non_blocking=True) * 2).cpu().tolist() == [0.0, 2.0, 4.0, 6.0]


@emulator
def test_pinned_block_is_not_reused_while_its_copy_is_pending():
    _settle()
    base = pinned.host_memory_allocated()
    x = T.arange(64.0).pin_memory()
    ptr = x.data_ptr()
    y = x.to("cuda", non_blocking=True)
    del x
    gc.collect()
    st = pinned.host_memory_stats()
    assert st["parked_blocks"] == 1 and st["pending_copies"] == 1
    assert pinned.host_memory_allocated() == base + 512        # still counted: a copy reads it
    z = T.empty(64, pin_memory=True)
    assert z.data_ptr() != ptr                        # not x's block: the copy still reads it
    z.fill_(-5.0)
    assert y.cpu().tolist() == [float(i) for i in range(64)]   # the copy read x's values
    w = T.empty(64, pin_memory=True)                  # (the event has passed: x's block is back)
    assert w.data_ptr() == ptr
    st = pinned.host_memory_stats()
    assert st["parked_blocks"] == 0 and st["pending_copies"] == 0
    del z, w
    _settle()
    assert pinned.host_memory_allocated() == base


@emulator
def test_non_blocking_device_to_host_returns_pinned_with_its_bytes():
    # PyTorch's returns before the bytes arrive (a read before a synchronization is garbage);
    # here the copy to the host waits, so reading at once is right
    src = T.arange(10.0, device="cuda") * 3
    h = src.to("cpu", non_blocking=True)
    assert h.is_pinned() and h.device == T.device("cpu")
    assert h.tolist() == [3.0 * i for i in range(10)]
    assert (src + 1).to("cpu", non_blocking=True).tolist() == [3.0 * i + 1 for i in range(10)]


@cuda
def test_non_blocking_device_to_host_values_after_synchronize():
    a = np.random.default_rng(1).standard_normal((5, 7)).astype(np.float32)
    d = T.asarray(a, device="cuda")
    for src in (d, d.T, d[1:, ::3]):
        h = src.to("cpu", non_blocking=True)
        T.cuda.synchronize()
        assert h.is_pinned()
        np.testing.assert_array_equal(h.numpy(), np.ascontiguousarray(src.cpu().numpy()))


@cuda
def test_copy_accepts_non_blocking_and_has_read_its_source():
    d = T.zeros(3, device="cuda")
    p = T.arange(3.0).pin_memory()
    assert d.copy_(p, non_blocking=True) is d
    p.fill_(-1.0)                                    # copy_ has read p when it returns
    assert d.tolist() == [0.0, 1.0, 2.0]
    h = T.empty(3, pin_memory=True)
    h.copy_(d * 2, non_blocking=True)
    assert h.tolist() == [0.0, 2.0, 4.0]


@emulator
def test_emulator_driver_models_page_locked_memory():
    d = R.drv()
    R.device_state(0).make_current()
    err, p = d.cuMemHostAlloc(4096, 1)
    assert int(err) == 0 and R.is_pinned_host(p) is False   # (not through host_alloc's books)
    assert d.cuMemHostGetFlags(p + 100) == (0, 1)
    assert int(d.cuMemHostGetFlags(12345)[0]) == 1          # not pinned: invalid value
    assert int(d.cuMemHostAlloc(16, 1 << 5)[0]) == 1        # unknown flag
    err, dev = d.cuMemAlloc(4096)
    import ctypes
    ctypes.memset(p, 7, 64)
    s = R.check(d.cuStreamCreate(0), "cuStreamCreate")
    assert int(d.cuMemcpyHtoDAsync(dev, p, 64, s)[0]) == 0
    assert int(d.cuStreamQuery(s)[0]) == 600                # CUDA_ERROR_NOT_READY: queued
    assert int(d.cuStreamQuery(0)[0]) == 600                # the legacy stream waits for it too
    ev = R.check(d.cuEventCreate(0), "cuEventCreate")
    R.check(d.cuEventRecord(ev, s), "cuEventRecord")
    assert int(d.cuEventQuery(ev)[0]) == 600
    R.check(d.cuEventSynchronize(ev), "cuEventSynchronize")
    assert int(d.cuEventQuery(ev)[0]) == 0 and int(d.cuStreamQuery(s)[0]) == 0
    back = (ctypes.c_uint8 * 64)()
    R.check(d.cuMemcpyDtoH(back, dev, 64), "cuMemcpyDtoH")   # pageable: at once
    assert bytes(back) == b"\x07" * 64
    ctypes.memset(p, 0, 64)
    R.check(d.cuMemcpyDtoH(p, dev, 64), "cuMemcpyDtoH")      # synchronous even when pinned
    assert ctypes.string_at(p, 64) == b"\x07" * 64
    R.check(d.cuMemcpyDtoHAsync(p + 64, dev, 64, s), "cuMemcpyDtoHAsync")
    assert ctypes.string_at(p + 64, 4) == b"\x00" * 4        # not arrived yet
    R.check(d.cuStreamSynchronize(s), "cuStreamSynchronize")
    assert ctypes.string_at(p + 64, 64) == b"\x07" * 64
    ctypes.memset(p, 9, 64)
    R.check(d.cuMemcpyHtoDAsync(dev, p, 64, s), "cuMemcpyHtoDAsync")   # queued, then the free
    R.check(d.cuMemFreeHost(p), "cuMemFreeHost")             # runs it before unmapping
    R.check(d.cuMemcpyDtoH(back, dev, 64), "cuMemcpyDtoH")
    assert bytes(back) == b"\x09" * 64
    assert int(d.cuMemFreeHost(p)[0]) == 1                  # twice: invalid value
    R.check(d.cuEventDestroy(ev), "cuEventDestroy")
    R.check(d.cuStreamDestroy(s), "cuStreamDestroy")
    R.check(d.cuMemFree(dev), "cuMemFree")


@cuda
def test_non_blocking_copies_are_differentiable():
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    p = x.pin_memory()
    y = p.to("cuda", non_blocking=True)
    back = (y * y).to("cpu", non_blocking=True)
    T.cuda.synchronize()
    back.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


@cuda
def test_pinned_stats_return_to_baseline_and_empty_cache():
    _settle()
    pinned.host_empty_cache()
    base_alloc, base_res = pinned.host_memory_allocated(), pinned.host_memory_reserved()
    keep = []
    for n in (1, 100, 5000, 300_000):
        p = T.ones(n, pin_memory=True)
        keep.append(p.to("cuda", non_blocking=True))
        keep.append((keep[-1] + 1).to("cpu", non_blocking=True))
    st = pinned.host_memory_stats()
    assert st["allocated_bytes.current"] > base_alloc and st["num_raw_alloc"] >= 1
    assert pinned.max_host_memory_allocated() >= st["allocated_bytes.current"]
    T.cuda.synchronize()
    assert all(k.sum().item() == k.numel() * (1 if k.is_cuda else 2) for k in keep)
    del keep, p
    _settle()
    assert pinned.host_memory_allocated() == base_alloc
    pinned.host_empty_cache()
    assert pinned.host_memory_reserved() == base_res
    pinned.reset_peak_host_memory_stats()
    assert pinned.max_host_memory_allocated() == base_alloc


# ---------------------------------------------------------------- DataLoader

Pair = collections.namedtuple("Pair", "a b")


class _Dicts(Dataset):

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"x": T.full((2,), float(i)), "pair": Pair(T.tensor(i), [T.ones(1) * i, "s"])}


@cuda
@pytest.mark.parametrize("workers", [0, 1])
def test_dataloader_pins_batches(workers):
    ds = TensorDataset(T.arange(10.0).reshape(5, 2), T.arange(5))
    kw = {"num_workers": workers, "multiprocessing_context": "fork"} if workers else {}
    got = list(DataLoader(ds, batch_size=2, pin_memory=True, pin_memory_device="cuda", **kw))
    assert [b[1].tolist() for b in got] == [[0, 1], [2, 3], [4]]
    assert all(t.is_pinned() for b in got for t in b)
    batches = list(DataLoader(_Dicts(), batch_size=2, pin_memory=True, **kw))
    b = batches[1]
    assert b["x"].is_pinned() and b["x"].tolist() == [[2.0, 2.0], [3.0, 3.0]]
    assert isinstance(b["pair"], Pair) and b["pair"].a.is_pinned()
    assert b["pair"].b[0].is_pinned() and b["pair"].b[1] == ["s", "s"]
    plain = next(iter(DataLoader(ds, batch_size=2)))
    assert not plain[0].is_pinned()
    assert all(not t.is_pinned() for t in next(iter(DataLoader(ds, batch_size=None))))
    assert next(iter(DataLoader(ds, batch_size=None, pin_memory=True)))[0].is_pinned()


def test_dataloader_pin_memory_device_checked():
    ds = TensorDataset(T.arange(4.0))
    with pytest.raises(ValueError, match="pin_memory_device must be '' or a CUDA device"):
        DataLoader(ds, pin_memory=True, pin_memory_device="cpu")
    with pytest.raises(TypeError, match="pin_memory_device must be a str"):
        DataLoader(ds, pin_memory=True, pin_memory_device=0)


@cuda
def test_pin_nested_rules():
    t = T.ones(2)
    out = pinned.pin_nested((t, {"k": [t, 3]}, "text", None))
    assert isinstance(out, list)                     # a plain tuple becomes a list (PyTorch's)
    assert out[0].is_pinned() and out[1]["k"][0].is_pinned() and out[1]["k"][1] == 3
    assert out[2:] == ["text", None]
    d = T.ones(2, device="cuda")
    assert pinned.pin_nested([d])[0] is d            # device tensors pass


def test_without_cuda_pinning_raises_and_the_dataloader_warns_once():
    code = r"""
import warnings, tensor as T
from nn.data import DataLoader, TensorDataset
if T.cuda.is_available():
    print('GPU'); raise SystemExit
x = T.ones(3)
assert not x.is_pinned()
for f in (lambda: x.pin_memory(), lambda: T.empty(2, pin_memory=True),
          lambda: x.to('cuda', non_blocking=True)):
    try:
        f()
    except RuntimeError as e:
        print('ERR', e)
assert T.pinned.host_memory_stats() == {} and T.pinned.host_memory_allocated() == 0
loader = DataLoader(TensorDataset(T.arange(4.0)), batch_size=2, pin_memory=True)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter('always')
    for _ in range(2):
        got = list(loader)
print('WARN', len(w), w[0].message if w else '')
print('VALUES', [b[0].tolist() for b in got], any(b[0].is_pinned() for b in got))
"""
    env = dict(os.environ, STRIDEX_CUDA_EMULATOR="0", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=180, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0, r.stderr
    if "GPU" in r.stdout.split():
        pytest.skip("this machine's GPU stays visible with CUDA_VISIBLE_DEVICES=''")
    errs = [ln for ln in r.stdout.splitlines() if ln.startswith("ERR")]
    assert len(errs) == 3, r.stdout
    assert "pin_memory: pinned (page-locked) host memory needs a CUDA device" in errs[0]
    assert "empty: pinned (page-locked) host memory needs a CUDA device" in errs[1]
    assert "CUDA is not available" in errs[2]
    assert "WARN 1 DataLoader: 'pin_memory' argument is set as true but no accelerator" in r.stdout
    assert "VALUES [[0.0, 1.0], [2.0, 3.0]] False" in r.stdout


# ---------------------------------------------------------------- shared memory

def test_share_memory_moves_in_place_and_views_follow():
    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    x = T.asarray(a.copy())
    v, tv = x[1:3, ::2], x.T
    old = x.data_ptr()
    assert not x.is_shared() and not v.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and v.is_shared() and tv.is_shared() and x.data_ptr() != old
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(v.numpy(), a[1:3, ::2])
    v[:] = -1.0                                      # writes through views reach the base...
    x[3, 4] = 99.0
    assert tv[4, 3].item() == 99.0 and x[1, 2].item() == -1.0   # ... and the other views
    ptr = x.data_ptr()
    x.share_memory_()                                # already shared: a no-op
    assert x.data_ptr() == ptr
    y = x + 1                                        # ops read the new memory
    assert y[3, 4].item() == 100.0 and not y.is_shared()
    x.add_(1.0)
    assert v[0, 0].item() == 0.0


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "bfloat16", "complex128"])
def test_share_memory_dtypes_and_odd_shapes(dtype):
    for shape in ((), (0,), (3, 0), (7,), (2, 3, 4)):
        src = T.asarray(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 5)
        x = src.astype(dtype)
        before = x.astype("complex128").numpy().copy()
        x.share_memory_()
        assert x.is_shared()
        np.testing.assert_array_equal(x.astype("complex128").numpy(), before)


def test_share_memory_of_external_pinned_and_readonly_memory():
    n = np.arange(6.0)
    x = T.from_numpy(n)
    x.share_memory_()
    assert x.is_shared() and x.tolist() == n.tolist()
    b = T.broadcast_to(T.tensor([1.0, 2.0]), (3, 2))   # a read-only layout stays one
    b.share_memory_()
    assert b.is_shared() and b.tolist() == [[1.0, 2.0]] * 3
    with pytest.raises(ValueError):
        b[0, 0] = 5.0
    if CUDA_OK:
        _settle()
        base = pinned.host_memory_allocated()
        p = T.arange(4.0).pin_memory()
        p.share_memory_()                                # moved out of pinned memory
        assert p.is_shared() and not p.is_pinned() and p.tolist() == [0.0, 1.0, 2.0, 3.0]
        assert pinned.host_memory_allocated() == base
        d = T.ones(2, device="cuda")
        ptr = d.data_ptr()
        assert d.share_memory_() is d and d.data_ptr() == ptr and d.is_shared()   # PyTorch's


def test_share_memory_frees_the_old_block_and_leaks_nothing():
    gc.collect()
    a = cpu_allocator()
    base = a.memory_allocated()
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    xs = [T.ones(1000 + i) for i in range(20)]
    grown = a.memory_allocated()
    assert grown > base
    for x in xs:
        x.share_memory_()
    assert a.memory_allocated() == base              # the old blocks went back to the allocator
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds + 20   # one descriptor per shared storage
    assert sum(x.sum().item() for x in xs) == sum(1000 + i for i in range(20))
    del xs, x
    gc.collect()
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds
    with pytest.raises(TypeError, match="share_memory_: expected a Tensor, got list"):
        T.Tensor.share_memory_([1.0])
    with pytest.raises(TypeError, match="is_shared: expected a Tensor"):
        T.Tensor.is_shared(None)


def test_fork_children_write_into_shared_memory():
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    x = T.zeros(8)
    view = x[4:]
    x.share_memory_()
    pids = []
    for k in range(4):   # Hogwild: each child updates its own slots in place
        pid = os.fork()
        if pid == 0:
            try:
                x[k] = k + 1.0
                view[k].add_(10.0 * (k + 1))
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0]
    y = T.zeros(3)                                   # not shared: a child's write stays there
    pid = os.fork()
    if pid == 0:
        y[0] = 1.0
        os._exit(0)
    os.waitpid(pid, 0)
    assert y.tolist() == [0.0, 0.0, 0.0]


def _spawn_child(q, r):
    import tensor as T
    a, view, b = q.get(), q.get(), q.get()
    with T.no_grad():                               # (a is a leaf that requires grad)
        a[0] = 42.0                                 # reaches the parent
    view[0] = -7.0
    b[0] = 5.0                                      # a copy (not shared): stays here
    r.put((a.is_shared(), bool(T.shares_memory(a, view)), view.tolist(), b.is_shared(),
           a.requires_grad))
    r.put(q.get().tolist())                         # sent back shared: the same memory


def test_spawn_child_maps_the_same_memory_through_a_queue(monkeypatch):
    ctx = mp.get_context("spawn")
    x = T.arange(6.0).requires_grad_()
    with T.no_grad():
        x.share_memory_()
    view, b = x[3:], T.zeros(2)
    q, r = ctx.Queue(), ctx.Queue()
    # the child imports this module, hence conftest: no kernel warm-up threads there
    monkeypatch.setenv("CI", "")
    monkeypatch.setenv("STRIDEX_CUDA_EMULATOR", "0")
    p = ctx.Process(target=_spawn_child, args=(q, r), daemon=True)
    p.start()
    try:
        for t in (x, view, b):
            q.put(t)
        shared, alias, vals, b_shared, rg = r.get(timeout=120)
        assert shared and alias and vals == [-7.0, 4.0, 5.0] and not b_shared and rg
        q.put(x)
        assert r.get(timeout=30) == [42.0, 1.0, 2.0, -7.0, 4.0, 5.0]
        p.join(60)
    finally:
        if p.is_alive():
            p.terminate()
            p.join(10)
    assert p.exitcode == 0
    assert x.tolist() == [42.0, 1.0, 2.0, -7.0, 4.0, 5.0] and b.tolist() == [0.0, 0.0]
    back = pickle.loads(pickle.dumps(x))            # plain pickle: values, not the memory
    assert not back.is_shared() and back.tolist() == x.tolist()


def test_capture_refuses_share_memory():
    from tensor import _hook
    x = T.ones(3)
    saved, _hook.capture = _hook.capture, object()
    try:
        with pytest.raises(RuntimeError, match="share_memory_: cannot move a tensor's memory while"):
            x.share_memory_()
    finally:
        _hook.capture = saved
    assert not x.is_shared()

