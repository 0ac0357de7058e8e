"""CUDA segmented reductions (family "segment", cuda_src/segment.cuh): the backend's
segment_reduce, the CPU's contract (tensor/cpu/segment.py) and the same bits: one thread per
(segment, column) of the output combines the segment's rows in order. No atomics."""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK

BLOCK = 256   # SG_BLOCK
OPS = {"sum": 0, "prod": 1, "amax": 2, "amin": 3}
DTYPES = (dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64, dt.uint64,
          dt.float32, dt.float64)


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s, t = d.sfx, d.ctype
    return '#include "segment.cuh"\n', {f"sx_segment_reduce_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SG_BLOCK) sx_segment_reduce_{s}('
        f"const {t} *v, const int64_t *o, const int64_t *f, {t} *y, int64_t m, int64_t inner, "
        f"int op, int include_self) {{ sg_reduce<{t}>(v, o, f, y, m, inner, op, include_self); }}"),
        f"sx_segment_offsets_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SG_BLOCK) sx_segment_offsets_{s}('
        "const int64_t *keys, int64_t n, int64_t m, int64_t *off) { sg_offsets(keys, n, m, off); }")}


CK.register_family("segment", entries, DTYPES, exact=True)


def segment_reduce(values, seg, order, offsets, out, reduce: str, include_self: bool) -> None:
    """The CPU's segment_reduce on CUDA tensors (asynchronous); without an order and offsets,
    seg's are made here (segment_order)."""
    from . import runtime as R
    m = out.shape[0] if out.ndim else 0
    inner = out.numel() // m if m else 0
    if m == 0 or inner == 0:
        return
    if order is None and offsets is None:
        order, offsets = segment_order(seg, m)
    d = out.dtype
    p = lambda t: C.c_void_p(0 if t is None else t.data_ptr())   # noqa: E731
    k = R.kernel("segment", d, f"sx_segment_reduce_{d.sfx}", out.device)
    k(R.blocks_for(m * inner, BLOCK, out.device), BLOCK, p(values), p(order), p(offsets), p(out),
      C.c_int64(m), C.c_int64(inner), C.c_int(OPS[reduce]), C.c_int(int(bool(include_self))))


def segment_order(keys, m: int):
    """The CPU's segment_order on CUDA: the index family's stable LSD radix sort of the keys
    (tensor/cuda/index.py), then one binary search per run start. No atomics."""
    from . import index as CI
    from . import runtime as R
    n = keys.numel()
    offsets = empty((m + 1,), dt.int64, keys.device)
    if n == 0:   # the searches below find 0 everywhere
        order, skeys = empty((0,), dt.int64, keys.device), keys
    else:
        order, skeys = CI._sort_positions(keys.device, keys, n, 0, max(m - 1, 0))
    k = R.kernel("segment", dt.int64, "sx_segment_offsets_i64", keys.device)
    k(R.blocks_for(m + 1, BLOCK, keys.device), BLOCK, C.c_void_p(skeys.data_ptr()), C.c_int64(n),
      C.c_int64(m), C.c_void_p(offsets.data_ptr()))
    return order, offsets


__all__ = ["segment_order", "segment_reduce"]
