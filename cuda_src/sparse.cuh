/* Sparse kernels of CSR matrices on CUDA (tensor/cuda/sparse.py; the CPU's:
 * tensor/cpu/csrc/sparse.h), float32 / float64, deterministic (no floating-point atomics).
 *
 * SpMM C (m, n) = A @ B, B (k, n) and C contiguous:
 *   ssp_spmm_warp: one warp per row (grid-stride over rows), the lanes over the dense row's
 *     columns (coalesced reads of B's rows), the row's nonzeros in order. For even rows.
 *   ssp_spmm_seg + ssp_spmm_fix: nnz-balanced for skewed rows (merge-path style): the nonzeros
 *     are cut into segments of SSP_SEG, one warp each; a row whose nonzeros lie inside one
 *     segment is written directly, the parts of a row crossing a segment boundary go to the
 *     segment's partial slots P[s][0] (the part holding the segment's first nonzero) and
 *     P[s][1] (the part running past its end); then one warp per row sums a crossing row's
 *     partials in segment order (and zeroes empty rows). The result does not depend on the grid.
 * SDDMM out[j] = beta * s[j] + alpha * dot(X[i, :], Y[col[j], :]), X (m, d), Y (ncols, d):
 *   one warp per nonzero, its row found by binary search in crow, the lanes over d, the lane
 *   sums combined by a fixed xor-shuffle tree. */
#ifndef STRIDEX_SPARSE_CUH
#define STRIDEX_SPARSE_CUH
#include "common.cuh"

#define SSP_BLOCK 256
#define SSP_SEG 256

/* the row i (0 <= i < m) holding nonzero j: the last i with crow[i] <= j */
SX_DEV int64_t ssp_row_of(const int64_t *crow, int64_t m, int64_t j) {
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (crow[mid] <= j) lo = mid; else hi = mid - 1;
    }
    return lo;
}

template <class X>
SX_DEV void ssp_spmm_warp(const int64_t *crow, const int64_t *col, const typename X::T *val,
                          const typename X::T *b, typename X::T *c, int64_t m, int64_t n) {
    typedef typename X::T T;
    const int lane = threadIdx.x & 31;
    const int64_t wpb = blockDim.x / 32;
    for (int64_t i = blockIdx.x * wpb + threadIdx.x / 32; i < m; i += (int64_t)gridDim.x * wpb) {
        const int64_t j0 = crow[i], j1 = crow[i + 1];
        for (int64_t q = lane; q < n; q += 32) {
            T acc = (T)0;
            for (int64_t j = j0; j < j1; j++) acc += val[j] * b[col[j] * n + q];
            c[i * n + q] = acc;
        }
    }
}

template <class X>
SX_DEV void ssp_spmm_seg(const int64_t *crow, const int64_t *col, const typename X::T *val,
                         const typename X::T *b, typename X::T *c, typename X::T *part,
                         int64_t m, int64_t n, int64_t nseg) {
    typedef typename X::T T;
    const int lane = threadIdx.x & 31;
    const int64_t wpb = blockDim.x / 32;
    const int64_t nnz = crow[m];
    for (int64_t s = blockIdx.x * wpb + threadIdx.x / 32; s < nseg; s += (int64_t)gridDim.x * wpb) {
        const int64_t e0 = s * SSP_SEG, e1 = e0 + SSP_SEG < nnz ? e0 + SSP_SEG : nnz;
        int64_t i = ssp_row_of(crow, m, e0);
        for (int64_t j = e0; j < e1; i++) {
            const int64_t r0 = crow[i], r1 = crow[i + 1];
            if (r1 <= j) continue;   /* an empty row */
            const int64_t jend = r1 < e1 ? r1 : e1;
            const bool whole = r0 >= e0 && r1 <= e1;
            T *dst = whole ? c + i * n : part + (2 * s + (r0 <= e0 ? 0 : 1)) * n;
            for (int64_t q = lane; q < n; q += 32) {
                T acc = (T)0;
                for (int64_t k = j; k < jend; k++) acc += val[k] * b[col[k] * n + q];
                dst[q] = acc;
            }
            j = jend;
        }
    }
}

template <class X>
SX_DEV void ssp_spmm_fix(const int64_t *crow, typename X::T *c, const typename X::T *part,
                         int64_t m, int64_t n) {
    typedef typename X::T T;
    const int lane = threadIdx.x & 31;
    const int64_t wpb = blockDim.x / 32;
    for (int64_t i = blockIdx.x * wpb + threadIdx.x / 32; i < m; i += (int64_t)gridDim.x * wpb) {
        const int64_t r0 = crow[i], r1 = crow[i + 1];
        if (r1 == r0) {
            for (int64_t q = lane; q < n; q += 32) c[i * n + q] = (T)0;
            continue;
        }
        const int64_t s0 = r0 / SSP_SEG, s1 = (r1 - 1) / SSP_SEG;
        if (s0 == s1) continue;   /* written by its segment */
        for (int64_t q = lane; q < n; q += 32) {
            T acc = (T)0;
            for (int64_t s = s0; s <= s1; s++)
                acc += part[(2 * s + (r0 <= s * SSP_SEG ? 0 : 1)) * n + q];
            c[i * n + q] = acc;
        }
    }
}

template <class X>
SX_DEV void ssp_sddmm(const int64_t *crow, const int64_t *col, const typename X::T *sv,
                      const typename X::T *x, const typename X::T *y, typename X::T *out,
                      int64_t m, int64_t d, double beta, double alpha) {
    typedef typename X::T T;
    const int lane = threadIdx.x & 31;
    const int64_t wpb = blockDim.x / 32;
    const int64_t nnz = crow[m];
    for (int64_t j = blockIdx.x * wpb + threadIdx.x / 32; j < nnz; j += (int64_t)gridDim.x * wpb) {
        const int64_t i = ssp_row_of(crow, m, j);
        const T *xi = x + i * d, *yj = y + col[j] * d;
        T acc = (T)0;
        for (int64_t q = lane; q < d; q += 32) acc += xi[q] * yj[q];
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) {
            T r = (T)(alpha * (double)acc);
            out[j] = beta != 0.0 ? (T)(beta * (double)sv[j]) + r : r;
        }
    }
}

#endif
