/* Complex FFTs of contiguous rows (tensor/fft.py): y[b, k] = scale * sum_j x[b, j] w^(jk),
 * w = exp(-+2 pi i / n), for `batch` rows of length n, in double precision whatever the
 * storage (complex64 rows are widened on load and rounded once on store).
 *
 * Lengths whose prime factors are all at most FX_MAXP: a Stockham autosort FFT (no bit
 * reversal: each pass reads one buffer and writes the other in order), passes of radix 4 and
 * 2 written out, 3, 5, 7... as small DFTs; twiddles from one table of the n roots of unity,
 * each computed directly by sin/cos (no accumulated rotation error). Other lengths: Bluestein's
 * chirp-z, a convolution of length M (a power of two >= 2n - 1) done by the same power-of-two
 * FFT; the chirp's phase k^2 is reduced mod 2n in integers first. Rows are spread over the
 * threads; each has its own buffers. */
#include "common.h"

#define FX_MAXP 16   /* the largest radix run as a small DFT; above: Bluestein */
#define FX_TWO_PI 6.28318530717958647692

typedef struct { double re, im; } fx_c;

static inline fx_c fx_mul(fx_c a, fx_c b) {
    fx_c r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

/* A transform of one length: its radices (0 when Bluestein) and roots of unity. */
typedef struct {
    int64_t n, nf, f[64];
    fx_c *root;          /* root[t] = exp(sign 2 pi i t / n) */
    /* Bluestein */
    int64_t m;           /* its power-of-two length, 0 if none */
    fx_c *chirp, *bhat;  /* chirp[k] = exp(sign pi i k^2 / n); bhat: FFT_m of the conjugate chirp */
    void *inner;         /* the plan of length m */
} fx_plan;

static int fx_factor(int64_t n, int64_t *f) {
    int k = 0;
    while (n % 4 == 0) { f[k++] = 4; n /= 4; }
    while (n % 2 == 0) { f[k++] = 2; n /= 2; }
    for (int64_t p = 3; p * p <= n; p += 2)
        while (n % p == 0) { f[k++] = p; n /= p; }
    if (n > 1) f[k++] = n;
    return k;
}

static fx_c *fx_roots(int64_t n, int sign) {
    fx_c *r = (fx_c *)malloc(sizeof(fx_c) * (size_t)(n > 0 ? n : 1));
    if (!r) return NULL;
    for (int64_t t = 0; t < n; t++) {
        double a = FX_TWO_PI * (double)t / (double)n;
        r[t].re = cos(a);
        r[t].im = sign * sin(a);
    }
    return r;
}

static void fx_free(fx_plan *p) {
    if (!p) return;
    free(p->root); free(p->chirp); free(p->bhat);
    fx_free((fx_plan *)p->inner);
    free(p->inner);
}

static int fx_stockham(const fx_plan *p, fx_c *a, fx_c *b);

/* Plan a transform of length n; sign -1 forward, +1 inverse. 0 on success. */
static int fx_make(fx_plan *p, int64_t n, int sign) {
    memset(p, 0, sizeof *p);
    p->n = n;
    p->nf = fx_factor(n, p->f);
    int smooth = 1;
    for (int i = 0; i < p->nf; i++) smooth &= p->f[i] <= FX_MAXP;
    if (smooth) {
        p->root = fx_roots(n, sign);
        return p->root ? 0 : -1;
    }
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    p->m = m;
    p->nf = 0;
    p->inner = calloc(1, sizeof(fx_plan));   /* zeroed: fx_free is safe if a later malloc fails */
    p->chirp = (fx_c *)malloc(sizeof(fx_c) * (size_t)n);
    p->bhat = (fx_c *)calloc((size_t)m, sizeof(fx_c));
    fx_c *work = (fx_c *)malloc(sizeof(fx_c) * (size_t)m);
    if (!p->inner || !p->chirp || !p->bhat || !work || fx_make((fx_plan *)p->inner, m, -1)) {
        free(work);
        return -1;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t q = (int64_t)(((__int128)k * k) % (2 * n));   /* k^2 mod 2n: exact phase */
        double a = 0.5 * FX_TWO_PI * (double)q / (double)n;
        p->chirp[k].re = cos(a);
        p->chirp[k].im = sign * sin(a);
    }
    for (int64_t k = 0; k < n; k++) {   /* b[k] = b[m - k] = conj(chirp[k]) */
        fx_c c = {p->chirp[k].re, -p->chirp[k].im};
        p->bhat[k] = c;
        if (k) p->bhat[m - k] = c;
    }
    fx_c *out = fx_stockham((fx_plan *)p->inner, p->bhat, work) ? work : p->bhat;
    if (out != p->bhat) memcpy(p->bhat, out, sizeof(fx_c) * (size_t)m);
    free(work);
    return 0;
}

/* One smooth transform of a (length n) using b as the other buffer; returns 1 when the
 * result is in b, 0 when in a. Decimation in frequency, Stockham order: a pass of radix r over
 * the current length N (stride s between its elements, s * N = n) takes the r points
 * x[q + s (p + t m)] (m = N / r), transforms them, and writes point o times the twiddle
 * w_N^(p o) to y[q + s (r p + o)]; the next pass works on length m with stride s * r. */
static int fx_stockham(const fx_plan *p, fx_c *a, fx_c *b) {
    const int64_t n = p->n;
    const fx_c *rt = p->root;   /* w_N^e = rt[e * (n / N)] */
    int64_t N = n, s = 1;
    fx_c *x = a, *y = b;
    for (int f = 0; f < p->nf; f++) {
        const int64_t r = p->f[f], m = N / r, sm = s * m, tw = n / N;
        if (r == 2) {
            for (int64_t pp = 0; pp < m; pp++) {
                const fx_c w = rt[pp * tw];
                const fx_c *x0 = x + s * pp, *x1 = x0 + sm;
                fx_c *y0 = y + s * 2 * pp, *y1 = y0 + s;
                for (int64_t q = 0; q < s; q++) {
                    fx_c d = {x0[q].re - x1[q].re, x0[q].im - x1[q].im};
                    y0[q].re = x0[q].re + x1[q].re; y0[q].im = x0[q].im + x1[q].im;
                    y1[q] = fx_mul(d, w);
                }
            }
        } else if (r == 4) {
            const fx_c Q = rt[n / 4];   /* the quarter turn: -i forward, +i inverse */
            for (int64_t pp = 0; pp < m; pp++) {
                const fx_c w1 = rt[pp * tw], w2 = rt[2 * pp * tw], w3 = rt[3 * pp * tw];
                const fx_c *x0 = x + s * pp;
                fx_c *y0 = y + s * 4 * pp;
                for (int64_t q = 0; q < s; q++) {
                    fx_c c0 = x0[q], c1 = x0[q + sm], c2 = x0[q + 2 * sm], c3 = x0[q + 3 * sm];
                    fx_c s02 = {c0.re + c2.re, c0.im + c2.im}, d02 = {c0.re - c2.re, c0.im - c2.im};
                    fx_c s13 = {c1.re + c3.re, c1.im + c3.im}, d13 = {c1.re - c3.re, c1.im - c3.im};
                    fx_c t = fx_mul(d13, Q);
                    fx_c z1 = {d02.re + t.re, d02.im + t.im}, z2 = {s02.re - s13.re, s02.im - s13.im};
                    fx_c z3 = {d02.re - t.re, d02.im - t.im};
                    y0[q].re = s02.re + s13.re; y0[q].im = s02.im + s13.im;
                    y0[q + s] = fx_mul(z1, w1);
                    y0[q + 2 * s] = fx_mul(z2, w2);
                    y0[q + 3 * s] = fx_mul(z3, w3);
                }
            }
        } else {   /* a small DFT of r points */
            fx_c c[FX_MAXP];
            const int64_t step = n / r;   /* rt[step * t] = exp(sign 2 pi i t / r) */
            for (int64_t pp = 0; pp < m; pp++)
                for (int64_t q = 0; q < s; q++) {
                    for (int64_t t = 0; t < r; t++) c[t] = x[q + s * (pp + t * m)];
                    for (int64_t o = 0; o < r; o++) {
                        fx_c acc = c[0];
                        for (int64_t t = 1; t < r; t++) {
                            fx_c z = fx_mul(c[t], rt[((t * o) % r) * step]);
                            acc.re += z.re; acc.im += z.im;
                        }
                        y[q + s * (r * pp + o)] = o ? fx_mul(acc, rt[pp * o * tw]) : acc;
                    }
                }
        }
        fx_c *t = x; x = y; y = t;
        N = m;
        s *= r;
    }
    return x == b;
}

/* The transform of row a (length n) in place; work: 2 * max(n, m) + m scratch entries. */
static void fx_row(const fx_plan *p, fx_c *a, fx_c *work) {
    if (!p->m) {
        if (fx_stockham(p, a, work)) memcpy(a, work, sizeof(fx_c) * (size_t)p->n);
        return;
    }
    const int64_t n = p->n, m = p->m;
    fx_c *u = work, *v = work + m;
    for (int64_t k = 0; k < n; k++) u[k] = fx_mul(a[k], p->chirp[k]);
    for (int64_t k = n; k < m; k++) u[k].re = u[k].im = 0.0;
    fx_c *r = fx_stockham((const fx_plan *)p->inner, u, v) ? v : u;
    for (int64_t k = 0; k < m; k++) {   /* times bhat, conjugated: the inverse by the forward */
        fx_c z = fx_mul(r[k], p->bhat[k]);
        r[k].re = z.re; r[k].im = -z.im;
    }
    fx_c *o = r == u ? v : u;
    fx_c *s = fx_stockham((const fx_plan *)p->inner, r, o) ? o : r;
    const double inv = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        fx_c z = {s[k].re * inv, -s[k].im * inv};   /* conjugate back */
        a[k] = fx_mul(z, p->chirp[k]);
    }
}

