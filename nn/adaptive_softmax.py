"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs", 2017),
PyTorch's module: the frequent classes (below cutoffs[0]) and one token per cluster share a
head softmax; a rare class's log-probability adds its cluster's token to the log-softmax of a
smaller projection (in_features // div_value ** (i + 1)) over that cluster's classes, computed
only for the rows whose target falls in it.

>>> import tensor as T
>>> m = AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
>>> out = m(T.ones((3, 8)), T.tensor([0, 5, 9]))
>>> out.output.shape, out.loss.shape, m.log_prob(T.ones((3, 8))).shape
((3,), (), (3, 10))
"""
from __future__ import annotations

from typing import NamedTuple

import tensor as T
from tensor import Tensor

from ._functional import log_softmax
from .containers import ModuleList, Sequential
from .linear import Linear
from .module import Module


class ASMoutput(NamedTuple):
    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input (N, in_features) or (in_features,), target (N,) or ()) -> (output, loss):
    output the log-probability of each target, loss the mean of -output. log_prob(input) gives
    every class's, predict(input) the most likely class."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if (not cutoffs or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, "
                             "positive integers sorted in an increasing order, where each value is "
                             f"between 1 and n_classes-1, got {cutoffs} for n_classes={n_classes}")
        self.in_features, self.n_classes, self.div_value = in_features, n_classes, div_value
        self.cutoffs = cutoffs + [n_classes]
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList(
            Sequential(Linear(in_features, int(in_features // div_value ** (i + 1)), bias=False, **kw),
                       Linear(int(in_features // div_value ** (i + 1)), self.cutoffs[i + 1] - self.cutoffs[i],
                              bias=False, **kw))
            for i in range(self.n_clusters))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for seq in self.tail:
            for lin in seq:
                lin.reset_parameters()

    def _batch(self, input, op: str):
        if not isinstance(input, Tensor):
            raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2) or input.shape[-1] != self.in_features:
            raise RuntimeError(f"{op}: input should be (N, {self.in_features}) or "
                               f"({self.in_features},), got shape {input.shape}")
        return (input, True) if input.ndim == 2 else (T.expand_dims(input, 0), False)

    def forward(self, input: Tensor, target: Tensor) -> ASMoutput:
        op = "AdaptiveLogSoftmaxWithLoss"
        x, batched = self._batch(input, op)
        target = T.asarray(target, device=x.device)
        if target.ndim != (1 if batched else 0) or (batched and target.shape[0] != x.shape[0]):
            raise RuntimeError(f"{op}: input of shape {input.shape} needs a target of shape "
                               f"{(x.shape[0],) if batched else ()}, got {target.shape}")
        t = target.reshape(-1).astype(T.int64)
        if t.numel() and (int(T.min(t)) < 0 or int(T.max(t)) >= self.n_classes):
            raise RuntimeError(f"{op}: target values should be in [0, {self.n_classes - 1}], got "
                               f"[{int(T.min(t))}, {int(T.max(t))}]")
        head_lp = log_softmax(self.head(x), dim=1)
        # the head's column: the class itself in the shortlist, else its cluster's token
        column = t
        output = T.zeros(t.shape, dtype=head_lp.dtype, device=x.device)
        for i in range(self.n_clusters):
            lo, hi = self.cutoffs[i], self.cutoffs[i + 1]
            inside = (t >= lo) & (t < hi)
            rows = T.nonzero(inside)[0]
            if rows.shape[0] == 0:
                continue
            column = T.where(inside, self.shortlist_size + i, column)
            lp = log_softmax(self.tail[i](x[rows]), dim=1)
            local = T.take_along_axis(lp, (t[rows] - lo)[:, None], axis=1)[:, 0]
            output = T.index_add(output, 0, rows, local)
        output = output + T.take_along_axis(head_lp, column[:, None], axis=1)[:, 0]
        loss = T.mean(-output)
        return ASMoutput(output if batched else output[0], loss)

    def _full_log_prob(self, x: Tensor) -> Tensor:
        head_lp = log_softmax(self.head(x), dim=1)
        parts = [head_lp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = log_softmax(self.tail[i](x), dim=1)
            parts.append(cluster + head_lp[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return T.concatenate(parts, axis=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Every class's log-probability: (N, n_classes) (or (n_classes,))."""
        x, batched = self._batch(input, "AdaptiveLogSoftmaxWithLoss.log_prob")
        out = self._full_log_prob(x)
        return out if batched else out[0]

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (int64)."""
        x, batched = self._batch(input, "AdaptiveLogSoftmaxWithLoss.predict")
        out = T.argmax(self._full_log_prob(x), axis=1)
        return out if batched else out[0]
