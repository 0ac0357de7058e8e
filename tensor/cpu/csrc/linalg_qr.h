/* Householder QR of tensor/cpu/linalg.py: part of linalg.h (its scalar helpers, panel width,
 * threading macros and batch helpers), included by it at its end. */
#ifndef STRIDEX_LINALG_QR_H
#define STRIDEX_LINALG_QR_H

/* ------------------------------------------------------------------------------------------
 * Householder QR (LAPACK's geqr2 / ung2r conventions): H_j = I - tau_j v v^H, v[0] = 1, with
 * H_j^H x = beta e_1, beta real; A = H_0 ... H_{k-1} R. v is kept below the diagonal of a. */

/* ||x|| over cnt elements at stride inc, scaled so that no square overflows or underflows */
static double la_nrm2(const la_t *x, int64_t cnt, int64_t inc) {
    double mx = 0.0;
    for (int64_t i = 0; i < cnt; i++) {
        la_t v = x[i * inc];
        double t = fabs(la_re(v)) > fabs(la_im(v)) ? fabs(la_re(v)) : fabs(la_im(v));
        if (t > mx || t != t) mx = t;
    }
    if (mx == 0.0 || !(mx <= 1.7976931348623157e308)) return mx;
    double acc = 0.0;   /* divided, not times 1 / mx: that overflows for a subnormal mx */
    for (int64_t i = 0; i < cnt; i++) {
        la_t v = x[i * inc];
        double r = la_re(v) / mx, im = la_im(v) / mx;
        acc += r * r + im * im;
    }
    return mx * sqrt(acc);
}

/* -sign(re al) ||(al, xn)|| (hypot: no overflow or underflow in the squares) */
static double la_beta(la_t al, double xn) {
    const double beta = hypot(hypot(la_re(al), la_im(al)), xn);
    return la_re(al) >= 0.0 ? -beta : beta;
}

/* The reflector of column x[0..cnt) (stride inc): x[0] becomes beta, x[1..] v[1..]; tau.
 * As LAPACK's larfg, a column whose norm is below LA_SAFMIN is scaled up first (repeated
 * reflections of nearly dependent columns shrink it by eps per step): 1 / (al - beta) would
 * overflow. */
#define LA_SAFMIN (2.2250738585072014e-308 / 1.1102230246251565e-16)
static la_t la_house(la_t *x, int64_t cnt, int64_t inc) {
    la_t al = x[0];
    double xn = la_nrm2(x + inc, cnt - 1, inc);
    if (xn == 0.0 && la_im(al) == 0.0) return la_mk(0.0, 0.0);
    double beta = la_beta(al, xn);
    int knt = 0;
    if (fabs(beta) < LA_SAFMIN) {
        const la_t up = la_mk(1.0 / LA_SAFMIN, 0.0);
        do {
            knt++;
            for (int64_t i = 1; i < cnt; i++) x[i * inc] = la_mul(x[i * inc], up);
            al = la_mul(al, up);
            beta /= LA_SAFMIN;
        } while (fabs(beta) < LA_SAFMIN && knt < 20);
        xn = la_nrm2(x + inc, cnt - 1, inc);
        beta = la_beta(al, xn);
    }
    const la_t tau = la_mk((beta - la_re(al)) / beta, -la_im(al) / beta);
    const la_t s = la_recip(la_sub(al, la_mk(beta, 0.0)));
    for (int64_t i = 1; i < cnt; i++) x[i * inc] = la_mul(x[i * inc], s);
    for (int j = 0; j < knt; j++) beta *= LA_SAFMIN;
    x[0] = la_mk(beta, 0.0);
    return tau;
}

/* The first column block (LA_CB columns each, dealt to the threads in turn, so a column's
 * owner never changes) that thread tid owns at or after column c0. */
SX_INLINE int64_t la_blk0(int64_t c0, int tid, int nth) {
    const int64_t b0 = c0 / LA_CB;
    return b0 + ((tid - b0 % nth) % nth + nth) % nth;
}

/* Apply (I - t v v^H) to the rows r0..m-1 of the columns of c (ld ldc) that thread tid owns
 * among [c0, c1); v[i] for i > r0 at v[i * ldv], v[r0] = 1. */
static void la_reflect(la_t *c, int64_t ldc, int64_t r0, int64_t m, int64_t c0, int64_t c1,
                       const la_t *v, int64_t ldv, la_t t, int tid, int nth) {
    la_t w[LA_CB];
    for (int64_t blk = la_blk0(c0, tid, nth); blk * LA_CB < c1; blk += nth) {
        const int64_t lo = blk * LA_CB > c0 ? blk * LA_CB : c0;
        const int64_t wd = LA_MIN(blk * LA_CB + LA_CB, c1) - lo;
        for (int64_t j = 0; j < wd; j++) w[j] = c[r0 * ldc + lo + j];
        for (int64_t i = r0 + 1; i < m; i++)
            la_axpy(wd, la_conj(v[i * ldv]), c + i * ldc + lo, w);
        la_axmy(wd, t, w, c + r0 * ldc + lo);
        for (int64_t i = r0 + 1; i < m; i++)
            la_axmy(wd, la_mul(t, v[i * ldv]), w, c + i * ldc + lo);
    }
}

