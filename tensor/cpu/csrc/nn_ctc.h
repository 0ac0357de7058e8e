/* The CTC loss's alpha (forward) and beta (backward) recursions for nn/ctc.py, one batch entry
 * per loop iteration (OpenMP across the batch), instead of a dozen tensor ops per time step.
 *
 * lp (steps, N, C) holds log-probabilities (type T); ext (N, W) the extended targets (blank,
 * l1, blank, l2, ..., blank; int64), il / tl (N,) the input and target lengths. State s of
 * entry n is live while s < 2 tl + 1; s may come from s, s - 1, and from s - 2 when ext[s] is
 * a label that differs from ext[s - 2]. Every log-sum-exp is max + log(sum(exp(x - max)))
 * in double, -inf when all terms are -inf (as nn/ctc.py's per-op reference, _lse).
 *
 * ctc_fwd: alpha (steps, N, W; double) and ll (N; T) = the log-likelihood (0 / -inf when
 * il = 0: an empty target or not). Steps at or past il keep alpha frozen (unused later).
 * ctc_bwd: grad (steps, N, C; T) = gll[n] * d ll[n] / d lp = gll[n] * sum over s with
 * ext[s] = c of exp(alpha + beta - lp - ll) (beta: the paths from (t, s) to the end, lp[t]
 * included); zero where ll is -inf or t >= il. scratch: (N, 2 W) doubles (two beta rows).
 * The CUDA twin is cuda_src/nn_ctc.cuh. */
#include "common.h"

