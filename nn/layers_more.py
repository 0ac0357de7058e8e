"""Still more torch.nn layers, over nn/_functional_more.py and nn/_functional_more_pool.py:
Threshold, Hardshrink, Softshrink, RReLU, Softmax2d, Dropout3d, FeatureAlphaDropout,
CosineSimilarity, PairwiseDistance, LPPool1d/2d/3d, LocalResponseNorm, AdaptiveMaxPool3d,
MaxUnpool1d/2d/3d, the losses MultiMarginLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
TripletMarginWithDistanceLoss, and EmbeddingBag (the padding layers are in nn/padding.py).

>>> import tensor as T
>>> Softshrink(1.0)(T.tensor([-3.0, 0.5])).tolist()
[-2.0, 0.0]
>>> LPPool1d(2, 2)(T.tensor([[3.0, 4.0]])).tolist()
[[5.0]]
"""
from __future__ import annotations

import tensor as T
from autograd import no_grad
from tensor import Tensor

from . import _functional_extra as FX
from . import _functional_more as FM
from . import _functional_more_pool as FP
from . import init
from ._functional import softmax
from .conv import ntuple
from .layers_extra import AdaptiveMaxPool2d, _DropoutNd
from .loss import _Loss, _WeightedLoss
from .module import Module, Parameter

# ---------------------------------------------------------------- activations


class Threshold(Module):
    """input where input > threshold, else value.

    >>> import tensor as T
    >>> Threshold(0.5, 9.0)(T.tensor([0.25, 1.0])).tolist()
    [9.0, 1.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return FM.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return (f"threshold={self.threshold}, value={self.value}"
                + (", inplace=True" if self.inplace else ""))


class Hardshrink(Module):
    """input where |input| > lambd, else 0.

    >>> import tensor as T
    >>> Hardshrink(1.0)(T.tensor([-2.0, 0.5])).tolist()
    [-2.0, 0.0]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return FM.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """input shrunk towards 0 by lambd (0 inside [-lambd, lambd]).

    >>> import tensor as T
    >>> Softshrink()(T.tensor([1.0])).tolist()
    [0.5]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(FM._check_lambd(lambd, "Softshrink"))

    def forward(self, input: Tensor) -> Tensor:
        return FM.softshrink(input, self.lambd)


class RReLU(Module):
    """Randomized leaky ReLU: negative inputs times a slope drawn from U(lower, upper) per
    element while training, times (lower + upper) / 2 in eval mode.

    >>> import tensor as T
    >>> RReLU(0.1, 0.3).eval()(T.tensor([-1.0, 1.0])).tolist()
    [-0.2, 1.0]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        if not lower <= upper:
            raise ValueError(f"RReLU: lower bound {lower} must be less than or equal to the "
                             f"upper bound {upper}")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return FM.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input.

    >>> import tensor as T
    >>> Softmax2d()(T.zeros((2, 1, 1))).reshape(-1).tolist()
    [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-d or 4-d input, got shape "
                             f"{tuple(input.shape)}")
        return softmax(input, -3)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input while training.

    >>> import tensor as T
    >>> Dropout3d(0.5).eval()(T.ones((1, 2, 1, 1, 1))).reshape(-1).tolist()
    [1.0, 1.0]
    """
    _fn = staticmethod(FM.dropout3d)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (see feature_alpha_dropout) while training.

    >>> import tensor as T
    >>> FeatureAlphaDropout(0.2).eval()(T.ones((1, 2))).tolist()
    [[1.0, 1.0]]
    """
    _fn = staticmethod(FM.feature_alpha_dropout)

# ---------------------------------------------------------------- distances


class CosineSimilarity(Module):
    """cosine_similarity(x1, x2, dim, eps).

    >>> import tensor as T
    >>> CosineSimilarity(dim=0)(T.tensor([1.0, 0.0]), T.tensor([2.0, 0.0])).item()
    1.0
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return FX.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """pairwise_distance(x1, x2, p, eps, keepdim): the p-norm of x1 - x2 + eps over the last dim.

    >>> import tensor as T
    >>> PairwiseDistance(eps=0.0)(T.tensor([[3.0, 0.0]]), T.tensor([[0.0, 4.0]])).tolist()
    [5.0]
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return FX.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

# ---------------------------------------------------------------- pooling