/* Blocked by panels of LA_NB reflectors in the compact WY form (LAPACK's geqrf / larft /
 * larfb): H_j0 ... H_je-1 = I - V T V^H, V the panel's unit lower trapezoid, T upper
 * triangular. Applying it reads each trailing element twice per panel, not twice per column. */

/* V[i, s] of the panel starting at column j0 (1 on its diagonal, 0 above) */
SX_INLINE la_t la_v(const la_t *a, int64_t lda, int64_t j0, int64_t i, int64_t s) {
    const int64_t d = i - j0 - s;
    return d > 0 ? a[i * lda + j0 + s] : la_mk(d == 0 ? 1.0 : 0.0, 0.0);
}

/* T (LA_NB x LA_NB, row-major) of the jb reflectors of the panel at j0: T[s, s] = tau_s,
 * T[0:s, s] = -tau_s T[0:s, 0:s] V[:, 0:s]^H v_s. */
static void la_qr_t(const la_t *a, int64_t m, int64_t lda, int64_t j0, int64_t jb,
                    const la_t *tau, la_t *T) {
    for (int64_t s = 0; s < jb; s++) {
        la_t z[LA_NB];
        for (int64_t t = 0; t < s; t++) z[t] = la_conj(a[(j0 + s) * lda + j0 + t]);
        for (int64_t i = j0 + s + 1; i < m; i++) {
            const la_t *ai = a + i * lda + j0;
            for (int64_t t = 0; t < s; t++) z[t] = la_add(z[t], la_mul(la_conj(ai[t]), ai[s]));
        }
        for (int64_t r = 0; r < s; r++) {
            la_t acc = la_mk(0.0, 0.0);
            for (int64_t t = r; t < s; t++) acc = la_add(acc, la_mul(T[r * LA_NB + t], z[t]));
            T[r * LA_NB + s] = la_mul(la_mk(-la_re(tau[s]), -la_im(tau[s])), acc);
        }
        T[s * LA_NB + s] = tau[s];
    }
}

/* C := (I - V X V^H) C on rows j0..m-1 of the columns thread tid owns among [c0, c1), with
 * X = T^H (herm: applies the panel's H^H, for R) or T (applies H, for Q). */
static void la_reflect_blk(la_t *c, int64_t ldc, int64_t j0, int64_t m, int64_t c0, int64_t c1,
                           const la_t *a, int64_t lda, int64_t jb, const la_t *T, int herm,
                           int tid, int nth) {
    la_t W[LA_NB * LA_CB];
    for (int64_t blk = la_blk0(c0, tid, nth); blk * LA_CB < c1; blk += nth) {
        int64_t lo = blk * LA_CB, hi = lo + LA_CB;
        if (lo < c0) lo = c0;
        if (hi > c1) hi = c1;
        const int64_t wd = hi - lo;
        for (int64_t j = 0; j < jb * wd; j++) W[j] = la_mk(0.0, 0.0);
        for (int64_t i = j0; i < m; i++) {       /* W = V^H C */
            const la_t *ci = c + i * ldc + lo;
            for (int64_t s = 0; s < jb; s++) {
                const la_t v = la_v(a, lda, j0, i, s);
                if (!la_iszero(v)) la_axpy(wd, la_conj(v), ci, W + s * wd);
            }
        }
        for (int64_t q = 0; q < jb; q++) {       /* W = X W, in place */
            const int64_t s = herm ? jb - 1 - q : q;
            la_t d = T[s * LA_NB + s];
            la_scal(wd, herm ? la_conj(d) : d, W + s * wd);
            const int64_t t0 = herm ? 0 : s + 1, t1 = herm ? s : jb;
            for (int64_t t = t0; t < t1; t++) {
                const la_t x = herm ? la_conj(T[t * LA_NB + s]) : T[s * LA_NB + t];
                if (!la_iszero(x)) la_axpy(wd, x, W + t * wd, W + s * wd);
            }
        }
        for (int64_t i = j0; i < m; i++) {       /* C -= V W */
            la_t *ci = c + i * ldc + lo;
            if (i >= j0 + jb) {
                la_axmy_k(wd, jb, a + i * lda + j0, W, wd, ci);
                continue;
            }
            for (int64_t s = 0; s < jb; s++) {
                const la_t v = la_v(a, lda, j0, i, s);
                if (!la_iszero(v)) la_axmy(wd, v, W + s * wd, ci);
            }
        }
    }
}

/* R = H_{k-1}^H ... H_0^H A in a's upper triangle, the v below it, tau[0..k). Thread 0
 * factors each panel unblocked; every thread then forms T (cheap) and updates its columns. */
