/* The general (non-Hermitian) complex eigenproblem of tensor/cpu/linalg_eig.py: part of
 * linalg_eig.h (its scalar helpers and batch driver), included by it in the complex128
 * module only. Hessenberg reduction by Householder reflectors, complex single-shift QR as
 * LAPACK's zlahqr, eigenvectors by back substitution on the Schur form as ztrevc. */

/* Unitary G = [[c, s], [-conj(s), c]] with G (x, y) = (rho, 0); returns rho. */
static le_t le_givens(le_t x, le_t y, double *c, le_t *s) {
    double ax = le_hypot(x.re, x.im), ay = le_hypot(y.re, y.im);
    if (ay == 0) { *c = 1.0; *s = LE_ZERO; return x; }
    if (ax == 0) { *c = 0.0; *s = le_rmul(1.0 / ay, le_conj(y)); return le_mk(ay, 0.0); }
    const double r = le_hypot(ax, ay);
    if (r < LE_SMALL) {   /* c, s from exactly scaled operands (|phase| = 1), rho = r phase */
        const le_t xs = le_rmul(LE_UP, x);
        le_givens(xs, le_rmul(LE_UP, y), c, s);
        return le_rmul(r / le_hypot(xs.re, xs.im), xs);
    }
    le_t ph = le_rmul(1.0 / ax, x);
    *c = ax / r;
    *s = le_rmul(1.0 / r, le_mul(ph, le_conj(y)));
    return le_rmul(r, ph);
}

/* The eigenvalue of [[a, b], [c, d]] nearer d (the Wilkinson shift), computed on the block
 * scaled by the power of two nearest its largest entry: unscaled, hh^2 + bc of a block of
 * about 1e-163 underflows, and a complex-conjugate pair then gets a real shift forever. */
static le_t le_wilkinson(le_t a, le_t b, le_t c, le_t d) {
    const double m = le_fmax(le_fmax(le_abs1(a), le_abs1(b)), le_fmax(le_abs1(c), le_abs1(d)));
    if (!(m > 0) || !isfinite(m)) return d;
    const int e = -ilogb(m);
    const double s = ldexp(1.0, e < 1000 ? (e > -1000 ? e : -1000) : 1000);
    a = le_rmul(s, a); b = le_rmul(s, b); c = le_rmul(s, c); d = le_rmul(s, d);
    const le_t bc = le_mul(b, c), hh = le_rmul(0.5, le_sub(a, d));
    const le_t r = sx_csqrt_cd(le_add(le_mul(hh, hh), bc));
    le_t den = le_add(hh, r);
    const le_t den2 = le_sub(hh, r);
    if (le_abs1(den2) > le_abs1(den)) den = den2;
    const le_t mu = le_abs1(den) == 0 ? d : le_sub(d, le_div(bc, den));
    return le_rmul(1.0 / s, mu);
}

/* The subdiagonal h[l][l-1] (hs = its size), already small next to its diagonal neighbours,
 * is negligible by Ahues & Tisseur's test too (LAPACK Working Note 122): its product with the
 * mirror entry against eps |h_ll| |h_l-1,l-1 - h_ll|. Without it, [[a, b], [c, a]] with
 * |c| < eps |a| but |b c| >> (eps a)^2 lost its eigenvalues' +-sqrt(b c). */
static int le_ahues_tisseur(const le_t *h, int64_t n, int64_t l, double hs) {
    const double u = le_abs1(h[(l - 1) * n + l]), hl = le_abs1(h[l * n + l]);
    const double dd = le_abs1(le_sub(h[(l - 1) * n + l - 1], h[l * n + l]));
    const double ab = le_fmax(hs, u), ba = hs < u ? hs : u;
    const double aa = le_fmax(hl, dd), bb = hl < dd ? hl : dd, s = aa + ab;
    return ba * (ab / s) <= le_fmax(DBL_MIN * ((double)n / LE_EPS), LE_EPS * (bb * (aa / s)));
}

/* Schur form of the Hessenberg h (n x n, row-major) by single-shift QR; zt: the Schur
 * vectors as rows (rotated along) or NULL; w: the eigenvalues. 0, or i + 1 when the
 * eigenvalues i + 1 .. n-1 were found but not the rest. */
