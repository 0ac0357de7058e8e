"""CPU versus GPU, the classic experiment with our own kernels: for 15 elementwise, reduction and
matmul ops, the speedup of CUDA over the CPU with one thread and with every thread, as the size
grows from 2^4 to 2^26 elements (tiny tensors lose to the CPU on launch cost; the curve rises,
then plateaus when the GPU's bandwidth or FLOPs are the limit).

    python benchmarks/bench_speedup.py                          # 2^4 .. 2^26, < 5 min on 16 cores
    python benchmarks/bench_speedup.py --max-log2 20 --out-dir /tmp/sp
    python benchmarks/bench_speedup.py --smoke                  # 2^4, 2^6 (tests, CUDA emulator)

Each op runs on float32 inputs of `size` elements (uniform in [0, 1)): x + y, x * y, exp, tanh,
sigmoid, sqrt, maximum(x, y), where(x > 0.5, x, y), x.astype(float16), sum, max, argmax and
cumsum over all elements, mean over the last axis of x viewed as sqrt(size) x sqrt(size), and
matmul of two sqrt(size) x sqrt(size) matrices. A measurement calls the op once untimed (first
use compiles the kernel), once timed, then in 3 blocks of k calls filling --budget seconds, and
takes the median time per call of the blocks (calls queue on the GPU, one synchronize per
block); a call that takes longer than --budget is measured once. A measurement predicted (from
the previous size) to take longer than --max-call seconds per call is skipped, and once
--time-limit seconds have passed the remaining CPU measurements are skipped: '-' in the tables.

Prints tables of times and speedups (a time ratio: > 1 means CUDA is faster), appends them in
markdown to OUT_DIR/speedup.md and saves OUT_DIR/speedup.png (one log-log panel per op family
and baseline; needs matplotlib, else says so). OUT_DIR defaults to $OUT or the current folder.
Without a CUDA device it measures the CPU only and reports all threads over one thread.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import tensor as T  # noqa: E402

# name, family, the call on the inputs of one size, work exponent (time ~ size ** exponent)
OPS = [
    ("add", "elementwise", lambda a: lambda: a.x + a.y, 1.0),
    ("mul", "elementwise", lambda a: lambda: a.x * a.y, 1.0),
    ("exp", "elementwise", lambda a: lambda: T.exp(a.x), 1.0),
    ("tanh", "elementwise", lambda a: lambda: T.tanh(a.x), 1.0),
    ("sigmoid", "elementwise", lambda a: lambda: T.sigmoid(a.x), 1.0),
    ("sqrt", "elementwise", lambda a: lambda: T.sqrt(a.x), 1.0),
    ("maximum", "elementwise", lambda a: lambda: T.maximum(a.x, a.y), 1.0),
    ("where", "elementwise", lambda a: lambda: T.where(a.cond, a.x, a.y), 1.0),
    ("astype f16", "elementwise", lambda a: lambda: a.x.astype("float16"), 1.0),
    ("sum", "reduction", lambda a: lambda: T.sum(a.x), 1.0),
    ("max", "reduction", lambda a: lambda: T.max(a.x), 1.0),
    ("mean axis -1", "reduction", lambda a: lambda: T.mean(a.sq, axis=-1), 1.0),
    ("argmax", "reduction", lambda a: lambda: T.argmax(a.x), 1.0),
    ("cumsum", "reduction", lambda a: lambda: T.cumsum(a.x), 1.0),
    ("matmul", "matmul", lambda a: lambda: a.sq @ a.sq2, 1.5),
]
FAMILIES = ("elementwise", "reduction", "matmul")


class Inputs:
    """The operands of one size on one device: x, y flat float32, cond = x > 0.5, and sq, sq2
    x and y viewed as side x side (side = sqrt(size); sizes are even powers of two)."""

    def __init__(self, xs: np.ndarray, ys: np.ndarray, device: str) -> None:
        side = int(round(len(xs) ** 0.5))
        self.x, self.y = T.asarray(xs, device=device), T.asarray(ys, device=device)
        self.cond = self.x > 0.5
        self.sq, self.sq2 = self.x.reshape(side, side), self.y.reshape(side, side)


def per_call_s(fn, sync, budget: float) -> float:
    """Median seconds per call of fn (see the module docstring)."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    est = time.perf_counter() - t0
    if est >= budget:
        return est
    k = max(1, min(100_000, int(budget / 3 / max(est, 1e-7))))
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / k)
    return statistics.median(samples)


