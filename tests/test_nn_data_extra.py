"""nn.data fixes and additions from the differential hunt: default_collate's PyTorch rule for
namedtuples, tuples and lists (and the TensorDataset fast path agreeing with it), random_split's
fraction checks, DataLoader's PyTorch arguments (batch_sampler, the worker options), and
ConcatDataset, IterableDataset, ChainDataset and the samplers. Samplers are checked by the
properties of their index sequences, not against PyTorch's random streams."""
from __future__ import annotations

import collections
import warnings
from collections import Counter

import numpy as np
import pytest

import tensor as T
from nn.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    random_split,
)

P = collections.namedtuple("P", "x y")


class _Items(Dataset):
    def __init__(self, n, make):
        self.n, self.make = n, make

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.make(i)

    def __len__(self):
        return self.n


class _Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


# ---- finding 7: default_collate ------------------------------------------------------------------

def test_collate_keeps_namedtuples():
    ds = _Items(5, lambda i: P(T.asarray([float(i)]), i))
    batch = next(iter(DataLoader(ds, batch_size=2)))
    assert type(batch) is P
    assert batch.x.tolist() == [[0.0], [1.0]] and batch.y.tolist() == [0, 1]


def test_collate_gives_lists_for_tuples_and_lists_as_torch():
    assert type(default_collate([(1, 2.0), (3, 4.0)])) is list
    assert type(default_collate([[1, 2.0], [3, 4.0]])) is list
    out = default_collate([collections.OrderedDict(a=1, b=2)] * 2)
    assert type(out) is collections.OrderedDict and list(out) == ["a", "b"]
    # the TensorDataset fast path gives what default_collate gives item by item
    x, y = T.arange(10.0).reshape(5, 2), T.arange(5)
    fast = next(iter(DataLoader(TensorDataset(x, y), batch_size=2)))
    slow = default_collate([TensorDataset(x, y)[i] for i in range(2)])
    assert type(fast) is type(slow) is list
    assert [t.tolist() for t in fast] == [t.tolist() for t in slow]
    shuffled = next(iter(DataLoader(TensorDataset(x, y), batch_size=2, shuffle=True)))
    assert type(shuffled) is list


def test_collate_matches_torch_types():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as tc
    for sample in [(1, 2.0), [1, 2.0], P(1, 2.0), {"a": 1}, collections.OrderedDict(a=1)]:
        assert type(default_collate([sample, sample])) is type(tc([sample, sample])), sample
    del torch


# ---- finding 8: random_split ------------------------------------------------------------------

def test_random_split_refuses_fractions_outside_0_1():
    with pytest.raises(ValueError, match="index 0 is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    with pytest.raises(ValueError, match="index 1 is not between 0 and 1"):
        random_split(range(10), [0.5, 1.2, -0.7])
    with pytest.raises(ValueError, match="add up"):
        random_split(range(10), [3, 4])


def test_random_split_fractions_round_as_torch():
    parts = random_split(range(10), [0.33, 0.33, 0.34], generator=T.random.Generator(0))
    assert [len(p) for p in parts] == [4, 3, 3]   # floor 3, 3, 3; remainder 1 to the first
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    with pytest.warns(UserWarning, match="index 1 is 0"):
        parts = random_split(range(3), [0.9, 0.1])
    assert [len(p) for p in parts] == [3, 0]


# ---- finding 14: DataLoader arguments, datasets, samplers -----------------------------------------

def test_dataloader_accepts_torch_worker_options_with_num_workers_0():
    ds = TensorDataset(T.arange(6.0))
    loader = DataLoader(ds, batch_size=4, pin_memory=True, timeout=0, worker_init_fn=print,
                        persistent_workers=False, prefetch_factor=None, pin_memory_device="")
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]
    for kw, match in [({"timeout": -1}, "timeout"), ({"prefetch_factor": 2}, "prefetch_factor"),
                      ({"persistent_workers": True}, "persistent_workers"),
                      ({"num_workers": -1}, "num_workers")]:
        with pytest.raises(ValueError, match=match):
            DataLoader(ds, **kw)
    with pytest.raises(ValueError, match="start method"):   # (worker processes: test_data_workers.py)
        DataLoader(ds, num_workers=2, multiprocessing_context="no-such-method")
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, num_workers=2, prefetch_factor=0)


@pytest.mark.parametrize("fast", [True, False])
def test_dataloader_batch_sampler(fast):
    x = T.arange(10.0)
    ds = TensorDataset(x) if fast else _Items(10, lambda i: (x[i],))
    bs = [[3, 1], [0, 9, 4], [7]]
    loader = DataLoader(ds, batch_sampler=bs)
    assert [b[0].tolist() for b in loader] == [[3.0, 1.0], [0.0, 9.0, 4.0], [7.0]]
    assert len(loader) == 3
    loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, drop_last=True))
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
    for kw in ({"batch_size": 2}, {"shuffle": True}, {"drop_last": True},
               {"sampler": range(10)}):
        with pytest.raises(ValueError, match="mutually exclusive"):
            DataLoader(ds, batch_sampler=bs, **kw)


