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
import time

import numpy as np
import pytest

import tensor as T
from nn.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes: fork")


class Items(Dataset):
    """Item i: (a row of i's, i); i == bad raises ValueError, i == die kills the worker, i == slow
    sleeps 3 s."""

    def __init__(self, n=23, bad=None, die=None, slow=None):
        self.n, self.bad, self.die, self.slow = n, bad, die, slow

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"bad item {i}")
        if i == self.die:
            os._exit(3)
        if i == self.slow:
            time.sleep(3)
        return T.asarray(np.full(3, float(i))), i


class Shards(IterableDataset):
    """0..n-1, each worker taking every num_workers-th (as PyTorch's docs shard)."""

    def __init__(self, n=10):
        self.n = n

    def __iter__(self):
        w = get_worker_info()
        lo, step = (0, 1) if w is None else (w.id, w.num_workers)
        return iter(range(lo, self.n, step))


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
                                {"batch_size": 5, "shuffle": True}, {"batch_size": None}])
def test_workers_give_the_in_process_batches(workers, kw):
    T.manual_seed(7)
    want = list(DataLoader(Items(), **kw))
    T.manual_seed(7)
    got = list(DataLoader(Items(), num_workers=workers, **kw))
    if kw.get("batch_size") is None:
        assert [(a.tolist(), b) for a, b in got] == [(a.tolist(), b) for a, b in want]
    else:
        assert _listed(got) == _listed(want)
    x = T.arange(20.0).reshape(10, 2)   # the TensorDataset fast path, in a worker
    assert [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=3, num_workers=2)] == \
        [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=3)]


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
    want = [b.tolist() for b in tud.DataLoader(TShards(), batch_size=2, num_workers=2)]
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


def test_worker_init_fn_and_persistent_workers():
    seen = mp.get_context("fork").Queue()

    def init(i):
        seen.put((i, get_worker_info().id, os.getpid()))
    loader = DataLoader(Items(8), batch_size=2, num_workers=2, worker_init_fn=init,
                        persistent_workers=True, prefetch_factor=1)
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
    with pytest.raises(RuntimeError, match="picklable"):
        list(DataLoader(TensorDataset(x), batch_size=4, num_workers=1, multiprocessing_context="spawn",
                        collate_fn=lambda b: b))
