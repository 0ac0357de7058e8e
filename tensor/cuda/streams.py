"""CUDA streams and events (PyTorch's API).

Every launch and copy goes onto the current stream of its device without synchronizing; the
current stream is per thread and per device, the device's default (legacy NULL) stream unless
a `with stream:` block says otherwise. Streams made here are blocking streams: work on the
default stream waits for them and they for it, so mixing the two is always ordered.

The driver's current context is per thread: every call here first makes the stream's or
event's device context current on the calling thread (a fresh thread, a finalizer), as
launches and copies do.

>>> import tensor as T
>>> if T.cuda.is_available():
...     s = T.cuda.Stream()
...     start, end = T.cuda.Event(enable_timing=True), T.cuda.Event(enable_timing=True)
...     with s:
...         start.record(); y = T.ones(1000, device="cuda") * 2; end.record()
...     end.synchronize(); ms = start.elapsed_time(end)
"""
from __future__ import annotations

import threading

from . import checks as _checks
from . import current
from . import runtime as R


def _drv(index: int):
    """The driver, with cuda:index's context current on this thread."""
    R.device_state(index).make_current()
    return R.drv()


class Stream:
    """A queue of device work; `with stream:` makes it current for this thread."""

    def __init__(self, device=None, priority: int = 0, _handle=None):
        self.device_index = R.device_index(device)
        if _handle is None:
            d = _drv(self.device_index)
            _handle = R.check(d.cuStreamCreate(int(d.CUstream_flags.CU_STREAM_DEFAULT)),
                              "cuStreamCreate")
            self._owned = True
        else:
            self._owned = False
        self.handle = _handle
        self.id = int(_handle)
        # the streams current on entry, a stack per thread: one Stream (a device's default
        # stream, a module-level one) may be entered by several threads at once, and each must
        # get its own current stream back on exit
        self._prev: dict[int, list] = {}

    @property
    def device(self):
        from ..device import Device
        return Device("cuda", self.device_index)

    def __enter__(self) -> Stream:
        cur = _current(self.device_index)
        self._prev.setdefault(threading.get_ident(), []).append(cur)
        _set_current(self.device_index, self)
        return self

    def __exit__(self, *exc) -> None:
        me = threading.get_ident()
        stack = self._prev[me]
        prev = stack.pop()
        if not stack:
            del self._prev[me]
        _set_current(self.device_index, prev)

    def synchronize(self) -> None:
        """Wait for the stream's work; the index checks that ran on it raise here."""
        R.check(_drv(self.device_index).cuStreamSynchronize(self.handle), "cuStreamSynchronize")
        _checks.flush(self.device_index, self.handle)

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        return _ready(_drv(self.device_index).cuStreamQuery(self.handle)[0], "cuStreamQuery")

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on waits until `event` has happened."""
        h = event._handle(self.device_index)
        R.check(_drv(self.device_index).cuStreamWaitEvent(self.handle, h, 0), "cuStreamWaitEvent")

    def wait_stream(self, other: Stream) -> None:
        self.wait_event(other.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.id, self.device_index) == (other.id, other.device_index)

    def __hash__(self) -> int:
        return hash((self.id, self.device_index))

    def __repr__(self) -> str:
        return f"<tensor.cuda.Stream device=cuda:{self.device_index} handle={self.id:#x}>"

    def __del__(self):
        if getattr(self, "_owned", False):
            try:
                st = R._states.get(self.device_index)
                h, d = self.handle, _drv(self.device_index)
                if st is None or not st.defer(lambda: d.cuStreamDestroy(h)):  # (a capture runs)
                    d.cuStreamDestroy(h)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


class Event:
    """A marker in a stream: record(), wait(), synchronize(), elapsed_time(end) in ms."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False):
        self.enable_timing, self.blocking = enable_timing, blocking
        self._h = None
        self._dev: int | None = None

    def _handle(self, index: int):
        if self._h is None:
            d = _drv(index)
            fl = d.CUevent_flags
            flags = 0 if self.enable_timing else int(fl.CU_EVENT_DISABLE_TIMING)
            if self.blocking:
                flags |= int(fl.CU_EVENT_BLOCKING_SYNC)
            self._h = R.check(d.cuEventCreate(flags), "cuEventCreate")
            self._dev = index
        elif index != self._dev:
            raise ValueError(f"Event: recorded on cuda:{self._dev}, used with cuda:{index}")
        return self._h

    def record(self, stream: Stream | None = None) -> None:
        stream = stream or current_stream()
        h = self._handle(stream.device_index)
        R.check(_drv(stream.device_index).cuEventRecord(h, stream.handle), "cuEventRecord")

    def wait(self, stream: Stream | None = None) -> None:
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        if self._h is None:
            return True
        return _ready(_drv(self._dev).cuEventQuery(self._h)[0], "cuEventQuery")

    def synchronize(self) -> None:
        if self._h is not None:
            R.check(_drv(self._dev).cuEventSynchronize(self._h), "cuEventSynchronize")

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds between this event and `end` (both recorded, with enable_timing)."""
        if not (self.enable_timing and end.enable_timing):
            raise ValueError("Event.elapsed_time: both events need enable_timing=True")
        if self._h is None or end._h is None:
            raise ValueError("Event.elapsed_time: both events must be recorded first")
        d = _drv(self._dev)
        return float(R.check(d.cuEventElapsedTime(self._h, end._h), "cuEventElapsedTime"))

    def __repr__(self) -> str:
        return f"<tensor.cuda.Event timing={self.enable_timing} recorded={self._h is not None}>"

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            try:
                _drv(self._dev).cuEventDestroy(self._h)
            except Exception:  # noqa: BLE001
                pass


def _ready(err, what: str) -> bool:
    """A query's answer: True when done, False when CUDA_ERROR_NOT_READY, else CudaError."""
    if int(err) == 0:
        return True
    if err == R.drv().CUresult.CUDA_ERROR_NOT_READY:
        return False
    R.check((err,), what)
    return False


