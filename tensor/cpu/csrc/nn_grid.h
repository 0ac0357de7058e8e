/* 2-D grid_sample's bilinear / nearest sampling for nn/_grid_fused.py: the interpolation of
 * input (N, C, H, W) at pixel coordinates ix, iy (N, P) (already unnormalised and padded by
 * nn/grid.py's tensor ops) and its derivatives, instead of one broadcast gather per tap.
 *
 * Bilinear: taps (y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1) with y0 = floor(iy),
 * weights wy * wx (wx = 1 - tx or tx, tx = ix - x0), summed in that order; a tap outside the
 * image reads 0 (a NaN coordinate reaches no tap, and 0 times its NaN weight gives NaN, as
 * PyTorch in zeros padding). Nearest: the one tap at (rint(iy), rint(ix)) (ties to even), weight
 * 1, a zero derivative in the coordinates. The arithmetic rounds as nn/grid.py's per-op path
 * (fp-contract off). The CUDA twin is cuda_src/nn_grid.cuh.
 *
 * gs2d_fwd: out (N, C, P). gs2d_bwd_input: ginp (N, C, H, W) = the gradient of the input
 * (overwritten), one (n, c) plane per iteration. gs2d_bwd_coords: gix, giy (N, P) = the
 * gradients of the coordinates (zero for nearest). */
#include "common.h"

#pragma GCC optimize("fp-contract=off")

/* the taps of the point (ix, iy): offsets into a plane (-1: outside) and weights */
#define SX_GS_TAPS(S, ix, iy, H, W, nearest, off, w, dwx, dwy, ntaps)                        \
    int ntaps;                                                                               \
    int64_t off[4];                                                                          \
    T_##S w[4], dwx[4], dwy[4];                                                              \
    if (nearest) {                                                                           \
        T_##S x = nearbyint(ix), y = nearbyint(iy);                                          \
        ntaps = 1;                                                                           \
        off[0] = (x >= 0 && x <= W - 1 && y >= 0 && y <= H - 1)                              \
                     ? (int64_t)y * W + (int64_t)x : -1;                                     \
        w[0] = 1; dwx[0] = 0; dwy[0] = 0;                                                    \
    } else {                                                                                 \
        T_##S x0 = floor(ix), y0 = floor(iy);                                                \
        T_##S tx = ix - x0, ty = iy - y0, one = 1;                                           \
        T_##S wxs[2] = {one - tx, tx}, wys[2] = {one - ty, ty};                              \
        ntaps = 4;                                                                           \
        for (int k = 0; k < 4; k++) {                                                        \
            int a = k >> 1, b = k & 1;                                                       \
            T_##S x = x0 + b, y = y0 + a;                                                    \
            off[k] = (x >= 0 && x <= W - 1 && y >= 0 && y <= H - 1)                          \
                         ? (int64_t)y * W + (int64_t)x : -1;                                 \
            w[k] = wys[a] * wxs[b];                                                          \
            dwx[k] = b ? wys[a] : -wys[a];                                                   \
            dwy[k] = a ? wxs[b] : -wxs[b];                                                   \
        }                                                                                    \
    }

/* Each batch entry n is one task (no two write one plane). The forward and the input gradient
 * take the points in blocks of SX_GS_BLOCK: the block's taps once, then each channel over the
 * block (contiguous in the output); the coordinates' gradient sums the channels per point. */
#define SX_GS_BLOCK 64

