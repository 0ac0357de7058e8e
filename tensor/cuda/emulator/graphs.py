"""Stream capture and CUDA graphs for the emulator's fake driver (driver.py re-exports the
entry points): cuStreamBeginCapture, cuStreamEndCapture, cuStreamIsCapturing,
cuGraphInstantiate, cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy.

As the driver: while a stream captures, kernel launches, device-to-device copies and memsets
queued on it are recorded, not run; a launch's arguments are copied when it is recorded (the
sizes come from the emulator module's emu_params_NAME), so changing them afterwards does not
change the graph. What cannot be captured ends the capture as invalidated and fails with the
driver's error: a copy to or from host memory on the capturing stream, and (unless the calling
thread set relaxed mode with cuThreadExchangeStreamCaptureMode, or the capture is relaxed) a
synchronization, an allocation or free, a module load, or work on the legacy default stream
while a capture is active. cuStreamEndCapture then returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. A graph runs
its nodes in the recorded order (the driver may overlap independent nodes; the results are
the same for one stream's capture).
"""
from __future__ import annotations

import ctypes
from enum import IntEnum

from . import driver as D


class CUstreamCaptureMode(IntEnum):  # noqa: N801 - the binding's names
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
    CU_STREAM_CAPTURE_MODE_RELAXED = 2


class CUstreamCaptureStatus(IntEnum):  # noqa: N801
    CU_STREAM_CAPTURE_STATUS_NONE = 0
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2


_RELAXED = CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
_NONE, _ACTIVE, _INVALID = (CUstreamCaptureStatus(i) for i in range(3))


class _Capture:
    __slots__ = ("mode", "nodes", "invalid")

    def __init__(self, mode: int):
        self.mode, self.nodes, self.invalid = mode, [], False


def _state():
    s = D._S
    if not hasattr(s, "captures"):
        s.captures, s.graphs, s.execs = {}, {}, {}
    return s


def capturing(stream) -> _Capture | None:
    """The capture recording on `stream`, if any."""
    s = D._S
    return s.captures.get(D._int(stream)) if hasattr(s, "captures") else None


