"""The NCCL backend (nccl4py's `nccl.core`): CUDA tensors handed to NCCL in place (zero copy),
CPU tensors staged to the device. One GPU per process, chosen by local rank; the communicator's
unique id is made on rank 0 and broadcast over the group's MPI communicator, which also carries
the signature check before each collective and the sub-group splits.

The operations are enqueued on the caller's current CUDA stream (captured when the operation is
issued) by the group's worker thread, in issue order as NCCL requires; nothing waits for the
device. Work.wait() waits only until the operation is enqueued (or raises after the timeout),
then makes the waiting thread's current stream wait on an event recorded after it: ordered on
the device, no host synchronisation.

nccl4py API used (nccl4py 0.6, `nccl.core`): get_unique_id(), UniqueId.from_bytes / bytes(uid),
Communicator.init(nranks, rank, unique_id), Communicator.allreduce(send, recv, op, stream=),
.broadcast(send, recv, root, stream=), .reduce(send, recv, op, root, stream=),
.allgather(send, recv, stream=), .reduce_scatter(send, recv, op, stream=), .send(buf, peer,
stream=), .recv(buf, peer, stream=), group_start() / group_end(), .destroy(), .abort(); the
reduction ops SUM / PROD / MIN / MAX. Buffers go in as objects with __cuda_array_interface__
(our tensors' memory, described here), streams as their integer cudaStream_t handles.
"""
from __future__ import annotations

from .. import dtypes as dt
from ._mpi import MPIBackend, copy_into, pieces
from ._work import DistributedError


def nccl():
    """nccl4py's nccl.core, or a clear DistributedError."""
    try:
        import nccl.core as nc
    except ImportError as e:
        raise DistributedError("the NCCL backend needs nccl4py and the NCCL library: pip install "
                               "nccl4py nvidia-nccl-cu13 (or use backend='mpi', which stages "
                               "CUDA tensors through the host)") from e
    return nc


# CUDA array interface type strings of the dtypes NCCL reduces natively (others: see _reducible)
_TYPESTR = {dt.int8: "|i1", dt.uint8: "|u1", dt.int32: "<i4", dt.uint32: "<u4", dt.int64: "<i8",
            dt.uint64: "<u8", dt.float16: "<f2", dt.float32: "<f4", dt.float64: "<f8"}


class _Mem:
    """A contiguous device tensor's memory as NCCL sees it: `count` elements of `typestr`
    (zero copy: the tensor's own pointer), through __cuda_array_interface__."""

    def __init__(self, t, typestr: str = "|u1", count: int | None = None):
        n = t.numel() * t.dtype.itemsize if count is None else count
        self.tensor = t            # keeps the memory alive while NCCL holds the pointer
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "strides": None,
                                         "data": (t.data_ptr(), False), "version": 3}


