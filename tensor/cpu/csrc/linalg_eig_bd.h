/* The SVD of a square matrix by Golub-Kahan: part of linalg_eig.h (its helpers), used by
 * linalg_eig_svd.h for the larger matrices. Householder bidiagonalisation M = P B W^H (B real:
 * each reflector's beta is real), implicit-shift QR on the bidiagonal B chasing the bulge from
 * top to bottom with the smaller singular value of the trailing 2 x 2 as shift (as LAPACK's
 * dbdsqr, without its zero-shift variant), zero diagonal entries chased out by rotations
 * (Golub & Van Loan 8.6), then sign, sort and back-transformation. The rotations of a sweep are
 * applied afterwards to the vector rows, carrying the moving row in registers. */

/* Forward sequence: for j = lo .. hi-1, rows (j, j+1) <- (c x + s y, c y - s x) (c, s from
 * c_[j], s_[j]), on columns j0 .. j0+len of z (row stride ld). */
static void le_rot_fwd(double *z, int64_t ld, const double *c_, const double *s_, int64_t lo,
                       int64_t hi, int64_t j0, int64_t len) {
    for (int64_t j = 0; j < len; j += LE_RB) {
        double *base = z + j0 + j;
        if (j + LE_RB <= len) {
            le_v4 y0 = *(le_v4 *)(base + lo * ld), y1 = *(le_v4 *)(base + lo * ld + 4);
            le_v4 y2 = *(le_v4 *)(base + lo * ld + 8), y3 = *(le_v4 *)(base + lo * ld + 12);
            for (int64_t q = lo; q < hi; q++) {
                const double c = c_[q], s = s_[q];
                double *x = base + (q + 1) * ld;
                const le_v4 x0 = *(le_v4 *)x, x1 = *(le_v4 *)(x + 4);
                const le_v4 x2 = *(le_v4 *)(x + 8), x3 = *(le_v4 *)(x + 12);
                *(le_v4 *)(x - ld) = c * y0 + s * x0;
                *(le_v4 *)(x - ld + 4) = c * y1 + s * x1;
                *(le_v4 *)(x - ld + 8) = c * y2 + s * x2;
                *(le_v4 *)(x - ld + 12) = c * y3 + s * x3;
                y0 = c * x0 - s * y0; y1 = c * x1 - s * y1;
                y2 = c * x2 - s * y2; y3 = c * x3 - s * y3;
            }
            double *o = base + hi * ld;
            *(le_v4 *)o = y0; *(le_v4 *)(o + 4) = y1; *(le_v4 *)(o + 8) = y2;
            *(le_v4 *)(o + 12) = y3;
        } else {
            for (int64_t t = 0; t < len - j; t++) {
                double y = base[lo * ld + t];
                for (int64_t q = lo; q < hi; q++) {
                    const double c = c_[q], s = s_[q], x = base[(q + 1) * ld + t];
                    base[q * ld + t] = c * y + s * x;
                    y = c * x - s * y;
                }
                base[hi * ld + t] = y;
            }
        }
    }
}

static void le_rot_fwd_par(double *z, int64_t ld, int64_t n, const double *c_, const double *s_,
                           int64_t lo, int64_t hi, int nti) {
    const int64_t nch = nti > 1 && n >= 128 ? nti : 1, w = (n + nch - 1) / nch;
    LE_PFOR(nch, ch, 0, nch,
            const int64_t j0 = ch * w;
            if (j0 < n) le_rot_fwd(z, ld, c_, s_, lo, hi, j0, (j0 + w < n ? j0 + w : n) - j0));
}

/* rows x, y of length n <- (c x + s y, c y - s x) */
static void le_drot(int64_t n, double *x, double *y, double c, double s) {
    if (!x) return;
    for (int64_t i = 0; i < n; i++) {
        const double a = x[i], b = y[i];
        x[i] = c * a + s * b;
        y[i] = c * b - s * a;
    }
}

/* c f + s g = r, c g - s f = 0 */
static void le_lartg(double f, double g, double *c, double *s, double *r) {
    if (g == 0) { *c = 1; *s = 0; *r = f; return; }
    if (f == 0) { *c = 0; *s = 1; *r = g; return; }
    const double h = le_hypot(f, g), up = h < LE_SMALL ? LE_UP : 1.0;
    const double hs = up == 1.0 ? h : le_hypot(f * up, g * up);
    *c = f * up / hs; *s = g * up / hs; *r = h;
}

/* B = diag(d) + superdiag(e) (k x k, real) -> its singular values in d (signed, unsorted);
 * rotations onto the rows of u (left vectors) and v (right), stride ld, or none when NULL.
 * cs: 4k scratch. 0, or 1 when the iteration cap was hit. */
