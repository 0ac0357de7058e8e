"""Process groups: the world group made by init_process_group, sub-groups by new_group, and
the rank and size queries. A group holds one backend (the MPI communicator and its worker, or
an NCCL communicator) and its members' global ranks."""
from __future__ import annotations

import datetime
import os

from ._rank import export
from ._work import DistributedError

DEFAULT_TIMEOUT = 1800.0


class ProcessGroup:
    """ranks: the members' global ranks (group rank i is global rank ranks[i]); backend: None
    on a process that is not a member."""

    def __init__(self, backend, ranks: list, timeout: float, local_rank: int = 0):
        self.backend, self.ranks, self.timeout = backend, list(ranks), timeout
        self.local_rank = local_rank
        self.destroyed = False

    @property
    def member(self) -> bool:
        return self.backend is not None

    def rank(self) -> int:
        return self.backend.rank if self.member else -1

    def size(self) -> int:
        return len(self.ranks)

    def group_rank(self, global_rank: int, what: str) -> int:
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise DistributedError(f"{what}: rank {global_rank} is not in the group "
                                   f"{self.ranks}") from None

    def __repr__(self):
        name = (self.backend.name if self.member else "destroyed" if self.destroyed
                else "not a member")
        return f"ProcessGroup({name}, ranks={self.ranks})"


_WORLD: list = [None]
_GROUPS: list = []


def _seconds(timeout) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _auto_backend() -> str:
    from ..device import get_default_device
    if get_default_device().type == "cuda":
        try:
            import nccl  # noqa: F401  (nccl4py)
            return "nccl"
        except ImportError:
            pass
    return "mpi"


def _check_launcher(size: int, MPI) -> None:  # noqa: N803 - mpi4py's module name
    """Refuse a world that the launcher did not make: mpiexec of one MPI (the mpich wheel's)
    over an mpi4py that loaded another MPI's library makes N worlds of one rank each, which
    would each train alone without a word (seen on a GPU image with Open MPI installed)."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        want = os.environ.get(var, "")
        if want.isdigit() and int(want) != size:
            raise DistributedError(
                f"init_process_group: the launcher started {want} processes ({var}) but MPI "
                f"sees a world of {size}: mpiexec belongs to another MPI than the library "
                f"mpi4py loaded ({MPI.Get_library_version().splitlines()[0].strip()}). Point "
                "MPI4PY_LIBMPI at the launcher's libmpi (the mpich wheel's lib/libmpi.so.12), "
                "or launch with that MPI's own mpiexec")


def init_process_group(backend: str | None = None, *, timeout=None, check_calls: bool = True,
                       **unused) -> None:
    """Join the world group of every process that mpiexec started (`mpiexec -n N python
    script.py`, or `python -m tensor.distributed.run -n N script.py`). backend: "mpi" (CPU
    tensors; CUDA ones staged through the host), "nccl" (CUDA tensors; the communicator's id
    is broadcast over MPI) or None: NCCL when the default device is CUDA and nccl4py is
    installed, else MPI. timeout: seconds (or a timedelta) a blocking collective waits before
    it raises; check_calls: compare each collective's op, shape and dtype across ranks first
    (a mismatch raises on every rank instead of hanging or corrupting)."""
    if _WORLD[0] is not None:
        raise DistributedError("init_process_group: the default process group is already "
                               "initialised (destroy_process_group first)")
    from ._mpi import MPIBackend, mpi
    MPI = mpi()
    backend = backend or _auto_backend()
    t = _seconds(timeout)
    comm = MPI.COMM_WORLD.Dup()
    _check_launcher(comm.Get_size(), MPI)
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    local_rank, local_size = local.Get_rank(), local.Get_size()
    local.Free()
    if backend == "mpi":
        be = MPIBackend(comm, check_calls)
    elif backend == "nccl":
        from ._nccl import NCCLBackend
        be = NCCLBackend(comm, local_rank, check_calls)
    else:
        raise ValueError(f"init_process_group: unknown backend {backend!r} (use 'mpi', 'nccl' or "
                         "None)")
    _WORLD[0] = ProcessGroup(be, list(range(comm.Get_size())), t, local_rank)
    # torchrun's variables, for code that reads them after init (where the launcher set none)
    export({"RANK": comm.Get_rank(), "WORLD_SIZE": comm.Get_size(), "LOCAL_RANK": local_rank,
            "LOCAL_WORLD_SIZE": local_size})


def is_initialized() -> bool:
    return _WORLD[0] is not None


def is_available() -> bool:
    try:
        import mpi4py  # noqa: F401
        return True
    except ImportError:
        return False


def world(what: str = "distributed") -> ProcessGroup:
    g = _WORLD[0]
    if g is None:
        raise DistributedError(f"{what}: the default process group is not initialised: call "
                               "tensor.distributed.init_process_group() first (under mpiexec)")
    return g


def _group(group, what: str) -> ProcessGroup:
    """The group (the world for None), which must exist and not be destroyed; this process
    need not be a member."""
    g = world(what) if group is None else group
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"{what}: group must be a ProcessGroup from new_group, got "
                        f"{type(g).__name__}")
    if g.destroyed:
        raise DistributedError(f"{what}: the group {g.ranks} was destroyed "
                               "(destroy_process_group); make a new one with new_group")
    return g


def resolve(group, what: str) -> ProcessGroup:
    g = _group(group, what)
    if g.backend is None:
        raise DistributedError(f"{what}: this process (rank {get_rank()}) is not a member of "
                               f"the group {g.ranks}")
    return g


def get_rank(group=None) -> int:
    """This process's rank in the group (the world by default); -1 if not a member."""
    return _group(group, "get_rank").rank()


def get_world_size(group=None) -> int:
    """The number of ranks in the group (the world by default); -1 if this process is not a
    member (as PyTorch)."""
    g = _group(group, "get_world_size")
    return g.size() if g.member else -1


def get_backend(group=None) -> str:
    g = resolve(group, "get_backend")
    return g.backend.name


def get_local_rank() -> int:
    """This process's rank among the processes of its machine (the GPU it should use)."""
    return world("get_local_rank").local_rank


def new_group(ranks=None, timeout=None, backend=None) -> ProcessGroup:
    """A group of the given global ranks (all by default), with its own communicator. Every
    process of the world must call it, members or not, in the same order."""
    w = world("new_group")
    ranks = sorted(set(range(w.size()) if ranks is None else (int(r) for r in ranks)))
    if not ranks or ranks[0] < 0 or ranks[-1] >= w.size():
        raise ValueError(f"new_group: ranks must be in [0, {w.size()}), got {ranks}")
    sub = w.backend.submit("new_group", lambda: w.backend.split(ranks))
    sub.timeout = w.timeout
    comm = sub.result()             # None off the group
    be = w.backend.child(comm) if comm is not None else None
    g = ProcessGroup(be, ranks, _seconds(timeout) if timeout is not None else w.timeout,
                     w.local_rank)
    _GROUPS.append(g)
    return g


def destroy_process_group(group=None) -> None:
    """Release a group (the world, and every group made from it, by default)."""
    if group is not None:
        if group.backend is not None:
            group.backend.close()
            group.backend = None
        group.destroyed = True
        return
    for g in _GROUPS + [_WORLD[0]]:
        if g is not None and g.backend is not None:
            g.backend.close()
            g.backend = None
        if g is not None:
            g.destroyed = True
    _GROUPS.clear()
    _WORLD[0] = None
