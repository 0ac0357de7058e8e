"""More of nn.functional, as PyTorch's: the activations softplus, elu, selu, celu, relu6,
hardtanh, hardsigmoid, hardswish, logsigmoid, mish, softsign, tanhshrink, glu, prelu, softmin;
the losses smooth_l1, huber, kl_div, soft_margin, margin_ranking, hinge_embedding,
cosine_embedding, triplet_margin, poisson_nll, gaussian_nll; cosine_similarity and
pairwise_distance.

All are compositions of public tensor ops, so autograd differentiates them in both modes. Where
PyTorch's derivative at a kink is a convention (hardtanh's 0 at its bounds, elu's alpha at 0,
a clamp_min's 0 at its bound), the branch conditions are PyTorch's, and branches that
would overflow read masked inputs, so an unused branch never sends inf or NaN into a gradient.

>>> import tensor as T
>>> from nn import functional as F
>>> F.hardtanh(T.tensor([-2.0, 0.5, 3.0])).tolist()
[-1.0, 0.5, 1.0]
>>> F.smooth_l1_loss(T.tensor([0.5, 3.0]), T.tensor([0.0, 0.0]), reduction="none").tolist()
[0.125, 2.5]
"""
from __future__ import annotations

import math
import numbers
import warnings

import tensor as T
from autograd.grad_mode import no_grad
from tensor import Tensor
from tensor.amp import autocast_op

from ._functional import _float, _reduce, _result, _same, _tensor, check_reduction, softmax, weighted_loss

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(z: Tensor) -> Tensor:
    """log(1 + exp(z)) for any z without overflow; its derivative sigmoid(z) (0.5 at 0)."""
    return T.logaddexp(z, 0.0)


def _axis(x: Tensor, dim: int, op: str) -> int:
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{op}: dim {dim} is out of range for input shape {x.shape} "
                         f"(expected a dim in [{-nd}, {nd - 1}])")
    return dim % nd


def _broadcast(op: str, **named) -> tuple:
    try:
        return T.broadcast_shapes(*(t.shape for t in named.values()))
    except ValueError:
        shapes = ", ".join(f"{n} {t.shape}" for n, t in named.items())
        raise ValueError(f"{op}: shapes {shapes} do not broadcast") from None


def _like(x: Tensor, t, op: str, name: str = "target") -> Tensor:
    """t beside x in a loss whose operands broadcast: a floating t must have x's dtype, an
    integer or boolean one (class labels such as +-1) is cast to it."""
    _tensor(t, op)
    if t.dtype.kind != "f":
        t = t.astype(x.dtype)
    elif t.dtype is not x.dtype:
        raise TypeError(f"{op}: input dtype {x.dtype.name} and {name} dtype {t.dtype.name} "
                        "differ")
    return t


def _clamp_min_value(t: Tensor, lo: float) -> Tensor:
    """max(t, lo) whose backward is the identity, as PyTorch's clamp_ under no_grad on a clone
    (its cosine_similarity norms and gaussian_nll_loss variances)."""
    # recorded as it is (no in-place write under no_grad): the tangent of forward mode keeps
    # its own graph for reverse mode over forward mode; t - t.detach() is exactly 0, so the
    # clamped value is lo itself
    return T.where(t >= lo, t, t - t.detach() + lo)


def _relu_min(z: Tensor) -> Tensor:
    """z.clamp_min(0) as PyTorch's (2.14): no gradient at z == 0 (earlier versions passed it
    there), NaN stays NaN."""
    return T.where(z <= 0, 0.0, z)


# ---------------------------------------------------------------- activations


@autocast_op("softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's linear
    region).

    >>> import tensor as T
    >>> [round(v, 4) for v in softplus(T.tensor([0.0, 30.0])).tolist()]
    [0.6931, 30.0]
    """
    _float(input, "softplus")
    z = input * beta if beta != 1 else input
    sp = _softplus(z)
    return T.where(z > threshold, input, sp / beta if beta != 1 else sp)


def _elu(x: Tensor, alpha: float, scale: float, input_scale: float, inplace: bool,
         op: str) -> Tensor:
    """PyTorch's elu kernel: x <= 0 ? (exp(x * input_scale) - 1) * alpha * scale : x * scale."""
    _float(x, op)

    def f(v):
        neg = v <= 0
        vn = T.where(neg, v, 0.0)   # expm1 of a positive x would overflow into its gradient
        vn = vn * input_scale if input_scale != 1 else vn
        return T.where(neg, T.expm1(vn) * (alpha * scale), v * scale if scale != 1 else v)
    return _result(x, f, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1); the gradient at 0 is alpha."""
    return _elu(input, alpha, 1.0, 1.0, inplace, "elu")


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants alpha ~ 1.6733, scale ~ 1.0507."""
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace, "selu")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0")
    return _elu(input, alpha, 1.0, 1.0 / alpha, inplace, "celu")


