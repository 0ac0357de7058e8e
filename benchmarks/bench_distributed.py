"""All-reduce time and bandwidth vs message size: tensor.distributed.all_reduce on our CPU tensors
(MPI backend) against raw mpi4py `Allreduce(IN_PLACE, ndarray)` on NumPy arrays, in one run.

    python benchmarks/bench_distributed.py [-n 2] [--smoke]

Launches itself with mpiexec (python -m tensor.distributed.run) when not already under MPI;
`mpiexec -n 2 python benchmarks/bench_distributed.py` works too. float32 messages of 4 KiB ..
64 MiB; both sides run the same number of calls, interleaved one by one (so drift hits both),
and the per-call time is the median. Columns: time per call (ms) for raw mpi4py and
for ours, ours/raw (a time ratio: lower is better; target <= 1.10 at 4 MiB and above) and the
bus bandwidth 2 (n-1)/n * bytes / time (GB/s, NCCL's convention) of each; unchecked/raw: ours
without the signature check that precedes each collective (check_calls=False).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIB = 1024
SIZES = [4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 1024 * KIB, 4096 * KIB, 16384 * KIB, 65536 * KIB]
SMOKE = [4 * KIB, 64 * KIB]


def _under_mpi() -> bool:
    return any(k in os.environ for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK",
                                         "MPI_LOCALRANKID"))


def _calls(nbytes: int, smoke: bool) -> int:
    """Timed calls of each side: about 1 GiB moved by each, between 9 and 400 calls (the
    medians of fewer calls of 4 MiB moved by +-10% run to run on a 2-core machine)."""
    return 3 if smoke else max(9, min(400, (1 << 30) // nbytes))


def _time(sides: list, calls: int) -> list:
    """Per-call times of each side, the sides' calls interleaved one by one (so a slow spell of
    the machine hits both alike)."""
    out = [[] for _ in sides]
    for _ in range(calls):
        for i, fn in enumerate(sides):
            t0 = time.perf_counter()
            fn()
            out[i].append(time.perf_counter() - t0)
    return out


def run_ranks(smoke: bool) -> list:
    """Under MPI: time both sides at every size; rank 0 prints the table and returns its rows
    (name, raw ms, our ms, ratio, raw GB/s, our GB/s)."""
    from mpi4py import MPI

    import tensor as T
    import tensor.distributed as dist
    dist.init_process_group(backend="mpi")
    comm, rank, n = MPI.COMM_WORLD, dist.get_rank(), dist.get_world_size()
    # the same collective without the signature check (init_process_group(check_calls=False)),
    # on a group of its own: what the check costs
    unchecked = dist.new_group()
    unchecked.backend.check_signatures = False
    rows = []
    for nbytes in (SMOKE if smoke else SIZES):
        count = nbytes // 4
        a = np.full(count, rank + 1.0, np.float32)
        x = T.asarray(np.full(count, rank + 1.0, np.float32))
        raw = lambda a=a: comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)   # noqa: E731
        ours = lambda x=x: dist.all_reduce(x)                             # noqa: E731
        y = T.asarray(np.full(count, rank + 1.0, np.float32))
        bare = lambda y=y: dist.all_reduce(y, group=unchecked)            # noqa: E731
        raw(), ours(), bare()                                          # warm up every path
        comm.Barrier()
        times = np.array(_time([raw, ours, bare], _calls(nbytes, smoke)))
        # the values grow by a factor n per call: compare with raw's (same number of calls)
        if not np.array_equal(x.numpy(), a):
            raise AssertionError(f"bench_distributed: {nbytes} B: our all_reduce != mpi4py's")
        # a call's time is the slowest rank's (the collective waits for it)
        comm.Allreduce(MPI.IN_PLACE, times, op=MPI.MAX)
        r, o, u = (float(np.median(t)) for t in times)
        bus = 2 * (n - 1) / n * nbytes / 1e9
        rows.append((_size(nbytes), r * 1e3, o * 1e3, o / r, bus / r, bus / o, u / r))
    dist.destroy_process_group()
    if rank == 0:
        print(f"all_reduce float32 on {n} ranks (MPI backend): ours = tensor.distributed on our "
              f"CPU tensors, raw = mpi4py Allreduce on NumPy; ours/raw is a time ratio (lower is "
              f"better)")
        print(f"{'size':>8} {'raw ms':>9} {'ours ms':>9} {'ours/raw':>9} {'raw GB/s':>9} "
              f"{'ours GB/s':>10} {'unchecked/raw':>14}")
        for row in rows:
            # bandwidths in significant figures: a slow run's small messages would round to 0.000
            print("{:>8} {:9.4f} {:9.4f} {:9.3f} {:9.3g} {:10.3g} {:14.3f}".format(*row))
        sys.stdout.flush()
    return rows


def _size(nbytes: int) -> str:
    return f"{nbytes // (1 << 20)} MiB" if nbytes >= 1 << 20 else f"{nbytes // KIB} KiB"


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=2, help="ranks (when it launches itself)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script runs")
    a = ap.parse_args(argv)
    if _under_mpi():
        try:
            return run_ranks(a.smoke)
        except BaseException:
            import traceback

            from mpi4py import MPI
            traceback.print_exc()
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)     # the other ranks would wait in a collective forever
    from tensor.distributed.run import command
    cmd = command(["-n", str(a.n), os.path.abspath(__file__)] + (["--smoke"] if a.smoke else []))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1", STRIDEX_NUM_THREADS="1")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120 if a.smoke else 900)
    print(r.stdout, end="")
    if r.returncode != 0:
        raise RuntimeError(f"bench_distributed: mpiexec exited with {r.returncode}:\n{r.stderr}")
    rows = []
    for ln in r.stdout.splitlines():
        m = re.match(r"\s*(\d+ [KM]iB)" + r"\s+([\d.e+-]+)" * 6 + r"\s*$", ln)
        if m:
            rows.append((m[1],) + tuple(float(v) for v in m.groups()[1:]))
    return rows


if __name__ == "__main__":
    main()