static int le_hqr(le_t *h, int64_t n, le_t *zt, le_t *w) {
    const int full = zt != NULL;
    const int64_t itmax = 30 * (n > 10 ? n : 10);
    int64_t total = 0;
    for (int64_t ihi = n - 1; ihi >= 0;) {
        int its = 0;
        for (;;) {
            int64_t l;
            for (l = ihi; l > 0; l--) {
                double hs = le_abs1(h[l * n + l - 1]);
                if (hs == 0) break;
                double tst = le_abs1(h[(l - 1) * n + l - 1]) + le_abs1(h[l * n + l]);
                if (tst == 0) {
                    if (l >= 2) tst += fabs(h[(l - 1) * n + l - 2].re);
                    if (l + 1 <= ihi) tst += fabs(h[(l + 1) * n + l].re);
                }
                if (hs <= LE_EPS * tst && le_ahues_tisseur(h, n, l, hs)) {
                    h[l * n + l - 1] = LE_ZERO;
                    break;
                }
            }
            if (l == ihi) { w[ihi] = h[ihi * n + ihi]; ihi--; break; }
            if (++total > itmax) return (int)ihi + 1;
            its++;
            le_t mu;
            if (its % 10 == 0) {   /* exceptional shifts (every tenth step), as zlahqr's */
                const int64_t e = its % 20 == 0 ? ihi : l + 1;
                mu = le_add(le_mk(0.75 * fabs(h[e * n + e - 1].re), 0), h[e * n + e]);
            } else {
                mu = le_wilkinson(h[(ihi - 1) * n + ihi - 1], h[(ihi - 1) * n + ihi],
                                  h[ihi * n + ihi - 1], h[ihi * n + ihi]);
            }
            if (!(isfinite(mu.re) && isfinite(mu.im))) return (int)ihi + 1;
            const int64_t j1 = full ? 0 : l, j2 = full ? n : ihi + 1;
            for (int64_t k = l; k < ihi; k++) {
                double c;
                le_t s, x, y;
                if (k == l) {
                    x = le_sub(h[l * n + l], mu);
                    y = h[(l + 1) * n + l];
                } else {
                    x = h[k * n + k - 1];
                    y = h[(k + 1) * n + k - 1];
                }
                le_t rho = le_givens(x, y, &c, &s);
                if (k > l) { h[k * n + k - 1] = rho; h[(k + 1) * n + k - 1] = LE_ZERO; }
                le_rot(j2 - k, h + k * n + k, h + (k + 1) * n + k, c, s);
                const int64_t r2 = k + 2 < ihi ? k + 2 : ihi;
                const le_t sc = le_conj(s);
                for (int64_t r = j1; r <= r2; r++) {   /* columns k, k + 1: H G^H */
                    le_t hk = h[r * n + k], hk1 = h[r * n + k + 1];
                    h[r * n + k] = le_add(le_rmul(c, hk), le_mul(sc, hk1));
                    h[r * n + k + 1] = le_sub(le_rmul(c, hk1), le_mul(s, hk));
                }
                if (zt) le_rot(n, zt + k * n, zt + (k + 1) * n, c, sc);
            }
        }
    }
    return 0;
}

