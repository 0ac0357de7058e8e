"""Loss modules (torch.nn's): MSELoss, L1Loss, CrossEntropyLoss, NLLLoss, BCELoss,
BCEWithLogitsLoss, SmoothL1Loss, HuberLoss, KLDivLoss, PoissonNLLLoss, GaussianNLLLoss,
SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, TripletMarginLoss,
with reduction 'mean' (default), 'sum' or 'none'; each calls its nn.functional counterpart.
Class weights and pos_weight are buffers (they follow .to()).

>>> import tensor as T
>>> round(CrossEntropyLoss(label_smoothing=0.1)(T.tensor([[2.0, 0.0]]), T.tensor([0])).item(), 4)
0.2269
>>> MSELoss(reduction="sum")(T.tensor([1.0, 2.0]), T.tensor([0.0, 0.0])).item()
5.0
"""
from __future__ import annotations

from tensor import Tensor

from . import _functional as F
from . import _functional_extra as FX
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F.check_reduction(reduction, type(self).__name__)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """(input - target)^2."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """|input - target|."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, self.reduction)


class NLLLoss(_WeightedLoss):
    """-weight[t] * input[t] for log-probabilities input (N, C, ...) and class indices t."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL of logits (N, C, ...) against class indices or class probabilities."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got "
                             f"{label_smoothing}")
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities in [0, 1] (weight rescales each element)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Sigmoid + binary cross-entropy in one stable formula; pos_weight weighs positives."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(weight, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                  self.pos_weight)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, else |d| - beta / 2."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FX.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FX.huber_loss(input, target, self.reduction, self.delta)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities input from target (reduction may be 'batchmean')."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__("mean")
        if reduction not in ("mean", "batchmean", "sum", "none"):
            raise ValueError(f"KLDivLoss: reduction must be 'mean', 'batchmean', 'sum' or "
                             f"'none', got {reduction!r}")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FX.kl_div(input, target, self.reduction, self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of rates (log-rates with log_input) given counts."""

    def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-8,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FX.poisson_nll_loss(input, target, self.log_input, self.full, self.eps,
                                   self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood of target given mean input and variance var."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return FX.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)) for labels +-1."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FX.soft_margin_loss(input, target, self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """max(0, -target * (input1 - input2) + margin)."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return FX.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """input where target is 1, max(0, margin - input) where it is -1."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FX.hinge_embedding_loss(input, target, self.margin, self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return FX.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)


class TripletMarginLoss(_MarginLoss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)
        self.p, self.eps, self.swap = p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return FX.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                      self.swap, self.reduction)


__all__ = ["MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "SoftMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss"]
