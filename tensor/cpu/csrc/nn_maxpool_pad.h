/* 2-D max pooling with padding, dilation and any output size (ceil_mode), for
 * nn/_fused_ops.py's max_pool2d_pad: one pass over each plane instead of im2col plus a chain
 * of where ops per window element (nn/pooling.py's general path), whose backward replays
 * them. Only the window elements inside the input compete (padding never wins); a later
 * element wins when larger or NaN, as that path and PyTorch. idx gets the winner's flat
 * h * W + w position in its plane (PyTorch's return_indices), so the backward is nn_pool.h's
 * maxpool2d_bwd. The caller guarantees every window holds an input element. CUDA twin:
 * cuda_src/nn_maxpool_pad.cuh. */
#include "common.h"

/* one window touching the padding: only its elements inside the input compete */
#define SX_MAXPOOL2D_PAD(S)                                                                    \
static void maxpool2d_pad_edge_##S(const T_##S *xp, T_##S *yo, int64_t *io, int64_t H,       \
                                   int64_t W, int64_t kh, int64_t kw, int64_t h0, int64_t w0, \
                                   int64_t dh, int64_t dw) {                                  \
    int64_t ilo = h0 < 0 ? (-h0 + dh - 1) / dh : 0;                                             \
    int64_t ihi = (H - h0 + dh - 1) / dh; if (ihi > kh) ihi = kh;                               \
    int64_t jlo = w0 < 0 ? (-w0 + dw - 1) / dw : 0;                                             \
    int64_t jhi = (W - w0 + dw - 1) / dw; if (jhi > kw) jhi = kw;                               \
    int64_t bi = (h0 + ilo * dh) * W + w0 + jlo * dw;                                           \
    C_##S best = LD_##S(xp[bi]);                                                                \
    for (int64_t i = ilo; i < ihi; i++)                                                         \
        for (int64_t j = jlo; j < jhi; j++) {                                                   \
            const int64_t q = (h0 + i * dh) * W + w0 + j * dw;                                  \
            C_##S v = LD_##S(xp[q]);                                                            \
            if (v > best || v != v) { best = v; bi = q; }                                       \
        }                                                                                       \
    *yo = ST_##S(best);                                                                         \
    *io = bi;                                                                                   \
}                                                                                               \
/* one plane; always inlined, so the common windows (3x3 / 2x2, no dilation) get constant     \
 * bounds; the windows wholly inside the input (columns [oa, ob) of the inside rows) run a     \
 * loop free of bounds checks, which the compiler vectorises */                               \
static inline __attribute__((always_inline)) void                                            \
maxpool2d_pad_plane_##S(const T_##S *xp, T_##S *yp, int64_t *ip, int64_t H, int64_t W,        \
                        int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,           \
                        int64_t pw, int64_t dh, int64_t dw, int64_t OH, int64_t OW) {         \
    int64_t oa = (pw + sw - 1) / sw, ob = (W - (kw - 1) * dw - 1 + pw) / sw + 1;               \
    if (W - (kw - 1) * dw - 1 + pw < 0) ob = 0;                                                 \
    if (oa > OW) oa = OW;                                                                       \
    if (ob > OW) ob = OW;                                                                       \
    if (ob < oa) ob = oa;                                                                       \
    for (int64_t oh = 0; oh < OH; oh++) {                                                       \
        const int64_t h0 = oh * sh - ph;                                                        \
        T_##S *yr = yp + oh * OW; int64_t *ir = ip + oh * OW;                                   \
        const int inside = h0 >= 0 && h0 + (kh - 1) * dh < H;                                   \
        const int64_t a = inside ? oa : OW, b = inside ? ob : OW;                               \
        for (int64_t ow = 0; ow < a; ow++)                                                      \
            maxpool2d_pad_edge_##S(xp, yr + ow, ir + ow, H, W, kh, kw, h0, ow * sw - pw, dh, dw); \
        for (int64_t ow = a; ow < b; ow++) {                                                    \
            const int64_t w0 = ow * sw - pw;                                                    \
            int64_t bi = h0 * W + w0;                                                           \
            C_##S best = LD_##S(xp[bi]);                                                        \
            for (int64_t i = 0; i < kh; i++)                                                    \
                for (int64_t j = 0; j < kw; j++) {                                              \
                    const int64_t q = (h0 + i * dh) * W + w0 + j * dw;                          \
                    C_##S v = LD_##S(xp[q]);                                                    \
                    if (v > best || v != v) { best = v; bi = q; }                               \
                }                                                                               \
            yr[ow] = ST_##S(best);                                                              \
            ir[ow] = bi;                                                                        \
        }                                                                                       \
        for (int64_t ow = b; ow < OW; ow++)                                                     \
            maxpool2d_pad_edge_##S(xp, yr + ow, ir + ow, H, W, kh, kw, h0, ow * sw - pw, dh, dw); \
    }                                                                                           \
}                                                                                               \
void maxpool2d_pad_##S(intptr_t x, intptr_t y, intptr_t idx, int64_t planes, int64_t H,       \
                       int64_t W, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,  \
                       int64_t pw, int64_t dh, int64_t dw, int64_t OH, int64_t OW,             \
                       int nthreads) {                                                         \
    const T_##S *X = (const T_##S *)x; T_##S *Y = (T_##S *)y; int64_t *I = (int64_t *)idx;     \
    int nt = (planes * OH * OW * kh * kw >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;        \
    const int unit = dh == 1 && dw == 1;                                                        \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                   \
    for (int64_t p = 0; p < planes; p++) {                                                      \
        const T_##S *xp = X + p * H * W;                                                        \
        T_##S *yp = Y + p * OH * OW; int64_t *ip = I + p * OH * OW;                             \
        if (unit && kh == 3 && kw == 3)                                                         \
            maxpool2d_pad_plane_##S(xp, yp, ip, H, W, 3, 3, sh, sw, ph, pw, 1, 1, OH, OW);      \
        else if (unit && kh == 2 && kw == 2)                                                    \
            maxpool2d_pad_plane_##S(xp, yp, ip, H, W, 2, 2, sh, sw, ph, pw, 1, 1, OH, OW);      \
        else                                                                                    \
            maxpool2d_pad_plane_##S(xp, yp, ip, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW);  \
    }                                                                                           \
}
