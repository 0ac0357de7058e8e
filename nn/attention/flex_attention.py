"""flex_attention, as torch.nn.attention.flex_attention: attention whose scores a user function
changes (`score_mod(score, b, h, q_idx, kv_idx)`: relative position biases, ALiBi, soft-capping)
and whose pattern a mask function gives (`mask_mod(b, h, q_idx, kv_idx)` -> bool, made into a
`BlockMask` by `create_block_mask`: causal, sliding windows, documents packed in one sequence).

The functions are called once, on index tensors that broadcast over the (B, H, L, S) scores
(int32, shaped (B,1,1,1), (1,H,1,1), (1,1,L,1), (1,1,1,S)), so code written for PyTorch's
(elementwise ops, where, indexing a tensor with the indices) runs unchanged. The scores are
materialised and the result composed of differentiable ops: gradients reach query, key, value
and any tensor the functions capture, on either device (PyTorch's CPU build has no backward
for it). A BlockMask keeps PyTorch's block summary (kv_num_blocks, kv_indices, the full blocks
and their transposes, to_dense, sparsity), used here to mask whole blocks; no work is skipped
(that needs a compiled kernel). A query row that may attend to nothing gives 0 and an lse of
-inf, as PyTorch's.

>>> import tensor as T
>>> def causal(b, h, q_idx, kv_idx):
...     return q_idx >= kv_idx
>>> mask = create_block_mask(causal, None, None, 4, 4, BLOCK_SIZE=2)
>>> mask.kv_num_blocks.tolist(), mask.full_kv_num_blocks.tolist()
([[[1, 1]]], [[[0, 1]]])
>>> q = T.ones((1, 2, 4, 8)); v = T.arange(4.0).reshape(1, 1, 4, 1).repeat(2, axis=1)
>>> flex_attention(q, q, v, block_mask=mask)[0, 0, :, 0].tolist()   # means of the visible values
[0.0, 0.5, 1.0, 1.5]
"""
from __future__ import annotations

import inspect
import math
from collections import namedtuple
from dataclasses import dataclass

import tensor as T
from tensor import dtypes as dt
from tensor._tensor import Tensor

__all__ = ["flex_attention", "create_block_mask", "create_mask", "BlockMask", "and_masks",
           "or_masks", "noop_mask", "AuxRequest", "AuxOutput"]

OP = "flex_attention"

AuxOutput = namedtuple("AuxOutput", ["lse", "max_scores"])


@dataclass(frozen=True)
class AuxRequest:
    """What flex_attention returns besides its output (return_aux=): the rows' log-sum-exp of
    the scores and / or their maxima."""
    lse: bool = False
    max_scores: bool = False


def noop_mask(b, h, q_idx, kv_idx) -> Tensor:
    """The mask that hides nothing."""
    return T.full((), True, dtype=dt.bool_, device=q_idx.device)


def _combine(mods, how: str, op: str):
    for m in mods:
        if not callable(m):
            raise TypeError(f"{op}: every mask_mod must be callable, got {type(m).__name__}")

    def mask(b, h, q_idx, kv_idx):
        out = T.full((), how == "and", dtype=dt.bool_, device=q_idx.device)
        for m in mods:
            r = m(b, h, q_idx, kv_idx)
            out = (out & r) if how == "and" else (out | r)
        return out
    return mask


def and_masks(*mask_mods):
    """The mask_mod true where all of mask_mods are (all of none: everywhere)."""
    return _combine(mask_mods, "and", "and_masks")


def or_masks(*mask_mods):
    """The mask_mod true where any of mask_mods is (any of none: nowhere)."""
    return _combine(mask_mods, "or", "or_masks")


def _arity(fn, op: str) -> int:
    """The number of positional parameters without defaults: 5 for a score_mod, 4 for a
    mask_mod."""
    if not callable(fn):
        raise TypeError(f"{op}: expects a callable, got {type(fn).__name__}")
    try:
        ps = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 4
    return sum(p.default is inspect.Parameter.empty
               and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps)


def _accepts(fn, n: int, op: str) -> bool:
    """Whether fn can be called with n positional arguments (a `*args` function can)."""
    if not callable(fn):
        raise TypeError(f"{op}: expects a callable, got {type(fn).__name__}")
    try:
        inspect.signature(fn).bind(*range(n))
    except TypeError:
        return False
    except ValueError:   # (no signature to read: a builtin; let the call tell)
        return True
    return True


