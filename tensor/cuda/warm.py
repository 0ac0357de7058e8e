"""Build CUDA kernels ahead of their first use, in parallel.

The runtime compiles a kernel the first time it is launched (a fraction of a second each with
NVRTC, cached on disk afterwards). `precompile` builds many at once on a thread pool (NVRTC
releases the GIL) into the same memory and disk caches, so a program, a test run or a
benchmark then starts without compile pauses:

>>> import tensor as T
>>> if T.cuda.is_available():
...     _ = T.cuda.precompile(ops=["add", "mul", "sum"], dtypes=["float16", "float32"])

From a shell (e.g. to warm a GPU machine's cache, or for a GPU you will use later):
``python -m tensor.cuda.warm [--ops add,exp] [--dtypes float16] [--arch sm_90] [-j 16]``
"""
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from .. import dtypes as dt
from ..optable import OPS
from . import kernels as CK
from . import nvrtc, toolchain
from . import runtime as R

__all__ = ["precompile", "select"]


def select(ops=None, dtypes=None) -> list[tuple]:
    """The (family, dtype, kernel) triples `precompile(ops, dtypes)` builds.

    ops: family names ("ew", "red", "gemm", "index", "nn_rows", ...) or kernel names without
    their dtype suffix ("add", "exp", "sum", "cast", "softmax_fwd", "gemm"; an op's alias, "mul",
    names its op's); None: every kernel.
    dtypes: dtypes or their names; None: every dtype, and the dtype-free modules (random,
    indexing), which a dtype list leaves out unless `ops` names them."""
    want = None if dtypes is None else {dt.dtype(d) for d in dtypes}
    ops = None if ops is None else [ops] if isinstance(ops, str) else list(ops)
    canon = {a: op.name for op in OPS.values() for a in op.aliases}   # "mul" -> "multiply"
    out, used = [], set()
    for fam, d, name in CK.all_kernels():
        if ops is not None:
            hit = [o for o in ops if o == fam or name == canon.get(o, o)
                   or name.startswith(canon.get(o, o) + "_")]
            if not hit:
                continue
            used.update(hit)
        if want is not None and d not in want and not (d is None and ops is not None):
            continue
        out.append((fam, d, name))
    unknown = [o for o in ops or () if o not in used]
    if unknown:
        raise ValueError(f"precompile: no CUDA kernel matches {unknown} (families: "
                         f"{sorted({f for f, _ in CK.all_modules()})}; kernel names look like "
                         f"{CK.kernel_names('ew', dt.float32)[:3]})")
    return out


def precompile(ops=None, dtypes=None, *, arch: str | None = None, workers: int | None = None,
               progress: bool | None = None) -> dict:
    """Compile the selected kernels (see `select`) with NVRTC for `arch`, or when no arch is
    named for the current device (on the emulator: its modules, with g++), on `workers`
    threads (default: one per CPU), showing a progress bar on stderr (default: when stderr is
    a terminal). Returns {"kernels": n, "seconds": wall time}.

    Kernels already in the disk cache cost only a file read. Without a GPU, name the arch
    ("sm_90"): the images land in the disk cache for a later run on such a device."""
    jobs = select(ops, dtypes)
    tc = toolchain.current()
    if arch is not None:
        build = lambda f, d, n: CK.cubin(f, d, arch, names=[n])  # noqa: E731
    else:
        # one job per unit the toolchain loads (the emulator builds whole modules)
        jobs = list({tc.unit_key(f, d, n): (f, d, n) for f, d, n in jobs}.values())
        if tc.per_device:
            arch = R.device_state().arch
        build = lambda f, d, n: R.compile_unit(f, d, n, arch)  # noqa: E731
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    show = sys.stderr.isatty() if progress is None else progress
    bar = _Progress(len(jobs), arch or tc.name, sys.stderr) if show else None
    t0 = time.perf_counter()

    def one(job):
        nvrtc._quiet.on = True   # the progress bar says what is compiling
        build(*job)
        return job

    with ThreadPoolExecutor(workers, thread_name_prefix="precompile") as ex:
        for fut in as_completed([ex.submit(one, j) for j in jobs]):
            job = fut.result()   # a compile error propagates with its NVRTC log
            if bar is not None:
                bar.step(job[2])
    if bar is not None:
        bar.done()
    return {"kernels": len(jobs), "seconds": time.perf_counter() - t0}


class _Progress:
    """A one-line progress bar (a terminal), or a line per tenth of the work (a log file)."""

    def __init__(self, total: int, arch: str, out):
        self.total, self.arch, self.out, self.n = total, arch, out, 0
        self.t0, self.tty = time.perf_counter(), out.isatty()

    def step(self, name: str) -> None:
        self.n += 1
        n, total = self.n, self.total
        if self.tty:
            filled = 30 * n // total
            self.out.write(f"\rprecompile {self.arch}: [{'#' * filled}{'.' * (30 - filled)}] "
                           f"{n}/{total} {time.perf_counter() - self.t0:5.1f}s {name[:28]:<28}")
            self.out.flush()
        elif n == total or n * 10 // total != (n - 1) * 10 // total:
            print(f"precompile {self.arch}: {n}/{total} kernels, "
                  f"{time.perf_counter() - self.t0:.1f}s", file=self.out, flush=True)

    def done(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()


def main(argv=None) -> None:
    import argparse
    p = argparse.ArgumentParser(prog="python -m tensor.cuda.warm",
                                description="Compile CUDA kernels into the disk cache ahead of use.")
    p.add_argument("--ops", help="comma-separated families or kernel names (default: all)")
    p.add_argument("--dtypes", help="comma-separated dtype names (default: all)")
    p.add_argument("--arch", help="NVRTC target, e.g. sm_90 (default: the current GPU's)")
    p.add_argument("-j", "--workers", type=int, help="compile threads (default: one per CPU)")
    a = p.parse_args(argv)
    split = lambda s: s.split(",") if s else None  # noqa: E731
    r = precompile(split(a.ops), split(a.dtypes), arch=a.arch, workers=a.workers, progress=True)
    print(f"precompiled {r['kernels']} CUDA {toolchain.current().products} in {r['seconds']:.1f} s")


if __name__ == "__main__":
    main()
