"""CPU host side of indexing (kernels in tensor/cpu/csrc/index.h; CUDA twin: tensor/cuda/index.py).

The kernel family "index": module ``index`` (dtype-free: offsets, gather / take / put /
scatter-assign on 1/2/4/8/16-byte elements, nonzero, counts, repeat) and modules
``index_<sfx>`` (the accumulating scatter in each dtype). The functions take the same
(element) shapes and strides as their CUDA twins, plus the device; index checks return the
first bad position before anything is written.
"""
from __future__ import annotations

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as K

MAXDIM = 32     # SX_MAXDIM in csrc/common.h

_WIDTHS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "sx_w16"}
_CDEF_COMMON = """
int64_t sx_index_offsets(int k, int nd, const int64_t *shape, const intptr_t *ptrs,
    const int64_t *ist, const int64_t *sizes, const int64_t *xst, intptr_t out, int nthreads);
int64_t sx_count_nonzero(int64_t n, intptr_t mask, int nthreads);
void sx_count_rows(int64_t rows, int64_t len, intptr_t mask, intptr_t out, int nthreads);
void sx_nonzero_fill(int nd, const int64_t *shape, intptr_t mask, int mode,
    const intptr_t *coords, intptr_t off, const int64_t *st, int nthreads);
int64_t sx_repeat_index(int64_t n, intptr_t counts, intptr_t out);
int64_t sx_check_range(int64_t n, intptr_t idx, int64_t lo, int64_t hi);
"""
_CDEF_GATHER = ("void sx_gather_{0}(int64_t nb, intptr_t off, int64_t osb, int nr, const int64_t *rshape, "
                "const int64_t *sst, const int64_t *dst_st, intptr_t src, intptr_t dst, int nthreads);")
_CDEF_TAKE = ("int64_t sx_take_{0}(int64_t nb, intptr_t idx, int64_t is, int64_t size, int64_t xs, "
              "int64_t osb, intptr_t src, intptr_t dst, int nthreads);")
_CDEF_PUT = ("int64_t sx_put_{0}(int64_t nb, intptr_t idx, int64_t is, int64_t size, int64_t xs, "
             "intptr_t val, int64_t vs, intptr_t dst);")
_CDEF_SCATTER = ("void {0}(int nbd, const int64_t *bshape, const int64_t *vbs, intptr_t off, int nr, "
                 "const int64_t *rshape, const int64_t *dst_st, const int64_t *vrs, intptr_t dst, "
                 "intptr_t val, int nthreads);")


def source(d: dt.DType | None) -> tuple[str, str]:
    """Module `index`: dtype-independent kernels; module `index_<sfx>`: accumulation in d."""
    if d is not None:
        name = f"sx_scatter_add_{d.sfx}"
        mac = "SX_SCATTER_CADD" if d.kind == "c" else "SX_SCATTER_ADD"
        return f'#include "index.h"\n{mac}({d.sfx})\n', _CDEF_SCATTER.format(name)
    src = ["#define SX_INDEX_COMMON", '#include "index.h"']
    cdef = [_CDEF_COMMON]
    for w, t in _WIDTHS.items():
        src += [f"SX_{m}({w}, {t})" for m in ("GATHER", "TAKE", "PUT", "SCATTER_SET")]
        cdef += [_CDEF_GATHER.format(w), _CDEF_TAKE.format(w), _CDEF_PUT.format(w),
                 _CDEF_SCATTER.format(f"sx_scatter_{w}")]
    return "\n".join(src) + "\n", "\n".join(cdef)


K.register_family("index", source)


def _k(name: str, d: dt.DType | None = None):
    return K.kernel("index", d, name)


def _nt() -> int:
    return K._num_threads


def index_offsets(device, shape, ptrs, strides, sizes, xst, off) -> int:
    """off[p] = sum_j wrap(a_j[p]) * xst[j] over the (coalesced) index space `shape`; -1, or
    j * n + p for the first bad index of the first array that has one."""
    return _k("sx_index_offsets")(len(ptrs), len(shape), list(shape), list(ptrs),
                                  [s for st in strides for s in st], list(sizes), list(xst),
                                  off.data_ptr(), _nt())


