"""Index samplers, as torch.utils.data's: Sampler, SequentialSampler, RandomSampler,
SubsetRandomSampler, WeightedRandomSampler and BatchSampler (nn.data re-exports them; a
DataLoader takes one as sampler= or batch_sampler=). Their random draws come from `generator`
(a tensor.random.Generator) or tensor's default one, so tensor.manual_seed makes them
reproducible; the streams are ours, not PyTorch's.

>>> import tensor as T
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
>>> sorted(RandomSampler(range(4), generator=T.random.Generator(0)))
[0, 1, 2, 3]
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

import tensor as T
from tensor.random import Generator


class Sampler:
    """Base class: an iterable of dataset indices (or of lists of them, for a batch sampler),
    usually with a __len__."""

    def __init__(self, data_source: Any = None) -> None:   # PyTorch's (deprecated) argument
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__}: __iter__ is not defined")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _check_bool(name: str, what: str, v) -> None:
    if not isinstance(v, bool):
        raise TypeError(f"{name}: {what} should be a boolean value, but got {what}={v!r}")


def _check_count(name: str, what: str, v) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name}: {what} should be a positive integer value, but got {what}={v!r}")


class RandomSampler(Sampler):
    """A random order of the dataset's indices: without replacement, whole permutations (the
    last one cut) until num_samples (default: the dataset's length) are given; with replacement,
    num_samples independent uniform draws."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        _check_bool("RandomSampler", "replacement", replacement)
        _check_count("RandomSampler", "num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, k = len(self.data_source), self.num_samples
        if self.replacement:
            yield from T.random.randint(0, n, size=(k,), dtype="int64",
                                        generator=self.generator).tolist()
            return
        for _ in range(k // n):
            yield from T.random.permutation(n, generator=self.generator).tolist()
        if k % n:
            yield from T.random.permutation(n, generator=self.generator).tolist()[:k % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order (a new one each iteration)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in T.random.permutation(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to `weights` (one per dataset
    item, not necessarily summing to 1); with replacement=False each index at most once."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        _check_count("WeightedRandomSampler", "num_samples", num_samples)
        _check_bool("WeightedRandomSampler", "replacement", replacement)
        w = np.asarray(weights.numpy() if isinstance(weights, T.Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        if not replacement and num_samples > len(w):
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples without "
                             f"replacement from {len(w)} weights")
        self.weights = T.asarray(w)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        return iter(T.multinomial(self.weights, self.num_samples, self.replacement,
                                  generator=self.generator).tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler` (the last one shorter, or dropped with
    drop_last=True)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        _check_count("BatchSampler", "batch_size", batch_size)
        _check_bool("BatchSampler", "drop_last", drop_last)
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n, b = len(self.sampler), self.batch_size
        return n // b if self.drop_last else -(-n // b)


__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]