def configs(threads: int, cuda: bool) -> list[tuple[str, str, int]]:
    """(label, device, CPU threads) of each setting measured."""
    out = [("cpu 1 thread", "cpu", 1)]
    if threads > 1:
        out.append((f"cpu {threads} threads", "cpu", threads))
    if cuda:
        out.append(("cuda", "cuda", threads))
    return out


class Sweep:
    """Runs every (size, op, setting) within the time limits; times[op][label] is a list of
    seconds per call (None where skipped), one per size."""

    def __init__(self, sizes, settings, budget: float, max_call: float, time_limit: float) -> None:
        self.sizes, self.settings = sizes, settings
        self.budget, self.max_call = budget, max_call
        self.start = time.perf_counter()
        self.deadline = self.start + time_limit
        self.times = {op: {lab: [] for lab, _, _ in settings} for op, *_ in OPS}
        self.skipped: list[str] = []

    def _skip_reason(self, op, exponent, label, device, i) -> str | None:
        prev = self.times[op][label][i - 1] if i else None
        if i and prev is None:
            return "skipped at a smaller size"
        if prev is not None:
            predicted = prev * (self.sizes[i] / self.sizes[i - 1]) ** exponent
            if predicted > self.max_call:
                return f"predicted {predicted:.1f} s per call > --max-call {self.max_call}"
        if device == "cpu" and time.perf_counter() > self.deadline:
            return "--time-limit reached"
        return None

    def measure_size(self, i: int, inputs: dict) -> None:
        for op, _, make, exponent in OPS:
            for label, device, threads in self.settings:
                why = self._skip_reason(op, exponent, label, device, i)
                if why:
                    self.times[op][label].append(None)
                    if why != "skipped at a smaller size":
                        self.skipped.append(f"{op} {label} 2^{self.sizes[i].bit_length() - 1}: {why}")
                    continue
                T.set_num_threads(threads)
                sync = T.cuda.synchronize if device == "cuda" else (lambda: None)
                self.times[op][label].append(per_call_s(make(inputs[device]), sync, self.budget))

    def run(self) -> None:
        rng = np.random.default_rng(0)
        devices = sorted({d for _, d, _ in self.settings})
        n0 = T.get_num_threads()
        try:
            for i, size in enumerate(self.sizes):
                xs = rng.random(size, dtype=np.float32)
                ys = rng.random(size, dtype=np.float32)
                self.measure_size(i, {d: Inputs(xs, ys, d) for d in devices})
                print(f"  2^{size.bit_length() - 1} done, {time.perf_counter() - self.start:.1f} s",
                      flush=True)
        finally:
            T.set_num_threads(n0)


def _cell(v, fmt: str) -> str:
    if v is None:
        return "-"
    return format(v, ".0f" if fmt == ".1f" and v >= 1000 else fmt)


def tables(sweep: Sweep, target: str, baselines: list[str]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, column heads, rows) of each table: times per setting, then target's speedups."""
    heads = ["op"] + [f"2^{s.bit_length() - 1}" for s in sweep.sizes]
    out = []
    for label, _, _ in sweep.settings:
        rows = [[op] + [_cell(t and t * 1e6, ".1f") for t in sweep.times[op][label]] for op, *_ in OPS]
        out.append((f"{label}: microseconds per call", heads, rows))
    for base in baselines:
        rows = [[op] + [_cell(None if b is None or t is None else b / t, ".2f")
                        for b, t in zip(sweep.times[op][base], sweep.times[op][target])]
                for op, *_ in OPS]
        out.append((f"speedup of {target} over {base} (time ratio; > 1: {target} is faster)",
                    heads, rows))
    return out


def print_tables(tabs) -> None:
    for title, heads, rows in tabs:
        print(f"\n{title}")
        print(f"{heads[0]:14s}" + "".join(f"{h:>9s}" for h in heads[1:]))
        for r in rows:
            print(f"{r[0]:14s}" + "".join(f"{c:>9s}" for c in r[1:]))


