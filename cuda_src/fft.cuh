/* Complex FFTs of contiguous rows on CUDA (the CPU's: tensor/cpu/csrc/fft.h, the same
 * algorithms): one block per row at a time (grid-stride over the rows), in double precision,
 * the row in a per-block work area of global memory (two buffers: the Stockham passes read
 * one and write the other, a barrier between passes). Smooth lengths: decimation-in-frequency
 * Stockham passes of radix 4, 2 and small DFTs (up to SF_MAXP points); other lengths:
 * Bluestein's chirp-z through a power-of-two transform of length m. The host (tensor/cuda/fft.py)
 * hands the plans: radices, roots of unity, chirp and the chirp filter's transform. */
#ifndef STRIDEX_FFT_CUH
#define STRIDEX_FFT_CUH
#include "common.cuh"

#define SF_BLOCK 256
#define SF_MAXP 16

struct sf_c { double re, im; };

SX_DEV sf_c sf_mul(sf_c a, sf_c b) {
    sf_c r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}
SX_DEV sf_c sf_add(sf_c a, sf_c b) { sf_c r = {a.re + b.re, a.im + b.im}; return r; }
SX_DEV sf_c sf_sub(sf_c a, sf_c b) { sf_c r = {a.re - b.re, a.im - b.im}; return r; }

/* One smooth transform of x (length n, radices f[0..nf), roots rt[t] = exp(+-2 pi i t / n))
 * with y as the other buffer, by the block's threads; returns the buffer holding the result. */
SX_DEV sf_c *sf_stockham(sf_c *x, sf_c *y, int64_t n, const int64_t *f, int nf, const sf_c *rt) {
    int64_t N = n, s = 1;
    for (int k = 0; k < nf; k++) {
        const int64_t r = f[k], m = N / r, sm = s * m, tw = n / N;
        for (int64_t i = threadIdx.x; i < m * s; i += blockDim.x) {
            const int64_t p = i / s, q = i % s;
            const sf_c *x0 = x + q + s * p;
            sf_c *y0 = y + q + s * r * p;
            if (r == 2) {
                sf_c a = x0[0], b = x0[sm];
                y0[0] = sf_add(a, b);
                y0[s] = sf_mul(sf_sub(a, b), rt[p * tw]);
            } else if (r == 4) {
                const sf_c Q = rt[n / 4];
                sf_c c0 = x0[0], c1 = x0[sm], c2 = x0[2 * sm], c3 = x0[3 * sm];
                sf_c s02 = sf_add(c0, c2), d02 = sf_sub(c0, c2), s13 = sf_add(c1, c3),
                     t = sf_mul(sf_sub(c1, c3), Q);
                y0[0] = sf_add(s02, s13);
                y0[s] = sf_mul(sf_add(d02, t), rt[p * tw]);
                y0[2 * s] = sf_mul(sf_sub(s02, s13), rt[2 * p * tw]);
                y0[3 * s] = sf_mul(sf_sub(d02, t), rt[3 * p * tw]);
            } else {
                sf_c c[SF_MAXP];
                const int64_t step = n / r;
                for (int64_t t = 0; t < r; t++) c[t] = x0[t * sm];
                for (int64_t o = 0; o < r; o++) {
                    sf_c acc = c[0];
                    for (int64_t t = 1; t < r; t++) acc = sf_add(acc, sf_mul(c[t], rt[((t * o) % r) * step]));
                    y0[o * s] = o ? sf_mul(acc, rt[p * o * tw]) : acc;
                }
            }
        }
        __syncthreads();
        sf_c *t = x; x = y; y = t;
        N = m;
        s *= r;
    }
    return x;
}

/* The four-step transform of long rows (n = n1 n2; tensor/cuda/fft.py runs it: rows of n1 and
 * of n2 by sf_c2c, between these transposes). y[b][c][r] = x[b][r][c] for a batch of R x C
 * matrices, by 32 x 32 tiles through shared memory; with wlo, times the twiddle W^(r c)
 * (W = exp(-+2 pi i / (R C)), r c < R C) from two tables: W^t = whi[t / S] wlo[t % S], in double. */