static inline double sx_ctc_lse3(double a, double b, double c) {
    double m = a > b ? a : b;
    m = m > c ? m : c;
    if (m == -INFINITY) return -INFINITY;
    return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

static inline int sx_ctc_skip(const int64_t *e, int64_t s) {
    return s >= 3 && (s & 1) && e[s] != e[s - 2];
}

#define SX_CTC_FWD(S)                                                                         \
void ctc_fwd_##S(intptr_t plp, intptr_t pext, intptr_t pil, intptr_t ptl, intptr_t palpha,     \
                 intptr_t pll, int64_t steps, int64_t N, int64_t C, int64_t W, int nthreads) { \
    const T_##S *lp = (const T_##S *)plp;                                                     \
    const int64_t *ext = (const int64_t *)pext, *il = (const int64_t *)pil;                   \
    const int64_t *tl = (const int64_t *)ptl;                                                 \
    double *alpha = (double *)palpha;                                                         \
    T_##S *ll = (T_##S *)pll;                                                                 \
    int nt = (N > 1 && nthreads > 1 && steps * W * N >= 4096) ? nthreads : 1;                 \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                  \
    for (int64_t n = 0; n < N; n++) {                                                         \
        const int64_t *e = ext + n * W;                                                       \
        const int64_t live = 2 * tl[n] + 1, len = il[n];                                      \
        for (int64_t t = 0; t < steps; t++) {                                                 \
            double *a = alpha + (t * N + n) * W;                                              \
            const double *p = a - N * W;                                                      \
            const T_##S *x = lp + (t * N + n) * C;                                            \
            for (int64_t s = 0; s < W; s++) {                                                 \
                double v = -INFINITY;                                                         \
                if (t == 0) {                                                                 \
                    if (s < 2 && s < live) v = (double)x[e[s]];                               \
                } else if (t >= len) {                                                        \
                    v = p[s];                                                                 \
                } else if (s < live) {                                                        \
                    double a1 = s >= 1 ? p[s - 1] : -INFINITY;                                \
                    double a2 = sx_ctc_skip(e, s) ? p[s - 2] : -INFINITY;                     \
                    v = sx_ctc_lse3(p[s], a1, a2) + (double)x[e[s]];                          \
                }                                                                             \
                a[s] = v;                                                                     \
            }                                                                                 \
        }                                                                                     \
        double r;                                                                             \
        if (len == 0) {                                                                       \
            r = tl[n] == 0 ? 0.0 : -INFINITY;                                                 \
        } else {                                                                              \
            const double *a = alpha + ((steps - 1) * N + n) * W;                              \
            r = sx_ctc_lse3(a[2 * tl[n]], tl[n] > 0 ? a[2 * tl[n] - 1] : -INFINITY, -INFINITY); \
        }                                                                                     \
        ll[n] = (T_##S)r;                                                                     \
    }                                                                                         \
}

#define SX_CTC_BWD(S)                                                                         \
void ctc_bwd_##S(intptr_t plp, intptr_t pext, intptr_t pil, intptr_t ptl, intptr_t palpha,     \
                 intptr_t pll, intptr_t pgll, intptr_t pgrad, intptr_t pscratch, int64_t steps, \
                 int64_t N, int64_t C, int64_t W, int nthreads) {                             \
    const T_##S *lp = (const T_##S *)plp;                                                     \
    const int64_t *ext = (const int64_t *)pext, *il = (const int64_t *)pil;                   \
    const int64_t *tl = (const int64_t *)ptl;                                                 \
    const double *alpha = (const double *)palpha;                                             \
    const T_##S *ll = (const T_##S *)pll, *gll = (const T_##S *)pgll;                         \
    T_##S *grad = (T_##S *)pgrad;                                                             \
    int nt = (N > 1 && nthreads > 1 && steps * W * N >= 4096) ? nthreads : 1;                 \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                  \
    for (int64_t n = 0; n < N; n++) {                                                         \
        const int64_t *e = ext + n * W;                                                       \
        const int64_t live = 2 * tl[n] + 1, len = il[n];                                      \
        double *cur = (double *)pscratch + n * 2 * W, *nxt = cur + W;                         \
        const double *fin = alpha + ((steps - 1) * N + n) * W;                                \
        const double g = (double)gll[n];                                                      \
        for (int64_t t = 0; t < steps; t++)                                                   \
            for (int64_t k = 0; k < C; k++) grad[(t * N + n) * C + k] = 0;                    \
        /* ll again, in double (ll[n] may be float32; alpha is frozen from step len - 1 on) */ \
        const double total = len == 0 ? -INFINITY : sx_ctc_lse3(                              \
            fin[2 * tl[n]], tl[n] > 0 ? fin[2 * tl[n] - 1] : -INFINITY, -INFINITY);           \
        if (len == 0 || total == -INFINITY || ll[n] == -INFINITY) continue;                   \
        for (int64_t t = len - 1; t >= 0; t--) {                                              \
            const T_##S *x = lp + (t * N + n) * C;                                            \
            const double *a = alpha + (t * N + n) * W;                                        \
            T_##S *gr = grad + (t * N + n) * C;                                               \
            for (int64_t s = 0; s < W; s++) {                                                 \
                double v = -INFINITY;                                                         \
                if (s < live) {                                                               \
                    if (t == len - 1) {                                                       \
                        if (s == 2 * tl[n] || (tl[n] > 0 && s == 2 * tl[n] - 1))              \
                            v = (double)x[e[s]];                                              \
                    } else {                                                                  \
                        double b1 = s + 1 < live ? nxt[s + 1] : -INFINITY;                    \
                        double b2 = s + 2 < live && sx_ctc_skip(e, s + 2) ? nxt[s + 2]        \
                                                                          : -INFINITY;        \
                        v = sx_ctc_lse3(nxt[s], b1, b2) + (double)x[e[s]];                    \
                    }                                                                         \
                }                                                                             \
                cur[s] = v;                                                                   \
            }                                                                                 \
            for (int64_t s = 0; s < live; s++) {                                              \
                double ab = a[s] + cur[s];                                                    \
                if (ab == -INFINITY) continue;                                                \
                gr[e[s]] += (T_##S)(g * exp(ab - (double)x[e[s]] - total));                   \
            }                                                                                 \
            double *tmp = cur; cur = nxt; nxt = tmp;                                          \
        }                                                                                     \
    }                                                                                         \
}
