"""Embedding lookup: embedding (functional) and the Embedding module, as PyTorch's.

The lookup is weight[indices] (integer-array indexing), whose gradient accumulates into the
rows that were read, once per occurrence; the padding_idx row is read through a detached
alias, so it gets no gradient; scale_grad_by_freq divides each looked-up row's gradient by
how often its id occurs in the input. sparse=True (for a leaf weight) makes weight.grad a
tensor.sparse.SparseCOO instead (_SparseLookup: the looked-up ids' rows, uncoalesced, as
PyTorch's), which nn.optim.SGD (without momentum / weight_decay) and nn.optim.SparseAdam apply
at those rows only.

>>> import tensor as T
>>> w = T.arange(6.0).reshape(3, 2)
>>> embedding(T.tensor([2, 0]), w).tolist()
[[4.0, 5.0], [0.0, 1.0]]
"""
from __future__ import annotations

import tensor as T
from autograd import Function, is_grad_enabled, no_grad
from tensor import elementwise as ew
from tensor._tensor import Tensor
from tensor.backend import backend_for, report
from tensor.capture import capturing

from . import init
from .module import Module, Parameter


def _check_indices(input, num: int, op: str) -> Tensor:
    """input, checked: integers in [0, num) (negative ones are errors, as PyTorch's). The check
    runs where the ids are: on a GPU it raises at the next synchronization (DESIGN.md, Errors)."""
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        what = input.dtype.name if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"{op}: expected an integer index tensor, got {what}")
    return checked_ids(input, 0, num, lambda v, i: (
        f"{op}: index {v} is out of range for a table of {num} rows (at position {i} of the "
        f"flattened indices of shape {tuple(input.shape)})"))


def checked_ids(ids: Tensor, lo: int, hi: int, message) -> Tensor:
    """ids (an integer tensor), with a check that each lies in [lo, hi): an IndexError saying
    message(value, flat position), where the ids are (on a GPU at the next synchronization,
    DESIGN.md, Errors). In a capture an id below lo becomes hi, for the consumer's own bounds
    check to report (a captured step checks in its program)."""
    if capturing():
        return T.where(ids < lo, hi, ids)
    if not ids.numel():
        return ids
    flat = ew.contiguous(ids.astype(T.int64, copy=False)).reshape(-1)

    def raise_bad(i: int):
        raise IndexError(message(int(flat[i].item()), i))
    verdict = backend_for(flat.device).check_range(flat.device, flat.numel(), flat.data_ptr(), lo, hi)
    report(verdict, raise_bad)
    if isinstance(verdict, int):   # decided now: no id is bad
        return ids
    # a deferred verdict: the consumer reads clipped ids, so that its own index check finds
    # nothing and this check's error is the only one raised (not a second one, later, in an
    # unrelated op); a bad id's output is garbage the error already reports
    return T.clip(ids, lo if ids.dtype.kind == "i" else max(lo, 0), hi - 1)


