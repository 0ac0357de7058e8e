"""The MPI backend (mpi4py over the mpich wheel): CPU tensors' memory handed to MPI as NumPy
views (no copy), CUDA tensors staged through host memory.

Every operation of a group runs on the group's one worker thread, in the order the caller
issued them (so every rank issues the same sequence, as MPI requires, and async_op=True
overlaps communication with the caller's compute: mpi4py and our kernels release the GIL).
Before each collective the ranks exchange a small signature (op, shape, dtype, root); when it
differs, every rank raises the same DistributedError before any data moves.
"""
from __future__ import annotations

import ctypes
import queue
import threading
import time
import zlib

import numpy as np

from .. import dtypes as dt
from ._work import DistributedError, Pending, Work


def _nothing():
    return None


def _written(t) -> None:
    """The engine wrote t in place: a new version of its memory (as an in-place op makes), which
    autograd's saved-tensor check and tensor.compile's captures see."""
    t._storage.version += 1


def copy_into(dst, src) -> None:
    """dst[...] = src across devices and dtypes."""
    from .. import elementwise as ew
    if src.device != dst.device:
        src = src.to_device(dst.device)
    ew.copy_into(dst, src)


_NP = {dt.bool_: np.uint8, dt.bfloat16: np.uint16, dt.float16: np.uint16}


def mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise DistributedError("the MPI backend needs mpi4py and an MPI library: pip install "
                               "'stridex[distributed]' (mpi4py and the mpich wheel)") from e
    return MPI


_VIEWS: dict = {}   # (address, bytes, NumPy dtype) -> a flat array over that memory


def host_view(t) -> np.ndarray:
    """A flat NumPy array over the contiguous CPU tensor t's memory (16-bit floats and bools as
    their bits: only byte-moving operations may use those). Views are kept per address and
    size (an array over raw memory owns nothing): the per-call cost is a dict lookup."""
    nd = _NP.get(t.dtype) or t.dtype.np
    nbytes = t.numel() * t.dtype.itemsize
    key = (t.data_ptr(), nbytes, nd)
    a = _VIEWS.get(key)
    if a is None:
        if not nbytes:
            return np.zeros(0, nd)
        raw = (ctypes.c_uint8 * nbytes).from_address(key[0])
        a = np.frombuffer(raw, np.uint8, count=nbytes).view(nd)
        if len(_VIEWS) >= 256:
            _VIEWS.clear()
        _VIEWS[key] = a
    return a


_CRCS: dict = {}


def _crc(sig: tuple) -> int:
    """A hash of a call's signature that is the same in every process (unlike hash()); a
    training loop repeats a few signatures, so they are remembered."""
    h = _CRCS.get(sig)
    if h is None:
        if len(_CRCS) >= 4096:
            _CRCS.clear()
        h = _CRCS[sig] = zlib.crc32(repr(sig).encode())
    return h


def _starts(counts: list) -> list:
    """The offsets of consecutive pieces of the given sizes."""
    out, off = [], 0
    for c in counts:
        out.append(off)
        off += c
    return out


def pieces(flat, counts: list) -> list:
    """The 1-d flat split into consecutive pieces of the given numbers of elements."""
    return [flat[o:o + c] for o, c in zip(_starts(counts), counts)]


_EXIT_HOOK: list = []


def _exit_without_finalize(why: str) -> None:
    """After a timeout the worker thread may still sit inside an MPI call, and MPI_Finalize
    (mpi4py's exit hook) then crashes the process (SIGSEGV in MPICH), or another rank waits in
    its own MPI_Finalize for this one. So a process whose group broke leaves with MPI_Abort
    (status 1; mpiexec ends the other ranks too) and one line saying why."""
    if _EXIT_HOOK:
        return
    import atexit
    import os
    import sys

    def leave():
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:  # noqa: BLE001 - closed streams at exit
                pass
        os.write(2, f"tensor.distributed: exiting with MPI_Abort (status 1): {why}\n".encode())
        time.sleep(0.5)     # mpiexec forwards output asynchronously: Abort would cut it off
        try:
            mpi().COMM_WORLD.Abort(1)
        finally:
            os._exit(1)
    _EXIT_HOOK.append(leave)
    atexit.register(leave)


