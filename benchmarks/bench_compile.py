"""Cold and warm cost of a CUDA kernel's first use (NVRTC compile, disk-cache read, and on a GPU
the first launch).

    python benchmarks/bench_compile.py                 # every kernel, sm_90 (no GPU needed)
    python benchmarks/bench_compile.py --sample 60     # every 13th kernel or so: quicker
    python benchmarks/bench_compile.py --arch sm_80 -j 16

Each kernel is compiled alone (what the runtime does on first use) into a fresh cache
directory, one at a time, so the times are per kernel: median, 90th percentile, max and the
slowest ten, plus the same selection built by `tensor.cuda.precompile` on `-j` threads into
another fresh directory, and the warm cost (the disk-cache read that replaces a compile in a
new process). With a GPU (or STRIDEX_CUDA_EMULATOR=1) it also times the first float16 and
float32 add of a fresh process, cold cache and warm: import and context creation excluded,
compile + load + launch + synchronize included. Timings go here, never into tests.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_FIRST_OP = """
import time, tensor as T
x = T.ones(1 << 20, dtype="{dt}", device="cuda"); T.cuda.synchronize()
t = time.perf_counter(); y = x + x; T.cuda.synchronize()
print(time.perf_counter() - t)
"""


def _timed(jobs, arch: str) -> list[tuple[float, str]]:
    """(seconds, kernel) of each job's compile_unit, one after the other."""
    from tensor.cuda.runtime import compile_unit
    out = []
    for fam, d, name in jobs:
        t = time.perf_counter()
        compile_unit(fam, d, name, arch)
        out.append((time.perf_counter() - t, name))
    return out


def _first_op(dtype: str, cache: str) -> float:
    env = dict(os.environ, STRIDEX_CACHE_DIR=cache)
    r = subprocess.run([sys.executable, "-c", _FIRST_OP.format(dt=dtype)], env=env,
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return float(r.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--sample", type=int, default=0, help="time about this many kernels (0: all)")
    p.add_argument("-j", "--workers", type=int, default=os.cpu_count())
    a = p.parse_args()
    import tensor as T
    from tensor.cuda import nvrtc, warm
    jobs = warm.select()
    if a.sample:
        jobs = jobs[::max(1, len(jobs) // a.sample)]
    print(f"NVRTC {'.'.join(map(str, nvrtc.version()))}, arch {a.arch}, {len(jobs)} kernels, "
          f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as cold, tempfile.TemporaryDirectory() as par:
        os.environ["STRIDEX_CACHE_DIR"] = cold
        times = _timed(jobs, a.arch)
        secs = sorted(t for t, _ in times)
        print(f"cold compile per kernel: median {statistics.median(secs):.3f} s, "
              f"p90 {secs[int(0.9 * (len(secs) - 1))]:.3f} s, max {secs[-1]:.3f} s, "
              f"sum {sum(secs):.1f} s")
        print("slowest:", ", ".join(f"{n} {t:.2f}s" for t, n in sorted(times)[::-1][:10]))
        nvrtc._images.clear()   # as in a new process: only the disk cache is warm
        warm_t = sorted(t for t, _ in _timed(jobs, a.arch))
        print(f"warm (disk cache) per kernel: median {statistics.median(warm_t) * 1e3:.2f} ms, "
              f"max {warm_t[-1] * 1e3:.2f} ms")
        os.environ["STRIDEX_CACHE_DIR"] = par
        nvrtc._images.clear()
        r = T.cuda.precompile(arch=a.arch, workers=a.workers, progress=False,
                              ops=sorted({n for _, _, n in jobs}) if a.sample else None)
        print(f"precompile on {a.workers} threads: {r['kernels']} kernels in {r['seconds']:.1f} s")
    if T.cuda.is_available():
        for d in ("float16", "float32"):
            with tempfile.TemporaryDirectory() as c:
                cold_s = _first_op(d, c)
                warm_s = _first_op(d, c)
            print(f"first {d} add of a process ({T.cuda.get_device_name()}): cold cache "
                  f"{cold_s:.3f} s, warm cache {warm_s:.3f} s")
    else:
        print("first-op latency: no GPU (set STRIDEX_CUDA_EMULATOR=1 for the emulator's)")


if __name__ == "__main__":
    main()
