"""CUDA host side of sorting (kernels in cuda_src/sort.cuh; CPU twin: tensor/cpu/sort.py).

Family "sort", one module per dtype. Rows of up to SHORT_MAX elements (topk / argsort over a
last axis of a few thousand) are sorted one block per row, or several short rows per block,
in shared memory: a bitonic network over the distinct (key, position) pairs. Longer rows go
through two stable LSD radix sorts of all rows' (key, flat position) pairs with the index
family's passes (tensor/cuda/index.py radix_sort): by the value keys the CPU uses
(cuda_src/scalar/sort_key.h; only the key's width in bits is sorted), then by row. Both reach
the unique stable order, so the indices equal the CPU's bit for bit. No atomics, no CUB/Thrust.
"""
from __future__ import annotations

import ctypes as C

from .. import dtypes as dt
from .._tensor import empty
from . import index as CI
from . import kernels as CK

FAMILY = "sort"
BLOCK = 256   # SX_SBLK
SHORT_MAX = 4096    # SX_SSORT_MAX: the longest row the shared-memory sort takes
SHORT_TILE = 2048   # SX_SSORT_TILE: elements one block of it takes when rows are shorter
SHORT_WAVES = 16    # its grid: tiles of rows go grid-stride over at most this many blocks per SM
UNSIGNED = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
_K = 'extern "C" __global__ void __launch_bounds__(SX_SBLK) '


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s, u = d.sfx, UNSIGNED[d.itemsize]
    return '#include "sort.cuh"\n', {
        f"sx_sort_keys_{s}": f"{_K}sx_sort_keys_{s}(const {u} *x, int64_t n, int desc, int64_t *key, "
                             f"int64_t *val) {{ sx_sort_keys_t<sx_skey_{s}>(x, n, desc, key, val); }}",
        f"sx_sort_rowkey_{s}": f"{_K}sx_sort_rowkey_{s}(const int64_t *val, int64_t n, int64_t L, "
                               f"int64_t *key) {{ sx_sort_rowkey_impl(val, n, L, key); }}",
        f"sx_sort_out_{s}": f"{_K}sx_sort_out_{s}(const {u} *x, const int64_t *val, int64_t n, int64_t L, "
                            f"{u} *vout, int64_t *iout) {{ sx_sort_out_t<{u}>(x, val, n, L, vout, iout); }}",
        f"sx_sort_short_{s}": f"{_K}sx_sort_short_{s}(const {u} *x, int64_t rows, int64_t L, int lgP, "
                              f"int lgR, int desc, {u} *vout, int64_t *iout) {{ sx_sort_short_t<"
                              f"sx_skey_{s}, {str(d.itemsize == 8).lower()}>(x, rows, L, lgP, lgR, desc, "
                              f"vout, iout); }}",
        f"sx_searchsorted_{s}": f"{_K}sx_searchsorted_{s}(int64_t n, const {u} *a, int64_t m, const {u} *v, "
                                f"int right, int64_t *out) "
                                f"{{ sx_searchsorted_t<sx_skey_{s}>(n, a, m, v, right, out); }}",
    }


CK.register_family(FAMILY, entries, dt.REAL)   # integer work only: FMA contraction is moot


def _launch(d, name: str, n: int, device, *args) -> None:
    from . import runtime as R
    R.kernel(FAMILY, d, f"{name}_{d.sfx}", device)(R.blocks_for(max(n, 1), BLOCK, device), BLOCK, *args)


def _p(t) -> C.c_void_p:
    return C.c_void_p(t.data_ptr() if t is not None else 0)


def key_bits(d: dt.DType) -> int:
    """Bits of d's sort key (cuda_src/scalar/sort_key.h): bool's is one."""
    return 1 if d is dt.bool_ else 8 * d.itemsize


def sort_rows(x, values_out, indices_out, rows: int, L: int, descending: bool) -> None:
    """Each of the `rows` contiguous rows of length L of x sorted stably: indices_out (int64,
    contiguous) gets the positions in the row, values_out (or None) the values."""
    n, d, device = rows * L, x.dtype, x.device
    if n == 0:
        return
    if L <= SHORT_MAX:
        _sort_short(x, values_out, indices_out, rows, L, descending)
        return
    key, val = empty((n,), dt.int64, device), empty((n,), dt.int64, device)
    _launch(d, "sx_sort_keys", n, device, _p(x), C.c_int64(n), C.c_int(int(bool(descending))),
            _p(key), _p(val))
    val, key = CI.radix_sort(device, key, val, n, key_bits(d))
    if rows > 1:
        _launch(d, "sx_sort_rowkey", n, device, _p(val), C.c_int64(n), C.c_int64(L), _p(key))
        val, key = CI.radix_sort(device, key, val, n, (rows - 1).bit_length())
    _launch(d, "sx_sort_out", n, device, _p(x), _p(val), C.c_int64(n), C.c_int64(L),
            _p(values_out), _p(indices_out))


def short_plan(rows: int, L: int, itemsize: int) -> tuple[int, int, int, int]:
    """(lgP, lgR, threads, shared bytes) of the shared-memory sort of rows of L <= SHORT_MAX:
    rows padded to P = 2**lgP, R = 2**lgR of them per block (E = R P pairs)."""
    lgP = (L - 1).bit_length()
    lgR = max(0, min(SHORT_TILE.bit_length() - 1 - lgP, (rows - 1).bit_length()))
    E = 1 << (lgP + lgR)
    pair = 10 if itemsize == 8 else 8   # a 64-bit key and a 16-bit position, or one packed word
    return lgP, lgR, max(32, min(BLOCK, E // 2)), E * pair


def _sort_short(x, values_out, indices_out, rows: int, L: int, descending: bool) -> None:
    from . import runtime as R
    d, device = x.dtype, x.device
    lgP, lgR, threads, smem = short_plan(rows, L, d.itemsize)
    tiles = (rows + (1 << lgR) - 1) >> lgR
    grid = max(1, min(tiles, R.sm_count(device) * SHORT_WAVES))
    R.kernel(FAMILY, d, f"sx_sort_short_{d.sfx}", device)(
        grid, threads, _p(x), C.c_int64(rows), C.c_int64(L), C.c_int(lgP), C.c_int(lgR),
        C.c_int(int(bool(descending))), _p(values_out), _p(indices_out), shared=smem)


def searchsorted(a, v, out, right: bool) -> None:
    """out[j] (int64) = the insertion point of v[j] in the ascending contiguous 1-d a (left or
    right of equal elements); a, v, out contiguous, one dtype."""
    m = v.numel()
    if m == 0:
        return
    _launch(a.dtype, "sx_searchsorted", m, a.device, C.c_int64(a.numel()), _p(a), C.c_int64(m),
            _p(v), C.c_int(int(bool(right))), _p(out))
