"""The functions of nn.functional that are not a layer family of their own: activations,
linear, layer_norm, dropout and losses (nn/functional/__init__.py gathers the rest).

Everything is written in public tensor ops (so autograd records it), except softmax,
log_softmax, layer_norm and cross_entropy with class indices, which run the fused row kernels
of nn/_fused.py (same results, one C pass per row, their own derivative rules). PyTorch's
names, arguments and defaults; `dim` as PyTorch's.

>>> import tensor as T
>>> from nn import functional as F
>>> x = T.tensor([[1.0, -2.0, 3.0]])
>>> F.relu(x).tolist(), [round(v, 4) for v in F.softmax(x, dim=1)[0].tolist()]
([[1.0, 0.0, 3.0]], [0.1185, 0.0059, 0.8756])
>>> round(F.cross_entropy(x, T.tensor([2])).item(), 4)
0.1328
"""
from __future__ import annotations

import numbers

import numpy as np

import tensor as T
from autograd.grad_mode import is_grad_enabled, no_grad
from tensor import Tensor
from tensor import random as _random
from tensor.amp import autocast_op

from . import _fused, _fused_ops


def _tensor(x, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _float(x, op: str) -> Tensor:
    _tensor(x, op)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating-point tensor, got {x.dtype.name}")
    return x


# ---------------------------------------------------------------- linear


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias over any leading dims: x (..., in), weight (out, in), bias (out,).

    >>> import tensor as T
    >>> linear(T.ones((2, 3)), T.ones((4, 3)), T.zeros(4)).shape
    (2, 4)
    """
    _tensor(input, "linear")
    _tensor(weight, "linear")
    if weight.ndim == 1 and bias is None and input.ndim >= 1 and input.shape[-1] == weight.shape[0]:
        return input @ weight   # PyTorch's: a 1-D weight (in_features,) drops the output dim
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), or 1-D "
                         f"(in_features,) without bias, got shape {weight.shape}"
                         + ("" if bias is None else f" and a bias of shape {bias.shape}"))
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input shape {input.shape} does not end in in_features="
                         f"{weight.shape[1]} (weight shape {weight.shape})")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"linear: bias shape {bias.shape} != (out_features,) = "
                         f"({weight.shape[0]},)")
    if input.ndim >= 2:   # one recorded node, one 2-D GEMM over every leading row
        return _fused_ops.linear_node(input, weight, bias)
    y = input @ weight.T
    return y if bias is None else y + bias


# ---------------------------------------------------------------- activations


def _result(x: Tensor, fn, inplace: bool, reads_input: bool = True) -> Tensor:
    """fn(x), or x overwritten with it (inplace=True: recorded as copy_, refused on leaves that
    require grad, as PyTorch's). reads_input: fn's graph keeps its input for backward, so where
    autograd records, fn reads a copy of x, whose value the write would otherwise replace
    (PyTorch keeps the original input of such in-place ops the same way)."""
    if not inplace:
        return fn(x)
    keep = reads_input and x.requires_grad and is_grad_enabled()
    return x.copy_(fn(T.clone(x) if keep else x))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); the gradient at 0 is 0 and NaN stays NaN, as PyTorch's."""
    _tensor(input, "relu")
    if input.dtype.kind == "f":   # one graph node, which keeps its output, not x
        return _result(input, _fused_ops.relu_op, inplace, reads_input=False)
    return _result(input, lambda v: T.where(v <= 0, 0, v), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    _float(input, "leaky_relu")
    return _result(input, lambda v: T.where(v > 0, v, v * negative_slope), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (exact, with erf) or its tanh approximation (approximate='tanh')."""
    _float(input, "gelu")
    if approximate in ("none", "tanh"):
        return _fused_ops.gelu_op(input, approximate)   # one graph node
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (a 16-bit x computed in float32 and rounded once, as PyTorch's: in 16 bits
    about one result in five was off torch's)."""
    _float(input, "silu")
    if input.dtype.itemsize == 2:
        return _result(input, lambda v: (lambda w: w * T.sigmoid(w))(v.astype("float32")).astype(v.dtype),
                       inplace)
    return _result(input, lambda v: v * T.sigmoid(v), inplace)


def tanh(input: Tensor) -> Tensor:
    return T.tanh(_tensor(input, "tanh"))


def sigmoid(input: Tensor) -> Tensor:
    return T.sigmoid(_tensor(input, "sigmoid"))


def _softmax_dim(ndim: int) -> int:
    """PyTorch's implicit dim (when none is given): 0 for 0-, 1- and 3-d inputs, else 1."""
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_in(x, dim, dtype, op):
    _tensor(x, op)
    if dtype is not None:
        x = x.astype(dtype, copy=False)
    _float(x, op)
    return x, (_softmax_dim(x.ndim) if dim is None else dim)


def wide_stats(x: Tensor) -> Tensor:
    """x in float32 when it is a 16-bit float, for the statistics of the normalizations: a
    float16 variance of values near 300 overflows (and the normalized output was all zeros),
    as PyTorch's kernels accumulate in float32 too; other dtypes as they are."""
    return x.astype(T.float32) if x.dtype in (T.float16, T.bfloat16) else x


@autocast_op("softmax")
def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along dim, computed stably in one fused pass per row.

    >>> import tensor as T
    >>> softmax(T.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    input, dim = _softmax_in(input, dim, dtype, "softmax")
    # (an explicit dtype: autocast leaves the op alone, as PyTorch's)
    return _fused.softmax(input, dim) if dtype is None else _fused.softmax(input, dim, dtype=dtype)


@autocast_op("log_softmax")
def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """x - logsumexp(x) along dim, in one fused pass per row."""
    input, dim = _softmax_in(input, dim, dtype, "log_softmax")
    return _fused.log_softmax(input, dim) if dtype is None else _fused.log_softmax(input, dim, dtype=dtype)


# ---------------------------------------------------------------- normalisation, dropout


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `normalized_shape`.

    >>> import tensor as T
    >>> [round(v, 4) for v in layer_norm(T.tensor([1.0, 2.0, 3.0]), 3).tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    _float(input, "layer_norm")
    ns = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(int(n) for n in normalized_shape)
    if not ns or input.shape[input.ndim - len(ns):] != ns or input.ndim < len(ns):
        raise ValueError(f"layer_norm: normalized_shape {ns} does not match the trailing dims "
                         f"of input shape {input.shape}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if p.shape != ns:
            raise ValueError(f"layer_norm: {name} shape {p.shape} != normalized_shape {ns}")
        if p.dtype is not input.dtype and not (input.dtype.itemsize == 2 and p.dtype is T.float32):
            raise TypeError(f"layer_norm: {name} is {p.dtype.name} but input is {input.dtype.name}")
    if input.dtype.itemsize == 2:  # 16-bit input, float32 parameters (mixed precision)
        weight = None if weight is None else weight.astype(input.dtype, copy=False)
        bias = None if bias is None else bias.astype(input.dtype, copy=False)
    y, _, _ = _fused.layer_norm(input, weight, bias, len(ns), float(eps))
    return y


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only).

    The mask is rand(x.shape) >= p from tensor.random's default generator, so
    autograd.checkpoint (which restores the generator) redraws the same mask.

    >>> import tensor as T
    >>> dropout(T.ones(4), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    _tensor(input, "dropout")
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    _float(input, "dropout")
    keep = _random.rand(*input.shape, dtype=T.float32, device=input.device) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return _result(input, lambda v: v * (keep.astype(v.dtype) * scale), inplace)


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor of shape x.shape + (num_classes,) with a 1 at each index of x.

    >>> import tensor as T
    >>> one_hot(T.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    _tensor(x, "one_hot")
    if x.dtype.kind not in "iu":
        raise TypeError(f"one_hot: expected an integer tensor of class indices, got {x.dtype.name}")
    with no_grad():
        lo = int(x.min().item()) if x.numel() else 0
        hi = int(x.max().item()) if x.numel() else -1
    if num_classes == -1:
        num_classes = hi + 1
    if lo < 0 or hi >= num_classes:
        raise ValueError(f"one_hot: class values must be in [0, {num_classes}), got values in "
                         f"[{lo}, {hi}]")
    return (x[..., None] == T.arange(num_classes, device=x.device)).astype(T.int64)


# ---------------------------------------------------------------- losses

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    check_reduction(reduction, op)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def check_reduction(reduction: str, op: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def weighted_loss(loss: Tensor, weight, input: Tensor, reduction: str, op: str,
                  by_weight: bool) -> Tensor:
    """An elementwise loss scaled by weight (input's shape) where given, then reduced; 'mean'
    divides by the weights' sum where by_weight (PyTorch's mse / l1 losses), else by the
    count (its huber loss)."""
    check_reduction(reduction, op)
    if weight is None:
        return _reduce(loss, reduction, op)
    _tensor(weight, op)
    if weight.shape != input.shape:
        raise ValueError(f"{op}: weight shape {weight.shape} != input shape {input.shape}")
    loss = loss * weight
    if reduction == "mean" and by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction, op)


def _same(x, target, op: str) -> None:
    """Elementwise losses: input and target of one shape and one floating dtype."""
    _float(x, op)
    _tensor(target, op)
    if x.shape != target.shape:
        raise ValueError(f"{op}: input shape {x.shape} and target shape {target.shape} differ")
    if x.dtype is not target.dtype:
        raise TypeError(f"{op}: input dtype {x.dtype.name} and target dtype "
                        f"{target.dtype.name} differ")


@autocast_op("mse_loss")
def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """(input - target)^2, reduced; weight (input's shape) scales each element, and 'mean'
    then divides by the weights' sum, as PyTorch's.

    >>> import tensor as T
    >>> mse_loss(T.tensor([1.0, 3.0]), T.tensor([0.0, 0.0])).item()
    5.0
    """
    _same(input, target, "mse_loss")
    d = input - target
    return weighted_loss(d * d, weight, input, reduction, "mse_loss", by_weight=True)


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced; weight as mse_loss's."""
    _same(input, target, "l1_loss")
    return weighted_loss(T.abs(input - target), weight, input, reduction, "l1_loss", by_weight=True)


def _class_weight(weight, c: int, x: Tensor, op: str):
    if weight is None:
        return None
    _tensor(weight, op)
    if weight.shape != (c,):
        raise ValueError(f"{op}: weight shape {weight.shape} != (num_classes,) = ({c},)")
    return weight.astype(x.dtype, copy=False)


def _class_rows(x: Tensor, target: Tensor, op: str):
    """Class-index losses: x as (rows, C), target as (rows,), the unreduced loss shape."""
    _float(x, op)
    _tensor(target, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: input must have a class dimension, got shape {x.shape}")
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: class-index target must be an integer tensor, got "
                        f"{target.dtype.name} (class probabilities must have the input's "
                        f"shape {x.shape} and dtype)")
    shape = () if x.ndim == 1 else (x.shape[0],) + x.shape[2:]
    if target.shape != shape:
        raise ValueError(f"{op}: target shape {target.shape} does not match input shape "
                         f"{x.shape} (expected target shape {shape})")
    c = x.shape[0] if x.ndim == 1 else x.shape[1]
    if x.ndim == 1:
        return x.reshape(1, c), target.reshape(1), shape
    if x.ndim > 2:
        x = T.moveaxis(x, 1, -1).reshape(-1, c)
    return x, target.reshape(-1), shape


def _valid_weights(t: Tensor, w, ignore_index: int, dtype):
    """Per row: weight[t] (1 without weights), 0 where t == ignore_index (not recorded)."""
    with no_grad():
        valid = t != ignore_index
        if w is None:
            return valid.astype(dtype)
        # clipped: a bad target is the loss kernel's error to report; an unclipped take would
        # queue a second, later error on a GPU (raised in some unrelated op after the first)
        rows = T.clip(T.where(valid, t, 0), 0, w.shape[0] - 1)
        return T.take(w.detach(), rows) * valid.astype(dtype)


def _reduce_rows(loss, rows_w, shape, reduction, op):
    check_reduction(reduction, op)
    if reduction == "none":
        return loss.reshape(shape)
    s = loss.sum()
    return s / rows_w.sum() if reduction == "mean" else s


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """-weight[t] * input[t] per row of log-probabilities; 'mean' divides by the summed
    weights of the rows not ignored.

    >>> import tensor as T
    >>> nll_loss(T.tensor([[-1.0, -2.0], [-3.0, -4.0]]), T.tensor([1, 0])).item()
    2.5
    """
    x, t, shape = _class_rows(input, target, "nll_loss")
    c = x.shape[1]
    w = _class_weight(weight, c, x, "nll_loss")
    with no_grad():
        valid = t != ignore_index
        bad = valid & ((t < 0) | (t >= c))
        if bool(bad.any()):
            v = int(t[T.argmax(bad)].item())
            raise IndexError(f"nll_loss: target {v} is out of bounds for {c} classes "
                             f"(ignore_index={ignore_index})")
        st = T.where(valid, t, 0)[:, None]
    rw = _valid_weights(t, w, ignore_index, x.dtype)
    # ignored rows take no part at all (as PyTorch's kernel skips them): neither an inf in the
    # column they stand in for, nor the 0 / 0 of a mean over no rows reaches x's gradient
    loss = T.where(valid, -(T.take_along_axis(x, st, 1)[:, 0] * rw), 0.0)
    return _reduce_rows(loss, rw, shape, reduction, "nll_loss")


@autocast_op("cross_entropy")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, 1), target) for class indices (fused: one pass per row),
    or -sum(target * log_softmax(input, 1)) for class probabilities (target shaped as input);
    label_smoothing mixes the target with the uniform distribution, as PyTorch's.

    >>> import tensor as T
    >>> round(cross_entropy(T.tensor([[0.0, 0.0]]), T.tensor([1])).item(), 4)
    0.6931
    """
    op = "cross_entropy"
    _float(input, op)
    _tensor(target, op)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
    if target.dtype.kind == "f":
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    x, t, shape = _class_rows(input, target, op)
    w = _class_weight(weight, x.shape[1], x, op)
    loss, _ = _fused.cross_entropy(x, t, w, int(ignore_index), float(label_smoothing))
    return _reduce_rows(loss, _valid_weights(t, w, ignore_index, x.dtype), shape, reduction, op)


def _cross_entropy_probs(x, target, weight, reduction, eps):
    op = "cross_entropy"
    if target.shape != x.shape:
        raise ValueError(f"{op}: class-probability target shape {target.shape} != input shape "
                         f"{x.shape}")
    if target.dtype is not x.dtype:
        raise TypeError(f"{op}: input dtype {x.dtype.name} and target dtype "
                        f"{target.dtype.name} differ")
    cax = 0 if x.ndim == 1 else 1
    c = x.shape[cax]
    logp = log_softmax(x, cax)
    if eps:
        target = target * (1.0 - eps) + eps / c
    w = _class_weight(weight, c, x, op)
    if w is not None:
        logp = logp * w.reshape((c,) + (1,) * (x.ndim - cax - 1))
    return _reduce(-(logp * target).sum(axis=cax), reduction, op)


@autocast_op("binary_cross_entropy")
def _loss_weight(weight, input, op: str, name: str = "weight") -> None:
    """A loss's elementwise weight must broadcast to the input's shape (PyTorch's rule)."""
    if weight is None:
        return
    _tensor(weight, op)
    try:
        ok = np.broadcast_shapes(tuple(weight.shape), tuple(input.shape)) == tuple(input.shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{op}: {name} of shape {tuple(weight.shape)} does not broadcast to "
                         f"the input's shape {tuple(input.shape)}")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log(x) + (1 - t) log(1 - x)) for probabilities x in [0, 1], logs clamped at -100.

    >>> import tensor as T
    >>> round(binary_cross_entropy(T.tensor([0.5]), T.tensor([1.0])).item(), 4)
    0.6931
    """
    _same(input, target, "binary_cross_entropy")
    _loss_weight(weight, input, "binary_cross_entropy")
    with no_grad():   # both ranges read at one synchronization (PyTorch checks both too)
        ok_x = ok_t = True
        if input.numel():
            ok_x, ok_t = T.stack([((input >= 0) & (input <= 1)).all(),
                                  ((target >= 0) & (target <= 1)).all()]).tolist()
        if not ok_x:
            raise ValueError("binary_cross_entropy: all elements of input should be between 0 "
                             "and 1 (apply sigmoid first, or use binary_cross_entropy_with_logits)")
        if not ok_t:
            raise ValueError("binary_cross_entropy: all elements of target should be between 0 "
                             "and 1 (they are probabilities)")
    loss = _fused_ops.binary_cross_entropy(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), t), computed stably from the logits x:
    (1 - t) x + (1 + (pos_weight - 1) t) (log(1 + exp(-|x|)) + max(-x, 0)).

    >>> import tensor as T
    >>> round(binary_cross_entropy_with_logits(T.tensor([0.0]), T.tensor([1.0])).item(), 4)
    0.6931
    """
    _same(input, target, "binary_cross_entropy_with_logits")
    _loss_weight(weight, input, "binary_cross_entropy_with_logits")
    _loss_weight(pos_weight, input, "binary_cross_entropy_with_logits", "pos_weight")
    softplus_neg = T.maximum(-input, 0) + T.log1p(T.exp(-T.abs(input)))  # -log(sigmoid(x))
    if pos_weight is not None:
        softplus_neg = softplus_neg * (1.0 + (pos_weight - 1.0) * target)
    loss = (1.0 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


__all__ = ["linear", "relu", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softmax",
           "log_softmax", "layer_norm", "dropout", "one_hot", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"]

