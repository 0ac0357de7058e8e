/* The general eigenproblem of a REAL matrix, one matrix at a time in sequential double
 * arithmetic: shared by the CPU (tensor/cpu/csrc/linalg_eig_real.h, a batch over threads) and
 * CUDA (cuda_src/linalg_eig_real.cuh, a thread per matrix) so that both run the same algorithm.
 *
 *   1. scaling by a power of four to a largest entry in [0.25, 1). No balancing: LAPACK's
 *      dgeev balances, which helps the relative accuracy of small eigenvalues of badly scaled
 *      matrices, but its diagonal similarity carries back into the eigenvectors, whose
 *      residual |A V - V W| is then no longer within n eps |A| (3e-11 for a 59 x 59 graded
 *      matrix, 1.5e-15 without),
 *   2. Householder reduction to upper Hessenberg form H = Q^T A Q, Q accumulated,
 *   3. Francis implicit double-shift QR (real arithmetic; a pair of shifts, the eigenvalues of
 *      the trailing 2x2, applied as 3-element reflectors chasing the bulge; exceptional shifts
 *      every tenth step; deflation where a subdiagonal entry is negligible next to its two
 *      diagonal neighbours and, with its mirror entry, next to their difference; at most
 *      30 max(n, 10) steps) to the real Schur form T = Z^T H Z
 *      with 1x1 and 2x2 diagonal blocks,
 *   4. each 2x2 block standardised by one rotation: real eigenvalues split it (upper
 *      triangular), a complex pair leaves equal diagonal entries and off-diagonals of opposite
 *      signs, the pair then exactly a +- bi (b > 0 first),
 *   5. eigenvectors by back substitution on T (complex only for a pair), multiplied by Q Z,
 *      unit 2-norm; a pair's largest component made real, its partner the exact conjugate.
 * Eigenvalues in the order of T's diagonal (as LAPACK's dgeev); real ones have imag 0.
 *
 * Outputs are complex128 (lr_c, laid out as sx_cd): w[i], v's entry (i, k) at v[i ldv + k].
 * Non-finite input: NaN results and info n + 1; no convergence: info i + 1 with
 * the eigenvalues 0..i NaN and v zero. */
#ifndef STRIDEX_SCALAR_LINALG_EIG_REAL_H
#define STRIDEX_SCALAR_LINALG_EIG_REAL_H
#include "scalar/types.h"

#ifdef __cplusplus
#define LR_FN static __device__
#define LR_NAN __longlong_as_double(0x7ff8000000000000LL)
#else
#define LR_FN static
#define LR_NAN ((double)NAN)
#endif
#define LR_EPS 0x1p-53
#define LR_SAFMIN 0x1p-1022
#define LR_MAXD 0x1.fffffffffffffp1023
#define LR_BIG 0x1p500   /* back substitution keeps |x| below this */

/* the work doubles lr_eig1 needs for an n x n matrix */
#define LR_WORK(n) (2 * (n) * (n) + 6 * (n))

typedef struct { double re, im; } lr_c;

/* NaN-ignoring maximum */
LR_FN double lr_fmax(double a, double b) { return a >= b || b != b ? a : b; }

/* 4^-k: the exact scaling to a largest entry in [0.25, 1) (an even power of two, so that
 * square roots scale exactly too: sqrt(|b| |c|) of a 2x2 block of 1's stays 1); 1 for 0,
 * 2^1000 for a subnormal amax (whose 4^-k would overflow) */
LR_FN double lr_range_scale(double amax) {
    if (!(amax > 0)) return 1.0;
    int e = ilogb(amax) + 1;
    e += e & 1;
    return ldexp(1.0, e > -1000 ? -e : 1000);
}

