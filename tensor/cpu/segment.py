"""CPU segmented reductions (tensor/cpu/csrc/segment.h; CUDA twin: tensor/cuda/segment.py):
the backend's segment_reduce. The op layer is tensor/segment.py."""
from __future__ import annotations

from .. import dtypes as dt
from . import kernels as K

OPS = {"sum": 0, "prod": 1, "amax": 2, "amin": 3}
# the dtypes the kernels are built for (16-bit floats are reduced in float32 by the op layer)
DTYPES = (dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64, dt.uint64,
          dt.float32, dt.float64)

K.register_family("segment", lambda d: (
    f'#include "segment.h"\nSX_SEGMENT({d.sfx}, {d.ctype})\n',
    f"void sx_segment_reduce_{d.sfx}(intptr_t vals, intptr_t order, intptr_t offs, intptr_t out, "
    "int64_t m, int64_t inner, int op, int include_self, int nthreads);\n"
    f"int sx_segment_scatter_{d.sfx}(intptr_t vals, intptr_t keys, intptr_t out, int64_t n, int64_t m, "
    "int64_t inner, int op, int include_self, int nthreads);"))


def segment_order(keys, m: int):
    """(None, None): the CPU combines rows by their keys directly (segment_reduce's direct
    form: one pass in source order, the same bits as sorting them first), which costs less
    than sorting them and then gathering the rows through the order."""
    return None, None


def segment_reduce(values, seg, order, offsets, out, reduce: str, include_self: bool) -> None:
    """Row t of out (contiguous (m, inner)) combined with the rows order[offsets[t] ..
    offsets[t + 1]) of values (contiguous (n, inner), out's dtype), in that order; order int64
    (n,) or None (the identity), offsets int64 (m + 1,) ascending from 0 to at most n; both
    None: row i of values goes to row seg[i] (contiguous int64 (n,)), in the order of i.
    include_self: start from out's row, else from the segment's first row; empty segments are
    left alone. reduce: sum, prod, amax, amin."""
    m = out.shape[0] if out.ndim else 0
    inner = out.numel() // m if m else 0
    if m == 0 or inner == 0:
        return
    d = out.dtype
    if order is None and offsets is None:
        n = seg.numel()
        if n and K.kernel("segment", d, f"sx_segment_scatter_{d.sfx}")(
                values.data_ptr(), seg.data_ptr(), out.data_ptr(), n, m, inner, OPS[reduce],
                int(bool(include_self)), K._num_threads):
            raise MemoryError(f"segment_reduce: could not allocate {m} bytes of flags")
        return
    K.kernel("segment", d, f"sx_segment_reduce_{d.sfx}")(
        values.data_ptr(), 0 if order is None else order.data_ptr(), offsets.data_ptr(),
        out.data_ptr(), m, inner, OPS[reduce], int(bool(include_self)), K._num_threads)


__all__ = ["segment_order", "segment_reduce"]
