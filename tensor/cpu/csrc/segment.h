/* Segmented reductions (tensor/segment.py: scatter_reduce, segment_sum/max/min/mean/prod):
 * the rows of `vals` (n rows of `inner` elements) taken in the order `order` (int64, or NULL
 * for 0, 1, ..., n - 1) fall into m segments given by `off` (int64, m + 1 ascending offsets:
 * segment t is order[off[t] .. off[t + 1])); each segment's rows are combined into row t of
 * `out` one after the other in that order, starting from out's row (include_self) or from
 * the segment's first row. Empty segments leave out's row as it is. No atomics: a segment
 * belongs to one thread, so results do not depend on the thread count (the CUDA twin,
 * cuda_src/segment.cuh, runs the same sequence per (segment, column) and gives the same bits).
 * op: 0 sum, 1 prod, 2 max, 3 min (a NaN wins and stays, as PyTorch's amax/amin). */
#ifndef STRIDEX_SEGMENT_H
#define STRIDEX_SEGMENT_H
#include "common.h"

#define SG_SUM(a, x) ((a) + (x))
#define SG_PROD(a, x) ((a) * (x))
#define SG_MAX(a, x) (((a) != (a) || (a) >= (x)) ? (a) : (x))
#define SG_MIN(a, x) (((a) != (a) || (a) <= (x)) ? (a) : (x))

#define SG_LOOP(T, COMB)                                                                       \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 16)")              \
    for (int64_t t = 0; t < m; t++) {                                                          \
        int64_t k = f[t], b = f[t + 1];                                                        \
        if (k == b) continue;                                                                  \
        T *yr = y + t * inner;                                                                 \
        if (!include_self) {                                                                   \
            const T *vr = v + (o ? o[k] : k) * inner;                                          \
            for (int64_t j = 0; j < inner; j++) yr[j] = vr[j];                                 \
            k++;                                                                               \
        }                                                                                      \
        for (; k < b; k++) {                                                                   \
            const T *vr = v + (o ? o[k] : k) * inner;                                          \
            for (int64_t j = 0; j < inner; j++) yr[j] = COMB(yr[j], vr[j]);                    \
        }                                                                                      \
    }

/* The stable order of the n int64 keys (each in [0, m)) by a counting sort: order[j] = the
 * position of the j-th smallest key (ties in position order), off (m + 1) = where each key's
 * run starts. O(n + m), one thread: the sort of scatter_reduce's targets. */
static void sg_order(const int64_t *k, int64_t n, int64_t m, int64_t *order, int64_t *f) {
    memset(f, 0, sizeof(int64_t) * (size_t)(m + 1));
    for (int64_t i = 0; i < n; i++) f[k[i] + 1]++;
    for (int64_t t = 0; t < m; t++) f[t + 1] += f[t];
    for (int64_t i = 0; i < n; i++) order[f[k[i]]++] = i;   /* f[t]: now the end of run t */
    memmove(f + 1, f, sizeof(int64_t) * (size_t)m);
    f[0] = 0;
}

#define SX_SEGMENT(S, T)                                                                       \
void sx_segment_order_##S(intptr_t keys, int64_t n, int64_t m, intptr_t order, intptr_t offs) { \
    sg_order((const int64_t *)keys, n, m, (int64_t *)order, (int64_t *)offs);                  \
}                                                                                              \
void sx_segment_reduce_##S(intptr_t vals, intptr_t order, intptr_t offs, intptr_t out,         \
                           int64_t m, int64_t inner, int op, int include_self, int nthreads) { \
    const T *v = (const T *)vals;                                                              \
    const int64_t *o = (const int64_t *)order, *f = (const int64_t *)offs;                     \
    T *y = (T *)out;                                                                           \
    int nt = (f[m] * inner >= 16384 && m > 1 && nthreads > 1) ? nthreads : 1;                  \
    switch (op) {                                                                              \
    case 0: { SG_LOOP(T, SG_SUM) } break;                                                      \
    case 1: { SG_LOOP(T, SG_PROD) } break;                                                     \
    case 2: { SG_LOOP(T, SG_MAX) } break;                                                      \
    default: { SG_LOOP(T, SG_MIN) } break;                                                     \
    }                                                                                          \
}

#endif
