/* The SVD of tensor/cpu/linalg_eig.py: part of linalg_eig.h (its scalar helpers and batch
 * driver), included by it in both modules. X = A (tall) or A^H (wide), L x k, L >= k.
 *
 * Small square X (k < 32: the batched case): one-sided Jacobi (Hestenes) on the columns of X,
 * kept as the rows of g; pairs in round-robin order so that a round's rotations are disjoint
 * (threads split a round without changing the result); column norms tracked through the
 * rotations and recomputed each sweep; convergence by the relative orthogonality test
 * |p^H q| <= sqrt(L) eps ||p|| ||q|| (a pair above it is rotated), a sweep counting only when
 * some pair was above (L + 4) eps, the rounding floor of the computed cosine: below it a
 * rotation is noise, and a pair whose computed cosine sat between the two kept the sweeps
 * going until the limit (info 1 for a well-conditioned 3 x 3); left vectors of zero columns
 * completed by Gram-Schmidt.
 * Otherwise: Householder QR X = Q R when tall (the iteration then works on k x k), Golub-Kahan
 * (linalg_eig_bd.h) on R (or on X itself when square), left vectors Q U_R, and a full basis
 * from Q applied to the standard vectors past k. */

#include "linalg_eig_bd.h"

#define LE_ZCOL2 (DBL_MIN / LE_EPS)   /* squared norm of a column taken as zero */

/* Complete the orthonormal rows 0..r-1 of g (length L each) to rows 0..kt-1: standard vectors
 * taken in order of their largest remaining component, orthogonalised twice. res: L scratch. */
static void le_complete(le_t *g, int64_t L, int64_t r, int64_t kt, double *res) {
    for (int64_t i = 0; i < L; i++) res[i] = 1.0;
    for (int64_t j = 0; j < r; j++)
        for (int64_t i = 0; i < L; i++) res[i] -= le_abs2(g[j * L + i]);
    for (int64_t t = r; t < kt; t++) {
        int64_t best = 0;
        for (int64_t i = 1; i < L; i++)
            if (res[i] > res[best]) best = i;
        le_t *x = g + t * L;
        memset(x, 0, sizeof(le_t) * (size_t)L);
        x[best] = le_mk(1.0, 0.0);
        for (int pass = 0; pass < 2; pass++)
            for (int64_t j = 0; j < t; j++) {
                le_t c = le_dotc(L, g + j * L, x);
                le_axpy(L, le_rmul(-1.0, c), g + j * L, x);
            }
        double nr = sqrt(le_nrm2sq(L, x));
        for (int64_t i = 0; i < L; i++) {
            x[i] = le_rmul(1.0 / nr, x[i]);
            res[i] -= le_abs2(x[i]);
        }
        res[best] = -1.0;   /* taken: never again (rounding could leave it the largest) */
    }
}

/* Rotate rows p, q of g (and of y, length k) to orthogonality unless they already are to
 * relative tolerance tol; np, nq: their squared norms, updated. Returns 1 when it rotated a
 * pair whose cosine was above conv (a rotation that counts for convergence), else 0. */
