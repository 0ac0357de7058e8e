/* Dense factorizations and triangular solves of batches of row-major matrices
 * (tensor/cpu/linalg.py): LU with partial pivoting, Cholesky, triangular solve, LU solve and
 * Householder QR (linalg_qr.h), for float64 and complex128. Element (i, j) of matrix b is at
 * ptr[b * bs + i * ld + j] (ld >= columns, any batch stride). Written once for both types:
 * the including module defines LA_COMPLEX (0 or 1) and LA_S (the dtype suffix, f64 or c128),
 * and the helpers below (la_mul, la_axpy...) take the matching form.
 *
 * Inner loops run along contiguous rows (they vectorise). LU, Cholesky and QR work by panels
 * of LA_NB columns (LAPACK's getrf / potrf / geqrf orders): the panel is factored column by
 * column, then the trailing matrix takes one rank-LA_NB update (QR: the panel's reflectors in
 * compact WY form, I - V T V^H), so each trailing element is read once per panel instead of
 * once per column. The solves run along the rows of the right-hand side (few right-hand
 * sides: along A's rows instead).
 *
 * Threads: a batch is spread over them, one matrix per thread at a time (dynamic chunks). A
 * single large matrix is worked on by the whole team: each panel's trailing update is split
 * by rows (LU, Cholesky) or by fixed column blocks (QR, Q, the solves), with a barrier
 * between the serial panel (thread 0) and the update; once the trailing matrix is small the
 * other threads leave and thread 0 finishes alone. Every element is computed by the same
 * operations in the same order whatever the thread count: results are bitwise reproducible. */
#ifndef STRIDEX_LINALG_H
#define STRIDEX_LINALG_H
#include "common.h"
#include "scalar/complex.h"

#define LA_CAT2(a, b) a##_##b
#define LA_CAT(a, b) LA_CAT2(a, b)
#define LA_FN(f) LA_CAT(la_##f, LA_S)

/* A single matrix is split over the team when it has at least this many elements; a step
 * runs on thread 0 alone once its trailing part has fewer than LA_STEP_MIN. */
#define LA_PAR_MIN (160 * 160)
#define LA_STEP_MIN (48 * 48)
#define LA_BATCH_MIN 4096   /* elements in a batch worth a team */
#define LA_CB 64   /* column block of the column-split updates */
/* batch items per dynamic chunk (a thread held up does not hold up the batch) */
#define LA_CHUNK 8

#ifdef _OPENMP
#define LA_TID() omp_get_thread_num()
#define LA_NTH() omp_get_num_threads()
#else
#define LA_TID() 0
#define LA_NTH() 1
#endif
#define LA_SYNC(nth) do { if ((nth) > 1) { _Pragma("omp barrier") } } while (0)
#define LA_MIN(a, b) ((a) < (b) ? (a) : (b))
/* explicit multiply-adds: a vector loop's body and remainder round alike */
#if defined(__FMA__) || defined(__aarch64__)
#define LA_FMA(a, b, c) fma(a, b, c)
#else
#define LA_FMA(a, b, c) ((a) * (b) + (c))
#endif

