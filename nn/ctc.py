"""Connectionist temporal classification loss, as torch.nn.functional.ctc_loss and
torch.nn.CTCLoss.

The loss of a target sequence is -log of the summed probability of every alignment of it to
the input's time steps (labels repeated, blanks between). It is the forward (alpha) recursion
over the extended target (blank, l1, blank, l2, ..., blank) in log space: one step per time
step on the whole batch (N, 2 S + 1), each a gather of the step's log-probabilities and a
log-sum-exp of the three predecessors. Autograd differentiates the recursion (its gradient is
the alpha-beta one); the log-sum-exp is written so that unreachable states (-inf) pass zero
gradient, never NaN.

>>> import tensor as T
>>> lp = T.log(T.full((2, 1, 2), 0.5))      # T=2, N=1, C=2: every path has probability 1/4
>>> round(ctc_loss(lp, T.tensor([[1]]), [2], [1], reduction="sum").item(), 6)   # 3 paths
0.287682
"""
from __future__ import annotations

import math

import numpy as np

import tensor as T
from autograd import no_grad
from tensor import Tensor

from . import _ctc_fused
from . import _functional as F
from .loss import _Loss


def _lse(*xs: Tensor) -> Tensor:
    """log(sum(exp(x))) over the tensors, -inf where all are -inf, with finite gradients."""
    with no_grad():
        m = xs[0]
        for x in xs[1:]:
            m = T.maximum(m, x)
        m = T.where(m == -math.inf, 0.0, m)
    s = None
    for x in xs:
        e = T.exp(x - m)
        s = e if s is None else s + e
    pos = s > 0
    return T.where(pos, T.log(T.where(pos, s, 1.0)) + m, -math.inf)


def _host_ints(v, what: str, n: int) -> np.ndarray:
    a = np.asarray(v.tolist() if isinstance(v, Tensor) else v)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1 or a.size != n or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"ctc_loss: {what} must be {n} integers (one per batch entry), got "
                         f"{a.tolist()!r}")
    return a.astype(np.int64)


