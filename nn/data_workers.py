"""DataLoader worker processes (num_workers > 0), PyTorch's semantics on the standard library's
multiprocessing.

The main process hands out tasks -- a batch's keys (map-style datasets) or "your next batch"
(an IterableDataset, which each worker iterates on its own copy, sharding itself with
get_worker_info()) -- round-robin over the workers, prefetch_factor of them in flight per worker,
and yields the results in task order. Each worker seeds Python's `random`, NumPy's legacy global
generator and tensor's default generator from base_seed + worker id (base_seed drawn from the
loader's generator, or tensor's default one, per iterator), then runs worker_init_fn(id).

Failures are never silent and never hang: an exception in a worker is raised in the main
process with the worker's id and traceback; a worker that dies raises RuntimeError naming its
pid and exit code; `timeout` > 0 bounds the wait for each batch. The workers stop at the end of
the epoch (or stay for the next with persistent_workers=True), when the iteration is abandoned
(the iterator collected) and at interpreter exit.

Tensors travel pickled (their bytes). A forked worker runs the CPU kernels on one thread (GNU
OpenMP cannot start threads in a forked child; tensor/cpu/build.py); the library's locks are
fork-safe (tensor/memory_threads.py).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import queue
import random
import time
import traceback
import weakref

import numpy as np

import tensor as T

_POLL_S = 1.0          # how often a wait checks that the workers are alive
_JOIN_S = 5.0          # how long a stopping worker may take before it is terminated


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset (the
    worker's own copy)."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id: int, num_workers: int, seed: int, dataset) -> None:  # noqa: A002
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_INFO: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its WorkerInfo; None in the main process."""
    return _INFO


class _Raised:
    """An exception a worker caught: raised again in the main process with its traceback."""

    def __init__(self, worker_id: int, exc: BaseException, where: str) -> None:
        self.kind, self.worker_id, self.where = type(exc), worker_id, where
        self.text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self):
        msg = (f"Caught {self.kind.__name__} in DataLoader worker process {self.worker_id}"
               f"{self.where}.\nOriginal {self.text}")
        try:
            err = self.kind(msg)
        except Exception:  # noqa: BLE001 - an exception type that takes other arguments
            err = RuntimeError(msg)
        raise err


class _End:
    """A worker's IterableDataset is exhausted for this epoch."""


class _Reset:
    """Tells a persistent worker to restart its IterableDataset's iterator (a new epoch)."""


def _seed_worker(seed: int) -> None:
    random.seed(seed)
    T.manual_seed(seed)
    np.random.seed(np.random.SeedSequence(seed % 2 ** 128).generate_state(4))