static int le_bdsqr(int64_t k, double *d, double *e, double *u, double *v, int64_t ld,
                    double *cs, int nti) {
    double bn = 0;
    for (int64_t i = 0; i < k; i++) bn = le_fmax(bn, fabs(d[i]));
    for (int64_t i = 0; i + 1 < k; i++) bn = le_fmax(bn, fabs(e[i]));
    if (!(bn > 0)) return bn == 0 ? 0 : 1;
    const double tz = LE_EPS * bn;
    double *cr = cs, *sr = cs + k, *cl = cs + 2 * k, *sl = cs + 3 * k;
    int64_t it = 0, maxit = 6 * k * k + 60;
    for (int64_t hi = k - 1; hi > 0;) {
        for (int64_t i = 0; i <= hi; i++)
            if (fabs(d[i]) <= tz) d[i] = 0;
        if (fabs(e[hi - 1]) <= LE_EPS * (fabs(d[hi - 1]) + fabs(d[hi])) ||
            fabs(e[hi - 1]) < DBL_MIN) {
            e[hi - 1] = 0;
            hi--;
            continue;
        }
        int64_t lo = hi - 1;
        while (lo > 0 && !(fabs(e[lo - 1]) <= LE_EPS * (fabs(d[lo - 1]) + fabs(d[lo])) ||
                           fabs(e[lo - 1]) < DBL_MIN))
            lo--;
        if (lo > 0) e[lo - 1] = 0;
        if (++it > maxit) return 1;
        int64_t z = -1;
        for (int64_t i = lo; i <= hi; i++)
            if (d[i] == 0) { z = i; break; }
        if (z >= 0 && z < hi) {   /* zero row z: rotate e[z] out against rows z+1 .. hi */
            double f = e[z], c, s, r;
            e[z] = 0;
            for (int64_t j = z + 1; j <= hi && f != 0; j++) {
                le_lartg(d[j], f, &c, &s, &r);
                d[j] = r;
                le_drot(k, u ? u + z * ld : NULL, u ? u + j * ld : NULL, c, -s);
                if (j < hi) { f = -s * e[j]; e[j] *= c; }
            }
            continue;
        }
        if (z == hi) {   /* zero column hi: rotate e[hi-1] out against columns hi-1 .. lo */
            double f = e[hi - 1], c, s, r;
            e[hi - 1] = 0;
            for (int64_t j = hi - 1; j >= lo && f != 0; j--) {
                le_lartg(d[j], f, &c, &s, &r);
                d[j] = r;
                le_drot(k, v ? v + j * ld : NULL, v ? v + hi * ld : NULL, c, s);
                if (j > lo) { f = -s * e[j - 1]; e[j - 1] *= c; }
            }
            continue;
        }
        /* shift: the smaller singular value of the trailing 2 x 2 */
        const double fa = fabs(d[hi - 1]), ga = fabs(e[hi - 1]), ha = fabs(d[hi]);
        const double smax = 0.5 * (le_hypot(fa + ha, ga) + le_hypot(fa - ha, ga));
        double shift = smax > 0 ? fa / smax * ha : 0;
        const double sll = fabs(d[lo]);
        if ((shift / sll) * (shift / sll) < LE_EPS) shift = 0;
        double f = (sll - shift) * (copysign(1.0, d[lo]) + shift / d[lo]), g = e[lo], r;
        for (int64_t i = lo; i < hi; i++) {
            double c1, s1, c2, s2;
            le_lartg(f, g, &c1, &s1, &r);
            if (i > lo) e[i - 1] = r;
            f = c1 * d[i] + s1 * e[i];
            e[i] = c1 * e[i] - s1 * d[i];
            g = s1 * d[i + 1];
            d[i + 1] = c1 * d[i + 1];
            le_lartg(f, g, &c2, &s2, &r);
            d[i] = r;
            f = c2 * e[i] + s2 * d[i + 1];
            d[i + 1] = c2 * d[i + 1] - s2 * e[i];
            if (i < hi - 1) { g = s2 * e[i + 1]; e[i + 1] = c2 * e[i + 1]; }
            cr[i] = c1; sr[i] = s1; cl[i] = c2; sl[i] = s2;
        }
        e[hi - 1] = f;
        if (v) le_rot_fwd_par(v, ld, k, cr, sr, lo, hi, nti);
        if (u) le_rot_fwd_par(u, ld, k, cl, sl, lo, hi, nti);
    }
    return 0;
}