def refuse(stream=None, sync: bool = False):
    """The error tuple for an operation that cannot run while a capture is active (and the
    captures it breaks, invalidated), or None when it may run. stream: the stream it is queued
    on (None: not a stream operation); sync: it synchronizes or frees."""
    s = D._S
    caps = getattr(s, "captures", None)
    if not caps:
        return None
    h = None if stream is None else D._int(stream)
    cap = caps.get(h) if h is not None else None
    if cap is not None:   # on the capturing stream itself: never allowed here
        cap.invalid = True
        return (D.R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    relaxed = getattr(s._tls, "capture_mode", 0) == _RELAXED   # this thread's own mode
    unsafe = [] if relaxed else [c for c in caps.values() if c.mode != _RELAXED]
    if sync and unsafe:
        for c in unsafe:
            c.invalid = True
        return (D.R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    if h in (0, 1) and unsafe:   # the legacy stream synchronizes with the capturing one
        for c in unsafe:
            c.invalid = True
        return (D.R.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,)
    return None


def record_launch(cap: _Capture, f: int, ent, grid, block, shared: int, addr: int):
    """Record a launch of function handle f with a copy of its arguments (addr: the void*[]
    of the call)."""
    name, _, hmod = ent
    lib = D._S.modules.get(hmod)
    sizes_fn = getattr(lib, f"emu_params_{name}", None)
    if sizes_fn is None:
        cap.invalid = True
        return (D.R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    sizes = (ctypes.c_size_t * 32)()
    n = sizes_fn(sizes, 32)
    ptrs = ctypes.cast(addr, ctypes.POINTER(ctypes.c_void_p)) if n else None
    args = [ctypes.create_string_buffer(ctypes.string_at(ptrs[i], sizes[i]), max(sizes[i], 1))
            for i in range(n)]
    cap.nodes.append(("kernel", f, tuple(grid), tuple(block), shared, args))
    return (D._OK,)


def record(cap: _Capture, node: tuple):
    cap.nodes.append(node)
    return (D._OK,)


def cuThreadExchangeStreamCaptureMode(mode):  # noqa: N802
    """Set this thread's capture interaction mode; returns the one it had."""
    tls = D._S._tls
    prev = getattr(tls, "capture_mode", CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
    tls.capture_mode = CUstreamCaptureMode(int(mode))
    return (D._OK, prev)


def cuStreamBeginCapture(hStream, mode):  # noqa: N802,N803
    if (e := D._need_ctx()):
        return e
    s = _state()
    h = D._int(hStream)
    if h not in s.streams:   # the legacy / per-thread default streams cannot capture
        return (D.R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,)
    if h in s.captures:
        return (D.R.CUDA_ERROR_ILLEGAL_STATE,)
    s.captures[h] = _Capture(int(mode))
    return (D._OK,)


cuStreamBeginCapture_v2 = cuStreamBeginCapture


def cuStreamEndCapture(hStream):  # noqa: N802,N803
    if (e := D._need_ctx()):
        return e + (None,)
    s = _state()
    cap = s.captures.pop(D._int(hStream), None)
    if cap is None:
        return (D.R.CUDA_ERROR_ILLEGAL_STATE, None)
    if cap.invalid:
        return (D.R.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, None)
    h = s.handle()
    s.graphs[h] = list(cap.nodes)
    return (D._OK, CUgraph(h))


def cuStreamIsCapturing(hStream):  # noqa: N802,N803
    if (e := D._need_ctx()):
        return e + (None,)
    cap = capturing(hStream)
    return (D._OK, _NONE if cap is None else _INVALID if cap.invalid else _ACTIVE)


def cuGraphInstantiate(hGraph, flags=0):  # noqa: N802,N803
    if (e := D._need_ctx()):
        return e + (None,)
    s = _state()
    nodes = s.graphs.get(D._int(hGraph))
    if nodes is None:
        return (D.R.CUDA_ERROR_INVALID_VALUE, None)
    h = s.handle()
    s.execs[h] = list(nodes)
    return (D._OK, CUgraphExec(h))


cuGraphInstantiateWithFlags = cuGraphInstantiate


def cuGraphLaunch(hGraphExec, hStream):  # noqa: N802,N803
    if (e := D._need_ctx()):
        return e
    s = _state()
    nodes = s.execs.get(D._int(hGraphExec))
    if nodes is None or not D._stream_ok(hStream):
        return (D.R.CUDA_ERROR_INVALID_HANDLE,)
    if (e := refuse(hStream)):
        return e
    for node in nodes:
        r = _run(node, hStream)
        if r[0] != D._OK:
            return r
    return (D._OK,)


def _run(node, stream):
    kind = node[0]
    if kind == "kernel":
        _, f, grid, block, shared, args = node
        arr = (ctypes.c_void_p * max(len(args), 1))(*[ctypes.addressof(a) for a in args])
        return D.cuLaunchKernel(f, *grid, *block, shared, stream, ctypes.addressof(arr), 0)
    if kind == "copy":
        _, dst, src, n = node
        return D.cuMemcpyDtoDAsync(dst, src, n, stream)
    _, dst, value, width, n = node   # "memset"
    return D._memset(dst, value, width, n, stream)


def cuGraphExecDestroy(hGraphExec):  # noqa: N802,N803
    s = _state()
    return (D._OK,) if s.execs.pop(D._int(hGraphExec), None) is not None else (
        D.R.CUDA_ERROR_INVALID_VALUE,)


def cuGraphDestroy(hGraph):  # noqa: N802,N803
    s = _state()
    return (D._OK,) if s.graphs.pop(D._int(hGraph), None) is not None else (
        D.R.CUDA_ERROR_INVALID_VALUE,)


class CUgraph(D._Handle):
    pass


class CUgraphExec(D._Handle):
    pass