#define SX_FFT(S, R)                                                                     \
int fft_c2c_##S(intptr_t xp, intptr_t yp, int64_t batch, int64_t n, int inverse,         \
                double scale, int nthreads) {                                            \
    const R *x = (const R *)xp;                                                          \
    R *y = (R *)yp;                                                                      \
    fx_plan p;                                                                           \
    if (fx_make(&p, n, inverse ? 1 : -1)) { fx_free(&p); return -1; }                    \
    const int64_t len = p.m ? 3 * p.m : 2 * n;                                           \
    int nt = (batch > 1 && batch * n >= 4096 && nthreads > 1) ? nthreads : 1;            \
    int bad = 0;                                                                         \
    _Pragma("omp parallel num_threads(nt) if (nt > 1) reduction(|:bad)")                 \
    {                                                                                    \
        fx_c *buf = (fx_c *)malloc(sizeof(fx_c) * (size_t)(len + n));                    \
        bad |= buf == NULL;   /* every thread still meets the omp for (OpenMP's rule) */ \
        _Pragma("omp for schedule(static)")                                              \
        for (int64_t b = 0; b < batch; b++) {                                            \
            if (!buf) continue;                                                          \
            const R *xr = x + 2 * b * n;                                                 \
            R *yr = y + 2 * b * n;                                                       \
            for (int64_t k = 0; k < n; k++) {                                            \
                buf[k].re = (double)xr[2 * k]; buf[k].im = (double)xr[2 * k + 1];        \
            }                                                                            \
            fx_row(&p, buf, buf + n);                                                    \
            for (int64_t k = 0; k < n; k++) {                                            \
                yr[2 * k] = (R)(buf[k].re * scale);                                      \
                yr[2 * k + 1] = (R)(buf[k].im * scale);                                  \
            }                                                                            \
        }                                                                                \
        free(buf);                                                                       \
    }                                                                                    \
    fx_free(&p);                                                                         \
    return bad ? -1 : 0;                                                                 \
}