static int le_jacobi_pair(le_t *gp, le_t *gq, int64_t L, le_t *yp, le_t *yq, int64_t k,
                          double *np, double *nq, double tol, double conv) {
    const double al = *np, be = *nq;
    /* columns under 1e-146 are zero: the range scaling keeps the largest entry above 1e-100 */
    if (al < LE_ZCOL2 || be < LE_ZCOL2) return 0;
    const le_t gm = le_dotc(L, gp, gq);
    const double gr = le_re(gm), gi = le_im(gm), ga = LE_CPLX ? le_hypot(gr, gi) : fabs(gr);
    if (!(ga > tol * sqrt(al) * sqrt(be))) return 0;
    const int counts = ga > conv * sqrt(al) * sqrt(be);
    const double zeta = (be - al) / (2.0 * ga);
    const double t = copysign(1.0, zeta) / (fabs(zeta) + le_hypot(1.0, zeta));
    const double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
    /* (p, q) <- (c p - s e q, s p + c e q), e = conj(gamma) / |gamma| */
#if LE_CPLX
    const double up = ga < LE_SMALL ? LE_UP : 1.0, gas = le_hypot(gr * up, gi * up);
    const double er = gr * up / gas, ei = -gi * up / gas;
    for (int pass = 0; pass < 2; pass++) {
        le_t *restrict x = pass ? yp : gp, *restrict z = pass ? yq : gq;
        const int64_t len = pass ? (yp ? k : 0) : L;
        for (int64_t i = 0; i < len; i++) {
            double qr = er * z[i].re - ei * z[i].im, qi = er * z[i].im + ei * z[i].re;
            double pr = x[i].re, pi = x[i].im;
            x[i].re = c * pr - s * qr; x[i].im = c * pi - s * qi;
            z[i].re = s * pr + c * qr; z[i].im = s * pi + c * qi;
        }
    }
#else
    const double sg = gr < 0 ? -s : s;
    le_rot(L, gp, gq, c, -sg);
    if (yp) le_rot(k, yp, yq, c, -sg);
#endif
    *np = al - t * ga;
    *nq = be + t * ga;
    /* cancellation: recompute (the update lost the small norm's digits) */
    if (*np < 0.05 * al) *np = le_nrm2sq(L, gp);
    if (*nq < 0.05 * be) *nq = le_nrm2sq(L, gq);
    return counts;
}

/* Pair i of round rd of the round robin over K players (those >= k sit out). */
static int le_round_pair(le_t *g, le_t *y, int64_t L, int64_t k, int64_t K, int64_t rd,
                         int64_t i, double *nrm, double tol, double conv) {
    int64_t p = i == 0 ? K - 1 : (rd + i) % (K - 1);
    int64_t q = (rd - i + K - 1) % (K - 1);
    if (p > q) { int64_t t = p; p = q; q = t; }
    if (q >= k) return 0;
    return le_jacobi_pair(g + p * L, g + q * L, L, y ? y + p * k : NULL, y ? y + q * k : NULL,
                          k, nrm + p, nrm + q, tol, conv);
}

/* One-sided Jacobi on the k rows of g (length L), rotations also on the rows of y (k x k, or
 * NULL); then s = the row norms, descending, rows of g and y permuted along. 0 or 1 (no
 * convergence). nrm: k scratch. */
static int le_jacobi(le_t *g, int64_t L, int64_t k, le_t *y, double *s, double *nrm, int nti) {
    const int64_t K = k + (k & 1);
    const double tol = LE_EPS * sqrt((double)L), conv = LE_EPS * (double)(L + 4);
    int info = k > 1;
    for (int sweep = 0; sweep < 80 && k > 1; sweep++) {
        for (int64_t j = 0; j < k; j++) nrm[j] = le_nrm2sq(L, g + j * L);
        int64_t rotated = 0;
        const int nt = nti > 1 && (double)L * K >= 16384 ? nti : 1;
        for (int64_t rd = 0; rd < K - 1; rd++) {
            if (nt > 1) {
                _Pragma("omp parallel for num_threads(nt) schedule(static) reduction(+:rotated)")
                for (int64_t i = 0; i < K / 2; i++)
                    rotated += le_round_pair(g, y, L, k, K, rd, i, nrm, tol, conv);
            } else {
                for (int64_t i = 0; i < K / 2; i++)
                    rotated += le_round_pair(g, y, L, k, K, rd, i, nrm, tol, conv);
            }
        }
        if (!rotated) { info = 0; break; }
    }
    for (int64_t j = 0; j < k; j++) s[j] = sqrt(le_nrm2sq(L, g + j * L));
    for (int64_t i = 0; i < k; i++) {   /* descending, vectors along */
        const int64_t b = le_desc_step(s, i, k);
        if (b == i) continue;
        for (int64_t j = 0; j < L; j++) {
            le_t x = g[i * L + j]; g[i * L + j] = g[b * L + j]; g[b * L + j] = x;
        }
        if (y)
            for (int64_t j = 0; j < k; j++) {
                le_t x = y[i * k + j]; y[i * k + j] = y[b * k + j]; y[b * k + j] = x;
            }
    }
    return info;
}

/* Normalise the rows of g that are not zero (s descending; the Jacobi rotations left the
 * tinier ones alone) and complete them to kt rows. */
