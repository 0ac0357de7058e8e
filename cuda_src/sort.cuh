/* CUDA sort kernels (family "sort", one module per dtype; CPU twin: tensor/cpu/csrc/sort.h).
 *
 * A row sort is a stable LSD radix sort of (key, flat position) pairs over all rows at once,
 * run by the index family's radix passes (cuda_src/index.cuh) twice: first by the value keys
 * (scalar/sort_key.h, the CPU's), then by row number. Both passes are stable, so each row ends
 * in value order with ties in position order: the unique stable order, the CPU's bit for bit.
 *   sx_sort_keys_<sfx>:   key[i] = sort key of x[i], val[i] = i
 *   sx_sort_rowkey_<sfx>: key[i] = val[i] / L (the row of the element now at i)
 *   sx_sort_out_<sfx>:    iout[i] = val[i] % L, vout[i] = x[val[i]] (vout may be null)
 *   sx_searchsorted_<sfx>: one thread per value, a binary search by the same keys. */
#ifndef STRIDEX_SORT_CUH
#define STRIDEX_SORT_CUH

#include "common.cuh"
#include "scalar/sort_key.h"

#define SX_SBLK 256   /* threads per block of the sort kernels */

#define SX_FOR_I(n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)blockDim.x * gridDim.x)

/* key functor of each dtype: U is the unsigned integer of its width */
#define SX_SKEY(S, UT) struct sx_skey_##S { typedef UT U; \
    SX_DEV uint64_t key(UT r, int desc) { return sx_sort_key_##S(r, desc); } };
SX_SKEY(b8, uint8_t) SX_SKEY(u8, uint8_t) SX_SKEY(i8, uint8_t) SX_SKEY(i16, uint16_t)
SX_SKEY(i32, uint32_t) SX_SKEY(i64, uint64_t) SX_SKEY(f16, uint16_t) SX_SKEY(bf16, uint16_t)
SX_SKEY(f32, uint32_t) SX_SKEY(f64, uint64_t) SX_SKEY(u16, uint16_t) SX_SKEY(u32, uint32_t)
SX_SKEY(u64, uint64_t)

template <class K>
SX_DEV void sx_sort_keys_t(const typename K::U *x, int64_t n, int desc, int64_t *key, int64_t *val) {
    SX_FOR_I(n) { key[i] = (int64_t)K::key(x[i], desc); val[i] = i; }
}

SX_DEV void sx_sort_rowkey_impl(const int64_t *val, int64_t n, int64_t L, int64_t *key) {
    SX_FOR_I(n) key[i] = val[i] / L;
}

template <class U>
SX_DEV void sx_sort_out_t(const U *x, const int64_t *val, int64_t n, int64_t L, U *vout, int64_t *iout) {
    SX_FOR_I(n) {
        int64_t v = val[i];
        iout[i] = v % L;
        if (vout) vout[i] = x[v];
    }
}

template <class K>
SX_DEV void sx_searchsorted_t(int64_t n, const typename K::U *a, int64_t m, const typename K::U *v,
                              int right, int64_t *out) {
    SX_FOR_I(m) {
        uint64_t kv = K::key(v[i], 0);
        int64_t lo = 0, hi = n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            uint64_t km = K::key(a[mid], 0);
            if (right ? km <= kv : km < kv) lo = mid + 1; else hi = mid;
        }
        out[i] = lo;
    }
}

#endif