class _LPPool(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """Power-average pooling of (N, C, L) or (C, L) (see lp_pool1d).

    >>> import tensor as T
    >>> LPPool1d(2, 2)(T.tensor([[3.0, 4.0]])).tolist()
    [[5.0]]
    """
    _fn = staticmethod(FP.lp_pool1d)


class LPPool2d(_LPPool):
    """Power-average pooling of (N, C, H, W) or (C, H, W) (see lp_pool2d).

    >>> import tensor as T
    >>> LPPool2d(1, 2)(T.ones((1, 1, 4, 4))).shape
    (1, 1, 2, 2)
    """
    _fn = staticmethod(FP.lp_pool2d)


class LPPool3d(_LPPool):
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W) (see lp_pool3d).

    >>> import tensor as T
    >>> LPPool3d(2, 2)(T.ones((1, 1, 2, 4, 4))).shape
    (1, 1, 1, 2, 2)
    """
    _fn = staticmethod(FP.lp_pool3d)


class LocalResponseNorm(Module):
    """Normalization by the mean square of `size` neighbouring channels (see
    local_response_norm).

    >>> import tensor as T
    >>> LocalResponseNorm(2)(T.ones((1, 3, 2))).shape
    (1, 3, 2)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return FP.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Adaptive max pooling of (N, C, D, H, W) or (C, D, H, W) (see adaptive_max_pool3d).

    >>> import tensor as T
    >>> AdaptiveMaxPool3d(1)(T.arange(8.0).reshape(1, 2, 2, 2)).reshape(-1).tolist()
    [7.0]
    """
    _fn = staticmethod(FP.adaptive_max_pool3d)


class _MaxUnpool(Module):
    _nd, _fn = 1, None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        name, nd = type(self).__name__, self._nd
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size", name)
        self.stride = ntuple(kernel_size if stride is None else stride, nd, "stride", name)
        self.padding = ntuple(padding, nd, "padding", name)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """The partial inverse of MaxPool1d (see max_unpool1d).

    >>> import tensor as T
    >>> MaxUnpool1d(2)(T.tensor([[4.0]]), T.tensor([[0]])).tolist()
    [[4.0, 0.0]]
    """
    _fn = staticmethod(FP.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """The partial inverse of MaxPool2d (see max_unpool2d).

    >>> import tensor as T
    >>> MaxUnpool2d(2)(T.ones((1, 1, 1, 1)), T.tensor([[[[2]]]])).reshape(-1).tolist()
    [0.0, 0.0, 1.0, 0.0]
    """
    _nd, _fn = 2, staticmethod(FP.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    """The partial inverse of MaxPool3d (see max_unpool3d).

    >>> import tensor as T
    >>> MaxUnpool3d(2)(T.ones((1, 1, 1, 1)), T.tensor([[[[0]]]])).shape
    (1, 2, 2, 2)
    """
    _nd, _fn = 3, staticmethod(FP.max_unpool3d)

# ---------------------------------------------------------------- losses


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (see multi_margin_loss); weight: one per class (a buffer).

    >>> import tensor as T
    >>> MultiMarginLoss(p=2, reduction="sum")(T.tensor([[1.0, 0.0]]), T.tensor([0])).item()
    0.0
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 reduction: str = "mean") -> None:
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got {p!r}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be 1-d, got shape "
                             f"{tuple(weight.shape)}")
        super().__init__(weight, reduction)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                    self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss (see multilabel_margin_loss).

    >>> import tensor as T
    >>> MultiLabelMarginLoss()(T.tensor([[2.0, 0.0]]), T.tensor([[0, -1]])).item()
    0.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.multilabel_margin_loss(input, target, self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """One-versus-all logistic loss per class, averaged over the classes (see
    multilabel_soft_margin_loss).

    >>> import tensor as T
    >>> MultiLabelSoftMarginLoss()(T.tensor([[0.0]]), T.tensor([[1.0]])).item() > 0.69
    True
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.multilabel_soft_margin_loss(input, target, self.weight, self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any distance function (default: a PairwiseDistance module).

    >>> import tensor as T
    >>> a, p, n = T.zeros((1, 2)), T.zeros((1, 2)), T.ones((1, 2))
    >>> TripletMarginWithDistanceLoss(margin=2.0)(a, p, n).item() > 0.5
    True
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        if not margin > 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, "
                             f"got {margin}")
        self.distance_function = (PairwiseDistance() if distance_function is None
                                  else distance_function)
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return FM.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)

# ---------------------------------------------------------------- embedding bag


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (see embedding_bag), as
    torch.nn.EmbeddingBag: weight ~ N(0, 1), with the padding_idx row zeroed.

    >>> import tensor as T
    >>> bag = EmbeddingBag(10, 3, mode="sum")
    >>> bag(T.tensor([1, 2, 4, 5, 4]), T.tensor([0, 2])).shape
    (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in FP._BAG_MODES:
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx {padding_idx} must be within "
                                 f"num_embeddings ({num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(T.empty((num_embeddings, embedding_dim),
                                            dtype=T.float32 if dtype is None else dtype,
                                            device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: _weight shape {tuple(_weight.shape)} != "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return FP.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                                self.scale_grad_by_freq, self.mode, self.sparse,
                                per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is the given 2-d tensor (frozen unless freeze=False)."""
        if embeddings.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings must be 2-d, got shape "
                             f"{tuple(embeddings.shape)}")
        n, d = embeddings.shape
        bag = cls(n, d, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


__all__ = ["Threshold", "Hardshrink", "Softshrink", "RReLU",
           "Softmax2d", "Dropout3d", "FeatureAlphaDropout", "CosineSimilarity",
           "PairwiseDistance", "LPPool1d", "LPPool2d", "LPPool3d", "LocalResponseNorm",
           "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "MultiMarginLoss",
           "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss",
           "EmbeddingBag"]