static void le_left_basis(le_t *g, int64_t L, int64_t k, int64_t kt, const double *s,
                          double *res) {
    int64_t r = 0;
    for (; r < k && s[r] * s[r] >= LE_ZCOL2; r++)
        for (int64_t j = 0; j < L; j++) g[r * L + j] = le_rmul(1.0 / s[r], g[r * L + j]);
    if (r < kt) le_complete(g, L, r, kt, res);
}

/* x (length L) <- Q x, Q = H_0 ... H_{k-1}: reflector j in row j of q from column j + 1
 * (its leading 1 implicit). */
static void le_apply_q(const le_t *q, const le_t *tau, int64_t L, int64_t k, le_t *x) {
    for (int64_t j = k - 1; j >= 0; j--) {
        if (le_abs1(tau[j]) == 0) continue;
        const le_t *v = q + j * L + j + 1;
        le_t s = le_mul(tau[j], le_add(x[j], le_dotc(L - j - 1, v, x + j + 1)));
        x[j] = le_sub(x[j], s);
        le_axpy(L - j - 1, le_rmul(-1.0, s), v, x + j + 1);
    }
}

/* Householder QR of the k columns of X held as the rows of q (length L >= k): R's column j
 * into q[j][0..j], reflector j below it. */
static void le_qr_rows(le_t *q, int64_t L, int64_t k, le_t *tau, int nti) {
    for (int64_t j = 0; j < k; j++) {
        le_t *x = q + j * L + j, t;
        x[0] = le_mk(le_larfg(x[0], L - j - 1, x + 1, &t), 0.0);
        tau[j] = t;
        if (le_abs1(t) == 0) continue;
        const le_t ct = le_conj(t);
        const int nt = nti > 1 && (L - j) * (k - j) >= 16384 ? nti : 1;
        LE_PFOR(nt, i, j + 1, k,   /* column i <- H^H column i */
                le_t *z = q + i * L + j;
                le_t sd = le_mul(ct, le_add(z[0], le_dotc(L - j - 1, x + 1, z + 1)));
                z[0] = le_sub(z[0], sd);
                le_axpy(L - j - 1, le_rmul(-1.0, sd), x + 1, z + 1));
    }
}

