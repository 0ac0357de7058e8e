"""DistributedDataParallel step time on 1 and 2 ranks, with and without overlap, and the share of
the all-reduce time hidden behind backward (issue 17's target: >= 50%).

    python benchmarks/bench_ddp.py [--idle-ms 5] [--device cuda] [--smoke]

Launches itself with mpiexec on 1 and then 2 ranks (python -m tensor.distributed.run). The
model: 4 x Linear(1024, 1024) with ReLUs (16 MiB of float32 gradients), batch 64 per rank,
4 MiB buckets, 1 compute thread per rank; each figure is the median over steps of the slowest
rank's time. Columns: a step of the bare module (no communication), DDP with overlap (buckets
all-reduced while backward runs), DDP with overlap=False (every bucket all-reduced after
backward), the buckets' all-reduces alone, the time backward's end waited for the buckets with
overlap (what was not hidden), and hidden = 1 - waited / all-reduce alone.
--idle-ms N makes each layer's backward wait N ms without using the CPU (what a GPU kernel
costs the host): where backward keeps every core busy (2 ranks on 2 cores), MPI's
shared-memory all-reduce has no core to run on while backward runs, and nothing can be hidden.
--device cuda runs the model on the GPU with the NCCL backend (every rank on its local GPU).
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
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from bench_distributed import _under_mpi  # noqa: E402

ROW = re.compile(r"^DDP (\d+) ranks" + r"\s+([\d.]+)" * 5 + r"\s+(-|[\d.]+)\s*$")


def _model(T, nn, width: int, layers: int, idle: float, device):
    """layers x (Linear, ReLU); with idle > 0 each Linear's backward first sleeps idle s."""
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width, device=device), nn.ReLU()]
    m = nn.Sequential(*mods)
    if idle > 0:
        def wait(g):
            time.sleep(idle)
        for lin in m:
            if isinstance(lin, nn.Linear):
                lin.register_forward_hook(lambda mod, a, out: [out.register_hook(wait)] and None)
    return m


def worker(a) -> None:
    from mpi4py import MPI

    import nn
    import tensor as T
    import tensor.distributed as dist
    from nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("nccl" if a.device == "cuda" else "mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    dev = T.device(f"cuda:{dist.get_local_rank() % T.cuda.device_count()}"
                   if a.device == "cuda" else "cpu")
    width, layers, batch = (256, 4, 16) if a.smoke else (1024, 4, 64)
    steps = 3 if a.smoke else a.steps
    T.manual_seed(0)
    x = T.randn(batch, width, dtype=T.float32, device=dev)

    def sync():
        if a.device == "cuda":
            T.cuda.synchronize()

    def timed(step) -> float:
        for _ in range(2):
            step()
        ts = np.zeros(steps)
        for i in range(steps):
            MPI.COMM_WORLD.Barrier()
            t0 = time.perf_counter()
            step()
            sync()
            ts[i] = time.perf_counter() - t0
        MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, ts, op=MPI.MAX)
        return float(np.median(ts)) * 1e3

    def step_of(m):
        def step():
            for p in m.parameters():
                p.grad = None
            (m(x) ** 2).mean().backward()
        return step

    idle = a.idle_ms / 1e3
    bare = timed(step_of(_model(T, nn, width, layers, idle, dev)))
    waits: list = []

    def ddp(**kw):
        """DDP whose end-of-backward wait for the buckets (the all-reduce time not hidden) is
        timed into waits."""
        d = DDP(_model(T, nn, width, layers, idle, dev), bucket_cap_mb=4, **kw)
        wait_all = d._wait_all

        def timed_wait():
            t0 = time.perf_counter()
            wait_all()
            sync()
            waits.append(time.perf_counter() - t0)
        d._wait_all = timed_wait
        return d
    over = timed(step_of(ddp()))
    exposed = float(np.median(waits[-steps:])) * 1e3
    d = ddp(overlap=False)
    after = timed(step_of(d))

    def reduce_all():
        ws = [dist.all_reduce(b.buffer, async_op=True) for b in d._buckets]
        for w in ws:
            w.wait()
    alone = timed(reduce_all)
    # hidden: the share of the buckets' all-reduce time that backward covered (not waited for)
    hidden = "-" if n == 1 else f"{max(0.0, min(1.0, 1 - exposed / alone)) * 100:.0f}"
    if rank == 0:
        print(f"DDP {n} ranks {bare:9.2f} {over:9.2f} {after:9.2f} {alone:9.2f} {exposed:9.2f} "
              f"{hidden:>6}", flush=True)
    dist.destroy_process_group()


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--idle-ms", type=float, default=0.0,
                    help="ms each layer's backward waits without using the CPU")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--steps", type=int, default=40, help="timed steps per figure")
    ap.add_argument("--smoke", action="store_true", help="a tiny model: checks the script runs")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker or _under_mpi():
        try:
            worker(a)
        except BaseException:
            import traceback

            from mpi4py import MPI
            traceback.print_exc()
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)     # the other ranks would wait in a collective forever
        return []
    from tensor.distributed.run import command
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1", STRIDEX_NUM_THREADS="1")
    args = ["--worker", "--idle-ms", str(a.idle_ms), "--device", a.device, "--steps",
            str(a.steps)] + (["--smoke"] if a.smoke else [])
    print(f"DDP on {a.device}: 4 x Linear({256 if a.smoke else 1024}, same), batch "
          f"{16 if a.smoke else 64} a rank, 4 MiB buckets, "
          f"{a.idle_ms:g} ms idle per layer in backward; ms per step (slowest rank, median)")
    print(f"{'':>11} {'bare':>9} {'overlap':>9} {'no overl.':>9} {'allreduce':>9} {'waited':>9} "
          f"{'hidden%':>6}")
    rows = []
    for n in (1, 2):
        cmd = command(["-n", str(n), os.path.abspath(__file__)] + args)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=120 if a.smoke else 600)
        if r.returncode != 0:
            raise RuntimeError(f"bench_ddp: mpiexec -n {n} exited with {r.returncode}:\n"
                               f"{r.stdout}\n{r.stderr}")
        for ln in r.stdout.splitlines():
            m = ROW.match(ln)
            if m:
                print(ln, flush=True)
                rows.append((int(m[1]),) + tuple(float(v) for v in m.groups()[1:6])
                            + (None if m[7] == "-" else float(m[7]),))
    return rows


if __name__ == "__main__":
    main()
