"""The collectives and point-to-point operations on tensors (PyTorch's names and arguments):
each checks its arguments on the calling thread, stages its tensors where the backend needs it
(a contiguous buffer on the backend's device, 16-bit floats widened for a reduction), queues
the operation on the group's backend, and either waits (async_op=False: returns None) or
returns the Work handle whose wait() finishes the copies back."""
from __future__ import annotations

import functools

from .. import _hook
from .. import dtypes as dt
from .._tensor import Tensor
from ..aliasing import check_writable
from ..capture import replayed
from ._group import resolve
from ._mpi import pieces as _pieces
from ._work import DistributedError, Pending, ReplayedWork, Work


class ReduceOp:
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


_OPS = ("sum", "product", "min", "max", "avg")


def _replayable(fn):
    """fn as a step of tensor.compile's programs: called while a step is captured, it runs
    (now and at every replay) as an island on the step's memory; an asynchronous call returns a
    ReplayedWork, whose wait() is an island of the program too. (The engines move the bytes
    outside our backends, which a capture records: without this a replay would skip them.)"""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        cap = _hook.capture
        if cap is None or not cap.mine():
            return fn(*args, **kwargs)
        handle = ReplayedWork(fn.__name__)

        def issue(*a, **kw):
            r = fn(*a, **kw)
            return handle._issued(r) if isinstance(r, Work) else r
        return replayed(issue, *args, **kwargs)
    return call