static void la_qr1(la_t *a, int64_t m, int64_t n, int64_t lda, la_t *tau, int tid, int nth) {
    const int64_t k = LA_MIN(m, n);
    la_t T[LA_NB * LA_NB];
    for (int64_t j0 = 0; j0 < k; j0 += LA_NB) {
        if (nth > 1 && (m - j0) * (n - j0) < LA_STEP_MIN) {
            if (tid != 0) return;
            nth = 1;
        }
        const int64_t je = LA_MIN(j0 + LA_NB, k);
        if (tid == 0)
            for (int64_t j = j0; j < je; j++) {
                tau[j] = la_house(a + j * lda + j, m - j, lda);
                if (!la_iszero(tau[j]) && j + 1 < je)
                    la_reflect(a, lda, j, m, j + 1, je, a + j, lda, la_conj(tau[j]), 0, 1);
            }
        LA_SYNC(nth);
        if (je < n) {
            la_qr_t(a, m, lda, j0, je - j0, tau + j0, T);
            la_reflect_blk(a, lda, j0, m, je, n, a, lda, je - j0, T, 1, tid, nth);
        }
        LA_SYNC(nth);
    }
}

/* Q = H_0 ... H_{k-1} I[:, :kq] (m x kq), accumulated backwards by panels: a panel only
 * touches the rows and columns >= its first column of the partial product. Each thread owns
 * its column blocks throughout (and forms the panels' T itself): no barriers. */
static void la_q1(const la_t *a, int64_t m, int64_t lda, int64_t k, const la_t *tau, la_t *q,
                  int64_t kq, int64_t ldq, int tid, int nth) {
    la_t T[LA_NB * LA_NB];
    for (int64_t blk = la_blk0(0, tid, nth); blk * LA_CB < kq; blk += nth) {
        const int64_t lo = blk * LA_CB, hi = LA_MIN(lo + LA_CB, kq);
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = lo; c < hi; c++) q[i * ldq + c] = la_mk(c == i ? 1.0 : 0.0, 0.0);
    }
    if (k <= LA_NB) {   /* one panel: T costs more than it saves */
        for (int64_t j = k - 1; j >= 0; j--)
            if (!la_iszero(tau[j])) la_reflect(q, ldq, j, m, j, kq, a + j, lda, tau[j], tid, nth);
        return;
    }
    for (int64_t j0 = (k - 1) / LA_NB * LA_NB; j0 >= 0; j0 -= LA_NB) {
        const int64_t jb = LA_MIN(LA_NB, k - j0);
        la_qr_t(a, m, lda, j0, jb, tau + j0, T);
        la_reflect_blk(q, ldq, j0, m, j0, kq, a, lda, jb, T, 0, tid, nth);
    }
}

/* R's rows [r0, r1) (kr x n): a's upper triangle, zeros below it and in rows >= k. */
static void la_rcopy(const la_t *a, int64_t lda, int64_t k, la_t *r, int64_t ldr, int64_t n,
                     int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; i++)
        for (int64_t c = 0; c < n; c++)
            r[i * ldr + c] = (i < k && c >= i) ? a[i * lda + c] : la_mk(0.0, 0.0);
}

/* ------------------------------------------------------------------------------------------
 * Entry point: one call per batch; 0, or -1 when a work buffer could not be allocated. */
int LA_FN(qr)(intptr_t ap, int64_t B, int64_t m, int64_t n, int64_t bsa, int64_t lda,
              intptr_t qp, int64_t kq, int64_t bsq, int64_t ldq, intptr_t rp, int64_t kr,
              int64_t bsr, int64_t ldr, intptr_t infop, int nthreads) {
    la_t *a = (la_t *)ap, *q = (la_t *)qp, *r = (la_t *)rp;
    int64_t *info = (int64_t *)infop;
    const int64_t k = LA_MIN(m, n);
    const size_t wbytes = sizeof(la_t) * (size_t)(k > 0 ? k : 1);
    for (int64_t b = 0; b < B; b++) info[b] = 0;
    const int par = la_one_big(B, m * n, nthreads);
    const int nt = par ? nthreads : la_batch_threads(B, m * n, nthreads);
    la_t *shared = par ? (la_t *)malloc(wbytes) : NULL;
    if (par && !shared) return -1;
    int bad = 0;
    _Pragma("omp parallel num_threads(nt) if (nt > 1) reduction(|:bad)")
    if (par) {
        const int tid = LA_TID(), nth = LA_NTH();
        la_qr1(a, m, n, lda, shared, tid, nth);
        LA_SYNC(nth);
        LA_PART(0, kr, tid, nth, lo, hi);
        la_rcopy(a, lda, k, r, ldr, n, lo, hi);
        if (q) la_q1(a, m, lda, k, shared, q, kq, ldq, tid, nth);
    } else {
        la_t *tau = (la_t *)malloc(wbytes);
        _Pragma("omp for schedule(dynamic, LA_CHUNK)")
        for (int64_t b = 0; b < B; b++) {
            if (!tau) { bad = 1; continue; }
            la_t *ab = a + b * bsa;
            la_qr1(ab, m, n, lda, tau, 0, 1);
            la_rcopy(ab, lda, k, r + b * bsr, ldr, n, 0, kr);
            if (q) la_q1(ab, m, lda, k, tau, q + b * bsq, kq, ldq, 0, 1);
        }
        free(tau);
    }
    free(shared);
    return bad ? -1 : 0;
}

#endif
