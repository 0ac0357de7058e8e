#!/usr/bin/env python
"""CPU benchmark: this library (`tensor`) against NumPy, and PyTorch's CPU build when importable.

    python benchmarks/bench_cpu.py [--quick] [--plot out.png] [--threads 1,2]

Every case runs for every library in the same process and run, at each thread count. Times are
medians of several perf_counter repetitions after a warm-up (the first call compiles our kernels),
the libraries' repetitions interleaved so that load from other processes hits them alike.
Ratios are speed ratios: numpy time / our time (GFLOP/s ours / GFLOP/s numpy), > 1 = we are faster.
NumPy's elementwise ops and reductions are single-threaded; its matmul uses OpenBLAS threads, limited
with threadpoolctl when installed, else timed in a subprocess with OPENBLAS_NUM_THREADS (and
OMP_NUM_THREADS, MKL_NUM_THREADS) set. The script always exits 0: the targets are informational.
"""
import argparse
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import torch
except ImportError:
    torch = None
try:
    from threadpoolctl import threadpool_limits
except ImportError:
    threadpool_limits = None

import tensor as T  # noqa: E402

M = 1 << 20


# ---------------------------------------------------------------- timing

def once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_times(fns, budget, min_reps=3, max_reps=50):
    """{name: median seconds} of each fn; repetitions are interleaved across fns so that load
    from other processes hits every library alike. Warm-up calls (compilation) are excluded."""
    for fn in fns.values():
        fn()  # first call: kernel compilation, allocator warm-up
    est = sum(once(fn) for fn in fns.values())
    reps = int(min(max_reps, max(min_reps, budget * len(fns) / max(est, 1e-9))))
    times = {k: [] for k in fns}
    gc.disable()
    try:
        for _ in range(reps):
            for k, fn in fns.items():
                times[k].append(once(fn))
    finally:
        gc.enable()
    return {k: statistics.median(v) for k, v in times.items()}


def batched(fn, n):
    """Run fn n times per call (time per op = measured time / n) for microsecond-scale ops."""
    def run():
        for _ in range(n):
            fn()
    return run


