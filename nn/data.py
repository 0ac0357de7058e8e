"""Datasets and batching, as torch.utils.data: Dataset, TensorDataset, Subset, random_split,
DataLoader, and DistributedSampler (each rank of a data-parallel job reads its share).

>>> import tensor as T
>>> x, y = T.arange(10.0).reshape(5, 2), T.arange(5)
>>> loader = DataLoader(TensorDataset(x, y), batch_size=2, shuffle=True,
...                     generator=T.random.Generator(0))
>>> [tuple(b.shape) for b, _ in loader], len(loader)
([(2, 2), (2, 2), (1, 2)], 3)
"""
from __future__ import annotations

import numbers
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

import tensor as T
from tensor import Tensor
from tensor.random import Generator


class Dataset:
    """A map-style dataset: subclass with __getitem__(i) and __len__()."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: __getitem__ is not defined")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: __len__ is not defined")


class TensorDataset(Dataset):
    """Rows of tensors that share their first dimension: item i is (t[i] for t in tensors)."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor) or t.ndim == 0:
                raise TypeError(f"TensorDataset: expected tensors with at least one dimension, got "
                                f"{t.shape if isinstance(t, Tensor) else type(t).__name__}")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: tensors differ in their first dimension: {sizes}")
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The items of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, [operator.index(i) for i in indices]

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths (or fractions summing
    to 1, rounded down with the remainder handed out one by one, as PyTorch)."""
    n = len(dataset)
    if lengths and all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1) < 1e-9:
        counts = [int(f * n) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"random_split: lengths {list(lengths)} do not add up to the dataset's "
                         f"length {n}")
    perm = T.random.permutation(n, generator=generator).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[start:start + k]))
        start += k
    return out


class DistributedSampler:
    """The indices of `dataset` that one rank of a data-parallel job reads, as PyTorch's
    torch.utils.data.DistributedSampler: the dataset's order (a permutation drawn from
    seed + epoch when shuffle=True, the same on every rank; call set_epoch(e) at each epoch for
    a new one) is padded by repeating its first indices up to a multiple of num_replicas (or
    cut to one with drop_last=True), and rank r reads every num_replicas-th index from r.
    num_replicas and rank default to tensor.distributed's world size and rank.

    >>> s = DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False)
    >>> list(s), len(s)
    ([1, 3, 0], 3)
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            import tensor.distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: pass num_replicas and rank, or call "
                                   "tensor.distributed.init_process_group() first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if int(num_replicas) != num_replicas or num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be a positive int, got "
                             f"{num_replicas!r}")
        if int(rank) != rank or not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedSampler: invalid rank {rank!r}, rank should be in the "
                             f"interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, int(num_replicas), int(rank)
        self.shuffle, self.seed, self.drop_last, self.epoch = bool(shuffle), int(seed), \
            bool(drop_last), 0
        n, r = len(dataset), self.num_replicas
        # ceil((n - r) / r) when dropping the tail, else ceil(n / r), as PyTorch
        self.num_samples = -((r - n) // r) if drop_last and n % r else -(-n // r)
        self.total_size = self.num_samples * r

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order the next iteration gives (with shuffle=True)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            idx = T.random.permutation(n, generator=Generator(self.seed + self.epoch)).tolist()
        else:
            idx = list(range(n))
        if not self.drop_last:
            pad = self.total_size - n
            if pad and idx:
                idx += (idx * -(-pad // n))[:pad]
        else:
            idx = idx[:self.total_size]
        return iter(idx[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch: tensors (and NumPy arrays, numbers) are stacked
    along a new first axis; tuples, lists and dicts are collated field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return T.stack(batch)
    if isinstance(first, np.ndarray | np.generic):
        return T.asarray(np.stack(batch))
    if isinstance(first, bool | numbers.Number):
        return T.tensor(batch)
    if isinstance(first, str | bytes):
        return list(batch)
    if isinstance(first, Mapping):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, tuple | list):
        if any(len(b) != len(first) for b in batch):
            raise ValueError("default_collate: samples in a batch have different numbers of fields")
        cols = [default_collate(list(c)) for c in zip(*batch)]
        return tuple(cols) if isinstance(first, tuple) else cols
    raise TypeError(f"default_collate: cannot batch samples of type {type(first).__name__}; "
                    "pass collate_fn=")


class DataLoader:
    """Batches of a dataset: shuffled each epoch (from `generator`, or tensor's default one,
    so tensor.manual_seed makes the order reproducible) when shuffle=True; or in the order of
    `sampler` (an iterable of indices with a length, such as DistributedSampler).

    A TensorDataset with the default collate_fn takes a fast path: each batch is gathered with
    one integer-array index per tensor (x[idx]) instead of item by item. Batches are copies."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool = False,
                 drop_last: bool = False, generator: Generator | None = None,
                 collate_fn: Callable[[list], Any] | None = None, num_workers: int = 0,
                 sampler=None) -> None:
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got "
                             f"{batch_size!r}")
        if num_workers:
            raise NotImplementedError("DataLoader: num_workers > 0 is not supported (batches are "
                                      "built in the main process)")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, bool(shuffle)
        self.sampler = sampler
        self.drop_last, self.generator = bool(drop_last), generator
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self, n: int) -> Tensor | None:
        """The epoch's index order (int64 tensor), or None for 0..n-1."""
        if self.sampler is not None:
            return T.asarray(np.asarray(list(self.sampler), dtype=np.int64).reshape(-1))
        if not self.shuffle:
            return None
        return T.random.permutation(n, generator=self.generator)

    def __iter__(self) -> Iterator:
        order = self._order(len(self.dataset))
        n = len(self.dataset) if order is None else order.shape[0]
        if self.batch_size is None:
            idx = range(n) if order is None else order.tolist()
            return (self.dataset[i] for i in idx)
        stops = range(self.batch_size, n + 1 if self.drop_last else n + self.batch_size,
                      self.batch_size)
        spans = [(s - self.batch_size, min(s, n)) for s in stops]
        if type(self.dataset) is TensorDataset and self.collate_fn is None:
            return self._tensor_batches(order, spans)
        return self._item_batches(order, spans)

    def _tensor_batches(self, order, spans) -> Iterator[tuple]:
        ts = self.dataset.tensors
        for a, b in spans:
            if order is None:
                yield tuple(t[a:b].copy() for t in ts)
            else:
                idx = order[a:b]
                yield tuple(t[idx] for t in ts)

    def _item_batches(self, order, spans) -> Iterator:
        idx = list(range(len(self.dataset))) if order is None else order.tolist()
        collate = self.collate_fn or default_collate
        for a, b in spans:
            yield collate([self.dataset[i] for i in idx[a:b]])


__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "DistributedSampler",
           "default_collate"]
