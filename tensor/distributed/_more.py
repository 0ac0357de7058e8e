"""PyTorch's remaining everyday collectives, on the ones in _collectives: gather and scatter (one
all-to-all exchange whose counts are zero except to or from the root, so only the root's data
moves, and the call check of every all-to-all applies), the object collectives
(all_gather_object, broadcast_object_list: pickled bytes, sizes first), and the rank
translations get_global_rank / get_group_rank."""
from __future__ import annotations

import pickle

import numpy as np

from .._tensor import Tensor
from . import _collectives as C
from ._group import _group, resolve


def _flat(be, t: Tensor, write: bool):
    """(contiguous 1-d staging buffer of t on the engine's device, copy back)."""
    buf, back = be.stage(t, None, read=not write, write=write)
    return buf.reshape(-1), back


def _same(ts: list, like: Tensor, what: str, name: str) -> list:
    ts = list(ts)
    for i, x in enumerate(ts):
        C._tensor(x, what, f"{name}[{i}]")
        if tuple(x.shape) != tuple(like.shape) or x.dtype is not like.dtype:
            raise ValueError(f"{what}: {name}[{i}] is {tuple(x.shape)} {x.dtype.name}, but every "
                             f"entry must be the tensor's {tuple(like.shape)} {like.dtype.name}")
    return ts


def _root_list(ts, like: Tensor, g, root: int, what: str, name: str, role: str, arg) -> list | None:
    """The root's list of one tensor per rank (each of like's shape and dtype), checked; None
    on the other ranks, where it must be None or empty. role / arg: how the root is named."""
    w = g.size()
    if g.backend.rank == root:
        if ts is None or len(ts) != w:
            raise ValueError(f"{what}: on the {role} rank {arg}, {name} must hold {w} tensors "
                             f"(one per rank), got {'None' if ts is None else len(ts)}")
        return _same(ts, like, what, name)
    if ts:
        raise ValueError(f"{what}: {name} must be None or empty on a rank other than the {role} "
                         f"{arg} (this is rank {g.ranks[g.backend.rank]})")
    return None


@C._replayable
def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False):
    """gather_list[r] = rank r's tensor, on global rank dst only (gather_list: that many
    tensors of tensor's shape and dtype there; None or [] on the other ranks)."""
    what = "gather"
    t = C._tensor(tensor, what)
    g = resolve(group, what)
    root = g.group_rank(int(dst), what)
    be, n, w = g.backend, t.numel(), g.size()
    mine = be.rank == root
    outs = _root_list(gather_list, t, g, root, what, "gather_list", "destination", dst)
    if mine:
        outs = [C._out(x, what, f"gather_list[{i}]") for i, x in enumerate(outs)]
    src, _ = _flat(be, t, write=False)
    dst_buf = be.buffer(((w * n) if mine else 0,), t.dtype)
    send = [n if j == root else 0 for j in range(w)]
    recv = [n if mine else 0] * w

    def back():
        if mine:
            for i, o in enumerate(outs):
                be.copy(o, dst_buf[i * n:(i + 1) * n].reshape(o.shape))
    return C._exchange(what, g, dst_buf, src, send, recv, async_op, back)


@C._replayable
def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False):
    """tensor = global rank src's scatter_list[r] on every rank r (scatter_list: that many
    tensors of tensor's shape and dtype on src; None or [] on the other ranks)."""
    what = "scatter"
    t = C._out(tensor, what)
    g = resolve(group, what)
    root = g.group_rank(int(src), what)
    be, n, w = g.backend, t.numel(), g.size()
    mine = be.rank == root
    ins = _root_list(scatter_list, t, g, root, what, "scatter_list", "source", src)
    sbuf = be.buffer(((w * n) if mine else 0,), t.dtype)
    for i, x in enumerate(ins or ()):
        be.copy(sbuf[i * n:(i + 1) * n].reshape(x.shape), x)
    dbuf, back = _flat(be, t, write=True)
    send = [n if mine else 0] * w
    recv = [n if i == root else 0 for i in range(w)]
    return C._exchange(what, g, dbuf, sbuf, send, recv, async_op, back)