def np_matmul_subprocess(n, dtype, threads, budget):
    """Time NumPy's n x n matmul in a child whose BLAS thread count is set by environment."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, os.path.abspath(__file__), "--_np-matmul", f"{n},{dtype},{budget}"]
    return float(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)


def np_matmul_worker(spec):
    n, dtype, budget = spec.split(",")
    a, b = (rand((int(n),) * 2, dtype, i)() for i in (0, 1))
    print(median_times({"numpy": lambda: a @ b}, float(budget))["numpy"])


# ---------------------------------------------------------------- cases

class Case:
    """One benchmark: op(mod, *arrays) is spelled the same for numpy, tensor and torch."""

    def __init__(self, name, group, arrays, op, flops=0.0, batch=1, np_threaded=False, grad=False):
        self.name, self.group, self.arrays, self.op = name, group, arrays, op
        self.flops, self.batch, self.np_threaded = flops, batch, np_threaded
        self.grad = grad   # the first operand requires grad (ours and torch; NumPy runs without)

    @property
    def unit(self):
        return "GF/s" if self.flops else ("us" if self.batch > 1 else "ms")


def rand(shape, dtype=np.float32, seed=0):
    return lambda: np.random.default_rng(seed).random(shape, dtype=dtype)


def tcopy(m, x):
    return np.ascontiguousarray(x.T) if m is np else x.T.contiguous()


def make_cases(quick):
    ew_sizes = [4 * M] if quick else [4 * M, 16 * M]
    sq = 1024 if quick else 4096
    cases = []
    for n in ew_sizes:
        two = [rand(n, seed=0), rand(n, seed=1)]
        cases += [Case(f"add f32 {n // M}M", "ew", two, lambda m, a, b: a + b),
                  Case(f"mul f32 {n // M}M", "ew", two, lambda m, a, b: a * b),
                  Case(f"exp f32 {n // M}M", "ew", two[:1], lambda m, a: m.exp(a))]
    cases.append(Case(f"x*2.0+1.0 f32 {ew_sizes[0] // M}M", "ew", [rand(ew_sizes[0])],
                      lambda m, x: x * 2.0 + 1.0))
    cases.append(Case(f"x.T copy f32 {sq}^2", "copy", [rand((sq, sq))], tcopy))
    x = [rand((sq, sq))]
    cases += [Case(f"sum all f32 {sq}^2", "red", x, lambda m, x: x.sum()),
              Case(f"sum axis0 f32 {sq}^2", "red", x, lambda m, x: x.sum(0)),
              Case(f"sum axis1 f32 {sq}^2", "red", x, lambda m, x: x.sum(1))]
    mm = [(256, np.float32), (1024, np.float32)] + ([] if quick else
                                                  [(2048, np.float32), (1024, np.float64)])
    for n, d in mm:
        cases.append(Case(f"matmul {np.dtype(d).name[0]}{np.dtype(d).itemsize * 8} {n}", "mm",
                          [rand((n, n), d, 0), rand((n, n), d, 1)], lambda m, a, b: a @ b,
                          flops=2.0 * n ** 3, np_threaded=True))
    one = [rand(1, seed=0), rand(1, seed=1)]
    cases.append(Case("1-elem add", "tiny", one, lambda m, a, b: a + b, batch=200 if quick else 2000))
    cases.append(Case("1-elem add grad", "tiny", one, lambda m, a, b: a + b,
                      batch=200 if quick else 2000, grad=True))
    return cases


# ---------------------------------------------------------------- running

def lib_fn(case, mod, data):
    args = {np: data, T: [T.from_numpy(a) for a in data],
            torch: [torch.from_numpy(a) for a in data] if torch else None}[mod]
    if case.grad and mod is not np:
        args = [args[0].detach().clone().requires_grad_(True), *args[1:]]
    fn = lambda: case.op(mod, *args)  # noqa: E731
    return batched(fn, case.batch) if case.batch > 1 else fn


def blas_limit(threads):
    if threadpool_limits is None:
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


def run_case(case, data, threads, budget):
    """{library: seconds per op} for one case at one thread count."""
    T.set_num_threads(threads)
    libs = {"ours": T, "numpy": np}
    if torch is not None:
        torch.set_num_threads(threads)
        libs["torch"] = torch
    np_child = case.np_threaded and threadpool_limits is None
    if np_child:  # NumPy's BLAS thread count is fixed at import: time it in a child process
        del libs["numpy"]
    with blas_limit(threads):
        res = median_times({k: lib_fn(case, m, data) for k, m in libs.items()}, budget)
    if np_child:
        res["numpy"] = np_matmul_subprocess(data[0].shape[0], data[0].dtype.name, threads, budget)
    return {k: v / case.batch for k, v in res.items()}


def fmt(case, t):
    if t is None:
        return "-"
    if case.flops:
        return f"{case.flops / t / 1e9:.1f}"
    return f"{t * 1e6:.2f}" if case.batch > 1 else f"{t * 1e3:.3f}"


def print_table(cases, results, thread_list):
    head = f"{'case':<24} {'thr':>3} {'unit':>4} {'ours':>9} {'numpy':>9} {'x np':>6}"
    if torch is not None:
        head += f" {'torch':>9} {'x torch':>7}"
    print(head + "\n" + "-" * len(head))
    for c in cases:
        for t in thread_list:
            r = results[c.name, t]
            line = (f"{c.name:<24} {t:>3} {c.unit:>4} {fmt(c, r['ours']):>9} "
                    f"{fmt(c, r['numpy']):>9} {r['numpy'] / r['ours']:>6.2f}")
            if torch is not None:
                line += f" {fmt(c, r['torch']):>9} {r['torch'] / r['ours']:>7.2f}"
            print(line)


# ---------------------------------------------------------------- targets

def target_checks(cases, results, thread_list):
    """(ok, description) for each of the project's CPU targets that this run measured."""
    lo, hi = min(thread_list), max(thread_list)
    out = []

    def check(c, t, need, what):
        ratio = results[c.name, t]["numpy"] / results[c.name, t]["ours"]
        out.append((ratio >= need, f"{c.name} @{t}T: {ratio:.2f}x numpy speed ({what} >= {need})"))

    for c in cases:
        if c.group == "ew":
            check(c, lo, 1.0, "elementwise, 1 thread")
            if hi > lo:
                check(c, hi, 1.5, "elementwise, all threads")
        elif c.group == "red":
            for t in thread_list:
                check(c, t, 1.0, "reduction")
        elif c.group == "mm" and c.name == "matmul f32 1024":
            for t in thread_list:
                check(c, t, 0.5, "matmul GFLOP/s")
        elif c.group == "tiny":
            for t in thread_list:
                r = results[c.name, t]
                if not c.grad:
                    x = r["ours"] / r["numpy"]
                    out.append((x <= 10, f"{c.name} @{t}T: {r['ours'] * 1e6:.2f} us = {x:.1f}x "
                                         f"numpy's {r['numpy'] * 1e6:.2f} us (need <= 10x)"))
                if r.get("torch"):   # the eager-path targets: 1.5x torch's time, 2x with grad
                    need = 2.0 if c.grad else 1.5
                    x = r["ours"] / r["torch"]
                    out.append((x <= need, f"{c.name} @{t}T: {x:.2f}x torch's "
                                           f"{r['torch'] * 1e6:.2f} us (need <= {need}x)"))
    return out