def _tensor(t, what: str, name: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {name} must be a Tensor, got {type(t).__name__}")
    return t


def _out(t, what: str, name: str = "tensor") -> Tensor:
    """A tensor the operation writes: refused up front (before any rank communicates) when it
    is read-only or several of its elements share memory (a broadcast view)."""
    check_writable(_tensor(t, what, name), what, f"the {name} (written in place)")
    return t


def _overlap(a: Tensor, b: Tensor) -> bool:
    """Whether two contiguous staging buffers share bytes (an engine may not be handed a send
    buffer that overlaps its receive buffer)."""
    na, nb = a.numel() * a.dtype.itemsize, b.numel() * b.dtype.itemsize
    if not na or not nb or a.device != b.device:
        return False
    pa, pb = a.data_ptr(), b.data_ptr()
    return pa < pb + nb and pb < pa + na


def _apart(be, src: Tensor, dst: Tensor) -> Tensor:
    """src, or a copy of it when it overlaps dst (PyTorch's in-place all_gather /
    reduce_scatter: the input is this rank's chunk of the output)."""
    if not _overlap(src, dst):
        return src
    c = be.buffer(tuple(src.shape), src.dtype)
    be.copy(c, src)
    return c


def _reduce_op(op, t: Tensor, what: str) -> str:
    op = getattr(op, "value", op)
    op = str(op).lower() if op is not None else "sum"
    op = {"prod": "product"}.get(op, op)
    if op not in _OPS:
        raise ValueError(f"{what}: unknown reduce op {op!r} (use ReduceOp.SUM, PRODUCT, MIN, "
                         "MAX or AVG)")
    if op == "avg" and t.dtype.kind not in "fc":
        raise TypeError(f"{what}: ReduceOp.AVG needs a floating tensor, got {t.dtype}")
    if op in ("min", "max") and t.dtype.kind == "c":
        raise TypeError(f"{what}: ReduceOp.{op.upper()} is not defined for complex tensors")
    return op


def _sig(what, *ts, **extra) -> tuple:
    return (what,) + tuple((tuple(t.shape), t.dtype.name, t.device.type) for t in ts) + \
        tuple(sorted(extra.items()))


def _inline(g, async_op: bool):
    """The deadline in seconds of a blocking call, which the backend may then run on the calling
    thread (no hand-off to its worker when nothing is queued); None: queue it."""
    return None if async_op else g.timeout


def _finish(work: Work, g, async_op: bool):
    work.timeout = g.timeout
    if async_op:
        return work
    work.wait()
    return None


def _reducing(be, t: Tensor, op: str):
    """(staged buffer, backend op, copy back): bools reduce as bytes (sum: any, product: all),
    16-bit floats in float32, avg as a sum divided afterwards."""
    if t.dtype is dt.bool_:
        buf, back = be.stage(t, dt.uint8)
        return buf, {"sum": "max", "product": "min"}.get(op, op), back
    wide = dt.float32 if t.dtype in (dt.float16, dt.bfloat16) else None
    buf, back = be.stage(t, wide)
    return buf, "sum" if op == "avg" else op, back


@_replayable
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce tensor across the group's ranks, in place on every rank."""
    what = "all_reduce"
    t = _out(tensor, what)
    g = resolve(group, what)
    op = _reduce_op(op, t, what)
    be = g.backend
    buf, bop, back = _reducing(be, t, op)
    sig = _sig(what, t, op=op)

    def run():
        be.agree(what, sig)
        be.all_reduce(buf, bop)
    w = be.submit(what, run, _inline(g, async_op))
    if op == "avg":
        w.then(lambda: buf.__itruediv__(g.size()))
    return _finish(w.then(back), g, async_op)


@_replayable
def broadcast(tensor, src: int, group=None, async_op: bool = False):
    """Copy the tensor of global rank src to every rank's tensor."""
    what = "broadcast"
    t = _out(tensor, what)
    g = resolve(group, what)
    root = g.group_rank(int(src), what)
    be = g.backend
    buf, back = be.stage(t, None, read=be.rank == root)
    sig = _sig(what, t, src=root)

    def run():
        be.agree(what, sig)
        be.broadcast(buf, root)
    return _finish(be.submit(what, run, _inline(g, async_op)).then(back), g, async_op)


@_replayable
def reduce(tensor, dst: int, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce into the tensor of global rank dst (the others' tensors are left as they were)."""
    what = "reduce"
    t = _tensor(tensor, what)
    g = resolve(group, what)
    op = _reduce_op(op, t, what)
    root = g.group_rank(int(dst), what)
    be = g.backend
    if be.rank == root:
        _out(t, what)
    buf, bop, back = _reducing(be, t, op)
    sig = _sig(what, t, dst=root, op=op)

    def run():
        be.agree(what, sig)
        be.reduce(buf, root, bop)
    w = be.submit(what, run, _inline(g, async_op))
    if be.rank == root:
        if op == "avg":
            w.then(lambda: buf.__itruediv__(g.size()))
        w.then(back)
    return _finish(w, g, async_op)


def _stacked(be, n: int, like: Tensor, what: str):
    """A contiguous staging buffer of n copies of like's shape, on the backend's device."""
    return be.buffer((n,) + tuple(like.shape), like.dtype)


@_replayable
def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """output (world * n, ...) or (world, n, ...) = every rank's input, in rank order."""
    what = "all_gather_into_tensor"
    out, inp = _out(output_tensor, what, "output"), _tensor(input_tensor, what, "input")
    g = resolve(group, what)
    if out.numel() != g.size() * inp.numel() or out.dtype is not inp.dtype:
        raise ValueError(f"{what}: output {out.shape} {out.dtype} must hold {g.size()} inputs of "
                         f"{inp.shape} {inp.dtype}")
    be = g.backend
    src, _ = be.stage(inp, None, read=True, write=False)
    dst, back = be.stage(out, None, read=False)
    src = _apart(be, src, dst)
    sig = _sig(what, inp)

    def run():
        be.agree(what, sig)
        be.all_gather(dst, src)
    return _finish(be.submit(what, run, _inline(g, async_op)).then(back), g, async_op)


@_replayable
def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """tensor_list[r] = rank r's tensor."""
    what = "all_gather"
    t = _tensor(tensor, what)
    g = resolve(group, what)
    outs = list(tensor_list)
    for i, o in enumerate(outs):
        if isinstance(o, Tensor):
            _out(o, what, f"tensor_list[{i}]")
    if len(outs) != g.size() or any(not isinstance(o, Tensor) or o.shape != t.shape
                                    or o.dtype is not t.dtype for o in outs):
        raise ValueError(f"{what}: tensor_list must hold {g.size()} tensors of {t.shape} {t.dtype}")
    be = g.backend
    stack = _stacked(be, g.size(), t, what)
    w = all_gather_into_tensor(stack, t, g, async_op=True)
    w.then(lambda: [be.copy(o, stack[i]) for i, o in enumerate(outs)])
    return _finish(w, g, async_op)


@_replayable
def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None,  # noqa: A002
                          async_op: bool = False):
    """output = the reduction over ranks of input's r-th block (r = this rank), blocks of
    output's size along the flattened input."""
    what = "reduce_scatter_tensor"
    out, inp = _out(output, what, "output"), _tensor(input, what, "input")
    g = resolve(group, what)
    op = _reduce_op(op, inp, what)
    if inp.numel() != g.size() * out.numel() or out.dtype is not inp.dtype:
        raise ValueError(f"{what}: input {inp.shape} {inp.dtype} must hold {g.size()} outputs of "
                         f"{out.shape} {out.dtype}")
    be = g.backend
    src, bop, _ = _reducing(be, inp, op)
    dst, _, back = _reducing(be, out, op)
    src = _apart(be, src, dst)
    sig = _sig(what, out, op=op)

    def run():
        be.agree(what, sig)
        be.reduce_scatter(dst, src, bop)
    w = be.submit(what, run, _inline(g, async_op))
    if op == "avg":
        w.then(lambda: dst.__itruediv__(g.size()))
    return _finish(w.then(back), g, async_op)


@_replayable
def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """output = the reduction over ranks of their input_list[r] (r = this rank)."""
    what = "reduce_scatter"
    out = _out(output, what, "output")
    g = resolve(group, what)
    ins = list(input_list)
    if len(ins) != g.size() or any(not isinstance(i, Tensor) or i.shape != out.shape
                                   or i.dtype is not out.dtype for i in ins):
        raise ValueError(f"{what}: input_list must hold {g.size()} tensors of {out.shape} "
                         f"{out.dtype}")
    stack = _stacked(g.backend, g.size(), out, what)
    for i, x in enumerate(ins):
        g.backend.copy(stack[i], x)
    return reduce_scatter_tensor(out, stack, op, g, async_op)


def _exchange(what: str, g, dst: Tensor, src: Tensor, send: list, recv: list, async_op: bool,
              back):
    """All-to-all of flat contiguous buffers: send[j] elements of src (in rank order) to rank
    j, recv[i] elements of dst from rank i. The ranks first check, together, that they call the
    same operation with one dtype and that every pair's counts agree (one small all-gather)."""
    be = g.backend
    sig = (what, src.dtype.name)

    def run():
        be.agree_counts(what, sig, send, recv)
        be.all_to_all(dst, src, send, recv)
    return _finish(be.submit(what, run, _inline(g, async_op)).then(back), g, async_op)


@_replayable
def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """output_tensor_list[r] = rank r's input_tensor_list[this rank]. The tensors may differ
    in shape (what rank r sends here must have output_tensor_list[r]'s number of elements);
    all of one dtype."""
    what = "all_to_all"
    g = resolve(group, what)
    ins, outs = list(input_tensor_list), list(output_tensor_list)
    if len(ins) != g.size() or len(outs) != g.size():
        raise ValueError(f"{what}: both lists must hold {g.size()} tensors (one per rank), got "
                         f"{len(outs)} outputs and {len(ins)} inputs")
    ins = [_tensor(x, what, f"input_tensor_list[{i}]") for i, x in enumerate(ins)]
    outs = [_out(x, what, f"output_tensor_list[{i}]") for i, x in enumerate(outs)]
    d = ins[0].dtype
    for x in ins + outs:
        if x.dtype is not d:
            raise TypeError(f"{what}: every tensor must be {d}, got one of {x.dtype}")
    be = g.backend
    send, recv = [x.numel() for x in ins], [o.numel() for o in outs]
    src, dst = be.buffer((sum(send),), d), be.buffer((sum(recv),), d)
    for x, piece in zip(ins, _pieces(src, send)):
        be.copy(piece.reshape(x.shape), x)
    got = _pieces(dst, recv)
    return _exchange(what, g, dst, src, send, recv, async_op,
                     lambda: [be.copy(o, v.reshape(o.shape)) for o, v in zip(outs, got)])


def _splits(sizes, rows: int, n: int, what: str, which: str) -> list:
    if sizes is None:
        if rows % n:
            raise ValueError(f"{what}: the {which}'s first dimension ({rows}) is not divisible by "
                             f"the world size {n}: give {which}_split_sizes")
        return [rows // n] * n
    sizes = [int(k) for k in sizes]
    if len(sizes) != n or min(sizes) < 0 or sum(sizes) != rows:
        raise ValueError(f"{what}: {which}_split_sizes {sizes} must be {n} sizes >= 0 that sum to "
                         f"the {which}'s first dimension, {rows}")
    return sizes


@_replayable
def all_to_all_single(output, input, output_split_sizes=None,  # noqa: A002 - PyTorch's name
                      input_split_sizes=None, group=None, async_op: bool = False):
    """Split input along its first dimension (input_split_sizes rows to each rank, in rank
    order; equal parts when None) and send part j to rank j; output gets, in rank order, the
    parts the ranks sent here (output_split_sizes rows from each)."""
    what = "all_to_all_single"
    out, inp = _out(output, what, "output"), _tensor(input, what, "input")
    g = resolve(group, what)
    if out.dtype is not inp.dtype:
        raise TypeError(f"{what}: output {out.dtype} and input {inp.dtype} differ")
    if out.ndim < 1 or inp.ndim < 1 or out.shape[1:] != inp.shape[1:]:
        raise ValueError(f"{what}: output {out.shape} and input {inp.shape} must have a first "
                         "dimension and the same others")
    row = 1
    for k in inp.shape[1:]:
        row *= k
    send = [k * row for k in _splits(input_split_sizes, inp.shape[0], g.size(), what, "input")]
    recv = [k * row for k in _splits(output_split_sizes, out.shape[0], g.size(), what, "output")]
    be = g.backend
    src, _ = be.stage(inp, None, write=False)
    dst, back = be.stage(out, None, read=False)
    src = _apart(be, src, dst)
    return _exchange(what, g, dst.reshape(-1), src.reshape(-1), send, recv, async_op, back)


@_replayable
def barrier(group=None, async_op: bool = False):
    """Wait until every rank of the group has reached it."""
    what = "barrier"
    g = resolve(group, what)
    be = g.backend

    def run():
        # checked like every collective: a rank in barrier() while another is in, say, an
        # all_reduce raises on both, instead of the barrier pairing with that call's check
        be.agree(what, (what,))
        be.barrier()
    return _finish(be.submit(what, run, _inline(g, async_op)), g, async_op)


def _peer(g, rank, what: str, name: str) -> int:
    """The group rank of the global rank a point-to-point operation names; not this process
    (as PyTorch: a blocking send to oneself could never be received)."""
    peer = g.group_rank(int(rank), what)
    if peer == g.backend.rank:
        raise ValueError(f"{what}: {name}={int(rank)} is this process's own rank: "
                         "point-to-point operations need another rank")
    return peer


@_replayable
def isend(tensor, dst: int, group=None, tag: int = 0) -> Work:
    what = "send"
    t = _tensor(tensor, what)
    g = resolve(group, what)
    peer = _peer(g, dst, what, "dst")
    buf, _ = g.backend.stage(t, None, write=False)
    w = g.backend.submit(what, lambda: g.backend.send(buf, peer, int(tag)))
    w.timeout = g.timeout
    return w


@_replayable
def irecv(tensor, src: int | None = None, group=None, tag: int = 0) -> Work:
    what = "recv"
    t = _out(tensor, what)
    g = resolve(group, what)
    peer = None if src is None else _peer(g, src, what, "src")
    be = g.backend
    buf, back = be.stage(t, None, read=False)

    def run():
        r = be.recv(buf, peer, int(tag))     # the sender's group rank, or a Pending of it
        return r.map(g.ranks.__getitem__) if isinstance(r, Pending) else g.ranks[r]
    w = be.submit(what, run).then(back)
    w.timeout = g.timeout
    return w


@_replayable
def send(tensor, dst: int, group=None, tag: int = 0) -> None:
    isend(tensor, dst, group, tag).wait()


@_replayable
def recv(tensor, src: int | None = None, group=None, tag: int = 0) -> int:
    """Receive into tensor (from src, or any rank); returns the sender's global rank."""
    return irecv(tensor, src, group, tag).result()


__all__ = ["ReduceOp", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
           "barrier", "send", "recv", "isend", "irecv", "DistributedError"]