def _bytes_tensor(be, data: bytes, size: int):
    """data zero-padded to size bytes, as a uint8 tensor on the engine's device."""
    import tensor as T
    a = np.zeros(size, np.uint8)
    a[:len(data)] = np.frombuffer(data, np.uint8)
    return T.asarray(a, device=be.buffer_device())


def gathered_sizes(g, nbytes: int) -> list:
    """Every group rank's byte count (an all-gather of one int64 each)."""
    import tensor as T
    dev, w = g.backend.buffer_device(), g.size()
    out = T.zeros((w,), dtype=T.int64, device=dev)
    C.all_gather_into_tensor(out, T.asarray([nbytes], dtype=T.int64, device=dev), g)
    return [int(s) for s in out.tolist()]


def all_gather_object(object_list: list, obj, group=None) -> None:
    """object_list[r] = rank r's obj (pickled: objects every rank can unpickle; as PyTorch,
    only for trusted peers). object_list must have one entry per rank; filled in place."""
    import tensor as T
    what = "all_gather_object"
    g = resolve(group, what)
    w, be = g.size(), g.backend
    if not isinstance(object_list, list) or len(object_list) != w:
        got = f"a list of {len(object_list)}" if isinstance(object_list, list) else \
            type(object_list).__name__
        raise ValueError(f"{what}: object_list must be a list of {w} entries (one per rank), got "
                         f"{got}")
    data = pickle.dumps(obj)
    sizes = gathered_sizes(g, len(data))
    m = max(sizes)
    every = T.zeros((w * m,), dtype=T.uint8, device=be.buffer_device())
    C.all_gather_into_tensor(every, _bytes_tensor(be, data, m), g)
    raw = every.numpy().tobytes()
    for r in range(w):
        object_list[r] = pickle.loads(raw[r * m:r * m + sizes[r]])


def broadcast_object_list(object_list: list, src: int = 0, group=None) -> None:
    """object_list[:] = global rank src's object_list (pickled; the lists must have the same
    length on every rank; filled in place)."""
    import tensor as T
    what = "broadcast_object_list"
    g = resolve(group, what)
    be = g.backend
    if not isinstance(object_list, list):
        raise TypeError(f"{what}: object_list must be a list, got {type(object_list).__name__}")
    mine = be.rank == g.group_rank(int(src), what)
    data = pickle.dumps(list(object_list)) if mine else b""
    head = T.asarray([len(data), len(object_list)], dtype=T.int64, device=be.buffer_device())
    C.broadcast(head, src, g)
    size, count = (int(v) for v in head.tolist())
    buf = _bytes_tensor(be, data, size)
    C.broadcast(buf, src, g)
    if mine:
        return
    if count != len(object_list):
        raise ValueError(f"{what}: rank {src} broadcast {count} objects but this rank's "
                         f"object_list has {len(object_list)} entries (give every rank a list of "
                         "the same length)")
    object_list[:] = pickle.loads(buf.numpy().tobytes())


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of the group's rank group_rank."""
    g = _group(group, "get_global_rank")
    if not 0 <= int(group_rank) < g.size():
        raise ValueError(f"get_global_rank: group rank {group_rank} is out of range for a group of "
                         f"{g.size()}")
    return g.ranks[int(group_rank)]


def get_group_rank(group, global_rank: int) -> int:
    """The rank in the group of the global rank global_rank (ValueError if not a member)."""
    g = _group(group, "get_group_rank")
    if int(global_rank) not in g.ranks:
        raise ValueError(f"get_group_rank: global rank {global_rank} is not in the group {g.ranks}")
    return g.ranks.index(int(global_rank))


__all__ = ["all_gather_object", "broadcast_object_list", "gather", "get_global_rank",
           "get_group_rank", "scatter"]
