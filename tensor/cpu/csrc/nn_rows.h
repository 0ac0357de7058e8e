/* Row-wise fused kernels of nn: softmax / log_softmax, layer_norm and cross-entropy with class
 * indices, forward and backward. Rows are contiguous (the caller moves the axis last and makes
 * it contiguous); one row is processed start to end by one thread while it sits in cache.
 *
 * Instantiated once per module for one storage dtype: the source defines NR_S (f16, bf16,
 * f32, f64) and includes this file. 16-bit floats compute in float (their C_ type), statistics
 * (max, sums, mean, rstd, lse) are kept in that compute type.
 *
 * Determinism: sums use NR_LANES lane accumulators merged by a fixed tree, rows are
 * independent, and the layer_norm weight/bias gradients are summed in fixed blocks of rows
 * chosen by the caller from the shape alone, so results do not depend on the thread count. */
#include "common.h"

#ifndef NR_S
#error "define NR_S (f16, bf16, f32 or f64) before including nn_rows.h"
#endif

#define NR_CAT_(a, b) a##b
#define NR_CAT(a, b) NR_CAT_(a, b)
#define NR_FN(name) NR_CAT(name##_, NR_S)
#define NR_T NR_CAT(T_, NR_S)
#define NR_A NR_CAT(C_, NR_S)
#define NR_LD NR_CAT(LD_, NR_S)
#define NR_ST NR_CAT(ST_, NR_S)
#define NR_LANES 8
/* NaN is skipped by the max (so the loop vectorises) but still poisons the row: exp(NaN - m)
 * makes the sum, and every output of the row, NaN. */
#define NR_MAX(m, v) ((v) > (m) ? (v) : (m))
/* for k in [0, n): the body with lane j = k % NR_LANES, in blocks of NR_LANES (vectorisable) */
#define NR_LANE_LOOP(n, ...) do {                                              \
        int64_t k = 0;                                                     \
        for (; k + NR_LANES <= (n); k += NR_LANES) {                       \
            int64_t k0 = k;                                                \
            for (int j = 0; j < NR_LANES; j++) { k = k0 + j; __VA_ARGS__; } \
            k = k0;                                                        \
        }                                                                  \
        for (int j = 0; k < (n); k++, j++) { __VA_ARGS__; }                \
    } while (0)

static int nr_threads(int64_t work, int nthreads) {
    return (work >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;
}

static NR_A nr_merge(NR_A *s) {
    for (int w = NR_LANES / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) s[j] += s[j + w];
    return s[0];
}

static NR_A nr_max(const NR_T *x, int64_t n) {
    NR_A m[NR_LANES];
    for (int j = 0; j < NR_LANES; j++) m[j] = -INFINITY;
    NR_LANE_LOOP(n, NR_A v = NR_LD(x[k]); m[j] = NR_MAX(m[j], v));
    NR_A r = m[0];
    for (int j = 1; j < NR_LANES; j++) r = NR_MAX(r, m[j]);
    return r;
}

/* sum(exp(x - m)); when e is given (32/64-bit storage) the terms are stored there too. */
static NR_A nr_sumexp(const NR_T *x, int64_t n, NR_A m, NR_T *e) {
    NR_A s[NR_LANES] = {0};
    if (e) NR_LANE_LOOP(n, NR_A v = SX_EXP(NR_LD(x[k]) - m); s[j] += v; e[k] = NR_ST(v));
    else NR_LANE_LOOP(n, s[j] += SX_EXP(NR_LD(x[k]) - m));
    return nr_merge(s);
}

/* sum(a * b) (b may be NULL: sum(a)). */
static NR_A nr_dot(const NR_T *a, const NR_T *b, int64_t n) {
    NR_A s[NR_LANES] = {0};
    if (b) NR_LANE_LOOP(n, s[j] += NR_LD(a[k]) * NR_LD(b[k]));
    else NR_LANE_LOOP(n, s[j] += NR_LD(a[k]));
    return nr_merge(s);
}

/* ---------------------------------------------------------------- softmax / log_softmax */

void NR_FN(softmax_fwd)(intptr_t px, intptr_t py, int64_t rows, int64_t L, int log_, int nthreads) {
    const NR_T *X = (const NR_T *)px; NR_T *Y = (NR_T *)py;
    int nt = nr_threads(rows * L, nthreads);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const NR_T *x = X + r * L; NR_T *y = Y + r * L;
        NR_A m = nr_max(x, L);
        if (log_) {
            NR_A ls = SX_LOG(nr_sumexp(x, L, m, NULL));
            for (int64_t i = 0; i < L; i++) y[i] = NR_ST((NR_LD(x[i]) - m) - ls);
        } else if (sizeof(NR_T) >= 4) {  /* exp terms stored exactly: scale them in place */
            NR_A inv = (NR_A)1 / nr_sumexp(x, L, m, y);
            for (int64_t i = 0; i < L; i++) y[i] = NR_ST(NR_LD(y[i]) * inv);
        } else {  /* 16-bit storage would round the terms twice: recompute them */
            NR_A inv = (NR_A)1 / nr_sumexp(x, L, m, NULL);
            for (int64_t i = 0; i < L; i++) y[i] = NR_ST(SX_EXP(NR_LD(x[i]) - m) * inv);
        }
    }
}

/* softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g). */
void NR_FN(softmax_bwd)(intptr_t py, intptr_t pg, intptr_t pgx, int64_t rows, int64_t L, int log_,
                        int nthreads) {
    const NR_T *Y = (const NR_T *)py, *G = (const NR_T *)pg; NR_T *GX = (NR_T *)pgx;
    int nt = nr_threads(rows * L, nthreads);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const NR_T *y = Y + r * L, *g = G + r * L; NR_T *gx = GX + r * L;
        if (log_) {
            NR_A s = nr_dot(g, NULL, L);
            for (int64_t i = 0; i < L; i++) gx[i] = NR_ST(NR_LD(g[i]) - SX_EXP(NR_LD(y[i])) * s);
        } else {
            NR_A s = nr_dot(g, y, L);
            for (int64_t i = 0; i < L; i++) gx[i] = NR_ST(NR_LD(y[i]) * (NR_LD(g[i]) - s));
        }
    }
}

/* ---------------------------------------------------------------- layer_norm */

/* y = (x - mean) * rstd * w + b per row; w, b may be 0 (absent). mean, rstd: one NR_A per row. */
void NR_FN(ln_fwd)(intptr_t px, intptr_t pw, intptr_t pb, intptr_t py, intptr_t pmean, intptr_t prstd,
                   int64_t rows, int64_t L, double eps, int nthreads) {
    const NR_T *X = (const NR_T *)px, *w = (const NR_T *)pw, *b = (const NR_T *)pb;
    NR_T *Y = (NR_T *)py; NR_A *MEAN = (NR_A *)pmean, *RSTD = (NR_A *)prstd;
    int nt = nr_threads(rows * L, nthreads);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const NR_T *x = X + r * L; NR_T *y = Y + r * L;
        NR_A mean = nr_dot(x, NULL, L) / (NR_A)L;
        NR_A s[NR_LANES] = {0};
        NR_LANE_LOOP(L, NR_A d = NR_LD(x[k]) - mean; s[j] += d * d);
        NR_A rstd = (NR_A)1 / SX_F1(sqrt, nr_merge(s) / (NR_A)L + (NR_A)eps);
        MEAN[r] = mean; RSTD[r] = rstd;
        for (int64_t i = 0; i < L; i++) {
            NR_A v = (NR_LD(x[i]) - mean) * rstd;
            if (w) v *= NR_LD(w[i]);
            if (b) v += NR_LD(b[i]);
            y[i] = NR_ST(v);
        }
    }
}

/* gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w (gx may be 0: skipped).
 * pgw / pgb (may be 0): per block of rb rows, the column sums of g * xhat and of g, as NR_A
 * rows of length L; the caller sums the blocks in order. */
void NR_FN(ln_bwd)(intptr_t px, intptr_t pmean, intptr_t prstd, intptr_t pg, intptr_t pw, intptr_t pgx,
                   intptr_t ppw, intptr_t ppb, int64_t rows, int64_t L, int64_t rb, int nthreads) {
    const NR_T *X = (const NR_T *)px, *G = (const NR_T *)pg, *w = (const NR_T *)pw;
    const NR_A *MEAN = (const NR_A *)pmean, *RSTD = (const NR_A *)prstd;
    NR_T *GX = (NR_T *)pgx; NR_A *PW = (NR_A *)ppw, *PB = (NR_A *)ppb;
    int64_t nblk = (rows + rb - 1) / rb;
    int nt = nr_threads(rows * L, nthreads);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t k = 0; k < nblk; k++) {
        NR_A *pw_ = PW ? PW + k * L : NULL, *pb_ = PB ? PB + k * L : NULL;
        for (int64_t i = 0; i < L; i++) { if (pw_) pw_[i] = 0; if (pb_) pb_[i] = 0; }
        int64_t hi = (k + 1) * rb < rows ? (k + 1) * rb : rows;
        for (int64_t r = k * rb; r < hi; r++) {
            const NR_T *x = X + r * L, *g = G + r * L;
            NR_A mean = MEAN[r], rstd = RSTD[r];
            for (int64_t i = 0; i < L; i++) {
                NR_A gv = NR_LD(g[i]), xh = (NR_LD(x[i]) - mean) * rstd;
                if (pw_) pw_[i] += gv * xh;
                if (pb_) pb_[i] += gv;
            }
            if (!GX) continue;
            NR_A s1[NR_LANES] = {0}, s2[NR_LANES] = {0};
            NR_LANE_LOOP(L, NR_A gw = NR_LD(g[k]) * (w ? NR_LD(w[k]) : (NR_A)1);
                         s1[j] += gw; s2[j] += gw * (NR_LD(x[k]) - mean) * rstd);
            NR_A a = nr_merge(s1) / (NR_A)L, c = nr_merge(s2) / (NR_A)L;
            NR_T *gx = GX + r * L;
            for (int64_t i = 0; i < L; i++) {
                NR_A gw = NR_LD(g[i]) * (w ? NR_LD(w[i]) : (NR_A)1);
                gx[i] = NR_ST(rstd * (gw - a - (NR_LD(x[i]) - mean) * rstd * c));
            }
        }
    }
}

