/* CPU sort kernels (family "sort", one module per dtype; CUDA twin: cuda_src/sort.cuh).
 *
 * sx_sort_rows_<sfx>: each of `rows` contiguous rows of length L sorted stably by the shared
 *   order-preserving keys (cuda_src/scalar/sort_key.h): iout gets the int64 positions in the
 *   row, vout (when not 0) the values. A stable sort is unique, so the CUDA radix sort gives
 *   the same indices. Merge sort of (key, position) pairs: insertion-sorted runs of 16, then
 *   bottom-up merges that take from the left run on ties (stability). OpenMP across rows.
 *   Returns 0, or -1 when a thread's scratch (2 L pairs) could not be allocated.
 * sx_searchsorted_<sfx>: out[j] = the insertion point of v[j] in the ascending contiguous a
 *   (left: first i with key(a[i]) >= key(v[j]); right: first with >), by the same keys, so
 *   NaNs and signed zeros place exactly as sort orders them. */
#ifndef STRIDEX_SORT_H
#define STRIDEX_SORT_H
#include "common.h"
#include "scalar/sort_key.h"

typedef struct { uint64_t k; int64_t i; } sx_kv;
typedef void (*sx_keys_fn)(const char *x, int64_t n, int desc, sx_kv *kv);

#define SX_SORT_RUN 16

static sx_kv *sx_merge_sort(sx_kv *a, sx_kv *tmp, int64_t n) {
    for (int64_t lo = 0; lo < n; lo += SX_SORT_RUN) {
        int64_t hi = lo + SX_SORT_RUN < n ? lo + SX_SORT_RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            sx_kv v = a[i];
            int64_t j = i;
            for (; j > lo && a[j - 1].k > v.k; j--) a[j] = a[j - 1];
            a[j] = v;
        }
    }
    for (int64_t w = SX_SORT_RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = a[j].k < a[i].k ? a[j++] : a[i++];
            while (i < mid) tmp[o++] = a[i++];
            while (j < hi) tmp[o++] = a[j++];
        }
        sx_kv *t = a; a = tmp; tmp = t;
    }
    return a;
}

SX_INLINE int sx_sort_rows_impl(int64_t rows, int64_t L, const char *x, char *vout, int64_t *iout,
                                 int desc, int nthreads, int width, sx_keys_fn keys) {
    int nt = (rows > 1 && rows * L >= 4096 && nthreads > 1) ? nthreads : 1, failed = 0;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(|: failed)
    {
        sx_kv *buf = (sx_kv *)malloc(2 * (size_t)L * sizeof(sx_kv));
        failed |= buf == NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < rows; r++) {
            if (buf == NULL) continue;
            const char *xr = x + r * L * width;
            keys(xr, L, desc, buf);
            sx_kv *s = sx_merge_sort(buf, buf + L, L);
            for (int64_t j = 0; j < L; j++) iout[r * L + j] = s[j].i;
            if (vout)
                for (int64_t j = 0; j < L; j++)
                    memcpy(vout + (r * L + j) * width, xr + s[j].i * width, width);
        }
        free(buf);
    }
    return failed ? -1 : 0;
}

#define SX_SORT(S, U)                                                                          \
static void sx_keys_##S(const char *x, int64_t n, int desc, sx_kv *kv) {                        \
    const U *p = (const U *)x;                                                                  \
    for (int64_t i = 0; i < n; i++) { kv[i].k = sx_sort_key_##S(p[i], desc); kv[i].i = i; }     \
}                                                                                               \
int sx_sort_rows_##S(int64_t rows, int64_t L, intptr_t x, intptr_t vout, intptr_t iout,         \
                     int desc, int nthreads) {                                                  \
    return sx_sort_rows_impl(rows, L, (const char *)x, (char *)vout, (int64_t *)iout, desc, nthreads,  \
                             (int)sizeof(U), sx_keys_##S);                                      \
}                                                                                               \
void sx_searchsorted_##S(int64_t n, intptr_t a, int64_t m, intptr_t v, int right,              \
                         intptr_t out, int nthreads) {                                          \
    const U *ap = (const U *)a, *vp = (const U *)v;                                             \
    int64_t *o = (int64_t *)out;                                                                \
    int nt = (m >= 4096 && nthreads > 1) ? nthreads : 1;                                        \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                    \
    for (int64_t j = 0; j < m; j++) {                                                           \
        uint64_t kv = sx_sort_key_##S(vp[j], 0);                                                \
        int64_t lo = 0, hi = n;                                                                 \
        while (lo < hi) {                                                                       \
            int64_t mid = lo + (hi - lo) / 2;                                                   \
            uint64_t km = sx_sort_key_##S(ap[mid], 0);                                          \
            if (right ? km <= kv : km < kv) lo = mid + 1; else hi = mid;                        \
        }                                                                                       \
        o[j] = lo;                                                                              \
    }                                                                                           \
}

#endif