def _renorm_(weight: Tensor, idx: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the rows of weight that idx reads down to norm max_norm, in place (as PyTorch)."""
    with no_grad():
        flat = idx.reshape(-1)
        rows = weight[flat]
        norms = T.linalg.vector_norm(rows, ord=norm_type, axis=1, keepdims=True)  # inf: the max
        scale = T.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[flat] = (rows * scale).astype(weight.dtype)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of weight (num_embeddings, dim) picked by integer input of any shape: output
    input.shape + (dim,). padding_idx's row gets no gradient; max_norm renormalizes the rows
    read (in place) first.

    >>> import tensor as T
    >>> embedding(T.tensor([[1]]), T.eye(2)).tolist()
    [[[0.0, 1.0]]]
    """
    return _lookup(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   "embedding")


def check_lookup(weight, input, padding_idx, op):
    """(input checked as ids into the 2-D table weight, padding_idx made non-negative)."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"{op}: weight must be a Tensor, got {type(weight).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"{op}: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                         f"{tuple(weight.shape)}")
    num = weight.shape[0]
    input = _check_indices(input, num, op)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"{op}: padding_idx {padding_idx} must be within num_embeddings "
                             f"({num})")
        padding_idx %= num
    return input, padding_idx


def _lookup(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, op):
    """embedding() whose errors name `op` (the module's name for nn.Embedding)."""
    input, padding_idx = check_lookup(weight, input, padding_idx, op)
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if sparse and weight.requires_grad and weight.grad_fn is None and is_grad_enabled():
        out = _SparseLookup.apply(weight, input, padding_idx)
    else:
        out = weight[input]
        if padding_idx is not None and weight.requires_grad:
            pad = T.expand_dims(input == padding_idx, -1)
            out = T.where(pad, out.detach(), out)
    if scale_grad_by_freq and weight.requires_grad and is_grad_enabled():
        out = _ScaleGrad.apply(out, _inverse_frequency(input, weight))
    return out


def _inverse_frequency(input: Tensor, weight: Tensor) -> Tensor:
    """1 / (how many times each id occurs in input), shaped input.shape + (1,) in weight's
    dtype: scale_grad_by_freq's factor for each looked-up row's gradient (as PyTorch's, which
    counts the ids of the whole mini-batch)."""
    flat = input.reshape(-1).astype(T.int64, copy=False)
    counts = T.bincount(flat, minlength=weight.shape[0])
    return T.expand_dims((1.0 / counts[input].astype(weight.dtype)), -1)


class _ScaleGrad(Function):
    """A copy of x whose backward multiplies the gradient by `scale` (broadcast to x)."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(scale)
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        (scale,) = ctx.saved_tensors
        return g * scale, None


class _SparseLookup(Function):
    """weight[input] whose weight gradient is a tensor.sparse.SparseCOO (sparse=True, as
    PyTorch's): one entry per (looked-up id, column), duplicates kept uncoalesced, the
    padding_idx occurrences left out. Entries are scalar (SparseCOO is 2-D), so an id's
    gradient row is its embedding_dim entries (row = id, col = 0 .. dim-1). Only for a leaf
    weight (a non-leaf one takes the dense path: its producer's rule wants a dense gradient)."""

    @staticmethod
    def forward(ctx, weight, input, padding_idx):
        ctx.shape, ctx.padding_idx = tuple(weight.shape), padding_idx
        ctx.save_for_backward(input)
        return weight[input]

    @staticmethod
    def backward(ctx, g):
        from tensor.sparse import SparseCOO
        (input,) = ctx.saved_tensors
        num, dim = ctx.shape
        ids = input.reshape(-1)
        rows = g.reshape((ids.shape[0], dim))
        if ctx.padding_idx is not None:
            (keep,) = T.nonzero(ids != ctx.padding_idx)
            ids, rows = ids[keep], rows[keep]
        n = ids.shape[0]
        ids = ids.astype(T.int64)
        r = T.broadcast_to(T.expand_dims(ids, 1), (n, dim)).reshape(-1)
        c = T.broadcast_to(T.arange(dim, dtype=T.int64, device=ids.device), (n, dim)).reshape(-1)
        # the ids were range-checked by the forward lookup: no second check (a host read)
        grad = SparseCOO(T.stack([r, c]), rows.reshape(-1).detach(), (num, dim),
                         n * dim <= 1, check_invariants=False)
        return grad, None, None


class Embedding(Module):
    """A lookup table of num_embeddings vectors of size embedding_dim, as torch.nn.Embedding:
    weight ~ N(0, 1), with the padding_idx row zeroed (and never updated by gradients).

    >>> import tensor as T
    >>> emb = Embedding(10, 3, padding_idx=0)
    >>> emb(T.tensor([[0, 4], [4, 9]])).shape, emb.weight[0].tolist()
    ((2, 2, 3), [0.0, 0.0, 0.0])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within "
                                 f"num_embeddings ({num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = (num_embeddings,
                                                                     embedding_dim, padding_idx)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            w = T.empty((num_embeddings, embedding_dim),
                        dtype=T.float32 if dtype is None else dtype, device=device)
            self.weight = Parameter(w, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight shape {tuple(_weight.shape)} != "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor) -> Tensor:
        return _lookup(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                       self.scale_grad_by_freq, self.sparse, "Embedding")

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is (a detached alias of) the given 2-D tensor."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape "
                             f"{tuple(embeddings.shape)}")
        n, d = embeddings.shape
        return cls(n, d, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s
