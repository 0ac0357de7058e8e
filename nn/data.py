"""Datasets and batching, as torch.utils.data: Dataset, IterableDataset, TensorDataset,
ConcatDataset, ChainDataset, Subset, random_split, DataLoader, DistributedSampler (each rank of
a data-parallel job reads its share) and the samplers of nn/data_samplers.py.

>>> import tensor as T
>>> x, y = T.arange(10.0).reshape(5, 2), T.arange(5)
>>> loader = DataLoader(TensorDataset(x, y), batch_size=2, shuffle=True,
...                     generator=T.random.Generator(0))
>>> [tuple(b.shape) for b, _ in loader], len(loader)
([(2, 2), (2, 2), (1, 2)], 3)
"""
from __future__ import annotations

import bisect
import copy
import math
import multiprocessing as mp
import numbers
import operator
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

import tensor as T
from tensor import Tensor
from tensor import pinned as _pinned
from tensor.random import Generator

from .data_samplers import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .data_workers import WorkerInfo, WorkerIterator, get_worker_info


class Dataset:
    """A map-style dataset: subclass with __getitem__(i) and __len__(); a + b concatenates."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: __getitem__ is not defined")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: __len__ is not defined")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclass with __iter__() (a DataLoader batches it in order; it
    takes no sampler or shuffle); a + b chains two."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__}: __iter__ is not defined")

    def __len__(self) -> int:   # a TypeError, as for an object without one (PyTorch's)
        raise TypeError(f"{type(self).__name__}: this IterableDataset has no __len__")

    def __add__(self, other: IterableDataset) -> ChainDataset:
        return ChainDataset([self, other])


class ConcatDataset(Dataset):
    """The items of several map-style datasets, one after the other.

    >>> d = ConcatDataset([TensorDataset(T.zeros(2)), TensorDataset(T.ones(3))])
    >>> len(d), d[2][0].item(), d.cumulative_sizes
    (5, 1.0, [2, 5])
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise TypeError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        n, i = len(self), operator.index(index)
        if not -n <= i < n:
            raise IndexError(f"ConcatDataset: index {index} is out of range for length {n}")
        i %= n
        k = bisect.bisect_right(self.cumulative_sizes, i)
        return self.datasets[k][i - (self.cumulative_sizes[k - 1] if k else 0)]


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, one stream after the other."""

    def __init__(self, datasets: Iterable[IterableDataset]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


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
        if isinstance(index, list):   # as PyTorch: a list of indices into the subset
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        """The items at a batch of indices (the DataLoader's batched fetch): the dataset's own
        __getitems__ when it has one, as PyTorch's."""
        keys = [self.indices[i] for i in indices]
        fetch = getattr(self.dataset, "__getitems__", None)
        return list(fetch(keys)) if fetch else [self.dataset[k] for k in keys]

    def __len__(self) -> int:
        return len(self.indices)


class StackDataset(Dataset):
    """Several map-style datasets of one length side by side, as torch.utils.data.StackDataset:
    item i is the tuple (d[i] for d in args) or, given keyword datasets, the dict
    {name: d[i]}.

    >>> s = StackDataset(img=[10, 11], label=[0, 1])
    >>> len(s), s[1]
    (2, {'img': 11, 'label': 1})
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: pass the datasets either positionally (tuple items) "
                             "or by keyword (dict items), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset: at least one dataset should be passed")
        self.datasets: tuple | dict = args if args else dict(kwargs)
        parts = args if args else tuple(kwargs.values())
        sizes = [len(d) for d in parts]
        if len(set(sizes)) != 1:
            raise ValueError(f"StackDataset: size mismatch between datasets: {sizes}")
        self._length = sizes[0]

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """A batch of items, each dataset read with its own __getitems__ when it has one."""
        named = isinstance(self.datasets, dict)
        cols = {}
        for k, d in (self.datasets.items() if named else enumerate(self.datasets)):
            fetch = getattr(d, "__getitems__", None)
            col = list(fetch(indices)) if fetch else [d[i] for i in indices]
            if len(col) != len(indices):
                raise ValueError(f"StackDataset: dataset {k!r} gave {len(col)} items for a batch "
                                 f"of {len(indices)} indices")
            cols[k] = col
        if named:
            return [{k: c[j] for k, c in cols.items()} for j in range(len(indices))]
        return [tuple(c[j] for c in cols.values()) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths, or of fractions in
    [0, 1] summing to 1 (each length rounded down, the remainder handed out one by one; an
    empty split warns), as PyTorch's (which takes any lengths summing to 1 as fractions)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, f in enumerate(lengths):
            if not 0 <= f <= 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1: {f}")
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, k in enumerate(counts):
            if k == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0. This might "
                              "result in an empty dataset.", UserWarning, stacklevel=2)
        lengths = counts
    if any(isinstance(k, bool) or int(k) != k or k < 0 for k in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions "
                         f"summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: lengths {lengths} do not add up to the dataset's "
                         f"length {n}")
    perm = T.random.permutation(n, generator=generator).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[start:start + int(k)]))
        start += int(k)
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
    along a new first axis; tuples, lists and dicts are collated field by field, as PyTorch's:
    a tuple or list sample gives a list, a namedtuple or a dict keeps its type."""
    first = batch[0]
    if isinstance(first, Tensor):
        return T.stack(batch)
    if isinstance(first, np.ndarray | np.generic):
        if first.dtype.kind not in "biufc":   # strings, objects, dates: no tensor holds them
            raise TypeError(f"default_collate: cannot batch NumPy arrays or scalars of dtype "
                            f"{first.dtype}; pass collate_fn=")
        return T.asarray(np.stack(batch))
    if isinstance(first, bool | numbers.Number):
        return T.tensor(batch)
    if isinstance(first, str | bytes):
        return list(batch)
    if isinstance(first, Mapping):
        out = {k: default_collate([b[k] for b in batch]) for k in first}
        if isinstance(first, MutableMapping):   # as PyTorch: keep the mapping's type
            try:
                clone = copy.copy(first)
                clone.update(out)
                return clone
            except TypeError:
                pass
        return out
    if isinstance(first, tuple | list):
        if any(len(b) != len(first) for b in batch):
            raise ValueError("default_collate: samples in a batch have different numbers of fields")
        cols = [default_collate(list(c)) for c in zip(*batch)]
        if isinstance(first, tuple) and hasattr(first, "_fields"):   # a namedtuple stays one
            return type(first)(*cols)
        if type(first) not in (tuple, list):   # a list subclass: its clone, as PyTorch
            try:
                clone = copy.copy(first)
                clone[:] = cols
                return clone
            except TypeError:
                pass
        return cols   # a plain tuple or list gives a list (PyTorch's rule)
    raise TypeError(f"default_collate: cannot batch samples of type {type(first).__name__}; "
                    "pass collate_fn=")


def default_convert(data: Any) -> Any:
    """A sample as a DataLoader without batching (batch_size=None) gives it, PyTorch's
    default_convert: NumPy arrays and scalars of numbers become tensors (a scalar a 0-d one),
    fields of dicts, namedtuples and lists are converted in place of their values, a tuple
    becomes a list; anything else (tensors, Python numbers, strings) is left as it is."""
    if isinstance(data, np.ndarray | np.generic):
        if data.dtype.kind in "biufc":
            return T.asarray(data)
        return data
    if isinstance(data, str | bytes | Tensor):
        return data
    if isinstance(data, Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        if isinstance(data, MutableMapping) and type(data) is not dict:
            try:
                clone = copy.copy(data)
                clone.update(out)
                return clone
            except TypeError:
                pass
        return out
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):
            return type(data)(*(default_convert(v) for v in data))
        return [default_convert(v) for v in data]
    if isinstance(data, list):
        out = [default_convert(v) for v in data]
        if type(data) is not list:
            try:
                clone = copy.copy(data)
                clone[:] = out
                return clone
            except TypeError:
                pass
        return out
    return data


_NONE = object()


class DataLoader:
    """Batches of a dataset, PyTorch's arguments: shuffled each epoch (from `generator`, or
    tensor's default one, so tensor.manual_seed makes the order reproducible) when shuffle=True;
    or in the order of `sampler` (an iterable of indices with a length: RandomSampler,
    DistributedSampler, ...); or the index lists of `batch_sampler`. An IterableDataset is
    batched in the order it yields.

    num_workers > 0 builds the batches in worker processes (nn/data_workers.py), as PyTorch's:
    multiprocessing_context ('fork', 'spawn', 'forkserver' or a context; the platform's default
    when None; spawn and forkserver pickle the dataset, collate_fn and worker_init_fn), the
    sampler's batches handed out round-robin with prefetch_factor (default 2) in flight per
    worker and yielded in order (in_order=False: as they arrive); an IterableDataset is iterated
    by each worker on its own copy (get_worker_info() to shard it); each worker seeds `random`,
    NumPy's global generator and tensor's default one from a base seed drawn from `generator`
    (or tensor's default one) + its id, runs its kernels on one thread (as PyTorch's) and calls
    worker_init_fn(id); persistent_workers=True keeps them for the next epochs. A worker's
    exception is raised here with its traceback, a dead worker or no batch within `timeout`
    seconds raises RuntimeError; an abandoned iteration stops its workers. Batches must be
    picklable (tensors are). pin_memory=True copies every CPU tensor of each batch (inside
    tuples, lists, dicts, namedtuples) into pinned host memory in the main process, as PyTorch's
    pin-memory thread, so `batch.to('cuda', non_blocking=True)` overlaps the copy with compute
    (tensor/pinned.py); without a CUDA device it warns once and does not pin. pin_memory_device
    (PyTorch's, deprecated there) is accepted: '' or a CUDA device.

    With batch_size=None (no batching) each sample goes through collate_fn, by default
    default_convert (NumPy arrays to tensors, as PyTorch's). A sampler's indices are passed to
    the dataset as they are (any keys its __getitem__ takes); a dataset with __getitems__ gets
    each batch's indices at once.

    A TensorDataset with the default collate_fn takes a fast path: each batch is gathered with
    one integer-array index per tensor (x[idx]) instead of item by item; it is a list, as
    default_collate makes. Batches are copies."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got "
                             f"{batch_size!r}")
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers,
                       multiprocessing_context)
        if isinstance(dataset, IterableDataset):
            for name, v in (("shuffle", shuffle if shuffle else None), ("sampler", sampler),
                            ("batch_sampler", batch_sampler)):
                if v is not None:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={v!r}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size = None
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is "
                             "mutually exclusive with drop_last")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, bool(shuffle)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.drop_last, self.generator = bool(drop_last), generator
        if not isinstance(pin_memory_device, str):
            raise TypeError(f"DataLoader: pin_memory_device must be a str, got "
                            f"{type(pin_memory_device).__name__}")
        if pin_memory_device and T.device(pin_memory_device) == T.device("cpu"):
            raise ValueError("DataLoader: pin_memory_device must be '' or a CUDA device (the device "
                             "the pinned batches are for), got 'cpu'")
        self.collate_fn, self.num_workers, self.pin_memory = collate_fn, num_workers, pin_memory
        self.pin_memory_device = pin_memory_device
        self._pin_warned = [False]   # (shared with the copies the worker iterators make)
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.multiprocessing_context, self.in_order = multiprocessing_context, bool(in_order)
        self._workers = None   # the persistent workers' iterator, once started

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self, n: int) -> list | None:
        """The epoch's dataset keys in order (the sampler's, whatever they are), or None for
        0..n-1."""
        if self.sampler is not None:
            return list(self.sampler)
        if not self.shuffle:
            return None
        return T.random.permutation(n, generator=self.generator).tolist()

    def _draw_base_seed(self) -> int:
        """A draw from `generator` (or tensor's default one) that seeds the workers: drawn by
        every new iteration (after its shuffle), with or without workers as PyTorch's, so that
        the random numbers drawn after an epoch do not depend on num_workers."""
        return int(T.randint(0, 2 ** 63 - 1, (), dtype=T.int64, generator=self.generator))

    def __iter__(self) -> Iterator:
        it = self._batches()
        return it if self.num_workers or not self._pins() else map(self._pin, it)

    def _pins(self) -> bool:
        """Whether this iteration pins its batches: pin_memory=True and a CUDA device is there
        (without one, PyTorch's warning, once per loader)."""
        if not self.pin_memory:
            return False
        if _pinned.available():
            return True
        if not self._pin_warned[0]:
            self._pin_warned[0] = True
            warnings.warn("DataLoader: 'pin_memory' argument is set as true but no accelerator is "
                          "found, then device pinned memory won't be used.", stacklevel=3)
        return False

    def _pin(self, batch):
        """batch with its CPU tensors in pinned memory (the workers' batches too)."""
        return _pinned.pin_nested(batch)

    def _batches(self) -> Iterator:
        if self.num_workers:
            return self._worker_iterator()
        if isinstance(self.dataset, IterableDataset):
            self._draw_base_seed()
            return self._stream_batches()
        if self.batch_sampler is not None:
            return self._sampled_batches()
        order = self._order(len(self.dataset))
        self._draw_base_seed()
        n = len(self.dataset) if order is None else len(order)
        if self.batch_size is None:
            convert = self.collate_fn or default_convert
            return (convert(self.dataset[i]) for i in (range(n) if order is None else order))
        stops = range(self.batch_size, n + 1 if self.drop_last else n + self.batch_size,
                      self.batch_size)
        spans = [(s - self.batch_size, min(s, n)) for s in stops]
        if self._fast():
            return self._tensor_batches(order, spans)
        return self._item_batches(order, spans)

    def _fast(self) -> bool:
        return type(self.dataset) is TensorDataset and self.collate_fn is None

    def _fetcher(self) -> _Fetcher:
        return _Fetcher(self.batch_size is not None or self.batch_sampler is not None,
                        self.batch_size, self.collate_fn, self.drop_last, self._fast(),
                        self._iterable())

    def _iterable(self) -> bool:
        return isinstance(self.dataset, IterableDataset)

    def _tensor_batches(self, order, spans) -> Iterator[list]:
        ts = self.dataset.tensors
        for a, b in spans:
            if order is None:
                yield [t[a:b].copy() for t in ts]
            else:
                yield _gather(self.dataset, order[a:b])

    def _item_batches(self, order, spans) -> Iterator:
        idx = list(range(len(self.dataset))) if order is None else order
        collate = self.collate_fn or default_collate
        for a, b in spans:
            yield collate(_fetch(self.dataset, idx[a:b]))

    def _sampled_batches(self) -> Iterator:
        fetcher = self._fetcher()
        keys = iter(self.batch_sampler)
        first = next(keys, _NONE)   # (the sampler's shuffle, then the base seed: the workers' order)
        self._draw_base_seed()
        if first is _NONE:
            return
        for idx in chain([first], keys):
            yield fetcher.fetch(self.dataset, list(idx))

    def _stream_batches(self) -> Iterator:
        return self._fetcher().stream(self.dataset)

    # ---------------------------------------------------------------- worker processes

    def _tasks(self) -> Iterator:
        """What the workers fetch, batch by batch: each batch's keys (one key each without
        batching)."""
        if self.batch_sampler is not None:
            yield from (list(idx) for idx in self.batch_sampler)
            return
        order = self._order(len(self.dataset))
        keys = range(len(self.dataset)) if order is None else order
        if self.batch_size is None:
            yield from keys
            return
        n, b = len(keys), self.batch_size
        for a in range(0, n - b + 1 if self.drop_last else n, b):
            yield list(keys[a:a + b])

    def _prefetch(self) -> int:
        return 2 if self.prefetch_factor is None else self.prefetch_factor

    def _worker_iterator(self) -> Iterator:
        if self.persistent_workers:
            if self._workers is None or not self._workers.alive():   # (none yet, or stopped by a failure)
                self._workers = WorkerIterator(self)
                return self._workers
            return self._workers._reset()
        return WorkerIterator(self)


class _Fetcher:
    """How a batch is made from a dataset (in the main process, or pickled to a worker that has
    its own copy of the dataset): fetch(dataset, task) for a map-style dataset's batch keys (one
    key without batching), stream(dataset) for an IterableDataset's batches."""

    def __init__(self, auto: bool, batch_size, collate_fn, drop_last: bool, fast: bool,
                 iterable: bool) -> None:
        self.auto, self.batch_size, self.collate_fn = auto, batch_size, collate_fn
        self.drop_last, self.fast, self.iterable = drop_last, fast, iterable

    def fetch(self, dataset, task):
        if not self.auto:
            return (self.collate_fn or default_convert)(dataset[task])
        if self.fast:
            return _gather(dataset, task)
        return (self.collate_fn or default_collate)(_fetch(dataset, task))

    def stream(self, dataset) -> Iterator:
        if self.batch_size is None:
            convert = self.collate_fn or default_convert
            for item in dataset:
                yield convert(item)
            return
        collate, batch = self.collate_fn or default_collate, []
        for item in dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield collate(batch)


def _gather(dataset, keys) -> list:
    """The fast path's batch: each tensor of the TensorDataset indexed by the keys (ints)."""
    ix = np.asarray([operator.index(k) for k in keys], dtype=np.int64)
    return [t[T.asarray(ix, device=t.device)] for t in dataset.tensors]


def _fetch(dataset, keys: list) -> list:
    """The samples at keys: one call of the dataset's __getitems__ when it has one (as
    PyTorch's batched fetch), else __getitem__ key by key."""
    fetch = getattr(dataset, "__getitems__", None)
    return list(fetch(keys)) if fetch else [dataset[k] for k in keys]


def _check_workers(num_workers, timeout, prefetch_factor, persistent_workers, mp_context) -> None:
    """PyTorch's checks of the worker-process options."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise ValueError("DataLoader: num_workers option should be a non-negative int; use "
                         f"num_workers=0 to disable multiprocessing, got {num_workers!r}")
    if timeout < 0:
        raise ValueError(f"DataLoader: timeout option should be non-negative, got {timeout}")
    if prefetch_factor is not None and not num_workers:
        raise ValueError("DataLoader: prefetch_factor option could only be specified in "
                         "multiprocessing (num_workers > 0); set prefetch_factor to None")
    if prefetch_factor is not None and (isinstance(prefetch_factor, bool) or not isinstance(
            prefetch_factor, int) or prefetch_factor < 1):
        raise ValueError(f"DataLoader: prefetch_factor should be a positive int, got {prefetch_factor!r}")
    if persistent_workers and not num_workers:
        raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
    if mp_context is not None:
        if not num_workers:
            raise ValueError("DataLoader: multiprocessing_context can only be used with "
                             "multi-process loading (num_workers > 0), but got num_workers=0")
        if not isinstance(mp_context, str | mp.context.BaseContext):
            raise TypeError(f"DataLoader: multiprocessing_context option should be a valid context "
                            f"object or a string specifying the start method, but got "
                            f"multiprocessing_context={mp_context!r}")
        if isinstance(mp_context, str) and mp_context not in mp.get_all_start_methods():
            raise ValueError(f"DataLoader: multiprocessing_context option should specify a valid "
                             f"start method in {mp.get_all_start_methods()!r}, but got {mp_context!r}")


__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset",
           "StackDataset", "random_split", "DataLoader", "DistributedSampler", "default_collate",
           "default_convert", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler", "get_worker_info", "WorkerInfo"]