template <class S>
SX_DEV void sf_transpose(const typename S::T *x, typename S::T *y, int64_t batch, int64_t R,
                         int64_t C, const sf_c *wlo, const sf_c *whi, int64_t Sq) {
    typedef typename S::T T;
    __shared__ T tile[32][33];
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32, ny = blockDim.x / 32;
    const int64_t tr = (R + 31) / 32, tc = (C + 31) / 32, per = tr * tc;
    for (int64_t t = blockIdx.x; t < batch * per; t += gridDim.x) {
        const int64_t b = t / per, r0 = (t % per) / tc * 32, c0 = (t % per) % tc * 32;
        const T *xb = x + b * R * C;
        T *yb = y + b * R * C;
        for (int i = ty; i < 32; i += ny) {
            const int64_t r = r0 + i, c = c0 + tx;
            if (r < R && c < C) {
                T v = xb[r * C + c];
                if (wlo) {
                    const int64_t e = r * c;
                    const sf_c w = sf_mul(whi[e / Sq], wlo[e % Sq]);
                    const sf_c u = {(double)v.re, (double)v.im}, z = sf_mul(u, w);
                    v.re = (decltype(v.re))z.re;
                    v.im = (decltype(v.im))z.im;
                }
                tile[i][tx] = v;
            }
        }
        __syncthreads();
        for (int i = ty; i < 32; i += ny) {
            const int64_t c = c0 + i, r = r0 + tx;
            if (r < R && c < C) yb[c * R + r] = tile[tx][i];
        }
        __syncthreads();
    }
}

/* Bluestein's steps around two long power-of-two transforms (tensor/cuda/fft.py, rows whose
 * m would leave the GPU idle in sf_c2c's one block a row), on a (batch rows of m, double):
 * mode 0: a = x chirp, zero-padded; 1: a = conj(a bhat) (tab: bhat); 2: y = scale conj(a) / m
 * chirp, the first n of each row. */
template <class S>
SX_DEV void sf_bluestein_step(const typename S::T *x, typename S::T *y, sf_c *a, int64_t batch,
                              int64_t n, int64_t m, const sf_c *tab, double scale, int mode) {
    const int64_t len = mode == 2 ? n : m;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < batch * len;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = i / len, k = i % len;
        if (mode == 0) {
            sf_c v = {0.0, 0.0};
            if (k < n) {
                const sf_c z = {(double)x[b * n + k].re, (double)x[b * n + k].im};
                v = sf_mul(z, tab[k]);
            }
            a[i] = v;
        } else if (mode == 1) {
            sf_c z = sf_mul(a[i], tab[k]);
            z.im = -z.im;
            a[i] = z;
        } else {
            const double inv = 1.0 / (double)m;
            const sf_c r = a[b * m + k], z = {r.re * inv, -r.im * inv}, v = sf_mul(z, tab[k]);
            y[i].re = (decltype(y[i].re))(v.re * scale);
            y[i].im = (decltype(y[i].im))(v.im * scale);
        }
    }
}

/* y[b] = scale * DFT(x[b]) for `batch` rows of n. work: 2 * L entries per block (L = n, or
 * 2 m for Bluestein). Smooth: f, nf, rt. Bluestein (m > 0): chirp (n), bhat (m), and the
 * length-m plan mf, mnf, mrt (forward). */
template <class S>
SX_DEV void sf_c2c(const typename S::T *x, typename S::T *y, sf_c *work, int64_t batch, int64_t n,
                   double scale, const int64_t *f, int nf, const sf_c *rt, int64_t m,
                   const sf_c *chirp, const sf_c *bhat, const int64_t *mf, int mnf,
                   const sf_c *mrt) {
    const int64_t L = m ? 2 * m : 2 * n;
    sf_c *a = work + (int64_t)blockIdx.x * L, *b = a + L / 2;
    for (int64_t row = blockIdx.x; row < batch; row += gridDim.x) {
        const typename S::T *xr = x + row * n;
        typename S::T *yr = y + row * n;
        sf_c *res;
        if (!m) {
            for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
                sf_c v = {(double)xr[k].re, (double)xr[k].im};
                a[k] = v;
            }
            __syncthreads();
            res = sf_stockham(a, b, n, f, nf, rt);
        } else {
            for (int64_t k = threadIdx.x; k < m; k += blockDim.x) {
                sf_c v = {0.0, 0.0};
                if (k < n) {
                    sf_c z = {(double)xr[k].re, (double)xr[k].im};
                    v = sf_mul(z, chirp[k]);
                }
                a[k] = v;
            }
            __syncthreads();
            sf_c *u = sf_stockham(a, b, m, mf, mnf, mrt);
            for (int64_t k = threadIdx.x; k < m; k += blockDim.x) {   /* times bhat, conjugated */
                sf_c z = sf_mul(u[k], bhat[k]);
                z.im = -z.im;
                u[k] = z;
            }
            __syncthreads();
            res = sf_stockham(u, u == a ? b : a, m, mf, mnf, mrt);
            const double inv = 1.0 / (double)m;
            for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
                sf_c z = {res[k].re * inv, -res[k].im * inv};
                res[k] = sf_mul(z, chirp[k]);
            }
            __syncthreads();
        }
        for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
            yr[k].re = (decltype(yr[k].re))(res[k].re * scale);
            yr[k].im = (decltype(yr[k].im))(res[k].im * scale);
        }
        __syncthreads();
    }
}
#endif