def write_markdown(tabs, path: str, header: str) -> None:
    with open(path, "a") as f:
        f.write(f"\n{header}\n")
        for title, heads, rows in tabs:
            f.write(f"\n**{title}**\n\n| " + " | ".join(heads) + " |\n|"
                    + " --- |" + " ---: |" * (len(heads) - 1) + "\n")
            for r in rows:
                f.write("| " + " | ".join(r) + " |\n")
    print(f"markdown tables appended to {path}")


def plot(sweep: Sweep, target: str, baselines: list[str], path: str) -> str | None:
    """One log-log panel per (op family, baseline): target's speedup against size."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FormatStrFormatter, NullFormatter
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
        return None
    fig, axes = plt.subplots(len(FAMILIES), len(baselines), squeeze=False,
                             figsize=(6 * len(baselines), 3.6 * len(FAMILIES)))
    for row, fam in zip(axes, FAMILIES):
        for ax, base in zip(row, baselines):
            for op, f, *_ in OPS:
                if f != fam:
                    continue
                pts = [(s, b / t) for s, b, t in zip(sweep.sizes, sweep.times[op][base],
                                                     sweep.times[op][target]) if b and t]
                if pts:
                    ax.plot(*zip(*pts), "o-", ms=3, label=op)
            ax.axhline(1.0, color="k", lw=0.8, ls="--")
            ax.set(xscale="log", yscale="log", xlabel="elements", ylabel=f"speedup over {base}",
                   title=f"{fam}: {target} vs {base}")
            ax.set_xscale("log", base=2)
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))   # 0.1, 10: not 10^-1
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot saved to {path}")
    return path


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-log2", type=int, default=4)
    ap.add_argument("--max-log2", type=int, default=26, help="largest size 2^N (N even)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="'all threads' count")
    ap.add_argument("--budget", type=float, default=0.05, help="seconds of timed calls per measurement")
    ap.add_argument("--max-call", type=float, default=2.0, help="skip calls predicted slower (s)")
    ap.add_argument("--time-limit", type=float, default=200.0, help="then skip the CPU (s)")
    ap.add_argument("--out-dir", default=os.environ.get("OUT", "."), help="speedup.md, speedup.png")
    ap.add_argument("--no-cuda", action="store_true", help="measure the CPU only")
    ap.add_argument("--smoke", action="store_true", help="2^4 and 2^6, tiny budget (tests, emulator)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.min_log2, a.max_log2, a.budget = 4, 6, 0.002
    return a


def main(argv=None) -> Sweep:
    a = parse(argv)
    cuda = not a.no_cuda and T.cuda.is_available()
    settings = configs(a.threads, cuda)
    labels = [lab for lab, _, _ in settings]
    target = "cuda" if cuda else labels[-1]
    baselines = [lab for lab in labels if lab != target]
    header = (f"bench_speedup: {T.cuda.get_device_name() if cuda else 'no CUDA device'}, "
              f"{os.cpu_count()} CPU cores, settings: {', '.join(labels)}")
    print(header)
    if not cuda:
        print("cuda: not measured (" + ("--no-cuda" if a.no_cuda else T.cuda.runtime.unavailable_reason())
              + "): speedups are of the CPU's threads")
    sizes = [1 << k for k in range(a.min_log2 + (a.min_log2 & 1), a.max_log2 + 1, 2)]
    sweep = Sweep(sizes, settings, a.budget, a.max_call, a.time_limit)
    t0 = time.perf_counter()
    sweep.run()
    print(f"measured in {time.perf_counter() - t0:.0f} s")
    for s in sweep.skipped:
        print("skipped:", s)
    tabs = tables(sweep, target, baselines)
    print_tables(tabs)
    os.makedirs(a.out_dir, exist_ok=True)
    write_markdown(tabs, os.path.join(a.out_dir, "speedup.md"), header)
    if baselines:
        plot(sweep, target, baselines, os.path.join(a.out_dir, "speedup.png"))
    return sweep


if __name__ == "__main__":
    main()