class NCCLBackend(MPIBackend):
    """An NCCL communicator over the ranks of `comm` (an MPI communicator, which keeps the
    worker thread, the signature check, barriers and splits)."""

    name = "nccl"

    def __init__(self, comm, local_rank: int, check: bool = True):
        self.nc = nccl()
        from .. import cuda
        from ..device import Device
        if not cuda.is_available():
            raise DistributedError("the NCCL backend needs a CUDA GPU: none is available (use "
                                   "backend='mpi')")
        self.index = local_rank % cuda.device_count()
        cuda.set_device(self.index)
        self.device = Device("cuda", self.index)
        MPIBackend.__init__(self, comm, check)
        uid = self.nc.get_unique_id() if self.rank == 0 else None
        uid = self.nc.UniqueId.from_bytes(comm.bcast(bytes(uid) if uid is not None else None, 0))
        self.nccl_comm = self.nc.Communicator.init(self.size, self.rank, uid)
        self.local_rank = local_rank
        self._stream = None

    # ------------------------------------------------------------ the worker

    def submit(self, what: str, fn, inline: float | None = None):
        """Queue fn on the worker, to enqueue its NCCL calls on the caller's current stream;
        the Work's first `then` step orders the waiter's stream after them. Always queued
        (inline is ignored): enqueueing on the device never blocks the caller for long."""
        from .. import cuda
        stream, ev = cuda.current_stream(self.device), cuda.Event()

        def run():
            from ..cuda import runtime
            runtime.device_state(self.index).make_current()
            self._stream = stream
            try:
                with cuda.stream(stream):
                    r = fn()
            finally:
                self._stream = None
            ev.record(stream)
            return r
        w = MPIBackend.submit(self, what, run)
        w.then(lambda: ev.wait())          # device-side: the waiter's stream waits for the op
        return w

    def close(self) -> None:
        MPIBackend.close(self)
        c, self.nccl_comm = self.nccl_comm, None
        if c is not None:
            (c.abort if self._broken else c.destroy)()

    # ------------------------------------------------------------ staging (calling thread)
    # stage() is MPIBackend's, with this rank's GPU as the device

    def buffer_device(self):
        return self.device

    # ------------------------------------------------------------ helpers (worker thread)

    def _sk(self) -> int:
        return int(self._stream.handle) if self._stream is not None else 0

    def _op(self, op: str):
        nc = self.nc
        return {"sum": nc.SUM, "product": nc.PROD, "min": nc.MIN, "max": nc.MAX}[op]

    def _reducible(self, buf, op: str, what: str):
        """(memory view for NCCL, copy back or None): complex as pairs of reals (sums only),
        16-bit integers through an int32 copy (NCCL has no 16-bit integer type)."""
        if buf.dtype.kind == "c":
            if op != "sum":
                raise DistributedError(f"{what}: NCCL cannot reduce complex tensors with {op} "
                                       "(only sum and avg): use backend='mpi'")
            real = dt.float32 if buf.dtype is dt.complex64 else dt.float64
            return _Mem(buf, _TYPESTR[real], 2 * buf.numel()), None
        if buf.dtype in _TYPESTR:
            return _Mem(buf, _TYPESTR[buf.dtype], buf.numel()), None
        if buf.dtype in (dt.int16, dt.uint16):
            wide = buf.astype(dt.int32)
            return _Mem(wide, "<i4", wide.numel()), lambda: copy_into(buf, wide)
        raise DistributedError(f"{what}: NCCL cannot reduce {buf.dtype} tensors")

    # ------------------------------------------------------------ operations (worker thread)
    # bufs are contiguous tensors on this rank's GPU

    def all_reduce(self, buf, op: str) -> None:
        if not buf.numel():
            return
        m, back = self._reducible(buf, op, "all_reduce")
        self.nccl_comm.allreduce(m, m, self._op(op), stream=self._sk())
        if back:
            back()

    def broadcast(self, buf, root: int) -> None:
        if buf.numel():
            m = _Mem(buf)
            self.nccl_comm.broadcast(m, m, root, stream=self._sk())

    def reduce(self, buf, root: int, op: str) -> None:
        if not buf.numel():
            return
        m, back = self._reducible(buf, op, "reduce")
        self.nccl_comm.reduce(m, m, self._op(op), root, stream=self._sk())
        if back and self.rank == root:
            back()

    def all_gather(self, out, inp) -> None:
        if inp.numel():
            self.nccl_comm.allgather(_Mem(inp), _Mem(out), stream=self._sk())

    def reduce_scatter(self, out, inp, op: str) -> None:
        if not out.numel():
            return
        src, _ = self._reducible(inp, op, "reduce_scatter")
        dst, back = self._reducible(out, op, "reduce_scatter")
        self.nccl_comm.reduce_scatter(src, dst, self._op(op), stream=self._sk())
        if back:
            back()

    def all_to_all(self, out, inp, send: list, recv: list) -> None:
        """Grouped send/recv of flat buffers: send[j] elements of inp to rank j, recv[i] of out
        from rank i (NCCL has no all-to-all of its own)."""
        nc, s = self.nc, self._sk()
        nc.group_start()
        try:
            for j, (a, b) in enumerate(zip(pieces(inp, send), pieces(out, recv))):
                if a.numel():
                    self.nccl_comm.send(_Mem(a), j, stream=s)
                if b.numel():
                    self.nccl_comm.recv(_Mem(b), j, stream=s)
        finally:
            nc.group_end()

    def send(self, buf, peer: int, tag: int) -> None:
        if buf.numel():
            self.nccl_comm.send(_Mem(buf), peer, stream=self._sk())

    def recv(self, buf, peer, tag: int) -> int:
        if peer is None:
            raise DistributedError("recv: the NCCL backend needs the sender's rank (src=None, "
                                   "receive from any rank, works only with backend='mpi')")
        if buf.numel():
            self.nccl_comm.recv(_Mem(buf), peer, stream=self._sk())
        return peer

    def barrier(self) -> None:
        self.comm.Barrier()

    def child(self, comm) -> NCCLBackend:
        """The backend of a sub-group's communicator (from split): its own NCCL communicator."""
        return NCCLBackend(comm, self.local_rank, self.check_signatures)