def test_dataloader_with_a_sampler_object():
    ds = TensorDataset(T.arange(8.0))
    s = SubsetRandomSampler([1, 3, 5, 7], generator=T.random.Generator(0))
    loader = DataLoader(ds, batch_size=3, sampler=s)
    got = [v for b in loader for v in b[0].tolist()]
    assert sorted(got) == [1.0, 3.0, 5.0, 7.0] and len(loader) == 2


def test_iterable_dataset_batches_in_order():
    assert [b.tolist() for b in DataLoader(_Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                         [6]]
    assert [b.tolist() for b in DataLoader(_Stream(7), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(_Stream(3), batch_size=None)) == [0, 1, 2]
    for kw in ({"shuffle": True}, {"sampler": range(3)}, {"batch_sampler": [[0]]}):
        with pytest.raises(ValueError, match="IterableDataset"):
            DataLoader(_Stream(3), **kw)
    with pytest.raises(TypeError, match="__len__"):
        len(DataLoader(_Stream(3), batch_size=2))
    chained = _Stream(2) + _Stream(3)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 0, 1, 2]


def test_concat_dataset_and_add():
    a, b = TensorDataset(T.arange(3.0)), TensorDataset(T.arange(10.0, 12.0))
    c = a + b
    assert isinstance(c, ConcatDataset) and len(c) == 5 and c.cumulative_sizes == [3, 5]
    assert [c[i][0].item() for i in range(5)] == [0.0, 1.0, 2.0, 10.0, 11.0]
    assert c[-1][0].item() == 11.0 and c[-5][0].item() == 0.0
    with pytest.raises(IndexError):
        c[5]
    with pytest.raises(IndexError):
        c[-6]
    assert [t.tolist() for t in next(iter(DataLoader(c, batch_size=5)))] == \
        [[0.0, 1.0, 2.0, 10.0, 11.0]]
    with pytest.raises(ValueError, match="empty"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="IterableDataset"):
        ConcatDataset([a, _Stream(2)])


def test_subset_takes_a_list_of_indices():
    class Lists(Dataset):
        def __getitem__(self, i):
            return [10 * j for j in i] if isinstance(i, list) else 10 * i

        def __len__(self):
            return 9

    s = Subset(Lists(), [8, 2, 5])
    assert s[1] == 20 and s[[0, 2]] == [80, 50]


def test_random_sampler_properties():
    ds = range(10)
    perm = list(RandomSampler(ds, generator=T.random.Generator(0)))
    assert sorted(perm) == list(range(10)) and perm != list(range(10))
    more = list(RandomSampler(ds, num_samples=25, generator=T.random.Generator(1)))
    assert len(more) == 25 and sorted(more[:20]) == sorted(list(range(10)) * 2)
    assert len(set(more[20:])) == 5   # the last, cut permutation has no repeats
    rep = list(RandomSampler(ds, replacement=True, num_samples=500, generator=T.random.Generator(2)))
    assert len(rep) == 500 and set(rep) == set(range(10))   # repeats, every index seen
    assert len(RandomSampler(ds, num_samples=7)) == 7 and len(RandomSampler(ds)) == 10
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(ds, num_samples=0)
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler([])   # as PyTorch: an empty dataset has no positive num_samples
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(ds, replacement=1)
    a = list(RandomSampler(ds, generator=T.random.Generator(7)))
    assert a == list(RandomSampler(ds, generator=T.random.Generator(7)))


def test_weighted_random_sampler_properties():
    w = [0.0, 1.0, 3.0, 0.0]
    draws = list(WeightedRandomSampler(w, 4000, generator=T.random.Generator(0)))
    counts = Counter(draws)
    assert set(counts) == {1, 2} and 2.6 < counts[2] / counts[1] < 3.4
    once = list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False,
                                      generator=T.random.Generator(1)))
    assert sorted(once) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="1d"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler(w, 0)
    with pytest.raises(TypeError, match="replacement"):
        WeightedRandomSampler(w, 2, replacement="yes")


def test_batch_and_sequential_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    b = BatchSampler(range(7), 3, drop_last=False)
    assert list(b) == [[0, 1, 2], [3, 4, 5], [6]] and len(b) == 3
    b = BatchSampler(range(7), 3, drop_last=True)
    assert list(b) == [[0, 1, 2], [3, 4, 5]] and len(b) == 2
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(TypeError, match="drop_last"):
        BatchSampler(range(3), 2, 0)
    with pytest.raises(NotImplementedError):
        iter(Sampler())
    sub = list(SubsetRandomSampler([4, 8, 15], generator=T.random.Generator(3)))
    assert sorted(sub) == [4, 8, 15]


def test_samplers_in_a_dataloader_need_no_torch():
    """A whole epoch through RandomSampler + BatchSampler visits every item once."""
    x = T.arange(20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = DataLoader(TensorDataset(x), batch_sampler=BatchSampler(
            RandomSampler(range(20), generator=T.random.Generator(4)), 6, drop_last=False))
        got = np.concatenate([b[0].numpy() for b in loader])
    assert sorted(got.tolist()) == list(map(float, range(20))) and len(loader) == 4
