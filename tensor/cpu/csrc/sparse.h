/* Sparse kernels of CSR matrices (tensor/sparse): SpMM / SpMV and SDDMM, float32 / float64.
 *
 * spmm_csr: C (m, n) = A @ B, A in CSR (crow (m + 1), col, val: int64 / int64 / T), B (k, n)
 * and C contiguous. Rows are split into chunks balanced by nnz, not by rows: chunk t starts at
 * the first row i whose merge-path coordinate crow[i] + i reaches t (nnz + m) / chunks (so
 * empty rows count for one unit each and one huge row makes a chunk of its own); threads take
 * chunks dynamically. Each row is summed by one thread in the order of its nonzeros, into the
 * contiguous output row (the inner loop runs over the dense row: vectorisable), so the
 * result does not depend on the number of threads (deterministic).
 *
 * sddmm_csr: out[j] = beta * s[j] + alpha * dot(X[i, :], Y[col[j], :]) for each nonzero j of
 * row i; X (m, d), Y (ncols, d) contiguous (the caller passes B^T as Y); s unread when beta
 * is 0. Same chunking; one dot per nonzero in a fixed order. */
#include "common.h"

static int64_t sp_chunk_start(const int64_t *crow, int64_t m, int64_t target) {
    int64_t lo = 0, hi = m;   /* the first row i in [0, m] with crow[i] + i >= target */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (crow[mid] + mid >= target) hi = mid; else lo = mid + 1;
    }
    return lo;
}

static int sp_chunks(int64_t m, int64_t nnz, int64_t work, int nthreads, int *nt) {
    *nt = (nthreads > 1 && work >= 32768) ? nthreads : 1;
    int64_t c = *nt == 1 ? 1 : 8 * (int64_t)*nt;
    if (c > m) c = m > 0 ? m : 1;
    (void)nnz;
    return (int)c;
}

#define SX_SPARSE(S, T)                                                                  \
void spmm_csr_##S(intptr_t crowp, intptr_t colp, intptr_t valp, intptr_t bp, intptr_t cp, \
                  int64_t m, int64_t n, int nthreads) {                                  \
    const int64_t *crow = (const int64_t *)crowp, *col = (const int64_t *)colp;          \
    const T *val = (const T *)valp, *b = (const T *)bp;                                  \
    T *c = (T *)cp;                                                                      \
    const int64_t nnz = crow[m], total = nnz + m;                                        \
    int nt;                                                                              \
    const int chunks = sp_chunks(m, nnz, (nnz + m) * n, nthreads, &nt);                  \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 1)")        \
    for (int ch = 0; ch < chunks; ch++) {                                                \
        const int64_t r0 = sp_chunk_start(crow, m, total * ch / chunks);                 \
        const int64_t r1 = sp_chunk_start(crow, m, total * (ch + 1) / chunks);           \
        for (int64_t i = r0; i < (ch == chunks - 1 ? m : r1); i++) {                     \
            T *restrict ci = c + i * n;                                                  \
            for (int64_t q = 0; q < n; q++) ci[q] = (T)0;                                \
            for (int64_t j = crow[i]; j < crow[i + 1]; j++) {                            \
                const T a = val[j];                                                      \
                const T *restrict bj = b + col[j] * n;                                   \
                _Pragma("omp simd")                                                      \
                for (int64_t q = 0; q < n; q++) ci[q] += a * bj[q];                      \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
void sddmm_csr_##S(intptr_t crowp, intptr_t colp, intptr_t sp, intptr_t xp, intptr_t yp, \
                   intptr_t outp, int64_t m, int64_t d, double beta, double alpha,       \
                   int nthreads) {                                                       \
    const int64_t *crow = (const int64_t *)crowp, *col = (const int64_t *)colp;          \
    const T *s = (const T *)sp, *x = (const T *)xp, *y = (const T *)yp;                  \
    T *out = (T *)outp;                                                                  \
    const int64_t nnz = crow[m], total = nnz + m;                                        \
    int nt;                                                                              \
    const int chunks = sp_chunks(m, nnz, (nnz + m) * (d + 1), nthreads, &nt);            \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 1)")        \
    for (int ch = 0; ch < chunks; ch++) {                                                \
        const int64_t r0 = sp_chunk_start(crow, m, total * ch / chunks);                 \
        const int64_t r1 = sp_chunk_start(crow, m, total * (ch + 1) / chunks);           \
        for (int64_t i = r0; i < (ch == chunks - 1 ? m : r1); i++) {                     \
            const T *xi = x + i * d;                                                     \
            for (int64_t j = crow[i]; j < crow[i + 1]; j++) {                            \
                const T *yj = y + col[j] * d;                                            \
                T acc = (T)0;                                                            \
                _Pragma("omp simd reduction(+:acc)")                                     \
                for (int64_t q = 0; q < d; q++) acc += xi[q] * yj[q];                    \
                T r = (T)(alpha * (double)acc);                                          \
                out[j] = beta != 0.0 ? (T)(beta * (double)s[j]) + r : r;                 \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}
