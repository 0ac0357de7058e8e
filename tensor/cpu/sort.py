"""CPU host side of sorting (kernels in tensor/cpu/csrc/sort.h; CUDA twin: tensor/cuda/sort.py).

The kernel family "sort": one module ``sort_<sfx>`` per dtype with a stable row sort and a
binary search, both by the order-preserving keys of cuda_src/scalar/sort_key.h; the families
"topk" (``topk_<sfx>``, CPU only) select the first k of the same order and "partition"
(``partition_<sfx>``, CPU only) partitions rows around kth positions of it.
"""
from __future__ import annotations

from .. import dtypes as dt
from . import kernels as K

# the unsigned type of each width: kernels read raw bits and key them
UNSIGNED = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
_CDEF = """
int sx_sort_rows_{0}(int64_t rows, int64_t L, intptr_t x, intptr_t vout, intptr_t iout,
    int desc, int nthreads);
void sx_searchsorted_{0}(int64_t n, intptr_t a, int64_t m, intptr_t v, int right, intptr_t out,
    int nthreads);
"""


def source(d: dt.DType) -> tuple[str, str]:
    return (f'#include "sort.h"\nSX_SORT({d.sfx}, {UNSIGNED[d.itemsize]})\n',
            _CDEF.format(d.sfx))


K.register_family("sort", source)

_TOPK_CDEF = """
int sx_topk_rows_{0}(int64_t rows, int64_t L, int64_t k, intptr_t x, intptr_t vout, intptr_t iout,
    int desc, int nthreads);
"""


def topk_source(d: dt.DType) -> tuple[str, str]:
    """Family "topk" (CPU only: CUDA's topk cuts a whole row sort): the selection kernel."""
    return (f'#include "sort.h"\nSX_TOPK_DEF({d.sfx}, {UNSIGNED[d.itemsize]})\n',
            _TOPK_CDEF.format(d.sfx))


K.register_family("topk", topk_source)


_PARTITION_CDEF = """
int sx_partition_rows_{0}(int64_t rows, int64_t L, intptr_t x, intptr_t vout, intptr_t iout,
    int64_t m, const int64_t *kth, int nthreads);
"""


def partition_source(d: dt.DType) -> tuple[str, str]:
    """Family "partition" (CPU only: CUDA's partition is its whole row sort): the selection."""
    return (f'#include "sort.h"\nSX_PARTITION_DEF({d.sfx}, {UNSIGNED[d.itemsize]})\n',
            _PARTITION_CDEF.format(d.sfx))


K.register_family("partition", partition_source)


def sort_rows(x, values_out, indices_out, rows: int, L: int, descending: bool) -> None:
    """Each of the `rows` contiguous rows of length L of x sorted stably: indices_out (int64,
    contiguous) gets the positions in the row, values_out (or None) the values."""
    if rows * L == 0:
        return
    d = x.dtype
    vp = values_out.data_ptr() if values_out is not None else 0
    rc = K.kernel("sort", d, f"sx_sort_rows_{d.sfx}")(rows, L, x.data_ptr(), vp, indices_out.data_ptr(),
                                                      int(bool(descending)), K._num_threads)
    if rc:
        raise MemoryError(f"sort: no memory for the scratch of rows of length {L} "
                          f"({32 * L} bytes per thread)")


def topk_rows(x, k: int, values_out, indices_out, rows: int, L: int, largest: bool) -> None:
    """The first k of each row's stable sort (descending when largest), as sort_rows then a
    cut to k would give them: x has `rows` contiguous rows of length L; indices_out (int64) and
    values_out (or None) are contiguous (rows, k). A selection (a bounded heap): O(L) a row for
    the small k topk is used with, where a whole sort costs several passes over the row."""
    if rows * k == 0:
        return
    d = x.dtype
    vp = values_out.data_ptr() if values_out is not None else 0
    rc = K.kernel("topk", d, f"sx_topk_rows_{d.sfx}")(rows, L, k, x.data_ptr(), vp, indices_out.data_ptr(),
                                                      int(bool(largest)), K._num_threads)
    if rc:
        raise MemoryError(f"topk: no memory for the heap of k={k} elements ({16 * k} bytes per thread)")


def partition_rows(x, kth: list, values_out, indices_out, rows: int, L: int) -> None:
    """NumPy's (arg)partition of each of the `rows` contiguous rows of length L of x at the
    ascending, distinct positions kth (0 <= k < L): the pivots where the stable sort puts them,
    every other element stably partitioned by its rank segment (sort.h). indices_out (int64)
    and values_out (or None) are contiguous (rows, L)."""
    if rows * L == 0:
        return
    d = x.dtype
    vp = values_out.data_ptr() if values_out is not None else 0
    fn = K.kernel("partition", d, f"sx_partition_rows_{d.sfx}")
    rc = fn(rows, L, x.data_ptr(), vp, indices_out.data_ptr(), len(kth), list(kth), K._num_threads)
    if rc:
        raise MemoryError(f"partition: no memory for the scratch of rows of length {L} "
                          f"({16 * L} bytes per thread)")


def searchsorted(a, v, out, right: bool) -> None:
    """out[j] (int64) = the insertion point of v[j] in the ascending contiguous 1-d a (left or
    right of equal elements); a, v, out contiguous, one dtype."""
    m = v.numel()
    if m == 0:
        return
    d = a.dtype
    K.kernel("sort", d, f"sx_searchsorted_{d.sfx}")(a.numel(), a.data_ptr(), m, v.data_ptr(),
                                                    int(bool(right)), out.data_ptr(), K._num_threads)
