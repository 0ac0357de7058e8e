/* Eigen- and singular value kernels of tensor/cpu/linalg_eig.py, written once over the scalar
 * le_t: double when LE_CPLX is 0, sx_cd (complex128) when it is 1 (the module's source defines
 * LE_CPLX before including this file, one module per dtype).
 *
 *   eigh  Householder reduction of the Hermitian matrix (lower triangle, symmetric products over
 *         a fixed split of rows) to a real symmetric tridiagonal one (each reflector's beta is
 *         real, so the complex case needs no extra phase step), implicit-shift QL with each
 *         sweep's rotations applied afterwards to the eigenvector rows (split over threads by
 *         columns), sort, back-transformation four vectors at a time.
 *   svd   linalg_eig_svd.h: one-sided Jacobi for small square matrices, else QR and
 *         Golub-Kahan bidiagonal QR (linalg_eig_bd.h).
 *   eig   linalg_eig_gen.h (complex only): Hessenberg reduction, complex single-shift QR,
 *         eigenvectors by back substitution on the Schur form.
 *
 * Vectors are kept as rows (transposed) so that every rotation and update runs over
 * contiguous memory. Matrices are scaled by a power of two when their largest entry is near
 * the ends of the exponent range. Threads split only independent work, in a split fixed by
 * the sizes, so results are bitwise identical whatever the thread count. Each entry point
 * returns 0, or -1 when a workspace could not be allocated; info[b] > 0 when the iteration
 * for matrix b did not converge. */
#include "common.h"
#include <float.h>

