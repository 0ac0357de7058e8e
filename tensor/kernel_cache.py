"""The on-disk and in-memory cache of compiled kernels, shared by the three compilers: the C
compiler of the CPU kernels (tensor/cpu/build.py), NVRTC (tensor/cuda/nvrtc.py) and the CUDA
emulator's g++ (tensor/cuda/emulator/__init__.py).

The rules (DESIGN.md, decision 3), in one place:

- one per-user directory, mode 0700 (``STRIDEX_CACHE_DIR`` overrides it);
- a product's key is the hash of everything it depends on: the source, the text of every
  project header it includes (transitively), the options, the compiler's version and the
  target (`key`, `included_text`);
- files are written atomically (temporary file + ``os.replace``) with their sha256 beside
  them, and checked against it before use, so a torn or altered file is rebuilt, not loaded
  (`fetch`);
- one build per key at a time, other keys in parallel (`key_lock`; across processes an
  advisory file lock beside the product), and a built product is kept in memory for the
  process (`Memo`).

>>> from tensor import kernel_cache as kc
>>> kc.key("int f(void);", "-O3") == kc.key("int f(void);", "-O3")
True
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from .memory import CriticalLock

__all__ = ["CUDA_SRC", "cache_dir", "key", "included_text", "numbered", "write_cached",
           "read_cached", "fetch", "key_lock", "Memo", "header_defines"]

CUDA_SRC = Path(__file__).resolve().parents[1] / "cuda_src"
if not CUDA_SRC.is_dir():  # installed wheel: cuda_src ships as the data package tensor/_cuda_src
    CUDA_SRC = Path(__file__).resolve().parent / "_cuda_src"
CPU_SRC = Path(__file__).resolve().parent / "cpu" / "csrc"
# where a quoted #include is looked up, in the compilers' order (-I CPU_SRC -I CUDA_SRC)
INCLUDE_DIRS = (CPU_SRC, CUDA_SRC)


def cache_dir() -> Path:
    """The per-user cache directory (created mode 0700); STRIDEX_CACHE_DIR overrides it."""
    d = os.environ.get("STRIDEX_CACHE_DIR")
    if d:
        p = Path(d)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        p = Path(base) / "stridex"
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


def key(*parts: str) -> str:
    """The cache key of a build: a hash of every part (source, headers, options, compiler
    version, target), 24 hex digits."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


@lru_cache(maxsize=256)
def _file_text(name: str) -> str:
    for d in INCLUDE_DIRS:
        f = d / name
        if f.is_file():
            return f.read_text()
    return ""


def included_text(source: str) -> str:
    """The text of every project header a source includes, transitively (for the cache key:
    editing gemm.c must not rebuild the elementwise modules, editing a scalar/ header must
    rebuild every module that includes it)."""
    seen, todo, parts = set(), _INCLUDE.findall(source), []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = _file_text(name)
        parts.append(name + "\n" + text)
        todo.extend(_INCLUDE.findall(text))
    return "\n".join(sorted(parts))


def numbered(source: str) -> str:
    """The source with line numbers, for compile-error messages."""
    return "\n".join(f"{i + 1:5d}  {line}" for i, line in enumerate(source.splitlines()))


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_cached(path: Path, data: bytes) -> None:
    """Store a build product and its sha256 beside it, each written atomically."""
    _write_atomic(path, data)
    _write_atomic(Path(str(path) + ".sha256"), hashlib.sha256(data).hexdigest().encode())


def read_cached(path: Path) -> bytes | None:
    """A cached build product whose recorded sha256 matches, else None (missing, torn, altered)."""
    try:
        data = path.read_bytes()
        recorded = Path(str(path) + ".sha256").read_text().strip()
    except OSError:
        return None
    return data if recorded == hashlib.sha256(data).hexdigest() else None


def fetch(path: Path, build: Callable[[], bytes], must_store: bool = True) -> bytes:
    """The verified product cached at `path`, else `build()`'s, stored there. An empty file is
    a failed build: rebuilt. must_store=False: a cache that cannot be written (read-only) only
    costs recompiles; True where the product is loaded from the file (shared libraries)."""
    data = read_cached(path)
    if data:
        return data
    with _process_lock(path):   # another process building the same key: wait, then read it
        data = read_cached(path)
        if data:
            return data
        data = build()
        try:
            write_cached(path, data)
        except OSError:
            if must_store:
                raise
    return data


@contextlib.contextmanager
def _process_lock(path: Path):
    """An advisory lock on `path`.lock held while one process builds that product, so
    processes that start together (test workers, one process per GPU or rank) compile each
    kernel once instead of once each. Where the lock file cannot be made (a read-only cache)
    or there is no fcntl, builds just run unlocked, as before."""
    try:
        import fcntl
        fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    except (ImportError, OSError):
        yield
        return
    _lock_fds[fd] = threading.get_ident()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        _lock_fds.pop(fd, None)
        os.close(fd)   # closing releases the lock


# The lock files open in this process. A child forked while another thread builds holds a copy
# of that thread's descriptor, which no thread of the child would ever close: the build's lock
# would then outlive the parent's close, and the child itself wait for it forever.
_lock_fds: dict[int, int] = {}   # descriptor -> the thread that holds it


def _close_inherited_lock_fds() -> None:
    me = threading.get_ident()
    for fd, owner in list(_lock_fds.items()):
        if owner != me:
            del _lock_fds[fd]
            with contextlib.suppress(OSError):
                os.close(fd)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_inherited_lock_fds)


_key_locks: dict[str, CriticalLock] = {}


def key_lock(name: str) -> CriticalLock:
    """The lock that serialises builds of one cache key (the CPU's, NVRTC's, the emulator's):
    other keys build in parallel. Re-entrant, and the table needs no lock of its own
    (dict.setdefault is atomic): a finalizer or a tracer callback that runs during a build may
    ask for a kernel on the same thread without deadlocking. A CriticalLock: a tracer inside an
    allocator's locked section may wait here for a build, so the builder's own frees (a
    finalizer, a tracer) must not wait for that allocator's lock; they are queued."""
    lock = _key_locks.get(name)
    return lock if lock is not None else _key_locks.setdefault(name, CriticalLock())


V = TypeVar("V")


class Memo(dict):
    """Products already built or loaded in this process, by key; `get_or_make` builds a
    missing one once (under its key lock), while other keys build in parallel."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def get_or_make(self, k: str, make: Callable[[], V]) -> V:
        v = self.get(k)
        if v is not None:
            return v
        with key_lock(f"{self.kind}:{k}"):
            v = self.get(k)
            if v is None:
                v = self[k] = make()
            return v


_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*(?:/\*.*)?$",
                     re.M)


def header_defines(path: str | os.PathLike) -> dict[str, int]:
    """The integer constants a header defines (`#define NAME 123` / `0x7f`), by name: Python
    reads the kernels' constants instead of keeping a copy (e.g. the optimizer flags of
    cuda_src/scalar/optim_step.h). A relative path is looked up in cuda_src/.

    >>> header_defines("scalar/optim_step.h")["SX_OPT_MAXIMIZE"]
    1
    """
    p = Path(path)
    if not p.is_absolute():
        p = CUDA_SRC / p
    return {m[1]: int(m[2], 0) for m in _DEFINE.finditer(p.read_text())}
