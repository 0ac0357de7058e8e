"""Still more of nn.functional, as PyTorch's: the activations threshold, hardshrink,
softshrink, rrelu; the channel dropouts dropout3d and feature_alpha_dropout; normalize, pdist
and gumbel_softmax; the losses multi_margin, multilabel_margin, multilabel_soft_margin and
triplet_margin_with_distance.

All are compositions of public tensor ops, so autograd differentiates them. Each kink has
PyTorch's derivative (the branch conditions are PyTorch's: threshold's and the shrinks' 0 at
their bounds, a hinge's 0 where it is exactly 0). The random ones (rrelu while training,
the dropouts, gumbel_softmax) draw from tensor.random's generator, so a seed or
autograd.checkpoint replays them.

>>> import tensor as T
>>> from nn import functional as F
>>> F.softshrink(T.tensor([-2.0, 0.25, 1.5]), 0.5).tolist()
[-1.5, 0.0, 1.0]
>>> F.normalize(T.tensor([[3.0, 4.0]])).tolist()
[[0.6, 0.8]]
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import tensor as T
from autograd.grad_mode import no_grad
from tensor import Tensor
from tensor import random as _random

from ._functional import _float, _reduce, _result, _tensor, check_reduction, softmax
from ._functional_extra import _axis, _like, _softplus, pairwise_distance
from ._functional_layers import _SELU_NEG, _check_p, _feature_dropout
from .embedding import checked_ids


def _hinge(z: Tensor) -> Tensor:
    """max(z, 0) whose gradient is 0 at z == 0 (PyTorch's `if (z > 0)` in the margin losses)."""
    return T.where(z > 0, z, 0.0)


def _draw_dtype(x: Tensor):
    """The dtype random numbers for x are drawn in: x's, or float32 for a 16-bit x."""
    return x.dtype if x.dtype.itemsize >= 4 else T.float32


# ---------------------------------------------------------------- activations


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """input where input > threshold, else value; the gradient is 1 where input > threshold.

    >>> import tensor as T
    >>> threshold(T.tensor([0.5, 1.0, 2.0]), 1.0, -5.0).tolist()
    [-5.0, -5.0, 2.0]
    """
    _float(input, "threshold")
    # PyTorch's x <= threshold ? value : x, so NaN passes through (and its gradient is 1)
    return _result(input, lambda v: T.where(v <= threshold, value, v), inplace)


def _check_lambd(lambd, op: str) -> float:
    if not isinstance(lambd, numbers.Real) or lambd < 0:
        raise ValueError(f"{op}: lambd must be a non-negative number, got {lambd!r}")
    return float(lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """input where |input| > lambd, else 0.

    >>> import tensor as T
    >>> hardshrink(T.tensor([-1.0, 0.5, 0.75])).tolist()
    [-1.0, 0.0, 0.75]
    """
    _float(input, "hardshrink")
    return T.where((input >= -lambd) & (input <= lambd), 0.0, input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """input - lambd above lambd, input + lambd below -lambd, 0 in between (lambd >= 0).

    >>> import tensor as T
    >>> softshrink(T.tensor([-1.0, 0.5, 0.75])).tolist()
    [-0.5, 0.0, 0.25]
    """
    _float(input, "softshrink")
    lambd = _check_lambd(lambd, "softshrink")
    # the dead zone is tested, not the live ones, so NaN passes through (as PyTorch)
    return T.where((input >= -lambd) & (input <= lambd), 0.0,
                   T.where(input > lambd, input - lambd, input + lambd))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: input where input > 0, else a * input, a drawn uniformly from
    [lower, upper) per element while training, and (lower + upper) / 2 otherwise.

    >>> import tensor as T
    >>> rrelu(T.tensor([-4.0, 2.0]), 0.25, 0.75).tolist()
    [-2.0, 2.0]
    """
    op = "rrelu"
    _float(input, op)
    if not lower <= upper:
        raise ValueError(f"{op}: lower bound {lower} must be less than or equal to the upper "
                         f"bound {upper}")
    if not training:
        slope = (lower + upper) / 2
        return _result(input, lambda v: T.where(v > 0, v, v * slope), inplace)
    a = _random.uniform(lower, upper, size=tuple(input.shape), dtype=_draw_dtype(input),
                        device=input.device).astype(input.dtype, copy=False)
    return _result(input, lambda v: T.where(v > 0, v, v * a), inplace)


# ---------------------------------------------------------------- channel dropout


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p
    (training), scaling the kept ones by 1/(1-p), as torch.nn.functional.dropout3d (other
    ranks warn, as PyTorch's, and are taken as unbatched).

    >>> import tensor as T
    >>> dropout3d(T.ones((1, 2, 1, 1, 2)), 0.5, training=False).shape
    (1, 2, 1, 1, 2)
    """
    op = "dropout3d"
    _tensor(input, op)
    p = _check_p(p, op)
    if input.ndim not in (4, 5):
        warnings.warn(f"{op}: received a {input.ndim}-d input; dropout3d expects (N, C, D, H, W) "
                      "or (C, D, H, W) and drops along the first dim of an unbatched input",
                      UserWarning, stacklevel=2)
    return _feature_dropout(input, p, training, inplace, input.ndim == 5)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels of (N, C, *) input: a dropped (sample, channel) takes
    SELU's saturation value everywhere, and all are then scaled and shifted to keep zero mean
    and unit variance, as torch.nn.functional.feature_alpha_dropout.

    >>> import tensor as T
    >>> feature_alpha_dropout(T.ones((2, 3)), 0.5).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    op = "feature_alpha_dropout"
    _tensor(input, op)
    p = _check_p(p, op)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    _float(input, op)
    if input.ndim < 2:
        raise ValueError(f"{op}: feature dropout needs an input of at least 2 dims (N, C, *), "
                         f"got shape {tuple(input.shape)}")
    if p == 1.0:
        return _result(input, lambda v: v * 0.0, inplace)
    a = 1.0 / math.sqrt((_SELU_NEG * _SELU_NEG * p + 1.0) * (1.0 - p))
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = (_random.rand(*shape, dtype=T.float32, device=input.device) >= p).astype(input.dtype)
    b = (keep - 1.0) * (_SELU_NEG * a) + _SELU_NEG * a * p
    return _result(input, lambda v: v * (keep * a) + b, inplace)


# ---------------------------------------------------------------- normalize, pdist


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p, eps) along dim (the norm's gradient passes where it is > eps,
    as PyTorch's clamp_min); out, when given, receives the result.

    >>> import tensor as T
    >>> normalize(T.tensor([[1.0, 1.0], [0.0, 0.0]]), p=1.0).tolist()
    [[0.5, 0.5], [0.0, 0.0]]
    """
    op = "normalize"
    _float(input, op)
    d = _axis(input, dim, op)
    x = input.reshape((1,)) if input.ndim == 0 else input
    n = T.linalg.vector_norm(x, ord=p, axis=d, keepdims=True)
    y = x / T.where(n <= eps, eps, n)     # NaN stays NaN
    y = y.reshape(()) if input.ndim == 0 else y
    if out is None:
        return y
    _tensor(out, op)
    if tuple(out.shape) != tuple(input.shape):
        raise ValueError(f"{op}: out shape {tuple(out.shape)} != input shape "
                         f"{tuple(input.shape)}")
    return out.copy_(y)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of an (N, M) input, for every pair i < j in
    row-major order: N (N - 1) / 2 values, as torch.nn.functional.pdist.

    >>> import tensor as T
    >>> pdist(T.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.242640687119285]
    """
    op = "pdist"
    _float(input, op)
    if input.ndim != 2:
        raise ValueError(f"{op}: expected a 2-d input (N, M), got shape {tuple(input.shape)}")
    if not isinstance(p, numbers.Real) or not p >= 0:
        raise ValueError(f"{op}: p must be a non-negative number, got {p!r}")
    i, j = np.triu_indices(input.shape[0], 1)
    a = T.take(input, T.asarray(i.astype(np.int64), device=input.device), axis=0)
    b = T.take(input, T.asarray(j.astype(np.int64), device=input.device), axis=0)
    return T.linalg.vector_norm(a - b, ord=float(p), axis=-1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of x1 (*, P, M) and of x2 (*, R, M) (batch dims
    broadcast): (*, P, R), as torch.cdist.

    >>> import tensor as T
    >>> cdist(T.tensor([[0.0, 0.0]]), T.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[5.0, 1.0]]
    """
    op = "cdist"
    _float(x1, op)
    _float(x2, op)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"{op}: expected x1 (*, P, M) and x2 (*, R, M) with one M, got shapes "
                         f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    if not isinstance(p, numbers.Real) or not p >= 0:
        raise ValueError(f"{op}: p must be a non-negative number, got {p!r}")
    diff = T.expand_dims(x1, -2) - T.expand_dims(x2, -3)          # (*, P, R, M)
    return T.linalg.vector_norm(diff, ord=float(p), axis=-1)


# ---------------------------------------------------------------- gumbel softmax


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) along dim with g ~ Gumbel(0, 1) drawn from tensor.random;
    hard: the one-hot of its argmax in the forward pass, the soft sample's gradient in the
    backward (straight-through). eps is unused (deprecated in PyTorch).

    >>> import tensor as T
    >>> y = gumbel_softmax(T.zeros((2, 3)), hard=True)
    >>> y.sum(axis=1).tolist(), sorted(set(y.reshape(-1).tolist()))
    ([1.0, 1.0], [0.0, 1.0])
    """
    op = "gumbel_softmax"
    _float(logits, op)
    if eps != 1e-10:
        warnings.warn(f"{op}: the eps parameter is deprecated and has no effect",
                      DeprecationWarning, stacklevel=2)
    if not tau > 0:
        raise ValueError(f"{op}: tau must be positive, got {tau}")
    d = _axis(logits, dim, op)
    u = _random.rand(*logits.shape, dtype=_draw_dtype(logits), device=logits.device)
    e = T.maximum(-T.log1p(-u), T.finfo(u.dtype).tiny)   # Exp(1): finite, never 0
    g = (-T.log(e)).astype(logits.dtype, copy=False)
    y = softmax((logits + g) / tau, d)
    if not hard or logits.ndim == 0:
        return y
    with no_grad():
        idx = T.argmax(y, axis=d, keepdims=True)
        pos = T.arange(logits.shape[d], device=logits.device).reshape(
            (-1,) + (1,) * (logits.ndim - d - 1))
        y_hard = (pos == idx).astype(logits.dtype)
    return y_hard - y.detach() + y


# ---------------------------------------------------------------- margin losses


def _scores_and_classes(input: Tensor, target, op: str) -> None:
    """Float scores (C,) or (N, C), C > 0, and an integer tensor of class indices."""
    _float(input, op)
    _tensor(target, op)
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must be an integer tensor of class indices, got "
                        f"{target.dtype.name}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"{op}: expected a non-empty (C,) or (N, C) input, got shape "
                         f"{tuple(input.shape)}")


def _class_targets(input: Tensor, target, op: str) -> tuple:
    """(input as (N, C), integer target as (N, 1) int64, whether input was 1-D), checked:
    target has one class index in [0, C) per row."""
    _scores_and_classes(input, target, op)
    n = 1 if input.ndim == 1 else input.shape[0]
    if target.ndim > 1 or target.numel() != n:
        raise ValueError(f"{op}: target shape {tuple(target.shape)} does not fit input shape "
                         f"{tuple(input.shape)} (expected {n} class index(es))")
    c = input.shape[-1]
    target = checked_ids(target, 0, c, lambda v, i: (
        f"{op}: target holds the class index {v}, out of range [0, {c}) (at position {i})"))
    return input.reshape(n, c), target.reshape(n, 1).astype(T.int64), input.ndim == 1


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss of scores (N, C) or (C,) and class indices y: the sum over i != y
    of w[y] * max(0, margin - x[y] + x[i])^p, divided by C (p is 1 or 2).

    >>> import tensor as T
    >>> round(multi_margin_loss(T.tensor([[0.1, 0.2, 0.4, 0.8]]), T.tensor([3])).item(), 6)
    0.325
    """
    op = "multi_margin_loss"
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got {p!r}")
    x, y, flat = _class_targets(input, target, op)
    check_reduction(reduction, op)
    c = x.shape[1]
    z = _hinge(margin - T.take_along_axis(x, y, axis=1) + x)
    z = z * z if p == 2 else z
    if weight is not None:
        _tensor(weight, op)
        if tuple(weight.shape) != (c,):
            raise ValueError(f"{op}: weight must have shape ({c},) for {c} classes, got "
                             f"{tuple(weight.shape)}")
        z = z * T.take(weight.astype(x.dtype, copy=False), y, axis=0)
    other = T.arange(c, device=x.device) != y
    loss = T.where(other, z, 0.0).sum(axis=1) / c
    return _reduce(loss.reshape(()) if flat else loss, reduction, op)


def multilabel_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss of scores (N, C) or (C,): target (same shape) lists each row's
    classes, up to its first -1; the sum over listed j and unlisted i of
    max(0, 1 - (x[j] - x[i])), divided by C.

    >>> import tensor as T
    >>> multilabel_margin_loss(T.tensor([[0.1, 0.2, 0.4, 0.8]]), T.tensor([[3, 0, -1, 1]])).item()
    0.85
    """
    op = "multilabel_margin_loss"
    _scores_and_classes(input, target, op)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: target shape {tuple(target.shape)} != input shape "
                         f"{tuple(input.shape)}")
    check_reduction(reduction, op)
    c = input.shape[-1]
    x, t = input.reshape(-1, c), target.reshape(-1, c).astype(T.int64)
    t = checked_ids(t, -1, c, lambda v, i: (
        f"{op}: target holds the class index {v}, out of range [-1, {c}) (at position {i})"))
    with no_grad():
        listed = T.cumprod((t != -1).astype(T.int64), axis=1) > 0        # before the first -1
        tj = T.where(listed, t, 0)
        classes = T.arange(c, device=x.device)
        is_target = ((T.expand_dims(tj, 2) == classes) & T.expand_dims(listed, 2)).any(axis=1)
        pair = T.expand_dims(listed, 2) & ~T.expand_dims(is_target, 1)    # (N, j, i)
    xj = T.take_along_axis(x, tj, axis=1)
    z = _hinge(1.0 - T.expand_dims(xj, 2) + T.expand_dims(x, 1))
    loss = T.where(pair, z, 0.0).sum(axis=(1, 2)) / c
    return _reduce(loss.reshape(()) if input.ndim == 1 else loss, reduction, op)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                reduction: str = "mean") -> Tensor:
    """-(t log sigmoid(x) + (1 - t) log sigmoid(-x)), times weight, averaged over the classes
    (the last dim) of each sample.

    >>> import tensor as T
    >>> round(multilabel_soft_margin_loss(T.tensor([[0.0, 0.0]]), T.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    op = "multilabel_soft_margin_loss"
    _float(input, op)
    target = _like(input, target, op)
    check_reduction(reduction, op)
    if input.ndim == 0:
        raise ValueError(f"{op}: expected an input of at least 1 dim (*, C), got shape ()")
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: target shape {tuple(target.shape)} != input shape "
                         f"{tuple(input.shape)}")
    loss = target * _softplus(-input) + (1 - target) * _softplus(input)
    if weight is not None:
        _tensor(weight, op)
        try:
            T.broadcast_shapes(tuple(weight.shape), tuple(input.shape))
        except ValueError:
            raise ValueError(f"{op}: weight shape {tuple(weight.shape)} does not broadcast to "
                             f"input shape {tuple(input.shape)}") from None
        loss = loss * weight.astype(input.dtype, copy=False)
    loss = loss.sum(axis=-1) / input.shape[-1]
    return _reduce(loss, reduction, op)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with any distance function d
    of two tensors (default pairwise_distance); swap uses min(d(a, n), d(p, n)).

    >>> import tensor as T
    >>> triplet_margin_with_distance_loss(T.tensor([[0.0]]), T.tensor([[1.0]]), T.tensor([[3.0]]),
    ...     distance_function=lambda a, b: T.abs(a - b).sum(axis=-1), margin=0.5).item()
    0.0
    """
    op = "triplet_margin_with_distance_loss"
    for t in (anchor, positive, negative):
        _tensor(t, op)
    if not margin > 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(f"{op}: anchor, positive and negative must have the same number of "
                         f"dims, got shapes {tuple(anchor.shape)}, {tuple(positive.shape)} and "
                         f"{tuple(negative.shape)}")
    check_reduction(reduction, op)
    dist = pairwise_distance if distance_function is None else distance_function
    if not callable(dist):
        raise TypeError(f"{op}: distance_function must be callable, got "
                        f"{type(dist).__name__}")
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = T.minimum(d_neg, dist(positive, negative))
    # PyTorch's clamp_min(., 0), whose gradient is 0 where the hinge is exactly 0 (PyTorch 2.14;
    # older releases passed it there, as _functional_extra's _relu_min still does)
    return _reduce(_hinge(margin + d_pos - d_neg), reduction, op)


__all__ = ["threshold", "hardshrink", "softshrink", "rrelu", "dropout3d", "feature_alpha_dropout",
           "normalize", "pdist", "gumbel_softmax", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "triplet_margin_with_distance_loss"]