#if LE_CPLX
typedef sx_cd le_t;
#define LE_EIGH linalg_eigh_c128
#define LE_SVD linalg_svd_c128
SX_INLINE le_t le_mk(double r, double i) { le_t z = {r, i}; return z; }
SX_INLINE double le_re(le_t a) { return a.re; }
SX_INLINE double le_im(le_t a) { return a.im; }
SX_INLINE le_t le_conj(le_t a) { a.im = -a.im; return a; }
SX_INLINE le_t le_add(le_t a, le_t b) { return le_mk(a.re + b.re, a.im + b.im); }
SX_INLINE le_t le_sub(le_t a, le_t b) { return le_mk(a.re - b.re, a.im - b.im); }
SX_INLINE le_t le_mul(le_t a, le_t b) {
    return le_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
SX_INLINE le_t le_rmul(double r, le_t a) { return le_mk(r * a.re, r * a.im); }
SX_INLINE double le_abs2(le_t a) { return a.re * a.re + a.im * a.im; }
SX_INLINE double le_abs1(le_t a) { return fabs(a.re) + fabs(a.im); }
SX_INLINE le_t le_div(le_t a, le_t b) { return sx_cdiv_cd(a, b); }
#else
typedef double le_t;
#define LE_EIGH linalg_eigh_f64
#define LE_SVD linalg_svd_f64
SX_INLINE le_t le_mk(double r, double i) { (void)i; return r; }
SX_INLINE double le_re(le_t a) { return a; }
SX_INLINE double le_im(le_t a) { (void)a; return 0.0; }
SX_INLINE le_t le_conj(le_t a) { return a; }
SX_INLINE le_t le_add(le_t a, le_t b) { return a + b; }
SX_INLINE le_t le_sub(le_t a, le_t b) { return a - b; }
SX_INLINE le_t le_mul(le_t a, le_t b) { return a * b; }
SX_INLINE le_t le_rmul(double r, le_t a) { return r * a; }
SX_INLINE double le_abs2(le_t a) { return a * a; }
SX_INLINE double le_abs1(le_t a) { return fabs(a); }
SX_INLINE le_t le_div(le_t a, le_t b) { return a / b; }
#endif

#define LE_EPS (DBL_EPSILON * 0.5)
/* NaN-ignoring as fmax, inlined */
SX_INLINE double le_fmax(double a, double b) { return a >= b || b != b ? a : b; }
#define LE_ZERO le_mk(0.0, 0.0)

/* for (i = lo; i < hi; i++) body, over nt threads when nt > 1 (serial code has no OpenMP
 * call at all: an `if (0)` parallel region still costs a microsecond, more than an 8 x 8). */
#define LE_PFOR(nt, i, lo, hi, ...)                                                       \
    do {                                                                                 \
        const int le_nt_ = (nt);                                                         \
        if (le_nt_ > 1) {                                                                \
            _Pragma("omp parallel for num_threads(le_nt_) schedule(static)")             \
            for (int64_t i = (lo); i < (hi); i++) { __VA_ARGS__; }                       \
        } else {                                                                         \
            for (int64_t i = (lo); i < (hi); i++) { __VA_ARGS__; }                       \
        }                                                                                \
    } while (0)

/* sum conj(x_i) y_i */
static inline le_t le_dotc(int64_t n, const le_t *restrict x, const le_t *restrict y) {
#if LE_CPLX
    double re = 0, im = 0;
    for (int64_t i = 0; i < n; i++) {
        re += x[i].re * y[i].re + x[i].im * y[i].im;
        im += x[i].re * y[i].im - x[i].im * y[i].re;
    }
    return le_mk(re, im);
#else
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
#endif
}

/* sum x_i y_i (no conjugate) */
static inline le_t le_dotu(int64_t n, const le_t *restrict x, const le_t *restrict y) {
#if LE_CPLX
    double re = 0, im = 0;
    for (int64_t i = 0; i < n; i++) {
        re += x[i].re * y[i].re - x[i].im * y[i].im;
        im += x[i].re * y[i].im + x[i].im * y[i].re;
    }
    return le_mk(re, im);
#else
    return le_dotc(n, x, y);
#endif
}

/* y += a x */
static inline void le_axpy(int64_t n, le_t a, const le_t *restrict x, le_t *restrict y) {
#if LE_CPLX
    for (int64_t i = 0; i < n; i++) {
        double xr = x[i].re, xi = x[i].im;
        y[i].re += a.re * xr - a.im * xi;
        y[i].im += a.re * xi + a.im * xr;
    }
#else
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
#endif
}

/* y += a conj(x) */
static inline void le_axpyc(int64_t n, le_t a, const le_t *restrict x, le_t *restrict y) {
#if LE_CPLX
    for (int64_t i = 0; i < n; i++) {
        double xr = x[i].re, xi = -x[i].im;
        y[i].re += a.re * xr - a.im * xi;
        y[i].im += a.re * xi + a.im * xr;
    }
#else
    le_axpy(n, a, x, y);
#endif
}

static inline double le_nrm2sq(int64_t n, const le_t *restrict x) {
    double s = 0;
#if LE_CPLX
    for (int64_t i = 0; i < n; i++) s += x[i].re * x[i].re + x[i].im * x[i].im;
#else
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
#endif
    return s;
}

/* (x, y) <- (c x + s y, -conj(s) x + c y), c real */
static inline void le_rot(int64_t n, le_t *restrict x, le_t *restrict y, double c, le_t s) {
#if LE_CPLX
    for (int64_t i = 0; i < n; i++) {
        double xr = x[i].re, xi = x[i].im, yr = y[i].re, yi = y[i].im;
        x[i].re = c * xr + s.re * yr - s.im * yi;
        x[i].im = c * xi + s.re * yi + s.im * yr;
        y[i].re = c * yr - s.re * xr - s.im * xi;
        y[i].im = c * yi - s.re * xi + s.im * xr;
    }
#else
    for (int64_t i = 0; i < n; i++) {
        double xv = x[i], yv = y[i];
        x[i] = c * xv + s * yv;
        y[i] = c * yv - s * xv;
    }
#endif
}

/* hypot without its cost where no overflow or underflow can happen (the common case) */
SX_INLINE double le_hypot(double a, double b) {
    const double m = le_fmax(fabs(a), fabs(b));
    return m < 1e150 && m > 1e-150 ? sqrt(a * a + b * b) : hypot(a, b);
}

/* One step of a selection sort into descending order: the largest of s[i..k) swapped into
 * s[i]; returns where it was (i: nothing moved), for the caller to swap its vectors alike. */
static inline int64_t le_desc_step(double *s, int64_t i, int64_t k) {
    int64_t b = i;
    for (int64_t j = i + 1; j < k; j++)
        if (s[j] > s[b]) b = j;
    double t = s[i]; s[i] = s[b]; s[b] = t;
    return b;
}

/* Operands below this are scaled up by LE_UP (exactly) before a rotation or phase is taken
 * from them: their quotients would lose bits in the subnormal range, and c^2 + s^2 = 1. */
#define LE_SMALL 1e-250
#define LE_UP 0x1p600

/* The power of two that brings the largest |entry| amax into range (1 when it already is). */
static double le_range_scale(double amax) {
    if (amax > 0 && (amax < 1e-100 || amax > 1e100)) {
        const int e = -ilogb(amax);
        return ldexp(1.0, e < 1000 ? e : 1000);   /* subnormal amax: 2^1000 (finite) */
    }
    return 1.0;
}

/* Householder reflector (LAPACK's larfg): H = I - tau v v^H, v = (1, x / (alpha - beta)),
 * H^H (alpha, x) = (beta, 0) with beta real. x (length m) is overwritten with v[1:]. */
static double le_larfg(le_t alpha, int64_t m, le_t *x, le_t *tau) {
    /* (alpha, x) far from 1 in size: sum of squares under- or overflows (beta = 0 gives a
     * NaN tau). Scaled by a power of two (v and tau do not change, beta scales back). */
    double amax = le_abs1(alpha);
    for (int64_t i = 0; i < m; i++) amax = le_fmax(amax, le_abs1(x[i]));
    if (amax > 0 && (amax < 1e-140 || amax > 1e140) && isfinite(amax)) {
        const int e = -ilogb(amax);
        const double sc = ldexp(1.0, e < 1000 ? e : 1000);
        for (int64_t i = 0; i < m; i++) x[i] = le_rmul(sc, x[i]);
        return le_larfg(le_rmul(sc, alpha), m, x, tau) / sc;
    }
    double xn = le_nrm2sq(m, x), ar = le_re(alpha), ai = le_im(alpha);
    if (xn == 0 && ai == 0) {
        *tau = LE_ZERO;
        return ar;
    }
    double beta = -copysign(sqrt(ar * ar + ai * ai + xn), ar);
    *tau = le_mk((beta - ar) / beta, -ai / beta);
    le_t sc = le_div(le_mk(1.0, 0.0), le_sub(alpha, le_mk(beta, 0.0)));
    for (int64_t i = 0; i < m; i++) x[i] = le_mul(sc, x[i]);
    return beta;
}

/* ------------------------------------------------------------------ eigh */

/* The rotations q = m-1 .. lo (cs: c, s pairs) on rows q, q + 1 of zt, columns j0 .. +len.
 * Row q + 1 is final after rotation q, so each column block carries the moving row in
 * registers: one load and one store per element and rotation. */
#define LE_RB 16
typedef double le_v4 __attribute__((vector_size(32), aligned(8)));
static void le_rot_seq(double *zt, int64_t n, const double *cs, int64_t lo, int64_t m,
                       int64_t j0, int64_t len) {
    for (int64_t j = 0; j < len; j += LE_RB) {
        double *base = zt + j0 + j, y[LE_RB];
        if (j + LE_RB <= len) {   /* 4 vectors of 4 (GCC / Clang vector extension) */
            le_v4 y0 = *(le_v4 *)(base + m * n), y1 = *(le_v4 *)(base + m * n + 4);
            le_v4 y2 = *(le_v4 *)(base + m * n + 8), y3 = *(le_v4 *)(base + m * n + 12);
            for (int64_t q = m - 1; q >= lo; q--) {
                const double c = cs[2 * q], s = cs[2 * q + 1];
                double *x = base + q * n;
                const le_v4 x0 = *(le_v4 *)x, x1 = *(le_v4 *)(x + 4);
                const le_v4 x2 = *(le_v4 *)(x + 8), x3 = *(le_v4 *)(x + 12);
                *(le_v4 *)(x + n) = s * x0 + c * y0;
                *(le_v4 *)(x + n + 4) = s * x1 + c * y1;
                *(le_v4 *)(x + n + 8) = s * x2 + c * y2;
                *(le_v4 *)(x + n + 12) = s * x3 + c * y3;
                y0 = c * x0 - s * y0; y1 = c * x1 - s * y1;
                y2 = c * x2 - s * y2; y3 = c * x3 - s * y3;
            }
            double *o = base + lo * n;
            *(le_v4 *)o = y0; *(le_v4 *)(o + 4) = y1; *(le_v4 *)(o + 8) = y2;
            *(le_v4 *)(o + 12) = y3;
        } else {
            const int w = (int)(len - j);
            for (int t = 0; t < w; t++) y[t] = base[m * n + t];
            for (int64_t q = m - 1; q >= lo; q--) {
                const double c = cs[2 * q], s = cs[2 * q + 1];
                double *x = base + q * n;
                for (int t = 0; t < w; t++) {
                    const double xv = x[t];
                    x[t + n] = s * xv + c * y[t];
                    y[t] = c * xv - s * y[t];
                }
            }
            for (int t = 0; t < w; t++) base[lo * n + t] = y[t];
        }
    }
}

/* Tridiagonal QL with implicit shifts on d (n), e (n, e[i] couples i and i + 1, e[n-1] = 0);
 * with zt, the rotations go onto its rows (row k: the k-th vector). cs: 2n scratch. */
static int le_tql(int64_t n, double *d, double *e, double *zt, int64_t ldz, double *cs,
                  int nti) {
    /* An off-diagonal element is dropped when it is negligible next to its diagonal
     * neighbours or next to the whole matrix (EISPACK tql2's test, against ||T||): the
     * relative test alone never drops one inside a cluster of eigenvalues near zero (a
     * low-rank matrix: hundreds of QL sweeps, then no convergence). Either changes the
     * eigenvalues by at most eps ||T||, the accuracy the method has anyway. */
    double tnorm = 0.0;
    for (int64_t i = 0; i < n; i++)
        tnorm = le_fmax(tnorm, fabs(d[i]) + (i < n - 1 ? fabs(e[i]) : 0.0));
    for (int64_t l = 0; l < n; l++) {
        int iter = 0;
        int64_t m;
        for (;;) {
            for (m = l; m < n - 1; m++) {
                double dd = fabs(d[m]) + fabs(d[m + 1]);
                if (!(fabs(e[m]) > LE_EPS * dd) || !(fabs(e[m]) > LE_EPS * tnorm)) break;
            }
            if (m == l) break;
            if (iter++ == 60) return (int)l + 1;
            if (!isfinite(e[m]) || !isfinite(d[l])) return (int)l + 1;
            double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            double r = le_hypot(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + copysign(r, g));
            double s = 1.0, c = 1.0, p = 0.0;
            int64_t i, lo = m;
            for (i = m - 1; i >= l; i--) {
                double f = s * e[i], b = c * e[i];
                e[i + 1] = r = le_hypot(f, g);
                if (r == 0.0) {
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    break;
                }
                if (r < LE_SMALL) {
                    const double fs = f * LE_UP, gs = g * LE_UP, rs = le_hypot(fs, gs);
                    s = fs / rs;
                    c = gs / rs;
                } else {
                    s = f / r;
                    c = g / r;
                }
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                cs[2 * i] = c;
                cs[2 * i + 1] = s;
                lo = i;
            }
            if (zt && lo < m) {
                const int64_t nch = nti > 1 && n >= 128 ? nti : 1, w = (n + nch - 1) / nch;
                LE_PFOR(nch, ch, 0, nch,
                        const int64_t j0 = ch * w;
                        le_rot_seq(zt, ldz, cs, lo, m, j0, (j0 + w < n ? j0 + w : n) - j0));
            }
            if (r == 0.0 && i >= l) continue;
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
    return 0;
}

/* Rows r0 .. r0+3 (those < n) of vt (length n, row stride ldv): x <- H_0 ... H_{nref-1} x,
 * reflector k in row k of W (stride n) from column k + off, its leading 1 stored; four
 * vectors share each pass over a reflector. */
static void le_backtrans(const le_t *W, const le_t *tau, int64_t n, int64_t nref, int64_t off,
                         le_t *vt, int64_t ldv, int64_t r0) {
    if (n - r0 < 4) {   /* the last rows, one by one */
        for (int64_t r = r0; r < n; r++) {
            le_t *x = vt + r * ldv;
            for (int64_t k = nref - 1; k >= 0; k--) {
                if (le_abs1(tau[k]) == 0) continue;
                const le_t *v = W + k * n + k + off;
                le_t s = le_mul(tau[k], le_dotc(n - k - off, v, x + k + off));
                le_axpy(n - k - off, le_rmul(-1.0, s), v, x + k + off);
            }
        }
        return;
    }
    le_t *x[4] = {vt + r0 * ldv, vt + (r0 + 1) * ldv, vt + (r0 + 2) * ldv, vt + (r0 + 3) * ldv};
    for (int64_t k = nref - 1; k >= 0; k--) {
        if (le_abs1(tau[k]) == 0) continue;
        const int64_t len = n - k - off;
        const le_t *restrict v = W + k * n + k + off;
        le_t *restrict x0 = x[0] + k + off, *restrict x1 = x[1] + k + off;
        le_t *restrict x2 = x[2] + k + off, *restrict x3 = x[3] + k + off;
#if LE_CPLX
        double a0 = 0, b0 = 0, a1 = 0, b1 = 0, a2 = 0, b2 = 0, a3 = 0, b3 = 0;
        for (int64_t i = 0; i < len; i++) {
            const double vr = v[i].re, vi = v[i].im;
            a0 += vr * x0[i].re + vi * x0[i].im; b0 += vr * x0[i].im - vi * x0[i].re;
            a1 += vr * x1[i].re + vi * x1[i].im; b1 += vr * x1[i].im - vi * x1[i].re;
            a2 += vr * x2[i].re + vi * x2[i].im; b2 += vr * x2[i].im - vi * x2[i].re;
            a3 += vr * x3[i].re + vi * x3[i].im; b3 += vr * x3[i].im - vi * x3[i].re;
        }
        const le_t t = le_rmul(-1.0, tau[k]);
        const le_t s0 = le_mul(t, le_mk(a0, b0)), s1 = le_mul(t, le_mk(a1, b1));
        const le_t s2 = le_mul(t, le_mk(a2, b2)), s3 = le_mul(t, le_mk(a3, b3));
        for (int64_t i = 0; i < len; i++) {
            const double vr = v[i].re, vi = v[i].im;
            x0[i].re += s0.re * vr - s0.im * vi; x0[i].im += s0.re * vi + s0.im * vr;
            x1[i].re += s1.re * vr - s1.im * vi; x1[i].im += s1.re * vi + s1.im * vr;
            x2[i].re += s2.re * vr - s2.im * vi; x2[i].im += s2.re * vi + s2.im * vr;
            x3[i].re += s3.re * vr - s3.im * vi; x3[i].im += s3.re * vi + s3.im * vr;
        }
#else
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (int64_t i = 0; i < len; i++) {
            a0 += v[i] * x0[i]; a1 += v[i] * x1[i]; a2 += v[i] * x2[i]; a3 += v[i] * x3[i];
        }
        const double t = -tau[k], s0 = t * a0, s1 = t * a1, s2 = t * a2, s3 = t * a3;
        for (int64_t i = 0; i < len; i++) {
            x0[i] += s0 * v[i]; x1[i] += s1 * v[i]; x2[i] += s2 * v[i]; x3[i] += s3 * v[i];
        }
#endif
    }
}

#define LE_NCH 8   /* row chunks of the symmetric products: a fixed split, whatever the threads */

/* The rows [lo, hi) of the lower-stored Hermitian b (m x m, row stride ld) times v, added into
 * the partial sums pc (zeroed first): row i gives its dot product to pc[i] and, through
 * the symmetry, its entries left of the diagonal times v[i] to pc[0..i-1]. */
static void le_symv_rows(const le_t *b, int64_t ld, const le_t *v, int64_t lo, int64_t hi,
                         le_t *pc) {
    memset(pc, 0, sizeof(le_t) * (size_t)hi);
    for (int64_t i = lo; i < hi; i++) {
        const le_t *restrict r = b + i * ld;
        le_t *restrict q = pc;
#if LE_CPLX
        const double vr = v[i].re, vi = v[i].im;
        double ar = 0, ai = 0;
        for (int64_t j = 0; j < i; j++) {
            const double br = r[j].re, bi = r[j].im;
            ar += br * v[j].re - bi * v[j].im;
            ai += br * v[j].im + bi * v[j].re;
            q[j].re += vr * br + vi * bi;
            q[j].im += vi * br - vr * bi;
        }
        q[i].re += ar + r[i].re * vr;
        q[i].im += ai + r[i].re * vi;
#else
        const double vi = v[i];
        double acc = 0;
        for (int64_t j = 0; j < i; j++) {
            acc += r[j] * v[j];
            q[j] += vi * r[j];
        }
        q[i] += acc + r[i] * vi;
#endif
    }
}

/* Householder tridiagonalisation of the lower-stored Hermitian W (n x n): diagonal d,
 * off-diagonal e (real), reflector k in the (unused) upper part of row k from column k + 1. */
static void le_tridiag(le_t *W, int64_t n, double *d, double *e, le_t *tau, le_t *p, int nti) {
    le_t *pc = p + n;
    for (int64_t k = 0; k + 1 < n; k++) {
        const int64_t m = n - k - 1;
        le_t *v = W + k * n + k + 1, t;
        for (int64_t i = 0; i < m; i++) v[i] = W[(k + 1 + i) * n + k];
        d[k] = le_re(W[k * n + k]);
        e[k] = le_larfg(v[0], m - 1, v + 1, &t);
        v[0] = le_mk(1.0, 0.0);
        tau[k] = t;
        if (le_abs1(t) == 0) continue;
        le_t *B = W + (k + 1) * n + k + 1;
        int64_t cut[LE_NCH + 1];
        for (int c = 0; c <= LE_NCH; c++)   /* equal areas; one chunk when small */
            cut[c] = m < 64 ? (c ? m : 0) : (int64_t)(m * sqrt((double)c / LE_NCH));
        cut[LE_NCH] = m;
        const int nt = nti > 1 && m >= 96 ? nti : 1;
        LE_PFOR(nt, c, 0, LE_NCH, le_symv_rows(B, n, v, cut[c], cut[c + 1], pc + c * n));
        for (int64_t i = 0; i < m; i++) {
            le_t acc = LE_ZERO;
            for (int c = 0; c < LE_NCH; c++)
                if (i < cut[c + 1]) acc = le_add(acc, pc[c * n + i]);
            p[i] = le_mul(t, acc);
        }
        le_t al = le_rmul(-0.5, le_mul(t, le_dotc(m, p, v)));
        for (int64_t i = 0; i < m; i++) p[i] = le_add(p[i], le_mul(al, v[i]));
        LE_PFOR(nt, c, 0, LE_NCH,   /* B -= v w^H + w v^H, lower triangle */
                for (int64_t i = cut[c]; i < cut[c + 1]; i++) {
                    le_axpyc(i + 1, le_rmul(-1.0, v[i]), p, B + i * n);
                    le_axpyc(i + 1, le_rmul(-1.0, p[i]), v, B + i * n);
                });
    }
    if (n) d[n - 1] = le_re(W[(n - 1) * n + n - 1]);
    if (n) e[n - 1] = 0.0;
}

/* One Hermitian matrix: a (lower triangle read), w its eigenvalues ascending, the vectors
 * into a when vec. work: see le_eigh_ws. */
static int le_eigh1(le_t *a, int64_t lda, int64_t n, double *w, int vec, void *work, int nti) {
    /* zt's rows padded off multiples of 4 KiB: its rotations walk down columns */
    const int64_t ldz = n >= 64 && n % 32 == 0 ? n + 8 : n;
    le_t *W = (le_t *)work, *tau = W + n * n, *p = tau + n, *vt = p + (LE_NCH + 1) * n;
    double *e = (double *)(vt + (vec && LE_CPLX ? n * n : 0)), *cs = e + n;
    double *zt = vec ? cs + 2 * n : NULL;
    double amax = 0;
    int finite = 1;   /* (le_fmax passes NaN over: amax alone does not tell) */
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < i; j++) {
            le_t x = a[i * lda + j];
            W[i * n + j] = x;
            const double ax = le_abs1(x);
            finite &= ax <= DBL_MAX;
            amax = le_fmax(amax, ax);
        }
        W[i * n + i] = le_mk(le_re(a[i * lda + i]), 0.0);
        const double ad = fabs(le_re(a[i * lda + i]));
        finite &= ad <= DBL_MAX;
        amax = le_fmax(amax, ad);
    }
    if (!finite) {   /* NaN eigenvalues and vectors, info 0 (as on CUDA) */
        for (int64_t i = 0; i < n; i++) {
            w[i] = NAN;
            for (int64_t j = 0; vec && j < n; j++) a[i * lda + j] = le_mk(NAN, LE_CPLX ? NAN : 0.0);
        }
        return 0;
    }
    const double sc = le_range_scale(amax);
    if (sc != 1.0)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j <= i; j++) W[i * n + j] = le_rmul(sc, W[i * n + j]);
    le_tridiag(W, n, w, e, tau, p, nti);
    if (zt) {
        memset(zt, 0, sizeof(double) * (size_t)(n * ldz));
        for (int64_t i = 0; i < n; i++) zt[i * ldz + i] = 1.0;
    }
    int info = le_tql(n, w, e, zt, ldz, cs, nti);
    for (int64_t i = 0; i < n; i++) {   /* ascending, vectors along */
        int64_t k = i;
        for (int64_t j = i + 1; j < n; j++)
            if (w[j] < w[k]) k = j;
        if (k == i) continue;
        double t = w[i]; w[i] = w[k]; w[k] = t;
        if (zt)
            for (int64_t j = 0; j < n; j++) {
                t = zt[i * ldz + j]; zt[i * ldz + j] = zt[k * ldz + j]; zt[k * ldz + j] = t;
            }
    }
    if (sc != 1.0)
        for (int64_t i = 0; i < n; i++) w[i] /= sc;
    if (!vec) return info;
#if LE_CPLX
    const int64_t ldv = n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) vt[i * n + j] = le_mk(zt[i * ldz + j], 0.0);
