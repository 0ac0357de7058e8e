"""Training-step benchmark: ours against PyTorch eager, same model, data and optimizer.

    python benchmarks/bench_train.py [--device cuda|cpu] [--quick | --smoke]

Cases (rows of bench_cuda.py too, which calls rows() on cuda):
  digits MLP (examples/train_digits.py's make_mlp: 64-128-128-10, Adam lr 2e-3), batch 32 and
  1024 of random 8x8 images; the digits CNN (make_cnn: two conv-relu-maxpool blocks, Adam),
  batch 32; a tiny GPT (2 layers, d_model 32, 2 heads, batch 8 x 16 tokens, vocabulary 64);
  tiny GPT (benchmarks/tiny_gpt.py: 2 layers, d_model 256, 4 heads, context 128, vocab 256,
  batch 32, AdamW).
A step is zero_grad, forward, loss, backward, optimizer step, then a device synchronize; its
time is the median over several steps after warm-up steps. Each case is timed eagerly and
captured (a second row: tensor.compile, captured at its second call and replayed after). The
torch twin gets our initial weights, so the first-step losses printed side by side must agree
(a check that both compute the same thing). torch/ours is a time ratio: > 1 means we are faster.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import tiny_gpt as G  # noqa: E402
from train_digits import SETTINGS, make_cnn, make_mlp  # noqa: E402

import tensor as T  # noqa: E402
from nn import functional as F  # noqa: E402
from nn.optim import Adam  # noqa: E402


def get_torch(device: str):
    """torch when importable and (for cuda) with a device, else None."""
    try:
        import torch
    except ImportError:
        return None
    if device == "cuda" and not torch.cuda.is_available():
        return None
    return torch


def median_step_ms(step, sync, warmup: int, reps: int) -> float:
    """Median wall time of step() + sync() in ms, after `warmup` untimed steps."""
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def device_bench_args(doc: str, argv):
    """The --device / --smoke arguments of a benchmark against NumPy (CPU) or PyTorch (CUDA):
    (args, torch or None where it has no GPU, our device's synchronize)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script runs")
    a = ap.parse_args(argv)
    torch = None
    if a.device == "cuda":
        try:
            import torch
            torch = torch if torch.cuda.is_available() else None
        except ImportError:
            pass
    import tensor as T
    return a, torch, (T.cuda.synchronize if a.device == "cuda" else (lambda: None))


def _train_step(model, opt, loss_fn, x, y):
    """A closure doing one training step; returns the loss tensor (not read: no host sync)."""
    def step():
        opt.zero_grad()
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        return loss
    return step


def _our_sync(device: str):
    return T.cuda.synchronize if device == "cuda" else (lambda: None)


def _torch_sync(torch, device: str):
    return torch.cuda.synchronize if device == "cuda" else (lambda: None)


def _compare(name, ours, theirs, torch, device, warmup, reps):
    """Time the step eagerly, captured (tensor.compile: captured on its second call, replayed
    after) and torch's; rows (name, ours ms, first losses / eager over captured, torch/ours, '')."""
    step, loss0 = ours
    first = f"first loss {loss0:.4f}"
    ms = median_step_ms(step, _our_sync(device), warmup, reps)
    captured = T.compile(lambda: step().detach())
    cms = median_step_ms(captured, _our_sync(device), max(warmup, 2), reps)
    st = captured.stats()
    ratio = cratio = ""
    if theirs is not None:
        tstep, tloss0 = theirs
        first += f" (torch {tloss0:.4f})"
        tms = median_step_ms(tstep, _torch_sync(torch, device), warmup, reps)
        ratio, cratio = f"{tms / ms:.2f}", f"{tms / cms:.2f}"
    return [(name, ms, first, ratio, ""),
            (f"{name} captured", cms, f"eager/captured {ms / cms:.2f}, launches "
             f"{st['launches']}->{st['replay_launches']}"
             + (f" in {st['cuda_graphs']} graphs" if st.get("cuda_graphs") else ""), cratio, "")]


def _torch_mlp(torch):
    tnn = torch.nn
    return tnn.Sequential(tnn.Flatten(), tnn.Linear(64, 128), tnn.ReLU(), tnn.Linear(128, 128),
                          tnn.ReLU(), tnn.Linear(128, 10))


def _torch_cnn(torch):
    tnn = torch.nn
    return tnn.Sequential(tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Flatten(), tnn.Linear(128, 10))


def _mlp_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def mlp_row(batch: int, device: str, torch, warmup: int, reps: int, cnn: bool = False):
    """The digits MLP (or CNN), one training step on a random batch of (batch, 1, 8, 8) images."""
    T.manual_seed(0)
    rng = np.random.default_rng(0)
    xs = rng.random((batch, 1, 8, 8), dtype=np.float32)
    ys = rng.integers(0, 10, batch)
    name = "cnn" if cnn else "mlp"
    model = (make_cnn if cnn else make_mlp)().to(device)
    x, y = T.asarray(xs, device=device), T.asarray(ys, device=device)
    lr = SETTINGS[name]["lr"]
    ours = (_train_step(model, Adam(model.parameters(), lr=lr), _mlp_loss, x, y),
            _mlp_loss(model, x, y).item())
    theirs = None
    if torch is not None:
        tmodel = (_torch_cnn if cnn else _torch_mlp)(torch).to(device)
        G.copy_weights(model, tmodel)
        tx, ty = torch.from_numpy(xs).to(device), torch.from_numpy(ys).to(device)
        tloss = lambda m, a, b: torch.nn.functional.cross_entropy(m(a), b)  # noqa: E731
        theirs = (_train_step(tmodel, torch.optim.Adam(tmodel.parameters(), lr=lr), tloss, tx, ty),
                  tloss(tmodel, tx, ty).item())
    return _compare(f"train step digits {name.upper()} b{batch}", ours, theirs, torch, device,
                    warmup, reps)


def gpt_row(cfg: G.GPTConfig, device: str, torch, warmup: int, reps: int):
    """The tiny GPT, one training step (AdamW) on a random batch of token sequences."""
    T.manual_seed(0)
    model = G.TinyGPT(cfg, device)
    idx, tgt = G.random_batch(cfg, device)
    ours = (_train_step(model, G.optimizer(model), G.loss, idx, tgt), G.loss(model, idx, tgt).item())
    theirs = None
    if torch is not None:
        tmodel = G.torch_gpt(cfg, device)
        G.copy_weights(model, tmodel)
        tidx, ttgt = G.torch_batch(idx, tgt, device)
        theirs = (_train_step(tmodel, G.torch_optimizer(tmodel), G.torch_loss, tidx, ttgt),
                  G.torch_loss(tmodel, tidx, ttgt).item())
    name = f"train step GPT L{cfg.n_layers} d{cfg.d_model} b{cfg.batch}x{cfg.context}"
    return _compare(name, ours, theirs, torch, device, warmup, reps)


def rows(device: str, torch, smoke: bool = False, quick: bool = False) -> list[tuple]:
    """Rows (name, ours ms, measure, torch/ours, '') for the training-step cases."""
    warmup, reps = (1, 2) if smoke else (3, 5) if quick else (5, 20)
    batches = (4, 16) if smoke else (32, 1024)
    cfg = G.SMOKE if smoke else G.GPTConfig()
    out = [r for b in batches for r in mlp_row(b, device, torch, warmup, reps)]
    out += mlp_row(batches[0], device, torch, warmup, reps, cnn=True)
    if not smoke:   # the tiny GPT: 2 layers, d 32, batch 8 x 16 tokens (overhead-bound)
        out += gpt_row(G.GPTConfig(vocab=64, context=16, d_model=32, n_heads=2, n_layers=2, batch=8),
                       device, torch, warmup, reps)
    out += gpt_row(cfg, device, torch, warmup, max(2, reps // 2))
    return out


def print_rows(rs) -> None:
    print(f"{'benchmark':36s} {'ours ms':>10s}  {'measure':38s} {'torch/ours':>10s}")
    for name, ms, meas, tr, _ in rs:
        print(f"{name:36s} {ms:10.3f}  {meas:38s} {tr:>10s}")
    print("torch/ours: time ratio (> 1: we are faster); first losses must agree (same weights)")


def main(argv=None) -> list[tuple]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda" if T.cuda.is_available() else "cpu")
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    ap.add_argument("--smoke", action="store_true", help="tiny models (tests, CUDA emulator)")
    a = ap.parse_args(argv)
    torch = get_torch(a.device)
    print(f"training steps on {a.device}; torch: {torch.__version__ if torch else '- (not importable)'}")
    rs = rows(a.device, torch, a.smoke, a.quick)
    print_rows(rs)
    return rs


if __name__ == "__main__":
    main()