def print_targets(checks, lo):
    print(f"\ntargets (informational; elementwise @{lo}T is the 1-thread target):")
    for ok, text in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    print(f"  {sum(ok for ok, _ in checks)}/{len(checks)} passed")


def plot(cases, results, thread_list, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"\n--plot: matplotlib is not importable; no plot written to {path}")
        return
    fig, ax = plt.subplots(figsize=(max(8, len(cases) * 0.7), 5))
    w = 0.8 / len(thread_list)
    for i, t in enumerate(thread_list):
        ratios = [results[c.name, t]["numpy"] / results[c.name, t]["ours"] for c in cases]
        ax.bar([j + i * w for j in range(len(cases))], ratios, w, label=f"{t} thread(s)")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks([j + 0.4 - w / 2 for j in range(len(cases))])
    ax.set_xticklabels([c.name for c in cases], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("speed vs NumPy (>1 = ours faster)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nplot written to {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, few reps (smoke run)")
    p.add_argument("--plot", metavar="PNG", help="save a bar chart of speed ratios vs NumPy")
    p.add_argument("--threads", help="comma-separated thread counts (default 1,<all cores>)")
    p.add_argument("--_np-matmul", dest="np_matmul", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.np_matmul:
        return np_matmul_worker(a.np_matmul)
    ncpu = os.cpu_count() or 1
    thread_list = sorted({int(s) for s in (a.threads or f"1,{ncpu}").split(",")})
    budget = 0.03 if a.quick else 0.5
    blas = "threadpoolctl" if threadpool_limits else "subprocess + OPENBLAS_NUM_THREADS"
    print(f"numpy {np.__version__} (matmul threads via {blas}); torch "
          f"{torch.__version__ if torch else 'not importable'}; {ncpu} cores; threads {thread_list}"
          f"{'; --quick' if a.quick else ''}")
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}" + ("  (machine busy: timings, above all multi-threaded ones, "
                                       "are noisy)" if load > 0.5 * ncpu else "") + "\n")
    cases, results, t0 = make_cases(a.quick), {}, time.perf_counter()
    saved = T.get_num_threads()
    try:
        for c in cases:
            data = [f() for f in c.arrays]
            for t in thread_list:
                results[c.name, t] = run_case(c, data, t, budget)
    finally:
        T.set_num_threads(saved)
    print_table(cases, results, thread_list)
    print_targets(target_checks(cases, results, thread_list), min(thread_list))
    if a.plot:
        plot(cases, results, thread_list, a.plot)
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