#else
    const int64_t ldv = ldz;
    vt = zt;
#endif
    /* V = H_0 ... H_{n-2} Z, four rows of vt (vectors) at a time */
    const int nt = nti > 1 && n >= 96 ? nti : 1;
    LE_PFOR(nt, r, 0, (n + 3) / 4, le_backtrans(W, tau, n, n - 1, 1, vt, ldv, 4 * r));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) a[i * lda + j] = vt[j * ldv + i];
    return info;
}

static size_t le_eigh_ws(int64_t n, int vec) {
    return sizeof(le_t) * (size_t)(n * n + (LE_NCH + 2) * n + (vec && LE_CPLX ? n * n : 0)) +
           sizeof(double) * (size_t)(3 * n + (vec ? n * (n + 8) : 0)) + 64;
}

/* Batch driver: threads over the batch, or inside the matrix when there is one. A single
 * thread runs outside any parallel region: libgomp keeps its thread pool only for top-level
 * regions, so the inner ones (LE_PFOR) nested in even a one-thread region would create their
 * threads afresh each time. */
#define LE_BATCH(B, cost, ws_bytes, body)                                                \
    do {                                                                                 \
        const int nt_ = (B) > 1 && nthreads > 1 && (double)(B) * (cost) > 2e4            \
                            ? (int)((B) < nthreads ? (B) : nthreads) : 1;                \
        const int nti = (B) == 1 ? nthreads : 1;                                         \
        int bad_ = 0;                                                                    \
        (void)nti;                                                                       \
        if (nt_ == 1) {                                                                  \
            void *work = malloc(ws_bytes);                                               \
            if (!work) return -1;                                                        \
            for (int64_t b = 0; b < (B); b++) { body; }                                  \
            free(work);                                                                  \
            break;                                                                       \
        }                                                                                \
        _Pragma("omp parallel num_threads(nt_) reduction(|:bad_)")                       \
        {                                                                                \
            void *work = malloc(ws_bytes);                                               \
            _Pragma("omp for schedule(static)")                                          \
            for (int64_t b = 0; b < (B); b++) {                                          \
                if (!work) { bad_ = 1; continue; }                                       \
                body;                                                                    \
            }                                                                            \
            free(work);                                                                  \
        }                                                                                \
        if (bad_) return -1;                                                             \
    } while (0)

int LE_EIGH(intptr_t ap, int64_t B, int64_t n, int64_t bs, int64_t lda, intptr_t wp, int vec,
            intptr_t infop, int nthreads) {
    le_t *a = (le_t *)ap;
    double *w = (double *)wp;
    int64_t *info = (int64_t *)infop;
    LE_BATCH(B, (double)n * n * n, le_eigh_ws(n, vec),
             info[b] = le_eigh1(a + b * bs, lda, n, w + b * n, vec, work, nti));
    return 0;
}

/* ------------------------------------------------------------------ svd */
#include "linalg_eig_svd.h"

/* ------------------------------------------------------------------ eig (complex) */
#if LE_CPLX
#include "linalg_eig_gen.h"
#endif
