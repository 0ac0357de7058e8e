#!/usr/bin/env python
"""Per-call cost of small eager ops (an 8x8 float32 tensor): this library against NumPy and
PyTorch's CPU build (when importable), in one run.

    python benchmarks/bench_overhead.py [--quick] [--only SUBSTRING ...]

At this size the kernels take nanoseconds: what is timed is each library's Python (or C)
dispatch: argument checks, dtype and shape decisions, allocation, autograd's record. Each case
is timed as the best of several repetitions of a loop of calls, the libraries' repetitions
interleaved so that load from other processes hits them alike; one thread everywhere, timed by
the thread's CPU time (time.thread_time: on a loaded machine the wall clock also counts the
time the process waits for a core, which made such figures swing 2-4x run to run). The
table gives microseconds per call and time ratios ours / theirs (lower is better; 1.0 = as
fast). A case a library lacks prints '-'. The script always exits 0: the figures are
informational.
"""
import argparse
import gc
import os
import sys
import time

os.environ.setdefault("STRIDEX_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None

import nn.functional as F  # noqa: E402
import tensor as T  # noqa: E402


def _data():
    rng = np.random.default_rng(0)
    an = rng.standard_normal((8, 8)).astype(np.float32)
    bn = rng.standard_normal((8, 8)).astype(np.float32)
    d = {"np": {"a": an, "b": bn, "c": an > 0, "b1": bn[:, :1], "s": np.float32(2.5), "p": np.abs(an) + 0.5}}
    d["T"] = {k: T.asarray(v) for k, v in d["np"].items()}
    d["T"]["ag"] = T.asarray(an).requires_grad_()
    if torch is not None:
        d["torch"] = {k: torch.tensor(np.asarray(v)) for k, v in d["np"].items()}
        d["torch"]["ag"] = torch.tensor(an, requires_grad=True)
    return d


# (name, ours, NumPy's or None, PyTorch's or None): each a function of the library's data dict
CASES = [
    ("a + b", lambda d: d["a"] + d["b"], lambda d: d["a"] + d["b"], lambda d: d["a"] + d["b"]),
    ("a - b[:, :1] (broadcast)", lambda d: T.subtract(d["a"], d["b1"]),
     lambda d: np.subtract(d["a"], d["b1"]), lambda d: torch.sub(d["a"], d["b1"])),
    ("a > 0", lambda d: d["a"] > 0, lambda d: d["a"] > 0, lambda d: d["a"] > 0),
    ("exp(a)", lambda d: T.exp(d["a"]), lambda d: np.exp(d["a"]), lambda d: torch.exp(d["a"])),
    ("exp(a), a requires grad", lambda d: T.exp(d["ag"]), None, lambda d: torch.exp(d["ag"])),
    ("a.exp()", lambda d: d["a"].exp(), None, lambda d: d["a"].exp()),
    ("neg -a", lambda d: -d["a"], lambda d: -d["a"], lambda d: -d["a"]),
    ("abs(a)", lambda d: T.abs(d["a"]), lambda d: np.abs(d["a"]), lambda d: torch.abs(d["a"])),
    ("sqrt(p)", lambda d: T.sqrt(d["p"]), lambda d: np.sqrt(d["p"]), lambda d: torch.sqrt(d["p"])),
    ("tanh(a)", lambda d: T.tanh(d["a"]), lambda d: np.tanh(d["a"]), lambda d: torch.tanh(d["a"])),
    ("sigmoid(a)", lambda d: T.sigmoid(d["a"]), None, lambda d: torch.sigmoid(d["a"])),
    ("sin(a), a requires grad", lambda d: T.sin(d["ag"]), None, lambda d: torch.sin(d["ag"])),
    ("where(c, a, b)", lambda d: T.where(d["c"], d["a"], d["b"]), lambda d: np.where(d["c"], d["a"], d["b"]),
     lambda d: torch.where(d["c"], d["a"], d["b"])),
    ("where(c, 0.0, a)", lambda d: T.where(d["c"], 0.0, d["a"]), lambda d: np.where(d["c"], 0.0, d["a"]),
     lambda d: torch.where(d["c"], 0.0, d["a"])),
    ("a.sum()", lambda d: d["a"].sum(), lambda d: d["a"].sum(), lambda d: d["a"].sum()),
    ("a.sum(axis=1)", lambda d: d["a"].sum(axis=1), lambda d: d["a"].sum(axis=1),
     lambda d: d["a"].sum(dim=1)),
    ("a.mean()", lambda d: d["a"].mean(), lambda d: d["a"].mean(), lambda d: d["a"].mean()),
    ("a.mean(axis=1)", lambda d: d["a"].mean(axis=1), lambda d: d["a"].mean(axis=1),
     lambda d: d["a"].mean(dim=1)),
    ("a.max()", lambda d: d["a"].max(), lambda d: d["a"].max(), lambda d: d["a"].max()),
    ("a[1:3, 2]", lambda d: d["a"][1:3, 2], lambda d: d["a"][1:3, 2], lambda d: d["a"][1:3, 2]),
    ("a[0]", lambda d: d["a"][0], lambda d: d["a"][0], lambda d: d["a"][0]),
    ("a[..., None]", lambda d: d["a"][..., None], lambda d: d["a"][..., None], lambda d: d["a"][..., None]),
    ("a.T", lambda d: d["a"].T, lambda d: d["a"].T, lambda d: d["a"].T),
    ("a.reshape(64)", lambda d: d["a"].reshape(64), lambda d: d["a"].reshape(64),
     lambda d: d["a"].reshape(64)),
    ("a.view(4, 16)", lambda d: d["a"].view(4, 16), None, lambda d: d["a"].view(4, 16)),
    ("a.clone()", lambda d: d["a"].clone(), lambda d: d["a"].copy(), lambda d: d["a"].clone()),
    ("trace(a)", lambda d: T.trace(d["a"]), lambda d: np.trace(d["a"]), lambda d: torch.trace(d["a"])),
    ("linalg.trace(a)", lambda d: T.linalg.trace(d["a"]), lambda d: np.linalg.trace(d["a"]),
     lambda d: torch.trace(d["a"])),
    ("zeros((8, 8))", lambda d: T.zeros((8, 8), dtype="float32"), lambda d: np.zeros((8, 8), np.float32),
     lambda d: torch.zeros((8, 8))),
    ("tensor([1.0, 2.0])", lambda d: T.tensor([1.0, 2.0]), lambda d: np.array([1.0, 2.0]),
     lambda d: torch.tensor([1.0, 2.0])),
    ("s.item() (0-d)", lambda d: d["s"].item(), lambda d: d["s"].item(), lambda d: d["s"].item()),
    ("a.tolist()", lambda d: d["a"].tolist(), lambda d: d["a"].tolist(), lambda d: d["a"].tolist()),
    ("softmax(a, 1)", lambda d: T.softmax(d["a"], 1), None, lambda d: torch.softmax(d["a"], 1)),
    ("a.relu()", lambda d: d["a"].relu(), lambda d: np.maximum(d["a"], 0), lambda d: d["a"].relu()),
    ("F.relu(a)", lambda d: F.relu(d["a"]), None, lambda d: torch.nn.functional.relu(d["a"])),
]


def best_us(fns: dict, number: int, repeats: int) -> dict:
    """{library: best microseconds per call} over `repeats` loops of `number` calls, the
    libraries' loops interleaved."""
    for fn in fns.values():
        fn()   # first call: kernel compilation, caches
    best = {k: float("inf") for k in fns}
    gc.disable()
    try:
        for _ in range(repeats):
            for k, fn in fns.items():
                t0 = time.thread_time()
                for _ in range(number):
                    fn()
                best[k] = min(best[k], (time.thread_time() - t0) / number * 1e6)
    finally:
        gc.enable()
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    p.add_argument("--only", nargs="*", default=[], help="cases whose name contains one of these")
    args = p.parse_args()
    number, repeats = (200, 3) if args.quick else (2000, 7)
    data = _data()
    print(f"{'case (8x8 float32)':28s} {'ours us':>8s} {'numpy us':>9s} {'torch us':>9s} "
          f"{'ours/numpy':>10s} {'ours/torch':>10s}")
    for name, ours, theirs_np, theirs_t in CASES:
        if args.only and not any(o in name for o in args.only):
            continue
        fns = {"ours": lambda f=ours: f(data["T"])}
        if theirs_np is not None:
            fns["numpy"] = lambda f=theirs_np: f(data["np"])
        if theirs_t is not None and torch is not None:
            fns["torch"] = lambda f=theirs_t: f(data["torch"])
        b = best_us(fns, number, repeats)
        cell = {k: f"{b[k]:.2f}" if k in b else "-" for k in ("ours", "numpy", "torch")}
        ratio = {k: f"{b['ours'] / b[k]:.2f}" if k in b else "-" for k in ("numpy", "torch")}
        print(f"{name:28s} {cell['ours']:>8s} {cell['numpy']:>9s} {cell['torch']:>9s} "
              f"{ratio['numpy']:>10s} {ratio['torch']:>10s}", flush=True)


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------- softmax / log_softmax / relu
# T.softmax, T.log_softmax and x.relu() (tensor/rowops.py: one recorded op each, the fused row
# kernel) at 8x8 and 256x1024 float32, along the last dim and dim 0, against torch (same method:
# best thread CPU time, one thread; ratio ours / torch, lower is better).

def _row_cases():
    rng = np.random.default_rng(0)
    out = []
    for shape in ((8, 8), (256, 1024)):
        a = rng.standard_normal(shape).astype(np.float32)
        x, xg = T.asarray(a), T.asarray(a).requires_grad_()
        xt = torch.tensor(a) if torch is not None else None
        xtg = torch.tensor(a, requires_grad=True) if torch is not None else None
        tag = "x".join(map(str, shape))
        for dim in (-1, 0):
            out += [(f"{tag} softmax dim={dim}", lambda d=dim, x=x: T.softmax(x, d),
                     lambda d=dim, t=xt: torch.softmax(t, d)),
                    (f"{tag} log_softmax dim={dim}", lambda d=dim, x=x: T.log_softmax(x, d),
                     lambda d=dim, t=xt: torch.log_softmax(t, d)),
                    (f"{tag} softmax dim={dim} fwd+bwd", lambda d=dim, x=xg: T.softmax(x, d).sum().backward(),
                     lambda d=dim, t=xtg: torch.softmax(t, d).sum().backward())]
        out += [(f"{tag} x.relu()", lambda x=x: x.relu(), lambda t=xt: t.relu())]
    return out


def rows_main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", nargs="*", default=[])
    args, _ = p.parse_known_args()
    print(f"\n{'case (float32)':34s} {'ours us':>9s} {'torch us':>9s} {'ours/torch':>10s}")
    for name, ours, theirs in _row_cases():
        if args.only and not any(o in name for o in args.only):
            continue
        number = (200 if args.quick else 2000) if name.startswith("8x8") else (5 if args.quick else 30)
        fns = {"ours": ours} if torch is None else {"ours": ours, "torch": theirs}
        b = best_us(fns, number, 3 if args.quick else 7)
        t = f"{b['torch']:.2f}" if "torch" in b else "-"
        r = f"{b['ours'] / b['torch']:.2f}" if "torch" in b else "-"
        print(f"{name:34s} {b['ours']:9.2f} {t:>9s} {r:>10s}", flush=True)


if __name__ == "__main__":
    rows_main()
