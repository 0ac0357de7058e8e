/* Max pooling and im2col on CUDA (mirror tensor/cpu/csrc/nn_pool.h), grid-stride over the
 * outputs, one thread per output element; 32-bit index arithmetic when every offset fits.
 *
 * maxpool2d: (planes, H, W) contiguous input, no padding or dilation; each output is the max
 * of its window scanned row by row from the window's first element, with its flat H*W
 * position; a later element wins when it is larger or NaN (PyTorch's rule, as the CPU's), so
 * values and indices equal the CPU's bit for bit.
 * im2col: contiguous (N, C, H, W) input, padded by `value`, -> (C, KH, KW, N, OH, OW).
 * col2im: its adjoint, one thread per output element gathering the window entries that read
 * it in (i, j) order, as the CPU's (so results equal the CPU's bit for bit). */
#ifndef STRIDEX_NN_POOL_CUH
#define STRIDEX_NN_POOL_CUH
#include "common.cuh"

#define NP_BLOCK 256

template <class S, class I>
SX_DEV void np_maxpool2d_loop(const typename S::T *X, typename S::T *Y, int64_t *IDX, I planes,
                              I H, I W, I kh, I kw, I sh, I sw, I OH, I OW) {
    typedef typename S::C A;
    I n = planes * OH * OW, step = (I)blockDim.x * (I)gridDim.x;
#pragma unroll 1
    for (I o = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; o < n; o += step) {
        I t = o / OW, ow = o - t * OW;
        I p = t / OH, oh = t - p * OH;
        const typename S::T *xp = X + p * H * W;
        I h0 = oh * sh, w0 = ow * sw, bi = h0 * W + w0;
        A best = S::ld(xp[bi]);
        for (I i = 0; i < kh; i++)
            for (I j = 0; j < kw; j++) {
                I q = (h0 + i) * W + w0 + j;
                A v = S::ld(xp[q]);
                if (v > best || v != v) { best = v; bi = q; }
            }
        Y[o] = S::st(best);
        IDX[o] = (int64_t)bi;
    }
}

template <class S>
SX_DEV void np_maxpool2d(const typename S::T *X, typename S::T *Y, int64_t *IDX, int64_t planes,
                         int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                         int64_t OH, int64_t OW) {
    /* 32-bit indices when every offset fits and the grid-stride loop's last `o += step` does
     * not wrap (a negative o would pass `o < n` and index out of bounds) */
    if (planes * H * W < 2147483647LL &&
        planes * OH * OW <= 2147483647LL - (int64_t)blockDim.x * gridDim.x)
        np_maxpool2d_loop<S, int32_t>(X, Y, IDX, (int32_t)planes, (int32_t)H, (int32_t)W,
                                      (int32_t)kh, (int32_t)kw, (int32_t)sh, (int32_t)sw,
                                      (int32_t)OH, (int32_t)OW);
    else
        np_maxpool2d_loop<S, int64_t>(X, Y, IDX, planes, H, W, kh, kw, sh, sw, OH, OW);
}

/* Output element e = (r, q) with row r = (c, i, j, n, oh) and q < OW reads
 * X[n, c, oh * SH + i * DH - PT, q * SW + j * DW - PL], or `value` outside X (padding). */
template <class S, class I>
SX_DEV void np_im2col_loop(const typename S::T *X, typename S::T *O, I N, I C, I H, I W, I KH,
                           I KW, I SH, I SW, I DH, I DW, I OH, I OW, I PT, I PL, double value) {
    I n_out = C * KH * KW * N * OH * OW, step = (I)blockDim.x * (I)gridDim.x;
    const typename S::T pad = S::st((typename S::C)value);
#pragma unroll 1
    for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n_out; e += step) {
        I r = e / OW, q = e - r * OW;
        I t = r / OH, oh = r - t * OH;
        I t2 = t / N, n = t - t2 * N;
        I t3 = t2 / KW, j = t2 - t3 * KW;
        I c = t3 / KH, i = t3 - c * KH;
        I y = oh * SH + i * DH - PT, x = q * SW + j * DW - PL;
        O[e] = y >= 0 && y < H && x >= 0 && x < W ? X[((n * C + c) * H + y) * W + x] : pad;
    }
}

template <class S>
SX_DEV void np_im2col(const typename S::T *X, typename S::T *O, int64_t N, int64_t C, int64_t H,
                      int64_t W, int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH,
                      int64_t DW, int64_t OH, int64_t OW, int64_t PT, int64_t PL, double value) {
    if (N * C * H * W < 2147483647LL &&   /* e + step fits too (see np_maxpool2d) */
        C * KH * KW * N * OH * OW <= 2147483647LL - (int64_t)blockDim.x * gridDim.x &&
        (OH * SH + KH * DH + PT) < 2147483647LL && (OW * SW + KW * DW + PL) < 2147483647LL)
        np_im2col_loop<S, int32_t>(X, O, (int32_t)N, (int32_t)C, (int32_t)H, (int32_t)W,
                                   (int32_t)KH, (int32_t)KW, (int32_t)SH, (int32_t)SW,
                                   (int32_t)DH, (int32_t)DW, (int32_t)OH, (int32_t)OW,
                                   (int32_t)PT, (int32_t)PL, value);
    else
        np_im2col_loop<S, int64_t>(X, O, N, C, H, W, KH, KW, SH, SW, DH, DW, OH, OW, PT, PL, value);
}

/* Max pooling's backward: one thread per plane adds the plane's output gradients at their
 * max's positions in output order from zero (the CPU's order: equal results, no atomics). */
template <class S>
SX_DEV void np_maxpool2d_bwd(const typename S::T *G, const int64_t *IDX, typename S::T *X,
                             int64_t planes, int64_t HW, int64_t OHW) {
    typedef typename S::C A;
    int64_t step = (int64_t)blockDim.x * gridDim.x;
#pragma unroll 1
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < planes; p += step) {
        typename S::T *xp = X + p * HW;
        for (int64_t e = 0; e < HW; e++) xp[e] = S::st((A)0);
        for (int64_t o = 0; o < OHW; o++) {
            int64_t q = IDX[p * OHW + o];
            xp[q] = S::st(S::ld(xp[q]) + S::ld(G[p * OHW + o]));
        }
    }
}

/* out (N, C, H, W): the crop at (PT, PL) of the canvas whose windows are cols
 * (C, KH, KW, N, OH, OW), overlapping windows summed from zero in (i, j) order (in the compute
 * type: nn/conv.py uses it for float32 and float64). */
template <class S>
SX_DEV void np_col2im(const typename S::T *X, typename S::T *O, int64_t N, int64_t C, int64_t H,
                      int64_t W, int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH,
                      int64_t DW, int64_t OH, int64_t OW, int64_t PT, int64_t PL) {
    typedef typename S::C A;
    int64_t n_out = N * C * H * W, step = (int64_t)blockDim.x * gridDim.x;
#pragma unroll 1
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n_out; e += step) {
        int64_t x = e % W, t = e / W, y = t % H, pl = t / H, c = pl % C, n = pl / C;
        A acc = 0;
        for (int64_t i = 0; i < KH; i++) {
            int64_t yy = y + PT - i * DH;
            if (yy < 0) break;
            if (yy % SH || yy / SH >= OH) continue;
            for (int64_t j = 0; j < KW; j++) {
                int64_t xx = x + PL - j * DW;
                if (xx < 0) break;
                if (xx % SW || xx / SW >= OW) continue;
                acc += S::ld(X[((((c * KH + i) * KW + j) * N + n) * OH + yy / SH) * OW + xx / SW]);
            }
        }
        O[e] = S::st(acc);
    }
}

#endif
