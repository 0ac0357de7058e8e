"""PyTorch's batched point-to-point (P2POp, batch_isend_irecv) and the object collectives past
the two in _more: gather_object, scatter_object_list, send_object_list / recv_object_list.
Objects travel pickled, as uint8 tensors zero-padded to the longest one, sizes first (as
PyTorch, only for trusted peers: unpickling runs code)."""
from __future__ import annotations

import pickle

from . import _collectives as C
from . import _more
from ._group import resolve


class P2POp:
    """One operation of batch_isend_irecv: op is isend or irecv (this module's, or
    tensor.distributed's), peer the other process's global rank."""

    def __init__(self, op, tensor, peer: int, group=None, tag: int = 0):
        if op not in (C.isend, C.irecv):
            raise ValueError("P2POp: op must be tensor.distributed.isend or "
                             f"tensor.distributed.irecv, got {op!r}")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag

    def __repr__(self):
        return (f"P2POp({self.op.__name__}, peer={self.peer}, shape={tuple(self.tensor.shape)}, "
                f"tag={self.tag})")


def batch_isend_irecv(p2p_op_list) -> list:
    """Post every send and receive of the list (P2POps) and return their Work handles, in
    order. Every one is posted nonblocking, so no order of the lists across ranks deadlocks."""
    ops = list(p2p_op_list) if p2p_op_list is not None else []
    if not ops or not all(isinstance(p, P2POp) for p in ops):
        raise ValueError("batch_isend_irecv: expects a non-empty list of P2POp, got "
                         f"{[type(p).__name__ for p in ops] or 'nothing'}")
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in ops]


def gather_object(obj, object_gather_list=None, dst: int = 0, group=None) -> None:
    """object_gather_list[r] = rank r's obj on global rank dst (a list of one entry per rank
    there, filled in place; None on the other ranks)."""
    import tensor as T
    what = "gather_object"
    g = resolve(group, what)
    w, be = g.size(), g.backend
    mine = be.rank == g.group_rank(int(dst), what)
    if mine and (not isinstance(object_gather_list, list) or len(object_gather_list) != w):
        raise ValueError(f"{what}: on the destination rank {dst}, object_gather_list must be a "
                         f"list of {w} entries (one per rank), got {object_gather_list!r:.60}")
    data = pickle.dumps(obj)
    sizes = _more.gathered_sizes(g, len(data))
    m = max(sizes)
    parts = [T.zeros((m,), dtype=T.uint8, device=be.buffer_device()) for _ in range(w)] \
        if mine else None
    _more.gather(_more._bytes_tensor(be, data, m), parts, dst, g)
    if mine:
        for r in range(w):
            object_gather_list[r] = pickle.loads(parts[r].numpy().tobytes()[:sizes[r]])


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int = 0, group=None) -> None:
    """scatter_object_output_list[0] = global rank src's scatter_object_input_list[r] on each
    rank r (the input: one object per rank, on src only)."""
    import tensor as T
    what = "scatter_object_list"
    g = resolve(group, what)
    w, be = g.size(), g.backend
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError(f"{what}: scatter_object_output_list must be a non-empty list (its "
                         f"entry 0 receives this rank's object), got "
                         f"{scatter_object_output_list!r:.60}")
    mine = be.rank == g.group_rank(int(src), what)
    if mine:
        if scatter_object_input_list is None or len(scatter_object_input_list) != w:
            raise ValueError(f"{what}: on the source rank {src}, scatter_object_input_list must "
                             f"hold {w} objects (one per rank)")
        blobs = [pickle.dumps(o) for o in scatter_object_input_list]
    dev = be.buffer_device()
    head = T.asarray([len(b) for b in blobs] if mine else [0] * w, dtype=T.int64, device=dev)
    C.broadcast(head, src, g)
    sizes = [int(s) for s in head.tolist()]
    m = max(sizes)
    parts = [_more._bytes_tensor(be, b, m) for b in blobs] if mine else None
    out = T.zeros((m,), dtype=T.uint8, device=dev)
    _more.scatter(out, parts, src, g)
    scatter_object_output_list[0] = pickle.loads(out.numpy().tobytes()[:sizes[be.rank]])


def send_object_list(object_list: list, dst: int, group=None) -> None:
    """Send the list's objects to global rank dst (which calls recv_object_list with a list of
    the same length)."""
    import tensor as T
    what = "send_object_list"
    g = resolve(group, what)
    if not isinstance(object_list, list):
        raise TypeError(f"{what}: object_list must be a list, got {type(object_list).__name__}")
    data = pickle.dumps(list(object_list))
    dev = g.backend.buffer_device()
    C.send(T.asarray([len(data), len(object_list)], dtype=T.int64, device=dev), dst, g)
    C.send(_more._bytes_tensor(g.backend, data, len(data)), dst, g)


def recv_object_list(object_list: list, src: int | None = None, group=None) -> int:
    """object_list[:] = the objects a send_object_list sent (from src, or any rank); returns
    the sender's global rank."""
    import tensor as T
    what = "recv_object_list"
    g = resolve(group, what)
    if not isinstance(object_list, list):
        raise TypeError(f"{what}: object_list must be a list, got {type(object_list).__name__}")
    dev = g.backend.buffer_device()
    head = T.zeros((2,), dtype=T.int64, device=dev)
    sender = C.recv(head, src, g)
    size, count = (int(v) for v in head.tolist())
    buf = T.zeros((size,), dtype=T.uint8, device=dev)
    C.recv(buf, sender, g)
    if count != len(object_list):
        raise ValueError(f"{what}: rank {sender} sent {count} objects but object_list has "
                         f"{len(object_list)} entries (give both sides lists of the same length)")
    object_list[:] = pickle.loads(buf.numpy().tobytes())
    return sender


__all__ = ["P2POp", "batch_isend_irecv", "gather_object", "recv_object_list",
           "scatter_object_list", "send_object_list"]