# ---------------------------------------------------------------- current stream

_DEFAULTS: dict = {}   # device index -> the Stream object of its legacy NULL stream


def _current(index: int) -> Stream:
    s = current.get(index)
    return s if s is not None else default_stream(index)


_set_current = current.set
current_stream_handle = current.handle   # the launch path's (runtime.py reads it directly)
current_stream_id = current.stream_id    # the allocator's stream key


def current_stream(device=None) -> Stream:
    return _current(R.device_index(device))


def default_stream(device=None) -> Stream:
    i = R.device_index(device)
    s = _DEFAULTS.get(i)
    if s is None:   # (two threads may race here: both wrap the same handle; one object wins)
        s = _DEFAULTS.setdefault(i, Stream(i, _handle=R.device_state(i).default_handle))
    return s


class stream:  # noqa: N801 - PyTorch's name: `with tensor.cuda.stream(s):`
    """Context manager selecting a stream (None: no change)."""

    def __init__(self, s: Stream | None):
        self.s = s

    def __enter__(self):
        if self.s is not None:
            self.s.__enter__()
        return self.s

    def __exit__(self, *exc):
        if self.s is not None:
            self.s.__exit__(*exc)


def synchronize(device=None) -> None:
    """Wait for all work on the device (all streams); every index check waiting raises here."""
    i = R.device_index(device)
    R.check(_drv(i).cuCtxSynchronize(), "cuCtxSynchronize")
    _checks.flush(i)


def free_after_streams(alloc, block, streams) -> None:
    """A block whose tensor was used on other streams (Tensor.record_stream): record an event on
    each and give the block back only once they have all passed it (checked at later
    allocations), so no stream can still be reading it when it is reused."""
    st = R.device_state(int(alloc.device.split(":")[1]))
    events = []
    for s in streams:
        e = Event()
        e.record(s)
        events.append(e)
    st.deferred.append((block, events))