#if LA_COMPLEX
typedef sx_cd la_t;
SX_INLINE la_t la_mk(double re, double im) { la_t z; z.re = re; z.im = im; return z; }
SX_INLINE double la_re(la_t a) { return a.re; }
SX_INLINE double la_im(la_t a) { return a.im; }
SX_INLINE la_t la_conj(la_t a) { return la_mk(a.re, -a.im); }
SX_INLINE la_t la_mul(la_t a, la_t b) {
    return la_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
SX_INLINE la_t la_sub(la_t a, la_t b) { return la_mk(a.re - b.re, a.im - b.im); }
SX_INLINE la_t la_add(la_t a, la_t b) { return la_mk(a.re + b.re, a.im + b.im); }
SX_INLINE la_t la_rscale(la_t a, double r) { return la_mk(a.re * r, a.im * r); }
SX_INLINE double la_abs1(la_t a) { return fabs(a.re) + fabs(a.im); }
SX_INLINE int la_iszero(la_t a) { return a.re == 0.0 && a.im == 0.0; }
/* 1 / a, scaled as Smith's division so that neither part overflows first */
SX_INLINE la_t la_recip(la_t a) {
    if (fabs(a.re) >= fabs(a.im)) {
        double t = a.im / a.re, d = a.re + a.im * t;
        return la_mk(1.0 / d, -t / d);
    }
    double t = a.re / a.im, d = a.re * t + a.im;
    return la_mk(t / d, -1.0 / d);
}
/* a / b, Smith's scaling: for the divisors whose reciprocal overflows (la_recip_ok) */
SX_INLINE la_t la_div(la_t a, la_t b) {
    if (fabs(b.re) >= fabs(b.im)) {
        double t = b.im / b.re, d = b.re + b.im * t;
        return la_mk((a.re + a.im * t) / d, (a.im - a.re * t) / d);
    }
    double t = b.re / b.im, d = b.re * t + b.im;
    return la_mk((a.re * t + a.im) / d, (a.im * t - a.re) / d);
}
SX_INLINE int la_recip_ok(la_t a) { return fmax(fabs(a.re), fabs(a.im)) >= 0x1p-1022; }
/* y += al * x, x *= al over n elements (contiguous, not overlapping) */
SX_INLINE void la_axpy(int64_t n, la_t al, const la_t *restrict x, la_t *restrict y) {
    const double ar = al.re, ai = al.im;
    const double *restrict xd = (const double *)x;
    double *restrict yd = (double *)y;
    for (int64_t j = 0; j < n; j++) {
        double xr = xd[2 * j], xi = xd[2 * j + 1];
        yd[2 * j] = LA_FMA(ar, xr, LA_FMA(-ai, xi, yd[2 * j]));
        yd[2 * j + 1] = LA_FMA(ar, xi, LA_FMA(ai, xr, yd[2 * j + 1]));
    }
}
SX_INLINE void la_scal(int64_t n, la_t al, la_t *restrict x) {
    const double ar = al.re, ai = al.im;
    double *restrict xd = (double *)x;
    for (int64_t j = 0; j < n; j++) {
        double xr = xd[2 * j], xi = xd[2 * j + 1];
        xd[2 * j] = LA_FMA(ar, xr, -ai * xi);
        xd[2 * j + 1] = LA_FMA(ar, xi, ai * xr);
    }
}
#else
typedef double la_t;
SX_INLINE la_t la_mk(double re, double im) { (void)im; return re; }
SX_INLINE double la_re(la_t a) { return a; }
SX_INLINE double la_im(la_t a) { (void)a; return 0.0; }
SX_INLINE la_t la_conj(la_t a) { return a; }
SX_INLINE la_t la_mul(la_t a, la_t b) { return a * b; }
SX_INLINE la_t la_sub(la_t a, la_t b) { return a - b; }
SX_INLINE la_t la_add(la_t a, la_t b) { return a + b; }
SX_INLINE la_t la_rscale(la_t a, double r) { return a * r; }
SX_INLINE double la_abs1(la_t a) { return fabs(a); }
SX_INLINE int la_iszero(la_t a) { return a == 0.0; }
SX_INLINE la_t la_recip(la_t a) { return 1.0 / a; }
SX_INLINE la_t la_div(la_t a, la_t b) { return a / b; }
SX_INLINE int la_recip_ok(la_t a) { return fabs(a) >= 0x1p-1022; }
SX_INLINE void la_axpy(int64_t n, la_t al, const la_t *restrict x, la_t *restrict y) {
    for (int64_t j = 0; j < n; j++) y[j] = LA_FMA(al, x[j], y[j]);
}
SX_INLINE void la_scal(int64_t n, la_t al, la_t *restrict x) {
    for (int64_t j = 0; j < n; j++) x[j] *= al;
}
#endif

/* Whether x / p may be taken as x * (1 / p) (p at least the smallest normal number): for a
 * subnormal p, 1 / p overflows and 0 * inf is NaN, so each x is divided instead (LAPACK's
 * sfmin test in getf2). la_dvp: x / p the one way or the other. */
SX_INLINE la_t la_dvp(la_t x, la_t p) {
    return la_recip_ok(p) ? la_mul(x, la_recip(p)) : la_div(x, p);
}

/* y -= al * x */
SX_INLINE void la_axmy(int64_t n, la_t al, const la_t *restrict x, la_t *restrict y) {
    la_axpy(n, la_mk(-la_re(al), -la_im(al)), x, y);
}

/* The share [lo, hi) of thread tid of nth in the range [a, b), in contiguous pieces. */
#define LA_PART(a, b, tid, nth, lo, hi) const int64_t lo = (a) + ((b) - (a)) * (tid) / (nth), \
    hi = (a) + ((b) - (a)) * ((tid) + 1) / (nth)

/* Threads for a batch of B jobs of `work` elements each. */
static int la_batch_threads(int64_t B, int64_t work, int nthreads) {
    if (nthreads <= 1 || B <= 1 || B * work < LA_BATCH_MIN) return 1;
    return (int)LA_MIN((int64_t)nthreads, B);
}

/* ------------------------------------------------------------------------------------------
 * LU: P A = L U, right-looking, LA_NB columns at a time (LAPACK's getrf order with a panel of
 * LA_NB): thread 0 factors the m x LA_NB panel column by column (pivot: largest |re| + |im|,
 * the first on ties; whole rows swapped) and solves its LA_NB rows of U; then the rows below
 * take the rank-LA_NB update, split over the threads. Reading each trailing element once per
 * LA_NB columns instead of once per column is what makes the update fast. */
#define LA_NB 8

/* y[c] -= sum_s l[s] u[s * ldu + c] over s < jb and c < n: one pass when jb == LA_NB */
SX_INLINE void la_axmy_k(int64_t n, int64_t jb, const la_t *l, const la_t *u, int64_t ldu,
                         la_t *restrict y) {
    if (jb != LA_NB) {
        for (int64_t s = 0; s < jb; s++) la_axmy(n, l[s], u + s * ldu, y);
        return;
    }
#if LA_COMPLEX
    double lr[LA_NB], li[LA_NB];
    for (int s = 0; s < LA_NB; s++) { lr[s] = l[s].re; li[s] = l[s].im; }
    const double *ud = (const double *)u;
    double *restrict yd = (double *)y;
    for (int64_t c = 0; c < n; c++) {
        double tr = 0.0, ti = 0.0;
        for (int s = 0; s < LA_NB; s++) {
            double ur = ud[2 * (s * ldu + c)], ui = ud[2 * (s * ldu + c) + 1];
            tr = LA_FMA(lr[s], ur, LA_FMA(-li[s], ui, tr));
            ti = LA_FMA(lr[s], ui, LA_FMA(li[s], ur, ti));
        }
        yd[2 * c] -= tr;
        yd[2 * c + 1] -= ti;
    }
#else
    double lv[LA_NB];
    for (int s = 0; s < LA_NB; s++) lv[s] = l[s];
    for (int64_t c = 0; c < n; c++) {
        double t = 0.0;
        for (int s = 0; s < LA_NB; s++) t = LA_FMA(lv[s], u[s * ldu + c], t);
        y[c] -= t;
    }
#endif
}

/* Thread 0's part of an LU step: factor the panel columns [j0, je) over rows j0..m-1 and
 * solve the panel's rows of U (columns je..n-1) with its unit lower triangle. */
static void la_lu_panel(la_t *a, int64_t m, int64_t n, int64_t lda, int64_t j0, int64_t je,
                        int64_t *piv, int64_t *info) {
    for (int64_t j = j0; j < je; j++) {
        la_t *aj = a + j * lda;
        int64_t p = j;
        double best = la_abs1(aj[j]);
        for (int64_t i = j + 1; i < m; i++) {
            double v = la_abs1(a[i * lda + j]);
            if (v > best) { best = v; p = i; }
        }
        piv[j] = p;
        if (p != j) {
            la_t *ap = a + p * lda;
            for (int64_t c = 0; c < n; c++) { la_t t = aj[c]; aj[c] = ap[c]; ap[c] = t; }
        }
        if (la_iszero(aj[j])) {
            if (*info == 0) *info = j + 1;
            continue;
        }
        const int rec = la_recip_ok(aj[j]);
        const la_t r = rec ? la_recip(aj[j]) : aj[j];
        for (int64_t i = j + 1; i < m; i++) {
            la_t *ai = a + i * lda;
            const la_t l = rec ? la_mul(ai[j], r) : la_div(ai[j], aj[j]);
            ai[j] = l;
            for (int64_t c = j + 1; c < je; c++) ai[c] = la_sub(ai[c], la_mul(l, aj[c]));
        }
    }
    for (int64_t t = j0 + 1; t < je; t++)
        for (int64_t s = j0; s < t; s++)
            la_axmy(n - je, a[t * lda + s], a + s * lda + je, a + t * lda + je);
}

static void la_lu1(la_t *a, int64_t m, int64_t n, int64_t lda, int64_t *piv, int64_t *info,
                   int tid, int nth) {
    const int64_t k = LA_MIN(m, n);
    if (tid == 0) *info = 0;
    for (int64_t j0 = 0; j0 < k; j0 += LA_NB) {
        if (nth > 1 && (m - j0) * (n - j0) < LA_STEP_MIN) {   /* the rest on thread 0 */
            if (tid != 0) return;
            nth = 1;
        }
        const int64_t je = LA_MIN(j0 + LA_NB, k), w = n - je;
        if (tid == 0) la_lu_panel(a, m, n, lda, j0, je, piv, info);
        LA_SYNC(nth);
        if (w > 0) {
            LA_PART(je, m, tid, nth, lo, hi);
            const la_t *u = a + j0 * lda + je;
            for (int64_t i = lo; i < hi; i++)
                la_axmy_k(w, je - j0, a + i * lda + j0, u, lda, a + i * lda + je);
        }
        LA_SYNC(nth);
    }
}

/* ------------------------------------------------------------------------------------------
 * Cholesky A = L L^H from the lower triangle, right-looking by panels of LA_NB columns (as
 * LU): thread 0 factors the panel (square root of each pivot, the column below scaled, the
 * panel's later columns updated) and copies it conjugate-transposed into P (LA_NB x the rows
 * below, contiguous); then every row i below the panel subtracts L[i, panel] P[:, ..i] from its
 * part of the lower triangle, rows dealt to the threads in turn (their lengths grow with i).
 * The factorization stops at the first pivot not > 0 (or NaN), as LAPACK's potrf; the strict
 * upper triangle is zeroed. */
static void la_chol1(la_t *a, int64_t n, int64_t lda, la_t *P, int64_t *info, int tid,
                     int nth) {
    if (tid == 0) *info = 0;
    for (int64_t j0 = 0; j0 < n; j0 += LA_NB) {
        if (nth > 1 && (n - j0) * (n - j0) < 2 * LA_STEP_MIN) {
            if (tid != 0) break;
            nth = 1;
        }
        const int64_t je = LA_MIN(j0 + LA_NB, n), w = n - je;
        if (tid == 0) {
            for (int64_t j = j0; j < je && !*info; j++) {
                double d = la_re(a[j * lda + j]);
                if (!(d > 0.0)) { *info = j + 1; break; }
                d = sqrt(d);
                a[j * lda + j] = la_mk(d, 0.0);
                const double r = 1.0 / d;
                for (int64_t i = j + 1; i < n; i++) {
                    la_t *ai = a + i * lda;
                    const la_t l = la_rscale(ai[j], r);
                    ai[j] = l;
                    const int64_t ce = LA_MIN(i + 1, je);
                    for (int64_t c = j + 1; c < ce; c++)
                        ai[c] = la_sub(ai[c], la_mul(l, la_conj(a[c * lda + j])));
                }
            }
            if (!*info)
                for (int64_t s = 0; s < je - j0; s++)
                    for (int64_t c = 0; c < w; c++)
                        P[s * w + c] = la_conj(a[(je + c) * lda + j0 + s]);
        }
        LA_SYNC(nth);
        if (*info) break;   /* the same for every thread: read between two barriers */
        for (int64_t i = je + tid; i < n; i += nth)
            la_axmy_k(i - je + 1, je - j0, a + i * lda + j0, P, w, a + i * lda + je);
        LA_SYNC(nth);
    }
    if (tid != 0) return;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = i + 1; c < n; c++) a[i * lda + c] = la_mk(0.0, 0.0);
}

