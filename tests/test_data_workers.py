"""DataLoader(num_workers > 0): batches built in worker processes (nn/data_workers.py) equal the
in-process ones, in order; get_worker_info sharding of an IterableDataset; seeds; persistent
workers; worker_init_fn; failures (an exception, a dead worker, a timeout) raised in the main
process, never a hang; abandoned iterations stop their workers; the fork and spawn start
methods. Against num_workers=0 always and torch.utils.data where installed. These caught
num_workers > 0 raising NotImplementedError on the old code."""
from __future__ import annotations

import gc
import multiprocessing as mp
import os
import random
import threading
import time

import numpy as np
import pytest

import tensor as T
from nn.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes: fork")


@pytest.fixture(autouse=True)
def _fork_by_default(monkeypatch):
    """These tests' local datasets and callables need the fork start method when none is named
    (Python 3.14 makes forkserver Linux's default)."""
    if mp.get_context().get_start_method() != "fork":
        real = mp.get_context
        monkeypatch.setattr(mp, "get_context", lambda method=None: real(method or "fork"))


class Items(Dataset):
    """Item i: (a row of i's, i); i == bad raises ValueError, i == die kills the worker, i == slow
    sleeps `nap` seconds."""

    def __init__(self, n=23, bad=None, die=None, slow=None, nap=3.0):
        self.n, self.bad, self.die, self.slow, self.nap = n, bad, die, slow, nap

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"bad item {i}")
        if i == self.die:
            os._exit(3)
        if i == self.slow:
            time.sleep(self.nap)
        return T.asarray(np.full(3, float(i))), i


class Shards(IterableDataset):
    """0..n-1, each worker taking every num_workers-th (as PyTorch's docs shard)."""

    def __init__(self, n=10):
        self.n = n

    def __iter__(self):
        w = get_worker_info()
        lo, step = (0, 1) if w is None else (w.id, w.num_workers)
        return iter(range(lo, self.n, step))


class ShardsThreads(Shards):
    """Each item with the kernel threads of the process that made it."""

    def __iter__(self):
        return ((i, T.get_num_threads()) for i in super().__iter__())


