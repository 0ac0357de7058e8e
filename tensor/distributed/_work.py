"""Work handles of asynchronous collectives, and the package's error."""
from __future__ import annotations

import threading
import time

from ..capture import replayed


class DistributedError(RuntimeError):
    """A collective that cannot run or did not finish: mismatched calls across ranks, an
    uninitialised group, a timeout (a rank that died or called something else)."""


_DONE = threading.Event()
_DONE.set()


class Pending:
    """A nonblocking request the worker posted and did not wait for (MPI's Isend / Irecv: a
    point-to-point operation must not hold the worker, or an isend + irecv exchange of two
    ranks would deadlock, each worker blocked in its send). test() polls it without blocking;
    finish() (once it completed) gives the operation's result, or raises. `keep` holds the
    buffers the engine reads or writes until then."""

    def __init__(self, test, finish, keep=()):
        self._test, self._finish, self.keep = test, finish, keep

    def test(self) -> bool:
        return self._test()

    def finish(self):
        self.keep = ()
        return self._finish()

    def map(self, fn) -> Pending:
        """The same request, its result passed through fn."""
        inner = self._finish
        self._finish = lambda: fn(inner())
        return self


class Work:
    """The handle of an operation queued on a group's worker: wait() blocks until it finished
    (raising its error, or DistributedError after `timeout` seconds), then runs the `then`
    steps (copies back from staging buffers) on the calling thread."""

    def __init__(self, what: str, backend, done: bool = False):
        self.what, self._backend = what, backend
        # (an operation run on the calling thread is done when its Work is made: no Event)
        self._done = _DONE if done else threading.Event()
        self._result = self._error = None
        self._then: list = []
        self.timeout: float | None = None

    def _set_result(self, r) -> None:
        self._result = r
        self._done.set()

    def _settle(self, deadline: float | None) -> bool:
        """Finish a Pending result: poll its request until it completes (True) or, with a
        deadline (time.monotonic()), until then (False); its error becomes the Work's."""
        p = self._result
        if not isinstance(p, Pending):
            return True
        pause = 1e-5
        while True:
            try:
                if p.test():
                    self._result = p.finish()
                    return True
            except BaseException as e:  # noqa: BLE001 - raised by wait()
                self._result, self._error = None, e
                return True
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(2 * pause, 1e-3)

    def _set_error(self, e) -> None:
        self._error = e
        self._done.set()

    def then(self, fn) -> Work:
        self._then.append(fn)
        return self

    def is_completed(self) -> bool:
        if not self._done.is_set():
            return False
        return self._settle(time.monotonic() - 1.0) if isinstance(self._result, Pending) else True

    def wait(self, timeout: float | None = None) -> bool:
        t = self.timeout if timeout is None else timeout
        end = None if t is None else time.monotonic() + t
        if not self._done.wait(t) or not self._settle(end):
            why = (f"{self.what} did not finish within {t:g} s: a rank may have died, or the "
                   "ranks called different collectives")
            self._backend.mark_broken(why)
            raise DistributedError(why)
        if self._error is not None:
            raise self._error
        steps, self._then = self._then, []
        for fn in steps:
            fn()
        return True

    def result(self):
        self.wait()
        return self._result


class ReplayedWork:
    """The handle of an asynchronous operation issued inside a tensor.compile capture: every
    replay issues the operation again (an island of the program) and sets `current`; wait(),
    recorded in the same program, waits for the current one."""

    def __init__(self, what: str):
        self.what = what
        self.current: Work | None = None

    def _issued(self, work: Work) -> ReplayedWork:
        self.current = work
        return self

    def _wait(self, timeout):
        return self.current.wait(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        return replayed(self._wait, timeout)

    def is_completed(self) -> bool:
        return self.current.is_completed()

    def result(self):
        self.wait()
        return self.current._result