def _grid(B: int, H: int, L: int, S: int, device):
    """The broadcasting index tensors (b, h, q_idx, kv_idx)."""
    def idx(n, at):
        shape = [1, 1, 1, 1]
        shape[at] = n
        return T.arange(n, dtype=dt.int32, device=device).reshape(shape)
    return idx(B, 0), idx(H, 1), idx(L, 2), idx(S, 3)


def _dense_mask(mask_mod, grid, shape, op: str) -> Tensor:
    r = mask_mod(*grid)
    if not isinstance(r, Tensor) or r.dtype is not dt.bool_:
        raise TypeError(f"{op}: mask_mod must return a bool tensor, got "
                        f"{getattr(r, 'dtype', type(r).__name__)}")
    try:
        return T.broadcast_to(r, shape)
    except ValueError:
        raise ValueError(f"{op}: mask_mod returned shape {tuple(r.shape)}, which does not "
                         f"broadcast to {shape}") from None


def _sizes(B, H, Q_LEN, KV_LEN, op: str) -> tuple[int, int, int, int]:
    out = []
    for name, v in (("B", B), ("H", H), ("Q_LEN", Q_LEN), ("KV_LEN", KV_LEN)):
        v = 1 if v is None and name in "BH" else v
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{op}: {name} must be a positive int" + (" or None" if name in "BH"
                             else "") + f", got {v!r}")
        out.append(v)
    return tuple(out)


def create_mask(mod_fn, B, H, Q_LEN: int, KV_LEN: int, device=None) -> Tensor:
    """The dense (B, H, Q_LEN, KV_LEN) bool mask of a mask_mod, or of a score_mod (where its
    score, from zeros, is not -inf); B or H None: 1."""
    op = "create_mask"
    shape = _sizes(B, H, Q_LEN, KV_LEN, op)
    grid = _grid(*shape, device)
    if _arity(mod_fn, op) == 5:
        s = mod_fn(T.zeros(shape, device=device), *grid)
        return T.broadcast_to(s != -math.inf, shape)
    return _dense_mask(mod_fn, grid, shape, op)


def _ordered(flags: Tensor) -> tuple[Tensor, Tensor]:
    """(count, indices) of the True entries along the last dim, the True ones first (each part
    in ascending order), as int32."""
    n = flags.shape[-1]
    key = T.where(flags, 0, n) + T.arange(n, device=flags.device)
    return flags.sum(-1).astype(dt.int32), T.argsort(key, axis=-1).astype(dt.int32)


