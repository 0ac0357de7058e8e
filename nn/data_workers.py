"""DataLoader worker processes (num_workers > 0), PyTorch's semantics on the standard library's
multiprocessing.

The main process hands out tasks -- a batch's keys (map-style datasets) or "your next batch" (an
IterableDataset, which each worker iterates on its own copy, sharding itself with
get_worker_info()) -- round-robin over the workers, prefetch_factor of them in flight per
worker, and yields the results in task order (in_order=False: as they arrive). Each worker seeds
Python's `random`, NumPy's legacy global generator and tensor's default generator from base_seed
+ worker id (base_seed drawn from the loader's generator, or tensor's default one, per
iterator), then runs worker_init_fn(id).

Failures are never silent and never hang: an exception in a worker is raised in the main process
with the worker's id and traceback; a worker that dies raises RuntimeError naming its pid and
exit code; `timeout` > 0 bounds the wait for each batch. The workers stop at the end of the
epoch (or stay for the next with persistent_workers=True), when the iteration is abandoned (the
iterator collected, or the loader of persistent workers) and at interpreter exit; a worker whose
main process died exits too. Stopping workers do not wait to flush batches nobody will read.

A worker pickles each batch itself (a batch that cannot be pickled is reported as the worker's
exception, not lost in the queue's feeder thread); tensors travel as their own elements' bytes.
A forked worker runs the CPU kernels on one thread (GNU OpenMP cannot start threads in a forked
child; tensor/cpu/build.py); the library's locks are fork-safe (tensor/memory_threads.py).
"""
from __future__ import annotations

import copy
import multiprocessing as mp
import os
import pickle
import queue
import random
import signal
import time
import traceback
import weakref
from itertools import chain

import numpy as np

import tensor as T

_POLL_S = 1.0          # how often an idle worker checks that its main process is alive
_CHECK_S = 0.25        # how often the main process, waiting for a batch, checks its workers
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
        self.kind, self.name = type(exc), type(exc).__name__
        self.worker_id, self.where = worker_id, where
        try:   # (a type the main process cannot find by name, a local class: RuntimeError there)
            pickle.loads(pickle.dumps(self.kind))
        except Exception:  # noqa: BLE001
            self.kind = RuntimeError
        if issubclass(self.kind, StopIteration):   # (raised in __next__ it would end the epoch
            self.kind = RuntimeError                # silently; without workers it is one too)
        self.text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self):
        msg = (f"Caught {self.name} in DataLoader worker process {self.worker_id}{self.where}."
               f"\nOriginal {self.text}")
        if issubclass(self.kind, KeyError):   # (a KeyError shows the repr of its argument)
            msg = _Verbatim(msg)
        try:
            err = self.kind(msg)
        except Exception:  # noqa: BLE001 - an exception type that takes other arguments
            err = RuntimeError(msg)
        raise err


class _Verbatim(str):
    """A message that a KeyError shows as it is (not quoted, its newlines kept)."""

    def __repr__(self) -> str:
        return str(self)


class _End:
    """A worker's IterableDataset is exhausted for this epoch."""


class _Reset:
    """Tells a persistent worker to restart its IterableDataset's iterator (a new epoch)."""


def _seed_worker(seed: int) -> None:
    random.seed(seed)
    T.manual_seed(seed)
    np.random.seed(np.random.SeedSequence(seed).generate_state(4))


def _pickled(data, worker_id: int) -> bytes:
    """The batch as bytes, pickled here so that a batch that cannot be pickled is reported (a
    Queue pickles in a background thread, which would drop it and leave the main process
    waiting)."""
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - handed to the main process
        where = f" (sending its {type(data).__name__} batch to the main process: it must be picklable)"
        return pickle.dumps(_Raised(worker_id, e, where), protocol=pickle.HIGHEST_PROTOCOL)


def _worker_loop(fetcher, dataset, index_q, result_q, done, seed: int, init_fn, worker_id: int,
                 num_workers: int) -> None:
    try:
        _serve(fetcher, dataset, index_q, result_q, done, seed, init_fn, worker_id, num_workers)
    except KeyboardInterrupt:   # (Ctrl-C reaches the workers too: the main process reports it)
        pass
    parent = mp.parent_process()
    if done.is_set() or (parent is not None and not parent.is_alive()):
        result_q.cancel_join_thread()   # batches nobody will read: exit without flushing them