/* One matrix a (m x n): s (min(m, n)) descending; u (m x ku), vh (kv x n) when u != NULL. */
static int le_svd1(le_t *a, int64_t lda, int64_t m, int64_t n, double *s, le_t *u,
                   int64_t ldu, int64_t ku, le_t *vh, int64_t ldv, int64_t kv, void *work,
                   int nti) {
    const int wide = m < n, vec = u != NULL;
    const int64_t L = wide ? n : m, k = wide ? m : n;
    const int64_t kt = !vec ? 0 : wide ? kv : ku;   /* left vectors wanted (length L) */
    const int64_t gr = kt > k ? kt : k;
    const int pre = L > k || k >= 32;               /* QR, then Golub-Kahan on R */
    le_t *g = (le_t *)work, *y = g + gr * L, *q = y + k * k, *mr = q + (pre ? k * L : 0);
    le_t *ur = mr + (pre ? k * k : 0), *tau = ur + (pre ? k * k : 0);
    double *res = (double *)(tau + k), *nrm = res + L;
    void *gkw = nrm + k;
    le_t *x = pre ? q : g;   /* the columns of X, as rows */
    double amax = 0;
    int finite = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            le_t v = a[i * lda + j];
            const double av = le_abs1(v);
            finite &= av <= DBL_MAX;
            amax = le_fmax(amax, av);
            if (wide) x[i * L + j] = le_conj(v);
            else x[j * L + i] = v;
        }
    if (!finite) {   /* NaN results, info 1 (NumPy: "SVD did not converge"), as on CUDA */
        const le_t nan = le_mk(NAN, LE_CPLX ? NAN : 0.0);
        for (int64_t j = 0; j < k; j++) s[j] = NAN;
        for (int64_t i = 0; vec && i < m; i++)
            for (int64_t j = 0; j < ku; j++) u[i * ldu + j] = nan;
        for (int64_t i = 0; vec && i < kv; i++)
            for (int64_t j = 0; j < n; j++) vh[i * ldv + j] = nan;
        return 1;
    }
    const double sc = le_range_scale(amax);
    if (sc != 1.0)
        for (int64_t i = 0; i < k * L; i++) x[i] = le_rmul(sc, x[i]);
    int info;
    if (!pre) {
        if (vec) {
            memset(y, 0, sizeof(le_t) * (size_t)(k * k));
            for (int64_t i = 0; i < k; i++) y[i * k + i] = le_mk(1.0, 0.0);
        }
        info = le_jacobi(g, L, k, vec ? y : NULL, s, nrm, nti);
        if (vec) le_left_basis(g, L, k, kt, s, res);
    } else {
        /* X = Q R, R = U_R S V_R^H: X's left vectors Q U_R (then the standard vectors past
         * k, through Q, for a full basis), its right ones V_R (the rows of y). Square X:
         * its SVD directly (no Q). */
        if (L > k) {
            le_qr_rows(q, L, k, tau, nti);
            for (int64_t i = 0; i < k; i++)
                for (int64_t j = 0; j < k; j++) mr[i * k + j] = j < i ? LE_ZERO : q[j * L + i];
        } else {   /* square: no QR (X = A) */
            for (int64_t i = 0; i < k; i++)
                for (int64_t j = 0; j < k; j++) mr[i * k + j] = q[j * L + i];
        }
        info = le_gk_svd(mr, k, s, vec ? (L > k ? ur : g) : NULL, vec ? y : NULL, gkw, nti);
        if (vec && L > k) {
            for (int64_t j = 0; j < kt; j++) {
                le_t *gj = g + j * L;
                memset(gj, 0, sizeof(le_t) * (size_t)L);
                if (j < k) memcpy(gj, ur + j * k, sizeof(le_t) * (size_t)k);
                else gj[j] = le_mk(1.0, 0.0);
            }
            const int nt = nti > 1 && kt * L >= 16384 ? nti : 1;
            LE_PFOR(nt, j, 0, kt, le_apply_q(q, tau, L, k, g + j * L));
        }
    }
    if (vec) {
        /* tall: u = g^T, vh = y^H; wide: u = y^T, vh = g^H (conjugated) */
        le_t *gm = wide ? vh : u, *ym = wide ? u : vh;
        const int64_t ldg = wide ? ldv : ldu, ldy = wide ? ldu : ldv;
        if (wide)
            for (int64_t j = 0; j < kt; j++)
                for (int64_t i = 0; i < L; i++) gm[j * ldg + i] = le_conj(g[j * L + i]);
        else
            for (int64_t i = 0; i < L; i++)
                for (int64_t j = 0; j < kt; j++) gm[i * ldg + j] = g[j * L + i];
        if (wide)
            for (int64_t i = 0; i < k; i++)
                for (int64_t j = 0; j < k; j++) ym[i * ldy + j] = y[j * k + i];
        else
            for (int64_t j = 0; j < k; j++)
                for (int64_t i = 0; i < k; i++) ym[j * ldy + i] = le_conj(y[j * k + i]);
    }
    if (sc != 1.0)
        for (int64_t j = 0; j < k; j++) s[j] /= sc;
    return info;
}

int LE_SVD(intptr_t ap, int64_t B, int64_t m, int64_t n, int64_t bs, int64_t lda, intptr_t sp,
           intptr_t up, int64_t ubs, int64_t ldu, int64_t ku, intptr_t vp, int64_t vbs,
           int64_t ldv, int64_t kv, intptr_t infop, int nthreads) {
    le_t *a = (le_t *)ap, *u = (le_t *)up, *vh = (le_t *)vp;
    double *s = (double *)sp;
    int64_t *info = (int64_t *)infop;
    const int64_t L = m > n ? m : n, k = m < n ? m : n, kt = !u ? 0 : m < n ? kv : ku;
    const int64_t gr = kt > k ? kt : k;
    const size_t ws = sizeof(le_t) * (size_t)(gr * L + k * L + 3 * k * k + k) +
                      sizeof(double) * (size_t)(L + k) + le_gk_ws(k) + 64;
    LE_BATCH(B, 8.0 * L * k * k, ws,
             info[b] = le_svd1(a + b * bs, lda, m, n, s + b * k, u ? u + b * ubs : NULL, ldu,
                               ku, vh ? vh + b * vbs : NULL, ldv, kv, work, nti));
    return 0;
}