static int le_eig1(le_t *a, int64_t lda, int64_t n, le_t *w, le_t *v, int64_t ldv, void *work) {
    le_t *h = (le_t *)work, *zt = h + n * n, *x = zt + n * n, *y = x + n, *tau = y + n;
    double amax = 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            h[i * n + j] = a[i * lda + j];
            amax = le_fmax(amax, le_abs1(h[i * n + j]));
            bad |= !(le_abs1(h[i * n + j]) <= DBL_MAX);
        }
    if (bad) {   /* NaN / inf input: NaN results, info n (as the CUDA kernel). Iterating, a NaN
                  * above the diagonal of a triangular matrix gave its diagonal, info 0 */
        for (int64_t i = 0; i < n; i++) {
            w[i] = le_mk(NAN, NAN);
            if (v)
                for (int64_t j = 0; j < n; j++) v[i * ldv + j] = le_mk(NAN, NAN);
        }
        return (int)n;
    }
    const double sc = le_range_scale(amax);
    if (sc != 1.0)
        for (int64_t i = 0; i < n * n; i++) h[i] = le_rmul(sc, h[i]);
    /* Hessenberg reduction: reflector k below h[k + 1][k], v[0] = 1 implicit */
    for (int64_t k = 0; k + 2 < n; k++) {
        const int64_t m = n - k - 1;
        for (int64_t i = 0; i < m; i++) x[i] = h[(k + 1 + i) * n + k];
        le_t t;
        double beta = le_larfg(x[0], m - 1, x + 1, &t);
        x[0] = le_mk(1.0, 0.0);
        tau[k] = t;
        h[(k + 1) * n + k] = le_mk(beta, 0.0);
        for (int64_t i = 1; i < m; i++) h[(k + 1 + i) * n + k] = x[i];
        if (le_abs1(t) == 0) continue;
        const int64_t nc = n - k - 1;   /* left: rows k+1.., columns k+1.. */
        memset(y, 0, sizeof(le_t) * (size_t)nc);
        for (int64_t i = 0; i < m; i++)
            le_axpy(nc, le_conj(x[i]), h + (k + 1 + i) * n + k + 1, y);
        for (int64_t i = 0; i < m; i++)
            le_axpy(nc, le_rmul(-1.0, le_mul(le_conj(t), x[i])), y, h + (k + 1 + i) * n + k + 1);
        for (int64_t r = 0; r < n; r++) {   /* right: all rows, columns k+1.. */
            le_t s = le_mul(t, le_dotu(m, h + r * n + k + 1, x));
            le_axpyc(m, le_rmul(-1.0, s), x, h + r * n + k + 1);
        }
    }
    if (v) {   /* Q = H_0 ... H_{n-3} in zt, then transposed: rows = Schur vectors */
        memset(zt, 0, sizeof(le_t) * (size_t)(n * n));
        for (int64_t i = 0; i < n; i++) zt[i * n + i] = le_mk(1.0, 0.0);
        for (int64_t k = n - 3; k >= 0; k--) {
            if (le_abs1(tau[k]) == 0) continue;
            const int64_t m = n - k - 1;
            x[0] = le_mk(1.0, 0.0);
            for (int64_t i = 1; i < m; i++) x[i] = h[(k + 1 + i) * n + k];
            memset(y, 0, sizeof(le_t) * (size_t)m);
            for (int64_t i = 0; i < m; i++)
                le_axpy(m, le_conj(x[i]), zt + (k + 1 + i) * n + k + 1, y);
            for (int64_t i = 0; i < m; i++)
                le_axpy(m, le_rmul(-1.0, le_mul(tau[k], x[i])), y, zt + (k + 1 + i) * n + k + 1);
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < i; j++) {
                le_t t = zt[i * n + j]; zt[i * n + j] = zt[j * n + i]; zt[j * n + i] = t;
            }
    }
    for (int64_t i = 2; i < n; i++)
        for (int64_t j = 0; j + 1 < i; j++) h[i * n + j] = LE_ZERO;
    int info = le_hqr(h, n, v ? zt : NULL, w);
    if (v && !info) {
        const double smlnum = DBL_MIN * ((double)n / LE_EPS);
        for (int64_t k = 0; k < n; k++) {   /* T x = w_k x, x[k] = 1, back substitution */
            const le_t lam = h[k * n + k];
            const double smin = le_fmax(LE_EPS * le_abs1(lam), smlnum);
            double rs = 1.0;   /* the right-hand side's scale */
            x[k] = le_mk(1.0, 0.0);
            for (int64_t i = k - 1; i >= 0; i--) {
                le_t acc = le_add(le_rmul(rs, h[i * n + k]),
                                  le_dotu(k - 1 - i, h + i * n + i + 1, x + i + 1));
                le_t dg = le_sub(h[i * n + i], lam);
                if (le_abs1(dg) < smin) dg = le_mk(smin, 0.0);
                const double dd = le_abs1(dg), q = le_abs1(acc);
                if (dd < 1.0 && q > dd * 1e100) {   /* x[i] would pass 1e100 (or overflow: dd
                                                     * may be smin ~ 1e-291): rescale first */
                    const double f = dd * 1e100 / q;
                    for (int64_t j = i + 1; j <= k; j++) x[j] = le_rmul(f, x[j]);
                    rs *= f;
                    acc = le_rmul(f, acc);
                }
                x[i] = le_rmul(-1.0, le_div(acc, dg));
            }
            memset(y, 0, sizeof(le_t) * (size_t)n);
            for (int64_t j = 0; j <= k; j++) le_axpy(n, x[j], zt + j * n, y);
            double mx = 0;
            for (int64_t i = 0; i < n; i++) mx = le_fmax(mx, le_abs1(y[i]));
            for (int64_t i = 0; i < n; i++) y[i] = le_rmul(1.0 / mx, y[i]);
            const double inv = 1.0 / sqrt(le_nrm2sq(n, y));
            for (int64_t i = 0; i < n; i++) v[i * ldv + k] = le_rmul(inv, y[i]);
        }
    } else if (v) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) v[i * ldv + j] = LE_ZERO;
    }
    if (info)   /* the eigenvalues not found */
        for (int64_t i = 0; i < info; i++) w[i] = le_mk(NAN, NAN);
    if (sc != 1.0)
        for (int64_t i = 0; i < n; i++) w[i] = le_rmul(1.0 / sc, w[i]);
    return info;
}

int linalg_eig_c128(intptr_t ap, int64_t B, int64_t n, int64_t bs, int64_t lda, intptr_t wp,
                    intptr_t vp, int64_t vbs, int64_t ldv, intptr_t infop, int nthreads) {
    le_t *a = (le_t *)ap, *w = (le_t *)wp, *v = (le_t *)vp;
    int64_t *info = (int64_t *)infop;
    const size_t ws = sizeof(le_t) * (size_t)(2 * n * n + 3 * n) + 64;
    LE_BATCH(B, 10.0 * n * n * n, ws,
             info[b] = le_eig1(a + b * bs, lda, n, w + b * n, v ? v + b * vbs : NULL, ldv,
                               work));
    return 0;
}
