/* CUDA sort kernels (family "sort", one module per dtype; CPU twin: tensor/cpu/csrc/sort.h).
 *
 * Rows of up to SX_SSORT_MAX elements: one block sorts one or more whole rows in shared memory
 * (sx_sort_short_<sfx>, below). Longer rows: a stable LSD radix sort of (key, flat position)
 * pairs over all rows at once, run by the index family's radix passes (cuda_src/index.cuh)
 * twice: first by the value keys (scalar/sort_key.h, the CPU's), then by row number. Both
 * passes are stable, so each row ends in value order with ties in position order: the unique
 * stable order, the CPU's bit for bit. The short sort orders the distinct pairs (key, position)
 * and so reaches the same unique order.
 *   sx_sort_short_<sfx>:  rows of L <= SX_SSORT_MAX sorted in shared memory (iout, vout)
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

/* ---- the short-row sort: a bitonic network over (key, position) in shared memory ----
 * A row of L elements is padded to P = 2^lgP >= L with keys above every real key (the
 * largest key with a position >= L), and a block takes R = 2^lgR consecutive rows (E = R P
 * elements, SX_SSORT_TILE when rows are short) so that short rows still fill a block. The
 * network is the form whose first step of each merge of size k compares i with i ^ (k - 1)
 * (a mirrored half-cleaner): every merge sorts ascending, so running it for k <= P sorts each
 * aligned segment of P on its own, all R rows in the same steps. Pairs are distinct (their
 * positions differ), so the sorted order is the unique stable one. Tiles of R rows go
 * grid-stride. Shared memory: E words (key << 32 | position) for keys of up to 32 bits, E
 * keys and E 16-bit positions for 64-bit keys. */
#define SX_SSORT_MAX 4096    /* longest row of the short sort: 40 KiB of pairs at most */
#define SX_SSORT_TILE 2048   /* elements a block takes when rows are shorter */

template <bool WIDE> struct sx_ss_pairs;
template <> struct sx_ss_pairs<false> {   /* keys of <= 32 bits: one word per pair */
    uint64_t *w;
    __device__ __forceinline__ sx_ss_pairs(uint64_t *s, int) : w(s) {}
    __device__ __forceinline__ void put(int e, uint64_t k, int p) { w[e] = (k << 32) | (uint32_t)p; }
    __device__ __forceinline__ void pad(int e, int p) { put(e, 0xffffffffu, p); }
    __device__ __forceinline__ int pos(int e) const { return (int)(uint32_t)w[e]; }
    __device__ __forceinline__ void order(int i, int j) {
        uint64_t a = w[i], b = w[j];
        if (b < a) { w[i] = b; w[j] = a; }
    }
};
template <> struct sx_ss_pairs<true> {    /* 64-bit keys: keys, then positions */
    uint64_t *k; uint16_t *p;
    __device__ __forceinline__ sx_ss_pairs(uint64_t *s, int E) : k(s), p((uint16_t *)(s + E)) {}
    __device__ __forceinline__ void put(int e, uint64_t key, int q) { k[e] = key; p[e] = (uint16_t)q; }
    __device__ __forceinline__ void pad(int e, int q) { put(e, ~0ull, q); }
    __device__ __forceinline__ int pos(int e) const { return p[e]; }
    __device__ __forceinline__ void order(int i, int j) {
        uint64_t ka = k[i], kb = k[j];
        uint16_t pa = p[i], pb = p[j];
        if (kb < ka || (kb == ka && pb < pa)) { k[i] = kb; k[j] = ka; p[i] = pb; p[j] = pa; }
    }
};

template <class K, bool WIDE>
SX_DEV void sx_sort_short_t(const typename K::U *x, int64_t rows, int64_t L, int lgP, int lgR,
                            int desc, typename K::U *vout, int64_t *iout) {
    SX_EXTERN_SHARED(uint64_t, sx_ss_smem);
    const int P = 1 << lgP, E = P << lgR, half = E >> 1;
    sx_ss_pairs<WIDE> s(sx_ss_smem, E);
    const int64_t tiles = (rows + (1 << lgR) - 1) >> lgR;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {   /* uniform: barriers are safe */
        const int64_t row0 = t << lgR;
        for (int e = threadIdx.x; e < E; e += blockDim.x) {
            int64_t r = row0 + (e >> lgP);
            int p = e & (P - 1);
            if (r < rows && p < L) s.put(e, K::key(x[r * L + p], desc), p);
            else s.pad(e, p);
        }
        __syncthreads();
        for (int k = 2; k <= P; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int q = threadIdx.x; q < half; q += blockDim.x) {
                    int i = ((q & ~(j - 1)) << 1) | (q & (j - 1));   /* low end of pair q */
                    s.order(i, j == k >> 1 ? i ^ (k - 1) : i + j);
                }
                __syncthreads();
            }
        for (int e = threadIdx.x; e < E; e += blockDim.x) {
            int64_t r = row0 + (e >> lgP);
            int p = e & (P - 1);
            if (r < rows && p < L) {
                int q = s.pos(e);
                iout[r * L + p] = q;
                if (vout) vout[r * L + p] = x[r * L + q];
            }
        }
        __syncthreads();   /* the next tile overwrites the pairs */
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