def _reference_ll(log_probs: Tensor, ext, skip, valid, il, tl) -> Tensor:
    """The log-likelihoods (N,) by the alpha recursion as tensor ops, one step per time step
    (differentiable to any order: the fused kernel's fallback and its double backward)."""
    steps, n, width = log_probs.shape[0], log_probs.shape[1], ext.shape[1]
    dev = log_probs.device
    lp = T.take_along_axis(log_probs, T.asarray(np.broadcast_to(ext, (steps, n, width)),
                                                device=dev), axis=2)       # (T, N, width)
    ninf = T.full((n, 1), -math.inf, dtype=log_probs.dtype, device=dev)
    skip_t, valid_t = T.asarray(skip, device=dev), T.asarray(valid, device=dev)
    start = T.asarray(np.arange(width)[None, :] < np.minimum(2, 2 * tl + 1)[:, None], device=dev)
    running = T.asarray(il[None, :] > np.arange(steps)[:, None], device=dev)   # (T, N)
    alpha = T.where(start, lp[0], -math.inf) if steps else None
    for t in range(1, steps):
        a1 = T.concat([ninf, alpha[:, :-1]], axis=1)
        a2 = T.where(skip_t, T.concat([ninf, ninf, alpha[:, :-2]], axis=1)[:, :width], -math.inf)
        new = T.where(valid_t, _lse(alpha, a1, a2) + lp[t], -math.inf)
        alpha = T.where(T.expand_dims(running[t], 1), new, alpha)
    none = T.asarray(np.where(tl == 0, 0.0, -math.inf), dtype=log_probs.dtype, device=dev)
    if steps == 0:       # no time steps: only an empty target is possible
        ll = none
    else:                # ending on the last label or the blank after it
        last = T.asarray(np.stack([2 * tl, np.maximum(2 * tl - 1, 0)], axis=1), device=dev)
        ends = T.take_along_axis(alpha, last, axis=1)                      # (N, 2)
        on_label = T.where(T.asarray(tl > 0, device=dev), ends[:, 1], -math.inf)
        ll = T.where(T.asarray(il > 0, device=dev), _lse(ends[:, 0], on_label), none)
    return ll


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of log_probs (T, N, C) (log-softmax outputs; (T, C) unbatched) against
    targets, padded (N, S) or concatenated (sum(target_lengths),), with per-entry lengths.
    'mean' divides each loss by its target length, then averages over the batch, as PyTorch;
    zero_infinity turns impossible alignments' infinite losses (and their gradients) into 0."""
    op = "ctc_loss"
    F.check_reduction(reduction, op)
    if not isinstance(log_probs, Tensor) or log_probs.ndim not in (2, 3) or \
            log_probs.dtype.kind != "f":
        raise ValueError(f"{op}: log_probs must be a floating (T, N, C) or (T, C) tensor")
    if not isinstance(targets, Tensor) or targets.dtype.kind not in "iu":
        raise TypeError(f"{op}: targets must be an integer tensor")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = T.expand_dims(log_probs, 1)
        targets = T.expand_dims(targets, 0) if targets.ndim == 1 else targets
    steps, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise ValueError(f"{op}: blank={blank} is not a class of the {c} in log_probs")
    il = _host_ints(input_lengths, "input_lengths", n)
    tl = _host_ints(target_lengths, "target_lengths", n)
    if il.size and (il.min() < 0 or il.max() > steps):
        raise ValueError(f"{op}: input_lengths {il.tolist()} must lie in [0, {steps}] (the "
                         f"input's time steps)")
    if tl.size and tl.min() < 0:
        raise ValueError(f"{op}: target_lengths must be non-negative, got {tl.tolist()}")
    tg = np.asarray(targets.tolist(), dtype=np.int64)
    if tg.ndim == 1:             # concatenated targets
        if tg.size != tl.sum():
            raise ValueError(f"{op}: 1-D targets hold {tg.size} labels but target_lengths sum "
                             f"to {tl.sum()}")
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        rows = [tg[s:s + k] for s, k in zip(starts, tl)]
    elif tg.ndim == 2 and tg.shape[0] == n:
        if tl.size and tl.max() > tg.shape[1]:
            raise ValueError(f"{op}: a target length of {tl.max()} exceeds the padded targets' "
                             f"{tg.shape[1]} columns")
        rows = [tg[i, :k] for i, k in enumerate(tl)]
    else:
        raise ValueError(f"{op}: targets must be (N, S) or 1-D, got shape {tuple(targets.shape)}")
    labels = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    if labels.size and (labels.min() < 0 or labels.max() >= c or (labels == blank).any()):
        raise ValueError(f"{op}: target labels must lie in [0, {c}) and differ from blank="
                         f"{blank}")
    width = 2 * (int(tl.max()) if tl.size else 0) + 1
    ext = np.full((n, width), blank, np.int64)          # blank, l1, blank, l2, ..., blank
    skip = np.zeros((n, width), bool)                   # s may come from s - 2
    for i, r in enumerate(rows):
        ext[i, 1:2 * len(r):2] = r
        skip[i, 3:2 * len(r):2] = r[1:] != r[:-1]
    valid = np.arange(width)[None, :] < (2 * tl + 1)[:, None]
    dev = log_probs.device
    if _ctc_fused.usable(log_probs):
        ll = _ctc_fused.log_likelihood(log_probs, ext, il, tl, lambda x: _reference_ll(
            x, ext, skip, valid, il, tl))
    else:
        ll = _reference_ll(log_probs, ext, skip, valid, il, tl)
    loss = -ll
    if zero_infinity:
        loss = T.where(T.isinf(loss), 0.0, loss)
    if reduction == "none":
        return loss[0] if unbatched else loss
    if reduction == "sum":
        return T.sum(loss)
    return T.mean(loss / T.asarray(np.maximum(tl, 1), dtype=loss.dtype, device=dev))


class CTCLoss(_Loss):
    """The CTC loss (see ctc_loss): forward(log_probs, targets, input_lengths,
    target_lengths)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths,
                target_lengths) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)


__all__ = ["ctc_loss", "CTCLoss"]
