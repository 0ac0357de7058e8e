"""Activation checkpointing: the same deep network trained with and without
autograd.checkpoint.checkpoint_sequential, comparing peak memory and time per step.

    python examples/checkpointing.py                    # depth 32, width 512, batch 256
    python examples/checkpointing.py --depth 64 --segments 8
    python examples/checkpointing.py --quick            # tiny sizes (CI smoke run)

The network is an nn.Sequential of `depth` Linear+ReLU blocks (float32) ending in a 10-way
classifier, trained with SGD (momentum) and cross-entropy on random data. Two copies start from
the same weights; one runs its forward pass as checkpoint_sequential(model, segments, x), which
keeps only the inputs of each of `segments` chunks for backward and recomputes the rest. Their
losses agree bitwise, step after step (the recomputation is exact); the checkpointed one holds
about (segments + depth / segments) blocks of activations instead of depth, for about one extra
forward pass of time.

Memory is tensor.max_memory_allocated() during a step minus what was allocated before it
(parameters, gradients, optimizer state and the batch): the activations and temporaries.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import nn  # noqa: E402
import tensor as T  # noqa: E402
from autograd.checkpoint import checkpoint_sequential  # noqa: E402
from nn import functional as F  # noqa: E402
from nn.optim import SGD  # noqa: E402

MiB = float(1 << 20)


def make_model(depth: int, width: int) -> nn.Sequential:
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def train_steps(model, x, y, steps: int, segments: int) -> dict:
    """`steps` SGD steps; segments=0 trains without checkpointing. Per step: loss, seconds,
    activation peak in bytes (first step excluded from the medians: it creates the gradients
    and the momentum buffers)."""
    opt = SGD(model.parameters(), lr=0.01, momentum=0.9)
    out = {"loss": [], "time": [], "peak": []}
    for _ in range(steps):
        opt.zero_grad(set_to_none=False)
        base = T.memory_allocated()
        T.reset_peak_memory_stats()
        t0 = time.perf_counter()
        logits = checkpoint_sequential(model, segments, x) if segments else model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        out["loss"].append(loss.item())
        out["time"].append(time.perf_counter() - t0)
        out["peak"].append(T.max_memory_allocated() - base)
        del logits, loss
    return out


def main(quick: bool = False, depth: int = 32, width: int = 512, batch: int = 256,
         steps: int = 6, segments: int | None = None) -> dict:
    """Train both copies; returns {"plain": stats, "checkpointed": stats}."""
    if quick:
        depth, width, batch, steps = 6, 32, 16, 3
    segments = segments or max(1, round(math.sqrt(depth)))
    T.manual_seed(0)
    plain = make_model(depth, width)
    ckpt = make_model(depth, width)
    ckpt.load_state_dict(plain.state_dict())
    rng = np.random.default_rng(0)
    x = T.asarray(rng.standard_normal((batch, width), dtype=np.float32))
    y = T.asarray(rng.integers(0, 10, batch))
    print(f"{depth} Linear({width}, {width})+ReLU blocks, batch {batch}, {steps} steps; "
          f"checkpoint_sequential with {segments} segments")
    res = {"plain": train_steps(plain, x, y, steps, 0),
           "checkpointed": train_steps(ckpt, x, y, steps, segments)}
    same = res["plain"]["loss"] == res["checkpointed"]["loss"]
    print(f"losses {'identical' if same else 'DIFFER'}: "
          + ", ".join(f"{v:.6f}" for v in res["plain"]["loss"]))
    print(f"{'':14}{'peak activations':>18}{'time per step':>16}")
    for name, r in res.items():
        k = slice(1, None) if len(r["time"]) > 1 else slice(None)
        r["peak_mib"] = statistics.median(r["peak"][k]) / MiB
        r["step_s"] = statistics.median(r["time"][k])
        print(f"{name:<14}{r['peak_mib']:>14.2f} MiB{r['step_s'] * 1e3:>13.1f} ms")
    p, c = res["plain"], res["checkpointed"]
    print(f"checkpointing: {c['peak_mib'] / p['peak_mib']:.2f}x the memory, "
          f"{c['step_s'] / p['step_s']:.2f}x the time")
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--segments", type=int, default=None, help="default: round(sqrt(depth))")
    a = ap.parse_args()
    main(a.quick, a.depth, a.width, a.batch, a.steps, a.segments)