def _serve(fetcher, dataset, index_q, result_q, done, seed, init_fn, worker_id, num_workers) -> None:
    global _INFO
    # a SIGTERM handler inherited from the main process must not keep terminate() from stopping it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _seed_worker(seed)
    T.set_num_threads(1)   # as PyTorch's workers: one kernel thread each (worker_init_fn may change it)
    _INFO = WorkerInfo(worker_id, num_workers, seed, dataset)
    failed = None
    if init_fn is not None:
        try:
            init_fn(worker_id)
        except Exception as e:  # noqa: BLE001 - reported in the main process
            failed = _Raised(worker_id, e, " (in worker_init_fn)")
    parent = mp.parent_process()
    stream, told = None, False   # (told: the failure of worker_init_fn reported this epoch)
    while not done.is_set():
        try:
            msg = index_q.get(timeout=_POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return
            continue
        if msg is None or done.is_set():
            return
        epoch, task_id, task = msg
        if isinstance(task, bytes):   # (a batch's keys, pickled by the main process)
            task = pickle.loads(task)
        if isinstance(task, _Reset):
            stream, told = None, False
            continue
        if failed is not None:   # (each batch of a map-style dataset fails; a stream ends)
            result = _End() if told and fetcher.iterable else failed
            told = True
            result_q.put((epoch, task_id, _pickled(result, worker_id)))
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
        result_q.put((epoch, task_id, _pickled(data, worker_id)))
        del data


def _context(mp_context):
    if mp_context is None:
        return mp.get_context()
    if isinstance(mp_context, str):
        return mp.get_context(mp_context)
    return mp_context


def _stop(owner: int, workers, index_qs, result_q, done, at_once: list) -> None:
    """Stop the workers (asked first, terminated if they do not go) and close the queues; only
    in the process that started them (a forked child inherits this finalizer)."""
    if os.getpid() != owner:
        return
    done.set()   # (a worker skips the tasks still queued for it)
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
        # a shallow copy without the loader's reference to its persistent iterator: no cycle,
        # so dropping the loader stops its workers at once
        self._loader = loader = copy.copy(loader)
        loader._workers = None
        n = loader.num_workers
        ctx = _context(loader.multiprocessing_context)
        fetcher = loader._fetcher()
        tasks = self._epoch_tasks()   # (the shuffle drawn first: the order num_workers=0 gives)
        base = loader._draw_base_seed()
        self._result_q = ctx.Queue()
        self._index_qs = [ctx.Queue() for _ in range(n)]
        self._done = ctx.Event()
        self._workers = []
        try:
            for i in range(n):
                w = ctx.Process(target=_worker_loop, daemon=True,
                                args=(fetcher, loader.dataset, self._index_qs[i], self._result_q,
                                      self._done, base + i, loader.worker_init_fn, i, n))
                w.start()
                self._workers.append(w)
        except BaseException as e:   # (the workers already started are stopped)
            _stop(os.getpid(), self._workers, self._index_qs, self._result_q, self._done, [True])
            if not isinstance(e, pickle.PicklingError | AttributeError | TypeError):
                raise
            raise RuntimeError(f"DataLoader: could not start worker processes with the "
                               f"{ctx.get_start_method()!r} start method: the dataset, collate_fn "
                               f"and worker_init_fn must be picklable there ({e})") from e
        self._at_once = [False]
        self._finalizer = weakref.finalize(self, _stop, os.getpid(), self._workers, self._index_qs,
                                           self._result_q, self._done, self._at_once)
        self._epoch = 0
        self._failure: str | None = None   # why the workers were stopped mid-epoch
        self._start_epoch(tasks)

    def _epoch_tasks(self):
        """The epoch's tasks (None for an IterableDataset), its first one drawn now."""
        if self._loader._iterable():
            return None
        tasks = self._loader._tasks()
        first = next(tasks, _End)
        return iter(()) if first is _End else chain([first], tasks)

    def _start_epoch(self, tasks) -> None:
        loader = self._loader
        self._pinning = loader._pins()   # (in the main process, as PyTorch's pin-memory thread)
        self._epoch += 1
        self._tasks = tasks
        self._sent = 0
        self._buffer: dict = {}   # task id -> its batch, as they arrive
        self._owner: dict = {}    # task id -> its worker, for the tasks not yielded yet
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
        if task is not None:   # pickled here: a key that cannot be is an error, not a lost task
            try:
                task = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as e:
                raise TypeError(f"DataLoader: the sampler's keys {task!r} cannot be sent to a worker "
                                f"process (they must be picklable): {e}") from e
        self._index_qs[w].put((self._epoch, self._sent, task))
        self._owner[self._sent] = w
        self._sent += 1

    def __iter__(self):
        return self

    def _ready(self):
        """The id of the batch to yield next when it has arrived, else None: the oldest
        task's (in_order=True), or the first to arrive."""
        if self._loader.in_order:
            first = min(self._owner)
            return first if first in self._buffer else None
        return next(iter(self._buffer), None)

    def __next__(self):
        if self._failure is not None:
            raise RuntimeError(f"DataLoader: this iteration was stopped ({self._failure}); iterate "
                               "the DataLoader again for a new one")
        while True:
            if not self._owner:
                self._finish()
                raise StopIteration
            task_id = self._ready()
            if task_id is None:
                self._receive()
                continue
            data = self._buffer.pop(task_id)
            w = self._owner.pop(task_id)
            if isinstance(data, _End):
                self._active[w] = False
                self._send()   # (its slot to a worker that still has batches)
                continue
            self._send()
            if isinstance(data, _Raised):   # (the iteration may go on, as PyTorch's)
                data.reraise()
            return self._loader._pin(data) if self._pinning else data

    def _receive(self) -> None:
        timeout = self._loader.timeout
        start = time.monotonic()
        while True:
            wait = _CHECK_S if not timeout else min(_CHECK_S, max(0.0, start + timeout - time.monotonic()))
            try:
                epoch, task_id, payload = self._result_q.get(timeout=wait)
            except queue.Empty:
                self._check_alive()
                if timeout and time.monotonic() - start >= timeout:
                    self._abort(f"timed out after {timeout} seconds")
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds waiting for "
                                       "a batch from its workers") from None
                continue
            if epoch == self._epoch:
                self._buffer[task_id] = self._unpickled(payload, task_id)
                return

    def _unpickled(self, payload: bytes, task_id: int):
        try:
            return pickle.loads(payload)
        except Exception as e:
            w = self._owner.get(task_id)
            self._abort(f"a batch from worker {w} could not be unpickled")
            raise RuntimeError(f"DataLoader: could not unpickle the batch from worker {w} in the "
                               f"main process: {type(e).__name__}: {e}") from e

    def _check_alive(self) -> None:
        waiting = set(self._owner.values())
        for i, w in enumerate(self._workers):
            if not w.is_alive() and (w.exitcode != 0 or i in waiting):
                pid, code = w.pid, w.exitcode
                self._abort(f"worker {i} exited unexpectedly")
                how = ""
                if code is not None and code < 0:
                    try:
                        how = f" (killed by signal {signal.Signals(-code).name}"
                    except ValueError:
                        how = f" (killed by signal {-code}"
                    how += "; out of memory?)" if -code == signal.SIGKILL else ")"
                raise RuntimeError(f"DataLoader worker {i} (pid {pid}) exited unexpectedly with exit "
                                   f"code {code}{how}")

    def _finish(self) -> None:
        if not self._loader.persistent_workers:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the workers now (also done at the end of a non-persistent epoch and when the
        iterator is collected)."""
        if self._owner and self._failure is None:
            self._failure = "its workers were shut down"
        self._finalizer()

    def _abort(self, why: str) -> None:
        """Stop the workers after a failure, without waiting for their batches."""
        self._failure = why
        self._at_once[0] = True
        self._finalizer()

    def __len__(self) -> int:
        return len(self._loader)