class MPIBackend:
    """One communicator and its worker thread."""

    name = "mpi"

    def __init__(self, comm, check: bool = True):
        self.MPI = mpi()
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.check_signatures = check
        M = self.MPI
        self._ops = {"sum": M.SUM, "product": M.PROD, "min": M.MIN, "max": M.MAX}
        from ..device import CPU
        self._cpu = CPU
        self._q: queue.Queue = queue.Queue()
        # posted point-to-point requests not finished yet: they hold their buffers (which the
        # engine reads or writes until they complete) even when the caller drops the Work
        self._inflight: set = set()
        self._broken: str | None = None
        self._lock = threading.Lock()       # guards _pending and runs of the inline path
        self._pending = 0                   # operations queued on the worker and not finished
        self._deadline: tuple | None = None  # (time, what, seconds) while one runs inline
        self._thread = threading.Thread(target=self._loop, name=f"stridex-mpi-{id(self):x}",
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ the worker

    def _loop(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, work = item
            item = None
            try:
                r, e = fn(), None
            except BaseException as err:  # noqa: BLE001 - handed to the waiting caller
                r, e = None, self._engine_error(work.what, err)
            # drop the operation's closure (its tensors) before the waiter wakes, not when the
            # next operation comes: a capture (tensor.compile) then sees them freed as eagerly
            fn = None
            with self._lock:        # before the waiter wakes: its next call may run inline
                self._pending -= 1
            if e is None:
                work._set_result(r)
            else:
                work._set_error(e)
            work = r = e = None

    def submit(self, what: str, fn, inline: float | None = None) -> Work:
        """Queue fn on the worker; or, for a blocking call (inline: its timeout in seconds) when
        nothing is queued, run it here: the hand-off to the worker and back costs 10-20% of a
        4 MiB all-reduce on two ranks. Inline, the MPI calls are nonblocking ones polled
        against the deadline (see _complete), so the timeout still holds."""
        if self._broken:
            raise DistributedError(f"{what}: the process group is unusable: {self._broken}")
        with self._lock:
            if inline is not None and not self._pending:
                w = Work(what, self, done=True)
                self._deadline = (time.monotonic() + inline, what, inline)
                try:
                    w._set_result(fn())
                except BaseException as e:  # noqa: BLE001 - raised by the caller's wait()
                    w._set_error(self._engine_error(what, e))
                finally:
                    self._deadline = None
                return w
            self._pending += 1
        w = Work(what, self)
        self._q.put((fn, w))
        return w

    def _complete(self, req, status=None) -> None:
        """Finish a nonblocking MPI request: wait on the worker; inline, poll it until the
        deadline, then mark the group broken and raise as Work.wait would."""
        if self._deadline is None:
            req.Wait(status)
            return
        deadline, what, t = self._deadline
        while not req.Test(status):
            if time.monotonic() > deadline:
                why = (f"{what} did not finish within {t:g} s: a rank may have died, or the "
                       "ranks called different collectives")
                self.mark_broken(why)
                raise DistributedError(why)

    def _engine_error(self, what: str, e: BaseException) -> BaseException:
        """mpi4py's MPI.Exception (an MPI error code and MPICH's error stack) as a
        DistributedError that names the operation; other errors as they are."""
        if not isinstance(e, self.MPI.Exception):
            return e
        text = str(e).splitlines()[0].rstrip(", ") if str(e) else "unknown error"
        err = DistributedError(f"{what}: the MPI library failed: {text} (MPI error class "
                               f"{e.Get_error_class()})")
        err.__cause__ = e
        return err

    def mark_broken(self, why: str) -> None:
        self._broken = why
        _exit_without_finalize(why)

    def close(self) -> None:
        self._q.put(None)
        if self._broken is None:
            self._thread.join(timeout=5)

    # ------------------------------------------------------------ staging (calling thread)

    def stage(self, t, dtype=None, read: bool = True, write: bool = True):
        """(buffer, copy back): t itself when it is a contiguous tensor of the dtype on the
        engine's device (MPI: the host), else a contiguous copy there (of `dtype`) and the step
        that writes it back into t."""
        d = dtype or t.dtype
        if t.device is self.buffer_device() and t.is_contiguous() and d is t.dtype:
            return t, (lambda: _written(t)) if write else _nothing
        buf = self.buffer(t.shape, d)
        if read:
            copy_into(buf, t)
        return buf, ((lambda: copy_into(t, buf)) if write else _nothing)

    def buffer_device(self):
        return self._cpu

    def buffer(self, shape, dtype):
        from .. import elementwise as ew
        return ew.empty_tensor(tuple(shape), dtype, self.buffer_device())

    def copy(self, dst, src) -> None:
        copy_into(dst, src)

    # ------------------------------------------------------------ helpers (worker thread)

    def agree(self, what: str, sig: tuple) -> None:
        """Raise on every rank when the ranks' signatures of this call differ."""
        if not self.check_signatures or self.size == 1:
            return
        # fast path: one fixed-size Allreduce of (h, -h) with MAX: every rank's h is equal iff
        # max(h) == min(h). The hash is of the signature's repr (crc32: the same in every
        # process, unlike hash()). Only when they differ do the ranks (all of them, as they all
        # see it) gather the signatures themselves for the message.
        h = _crc(sig)
        hh = np.array([h, -h], np.int64)
        self._complete(self.comm.Iallreduce(self.MPI.IN_PLACE, hh, op=self.MPI.MAX))
        if hh[0] != -hh[1]:
            self._mismatch(what, sig)
        self._agreed()

    def _agreed(self) -> None:
        """Every rank is in this very operation: its data phase cannot wait on a rank that
        called something else (a rank that dies ends the job), so an inline call needs no
        deadline for it: its MPI request is waited for in C, not polled from Python (which
        costs ~5% of a 4 MiB all-reduce)."""
        self._deadline = None

    def _mismatch(self, what: str, sig: tuple) -> None:
        """The ranks' hashes differ (every rank saw it): gather the signatures and raise."""
        sigs = self.comm.allgather(sig)
        if any(s != sigs[0] for s in sigs):
            lines = "; ".join(f"rank {r}: {s}" for r, s in enumerate(sigs))
            raise DistributedError(f"{what}: the ranks' calls do not match ({lines})")

    def agree_counts(self, what: str, sig: tuple, send: list, recv: list) -> None:
        """agree() for an all-to-all, whose ranks send different amounts: one all-gather of
        every rank's hash and counts, so every rank checks every pair (what i sends j is what
        j expects from i) and all raise alike."""
        n = self.size
        if not self.check_signatures:
            return
        # first the exchange every other operation's check makes (an Iallreduce): one rank in an
        # all-to-all and another in, say, an all_reduce then both raise, instead of pairing an
        # Iallgather with an Iallreduce (erroneous in MPI)
        self.agree(what, sig)
        mine = np.array([_crc(sig)] + list(send) + list(recv), np.int64)
        every = np.empty((n, 2 * n + 1), np.int64)
        if n > 1:
            self._complete(self.comm.Iallgather(mine, every))
            if (every[:, 0] != every[0, 0]).any():
                self._mismatch(what, sig)
        else:
            every[0] = mine
        for i in range(n):
            for j in range(n):
                if every[i, 1 + j] != every[j, 1 + n + i]:
                    raise DistributedError(
                        f"{what}: rank {i} sends {every[i, 1 + j]} elements to rank {j}, which "
                        f"expects {every[j, 1 + n + i]} from it (the ranks' split sizes or tensor "
                        "shapes do not match)")
        self._agreed()

    def _op(self, op: str):
        return self._ops[op]

    # ------------------------------------------------------------ operations (worker thread)
    # bufs are contiguous CPU tensors; reductions never see 16-bit floats or bools (the
    # front end widens them)

    def all_reduce(self, buf, op: str) -> None:
        a = host_view(buf)
        self._complete(self.comm.Iallreduce(self.MPI.IN_PLACE, a, op=self._op(op)))

    def broadcast(self, buf, root: int) -> None:
        self._complete(self.comm.Ibcast(host_view(buf), root=root))

    def reduce(self, buf, root: int, op: str) -> None:
        a = host_view(buf)
        if self.rank == root:
            self._complete(self.comm.Ireduce(self.MPI.IN_PLACE, a, op=self._op(op), root=root))
        else:
            self._complete(self.comm.Ireduce(a, None, op=self._op(op), root=root))

    def all_gather(self, out, inp) -> None:
        self._complete(self.comm.Iallgather(host_view(inp), host_view(out)))

    def reduce_scatter(self, out, inp, op: str) -> None:
        self._complete(self.comm.Ireduce_scatter_block(host_view(inp), host_view(out),
                                                      op=self._op(op)))

    def all_to_all(self, out, inp, send: list, recv: list) -> None:
        """Flat buffers: send[j] elements of inp to rank j, recv[i] of out from rank i."""
        self._complete(self.comm.Ialltoallv([host_view(inp), (send, _starts(send))],
                                            [host_view(out), (recv, _starts(recv))]))

    def send(self, buf, peer: int, tag: int) -> Pending:
        """Post the send and return (the worker must not block in it: see Pending)."""
        a = host_view(buf)
        req = self.comm.Isend(a, dest=peer, tag=tag)
        return self._posted(Pending(req.Test, _nothing, (buf, a, req)))

    def recv(self, buf, peer, tag: int) -> Pending:
        """Post the receive; its result, once complete, is the sender's rank. A message of
        another size than buf raises (MPI would truncate a longer one with its own error and
        half-fill buf with a shorter one, silently)."""
        st = self.MPI.Status()
        src = self.MPI.ANY_SOURCE if peer is None else peer
        a = host_view(buf)
        req = self.comm.Irecv(a, source=src, tag=tag)
        want = a.nbytes
        what = f"recv into a {tuple(buf.shape)} {buf.dtype.name} tensor ({want} bytes)"

        def test():
            try:
                return req.Test(st)
            except self.MPI.Exception as e:
                if e.Get_error_class() == self.MPI.ERR_TRUNCATE:
                    who = st.Get_source() if peer is None else peer
                    raise DistributedError(
                        f"{what}: the message from rank {who} is larger (the sender's tensor must "
                        "have the receiver's number of bytes)") from None
                raise self._engine_error("recv", e) from e

        def finish():
            got = st.Get_count(self.MPI.BYTE)
            if got != want:
                raise DistributedError(
                    f"{what}: the message from rank {st.Get_source()} has {got} bytes (the "
                    "sender's tensor must have the receiver's number of bytes)")
            return st.Get_source()
        return self._posted(Pending(test, finish, (buf, a, req)))

    def _posted(self, p: Pending) -> Pending:
        """Hold p (and so its buffers) until it is finished or failed."""
        self._inflight.add(p)
        test, finish = p._test, p._finish

        def tested():
            try:
                return test()
            except BaseException:
                self._inflight.discard(p)
                raise

        def finished():
            try:
                return finish()
            finally:
                self._inflight.discard(p)
        p._test, p._finish = tested, finished
        return p

    def barrier(self) -> None:
        self._complete(self.comm.Ibarrier())

    def split(self, ranks: list):
        """A sub-communicator of the given ranks (collective over this one); None off it."""
        color = 0 if self.rank in ranks else self.MPI.UNDEFINED
        key = ranks.index(self.rank) if self.rank in ranks else 0
        c = self.comm.Split(color, key)
        return None if c == self.MPI.COMM_NULL else c

    def child(self, comm) -> MPIBackend:
        """The backend of a sub-group's communicator (from split)."""
        return MPIBackend(comm, self.check_signatures)
