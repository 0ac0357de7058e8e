"""A small GPT (decoder-only transformer), written once with this library's nn API and once with
torch.nn: same module tree, parameter names, shapes and hyper-parameters, so a training step of
each can be timed side by side (benchmarks/bench_train.py) and the weights copied from one to the
other to check that both compute the same loss.

    tokens (B, L) -> token Embedding + position Embedding
                  -> n_layers x [x + attn(LayerNorm(x)), x + MLP(LayerNorm(x))]   (pre-norm)
                  -> LayerNorm -> Linear head (B, L, vocab) -> cross-entropy with the next token

attn is a causal nn.MultiheadAttention (batch_first, need_weights=False), MLP is
Linear(d, 4d)-GELU-Linear(4d, d); trained with AdamW.

>>> import tensor as T
>>> cfg = GPTConfig(vocab=16, context=8, d_model=8, n_heads=2, n_layers=1, batch=2)
>>> model = TinyGPT(cfg)
>>> idx, tgt = random_batch(cfg)
>>> model(idx).shape
(2, 8, 16)
>>> loss(model, idx, tgt).shape
()
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import nn  # noqa: E402
import tensor as T  # noqa: E402
from nn import functional as F  # noqa: E402
from nn.optim import AdamW  # noqa: E402


@dataclass(frozen=True)
class GPTConfig:
    vocab: int = 256          # byte-level tokens
    context: int = 128        # sequence length L
    d_model: int = 256
    n_heads: int = 4
    n_layers: int = 2
    batch: int = 32
    lr: float = 3e-4
    weight_decay: float = 0.1


# tiny enough for the CUDA emulator (smoke tests)
SMOKE = GPTConfig(vocab=32, context=8, d_model=16, n_heads=2, n_layers=1, batch=2)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, cfg: GPTConfig, device: str = "cpu") -> None:
        super().__init__()
        d = cfg.d_model
        self.ln1 = nn.LayerNorm(d, device=device)
        self.attn = nn.MultiheadAttention(d, cfg.n_heads, batch_first=True, device=device)
        self.ln2 = nn.LayerNorm(d, device=device)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d, device=device), nn.GELU(),
                                 nn.Linear(4 * d, d, device=device))

    def forward(self, x: T.Tensor, mask: T.Tensor) -> T.Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask, is_causal=True)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """tokens (B, L) int64 -> logits (B, L, vocab)."""

    def __init__(self, cfg: GPTConfig, device: str = "cpu") -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model, device=device)
        self.pos = nn.Embedding(cfg.context, cfg.d_model, device=device)
        self.blocks = nn.ModuleList([Block(cfg, device) for _ in range(cfg.n_layers)])
        self.ln_f = nn.LayerNorm(cfg.d_model, device=device)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, device=device)
        # made once, not per step (True = may not attend: the future positions)
        ones = T.ones((cfg.context, cfg.context), dtype=T.bool_, device=device)
        self.register_buffer("mask", T.triu(ones, 1), persistent=False)
        self.register_buffer("positions", T.arange(cfg.context, device=device), persistent=False)

    def forward(self, idx: T.Tensor) -> T.Tensor:
        n = idx.shape[1]
        x = self.tok(idx) + self.pos(self.positions[:n])
        for block in self.blocks:
            x = block(x, self.mask[:n, :n])
        return self.head(self.ln_f(x))


def loss(model: TinyGPT, idx: T.Tensor, targets: T.Tensor) -> T.Tensor:
    """Mean next-token cross-entropy."""
    logits = model(idx)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def optimizer(model: TinyGPT) -> AdamW:
    return AdamW(model.parameters(), lr=model.cfg.lr, weight_decay=model.cfg.weight_decay)


def random_batch(cfg: GPTConfig, device: str = "cpu", seed: int = 0) -> tuple[T.Tensor, T.Tensor]:
    """(tokens, next tokens), each (batch, context) int64, uniform over the vocabulary."""
    seq = np.random.default_rng(seed).integers(0, cfg.vocab, (cfg.batch, cfg.context + 1))
    return T.asarray(seq[:, :-1], device=device), T.asarray(seq[:, 1:], device=device)


# ---- the same model in torch.nn -------------------------------------------------------------

def torch_gpt(cfg: GPTConfig, device: str = "cpu"):
    """TinyGPT's twin in torch.nn (same parameter names and shapes); torch is imported here."""
    import torch
    from torch import nn as tnn

    class TorchBlock(tnn.Module):
        def __init__(self):
            super().__init__()
            d = cfg.d_model
            self.ln1 = tnn.LayerNorm(d, device=device)
            self.attn = tnn.MultiheadAttention(d, cfg.n_heads, batch_first=True, device=device)
            self.ln2 = tnn.LayerNorm(d, device=device)
            self.mlp = tnn.Sequential(tnn.Linear(d, 4 * d, device=device), tnn.GELU(),
                                      tnn.Linear(4 * d, d, device=device))

        def forward(self, x, mask):
            h = self.ln1(x)
            # is_causal=True with the mask is torch's hint that it may use its causal kernels
            x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask, is_causal=True)[0]
            return x + self.mlp(self.ln2(x))

    class TorchGPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.cfg = cfg
            self.tok = tnn.Embedding(cfg.vocab, cfg.d_model, device=device)
            self.pos = tnn.Embedding(cfg.context, cfg.d_model, device=device)
            self.blocks = tnn.ModuleList([TorchBlock() for _ in range(cfg.n_layers)])
            self.ln_f = tnn.LayerNorm(cfg.d_model, device=device)
            self.head = tnn.Linear(cfg.d_model, cfg.vocab, device=device)
            ones = torch.ones(cfg.context, cfg.context, dtype=torch.bool, device=device)
            self.register_buffer("mask", torch.triu(ones, 1), persistent=False)
            self.register_buffer("positions", torch.arange(cfg.context, device=device),
                                 persistent=False)

        def forward(self, idx):
            n = idx.shape[1]
            x = self.tok(idx) + self.pos(self.positions[:n])
            for block in self.blocks:
                x = block(x, self.mask[:n, :n])
            return self.head(self.ln_f(x))

    return TorchGPT()


def torch_loss(model, idx, targets):
    """loss() for the torch twin."""
    import torch.nn.functional as tF
    logits = model(idx)
    return tF.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def torch_optimizer(model):
    import torch
    return torch.optim.AdamW(model.parameters(), lr=model.cfg.lr, weight_decay=model.cfg.weight_decay)


def copy_weights(ours: nn.Module, theirs) -> None:
    """Copy our parameters into the torch twin (same names), so both compute the same loss."""
    import torch
    own = ours.state_dict()
    target = theirs.state_dict()
    if set(own) != set(target):
        raise ValueError(f"copy_weights: parameter names differ: {sorted(set(own) ^ set(target))}")
    with torch.no_grad():
        for name, t in target.items():
            t.copy_(torch.from_numpy(np.asarray(own[name].to("cpu"))))


def torch_batch(idx: T.Tensor, tgt: T.Tensor, device: str):
    import torch
    return (torch.from_numpy(np.asarray(idx.to("cpu"))).to(device),
            torch.from_numpy(np.asarray(tgt.to("cpu"))).to(device))
