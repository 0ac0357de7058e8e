"""How a training step scales with the network's width: a 3-layer MLP on the CPU with one
thread, on the CPU with every thread, and on CUDA when tensor has a GPU backend.

    python examples/mlp_speedup.py                        # widths 64 .. 2048
    python examples/mlp_speedup.py --widths 128,1024 --out speedup.png
    python examples/mlp_speedup.py --quick                # tiny widths (CI smoke run)
    python examples/mlp_speedup.py --budget 0.5           # seconds of timed steps per point

The network is Linear(width, width)-ReLU-Linear(width, width)-ReLU-Linear(width, 10), float32,
batch 256 of random data, trained with Adam and cross-entropy. For each width and device the
script runs warm-up steps, then times steps for about a second and prints the median time per
step and the speedup over one CPU thread; a PNG with both is saved next to this script (or to
--out). Small widths are dominated by per-op overhead (Python, kernel launch) and gain little
from more threads; large ones are matmul-bound and scale with the cores.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import nn  # noqa: E402
import tensor as T  # noqa: E402
from nn import functional as F  # noqa: E402
from nn.optim import Adam  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def cuda_available() -> bool:
    return bool(getattr(getattr(T, "cuda", None), "is_available", lambda: False)())


def configs() -> list[tuple[str, str, int]]:
    """(label, device, threads) for each setting measured."""
    n = os.cpu_count() or 1
    out = [("cpu 1 thread", "cpu", 1)]
    if n > 1:
        out.append((f"cpu {n} threads", "cpu", n))
    if cuda_available():
        out.append(("cuda", "cuda", n))
    return out


def step_time(width: int, device: str, batch: int, budget: float, quick: bool) -> float:
    """Median seconds per training step of the 3-layer MLP at this width on this device."""
    T.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 10)).to(device)
    opt = Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = T.asarray(rng.standard_normal((batch, width), dtype=np.float32), device=device)
    y = T.asarray(rng.integers(0, 10, batch), device=device)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()  # waits for the device: the step is done

    for _ in range(1 if quick else 3):
        step()
    times, start = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def plot(widths, results, path: str) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    base = results[configs()[0][0]]
    for label, ts in results.items():
        ax1.plot(widths, [t * 1e3 for t in ts], "o-", label=label)
        ax2.plot(widths, [b / t for b, t in zip(base, ts)], "o-", label=label)
    ax1.set(xscale="log", yscale="log", xlabel="width", ylabel="ms per step", title="time per step")
    ax2.set(xscale="log", xlabel="width", ylabel="speedup over 1 thread", title="speedup")
    for ax in (ax1, ax2):
        ax.set_xticks(widths, [str(w) for w in widths])
        ax.set_xticks([], minor=True)   # log-axis minor labels would overprint the widths
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot saved to {path}")
    return path


def main(quick: bool = False, widths: list[int] | None = None, batch: int = 256,
         out: str | None = None, budget: float = 1.0) -> dict:
    """Time every (width, setting); returns {label: [seconds per step for each width]}."""
    if quick:
        widths, batch, budget = widths or [16, 32], 8, 0.0
    widths = widths or [64, 128, 256, 512, 1024, 2048]
    n0 = T.get_num_threads()
    results = {}
    try:
        for label, device, threads in configs():
            T.set_num_threads(threads)
            results[label] = [step_time(w, device, batch, budget, quick) for w in widths]
    finally:
        T.set_num_threads(n0)
    labels = list(results)
    print(f"3-layer MLP, batch {batch}, Adam: ms per step (speedup over {labels[0]})")
    print(f"{'width':>6}" + "".join(f"{lab:>24}" for lab in labels))
    for i, w in enumerate(widths):
        base = results[labels[0]][i]
        cells = [f"{results[lab][i] * 1e3:>13.2f} ({base / results[lab][i]:>5.2f}x)" for lab in labels]
        print(f"{w:>6}" + "".join(f"{c:>24}" for c in cells))
    if not cuda_available():
        print("cuda: not measured:", T.cuda.runtime.unavailable_reason())
    plot(widths, results, out or os.path.join(HERE, "mlp_speedup.png"))
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny widths and batch (smoke test)")
    ap.add_argument("--widths", default=None, help="comma-separated widths")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--out", default=None, help="path of the PNG plot")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timed steps per point")
    a = ap.parse_args()
    main(a.quick, [int(w) for w in a.widths.split(",")] if a.widths else None, a.batch, a.out,
         a.budget)
