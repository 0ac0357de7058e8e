/* Segmented reductions on CUDA (the CPU's: tensor/cpu/csrc/segment.h, the same contract and
 * the same bits): one thread per (segment, column) of out, grid-stride; it combines the
 * segment's rows order[off[t] .. off[t + 1]) one after the other, starting from out's element
 * (include_self) or the segment's first row; empty segments are left as they are. No atomics.
 * op: 0 sum, 1 prod, 2 max, 3 min (a NaN wins and stays). */
#ifndef STRIDEX_SEGMENT_CUH
#define STRIDEX_SEGMENT_CUH
#include "common.cuh"

#define SG_BLOCK 256

template <class T>
SX_DEV T sg_comb(int op, T a, T x) {
    switch (op) {
    case 0: return sx_wadd(a, x);   /* integers wrap (scalar/types.h) */
    case 1: return sx_wmul(a, x);
    case 2: return (a != a || a >= x) ? a : x;
    default: return (a != a || a <= x) ? a : x;
    }
}

template <class T>
SX_DEV void sg_reduce(const T *v, const int64_t *o, const int64_t *f, T *y, int64_t m,
                      int64_t inner, int op, int include_self) {
    const int64_t total = m * inner;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t t = i / inner, j = i - t * inner;
        int64_t k = f[t];
        const int64_t b = f[t + 1];
        if (k == b) continue;
        T acc;
        if (include_self) {
            acc = y[i];
        } else {
            acc = v[(o ? o[k] : k) * inner + j];
            k++;
        }
        for (; k < b; k++) acc = sg_comb<T>(op, acc, v[(o ? o[k] : k) * inner + j]);
        y[i] = acc;
    }
}

/* off[t] = the first position of a key >= t in the ascending keys (n), t = 0..m. */
SX_DEV void sg_offsets(const int64_t *keys, int64_t n, int64_t m, int64_t *off) {
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t <= m;
         t += (int64_t)gridDim.x * blockDim.x) {
        int64_t lo = 0, hi = n;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < t) lo = mid + 1; else hi = mid;
        }
        off[t] = lo;
    }
}

#endif