#define SX_GS2D(S)                                                                            \
static void gs2d_block_##S(const T_##S *gx, const T_##S *gy, int64_t H, int64_t W,            \
                           int nearest, int64_t p0, int64_t pe, int64_t *offs, T_##S *ws) {   \
    for (int64_t p = p0; p < pe; p++) {                                                       \
        SX_GS_TAPS(S, gx[p], gy[p], H, W, nearest, off, w, dwx, dwy, nk)                      \
        (void)dwx; (void)dwy;                                                                 \
        for (int k = 0; k < nk; k++) {                                                        \
            offs[4 * (p - p0) + k] = off[k]; ws[4 * (p - p0) + k] = w[k];                     \
        }                                                                                     \
    }                                                                                         \
}                                                                                             \
void gs2d_fwd_##S(intptr_t pin, intptr_t pix, intptr_t piy, intptr_t pout, int64_t N,        \
                  int64_t C, int64_t H, int64_t W, int64_t P, int nearest, int nthreads) {    \
    const T_##S *in = (const T_##S *)pin, *gx = (const T_##S *)pix, *gy = (const T_##S *)piy; \
    T_##S *out = (T_##S *)pout;                                                               \
    const int64_t HW = H * W;                                                                 \
    const int nk = nearest ? 1 : 4;                                                           \
    int nt = (N > 1 && N * C * P >= SX_PAR_MIN / 8 && nthreads > 1) ? nthreads : 1;           \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                  \
    for (int64_t n = 0; n < N; n++) {                                                         \
        const T_##S *inn = in + n * C * HW;                                                   \
        T_##S *on = out + n * C * P;                                                          \
        for (int64_t p0 = 0; p0 < P; p0 += SX_GS_BLOCK) {                                     \
            const int64_t pe = p0 + SX_GS_BLOCK < P ? p0 + SX_GS_BLOCK : P;                   \
            int64_t offs[4 * SX_GS_BLOCK]; T_##S ws[4 * SX_GS_BLOCK];                          \
            gs2d_block_##S(gx + n * P, gy + n * P, H, W, nearest, p0, pe, offs, ws);          \
            for (int64_t c = 0; c < C; c++) {                                                 \
                const T_##S *plane = inn + c * HW;                                            \
                T_##S *oc = on + c * P;                                                       \
                for (int64_t p = p0; p < pe; p++) {                                           \
                    const int64_t *off = offs + 4 * (p - p0);                                 \
                    const T_##S *w = ws + 4 * (p - p0);                                       \
                    T_##S acc = 0;                                                            \
                    for (int k = 0; k < nk; k++) {                                            \
                        T_##S v = off[k] >= 0 ? plane[off[k]] : 0;                            \
                        T_##S part = v * w[k];                                                \
                        acc = k ? acc + part : part;                                          \
                    }                                                                         \
                    oc[p] = acc;                                                              \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
}                                                                                             \
void gs2d_bwd_input_##S(intptr_t pix, intptr_t piy, intptr_t pg, intptr_t pginp, int64_t N,  \
                        int64_t C, int64_t H, int64_t W, int64_t P, int nearest,             \
                        int nthreads) {                                                       \
    const T_##S *gx = (const T_##S *)pix, *gy = (const T_##S *)piy, *g = (const T_##S *)pg;   \
    T_##S *ginp = (T_##S *)pginp;                                                             \
    const int64_t HW = H * W;                                                                 \
    const int nk = nearest ? 1 : 4;                                                           \
    int nt = (N > 1 && N * C * P >= SX_PAR_MIN / 8 && nthreads > 1) ? nthreads : 1;           \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                  \
    for (int64_t n = 0; n < N; n++) {                                                         \
        T_##S *gn = ginp + n * C * HW;                                                        \
        const T_##S *gon = g + n * C * P;                                                     \
        for (int64_t q = 0; q < C * HW; q++) gn[q] = 0;                                       \
        for (int64_t p0 = 0; p0 < P; p0 += SX_GS_BLOCK) {                                     \
            const int64_t pe = p0 + SX_GS_BLOCK < P ? p0 + SX_GS_BLOCK : P;                   \
            int64_t offs[4 * SX_GS_BLOCK]; T_##S ws[4 * SX_GS_BLOCK];                          \
            gs2d_block_##S(gx + n * P, gy + n * P, H, W, nearest, p0, pe, offs, ws);          \
            for (int64_t c = 0; c < C; c++) {                                                 \
                T_##S *plane = gn + c * HW;                                                   \
                const T_##S *gc = gon + c * P;                                                \
                for (int64_t p = p0; p < pe; p++) {                                           \
                    const int64_t *off = offs + 4 * (p - p0);                                 \
                    const T_##S *w = ws + 4 * (p - p0);                                       \
                    const T_##S gv = gc[p];                                                   \
                    for (int k = 0; k < nk; k++)                                              \
                        if (off[k] >= 0) plane[off[k]] += gv * w[k];                          \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
}                                                                                             \
void gs2d_bwd_coords_##S(intptr_t pin, intptr_t pix, intptr_t piy, intptr_t pg, intptr_t pgix, \
                         intptr_t pgiy, int64_t N, int64_t C, int64_t H, int64_t W,          \
                         int64_t P, int nearest, int nthreads) {                              \
    const T_##S *in = (const T_##S *)pin, *gx = (const T_##S *)pix, *gy = (const T_##S *)piy; \
    const T_##S *g = (const T_##S *)pg;                                                       \
    T_##S *gix = (T_##S *)pgix, *giy = (T_##S *)pgiy;                                         \
    const int64_t HW = H * W;                                                                 \
    int nt = (N > 1 && N * C * P >= SX_PAR_MIN / 8 && nthreads > 1) ? nthreads : 1;           \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                  \
    for (int64_t n = 0; n < N; n++) {                                                         \
        const T_##S *inn = in + n * C * HW, *gon = g + n * C * P;                             \
        for (int64_t p = 0; p < P; p++) {                                                     \
            double sx = 0, sy = 0;                                                            \
            if (!nearest) {                                                                   \
                SX_GS_TAPS(S, gx[n * P + p], gy[n * P + p], H, W, 0, off, w, dwx, dwy, nk)    \
                (void)w;                                                                      \
                for (int64_t c = 0; c < C; c++) {                                             \
                    const T_##S *plane = inn + c * HW;                                        \
                    double vx = 0, vy = 0;                                                    \
                    for (int k = 0; k < nk; k++) {                                            \
                        double v = off[k] >= 0 ? (double)plane[off[k]] : 0.0;                 \
                        vx += v * (double)dwx[k];                                             \
                        vy += v * (double)dwy[k];                                             \
                    }                                                                         \
                    const double gv = (double)gon[c * P + p];                                 \
                    sx += gv * vx;                                                            \
                    sy += gv * vy;                                                            \
                }                                                                             \
            }                                                                                 \
            gix[n * P + p] = (T_##S)sx; giy[n * P + p] = (T_##S)sy;                           \
        }                                                                                     \
    }                                                                                         \
}