/* ------------------------------------------------------------------------------------------
 * Triangular solve op(A) X = B on the columns [c0, c1) of b (n x k). op(A)[i, p] is read
 * where the solve needs it; the updates run along B's rows: row i of X is its row of B less
 * op(A)[i, p] X[p] over the solved rows p, times 1 / op(A)[i, i]. */
SX_INLINE la_t la_opa(const la_t *a, int64_t lda, int64_t i, int64_t p, int trans) {
    if (trans == 0) return a[i * lda + p];
    la_t v = a[p * lda + i];
    return trans == 2 ? la_conj(v) : v;
}

/* One column x (stride ldx), for few right-hand sides (the rows of B are too short to loop
 * along): with op(A) = A a dot product along A's row per unknown, with A^T / A^H each solved
 * unknown is subtracted along A's row from the unsolved ones. Both walk A by rows. */
static void la_trsv1(const la_t *a, int64_t n, int64_t lda, la_t *x, int64_t ldx, int lower,
                     int unit, int trans) {
    const int fwd = trans == 0 ? lower : !lower;
    for (int64_t s = 0; s < n; s++) {
        const int64_t i = fwd ? s : n - 1 - s;
        const la_t *ai = a + i * lda;
        if (trans == 0) {
            la_t acc = x[i * ldx];
            for (int64_t p = fwd ? 0 : i + 1, pe = fwd ? i : n; p < pe; p++)
                acc = la_sub(acc, la_mul(ai[p], x[p * ldx]));
            x[i * ldx] = unit ? acc : la_dvp(acc, ai[i]);
            continue;
        }
        la_t xi = x[i * ldx];
        if (!unit) {
            xi = la_dvp(xi, trans == 2 ? la_conj(ai[i]) : ai[i]);
            x[i * ldx] = xi;
        }
        for (int64_t r = fwd ? i + 1 : 0, re = fwd ? n : i; r < re; r++)
            x[r * ldx] = la_sub(x[r * ldx], la_mul(xi, trans == 2 ? la_conj(ai[r]) : ai[r]));
    }
}

