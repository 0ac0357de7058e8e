"""Shared memory for CPU tensors, as PyTorch's ``x.share_memory_()`` / ``x.is_shared()``: the
storage moves (in place: the same tensor and all its views see the new memory, values kept)
into a shared mapping, so a ``fork()``ed child's writes reach the parent (Hogwild training).

The memory is an anonymous file (``memfd_create``; ``shm_open`` + unlink elsewhere) mapped
``MAP_SHARED``; the storage keeps its descriptor. Pickled through multiprocessing (a ``Queue``,
a spawn / forkserver ``Process``'s arguments: its ``ForkingPickler``), a shared tensor travels as
that descriptor (multiprocessing passes it over a Unix socket, as PyTorch's file_descriptor
strategy does) and the receiver maps the same memory; tensors of one storage arrive as views of
one storage. Nothing is named in /dev/shm, so nothing is left behind when a process dies: the
memory goes with the last mapping and descriptor. Plain ``pickle`` still copies values.

Limits (PyTorch's too): each shared storage holds one open file descriptor (a process sharing
thousands of tensors may need a higher ``ulimit -n``); a NumPy array or DLPack capsule taken
from the tensor *before* share_memory_() keeps pointing at the old memory, which goes back to
the allocator. CUDA tensors: share_memory_() is a no-op and is_shared() is True.

>>> import tensor as T
>>> x = T.zeros(4); v = x[1:]
>>> _ = x.share_memory_()
>>> x.is_shared(), v.is_shared(), x.share_memory_() is x
(True, True, True)
"""
from __future__ import annotations

import ctypes
import mmap
import os
import weakref

from . import _hook
from . import dtypes as dt
from ._tensor import Storage, Tensor
from .device import CPU

__all__ = ["SharedMemory", "share_memory_", "is_shared"]

_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FAILED = ctypes.c_void_p(-1).value


def _libc():
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mmap.restype = ctypes.c_void_p
    lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                         ctypes.c_long]
    lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return lib


_LIBC = None


def _new_fd(size: int) -> int:
    """A descriptor of `size` bytes of anonymous shared memory (zeros)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("stridex-shared", os.MFD_CLOEXEC)
    else:   # POSIX shared memory, unlinked at once: only descriptors reach it
        import _posixshmem
        import secrets
        name = f"/stridex-{os.getpid()}-{secrets.token_hex(8)}"
        fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
        _posixshmem.shm_unlink(name)
    try:
        os.ftruncate(fd, size)
    except OSError:
        os.close(fd)
        raise
    return fd


class SharedMemory:
    """One shared mapping: descriptor `fd`, `size` bytes mapped MAP_SHARED at `ptr`; close()
    unmaps it and closes the descriptor (a Storage's release)."""

    __slots__ = ("fd", "ptr", "size", "key", "__weakref__")

    def __init__(self, nbytes: int, fd: int | None = None) -> None:
        global _LIBC
        if _LIBC is None:
            _LIBC = _libc()
        self.size = size = max(int(nbytes), 1)   # (a mapping cannot be empty)
        self.fd = fd = _new_fd(size) if fd is None else fd
        ptr = _LIBC.mmap(None, size, _PROT_RW, mmap.MAP_SHARED, fd, 0)
        if ptr is None or ptr == _MAP_FAILED:
            err = ctypes.get_errno()
            os.close(fd)
            self.fd = -1
            raise MemoryError(f"share_memory_: mapping {size} bytes of shared memory failed: "
                              f"{os.strerror(err)}")
        self.ptr = int(ptr)
        st = os.fstat(fd)
        self.key = (st.st_dev, st.st_ino)

    def close(self) -> None:
        if self.fd >= 0:
            _LIBC.munmap(self.ptr, self.size)
            os.close(self.fd)
            self.fd = -1

    def __repr__(self) -> str:
        return f"SharedMemory(fd={self.fd}, ptr={self.ptr:#x}, size={self.size})"


# the shared storages of this process by file identity: a storage received twice (two views)
# is mapped once, and a process's own shared storage comes back as itself
_STORAGES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _shared(st: Storage) -> SharedMemory | None:
    o = st.owner
    return o if isinstance(o, SharedMemory) else None


def is_shared(x: Tensor) -> bool:
    """Whether x's memory is shared between processes (CUDA memory counts as shared)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"is_shared: expected a Tensor, got {type(x).__name__}")
    return x.is_cuda or _shared(x._storage) is not None


def share_memory_(x: Tensor) -> Tensor:
    """Move x's storage into shared memory in place (values kept; x and every view of its
    storage see the new memory); a no-op when it is shared already and for CUDA tensors.
    Returns x."""
    if not isinstance(x, Tensor):
        raise TypeError(f"share_memory_: expected a Tensor, got {type(x).__name__}")
    st = x._storage
    if x.is_cuda or _shared(st) is not None:
        return x
    if _hook.capture is not None:
        raise RuntimeError("share_memory_: cannot move a tensor's memory while a step is being "
                           "captured (its recorded calls use the current addresses); call it before")
    shm = SharedMemory(st.nbytes)
    if st.nbytes:
        ctypes.memmove(shm.ptr, st.ptr, st.nbytes)
    block, alloc, release = st._block, st._alloc, st.release
    st._block = st._alloc = None   # (first: nothing may free the old block twice)
    st.ptr, st.owner, st.release = shm.ptr, shm, shm.close
    _STORAGES[shm.key] = st
    _register()
    if block is not None:
        alloc.free(block)
    elif release is not None:
        release()
    return x


# ---------------------------------------------------------------- multiprocessing

_REGISTERED = False


def _register() -> None:
    """Teach multiprocessing's pickler to send shared tensors as their memory (once)."""
    global _REGISTERED
    if not _REGISTERED:
        from multiprocessing.reduction import ForkingPickler
        ForkingPickler.register(Tensor, _reduce)
        _REGISTERED = True


def _reduce(t: Tensor):
    """A tensor pickled by multiprocessing: a shared one as its descriptor and layout (a detached
    view, requires_grad kept for a leaf), any other by value (Tensor.__reduce__)."""
    shm = _shared(t._storage)
    if shm is None:
        return t.__reduce__()
    from multiprocessing.reduction import DupFd
    return (_rebuild, (DupFd(shm.fd), shm.size, t._storage.nbytes, t.dtype.name, t.shape,
                       t._strides, t._offset, bool(t.requires_grad and t.is_leaf)))


def _rebuild(fd_handle, size: int, nbytes: int, dtype: str, shape: tuple, strides: tuple,
             offset: int, requires_grad: bool) -> Tensor:
    fd = fd_handle.detach()
    st_ = os.fstat(fd)
    st = _STORAGES.get((st_.st_dev, st_.st_ino))
    if st is None:
        shm = SharedMemory(size, fd)
        st = Storage(shm.ptr, nbytes, CPU, owner=shm, release=shm.close)
        _STORAGES[shm.key] = st
    else:
        os.close(fd)
    _register()   # (this process may send it on)
    t = Tensor._make(st, tuple(shape), tuple(strides), offset, dt.dtype(dtype))
    return t.requires_grad_() if requires_grad else t