def _hardtanh(v: Tensor, lo: float, hi: float) -> Tensor:
    # gradient 1 strictly inside (lo, hi) and for NaN, 0 at and beyond the bounds (PyTorch's)
    return T.where(v <= lo, lo, T.where(v >= hi, hi, v))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 0 at the bounds, as PyTorch's."""
    _float(input, "hardtanh")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return _result(input, lambda v: _hardtanh(v, min_val, max_val), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh(x, 0, 6)."""
    _float(input, "relu6")
    return _result(input, lambda v: _hardtanh(v, 0.0, 6.0), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6; gradient 1/6 strictly inside (-3, 3), else 0."""
    _float(input, "hardsigmoid")
    return _result(input, lambda v: T.where(v <= -3, 0.0, T.where(v >= 3, 1.0, (v + 3) / 6)), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6; PyTorch's gradient: 0 for x <= -3, x / 3 + 1/2 inside, 1 from 3."""
    _float(input, "hardswish")

    def f(v):
        m = T.where(T.abs(v) < 3, v, 0.0)   # masked: inf or NaN never reaches the quadratic
        return T.where(v <= -3, 0.0, T.where(v < 3, m * (m + 3) / 6, v))
    return _result(input, f, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), finite for any x (-800 at x = -800)."""
    _float(input, "logsigmoid")
    return -_softplus(-input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    _float(input, "mish")
    return _result(input, lambda v: v * T.tanh(_softplus(v)), inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    _float(input, "softsign")
    return input / (T.abs(input) + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    _float(input, "tanhshrink")
    return input - T.tanh(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of x along dim.

    >>> import tensor as T
    >>> glu(T.tensor([[2.0, 0.0]])).tolist()
    [[1.0]]
    """
    _float(input, "glu")
    if input.ndim == 0:
        raise ValueError("glu: a 0-d input has no dimension to halve")
    d = _axis(input, dim, "glu")
    if input.shape[d] % 2:
        raise ValueError(f"glu: halving dimension must be even, but dimension {dim} of input "
                         f"shape {input.shape} is size {input.shape[d]}")
    a, b = T.split(input, 2, axis=d)
    return a * T.sigmoid(b)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x, with one weight or one per channel (dim 1)."""
    _float(input, "prelu")
    _tensor(weight, "prelu")
    if weight.ndim > 1:
        raise ValueError(f"prelu: weight must be a scalar or 1-D tensor, got shape {weight.shape}")
    if weight.dtype is not input.dtype:
        if not (input.dtype.itemsize == 2 and weight.dtype is T.float32):   # mixed precision
            raise TypeError(f"prelu: weight is {weight.dtype.name} but input is {input.dtype.name}")
        weight = weight.astype(input.dtype)
    n = weight.numel()
    if n == 1:
        w = weight.reshape(())
    else:
        c = input.shape[1] if input.ndim >= 2 else 1
        if n != c:
            raise ValueError(f"prelu: weight has {n} parameters but input shape {input.shape} has "
                             f"{c} channel(s) (dim 1)")
        w = weight.reshape((n,) + (1,) * (input.ndim - 2))
    return T.where(input > 0, input, w * input)


def softmin(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """softmax(-x) along dim (None: softmax's implicit choice)."""
    _tensor(input, "softmin")
    if dtype is None:
        _float(input, "softmin")
    return softmax(-input, dim, dtype)


# ---------------------------------------------------------------- regression losses


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - beta / 2 (d = input - target); beta = 0 is
    l1_loss.

    >>> import tensor as T
    >>> smooth_l1_loss(T.tensor([0.5, 2.0]), T.tensor([0.0, 0.0])).item()
    0.8125
    """
    op = "smooth_l1_loss"
    _same(input, target, op)
    check_reduction(reduction, op)
    if beta < 0:
        raise ValueError(f"{op}: beta must be >= 0, got {beta}")
    z = T.abs(input - target)
    q = T.where(z < beta, z, 0.0)   # masked: an infinite z sends no inf * 0 = NaN through it
    loss = z if beta == 0 else T.where(z < beta, 0.5 * q * q / beta, z - 0.5 * beta)
    return _reduce(loss, reduction, op)


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2); weight (input's shape) scales
    each element before the reduction ('mean' is then the mean of the weighted losses)."""
    op = "huber_loss"
    _same(input, target, op)
    check_reduction(reduction, op)
    if delta <= 0:
        raise ValueError(f"{op}: delta must be > 0, got {delta}")
    z = T.abs(input - target)
    q = T.where(z < delta, z, 0.0)   # masked: an infinite z sends no inf * 0 = NaN through it
    loss = T.where(z < delta, 0.5 * q * q, delta * (z - 0.5 * delta))
    return weighted_loss(loss, weight, input, reduction, op, by_weight=False)


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Tensor, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: target * (log(target) - input), 0 where target is
    0; with log_target, exp(target) * (target - input). 'batchmean' sums and divides by
    input.shape[0] (the divergence's definition); 'mean' divides by the element count.

    >>> import tensor as T
    >>> kl_div(T.tensor([-1.0, -2.0]), T.tensor([0.0, 1.0]), reduction="sum").item()
    2.0
    """
    op = "kl_div"
    _float(input, op)
    target = _like(input, target, op)
    if reduction not in ("mean", "batchmean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'batchmean', 'sum' or 'none', got "
                         f"{reduction!r}")
    _broadcast(op, input=input, target=target)
    if reduction == "mean":   # PyTorch warns too (stacklevel 3: past autocast_op's wrapper)
        warnings.warn("kl_div: reduction='mean' divides the total by the batch size and the "
                      "number of classes; reduction='batchmean' divides by the batch size only, "
                      "which is the KL divergence's definition", UserWarning, stacklevel=3)
    if log_target:
        loss = T.exp(target) * (target - input)
    else:
        zero = target == 0      # xlogy(t, t): 0 at t = 0, and no log(0) in either direction
        loss = T.where(zero, 0.0, target * T.log(T.where(zero, 1.0, target))) - target * input
    if reduction == "batchmean":
        s = loss.sum()
        return s / input.shape[0] if input.ndim else s
    return _reduce(loss, reduction, op)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     eps: float = 1e-8, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input), else input - target * log(input + eps); full
    adds Stirling's approximation of log(target!) where target > 1."""
    op = "poisson_nll_loss"
    _float(input, op)
    target = _like(input, target, op)
    check_reduction(reduction, op)
    _broadcast(op, input=input, target=target)
    if log_input:
        loss = T.exp(input) - target * input
    else:
        loss = input - target * T.log(input + eps)
    if full:
        small = target <= 1
        t = T.where(small, 1.0, target)     # no log(0) reaches the gradient of masked entries
        stirling = t * T.log(t) - t + 0.5 * T.log(2 * math.pi * t)
        loss = loss + T.where(small, 0.0, stirling)
    return _reduce(loss, reduction, op)


def _var_shape(input: Tensor, var: Tensor, op: str) -> Tensor:
    """PyTorch's accepted var shapes: input's; input's without its last dim; input's with
    exactly one dim of size 1 where input's differs."""
    if var.shape == input.shape:
        return var
    if var.shape == input.shape[:-1]:
        return T.expand_dims(var, -1)
    if var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError(f"{op}: var shape {var.shape} does not fit input shape {input.shape} "
                     "(expected the input's shape, the input's shape without its last dim, or "
                     "size 1 in the one dim that differs)")


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) with full), var a tensor or a
    float, clamped to eps in value (its gradient is not cut there, as PyTorch's).

    >>> import tensor as T
    >>> gaussian_nll_loss(T.tensor([1.0]), T.tensor([3.0]), 1.0).item()
    2.0
    """
    op = "gaussian_nll_loss"
    _float(input, op)
    target = _like(input, target, op)
    if isinstance(var, numbers.Real) and not isinstance(var, Tensor):
        if var < 0:
            raise ValueError(f"{op}: var has negative entry/entries ({var})")
        var = T.full(input.shape, float(var), dtype=input.dtype, device=input.device)
    else:
        var = _like(input, var, op, "var")
        with no_grad():
            if var.numel() and bool((var < 0).any()):
                raise ValueError(f"{op}: var has negative entry/entries")
    var = _var_shape(input, var, op)
    check_reduction(reduction, op)
    _broadcast(op, input=input, target=target, var=var)
    var = _clamp_min_value(var, eps)
    d = input - target
    loss = 0.5 * (T.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, op)


# ---------------------------------------------------------------- margin losses


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)) for labels +-1, computed without overflow."""
    op = "soft_margin_loss"
    _float(input, op)
    target = _like(input, target, op)
    check_reduction(reduction, op)
    _broadcast(op, input=input, target=target)
    return _reduce(_softplus(-input * target), reduction, op)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin) for labels +-1 (1: input1 ranks higher)."""
    op = "margin_ranking_loss"
    _float(input1, op)
    input2 = _like(input1, input2, op, "input2")
    target = _like(input1, target, op)
    check_reduction(reduction, op)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ValueError(f"{op}: input1, input2 and target must have the same number of dims, "
                         f"got shapes {input1.shape}, {input2.shape} and {target.shape}")
    _broadcast(op, input1=input1, input2=input2, target=target)
    return _reduce(_relu_min(-target * (input1 - input2) + margin), reduction, op)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: str = "mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1 (other labels get both
    terms, as PyTorch's)."""
    op = "hinge_embedding_loss"
    _float(input, op)
    target = _like(input, target, op)
    check_reduction(reduction, op)
    _broadcast(op, input=input, target=target)
    loss = T.where(target != 1, _relu_min(margin - input), 0.0) + T.where(target != -1, input, 0.0)
    return _reduce(loss, reduction, op)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1; rows of
    2-D inputs with a 1-D target, or 1-D inputs with a 0-d target."""
    op = "cosine_embedding_loss"
    _float(input1, op)
    input2 = _like(input1, input2, op, "input2")
    _tensor(target, op)
    if target.ndim > 1:
        raise ValueError(f"{op}: target must be 0-d or 1-D (multi-target is not supported), "
                         f"got shape {target.shape}")
    need = target.ndim + 1
    if input1.ndim != need or input2.ndim != need:
        raise ValueError(f"{op}: a {target.ndim}-D target expects {need}-D inputs, got shapes "
                         f"{input1.shape} and {input2.shape}")
    check_reduction(reduction, op)
    _broadcast(op, input1=input1, input2=input2)
    ax = target.ndim
    prod = (input1 * input2).sum(axis=ax)
    m1 = (input1 * input1).sum(axis=ax) + 1e-12
    m2 = (input2 * input2).sum(axis=ax) + 1e-12
    cos = prod / T.sqrt(m1 * m2)
    _broadcast(op, target=target, rows=cos)
    loss = T.where(target == 1, 1 - cos, 0.0) + T.where(target == -1, _relu_min(cos - margin), 0.0)
    return _reduce(loss, reduction, op)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d pairwise_distance(p,
    eps) over the last dim; swap uses min(d(a, n), d(p, n)) as the negative distance."""
    op = "triplet_margin_loss"
    _float(anchor, op)
    positive = _like(anchor, positive, op, "positive")
    negative = _like(anchor, negative, op, "negative")
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(f"{op}: anchor, positive and negative must have the same number of "
                         f"dims, got shapes {anchor.shape}, {positive.shape} and "
                         f"{negative.shape}")
    check_reduction(reduction, op)
    _broadcast(op, anchor=anchor, positive=positive, negative=negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = T.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_relu_min(margin + d_pos - d_neg), reduction, op)


# ---------------------------------------------------------------- distances


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim (of the broadcast shape).

    >>> import tensor as T
    >>> pairwise_distance(T.tensor([[3.0, 4.0]]), T.tensor([[0.0, 0.0]]), eps=0.0).tolist()
    [5.0]
    """
    op = "pairwise_distance"
    _float(x1, op)
    x2 = _like(x1, x2, op, "x2")
    _broadcast(op, x1=x1, x2=x2)
    d = x1 - x2 + eps
    if d.ndim == 0:
        return T.linalg.vector_norm(d, ord=p)
    return T.linalg.vector_norm(d, axis=-1, keepdims=keepdim, ord=p)


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim (x1, x2 broadcast), so the
    result stays within [-1, 1], as PyTorch's.

    >>> import tensor as T
    >>> cosine_similarity(T.tensor([[1.0, 0.0]]), T.tensor([[1.0, 1.0]])).tolist()
    [0.7071067811865475]
    """
    op = "cosine_similarity"
    _float(x1, op)
    x2 = _like(x1, x2, op, "x2")
    shape = _broadcast(op, x1=x1, x2=x2)
    x1, x2 = T.broadcast_to(x1, shape), T.broadcast_to(x2, shape)
    if x1.ndim == 0:
        raise ValueError(f"{op}: inputs must have at least one dim, got shape {shape}")
    dim = _axis(x1, dim, op)
    n1 = _clamp_min_value(T.linalg.vector_norm(x1, axis=dim, keepdims=True), eps)
    n2 = _clamp_min_value(T.linalg.vector_norm(x2, axis=dim, keepdims=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(axis=dim)


__all__ = ["softplus", "elu", "selu", "celu", "relu6", "hardtanh", "hardsigmoid", "hardswish",
           "logsigmoid", "mish", "softsign", "tanhshrink", "glu", "prelu", "softmin",
           "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
           "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "pairwise_distance",
           "cosine_similarity"]