/* Right-hand sides at most this many: la_trsv1 column by column (decided on B's whole width,
 * so the thread count never changes which code computes a column). */
#define LA_NARROW 3

static void la_trsm1(const la_t *a, int64_t n, int64_t lda, la_t *b, int64_t ldb, int64_t c0,
                     int64_t c1, int lower, int unit, int trans, int narrow) {
    const int64_t w = c1 - c0;
    if (w <= 0) return;
    if (narrow) {
        for (int64_t c = c0; c < c1; c++) la_trsv1(a, n, lda, b + c, ldb, lower, unit, trans);
        return;
    }
    const int fwd = trans == 0 ? lower : !lower;   /* op(A) lower: forward substitution */
    for (int64_t s = 0; s < n; s++) {
        const int64_t i = fwd ? s : n - 1 - s;
        la_t *bi = b + i * ldb + c0;
        for (int64_t p = fwd ? 0 : i + 1, pe = fwd ? i : n; p < pe; p++) {
            const la_t v = la_opa(a, lda, i, p, trans);
            if (!la_iszero(v)) la_axmy(w, v, b + p * ldb + c0, bi);
        }
        if (!unit) {
            const la_t d = la_opa(a, lda, i, i, trans);
            if (la_recip_ok(d)) la_scal(w, la_recip(d), bi);
            else for (int64_t c = 0; c < w; c++) bi[c] = la_div(bi[c], d);
        }
    }
}