class BlockMask:
    """A mask_mod with its block summary over (BLOCK_SIZE[0] x BLOCK_SIZE[1]) tiles of the
    (Q_LEN, KV_LEN) scores, per batch and head (1 when made with None: broadcast): the partial
    blocks (some but not all allowed) in kv_num_blocks / kv_indices, the full ones (all allowed)
    in full_kv_num_blocks / full_kv_indices (None, and counted as partial, when made with
    separate_full_blocks=False), and the same per kv block (q_num_blocks, q_indices, ...).
    Made by create_block_mask."""

    def __init__(self, mask_mod, shape, block_size, partial: Tensor, full: Tensor | None):
        self.mask_mod, self.shape, self.BLOCK_SIZE = mask_mod, shape, block_size
        self.seq_lengths = shape[2:]
        self._partial, self._full = partial, full
        self.kv_num_blocks, self.kv_indices = _ordered(partial)
        self.q_num_blocks, self.q_indices = _ordered(T.swapaxes(partial, -1, -2))
        if full is None:
            self.full_kv_num_blocks = self.full_kv_indices = None
            self.full_q_num_blocks = self.full_q_indices = None
        else:
            self.full_kv_num_blocks, self.full_kv_indices = _ordered(full)
            self.full_q_num_blocks, self.full_q_indices = _ordered(T.swapaxes(full, -1, -2))

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor,
                       full_kv_num_blocks: Tensor | None = None,
                       full_kv_indices: Tensor | None = None,
                       BLOCK_SIZE: int | tuple[int, int] = 128, mask_mod=None,
                       seq_lengths: tuple[int, int] | None = None, compute_q_blocks: bool = True,
                       **_kernel_orders) -> BlockMask:
        """A BlockMask from its kv block summary, as PyTorch's: per (b, h, q block) row the
        first kv_num_blocks entries of kv_indices are its partial blocks (mask_mod applies
        there; None: noop_mask), those of full_kv_* its full ones. seq_lengths (Q_LEN, KV_LEN):
        the blocks' extent when None. compute_q_blocks and the kernels' orders are accepted."""
        op = "BlockMask.from_kv_blocks"
        bq, bk = _block_size(BLOCK_SIZE, op)
        partial = _from_ordered(kv_num_blocks, kv_indices, op, "kv")
        B, H, nq, nk = partial.shape
        full = None
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise ValueError(f"{op}: give both full_kv_num_blocks and full_kv_indices, or neither")
        if full_kv_num_blocks is not None:
            full = _from_ordered(full_kv_num_blocks, full_kv_indices, op, "full_kv")
            if full.shape != partial.shape:
                raise ValueError(f"{op}: full_kv_indices has shape {tuple(full_kv_indices.shape)}, "
                                 f"kv_indices {tuple(kv_indices.shape)}: they must match")
        L, S = (nq * bq, nk * bk) if seq_lengths is None else (int(v) for v in seq_lengths)
        if not (nq - 1) * bq < L <= nq * bq or not (nk - 1) * bk < S <= nk * bk:
            raise ValueError(f"{op}: seq_lengths {(L, S)} do not fit {nq} x {nk} blocks of "
                             f"{(bq, bk)}")
        return cls(noop_mask if mask_mod is None else mask_mod, (B, H, L, S), (bq, bk),
                   partial, full)

    def __getitem__(self, index) -> BlockMask:
        """The BlockMask of the selected batches, heads and q-block rows (up to three indices),
        as PyTorch's: an int keeps its dim (a length-1 slice); the selected q-block rows are
        packed (the first becomes row 0; Q_LEN is their tokens, a partial last block clipped
        when selected by int or slice); kv blocks are not sliced. Its mask_mod raises until
        one for the new positions is set (`bm.mask_mod = fn`), as PyTorch's."""
        idx = index if isinstance(index, tuple) else (index,)
        if len(idx) > 3:
            raise IndexError(f"BlockMask: indexing takes batch, head and q-block indices, got "
                             f"{len(idx)}")
        norm = []
        for i, n in zip((*idx, slice(None), slice(None), slice(None))[:3], self._partial.shape):
            if isinstance(i, int) and not isinstance(i, bool):
                if not -n <= i < n:
                    raise IndexError(f"BlockMask: index {i} is out of range for a dim of size {n}")
                i = slice(i % n, i % n + 1)
            norm.append(i)
        norm = tuple(norm)
        partial = self._partial[norm]
        full = None if self._full is None else self._full[norm]
        bq, nq = self.BLOCK_SIZE[0], self._partial.shape[2]
        if isinstance(norm[2], slice):
            rows = range(nq)[norm[2]]
            L = sum(min(bq, self.shape[2] - r * bq) for r in rows)
        else:
            L = partial.shape[2] * bq
        return BlockMask(_sliced_mask_mod, (*partial.shape[:2], L, self.shape[3]),
                         self.BLOCK_SIZE, partial, full)

    def numel(self) -> int:
        """The number of entries of the (B, H, Q_LEN, KV_LEN) mask (sparsity not counted)."""
        return math.prod(self.shape)

    def _blocks(self) -> Tensor:
        return self._partial if self._full is None else self._partial | self._full

    def to_dense(self) -> Tensor:
        """(B, H, q blocks, kv blocks) int32: 1 for the blocks computed (partial or full)."""
        return self._blocks().astype(dt.int32)

    def sparsity(self) -> float:
        """The percentage of blocks skipped (wholly masked)."""
        d = self._blocks()
        return 100.0 * (1.0 - float(d.sum()) / d.size)

    def to(self, device) -> BlockMask:
        return BlockMask(self.mask_mod, self.shape, self.BLOCK_SIZE, self._partial.to(device),
                         None if self._full is None else self._full.to(device))

    @property
    def device(self):
        return self._partial.device

    def __repr__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, "
                f"BLOCK_SIZE={self.BLOCK_SIZE}, mask_mod={getattr(self.mask_mod, '__name__', '?')})")


def _sliced_mask_mod(b, h, q_idx, kv_idx):
    """The mask_mod of an indexed BlockMask, until one is set: the old one would see the
    packed positions."""
    raise RuntimeError("flex_attention: this BlockMask was indexed (block_mask[...]); set a "
                       "mask_mod for its positions first (block_mask.mask_mod = fn), as in "
                       "PyTorch")


def _block_size(BLOCK_SIZE, op: str) -> tuple[int, int]:
    bq, bk = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (bq, bk)):
        raise ValueError(f"{op}: BLOCK_SIZE must be a positive int or a pair of them, got "
                         f"{BLOCK_SIZE!r}")
    return bq, bk


