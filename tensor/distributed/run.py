"""Launch a script on N processes with the mpich wheel's mpiexec and this interpreter:

    python -m tensor.distributed.run -n 2 train.py --epochs 3

is `mpiexec -n 2 <this python> train.py --epochs 3`, each process given torchrun's RANK,
WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE first (tensor.distributed._rank), with mpiexec
found beside the MPI library that MPI4PY_LIBMPI names (its prefix's bin/: a launcher of
another MPI would start N worlds of one rank), else next to the interpreter (a virtual
environment's bin/, where the mpich wheel puts it), else on PATH. Options other than -n go to
mpiexec after `--mpiexec-args` (e.g. `--mpiexec-args "-hosts a,b"`)."""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys

MISSING = ("tensor.distributed.run: {what} not found: pip install 'stridex[distributed]' "
           "(mpi4py and the mpich wheel, which brings mpiexec)")


def _find_mpiexec() -> str | None:
    lib = os.environ.get("MPI4PY_LIBMPI", "")
    for where in ([os.path.dirname(os.path.dirname(lib))] if os.path.isabs(lib) else []) + \
            [os.path.dirname(os.path.dirname(sys.executable))]:
        exe = os.path.join(where, "bin", "mpiexec")
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
    return shutil.which("mpiexec")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tensor.distributed.run",
                                description="Run a script on N MPI processes (one per GPU with "
                                            "the NCCL backend).")
    p.add_argument("-n", "--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc",
                   type=int, required=True, help="number of processes (torchrun's "
                   "--nproc-per-node is accepted too)")
    p.add_argument("--mpiexec-args", default="", help="extra arguments for mpiexec (one string)")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def command(argv: list) -> list:
    """The mpiexec command line for these arguments (raises SystemExit on a bad one)."""
    a = _parser().parse_args(argv)
    if a.nproc < 1:
        raise SystemExit(f"tensor.distributed.run: -n must be at least 1, got {a.nproc}")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise SystemExit(MISSING.format(what="mpi4py")) from None
    exe = _find_mpiexec()
    if exe is None:
        raise SystemExit(MISSING.format(what="mpiexec"))
    return [exe, "-n", str(a.nproc), *shlex.split(a.mpiexec_args), sys.executable, "-m",
            "tensor.distributed._rank", a.script, *a.args]


def main(argv: list | None = None) -> None:
    cmd = command(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
