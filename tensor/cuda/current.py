"""Which stream each thread has made current on each device: the state the launch path
(runtime.py) reads and the stream API (streams.py) writes. A leaf module, so that both import
it and neither has to import the other for it.

The table holds Stream objects (streams.py) and reads only their `handle` and `id`; a device
state (runtime.py) gives the fallback, its default stream.
"""
from __future__ import annotations

import threading

_tls = threading.local()


def get(index: int):
    """The stream this thread made current on cuda:index, or None (the default stream)."""
    cur = getattr(_tls, "cur", None)
    return cur.get(index) if cur else None


def set(index: int, s) -> None:  # noqa: A001 - the table's verb
    cur = getattr(_tls, "cur", None)
    if cur is None:
        cur = _tls.cur = {}
    cur[index] = s


def handle(st):
    """The CUstream kernels of this device go onto now (the launch path's fast path)."""
    cur = getattr(_tls, "cur", None)
    if cur:
        s = cur.get(st.index)
        if s is not None:
            return s.handle
    return st.default_handle


def stream_id(st) -> int:
    """The allocator's stream key: 0 for the default stream (blocks are reused per stream)."""
    cur = getattr(_tls, "cur", None)
    if cur:
        s = cur.get(st.index)
        if s is not None:
            return s.id
    return 0
