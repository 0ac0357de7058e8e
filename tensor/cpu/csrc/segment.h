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

/* The direct form, without an order: row i of vals goes to row keys[i] of out, rows taken
 * in their order i = 0, 1, ..., n - 1, so each output row combines its rows in the order the
 * sorted form would (the same bits). include_self = 0: a row's first source replaces it (a
 * flag per output row says which have had one). Threads own ranges of output rows and each
 * scans all the keys, taking its own: no atomics, results independent of the thread count. */
#define SG_SCATTER(T, COMB)                                                                    \
    _Pragma("omp parallel num_threads(nt) if (nt > 1)")                                        \
    {                                                                                          \
        const int p = SG_TID(), np_ = SG_NTH();                                                  \
        const int64_t lo = m * p / np_, hi = m * (p + 1) / np_;                                \
        for (int64_t i = 0; i < n; i++) {                                                      \
            const int64_t t = k[i];                                                            \
            if (t < lo || t >= hi) continue;                                                   \
            T *yr = y + t * inner;                                                             \
            const T *vr = v + i * inner;                                                       \
            if (seen && !seen[t]) {                                                            \
                seen[t] = 1;                                                                   \
                for (int64_t j = 0; j < inner; j++) yr[j] = vr[j];                             \
            } else {                                                                           \
                for (int64_t j = 0; j < inner; j++) yr[j] = COMB(yr[j], vr[j]);                \
            }                                                                                  \
        }                                                                                      \
    }

#ifdef _OPENMP
#define SG_TID() omp_get_thread_num()
#define SG_NTH() omp_get_num_threads()
#else
#define SG_TID() 0
#define SG_NTH() 1
#endif

#define SX_SEGMENT(S, T)                                                                       \
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
}                                                                                              \
int sx_segment_scatter_##S(intptr_t vals, intptr_t keys, intptr_t out, int64_t n, int64_t m,   \
                           int64_t inner, int op, int include_self, int nthreads) {            \
    const T *v = (const T *)vals;                                                              \
    const int64_t *k = (const int64_t *)keys;                                                  \
    T *y = (T *)out;                                                                           \
    unsigned char *seen = include_self ? NULL : (unsigned char *)calloc((size_t)m, 1);         \
    if (!include_self && !seen) return -1;                                                     \
    /* threads pay off when rows are wide: each one reads every key */                         \
    int nt = (n * inner >= 65536 && inner >= 8 && m > 1 && nthreads > 1) ? nthreads : 1;       \
    switch (op) {                                                                              \
    case 0: { SG_SCATTER(T, SG_SUM) } break;                                                   \
    case 1: { SG_SCATTER(T, SG_PROD) } break;                                                  \
    case 2: { SG_SCATTER(T, SG_MAX) } break;                                                   \
    default: { SG_SCATTER(T, SG_MIN) } break;                                                  \
    }                                                                                          \
    free(seen);                                                                                \
    return 0;                                                                                  \
}

#endif
