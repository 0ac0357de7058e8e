"""nn.data: Dataset, TensorDataset, Subset, random_split and DataLoader.

Batches are checked value by value against the rows they must hold; shuffling against the
generator's own permutation (reproducible from a seed, a new order every epoch, every row
exactly once); the TensorDataset fast path against the item-by-item path it replaces.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from nn.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split

pytestmark = pytest.mark.usefixtures("device")


def rows(n=10, d=3):
    x = T.arange(n * d, dtype=T.float32).reshape(n, d)
    y = T.arange(n) * 10
    return x, y


class Squares(Dataset):
    """A custom map-style dataset: item i is (i as a length-2 float tensor, i*i as an int)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return T.tensor([i, -i], dtype=T.float32), i * i

    def __len__(self):
        return self.n


class Wrapped(Dataset):
    """The same items as a TensorDataset, through the generic (item by item) path."""

    def __init__(self, ds):
        self.ds = ds

    def __getitem__(self, i):
        return self.ds[i]

    def __len__(self):
        return len(self.ds)


def test_tensor_dataset_items_and_length_check():
    x, y = rows()
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[3]
    assert xi.tolist() == [9.0, 10.0, 11.0] and int(yi) == 30
    with pytest.raises(ValueError, match=r"first dimension: \[10, 9\]"):
        TensorDataset(x, y[:9])
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(TypeError, match="at least one dimension"):
        TensorDataset(T.tensor(1.0))


@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_batches(drop_last):
    x, y = rows()
    loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=drop_last)
    batches = list(loader)
    assert len(loader) == len(batches) == (2 if drop_last else 3)
    want = [(0, 4), (4, 8)] + ([] if drop_last else [(8, 10)])
    for (bx, by), (a, b) in zip(batches, want):
        assert bx.dtype is T.float32 and by.dtype is T.int64
        assert bx.tolist() == x[a:b].tolist() and by.tolist() == y[a:b].tolist()
    batches[0][0][...] = -1.0  # batches are copies: the dataset is untouched
    assert float(x[0, 0]) == 0.0
    assert list(list(loader)[0][1].tolist()) == [0, 10, 20, 30]  # a second epoch, same order


def test_len_for_every_remainder():
    for n in range(0, 9):
        for bs in (1, 3, 4, 8, 20):
            for dl in (False, True):
                loader = DataLoader(TensorDataset(T.zeros(n, 1)), batch_size=bs, drop_last=dl)
                sizes = [b[0].shape[0] for b in loader]
                assert len(sizes) == len(loader) == (n // bs if dl else -(-n // bs))
                assert sum(sizes) == (n // bs * bs if dl else n) and all(s <= bs for s in sizes)


def test_shuffle_is_reproducible_and_a_permutation():
    x, y = rows(23)
    ds = TensorDataset(x, y)

    def epochs(seed, k=3):
        loader = DataLoader(ds, batch_size=5, shuffle=True, generator=T.random.Generator(seed))
        return [np.concatenate([by.numpy() for _, by in loader]) for _ in range(k)]

    a, b = epochs(7), epochs(7)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    assert not np.array_equal(a[0], a[1])  # a fresh order each epoch
    for order in a:
        assert sorted(order.tolist()) == (np.arange(23) * 10).tolist()
    expect = T.random.Generator(7).permutation(23).numpy() * 10  # the generator's own order
    assert np.array_equal(a[0], expect)
    assert not np.array_equal(epochs(8)[0], a[0])
    for bx, by in DataLoader(ds, batch_size=5, shuffle=True):  # rows stay paired
        assert np.array_equal(bx.numpy()[:, 0] / 3 * 10, by.numpy())


def test_shuffle_follows_the_global_seed():
    ds = TensorDataset(T.arange(50))
    T.manual_seed(3)
    first = [b[0].tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    T.manual_seed(3)
    again = [b[0].tolist() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    assert first == again and first[0] != list(range(8))


@pytest.mark.parametrize("shuffle", [False, True])
def test_fast_path_equals_item_path(shuffle):
    x, y = rows(13)
    ds = TensorDataset(x, y)
    fast = DataLoader(ds, batch_size=4, shuffle=shuffle, generator=T.random.Generator(1))
    slow = DataLoader(Wrapped(ds), batch_size=4, shuffle=shuffle, generator=T.random.Generator(1))
    for (fx, fy), (sx, sy) in zip(fast, slow, strict=True):
        assert fx.tolist() == sx.tolist() and fy.tolist() == sy.tolist()
        assert fx.dtype is sx.dtype and fy.dtype is sy.dtype


def test_custom_dataset_default_collate():
    loader = DataLoader(Squares(5), batch_size=2)
    batches = list(loader)
    assert len(batches) == len(loader) == 3
    bx, by = batches[1]
    assert bx.shape == (2, 2) and bx.tolist() == [[2.0, -2.0], [3.0, -3.0]]
    assert by.dtype is T.int64 and by.tolist() == [4, 9]
    assert batches[2][0].tolist() == [[4.0, -4.0]]


def test_collate_structures_and_custom_collate_fn():
    batch = [{"img": np.ones((2, 2), np.float32) * i, "label": i, "name": f"s{i}",
              "pair": (T.tensor(i), [1.5 * i])} for i in range(3)]
    out = default_collate(batch)
    assert out["img"].shape == (3, 2, 2) and out["img"].dtype is T.float32
    assert out["label"].tolist() == [0, 1, 2] and out["name"] == ["s0", "s1", "s2"]
    assert out["pair"][0].tolist() == [0, 1, 2] and out["pair"][1][0].tolist() == [0.0, 1.5, 3.0]
    with pytest.raises(TypeError, match="collate_fn"):
        default_collate([object()])
    loader = DataLoader(Squares(4), batch_size=3, collate_fn=lambda items: [s for _, s in items])
    assert list(loader) == [[0, 1, 4], [9]]
    x, _ = rows(4)
    summed = DataLoader(TensorDataset(x), batch_size=2, collate_fn=lambda b: sum(float(r[0].sum())
                                                                                 for r in b))
    assert list(summed) == [15.0, 51.0]  # collate_fn also applies to a TensorDataset


def test_batch_size_none_yields_items():
    assert [s for _, s in DataLoader(Squares(3), batch_size=None)] == [0, 1, 4]
    assert len(DataLoader(Squares(3), batch_size=None)) == 3


def test_subset_and_random_split():
    ds = Squares(10)
    sub = Subset(ds, [7, 2])
    assert len(sub) == 2 and sub[0][1] == 49
    parts = random_split(ds, [6, 4], generator=T.random.Generator(0))
    assert [len(p) for p in parts] == [6, 4]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(ds, [6, 4], generator=T.random.Generator(0))
    assert again[0].indices == parts[0].indices
    fr = random_split(ds, [0.5, 0.3, 0.2], generator=T.random.Generator(0))
    assert [len(p) for p in fr] == [5, 3, 2]
    assert [len(p) for p in random_split(Squares(7), [0.5, 0.5])] == [4, 3]
    with pytest.raises(ValueError, match="add up"):
        random_split(ds, [3, 3])


def test_loader_argument_errors():
    ds = Squares(3)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-2)
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