def _from_ordered(num: Tensor, indices: Tensor, op: str, what: str) -> Tensor:
    """The (B, H, q blocks, kv blocks) flags of an ordered summary: per row, the first num
    entries of indices (ints in [0, kv blocks); the kv block count is indices' last dim)."""
    if not isinstance(num, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"{op}: {what}_num_blocks and {what}_indices must be Tensors")
    if indices.ndim != 4 or tuple(num.shape) != tuple(indices.shape[:3]) \
            or num.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise ValueError(f"{op}: expects integer {what}_indices of shape (B, H, q blocks, kv "
                         f"blocks) and {what}_num_blocks of its first three dims, got shapes "
                         f"{tuple(indices.shape)} ({indices.dtype.name}), {tuple(num.shape)} "
                         f"({num.dtype.name})")
    n = indices.shape[-1]
    used = T.arange(n, device=indices.device) < num[..., None]          # (B, H, nq, n)
    hit = indices[..., None] == T.arange(n, device=indices.device)     # (B, H, nq, n, nk)
    return (hit & used[..., None]).any(axis=-2)


def create_block_mask(mask_mod, B, H, Q_LEN: int, KV_LEN: int, device=None,
                      BLOCK_SIZE: int | tuple[int, int] = 128, _compile: bool = False,
                      separate_full_blocks: bool = True, compute_dq_write_order: bool = False,
                      dq_kv_order: bool = True) -> BlockMask:
    """The BlockMask of mask_mod(b, h, q_idx, kv_idx) over (B, H, Q_LEN, KV_LEN) (B or H None:
    the same for every batch / head). _compile, compute_dq_write_order and dq_kv_order (how
    PyTorch builds and orders its kernel's work) are accepted and change nothing."""
    op = "create_block_mask"
    if _arity(mask_mod, op) == 5:
        raise TypeError(f"{op}: expects a mask_mod(b, h, q_idx, kv_idx); got a function of five "
                        "arguments, a score_mod (pass it to flex_attention as score_mod)")
    shape = _sizes(B, H, Q_LEN, KV_LEN, op)
    bq, bk = _block_size(BLOCK_SIZE, op)
    dense = _dense_mask(mask_mod, _grid(*shape, device), shape, op)
    nq, nk = -(-Q_LEN // bq), -(-KV_LEN // bk)
    padded = T.zeros((*shape[:2], nq * bq, nk * bk), dtype=dt.bool_, device=dense.device)
    padded[..., :Q_LEN, :KV_LEN] = dense   # (the padding counts as masked: a tail block is never full)
    tiles = padded.reshape(*shape[:2], nq, bq, nk, bk)
    some, every = tiles.any(axis=(3, 5)), tiles.all(axis=(3, 5))
    if separate_full_blocks:
        return BlockMask(mask_mod, shape, (bq, bk), some & ~every, every)
    return BlockMask(mask_mod, shape, (bq, bk), some, None)


def _check(query, key, value, enable_gqa: bool) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{OP}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim != 4:
            raise ValueError(f"{OP}: {name} must be 4-D (B, H, L, E), got shape {tuple(t.shape)}")
        if t.dtype.kind != "f":
            raise TypeError(f"{OP}: {name} must be floating point, got {t.dtype.name}")
    if not query.dtype is key.dtype is value.dtype:
        raise TypeError(f"{OP}: query, key and value must have one dtype, got {query.dtype.name}, "
                        f"{key.dtype.name}, {value.dtype.name}")
    if not query.device == key.device == value.device:
        raise ValueError(f"{OP}: query, key and value are on {query.device}, {key.device}, "
                         f"{value.device}; move them to one device")
    (bq, hq, _, e), (bk, hk, s, ek), (bv, hv, sv, _) = query.shape, key.shape, value.shape
    if ek != e or (bk, hk, s) != (bv, hv, sv):
        raise ValueError(f"{OP}: shapes query {tuple(query.shape)}, key {tuple(key.shape)}, value "
                         f"{tuple(value.shape)}: key needs query's E, value key's (B, H, S)")
    if bk != bq:
        raise ValueError(f"{OP}: query has batch size {bq} but key / value {bk}")
    if hq != hk and not (enable_gqa and hq % hk == 0):
        raise ValueError(f"{OP}: query has {hq} heads, key / value {hk}: equal counts, or "
                         "enable_gqa=True with the query's count a multiple of theirs")


def _mask_for(block_mask: BlockMask, grid, B: int, H: int, L: int, S: int, device) -> Tensor:
    if not isinstance(block_mask, BlockMask):
        raise TypeError(f"{OP}: block_mask must be a BlockMask (create_block_mask), got "
                        f"{type(block_mask).__name__}")
    bm, hm, lm, sm = block_mask.shape
    if (lm, sm) != (L, S) or bm not in (1, B) or hm not in (1, H):
        raise ValueError(f"{OP}: block_mask was made for (B, H, Q_LEN, KV_LEN) = "
                         f"{block_mask.shape}, the scores are {(B, H, L, S)}: make one for these "
                         "lengths (B and H may be 1)")
    if block_mask.device != device:
        raise ValueError(f"{OP}: block_mask is on {block_mask.device}, query on {device}: "
                         "block_mask.to(device)")
    bq, bk = block_mask.BLOCK_SIZE
    qb = (T.arange(L, device=device) // bq).reshape(L, 1)
    kb = (T.arange(S, device=device) // bk).reshape(1, S)
    blocks = block_mask._blocks()[:, :, qb, kb]
    return blocks & _dense_mask(block_mask.mask_mod, grid, (B, H, L, S), OP)


def flex_attention(query: Tensor, key: Tensor, value: Tensor, score_mod=None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False, kernel_options=None, *,
                   return_aux: AuxRequest | None = None):
    """softmax(score_mod(query key^T * scale) masked by block_mask) value over (B, H, L, E)
    query, (B, Hkv, S, E) key and (B, Hkv, S, Ev) value; Hkv < H with enable_gqa (query heads
    share key / value heads in consecutive groups). scale: 1 / sqrt(E) when None. Returns the
    (B, H, L, Ev) output; with return_lse=True also the rows' log-sum-exp (B, H, L); with
    return_aux=AuxRequest(lse=..., max_scores=...) (output, AuxOutput(lse, max_scores)).
    16-bit inputs compute in float32 (their lse stays float32). kernel_options is accepted
    and changes nothing."""
    _check(query, key, value, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError(f"{OP}: give return_lse or return_aux, not both")
    if return_aux is not None and not isinstance(return_aux, AuxRequest):
        raise TypeError(f"{OP}: return_aux must be an AuxRequest, got {type(return_aux).__name__}")
    if kernel_options is not None and not isinstance(kernel_options, dict):
        raise TypeError(f"{OP}: kernel_options must be a dict or None, got "
                        f"{type(kernel_options).__name__}")
    B, H, L, E = query.shape
    hk, S = key.shape[1], key.shape[2]
    work = dt.float32 if query.dtype.itemsize < 4 else query.dtype
    q, k, v = (t.astype(work) for t in (query, key, value))
    if hk != H:   # each key / value head serves H // hk consecutive query heads
        k, v = (T.broadcast_to(t[:, :, None], (B, hk, H // hk, *t.shape[2:]))
                .reshape(B, H, *t.shape[2:]) for t in (k, v))
    s = (1.0 / math.sqrt(E) if E else 1.0) if scale is None else float(scale)
    scores = T.matmul(q, T.swapaxes(k, -1, -2)) * s
    grid = (None if score_mod is None and block_mask is None   # the index tensors the mods see
            else _grid(B, H, L, S, query.device))
    if score_mod is not None:
        if not _accepts(score_mod, 5, OP):
            raise TypeError(f"{OP}: score_mod takes (score, b, h, q_idx, kv_idx)")
        scores = score_mod(scores, *grid)
        if not isinstance(scores, Tensor) or tuple(scores.shape) != (B, H, L, S):
            raise ValueError(f"{OP}: score_mod must return the scores' shape {(B, H, L, S)}, got "
                             f"{getattr(scores, 'shape', type(scores).__name__)}")
        scores = scores.astype(work)
    if block_mask is not None:
        scores = T.where(_mask_for(block_mask, grid, B, H, L, S, query.device), scores, -math.inf)
    top = T.max(scores, axis=-1, keepdims=True)
    top_safe = T.where(top == -math.inf, 0.0, top).detach()   # (a row may attend to nothing)
    e = T.exp(scores - top_safe)
    total = e.sum(-1, keepdims=True)
    empty = total == 0
    out = T.matmul(e / T.where(empty, 1.0, total), v).astype(query.dtype)
    lse = T.where(empty, -math.inf, T.log(T.where(empty, 1.0, total)) + top_safe)[..., 0]
    if return_lse:
        return out, lse
    if return_aux is not None:
        return out, AuxOutput(lse if return_aux.lse else None,
                              top[..., 0].detach() if return_aux.max_scores else None)
    return out
