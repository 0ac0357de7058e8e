"""CUDA Graphs: record a device's work once, replay it with one launch (PyTorch's
torch.cuda.CUDAGraph and torch.cuda.graph).

>>> import tensor as T
>>> if T.cuda.is_available():
...     x = T.zeros(1024, device="cuda")              # static input: refill it, then replay
...     y = T.exp(x) * 2                                # warm up once (kernels compile, load)
...     g = T.cuda.CUDAGraph()
...     with T.cuda.graph(g):
...         y = T.exp(x) * 2                            # recorded, not run
...     _ = x.copy_(T.ones(1024, device="cuda")); g.replay()   # y now holds exp(1) * 2

While a capture records (on a side stream of its own, as the driver requires), the device's
allocations come from a private pool that the graph keeps: the tensors made inside keep their
addresses, and a replay writes its results there again (clone what you keep). Inputs are read
from the addresses they had: copy new values into the same tensors before a replay.

What a graph cannot hold makes the capture fail with a clear error: reading device memory on
the host (.item(), .cpu(), .numpy()), synchronizing, or work queued on the default stream while
the capture runs. Index checks (integer-tensor indexing, embedding ids, cross_entropy targets)
are recorded with words of the graph's own: a bad index in any replay raises at the next
synchronization after it, as eagerly (tensor/cuda/checks.py). Run the code once before capturing
so that kernels compile and load outside the capture (as PyTorch asks for warm-up iterations).
Random draws are recorded with the generator state of the capture: a replay draws the same
numbers again (unlike PyTorch's, which re-seeds graph-safe generators per replay).
"""
from __future__ import annotations

import contextlib
import threading

from . import checks as _checks
from . import runtime as R
from . import streams as S

__all__ = ["CUDAGraph", "graph", "is_current_stream_capturing"]

_MODES = {"global": "CU_STREAM_CAPTURE_MODE_GLOBAL",
          "thread_local": "CU_STREAM_CAPTURE_MODE_THREAD_LOCAL",
          "relaxed": "CU_STREAM_CAPTURE_MODE_RELAXED"}


class _PoolBackend:
    """Stands for the CUDA backend of one device while a graph captures on this thread: the
    allocations with no allocator named come from the graph's pool; every other call is the
    backend's own."""

    def __init__(self, be, pool, thread: int):
        self._be, self._pool, self._thread = be, pool, thread
        self.__name__ = be.__name__

    def __getattr__(self, name):
        return getattr(self._be, name)

    def new_storage(self, nbytes, device, alloc=None):
        if alloc is None and threading.get_ident() == self._thread:
            alloc = self._pool
        return self._be.new_storage(nbytes, device, alloc)


