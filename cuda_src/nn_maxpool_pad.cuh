/* 2-D max pooling with padding, dilation and any output size on CUDA (mirror
 * tensor/cpu/csrc/nn_maxpool_pad.h, whose comments give the rules): one thread per output,
 * grid-stride. Comparisons only, so results equal the CPU's exactly. */
#ifndef STRIDEX_NN_MAXPOOL_PAD_CUH
#define STRIDEX_NN_MAXPOOL_PAD_CUH
#include "common.cuh"

#define MPP_BLOCK 256

template <class S>
SX_DEV void mpp_fwd(const typename S::T *x, typename S::T *y, int64_t *idx, int64_t planes,
                    int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                    int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t OH, int64_t OW) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x, total = planes * OH * OW;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const int64_t p = e / (OH * OW), r = e - p * OH * OW, oh = r / OW, ow = r - oh * OW;
        const typename S::T *xp = x + p * H * W;
        const int64_t h0 = oh * sh - ph, w0 = ow * sw - pw;
        auto best = S::ld(xp[0]);
        int64_t bi = -1;
        for (int64_t i = 0; i < kh; i++) {
            const int64_t hh = h0 + i * dh;
            if (hh < 0 || hh >= H) continue;
            for (int64_t j = 0; j < kw; j++) {
                const int64_t ww = w0 + j * dw;
                if (ww < 0 || ww >= W) continue;
                const int64_t q = hh * W + ww;
                auto v = S::ld(xp[q]);
                if (bi < 0 || v > best || v != v) { best = v; bi = q; }
            }
        }
        y[e] = S::st(best);
        idx[e] = bi < 0 ? 0 : bi;
    }
}

#endif
