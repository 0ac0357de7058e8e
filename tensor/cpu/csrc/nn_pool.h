/* Max pooling over (planes, H, W) contiguous input, no padding or dilation: one pass per
 * window writing the max and its flat H*W position (the later element wins when it is larger
 * or NaN, as PyTorch's kernel). Planes run in parallel; results do not depend on threads. */
#include "common.h"

#define SX_MAXPOOL2D(S)                                                                        \
void maxpool2d_##S(intptr_t x, intptr_t y, intptr_t idx, int64_t planes, int64_t H, int64_t W, \
                   int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t OH, int64_t OW,   \
                   int nthreads) {                                                           \
    const T_##S *X = (const T_##S *)x; T_##S *Y = (T_##S *)y; int64_t *I = (int64_t *)idx;   \
    int nt = (planes * OH * OW * kh * kw >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;      \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                 \
    for (int64_t p = 0; p < planes; p++) {                                                    \
        const T_##S *xp = X + p * H * W;                                                      \
        for (int64_t oh = 0; oh < OH; oh++)                                                   \
            for (int64_t ow = 0; ow < OW; ow++) {                                             \
                int64_t h0 = oh * sh, w0 = ow * sw, bi = h0 * W + w0;                         \
                C_##S best = LD_##S(xp[bi]);                                                  \
                for (int64_t i = 0; i < kh; i++)                                              \
                    for (int64_t j = 0; j < kw; j++) {                                        \
                        int64_t q = (h0 + i) * W + w0 + j;                                    \
                        C_##S v = LD_##S(xp[q]);                                              \
                        if (v > best || v != v) { best = v; bi = q; }                        \
                    }                                                                         \
                Y[(p * OH + oh) * OW + ow] = ST_##S(best);                                    \
                I[(p * OH + oh) * OW + ow] = bi;                                              \
            }                                                                                 \
    }                                                                                         \
}

/* im2col of a contiguous (N, C, H, W) canvas into (C, KH, KW, N, OH, OW): every output row
 * (fixed c, i, j, n, oh) reads OW elements spaced by SW; rows run in parallel. */
#define SX_IM2COL(S)                                                                           \
void im2col_##S(intptr_t x, intptr_t out, int64_t N, int64_t C, int64_t H, int64_t W,         \
                int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW,       \
                int64_t OH, int64_t OW, int nthreads) {                                       \
    const T_##S *X = (const T_##S *)x; T_##S *O = (T_##S *)out;                               \
    int64_t rows = C * KH * KW * N * OH;                                                      \
    int nt = (rows * OW >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                        \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                 \
    for (int64_t r = 0; r < rows; r++) {                                                      \
        int64_t oh = r % OH, t = r / OH, n = t % N; t /= N;                                   \
        int64_t j = t % KW; t /= KW;                                                          \
        int64_t i = t % KH, c = t / KH;                                                       \
        const T_##S *src = X + ((n * C + c) * H + oh * SH + i * DH) * W + j * DW;             \
        T_##S *dst = O + r * OW;                                                              \
        if (SW == 1) { for (int64_t q = 0; q < OW; q++) dst[q] = src[q]; }                    \
        else { for (int64_t q = 0; q < OW; q++) dst[q] = src[q * SW]; }                       \
    }                                                                                         \
}