/* The row interchanges of lu() on the columns [c0, c1) of b, in order (fwd) or reversed. */
static void la_swaps(la_t *b, int64_t ldb, const int64_t *piv, int64_t n, int64_t c0,
                     int64_t c1, int fwd) {
    for (int64_t s = 0; s < n; s++) {
        const int64_t j = fwd ? s : n - 1 - s, p = piv[j];
        if (p == j) continue;
        la_t *x = b + j * ldb, *y = b + p * ldb;
        for (int64_t c = c0; c < c1; c++) { la_t t = x[c]; x[c] = y[c]; y[c] = t; }
    }
}

/* A = P^T L U: A X = B is L U X = P B; A^T X = B (or A^H) is U^T L^T (P X) = B. */
static void la_lusolve1(const la_t *lu, int64_t n, int64_t lda, const int64_t *piv, la_t *b,
                        int64_t ldb, int64_t c0, int64_t c1, int trans, int narrow) {
    const int t0 = trans == 0;   /* first L (unit lower) then U; transposed: U^T then L^T */
    if (t0) la_swaps(b, ldb, piv, n, c0, c1, 1);
    la_trsm1(lu, n, lda, b, ldb, c0, c1, t0, t0, trans, narrow);
    la_trsm1(lu, n, lda, b, ldb, c0, c1, !t0, !t0, trans, narrow);
    if (!t0) la_swaps(b, ldb, piv, n, c0, c1, 0);
}

/* ------------------------------------------------------------------------------------------
 * Entry points: one call per batch; 0, or -1 when a work buffer could not be allocated. */
static int la_one_big(int64_t B, int64_t elems, int nthreads) {
    return B == 1 && nthreads > 1 && elems >= LA_PAR_MIN;
}