LR_FN lr_c lr_mk(double re, double im) { lr_c z = {re, im}; return z; }
LR_FN lr_c lr_mulc(lr_c a, lr_c b) {
    return lr_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
/* a / b, scaled (Smith's method) */
LR_FN lr_c lr_divc(lr_c a, lr_c b) {
    if (fabs(b.re) >= fabs(b.im)) {
        const double r = b.im / b.re, d = b.re + b.im * r;
        return lr_mk((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    const double r = b.re / b.im, d = b.im + b.re * r;
    return lr_mk((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
LR_FN double lr_abs1(lr_c a) { return fabs(a.re) + fabs(a.im); }
LR_FN double lr_sign(double a, double b) { return b >= 0 ? fabs(a) : -fabs(a); }

/* Step 2: H = Q^T A Q in h (entries below the subdiagonal zeroed); q: Q (row-major) or NULL;
 * u: n doubles of scratch. */
LR_FN void lr_hessenberg(double *h, int64_t n, double *q, double *u) {
    if (q) {
        for (int64_t i = 0; i < n * n; i++) q[i] = 0;
        for (int64_t i = 0; i < n; i++) q[i * n + i] = 1.0;
    }
    for (int64_t k = 0; k + 2 < n; k++) {
        double cm = 0;   /* the column scaled by its largest entry: no under- or overflow */
        for (int64_t i = k + 1; i < n; i++) cm = lr_fmax(cm, fabs(h[i * n + k]));
        if (cm == 0) continue;
        double xs = 0;
        for (int64_t i = k + 2; i < n; i++) { u[i] = h[i * n + k] / cm; xs += u[i] * u[i]; }
        if (xs == 0) continue;
        const double al = h[(k + 1) * n + k] / cm;
        const double beta = -lr_sign(sqrt(al * al + xs), al);
        /* P = I - tau u u^T, u = (al - beta, x): tau = 1 / (beta (beta - al)) */
        u[k + 1] = al - beta;
        const double tau = 1.0 / (beta * (beta - al));
        for (int64_t j = k + 1; j < n; j++) {   /* left: rows k+1.., columns k+1.. */
            double s = 0;
            for (int64_t i = k + 1; i < n; i++) s += u[i] * h[i * n + j];
            s *= tau;
            for (int64_t i = k + 1; i < n; i++) h[i * n + j] -= s * u[i];
        }
        h[(k + 1) * n + k] = beta * cm;
        for (int64_t i = k + 2; i < n; i++) h[i * n + k] = 0;
        for (int64_t r = 0; r < 2 * n; r++) {   /* right: the rows of h, then of q */
            double *row = r < n ? h + r * n : q ? q + (r - n) * n : NULL;
            if (!row) break;
            double s = 0;
            for (int64_t j = k + 1; j < n; j++) s += row[j] * u[j];
            s *= tau;
            for (int64_t j = k + 1; j < n; j++) row[j] -= s * u[j];
        }
    }
}

/* Apply the rotation [[c, -s], [s, c]] to rows p, p + 1 (as R^T, columns j0..j1-1) or to
 * columns p, p + 1 (as R, rows i0..i1-1) of the row-major n-column m. */
LR_FN void lr_rot_rows(double *m, int64_t n, int64_t p, int64_t j0, int64_t j1, double c, double s) {
    for (int64_t j = j0; j < j1; j++) {
        const double x = m[p * n + j], y = m[(p + 1) * n + j];
        m[p * n + j] = c * x + s * y;
        m[(p + 1) * n + j] = c * y - s * x;
    }
}
LR_FN void lr_rot_cols(double *m, int64_t n, int64_t p, int64_t i0, int64_t i1, double c, double s) {
    for (int64_t i = i0; i < i1; i++) {
        const double x = m[i * n + p], y = m[i * n + p + 1];
        m[i * n + p] = c * x + s * y;
        m[i * n + p + 1] = c * y - s * x;
    }
}

/* Step 4 on the 2x2 [[a, b], [c, d]] (in place): the rotation R = [[cs, -sn], [sn, cs]] with
 * R^T M R standard: c = 0 (real eigenvalues a, d), or a == d and b c < 0 (a +- sqrt(-b c) i). */
LR_FN void lr_std2(double *a, double *b, double *c, double *d, double *cs, double *sn) {
    *cs = 1.0; *sn = 0.0;
    if (*c == 0) return;
    if (*b == 0) {   /* swap: R = [[0, -1], [1, 0]] */
        const double t = *a;
        *cs = 0.0; *sn = 1.0; *a = *d; *d = t; *b = -*c; *c = 0;
        return;
    }
    if (*a == *d && (*b < 0) != (*c < 0)) return;
    for (int pass = 0; pass < 2; pass++) {
        const double p = 0.5 * (*a - *d), bm = fmax(fabs(*b), fabs(*c));
        const double bn = fmin(fabs(*b), fabs(*c)) * lr_sign(1.0, *b) * lr_sign(1.0, *c);
        const double sc = fmax(fabs(p), bm);
        const double z = p / sc * p + bm / sc * bn;   /* (p^2 + b c) / sc */
        double c1, s1;
        if (z >= 0) {   /* real: the first column of R along the eigenvector of d + zz */
            const double zz = p + lr_sign(sqrt(sc) * sqrt(z), p);
            const double t = hypot(*c, zz);
            c1 = zz / t; s1 = *c / t;
            const double na = *d + zz, nd = *d - bm / zz * bn;
            *a = na; *d = nd; *b = *b - *c; *c = 0;
        } else {   /* complex: the rotation making the diagonal equal (tan 2 theta = -(a-d)/(b+c)) */
            const double sg = *b + *c, t = hypot(sg, *a - *d);
            c1 = sqrt(0.5 * (1.0 + fabs(sg) / t));
            s1 = -(p / (t * c1)) * lr_sign(1.0, sg);
            /* R^T M R with R = [[c1, -s1], [s1, c1]] */
            const double a0 = *a, b0 = *b, c0 = *c, d0 = *d;
            const double m11 = a0 * c1 + b0 * s1, m12 = -a0 * s1 + b0 * c1;
            const double m21 = c0 * c1 + d0 * s1, m22 = -c0 * s1 + d0 * c1;
            const double na = c1 * m11 + s1 * m21, nb = c1 * m12 + s1 * m22;
            const double nc = -s1 * m11 + c1 * m21, nd = -s1 * m12 + c1 * m22;
            const double mid = 0.5 * (na + nd);
            *a = mid; *d = mid; *b = nb; *c = nc;
        }
        const double t = *cs * c1 - *sn * s1;   /* R = R_old R_1 */
        *sn = *sn * c1 + *cs * s1;
        *cs = t;
        if (*c == 0 || (*b < 0) != (*c < 0)) return;
        if (*b == 0) {   /* (rounding) a complex-looking block that is triangular after all */
            const double t2 = *a;
            *a = *d; *d = t2; *b = -*c; *c = 0;
            const double t3 = -*sn;
            *sn = *cs; *cs = t3;
            return;
        }
        /* b c > 0 after the rotation: real eigenvalues after all; the second pass splits */
    }
}

/* row[0..nr-1] times the reflector I - tau u u^T, u = (1, v1, v2) (nr = 2: (1, v1)) */
LR_FN void lr_refl3(double *row, int nr, double tau, double v1, double v2) {
    double s = row[0] + v1 * row[1];
    if (nr == 3) s += v2 * row[2];
    s *= tau;
    row[0] -= s;
    row[1] -= s * v1;
    if (nr == 3) row[2] -= s * v2;
}

/* Step 3-4: real Schur form of the Hessenberg h; z: accumulates the transformations (rows of
 * the row-major z times them: z <- z Z) or NULL (then only the active window is updated);
 * wr, wi: the eigenvalues. 0, or i + 1 when eigenvalues 0..i were not found. */
LR_FN int lr_hqr(double *h, int64_t n, double *z, double *wr, double *wi) {
    const int full = z != NULL;
    const int64_t itmax = 30 * (n > 10 ? n : 10);
    const double smlnum = LR_SAFMIN * ((double)n / LR_EPS);
    int64_t total = 0, its = 0;
    for (int64_t hi = n - 1; hi >= 0;) {
        int64_t l;
        for (l = hi; l > 0; l--) {   /* deflation: the lowest negligible subdiagonal */
            const double sd = fabs(h[l * n + l - 1]);
            if (sd <= smlnum) break;
            double tst = fabs(h[(l - 1) * n + l - 1]) + fabs(h[l * n + l]);
            if (tst == 0) {
                if (l >= 2) tst += fabs(h[(l - 1) * n + l - 2]);
                if (l + 1 <= hi) tst += fabs(h[(l + 1) * n + l]);
            }
            if (sd <= LR_EPS * tst) {   /* and Ahues & Tisseur's test (LAPACK Working Note
                * 122): the product of the off-diagonal pair against eps |h_ll| |h_l-1,l-1 - h_ll|,
                * else [[a, b], [c, a]] with |c| < eps |a| but |b c| >> (eps a)^2 lost its
                * eigenvalues' +-sqrt(b c) */
                const double u = fabs(h[(l - 1) * n + l]), dd = fabs(h[(l - 1) * n + l - 1] - h[l * n + l]);
                const double hl = fabs(h[l * n + l]);
                const double ab = fmax(sd, u), ba = fmin(sd, u), aa = fmax(hl, dd), bb = fmin(hl, dd);
                const double s = aa + ab;
                if (ba * (ab / s) <= fmax(smlnum, LR_EPS * (bb * (aa / s)))) break;
            }
        }
        if (l > 0) h[l * n + l - 1] = 0;
        if (l == hi) {   /* a 1x1 block */
            wr[hi] = h[hi * n + hi]; wi[hi] = 0;
            hi--; its = 0;
            continue;
        }
        if (l == hi - 1) {   /* a 2x2 block: standardised */
            const int64_t p = hi - 1;
            double cs, sn;
            lr_std2(&h[p * n + p], &h[p * n + hi], &h[hi * n + p], &h[hi * n + hi], &cs, &sn);
            if (full) {
                lr_rot_rows(h, n, p, hi + 1, n, cs, sn);
                lr_rot_cols(h, n, p, 0, p, cs, sn);
                lr_rot_cols(z, n, p, 0, n, cs, sn);
            }
            const double a = h[p * n + p], c = h[hi * n + p];
            wr[p] = a; wr[hi] = h[hi * n + hi];
            if (c == 0) { wi[p] = wi[hi] = 0; }
            else {
                const double bi = sqrt(fabs(h[p * n + hi])) * sqrt(fabs(c));
                wi[p] = bi; wi[hi] = -bi;
            }
            hi -= 2; its = 0;
            continue;
        }
        if (++total > itmax) return (int)hi + 1;
        its++;
        /* the shifts: the eigenvalues of [[y, .], [., x]] with off-diagonal product w, and
         * the first column (p, q, r) of (H - s1)(H - s2), from the entries used scaled by a
         * power of two near their largest: unscaled, the products of a window of ~1e-170
         * underflow to zero and the iteration never moves */
        double hm = 0;
        for (int64_t i = l; i <= l + 2; i++)
            for (int64_t j = l; j <= l + 1; j++) hm = lr_fmax(hm, fabs(h[i * n + j]));
        for (int64_t i = hi - 2; i <= hi; i++)
            for (int64_t j = hi - 2; j <= hi; j++) hm = lr_fmax(hm, fabs(h[i * n + j]));
        const int fe = hm > 0 ? -ilogb(hm) : 0;
        const double f = ldexp(1.0, fe < 1000 ? (fe > -1000 ? fe : -1000) : 1000);
        double x, y, w;
        if (its % 10 == 0) {   /* exceptional (every tenth step), from the bottom or the top */
            const int64_t e = its % 20 == 0 ? hi : l + 1;
            const double s = f * (fabs(h[e * n + e - 1]) +
                                  fabs(e == hi ? h[(e - 1) * n + e - 2] : h[(e + 1) * n + e]));
            x = y = f * h[e * n + e] + 0.75 * s;
            w = -0.4375 * s * s;
        } else {
            x = f * h[hi * n + hi];
            y = f * h[(hi - 1) * n + hi - 1];
            w = (f * h[hi * n + hi - 1]) * (f * h[(hi - 1) * n + hi]);
            const double hh = 0.5 * (y - x), dsc = hh * hh + w;
            if (dsc >= 0) {   /* real shifts: both the one nearer the corner x */
                const double rt = sqrt(dsc), s1 = x + hh + rt, s2 = x + hh - rt;
                x = y = fabs(s1 - x) <= fabs(s2 - x) ? s1 : s2;
                w = 0;
            }
        }
        const int64_t j1 = full ? n : hi + 1, i0 = full ? 0 : l;
        const double h00 = f * h[l * n + l], h10 = f * h[(l + 1) * n + l];
        double p = (h00 - x) * (h00 - y) - w + f * h[l * n + l + 1] * h10;
        double q = h10 * ((f * h[(l + 1) * n + l + 1] - h00) + (h00 - x) + (h00 - y));
        double r = f * h[(l + 2) * n + l + 1] * h10;
        for (int64_t k = l; k < hi; k++) {
            const int nr = k + 2 <= hi ? 3 : 2;
            if (k > l) {
                p = h[k * n + k - 1];
                q = h[(k + 1) * n + k - 1];
                r = nr == 3 ? h[(k + 2) * n + k - 1] : 0;
            }
            const double sc = fabs(p) + fabs(q) + fabs(r);
            if (sc == 0) continue;
            p /= sc; q /= sc; r /= sc;
            const double beta = -lr_sign(sqrt(p * p + q * q + r * r), p);
            const double tau = (beta - p) / beta, v1 = q / (p - beta), v2 = r / (p - beta);
            if (k > l) {
                h[k * n + k - 1] = beta * sc;
                h[(k + 1) * n + k - 1] = 0;
                if (nr == 3) h[(k + 2) * n + k - 1] = 0;
            }
            for (int64_t j = k; j < j1; j++) {   /* left: rows k..k+nr-1 */
                double s = h[k * n + j] + v1 * h[(k + 1) * n + j];
                if (nr == 3) s += v2 * h[(k + 2) * n + j];
                s *= tau;
                h[k * n + j] -= s;
                h[(k + 1) * n + j] -= s * v1;
                if (nr == 3) h[(k + 2) * n + j] -= s * v2;
            }
            const int64_t i1 = k + 3 < hi ? k + 3 : hi;
            /* right: columns k.. of h's rows i0..i1, then of z */
            for (int64_t i = i0; i <= i1; i++) lr_refl3(h + i * n + k, nr, tau, v1, v2);
            if (full)
                for (int64_t i = 0; i < n; i++) lr_refl3(z + i * n + k, nr, tau, v1, v2);
        }
    }
    return 0;
}

/* Before x_i = num / den: when |num| > |den| LR_BIG (x_i would pass LR_BIG, or overflow: den
 * is at least smin ~ 1e-291), x[j0..k1] and num scaled down (the solution's scale is free) */
LR_FN void lr_guard(lr_c *x, int64_t j0, int64_t k1, lr_c *num, int nn, double den) {
    double q = 0;
    for (int r = 0; r < nn; r++) q = lr_fmax(q, lr_abs1(num[r]));
    if (!(den < 1.0 && q > den * LR_BIG)) return;
    const double f = den * LR_BIG / q;
    for (int64_t j = j0; j <= k1; j++) { x[j].re *= f; x[j].im *= f; }
    for (int r = 0; r < nn; r++) { num[r].re *= f; num[r].im *= f; }
}

/* Step 5, the solve: x (complex, length k1 + 1, x[k0..k1] given) completed by back substitution
 * (T - lam) x = 0 over rows k0-1 .. 0 of the quasi-triangular t (entries below ~n: the matrix
 * was scaled to a largest entry in [0.25, 1)); tiny divisors perturbed to smin, the solution
 * rescaled before a division could take it past LR_BIG. */
LR_FN void lr_backsub(const double *t, int64_t n, int64_t k0, int64_t k1, lr_c lam, lr_c *x) {
    const double smin = fmax(LR_EPS * lr_abs1(lam), LR_SAFMIN * ((double)n / LR_EPS));
    for (int64_t i = k0 - 1; i >= 0; i--) {
        const int two = i > 0 && t[i * n + i - 1] != 0;   /* rows i-1, i: a 2x2 block */
        const int64_t i0 = two ? i - 1 : i;
        lr_c s[2];
        for (int64_t r = i0; r <= i; r++) {
            double sr = 0, si = 0;
            for (int64_t j = i + 1; j <= k1; j++) {
                sr += t[r * n + j] * x[j].re;
                si += t[r * n + j] * x[j].im;
            }
            s[r - i0] = lr_mk(-sr, -si);
        }
        if (!two) {
            lr_c dg = lr_mk(t[i * n + i] - lam.re, -lam.im);
            if (lr_abs1(dg) < smin) dg = lr_mk(smin, 0);
            lr_guard(x, i + 1, k1, s, 1, lr_abs1(dg));
            x[i] = lr_divc(s[0], dg);
        } else {   /* [[a, b], [c, d]] - lam: Cramer's rule */
            const lr_c a = lr_mk(t[i0 * n + i0] - lam.re, -lam.im), d = lr_mk(t[i * n + i] - lam.re, -lam.im);
            const double b = t[i0 * n + i], c = t[i * n + i0];
            lr_c det = lr_mulc(a, d);
            det.re -= b * c;
            if (lr_abs1(det) < smin) det = lr_mk(smin, 0);
            lr_guard(x, i + 1, k1, s, 2, lr_abs1(det) / (1.0 + lr_abs1(a) + lr_abs1(d) + fabs(b) + fabs(c)));
            lr_c nm[2];
            nm[0] = lr_mk(s[0].re * d.re - s[0].im * d.im - b * s[1].re,
                          s[0].re * d.im + s[0].im * d.re - b * s[1].im);
            nm[1] = lr_mk(a.re * s[1].re - a.im * s[1].im - c * s[0].re,
                          a.re * s[1].im + a.im * s[1].re - c * s[0].im);
            x[i0] = lr_divc(nm[0], det);
            x[i] = lr_divc(nm[1], det);
        }
        i = i0;
    }
}

/* Eigenvalues w (n) and, when v is not NULL, unit-norm eigenvectors (v's columns, row stride
 * ldv) of the row-major a (row stride lda); work: LR_WORK(n) doubles. Returns info. */
LR_FN int lr_eig1(const double *a, int64_t lda, int64_t n, lr_c *w, lr_c *v, int64_t ldv,
                  double *work) {
    double *h = work, *z = h + n * n, *wr = z + n * n, *wi = wr + n;
    lr_c *x = (lr_c *)(wi + n), *y = x + n;
    double amax = 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            h[i * n + j] = a[i * lda + j];
            amax = lr_fmax(amax, fabs(h[i * n + j]));
            bad |= !(fabs(h[i * n + j]) <= LR_MAXD);
        }
    if (bad) {   /* non-finite input: NaN results, info n + 1 (no convergence code is > n) */
        for (int64_t i = 0; i < n; i++) {
            w[i] = lr_mk(LR_NAN, LR_NAN);
            if (v)
                for (int64_t j = 0; j < n; j++) v[i * ldv + j] = lr_mk(LR_NAN, LR_NAN);
        }
        return (int)n + 1;
    }
    const double sc = lr_range_scale(amax);
    if (sc != 1.0)
        for (int64_t i = 0; i < n * n; i++) h[i] *= sc;
    lr_hessenberg(h, n, v ? z : NULL, (double *)y);
    int info = lr_hqr(h, n, v ? z : NULL, wr, wi);
    for (int64_t i = 0; i < n; i++)
        w[i] = i < info ? lr_mk(LR_NAN, LR_NAN) : lr_mk(wr[i] / sc, wi[i] / sc);
    if (!v) return info;
    if (info) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) v[i * ldv + j] = lr_mk(0, 0);
        return info;
    }
    for (int64_t k = n - 1; k >= 0; k--) {
        const int pair = wi[k] != 0;   /* then k is the second of the pair k-1, k */
        const int64_t k0 = pair ? k - 1 : k;
        for (int64_t j = 0; j < n; j++) x[j] = lr_mk(0, 0);
        lr_c lam = lr_mk(wr[k0], wi[k0]);
        if (!pair) x[k] = lr_mk(1, 0);
        else {   /* (B - lam) x = 0 on the standardised block [[al, b], [c, al]], b c < 0 */
            const double b = h[k0 * n + k], c = h[k * n + k0];
            if (fabs(b) >= fabs(c)) { x[k0] = lr_mk(1, 0); x[k] = lr_mk(0, wi[k0] / b); }
            else { x[k0] = lr_mk(0, wi[k0] / c); x[k] = lr_mk(1, 0); }
        }
        lr_backsub(h, n, k0, k, lam, x);
        /* y = Z x, then unit norm */
        double mx = 0;
        for (int64_t i = 0; i < n; i++) {
            double sr = 0, si = 0;
            for (int64_t j = 0; j <= k; j++) { sr += z[i * n + j] * x[j].re; si += z[i * n + j] * x[j].im; }
            y[i] = lr_mk(sr, si);
            mx = lr_fmax(mx, lr_abs1(y[i]));
        }
        double ss = 0;
        int64_t big = 0;
        double bigm = -1;
        for (int64_t i = 0; i < n; i++) {
            y[i].re /= mx; y[i].im /= mx;
            const double m2 = y[i].re * y[i].re + y[i].im * y[i].im;
            ss += m2;
            if (m2 > bigm) { bigm = m2; big = i; }
        }
        double fr = 1.0 / sqrt(ss), fi = 0;
        if (pair) {   /* times conj(y_big) / |y_big|: the largest component real */
            const double ab = sqrt(bigm);
            fr = y[big].re / ab / sqrt(ss);
            fi = -y[big].im / ab / sqrt(ss);
        }
        for (int64_t i = 0; i < n; i++) {
            lr_c e = pair ? lr_mulc(y[i], lr_mk(fr, fi)) : lr_mk(y[i].re * fr, 0);
            if (pair && i == big) e.im = 0;
            v[i * ldv + k0] = e;
            if (pair) v[i * ldv + k] = lr_mk(e.re, -e.im);
        }
        k = k0;
    }
    return 0;
}

#endif
