"""Train an MLP and a small CNN on scikit-learn's 8x8 handwritten digits.

    pip install -e ".[examples]"            # scikit-learn, matplotlib, tqdm
    python examples/train_digits.py         # both models, ~97-99% test accuracy
    python examples/train_digits.py --quick --epochs 2    # one batch per epoch (CI smoke run)
    python examples/train_digits.py --amp bf16           # mixed precision (or --amp fp16)

1797 images of 8x8 pixels (values 0..16, scaled to [0, 1]), 75% for training and 25% held out
(stratified, fixed seed). Both models train with Adam, a cosine learning-rate schedule and
cross-entropy, minibatches of 32 from a shuffling DataLoader; each epoch prints a progress bar
with the running loss, then the epoch's time and the test accuracy. A PNG of the loss and
accuracy curves is saved next to this script (or to --out).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import autograd  # noqa: E402
import nn  # noqa: E402
import tensor as T  # noqa: E402
from nn import functional as F  # noqa: E402
from nn.data import DataLoader, TensorDataset  # noqa: E402
from nn.optim import Adam, CosineAnnealingLR  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# the GPU when there is one, else the CPU
DEVICE = "cuda" if getattr(getattr(T, "cuda", None), "is_available", lambda: False)() else "cpu"
SETTINGS = {"mlp": dict(lr=2e-3, epochs=30), "cnn": dict(lr=3e-3, epochs=20)}


def load_data(seed: int = 0):
    """(x_train, y_train, x_test, y_test) as NumPy arrays; images shaped (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    xtr, xte, ytr, yte = train_test_split(x, y.astype(np.int64), test_size=0.25,
                                          random_state=seed, stratify=y)
    return xtr, ytr, xte, yte


def make_mlp() -> nn.Sequential:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def make_cnn() -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
                         nn.Flatten(), nn.Linear(128, 10))


class _Bar:
    """tqdm when installed, else a plain line per epoch."""

    def __init__(self, total: int, desc: str):
        try:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=desc, leave=False, ncols=80)
        except ImportError:
            self.bar = None

    def update(self, loss: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self.bar.update()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def accuracy(model, x: T.Tensor, y: np.ndarray) -> float:
    model.eval()
    with autograd.no_grad():
        pred = np.asarray(model(x).argmax(axis=1))
    model.train()
    return float((pred == y).mean())


AMP = {"bf16": T.bfloat16, "fp16": T.float16}


def make_train_step(amp: str | None = None):
    """One step: zero_grad, forward and loss (under autocast in amp's dtype, if any), backward,
    update; returns the loss, detached. fp16 scales the loss (GradScaler: a step whose
    gradients overflowed is skipped and the scale backed off); bf16 has float32's range and
    needs no scaling."""
    scaler = T.GradScaler(DEVICE, enabled=amp == "fp16")

    def train_step(model, opt, xb, yb):
        opt.zero_grad()
        with T.autocast(DEVICE, dtype=AMP.get(amp, T.bfloat16), enabled=amp is not None):
            loss = F.cross_entropy(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss.detach()
    return train_step


train_step = make_train_step()


def train(name: str, model, data, epochs: int, lr: float, quick: bool, batch_size: int = 32,
          compile: bool = False, amp: str | None = None) -> dict:  # noqa: A002
    """Train `model`; returns per-epoch histories (loss, test accuracy, seconds). compile:
    run the step through tensor.compile (captured once per batch shape, then replayed); amp:
    "bf16" or "fp16" mixed precision (autocast, and a GradScaler for fp16)."""
    xtr, ytr, xte, yte = data
    model.to(DEVICE)
    loader = DataLoader(TensorDataset(T.asarray(xtr, device=DEVICE), T.asarray(ytr, device=DEVICE)),
                        batch_size=batch_size, shuffle=True)
    x_test = T.asarray(xte, device=DEVICE)
    opt = Adam(model.parameters(), lr=lr)
    sched = CosineAnnealingLR(opt, T_max=epochs)
    hist = {"loss": [], "acc": [], "time": []}
    step = make_train_step(amp)
    step = T.compile(step) if compile else step
    for epoch in range(1, epochs + 1):
        bar = _Bar(1 if quick else len(loader), f"{name} epoch {epoch}/{epochs}")
        t0, total, n = time.perf_counter(), 0.0, 0
        for xb, yb in loader:
            loss = step(model, opt, xb, yb)
            total, n = total + loss.item(), n + 1
            bar.update(total / n)
            if quick:
                break
        bar.close()
        sched.step()
        hist["time"].append(time.perf_counter() - t0)
        hist["loss"].append(total / n)
        hist["acc"].append(accuracy(model, x_test, yte))
        print(f"{name} epoch {epoch:2d}/{epochs}: loss {hist['loss'][-1]:.4f}  "
              f"test accuracy {hist['acc'][-1]:.2%}  {hist['time'][-1]:.2f} s")
    return hist


def plot(histories: dict, path: str) -> str | None:
    """Save loss and accuracy curves; None (with a message) when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    for name, h in histories.items():
        ep = range(1, len(h["loss"]) + 1)
        ax1.plot(ep, h["loss"], label=name)
        ax2.plot(ep, [100 * a for a in h["acc"]], label=name)
    ax1.set(xlabel="epoch", ylabel="training loss", yscale="log", title="loss")
    ax2.set(xlabel="epoch", ylabel="test accuracy (%)", title="accuracy")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot saved to {path}")
    return path


def main(epochs: int | None = None, quick: bool = False, out: str | None = None,
         seed: int = 0, compile: bool = False, amp: str | None = None) -> dict:  # noqa: A002
    """Train both models; returns {name: history} (history["acc"][-1] is the final accuracy)."""
    if amp not in (None, *AMP):
        raise ValueError(f"train_digits: amp must be one of {sorted(AMP)} or None, got {amp!r}")
    T.manual_seed(seed)
    data = load_data(seed)
    print(f"digits: {len(data[0])} training / {len(data[2])} test images, device {DEVICE}"
          + (f", mixed precision {amp}" if amp else ""))
    histories = {}
    for name, make in (("mlp", make_mlp), ("cnn", make_cnn)):
        s = SETTINGS[name]
        histories[name] = train(name, make(), data, epochs or s["epochs"], s["lr"], quick,
                                compile=compile, amp=amp)
    for name, h in histories.items():
        print(f"{name}: test accuracy {h['acc'][-1]:.2%}, "
              f"{np.median(h['time']):.2f} s per epoch (median)")
    plot(histories, out or os.path.join(HERE, "train_digits.png"))
    return histories


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=None, help="epochs per model (default: 30 MLP, 20 CNN)")
    ap.add_argument("--quick", action="store_true", help="one batch per epoch (smoke test)")
    ap.add_argument("--out", default=None, help="path of the PNG plot")
    ap.add_argument("--compile", action="store_true",
                    help="capture each training step once and replay it (tensor.compile)")
    ap.add_argument("--amp", choices=sorted(AMP), default=None,
                    help="mixed precision: autocast to bfloat16, or float16 with loss scaling")
    a = ap.parse_args()
    main(a.epochs, a.quick, a.out, compile=a.compile, amp=a.amp)
