"""Variable-length sequences for the recurrent layers, as torch.nn.utils.rnn.

A `PackedSequence` holds a batch of sequences of different lengths time step by time step:
`data` (sum of lengths, *) stacks, for t = 0, 1, ..., the step-t entries of the sequences
still running at t, longest first, and `batch_sizes` (a CPU int64 tensor) says how many
there are at each t. `RNN`, `LSTM` and `GRU` take one and return one: each sequence stops at
its own length (its final state is the state after its last step, and a reverse direction
starts at its own end), with no work spent on padding.

Packing and unpacking are each one gather (so autograd carries gradients through them):
`pack_padded_sequence` / `pad_packed_sequence`, `pack_sequence` / `unpack_sequence`, and
`pad_sequence` / `unpad_sequence` for plain padded batches.

>>> import tensor as T
>>> seqs = [T.tensor([1.0, 2.0, 3.0]), T.tensor([4.0]), T.tensor([5.0, 6.0])]
>>> p = pack_sequence(seqs, enforce_sorted=False)
>>> p.data.tolist(), p.batch_sizes.tolist()
([1.0, 5.0, 4.0, 2.0, 6.0, 3.0], [3, 2, 1])
>>> padded, lengths = pad_packed_sequence(p, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0], [5.0, 6.0, 0.0]], [3, 1, 2])
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import tensor as T
from tensor import Tensor


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """Sequences packed time-major (see the module's docstring). sorted_indices[i] is the
    batch position of the i-th longest sequence, unsorted_indices its inverse; both None when
    the batch was packed in its own order (enforce_sorted=True). As PyTorch's, the constructor
    fills in unsorted_indices from sorted_indices when it is not given (and a layer or
    pad_packed_sequence then puts the batch back in its order) and takes the legacy
    PackedSequence((data, batch_sizes)) form; batch_sizes (a tensor or a list of ints) is
    kept on the CPU, where PyTorch refuses one on another device."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            if not (isinstance(data, tuple | list) and len(data) == 2):
                raise TypeError("PackedSequence: expected (data, batch_sizes), or data and "
                                "batch_sizes as two arguments")
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor):
            batch_sizes = T.asarray(np.asarray(batch_sizes, dtype=np.int64), device="cpu")
        batch_sizes = batch_sizes.to("cpu")     # read on the host every step (PyTorch refuses)
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """The same sequences with data (and the index tensors, for a device) moved or cast as
        Tensor.to does; batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if i is None else i.to(data.device) for i in (self.sorted_indices,
                                                                 self.unsorted_indices)]
        return PackedSequence(data, self.batch_sizes, *idx)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()

    def pin_memory(self) -> PackedSequence:
        return PackedSequence(self.data.pin_memory(), self.batch_sizes, self.sorted_indices,
                              self.unsorted_indices)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self) -> PackedSequence:
        return self.to("cuda")

    def float(self) -> PackedSequence:
        return self.to(T.float32)

    def double(self) -> PackedSequence:
        return self.to(T.float64)

    def half(self) -> PackedSequence:
        return self.to(T.float16)

    def long(self) -> PackedSequence:
        return self.to(T.int64)

    def int(self) -> PackedSequence:
        return self.to(T.int32)

    def short(self) -> PackedSequence:
        return self.to(T.int16)

    def char(self) -> PackedSequence:
        return self.to(T.int8)

    def byte(self) -> PackedSequence:
        return self.to(T.uint8)


def batch_sizes_of(packed: PackedSequence, op: str = "PackedSequence") -> list[int]:
    """The packed batch's sizes per time step, as Python ints, checked against its data (a
    hand-made PackedSequence whose sizes do not add up to its rows would be read wrongly)."""
    sizes = [int(b) for b in packed.batch_sizes.tolist()]
    rows = packed.data.shape[0] if packed.data.ndim else None
    if (any(b <= 0 for b in sizes) or any(a < b for a, b in zip(sizes, sizes[1:]))
            or sum(sizes) != rows):
        raise ValueError(f"{op}: batch_sizes must be positive and non-increasing and add up to "
                         f"the data's {rows} rows, got {sizes}")
    n = sizes[0] if sizes else 0
    for what, idx in (("sorted_indices", packed.sorted_indices),
                      ("unsorted_indices", packed.unsorted_indices)):
        if idx is not None and tuple(idx.shape) != (n,):
            raise ValueError(f"{op}: {what} must have one entry per sequence ({n}), got shape "
                             f"{tuple(idx.shape)}")
    return sizes


def _lengths(lengths, n: int, steps: int, op: str, least: int = 1) -> np.ndarray:
    """lengths as an int64 host array, checked against a batch of n sequences of steps steps
    (each length at least `least`: a packed sequence may not be empty, a padded one may)."""
    host = np.asarray(lengths.tolist() if isinstance(lengths, Tensor) else lengths)
    if host.ndim != 1 or host.size and host.dtype.kind not in "iu":
        raise TypeError(f"{op}: lengths must be a 1-D sequence of integers, got {host!r}")
    host = host.astype(np.int64)
    if host.size != n:
        raise ValueError(f"{op}: expected {n} lengths (the batch size), got {host.size}")
    if host.size and host.min() < least:
        bound = "greater than 0" if least == 1 else f"at least {least}"
        raise ValueError(f"{op}: every length must be {bound}, got {host.tolist()}")
    if host.size and host.max() > steps:
        raise ValueError(f"{op}: a length of {host.max()} exceeds the input's {steps} time steps")
    return host


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """For lengths in decreasing order: how many sequences run at each step."""
    steps = int(sorted_lengths[0]) if sorted_lengths.size else 0
    return (sorted_lengths[None, :] > np.arange(steps)[:, None]).sum(axis=1)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, N, *) ((N, L, *) with batch_first) of sequences of the given
    lengths (integers: float lengths raise a TypeError, where PyTorch truncates them). With
    enforce_sorted=True the lengths must be in decreasing order; otherwise the batch is sorted
    here and the PackedSequence records the order (the recurrent layers and
    pad_packed_sequence put it back)."""
    op = "pack_padded_sequence"
    if not isinstance(input, Tensor) or input.ndim < 2:
        got = tuple(input.shape) if isinstance(input, Tensor) else type(input).__name__
        raise ValueError(f"{op}: expected a padded batch of at least 2 dimensions, got {got}")
    n, steps = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    host = _lengths(lengths, n, steps, op)
    if enforce_sorted:
        if np.any(host[1:] > host[:-1]):
            raise RuntimeError(f"{op}: lengths must be in decreasing order when enforce_sorted="
                               f"True, got {host.tolist()} (pass enforce_sorted=False to sort "
                               f"them here)")
        order = np.arange(n)
    else:
        order = np.argsort(-host, kind="stable")
    sizes = _batch_sizes(host[order])
    # row t * N + b of the (L * N, *) padded batch for each packed entry (time-major)
    flat = np.concatenate([t * n + order[:b] for t, b in enumerate(sizes)]) if n else \
        np.zeros(0, np.int64)
    x = T.swapaxes(input, 0, 1) if batch_first else input
    x = T.reshape(x, (steps * n,) + tuple(input.shape[2:]))
    data = x[T.asarray(flat.astype(np.int64), device=input.device)]
    if enforce_sorted:
        return PackedSequence(data, T.asarray(sizes.astype(np.int64), device="cpu"))
    return PackedSequence(data, T.asarray(sizes.astype(np.int64), device="cpu"),
                          T.asarray(order.astype(np.int64), device=input.device),
                          T.asarray(np.argsort(order).astype(np.int64), device=input.device))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """(padded, lengths): the inverse of pack_padded_sequence. padded is (T, N, *) ((N, T, *)
    with batch_first), T the longest length or total_length, in the batch's original order;
    lengths a CPU int64 tensor."""
    op = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expected a PackedSequence, got {type(sequence).__name__}")
    sizes = batch_sizes_of(sequence, op)
    n, steps = (sizes[0] if sizes else 0), len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"{op}: total_length={total_length} is less than the longest "
                             f"sequence's length {steps}")
        steps = total_length
    data = sequence.data
    feat = tuple(data.shape[1:])
    # each (t, b) slot's packed row; padding reads one extra row holding padding_value
    pos = np.full((steps, n), data.shape[0], np.int64)
    off = 0
    for t, b in enumerate(sizes):
        pos[t, :b] = off + np.arange(b)
        off += b
    lengths = (pos < data.shape[0]).sum(axis=0)
    order = np.arange(n)
    if sequence.unsorted_indices is not None:
        order = np.asarray(sequence.unsorted_indices.tolist(), np.int64)
        pos, lengths = pos[:, order], lengths[order]
    pad = T.full((1,) + feat, padding_value, dtype=data.dtype, device=data.device)
    rows = T.concat([data, pad], axis=0)
    idx = pos.T if batch_first else pos
    padded = rows[T.asarray(np.ascontiguousarray(idx), device=data.device)]
    return padded, T.asarray(lengths.astype(np.int64), device="cpu")


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes (L_i, *) into one (max L, N, *) ((N, max L, *) with
    batch_first) batch, padded with padding_value on the right (or left)."""
    op = "pad_sequence"
    seqs = list(sequences)
    if padding_side not in ("right", "left"):
        raise ValueError(f"{op}: padding_side must be 'right' or 'left', got {padding_side!r}")
    if not seqs:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    if not all(isinstance(s, Tensor) and s.ndim >= 1 for s in seqs):
        raise TypeError(f"{op}: expected tensors of at least 1 dimension")
    feat = tuple(seqs[0].shape[1:])
    for s in seqs:
        if tuple(s.shape[1:]) != feat:
            raise ValueError(f"{op}: the trailing shapes differ: {feat} and {tuple(s.shape[1:])}")
    steps = max(s.shape[0] for s in seqs)
    dtype = T.result_type(*seqs)
    rows = []
    for s in seqs:
        gap = T.full((steps - s.shape[0],) + feat, padding_value, dtype=dtype, device=s.device)
        s = s.astype(dtype, copy=False)
        rows.append(T.concat([s, gap] if padding_side == "right" else [gap, s], axis=0))
    return T.stack(rows, axis=0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences (L_i, *) in a right-padded batch: the inverse of pad_sequence (a
    length may be 0, for an empty sequence)."""
    x = padded_sequences if batch_first else T.swapaxes(padded_sequences, 0, 1)
    host = _lengths(lengths, x.shape[0], x.shape[1], "unpad_sequence", least=0)
    return [x[i, :int(k)] for i, k in enumerate(host)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (L_i, *) (longest first unless enforce_sorted=False)."""
    seqs = list(sequences)
    return pack_padded_sequence(pad_sequence(seqs), [s.shape[0] for s in seqs],
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of tensors that pack_sequence packed, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0..n-1 (PackedSequence's unsorted_indices from its
    sorted_indices); None stays None."""
    if permutation is None:
        return None
    out = T.empty_like(permutation)
    out[permutation] = T.arange(permutation.shape[0], dtype=permutation.dtype,
                                device=permutation.device)
    return out


__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence", "invert_permutation"]
