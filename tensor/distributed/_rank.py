"""torchrun's environment for the processes of `python -m tensor.distributed.run`: each one
starts here (`python -m tensor.distributed._rank script.py args`), sets RANK, WORLD_SIZE,
LOCAL_RANK and LOCAL_WORLD_SIZE from what the launcher told it (MPICH's Hydra: PMI_RANK,
PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS; Open MPI: OMPI_COMM_WORLD_*), then runs the script
as `python script.py args` would, so that a script written for torchrun, which reads
os.environ["LOCAL_RANK"] before init_process_group, runs unchanged. init_process_group sets
the same variables (where unset) under a bare mpiexec."""
from __future__ import annotations

import os
import runpy
import sys

_FROM = {"RANK": ("PMI_RANK", "OMPI_COMM_WORLD_RANK"),
         "WORLD_SIZE": ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"),
         "LOCAL_RANK": ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"),
         "LOCAL_WORLD_SIZE": ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")}


def export(values: dict) -> None:
    """Set each of torchrun's variables that is not set yet (values: name -> int)."""
    for name, v in values.items():
        if v is not None:
            os.environ.setdefault(name, str(int(v)))


def from_launcher() -> dict:
    """torchrun's variables as the MPI launcher's own give them (None where it gave none)."""
    out = {}
    for name, sources in _FROM.items():
        got = next((os.environ[s] for s in sources if os.environ.get(s, "").isdigit()), None)
        out[name] = None if got is None else int(got)
    return out


def main(argv: list) -> None:
    if not argv:
        raise SystemExit("usage: python -m tensor.distributed._rank script.py [args...]")
    export(from_launcher())
    script = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))    # as `python script.py`
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