int LA_FN(lu)(intptr_t ap, int64_t B, int64_t m, int64_t n, int64_t bs, int64_t lda,
              intptr_t pivp, intptr_t infop, int nthreads) {
    la_t *a = (la_t *)ap;
    int64_t *piv = (int64_t *)pivp, *info = (int64_t *)infop;
    const int64_t k = LA_MIN(m, n);
    if (la_one_big(B, m * n, nthreads) && k > 1) {
        _Pragma("omp parallel num_threads(nthreads)")
        la_lu1(a, m, n, lda, piv, info, LA_TID(), LA_NTH());
        return 0;
    }
    const int nt = la_batch_threads(B, m * n, nthreads);
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, LA_CHUNK)")
    for (int64_t b = 0; b < B; b++) la_lu1(a + b * bs, m, n, lda, piv + b * k, info + b, 0, 1);
    return 0;
}

int LA_FN(cholesky)(intptr_t ap, int64_t B, int64_t n, int64_t bs, int64_t lda, intptr_t infop,
                    int nthreads) {
    la_t *a = (la_t *)ap;
    int64_t *info = (int64_t *)infop;
    const size_t wbytes = sizeof(la_t) * (size_t)LA_NB * (size_t)(n > 0 ? n : 1);
    const int par = la_one_big(B, n * n, nthreads);
    const int nt = par ? nthreads : la_batch_threads(B, n * n, nthreads);
    la_t *shared = par ? (la_t *)malloc(wbytes) : NULL;
    if (par && !shared) return -1;
    int bad = 0;
    _Pragma("omp parallel num_threads(nt) if (nt > 1) reduction(|:bad)")
    if (par) {
        la_chol1(a, n, lda, shared, info, LA_TID(), LA_NTH());
    } else {
        la_t *col = (la_t *)malloc(wbytes);
        _Pragma("omp for schedule(dynamic, LA_CHUNK)")
        for (int64_t b = 0; b < B; b++) {
            if (!col) { bad = 1; continue; }
            la_chol1(a + b * bs, n, lda, col, info + b, 0, 1);
        }
        free(col);
    }
    free(shared);
    return bad ? -1 : 0;
}

/* The solves: B x (column chunks) tasks; a lone matrix with many right-hand sides is cut
 * into one chunk of columns per thread. */
static int64_t la_chunks(int64_t B, int64_t n, int64_t k, int nthreads) {
    if (nthreads <= 1 || B >= nthreads || n * n * k < 64 * LA_PAR_MIN) return 1;
    int64_t c = (nthreads + B - 1) / B, most = (k + 7) / 8;
    return c < most ? c : most;
}

/* trsm (piv NULL) or lu_solve over the tasks */
static void la_solve(const la_t *a, int64_t B, int64_t n, int64_t bsa, int64_t lda,
                     const int64_t *piv, la_t *x, int64_t k, int64_t bsb, int64_t ldb, int lower,
                     int unit, int trans, int nthreads) {
    const int64_t nch = la_chunks(B, n, k, nthreads), T = B * nch;
    const int nt = nch > 1 ? (int)LA_MIN((int64_t)nthreads, T)
                           : la_batch_threads(B, n * (n + k), nthreads);
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, LA_CHUNK)")
    for (int64_t t = 0; t < T; t++) {
        const int64_t b = t / nch, c0 = k * (t % nch) / nch, c1 = k * (t % nch + 1) / nch;
        if (piv)
            la_lusolve1(a + b * bsa, n, lda, piv + b * n, x + b * bsb, ldb, c0, c1, trans,
                        k <= LA_NARROW);
        else
            la_trsm1(a + b * bsa, n, lda, x + b * bsb, ldb, c0, c1, lower, unit, trans,
                     k <= LA_NARROW);
    }
}

int LA_FN(trsm)(intptr_t ap, int64_t B, int64_t n, int64_t bsa, int64_t lda, intptr_t bp,
                int64_t k, int64_t bsb, int64_t ldb, int lower, int unit, int trans,
                int nthreads) {
    la_solve((const la_t *)ap, B, n, bsa, lda, NULL, (la_t *)bp, k, bsb, ldb, lower, unit,
             trans, nthreads);
    return 0;
}

int LA_FN(lu_solve)(intptr_t ap, int64_t B, int64_t n, int64_t bsa, int64_t lda, intptr_t pivp,
                    intptr_t bp, int64_t k, int64_t bsb, int64_t ldb, int trans, int nthreads) {
    la_solve((const la_t *)ap, B, n, bsa, lda, (const int64_t *)pivp, (la_t *)bp, k, bsb, ldb,
             0, 0, trans, nthreads);
    return 0;
}

#include "linalg_qr.h"

#endif
