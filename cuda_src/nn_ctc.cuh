/* The CTC loss's alpha / beta recursions on CUDA (mirror tensor/cpu/csrc/nn_ctc.h, whose
 * comments give the layouts and formulas): one thread per batch entry (grid-stride over N),
 * each running its entry's whole time loop, in double. Not an exact family: the device's
 * exp / log, so results agree with the CPU's to rounding. */
#ifndef STRIDEX_NN_CTC_CUH
#define STRIDEX_NN_CTC_CUH
#include "common.cuh"

#define CTC_BLOCK 64
#define CTC_NINF (-SX_INF_D)

SX_DEV double ctc_lse3(double a, double b, double c) {
    double m = a > b ? a : b;
    m = m > c ? m : c;
    if (m == CTC_NINF) return CTC_NINF;
    return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

SX_DEV bool ctc_skip(const int64_t *e, int64_t s) {
    return s >= 3 && (s & 1) && e[s] != e[s - 2];
}

template <class T>
SX_DEV void ctc_fwd(const T *lp, const int64_t *ext, const int64_t *il, const int64_t *tl,
                    double *alpha, T *ll, int64_t steps, int64_t N, int64_t C, int64_t W) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t n = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; n < N; n += stride) {
        const int64_t *e = ext + n * W;
        const int64_t live = 2 * tl[n] + 1, len = il[n];
        for (int64_t t = 0; t < steps; t++) {
            double *a = alpha + (t * N + n) * W;
            const double *p = a - N * W;
            const T *x = lp + (t * N + n) * C;
            for (int64_t s = 0; s < W; s++) {
                double v = CTC_NINF;
                if (t == 0) {
                    if (s < 2 && s < live) v = (double)x[e[s]];
                } else if (t >= len) {
                    v = p[s];
                } else if (s < live) {
                    double a1 = s >= 1 ? p[s - 1] : CTC_NINF;
                    double a2 = ctc_skip(e, s) ? p[s - 2] : CTC_NINF;
                    v = ctc_lse3(p[s], a1, a2) + (double)x[e[s]];
                }
                a[s] = v;
            }
        }
        double r;
        if (len == 0) {
            r = tl[n] == 0 ? 0.0 : CTC_NINF;
        } else {
            const double *a = alpha + ((steps - 1) * N + n) * W;
            r = ctc_lse3(a[2 * tl[n]], tl[n] > 0 ? a[2 * tl[n] - 1] : CTC_NINF, CTC_NINF);
        }
        ll[n] = (T)r;
    }
}

template <class T>
SX_DEV void ctc_bwd(const T *lp, const int64_t *ext, const int64_t *il, const int64_t *tl,
                    const double *alpha, const T *ll, const T *gll, T *grad, double *scratch,
                    int64_t steps, int64_t N, int64_t C, int64_t W) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t n = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; n < N; n += stride) {
        const int64_t *e = ext + n * W;
        const int64_t live = 2 * tl[n] + 1, len = il[n];
        double *cur = scratch + n * 2 * W, *nxt = cur + W;
        const double g = (double)gll[n];
        for (int64_t t = 0; t < steps; t++)
            for (int64_t k = 0; k < C; k++) grad[(t * N + n) * C + k] = (T)0;
        if (len == 0) continue;
        const double *fin = alpha + ((steps - 1) * N + n) * W;
        const double total = ctc_lse3(fin[2 * tl[n]], tl[n] > 0 ? fin[2 * tl[n] - 1] : CTC_NINF,
                                      CTC_NINF);
        if (total == CTC_NINF || (double)ll[n] == CTC_NINF) continue;
        for (int64_t t = len - 1; t >= 0; t--) {
            const T *x = lp + (t * N + n) * C;
            const double *a = alpha + (t * N + n) * W;
            T *gr = grad + (t * N + n) * C;
            for (int64_t s = 0; s < W; s++) {
                double v = CTC_NINF;
                if (s < live) {
                    if (t == len - 1) {
                        if (s == 2 * tl[n] || (tl[n] > 0 && s == 2 * tl[n] - 1))
                            v = (double)x[e[s]];
                    } else {
                        double b1 = s + 1 < live ? nxt[s + 1] : CTC_NINF;
                        double b2 = (s + 2 < live && ctc_skip(e, s + 2)) ? nxt[s + 2] : CTC_NINF;
                        v = ctc_lse3(nxt[s], b1, b2) + (double)x[e[s]];
                    }
                }
                cur[s] = v;
            }
            for (int64_t s = 0; s < live; s++) {
                double ab = a[s] + cur[s];
                if (ab == CTC_NINF) continue;
                gr[e[s]] += (T)(g * exp(ab - (double)x[e[s]] - total));
            }
            double *tmp = cur; cur = nxt; nxt = tmp;
        }
    }
}

#endif
