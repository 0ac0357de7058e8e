/* Max pooling over (planes, H, W) contiguous input, no padding or dilation: one pass per
 * window writing the max and its flat H*W position (the later element wins when it is larger
 * or NaN, as PyTorch's kernel). Planes run in parallel; results do not depend on threads. */
#include "common.h"

#define SX_MAXPOOL2D(S)                                                                        \
static inline __attribute__((always_inline)) void                                           \
maxpool2d_plane_##S(const T_##S *xp, T_##S *yp, int64_t *ip, int64_t W, int64_t kh, int64_t kw, \
                    int64_t sh, int64_t sw, int64_t OH, int64_t OW) {                         \
    for (int64_t oh = 0; oh < OH; oh++)                                                       \
        for (int64_t ow = 0; ow < OW; ow++) {                                                 \
            int64_t h0 = oh * sh, w0 = ow * sw, bi = h0 * W + w0;                             \
            C_##S best = LD_##S(xp[bi]);                                                      \
            for (int64_t i = 0; i < kh; i++)                                                  \
                for (int64_t j = 0; j < kw; j++) {                                            \
                    int64_t q = (h0 + i) * W + w0 + j;                                        \
                    C_##S v = LD_##S(xp[q]);                                                  \
                    if (v > best || v != v) { best = v; bi = q; }                            \
                }                                                                             \
            yp[oh * OW + ow] = ST_##S(best);                                                  \
            ip[oh * OW + ow] = bi;                                                            \
        }                                                                                     \
}                                                                                             \
void maxpool2d_##S(intptr_t x, intptr_t y, intptr_t idx, int64_t planes, int64_t H, int64_t W, \
                   int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t OH, int64_t OW,   \
                   int nthreads) {                                                           \
    const T_##S *X = (const T_##S *)x; T_##S *Y = (T_##S *)y; int64_t *I = (int64_t *)idx;   \
    int nt = (planes * OH * OW * kh * kw >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;      \
    /* the common windows with constant sizes: unrolled, ~10x faster than the general loop */ \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                 \
    for (int64_t p = 0; p < planes; p++) {                                                    \
        const T_##S *xp = X + p * H * W;                                                      \
        T_##S *yp = Y + p * OH * OW; int64_t *ip = I + p * OH * OW;                           \
        if (kh == 2 && kw == 2 && sh == 2 && sw == 2)                                         \
            maxpool2d_plane_##S(xp, yp, ip, W, 2, 2, 2, 2, OH, OW);                           \
        else if (kh == 3 && kw == 3)                                                          \
            maxpool2d_plane_##S(xp, yp, ip, W, 3, 3, sh, sw, OH, OW);                         \
        else                                                                                  \
            maxpool2d_plane_##S(xp, yp, ip, W, kh, kw, sh, sw, OH, OW);                       \
    }                                                                                         \
}

/* Max pooling's backward: gx (planes, HW) = zeros, then each output's gradient added at its
 * max's position, outputs in order (a plane at a time: no atomics, the order of scatter_add). */
#define SX_MAXPOOL2D_BWD(S)                                                                    \
void maxpool2d_bwd_##S(intptr_t g, intptr_t idx, intptr_t gx, int64_t planes, int64_t HW,     \
                       int64_t OHW, int nthreads) {                                           \
    const T_##S *G = (const T_##S *)g; const int64_t *I = (const int64_t *)idx;               \
    T_##S *X = (T_##S *)gx;                                                                   \
    int nt = (planes * (HW + OHW) >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;              \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                 \
    for (int64_t p = 0; p < planes; p++) {                                                    \
        T_##S *xp = X + p * HW;                                                               \
        for (int64_t e = 0; e < HW; e++) xp[e] = ST_##S((C_##S)0);                            \
        for (int64_t o = 0; o < OHW; o++) {                                                   \
            int64_t q = I[p * OHW + o];                                                       \
            xp[q] = ST_##S(LD_##S(xp[q]) + LD_##S(G[p * OHW + o]));                           \
        }                                                                                     \
    }                                                                                         \
}

/* im2col of a contiguous (N, C, H, W) input into (C, KH, KW, N, OH, OW), the input seen
 * padded by (PT, PL) before and `value` everywhere outside it: out[c, i, j, n, oh, ow] =
 * x[n, c, oh * SH + i * DH - PT, ow * SW + j * DW - PL]. Each (c, i, j) plane (N * OH rows of
 * OW) is one task; planes run in parallel. */
#define SX_IM2COL(S)                                                                           \
static inline __attribute__((always_inline)) void                                           \
im2col_plane_##S(const T_##S *X, T_##S *dst, int64_t N, int64_t C, int64_t H, int64_t W,      \
                 int64_t c, int64_t i, int64_t x0, int64_t lo, int64_t hi, int64_t SH,         \
                 int64_t SW, int64_t DH, int64_t OH, int64_t OW, int64_t PT, T_##S pad) {     \
    for (int64_t n = 0; n < N; n++)                                                           \
        for (int64_t oh = 0; oh < OH; oh++, dst += OW) {                                      \
            int64_t y = oh * SH + i * DH - PT;                                                \
            if (y < 0 || y >= H) { for (int64_t q = 0; q < OW; q++) dst[q] = pad; continue; } \
            const T_##S *src = X + ((n * C + c) * H + y) * W + x0;                            \
            for (int64_t q = 0; q < lo; q++) dst[q] = pad;                                    \
            for (int64_t q = lo; q < hi; q++) dst[q] = src[q * SW];                           \
            for (int64_t q = hi; q < OW; q++) dst[q] = pad;                                   \
        }                                                                                     \
}                                                                                             \
void im2col_##S(intptr_t x, intptr_t out, int64_t N, int64_t C, int64_t H, int64_t W,         \
                int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW,       \
                int64_t OH, int64_t OW, int64_t PT, int64_t PL, double value, int nthreads) { \
    const T_##S *X = (const T_##S *)x; T_##S *O = (T_##S *)out;                               \
    const T_##S pad = ST_##S((C_##S)value);                                                   \
    int64_t planes = C * KH * KW;                                                             \
    int nt = (planes * N * OH * OW >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;             \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                 \
    for (int64_t p = 0; p < planes; p++) {                                                    \
        int64_t j = p % KW, i = (p / KW) % KH, c = p / (KW * KH);                             \
        int64_t x0 = j * DW - PL;   /* input column of ow = 0 */                              \
        int64_t lo = 0, hi = OW;    /* the ow whose column lies in [0, W) */                  \
        while (lo < OW && lo * SW + x0 < 0) lo++;                                             \
        while (hi > lo && (hi - 1) * SW + x0 >= W) hi--;                                      \
        T_##S *dst = O + p * N * OH * OW;                                                     \
        /* short rows with constant sizes unroll (rows dominate small images) */              \
        if (SW == 1 && OW == 4)                                                               \
            im2col_plane_##S(X, dst, N, C, H, W, c, i, x0, lo, hi, SH, 1, DH, OH, 4, PT, pad); \
        else if (SW == 1 && OW == 8)                                                          \
            im2col_plane_##S(X, dst, N, C, H, W, c, i, x0, lo, hi, SH, 1, DH, OH, 8, PT, pad); \
        else if (SW == 1)                                                                     \
            im2col_plane_##S(X, dst, N, C, H, W, c, i, x0, lo, hi, SH, 1, DH, OH, OW, PT, pad); \
        else                                                                                  \
            im2col_plane_##S(X, dst, N, C, H, W, c, i, x0, lo, hi, SH, SW, DH, OH, OW, PT, pad); \
    }                                                                                         \
}

/* col2im, im2col's adjoint: out (N, C, H, W) contiguous, the crop at (PT, PL) of the padded
 * canvas the windows of cols (C, KH, KW, N, OH, OW) were taken from. Each (n, c) plane starts
 * at zero and adds the rows of the (i, j) slabs one after another, so every element sums the
 * window entries that read it in (i, j) order, whatever the threads; in the compute type
 * (nn/conv.py uses it for float32 and float64, where that is the dtype itself). */
#define SX_COL2IM(S)                                                                           \
void col2im_##S(intptr_t cols, intptr_t out, int64_t N, int64_t C, int64_t H, int64_t W,      \
                int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW,       \
                int64_t OH, int64_t OW, int64_t PT, int64_t PL, int nthreads) {               \
    const T_##S *X = (const T_##S *)cols; T_##S *O = (T_##S *)out;                            \
    int nt = (N * C * OH * OW * KH * KW >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;        \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                 \
    for (int64_t pl = 0; pl < N * C; pl++) {                                                  \
        int64_t n = pl / C, c = pl % C;                                                       \
        T_##S *dst = O + pl * H * W;                                                          \
        for (int64_t e = 0; e < H * W; e++) dst[e] = ST_##S((C_##S)0);                        \
        for (int64_t i = 0; i < KH; i++)                                                      \
            for (int64_t j = 0; j < KW; j++) {                                                \
                const T_##S *src = X + (((c * KH + i) * KW + j) * N + n) * OH * OW;           \
                for (int64_t oh = 0; oh < OH; oh++) {                                         \
                    int64_t y = oh * SH + i * DH - PT;                                        \
                    if (y < 0 || y >= H) continue;                                            \
                    const T_##S *sr = src + oh * OW;                                          \
                    T_##S *dr = dst + y * W;                                                  \
                    for (int64_t ow = 0; ow < OW; ow++) {                                     \
                        int64_t x = ow * SW + j * DW - PL;                                    \
                        if (x >= 0 && x < W) dr[x] = ST_##S(LD_##S(dr[x]) + LD_##S(sr[ow])); \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
    }                                                                                         \
}