/* ---------------------------------------------------------------- cross-entropy (class indices) */

/* Per row i with target t (rows with t == ignore give 0):
 *   loss = (1 - eps) * w[t] * (lse - x[t]) + eps / C * sum_c w[c] * (lse - x[c])
 * (w = 1 when absent), lse = log(sum(exp(x))) stored for backward. Returns -1, or the first row
 * whose target is neither in [0, C) nor ignore (then nothing is computed). */
int64_t NR_FN(ce_fwd)(intptr_t px, intptr_t pt, intptr_t pw, intptr_t ploss, intptr_t plse,
                      int64_t rows, int64_t C, int64_t ignore, double eps, int nthreads) {
    const NR_T *X = (const NR_T *)px, *w = (const NR_T *)pw; const int64_t *T = (const int64_t *)pt;
    NR_T *LOSS = (NR_T *)ploss; NR_A *LSE = (NR_A *)plse;
    for (int64_t r = 0; r < rows; r++)
        if (T[r] != ignore && (T[r] < 0 || T[r] >= C)) return r;
    int nt = nr_threads(rows * C, nthreads);
    NR_A ls_eps = (NR_A)eps, keep = (NR_A)(1.0 - eps), per = (NR_A)(eps / (double)C);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const NR_T *x = X + r * C;
        NR_A m = nr_max(x, C), ls = SX_LOG(nr_sumexp(x, C, m, NULL));
        LSE[r] = m + ls;
        int64_t t = T[r];
        if (t == ignore) { LOSS[r] = NR_ST((NR_A)0); continue; }
        NR_A loss = keep * (w ? NR_LD(w[t]) : (NR_A)1) * (ls - (NR_LD(x[t]) - m));
        if (ls_eps != 0) {
            NR_A s[NR_LANES] = {0};
            NR_LANE_LOOP(C, s[j] += (w ? NR_LD(w[k]) : (NR_A)1) * (ls - (NR_LD(x[k]) - m)));
            loss += per * nr_merge(s);
        }
        LOSS[r] = NR_ST(loss);
    }
    return -1;
}

/* gx[c] = g[i] * ((1 - eps) * w[t] * (p[c] - [c == t]) + eps / C * (W * p[c] - w[c])),
 * p = exp(x - lse), W = sum(w) (C when absent); ignored rows get 0. */
void NR_FN(ce_bwd)(intptr_t px, intptr_t pt, intptr_t pw, intptr_t plse, intptr_t pg, intptr_t pgx,
                   int64_t rows, int64_t C, int64_t ignore, double eps, double wsum, int nthreads) {
    const NR_T *X = (const NR_T *)px, *w = (const NR_T *)pw, *G = (const NR_T *)pg;
    const int64_t *T = (const int64_t *)pt; const NR_A *LSE = (const NR_A *)plse;
    NR_T *GX = (NR_T *)pgx;
    NR_A keep = (NR_A)(1.0 - eps), per = (NR_A)(eps / (double)C), W = (NR_A)wsum;
    int nt = nr_threads(rows * C, nthreads);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const NR_T *x = X + r * C; NR_T *gx = GX + r * C;
        int64_t t = T[r];
        if (t == ignore) { for (int64_t c = 0; c < C; c++) gx[c] = NR_ST((NR_A)0); continue; }
        NR_A g = NR_LD(G[r]), lse = LSE[r];
        NR_A hot = g * keep * (w ? NR_LD(w[t]) : (NR_A)1);
        NR_A cp = hot + g * per * W, cw = g * per;
        for (int64_t c = 0; c < C; c++)
            gx[c] = NR_ST(cp * SX_EXP(NR_LD(x[c]) - lse) - cw * (w ? NR_LD(w[c]) : (NR_A)1)
                          - (c == t ? hot : (NR_A)0));
    }
}