def _worker_loop(fetcher, dataset, index_q, result_q, seed: int, init_fn, worker_id: int,
                 num_workers: int) -> None:
    global _INFO
    _seed_worker(seed)
    _INFO = WorkerInfo(worker_id, num_workers, seed, dataset)
    failed = None
    if init_fn is not None:
        try:
            init_fn(worker_id)
        except Exception as e:  # noqa: BLE001 - reported for every task
            failed = _Raised(worker_id, e, " (in worker_init_fn)")
    parent = mp.parent_process()
    stream = None
    while True:
        try:
            msg = index_q.get(timeout=_POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return
            continue
        if msg is None:
            return
        epoch, task_id, task = msg
        if isinstance(task, _Reset):
            stream = None
            continue
        if failed is not None:
            result_q.put((epoch, task_id, failed))
            continue
        try:
            if fetcher.iterable:
                if stream is None:
                    stream = fetcher.stream(dataset)
                data = next(stream, _End)
            else:
                data = fetcher.fetch(dataset, task)
        except Exception as e:  # noqa: BLE001 - handed to the main process
            data = _Raised(worker_id, e, "")
        if data is _End:
            data = _End()
        result_q.put((epoch, task_id, data))
        del data


def _context(mp_context):
    if mp_context is None:
        return mp.get_context()
    if isinstance(mp_context, str):
        return mp.get_context(mp_context)
    return mp_context


def _stop(owner: int, workers, index_qs, result_q, at_once: list) -> None:
    """Stop the workers (asked first, terminated if they do not go) and close the queues; only
    in the process that started them (a forked child inherits this finalizer)."""
    if os.getpid() != owner:
        return
    if at_once[0]:   # after a failure: no batch is waited for
        for w in workers:
            if w.is_alive():
                w.terminate()
    for q in index_qs:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + _JOIN_S
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
        if w.is_alive():
            w.terminate()
            w.join(1.0)
    for q in (*index_qs, result_q):
        q.cancel_join_thread()
        q.close()


class WorkerIterator:
    """The iterator of a DataLoader with num_workers > 0 (one per epoch, or one kept for all
    epochs with persistent_workers)."""

    def __init__(self, loader) -> None:
        self._loader = loader
        n = loader.num_workers
        ctx = _context(loader.multiprocessing_context)
        fetcher = loader._fetcher()
        tasks = self._epoch_tasks()   # (the shuffle drawn first: the order num_workers=0 gives)
        base = int(T.randint(-2 ** 63, 2 ** 63 - 1, (), dtype=T.int64, generator=loader.generator))
        self._result_q = ctx.Queue()
        self._index_qs = [ctx.Queue() for _ in range(n)]
        self._workers = []
        try:
            for i in range(n):
                w = ctx.Process(target=_worker_loop, daemon=True,
                                args=(fetcher, loader.dataset, self._index_qs[i], self._result_q,
                                      base + i, loader.worker_init_fn, i, n))
                w.start()
                self._workers.append(w)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            _stop(os.getpid(), self._workers, self._index_qs, self._result_q, [True])
            raise RuntimeError(f"DataLoader: could not start worker processes with the "
                               f"{ctx.get_start_method()!r} start method: the dataset, collate_fn "
                               f"and worker_init_fn must be picklable there ({e})") from e
        self._at_once = [False]
        self._finalizer = weakref.finalize(self, _stop, os.getpid(), self._workers, self._index_qs,
                                           self._result_q, self._at_once)
        self._epoch = 0
        self._start_epoch(tasks)

    def _epoch_tasks(self):
        return None if self._loader._iterable() else iter(list(self._loader._tasks()))

    def _start_epoch(self, tasks) -> None:
        loader = self._loader
        self._epoch += 1
        self._tasks = tasks
        self._sent = self._received = 0
        self._buffer: dict = {}
        self._owner: dict = {}
        self._active = [True] * len(self._workers)
        self._next_worker = 0
        if self._tasks is None and self._epoch > 1:
            for q in self._index_qs:   # persistent workers restart their dataset's iterator
                q.put((self._epoch, -1, _Reset()))
        for _ in range(loader._prefetch() * len(self._workers)):
            self._send()

    def alive(self) -> bool:
        """Whether the workers still run (not shut down)."""
        return self._finalizer.alive

    def _reset(self) -> WorkerIterator:
        """A new epoch on the same (persistent) workers."""
        self._start_epoch(self._epoch_tasks())
        return self

    def _send(self) -> None:
        n = len(self._workers)
        for _ in range(n):
            w = self._next_worker
            self._next_worker = (w + 1) % n
            if self._active[w]:
                break
        else:
            return
        if self._tasks is None:
            task = None
        else:
            task = next(self._tasks, _End)
            if task is _End:
                return
        self._index_qs[w].put((self._epoch, self._sent, task))
        self._owner[self._sent] = w
        self._sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            if self._received == self._sent:
                self._finish()
                raise StopIteration
            if self._received not in self._buffer:
                self._receive()
                continue
            data = self._buffer.pop(self._received)
            w = self._owner.pop(self._received)
            self._received += 1
            if isinstance(data, _End):
                self._active[w] = False
                self._send()   # (its slot to a worker that still has batches)
                continue
            self._send()
            if isinstance(data, _Raised):
                self._abort()
                data.reraise()
            return data

    def _receive(self) -> None:
        timeout = self._loader.timeout
        start = time.monotonic()
        while True:
            wait = _POLL_S if not timeout else min(_POLL_S, max(0.0, start + timeout - time.monotonic()))
            try:
                epoch, task_id, data = self._result_q.get(timeout=wait)
            except queue.Empty:
                self._check_alive()
                if timeout and time.monotonic() - start >= timeout:
                    self._abort()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds waiting for "
                                       "a batch from its workers") from None
                continue
            if epoch == self._epoch:
                self._buffer[task_id] = data
                return

    def _check_alive(self) -> None:
        waiting = {self._owner[i] for i in range(self._received, self._sent) if i in self._owner}
        for i, w in enumerate(self._workers):
            if not w.is_alive() and (w.exitcode != 0 or i in waiting):
                pid, code = w.pid, w.exitcode
                self._abort()
                raise RuntimeError(f"DataLoader worker {i} (pid {pid}) exited unexpectedly with exit "
                                   f"code {code}")

    def _finish(self) -> None:
        if not self._loader.persistent_workers:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the workers now (also done at the end of a non-persistent epoch and when the
        iterator is collected)."""
        self._finalizer()

    def _abort(self) -> None:
        """Stop the workers after a failure, without waiting for their batches."""
        self._at_once[0] = True
        self._finalizer()

    def __len__(self) -> int:
        return len(self._loader)