class CUDAGraph:
    """A recorded sequence of one device's work (kernels, device copies and fills), replayed
    by replay() on the current stream. Capture with `tensor.cuda.graph(g)` (or
    capture_begin()/capture_end())."""

    def __init__(self):
        self._graph = self._exec = None
        self._pool = None
        self._st = self._dev = None
        self._capture = None   # while capturing: (stream, its context, saved backend)
        self._words = None     # the index checks' words (checks.GraphWords) while any are used

    def capture_begin(self, pool=None, capture_error_mode: str = "global", stream=None) -> None:
        if self._exec is not None or self._capture is not None:
            raise RuntimeError("CUDAGraph.capture_begin: this graph already holds a capture; "
                               "reset() it first")
        if capture_error_mode not in _MODES:
            raise ValueError(f"CUDAGraph.capture_begin: capture_error_mode must be one of "
                             f"{sorted(_MODES)}, got {capture_error_mode!r}")
        from ..backend import backend_for
        from ..device import device as make_device
        index = R.current_device_index()
        st = R.device_state(index)
        dev = make_device(f"cuda:{index}")
        side = stream if stream is not None else S.Stream(index)
        if side == S.default_stream(index):
            raise ValueError("CUDAGraph.capture_begin: the default stream cannot be captured; "
                             "pass another stream or none")
        side.wait_stream(S.current_stream(index))   # what was queued before comes first
        self._pool = pool if pool is not None else st.private_allocator()
        be = backend_for(dev)
        ctx = S.stream(side)
        ctx.__enter__()
        dev._be = _PoolBackend(be, self._pool, threading.get_ident())
        d = R.drv()
        words = _checks.GraphWords.get(index)
        st.make_current()
        mode = getattr(d.CUstreamCaptureMode, _MODES[capture_error_mode])
        try:
            R.check(d.cuStreamBeginCapture(side.handle, mode), "cuStreamBeginCapture")
        except BaseException:
            dev._be = be
            ctx.__exit__(None, None, None)
            raise
        _checks.record_into(words)
        st.capture_started()   # frees of device memory wait until the capture ends
        self._st, self._dev = st, dev
        self._capture = (side, ctx, be)

    def _end(self):
        """End the capture in progress and undo what capture_begin set up (the backend, the
        current stream, the held frees): cuStreamEndCapture's (error, graph)."""
        side, ctx, be = self._capture
        self._capture = None
        self._words = _checks.record_into(None)
        d = R.drv()
        self._st.make_current()
        try:
            return d.cuStreamEndCapture(side.handle)
        finally:
            self._dev._be = be
            ctx.__exit__(None, None, None)
            self._st.capture_ended()

    def capture_end(self) -> None:
        if self._capture is None:
            raise RuntimeError("CUDAGraph.capture_end: no capture in progress")
        err, g = self._end()
        d = R.drv()
        if int(err) != 0:
            where = getattr(d, "emu_capture_failure", lambda: "")()
            raise R.CudaError(
                f"CUDA graph capture failed ({R._err_name(d, err)}): an operation inside it "
                "read device memory on the host (.item(), .cpu(), .numpy(), printing a tensor), "
                "synchronized, or queued work on the default stream. "
                "Keep those outside the captured region."
                + (f"\nThe emulator saw it here:\n{where}" if where else ""))
        self._graph = g
        self._exec = R.check(d.cuGraphInstantiate(g, 0), "cuGraphInstantiate")
        if not self._words.checks:   # no index check recorded: no words to read
            self._words.release()
            self._words = None

    def _abort(self) -> None:
        """End a capture an exception interrupted, keeping nothing of it."""
        err, g = self._end()
        self._words.release()   # (never launched: its words are unwritten)
        self._words = None
        if int(err) == 0 and g is not None:
            R.drv().cuGraphDestroy(g)

    def replay(self) -> None:
        """Launch the recorded work on the current stream (asynchronous, like a kernel)."""
        if self._exec is None:
            raise RuntimeError("CUDAGraph.replay: nothing captured (capture it with "
                               "tensor.cuda.graph(g) first)")
        d = R.drv()
        self._st.make_current()
        stream = S.current_stream(self._st.index).handle
        R.check(d.cuGraphLaunch(self._exec, stream), "cuGraphLaunch")
        if self._words is not None:   # its index checks wait for the stream's synchronization
            self._words.launched(stream)

    def reset(self) -> None:
        """Drop the recorded graph (its pool goes when the tensors made in it are gone)."""
        if self._capture is not None:
            self._abort()
        ex, g = self._exec, self._graph
        self._graph = self._exec = None
        self._pool = self._words = None
        if ex is None and g is None:
            return

        def destroy():
            d = R.drv()
            if ex is not None:
                d.cuGraphExecDestroy(ex)
            if g is not None:
                d.cuGraphDestroy(g)
        if not self._st.defer(destroy):   # (another capture runs: after it)
            destroy()

    def pool(self):
        """This graph's memory pool: pass it as graph(..., pool=) to let another capture
        allocate from the same memory (captures replayed in the order they were made)."""
        return self._pool

    def __del__(self):
        try:
            if self._capture is None:
                self.reset()
        except Exception:  # noqa: BLE001 - interpreter shutdown: the driver may be gone
            pass


@contextlib.contextmanager
def graph(cuda_graph: CUDAGraph, pool=None, stream=None, capture_error_mode: str = "global"):
    """Record the work of the block into cuda_graph instead of running it (see the module's
    doc). pool: another graph's pool() to share; stream: the side stream to capture on."""
    cuda_graph.capture_begin(pool=pool, capture_error_mode=capture_error_mode, stream=stream)
    try:
        yield cuda_graph
    except BaseException:
        cuda_graph._abort()
        raise
    cuda_graph.capture_end()


def is_current_stream_capturing() -> bool:
    """Whether the current stream is recording a graph."""
    if not R.device_count():
        return False
    index = R.current_device_index()
    st = R.device_state(index)
    d = R.drv()
    st.make_current()
    status = R.check(d.cuStreamIsCapturing(S.current_stream(index).handle), "cuStreamIsCapturing")
    return int(status) != 0