class Draws(Dataset):
    """What each worker's random generators give (and its id and seed)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        w = get_worker_info()
        return [w.id, w.seed, random.random(), float(np.random.random()), float(T.rand(()))]


def _listed(batches):
    return [[b[0].tolist(), b[1].tolist()] for b in batches]


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("kw", [{"batch_size": 4}, {"batch_size": 4, "drop_last": True},
                                {"batch_size": 5, "shuffle": True}, {"batch_size": None},
                                {"batch_size": 3, "sampler": [5, 3, 9, 1, 22]},
                                {"batch_sampler": [[0, 4], [2], [7, 8, 9], [1]]}])
def test_workers_give_the_in_process_batches(workers, kw):
    T.manual_seed(7)
    want = list(DataLoader(Items(), **kw))
    after = float(T.rand(()))
    T.manual_seed(7)
    got = list(DataLoader(Items(), num_workers=workers, **kw))
    # one base seed drawn either way (no draw without workers before): as PyTorch, the random
    # numbers after an epoch do not depend on num_workers
    assert float(T.rand(())) == after
    if kw.get("batch_size", 1) is None:
        assert [(a.tolist(), b) for a, b in got] == [(a.tolist(), b) for a, b in want]
    else:
        assert _listed(got) == _listed(want)
    if "sampler" not in kw:
        return
    pids = {p for p in DataLoader(Items(4), batch_size=2, num_workers=workers,
                                  collate_fn=lambda b: os.getpid())}
    assert os.getpid() not in pids and len(pids) == min(workers, 2)   # collate_fn runs in the workers
    x = T.arange(20.0).reshape(10, 2)   # the TensorDataset fast path, in a worker
    assert [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=3, num_workers=2)] == \
        [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=3)]


def test_iterable_dataset_draws_the_base_seed_without_workers_too():
    T.manual_seed(3)
    assert [b.tolist() for b in DataLoader(Shards(6), batch_size=4)] == [[0, 1, 2, 3], [4, 5]]
    after = float(T.rand(()))
    T.manual_seed(3)
    assert sorted(sum((b.tolist() for b in DataLoader(Shards(6), batch_size=2, num_workers=2)),
                      [])) == list(range(6))
    assert float(T.rand(())) == after


def test_iterable_dataset_sharded_by_worker_info():
    assert get_worker_info() is None
    got = [b.tolist() for b in DataLoader(Shards(), batch_size=2, num_workers=2)]
    # round-robin over the workers: 0 2 | 1 3 | 4 6 | 5 7 | 8 | 9 (PyTorch's order)
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    got = [b.tolist() for b in DataLoader(Shards(), batch_size=2, num_workers=3, drop_last=True)]
    assert got == [[0, 3], [1, 4], [2, 5], [6, 9]]


def test_order_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    class TShards(tud.IterableDataset):
        def __iter__(self):
            w = tud.get_worker_info()
            return iter(range(w.id, 11, w.num_workers))
    want = [b.tolist() for b in tud.DataLoader(TShards(), batch_size=2, num_workers=2,
                                               multiprocessing_context="fork")]
    assert [b.tolist() for b in DataLoader(Shards(11), batch_size=2, num_workers=2)] == want
    del torch


def test_seeds_differ_per_worker_and_repeat_with_the_seed():
    def draws():
        return [x for b in DataLoader(Draws(), batch_size=None, num_workers=2) for x in [b]]
    T.manual_seed(3)
    a = draws()
    T.manual_seed(3)
    b = draws()
    assert a == b
    ids = [r[0] for r in a]
    assert ids == [0, 1, 0, 1] and a[1][1] == a[0][1] + 1   # base_seed + worker id
    assert len({r[2] for r in a}) == 4 and len({r[4] for r in a}) == 4   # not the same streams
    g = T.Generator()
    g.manual_seed(5)
    c = [r for r in DataLoader(Draws(), batch_size=None, num_workers=2, generator=g)]
    assert c[0][1] != a[0][1]
    g.manual_seed(5)
    assert [r for r in DataLoader(Draws(), batch_size=None, num_workers=2, generator=g)] == c


def test_worker_init_fn_and_persistent_workers():
    seen = mp.get_context("fork").Queue()

    def init(i):
        seen.put((i, get_worker_info().id, os.getpid()))
    loader = DataLoader(Items(8), batch_size=2, num_workers=2, worker_init_fn=init,
                        persistent_workers=True, prefetch_factor=1, pin_memory=True)
    first = _listed(loader)
    pids = [w.pid for w in loader._workers._workers]
    second = _listed(loader)
    assert first == second == _listed(DataLoader(Items(8), batch_size=2))
    assert [w.pid for w in loader._workers._workers] == pids   # the same processes
    calls = sorted(seen.get(timeout=10) for _ in range(2))
    assert [c[:2] for c in calls] == [(0, 0), (1, 1)] and sorted(c[2] for c in calls) == sorted(pids)
    for i, _ in enumerate(loader):   # a broken epoch, then a whole one
        if i == 1:
            break
    assert _listed(loader) == first
    it = DataLoader(Shards(), batch_size=3, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in it] == [b.tolist() for b in it]   # the stream restarts per epoch
    loader._workers.shutdown()
    it._workers.shutdown()


def test_worker_exception_is_raised_with_its_traceback():
    caught = r"(?s)Caught ValueError in DataLoader worker process \d.*bad item 5"
    with pytest.raises(ValueError, match=caught):
        list(DataLoader(Items(bad=5), batch_size=2, num_workers=2))

    def failing_init(i):
        raise KeyError("no init")
    with pytest.raises(KeyError, match="worker_init_fn"):
        list(DataLoader(Items(4), batch_size=2, num_workers=1, worker_init_fn=failing_init))

    def init_1_fails(i):
        if i == 1:
            raise KeyError("no init")
    # a stream whose worker failed to start reports it once and ends (it did so for ever)
    it = iter(DataLoader(Shards(4), batch_size=None, num_workers=2, worker_init_fn=init_1_fails))
    got = []
    for _ in range(10):
        try:
            got.append(int(next(it)))
        except KeyError:
            got.append("KeyError")
        except StopIteration:
            break
    assert got == [0, "KeyError", 2]


def test_dead_worker_and_timeout_raise_instead_of_hanging():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="exited unexpectedly with exit code 3"):
        list(DataLoader(Items(die=5), batch_size=2, num_workers=2))
    with pytest.raises(RuntimeError, match="timed out after 0.5 seconds"):
        list(DataLoader(Items(6, slow=2), batch_size=1, num_workers=1, timeout=0.5))
    assert time.monotonic() - start < 20
    assert not [p for p in mp.active_children() if p.is_alive()]


def test_abandoned_iteration_stops_its_workers():
    it = iter(DataLoader(Items(), batch_size=2, num_workers=2))
    next(it)
    procs = list(it._workers)
    del it
    gc.collect()
    deadline = time.monotonic() + 10
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(p.is_alive() for p in procs)


def test_spawn_context_and_unpicklable_arguments():
    x = T.arange(12.0).reshape(6, 2)
    got = [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=4, num_workers=1,
                                             multiprocessing_context="spawn")]
    assert got == [x[:4].tolist(), x[4:].tolist()]
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid context"):
        DataLoader(TensorDataset(x), num_workers=1, multiprocessing_context=5)   # (was AttributeError)
    got = [[b[0].tolist(), b[1].tolist()] for b in DataLoader(
        ShardsThreads(5), batch_size=2, num_workers=2, multiprocessing_context=mp.get_context("spawn"))]
    # one kernel thread per worker as PyTorch's (a spawned worker had os.cpu_count())
    assert got == [[[0, 2], [1, 1]], [[1, 3], [1, 1]], [[4], [1]]]
    with pytest.raises(RuntimeError, match="picklable"):
        list(DataLoader(TensorDataset(x), batch_size=4, num_workers=1, multiprocessing_context="spawn",
                        collate_fn=lambda b: b))


# ---- hardening (hunt 8): each of these failed (hung, stalled or differed) on the first version

def test_tensors_travel_with_their_values_dtypes_and_shapes():
    """Views, non-contiguous tensors, every kind of dtype, 0-d and empty tensors come back from a
    worker equal to what the dataset gave (pickled compactly: a view's own elements only)."""
    base = T.arange(24.0).reshape(2, 3, 4)
    items = [base, base[:, 1], T.swapaxes(base, 0, 2), base[..., ::2],
             T.asarray(np.arange(6) % 2 == 0), T.asarray(np.arange(4).astype(np.complex64) * 1j),
             T.arange(5.0).astype("float16"), T.arange(5.0).astype("bfloat16"),
             T.arange(5).astype("int8"), T.tensor(3.5), T.zeros((0, 3))]

    class Listed(Dataset):
        def __len__(self):
            return len(items)

        def __getitem__(self, i):
            return items[i]
    got = list(DataLoader(Listed(), batch_size=None, num_workers=2))
    for a, b in zip(items, got, strict=True):
        assert (b.dtype, b.shape) == (a.dtype, a.shape)
        assert np.array_equal(np.asarray(b.astype("float64") if b.dtype == T.bfloat16 else b),
                              np.asarray(a.astype("float64") if a.dtype == T.bfloat16 else a))


class _LocalThing:
    pass


def test_unpicklable_batch_is_reported_not_a_hang():
    """Caught: a batch the worker could not pickle was dropped by the queue's feeder thread and
    the main process waited for ever (here the timeout= made the old code fail, not hang)."""
    class Unpicklable(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return {"f": lambda: i}
    with pytest.raises(Exception, match=r"(?s)DataLoader worker process 0 \(sending its dict batch.*"
                                        r"picklable"):
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1, timeout=10))

    # a key a sampler gives that cannot be pickled (the task was lost: a hang)
    with pytest.raises(TypeError, match="sampler's keys .* cannot be sent to a worker"):
        list(DataLoader(Items(2), sampler=[threading.Lock()], batch_size=None, num_workers=1,
                        timeout=5))

    class LocalError(Exception):
        pass

    class Raises(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise LocalError("from a local class") if i else KeyError("no such key")
    # a KeyError keeps its message readable; an exception type local to a function comes back
    # as RuntimeError naming it
    with pytest.raises(KeyError) as e:
        list(DataLoader(Raises(), batch_size=None, num_workers=1, timeout=10))
    assert "Caught KeyError in DataLoader worker process 0.\nOriginal Traceback" in str(e.value)
    class Stops(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise StopIteration
            return i
    # a StopIteration from __getitem__ ended the epoch silently after one batch; without workers
    # it is a RuntimeError too (PEP 479)
    for workers in (0, 1):
        with pytest.raises(RuntimeError, match="StopIteration"):
            list(DataLoader(Stops(), batch_size=2, num_workers=workers))
    with pytest.raises(RuntimeError, match=r"(?s)Caught LocalError.*from a local class"):
        list(DataLoader(Subset1(Raises()), batch_size=None, num_workers=1, timeout=10))


class Subset1(Dataset):
    """Item 1 of a dataset, twice."""

    def __init__(self, d):
        self.d = d

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.d[1]


def test_break_with_large_batches_stops_quickly():
    """Caught: the stopping workers waited to flush prefetched batches nobody reads (5 s)."""
    loader = DataLoader(TensorDataset(T.zeros((48, 128, 128))), batch_size=8, num_workers=2)
    it = iter(loader)
    next(it)
    start = time.monotonic()   # the stop only (starting workers on a loaded CI machine is slow)
    del it
    gc.collect()
    assert time.monotonic() - start < 4
    assert not [p for p in mp.active_children() if p.is_alive()]
    assert len(list(loader)) == 6   # a whole epoch after the broken one


_EXIT_SCRIPT = """
import os, sys
sys.path.insert(0, {root!r})
import tensor as T
from nn.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(T.zeros((64, 128, 128))), batch_size=4, num_workers=2,
                    persistent_workers=True)
it = iter(loader)
next(it)
print(*[p.pid for p in loader._workers._workers], flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_no_orphan_workers_when_the_main_process_ends(tmp_path, how):
    """At interpreter exit mid-epoch the workers stop at once; when the main process is killed
    they notice and exit (caught: they blocked for ever flushing their queue)."""
    import subprocess
    import sys
    script = tmp_path / "main.py"
    script.write_text(_EXIT_SCRIPT.format(root=os.path.dirname(os.path.dirname(__file__))))
    start = time.monotonic()
    with open(tmp_path / "out", "w") as out:   # (a file: orphans holding a pipe would block)
        subprocess.run([sys.executable, str(script), how], stdout=out, timeout=60)
    assert time.monotonic() - start < 30
    pids = [int(p) for p in (tmp_path / "out").read_text().split()]
    assert len(pids) == 2

    def running(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split(")")[-1].split()[0] != "Z"
        except FileNotFoundError:
            return False
    deadline = time.monotonic() + 10
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [p for p in pids if running(p)]
    for p in alive:
        os.kill(p, 9)
    assert not alive


def test_in_order_false_yields_batches_as_they_arrive():
    ds = Items(8, slow=0, nap=2.0)   # item 0 takes 2 s: worker 1's batches come first
    got = [b[1].tolist() for b in DataLoader(ds, batch_size=2, num_workers=2, in_order=False)]
    assert got == [[2, 3], [6, 7], [0, 1], [4, 5]]


def test_idle_worker_killed_and_dropped_persistent_loader():
    loader = DataLoader(Items(6), batch_size=2, num_workers=2, persistent_workers=True,
                        multiprocessing_context=mp.get_context("fork"))
    assert _listed(loader) == _listed(DataLoader(Items(6), batch_size=2))
    procs = list(loader._workers._workers)
    os.kill(procs[1].pid, 9)
    procs[1].join(5)
    with pytest.raises(RuntimeError, match=r"worker 1 \(pid \d+\) exited unexpectedly with exit "
                                           r"code -9 \(killed by signal SIGKILL"):
        _listed(loader)
    assert _listed(loader) == _listed(DataLoader(Items(6), batch_size=2))   # new workers
    procs = list(loader._workers._workers)
    del loader   # no reference cycle: the workers stop without a gc pass
    for p in procs:
        p.join(10)
    assert not any(p.is_alive() for p in procs)


def test_worker_seeds_as_torch():
    """Worker w's seed is base_seed + w (non-negative, from the loader's generator), Python's
    `random` and the tensor library's generator are seeded with it, as in PyTorch."""
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    class TDraws(tud.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            w = tud.get_worker_info()
            return [w.seed, random.random(), torch.initial_seed()]

    class Mine(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            w = get_worker_info()
            return [w.seed, random.random(), T.initial_seed()]
    for cls, loader_cls in [(TDraws, tud.DataLoader), (Mine, DataLoader)]:
        rows = list(loader_cls(cls(), batch_size=None, num_workers=2, multiprocessing_context="fork"))
        (s0, r0, i0), (s1, r1, i1) = rows
        assert s0 >= 0 and s1 == s0 + 1 and (i0, i1) == (s0, s1)
        assert (r0, r1) == (random.Random(s0).random(), random.Random(s1).random())


def test_stuck_worker_is_stopped_despite_an_inherited_sigterm_handler():
    """Caught: a forked worker kept the main process's SIGTERM handler, so terminate() did not
    stop a worker stuck in __getitem__ (it outlived the timed-out loader)."""
    import signal
    old = signal.signal(signal.SIGTERM, lambda *a: None)
    try:
        start = time.monotonic()
        with pytest.raises(RuntimeError, match="timed out after 0.5 seconds"):
            list(DataLoader(Items(2, slow=0, nap=20), batch_size=None, num_workers=1, timeout=0.5))
        assert not [p for p in mp.active_children() if p.is_alive()]
        assert time.monotonic() - start < 5
    finally:
        signal.signal(signal.SIGTERM, old)


def _drain(it):
    out = []
    for _ in range(20):   # (bounded: an iterator that keeps raising must not loop for ever)
        try:
            x = next(it)
            out.append((x[0] if isinstance(x, list) else x).tolist())   # (the tensor of an Items batch)
        except ValueError:
            out.append("ValueError")
        except StopIteration:
            break
    return out


def test_iteration_goes_on_after_a_worker_exception_as_torch():
    """Caught: after a worker's exception the next next() raised "Queue ... is closed"; PyTorch's
    iterator goes on with the following batches. After a timeout the iterator says it stopped."""
    got = _drain(iter(DataLoader(Items(8, bad=2), batch_size=2, num_workers=2, timeout=10)))
    b = [[float(i)] * 3 for i in range(8)]
    assert got == [[b[0], b[1]], "ValueError", [b[4], b[5]], [b[6], b[7]]]
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    class TBad(tud.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            if i == 2:
                raise ValueError("bad")
            return torch.full((3,), float(i))
    want = _drain(iter(tud.DataLoader(TBad(), batch_size=2, num_workers=2,
                                      multiprocessing_context="fork")))
    assert got == want
    it = iter(DataLoader(Items(6, slow=2, nap=5), batch_size=2, num_workers=1, timeout=0.3))
    next(it)
    with pytest.raises(RuntimeError, match="timed out"):
        next(it)
    with pytest.raises(RuntimeError, match=r"this iteration was stopped \(timed out after 0.3 seconds"):
        next(it)