def take(device, itemsize: int, nb: int, idx_ptr: int, istride: int, size: int, xs: int, osb: int,
         src_ptr: int, dst_ptr: int) -> int:
    """dst[b * osb] = src[wrap(idx[b * istride]) * xs] into fresh memory; -1 or the first bad b."""
    return _k(f"sx_take_{itemsize}")(nb, idx_ptr, istride, size, xs, osb, src_ptr, dst_ptr, _nt())


def put(device, itemsize: int, nb: int, idx_ptr: int, istride: int, size: int, xs: int,
        val_ptr: int, vs: int, dst_ptr: int) -> int:
    """dst[wrap(idx[b * istride]) * xs] = val[b * vs] in index order; -1 or the first bad b
    (nothing written then)."""
    return _k(f"sx_put_{itemsize}")(nb, idx_ptr, istride, size, xs, val_ptr, vs, dst_ptr)


def gather(device, itemsize: int, nb: int, off, osb: int, rshape, sst, dst_st, src_ptr: int,
           dst_ptr: int) -> None:
    """dst[b * osb + dr(r)] = src[off[b] + sr(r)] for b < nb, r over rshape (element strides)."""
    _k(f"sx_gather_{itemsize}")(nb, off.data_ptr(), osb, len(rshape), list(rshape), list(sst),
                                list(dst_st), src_ptr, dst_ptr, _nt())


def scatter(device, dtype: dt.DType, accumulate: bool, bshape, vbs, off, rshape, dst_st, vrs,
            dst_ptr: int, val_ptr: int, bounds=None, guard=None) -> None:
    """dst[off[b] + dr(r)] = (or +=) val[vb(b) + vr(r)], sequentially in index order (the last
    assignment wins). bounds and guard are the CUDA twin's (its sort needs bounds; its deferred
    checks need the guard, the CPU's checks have raised already); unused here."""
    fn = _k(f"sx_scatter_add_{dtype.sfx}", dtype) if accumulate else _k(f"sx_scatter_{dtype.itemsize}")
    fn(len(bshape), list(bshape), list(vbs), off.data_ptr(), len(rshape), list(rshape), list(dst_st),
       list(vrs), dst_ptr, val_ptr, _nt())


def check_range(device, n: int, idx_ptr: int, lo: int, hi: int) -> int:
    """The first i < n with the contiguous int64 idx[i] outside [lo, hi), or -1."""
    return _k("sx_check_range")(n, idx_ptr, lo, hi)


def count_nonzero(m) -> int:
    return _k("sx_count_nonzero")(m.numel(), m.data_ptr(), _nt())


def nonzero_prefix(m):
    """(count, None): the CPU fill needs no prefix counts."""
    return count_nonzero(m), None


def nonzero_fill(m, mode: int, coords=(), off=None, st=(), toff=None) -> None:
    """Positions of m's nonzero bytes in row-major order: mode 0 writes coordinate d to the
    int64 tensor coords[d]; mode 1 writes sum_d coord_d * st[d] to off."""
    if m.ndim > MAXDIM:     # the kernel's coordinate arrays hold MAXDIM axes
        raise ValueError(f"nonzero: indexing supports at most {MAXDIM} dimensions (not counting "
                         f"size-1 ones), got a mask of shape {tuple(m.shape)}")
    if mode == 1:
        _k("sx_nonzero_fill")(m.ndim, list(m.shape), m.data_ptr(), 1, [0], off.data_ptr(), list(st),
                              _nt())
    else:
        _k("sx_nonzero_fill")(m.ndim, list(m.shape), m.data_ptr(), 0, [c.data_ptr() for c in coords],
                              0, [0] * m.ndim, _nt())


def count_rows(rows: int, length: int, m, out) -> None:
    """out[r] = nonzero bytes of row r of the contiguous (rows, length) bool tensor m."""
    _k("sx_count_rows")(rows, length, m.data_ptr(), out.data_ptr(), _nt())


def repeat_index(n: int, counts):
    """(total, idx) with idx the int64 positions i repeated counts[i] times, or
    (-(i + 1), None) for the first negative count i, (-(n + i + 1), None) for a first count i
    past INT64_MAX / n (the total could overflow int64)."""
    total = _k("sx_repeat_index")(n, counts.data_ptr(), 0)
    if total < 0:
        return total, None
    idx = empty((total,), dt.int64, counts.device)
    if total:
        _k("sx_repeat_index")(n, counts.data_ptr(), idx.data_ptr())
    return total, idx