/* SVD of the square m (k x k, row-major, destroyed): s descending; with ur, vr (k x k): the
 * left / right singular vectors as their rows. work: le_gk_ws bytes. */
static int le_gk_svd(le_t *m, int64_t k, double *s, le_t *ur, le_t *vr, void *work, int nti) {
    const int64_t ld = k >= 64 && k % 32 == 0 ? k + 8 : k;
    le_t *pl = (le_t *)work, *tl = pl + k * k, *tr = tl + k, *y = tr + k;
    double *e = (double *)(y + k), *cs = e + k, *u = cs + 4 * k, *v = u + k * ld;
    const int vec = ur != NULL;
    for (int64_t j = 0; j < k; j++) {
        /* left reflector from column j (rows j..); y = its v^H times the rows */
        const int64_t len = k - j, nc = k - j - 1;
        le_t *pv = pl + j * k + j, t, t2 = LE_ZERO;
        for (int64_t i = 0; i < len; i++) pv[i] = m[(j + i) * k + j];
        s[j] = le_larfg(pv[0], len - 1, pv + 1, &t);
        pv[0] = le_mk(1.0, 0.0);
        tl[j] = t;
        const le_t ct = le_conj(t);
        const int left = le_abs1(t) != 0 && nc > 0;
        if (left) {
            memset(y, 0, sizeof(le_t) * (size_t)nc);
            for (int64_t i = 0; i < len; i++)
                le_axpy(nc, le_conj(pv[i]), m + (j + i) * k + j + 1, y);
            le_axpy(nc, le_rmul(-1.0, ct), y, m + j * k + j + 1);   /* row j (pv[0] = 1) */
        }
        if (nc == 0) break;
        /* right reflector from row j (columns j+1.., conjugated: r W = beta e1) */
        le_t *rv = m + j * k + j + 1;
        for (int64_t i = 0; i < nc; i++) rv[i] = le_conj(rv[i]);
        e[j] = le_larfg(rv[0], nc - 1, rv + 1, &t2);
        rv[0] = le_mk(1.0, 0.0);
        tr[j] = t2;
        const int right = le_abs1(t2) != 0;
        const int nt = nti > 1 && len * nc >= 16384 ? nti : 1;
        LE_PFOR(nt, i, j + 1, k,   /* each row below: the left update, then the right one */
                le_t *row = m + i * k + j + 1;
                if (left) le_axpy(nc, le_rmul(-1.0, le_mul(ct, pv[i - j])), y, row);
                if (right) {
                    le_t sd = le_mul(t2, le_dotu(nc, row, rv));
                    le_axpyc(nc, le_rmul(-1.0, sd), rv, row);
                });
    }
    if (vec) {
        for (int64_t i = 0; i < k; i++) {
            memset(u + i * ld, 0, sizeof(double) * (size_t)k);
            memset(v + i * ld, 0, sizeof(double) * (size_t)k);
            u[i * ld + i] = v[i * ld + i] = 1.0;
        }
    }
    int info = le_bdsqr(k, s, e, vec ? u : NULL, vec ? v : NULL, ld, cs, nti);
    for (int64_t i = 0; i < k; i++)
        if (s[i] < 0) {
            s[i] = -s[i];
            if (vec)
                for (int64_t j = 0; j < k; j++) v[i * ld + j] = -v[i * ld + j];
        }
    for (int64_t i = 0; i < k; i++) {   /* descending, vectors along */
        const int64_t b = le_desc_step(s, i, k);
        if (b == i) continue;
        if (vec)
            for (int64_t j = 0; j < k; j++) {
                double t = u[i * ld + j]; u[i * ld + j] = u[b * ld + j]; u[b * ld + j] = t;
                t = v[i * ld + j]; v[i * ld + j] = v[b * ld + j]; v[b * ld + j] = t;
            }
    }
    if (!vec) return info;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < k; j++) {
            ur[i * k + j] = le_mk(u[i * ld + j], 0.0);
            vr[i * k + j] = le_mk(v[i * ld + j], 0.0);
        }
    const int nt = nti > 1 && k >= 96 ? nti : 1;   /* U = P U_B, V = W V_B */
    LE_PFOR(nt, i, 0, (k + 3) / 4,
            le_backtrans(pl, tl, k, k, 0, ur, k, 4 * i);
            le_backtrans(m, tr, k, k - 1, 1, vr, k, 4 * i));
    return info;
}

static size_t le_gk_ws(int64_t k) {
    const int64_t ld = k + 8;
    return sizeof(le_t) * (size_t)(k * k + 3 * k) +
           sizeof(double) * (size_t)(5 * k + 2 * k * ld) + 64;
}
