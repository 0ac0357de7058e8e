/* 2-D grid_sample's bilinear / nearest sampling on CUDA (mirror tensor/cpu/csrc/nn_grid.h,
 * whose comments give the layouts and formulas). gs2d_fwd and gs2d_bwd_input: one thread per
 * (n, c) plane row of work, grid-stride (the input gradient of a plane is written by one
 * thread, so no atomics); gs2d_bwd_coords: one thread per (n, p) point, summing over C. Not
 * an exact family: results agree with the CPU's to rounding. */
#ifndef STRIDEX_NN_GRID_CUH
#define STRIDEX_NN_GRID_CUH
#include "common.cuh"

#define GS_BLOCK 128

template <class T>
SX_DEV int gs_taps(T ix, T iy, int64_t H, int64_t W, int nearest, int64_t *off, T *w, T *dwx,
                   T *dwy) {
    if (nearest) {
        T x = rint(ix), y = rint(iy);
        off[0] = (x >= 0 && x <= W - 1 && y >= 0 && y <= H - 1) ? (int64_t)y * W + (int64_t)x
                                                                 : -1;
        w[0] = 1; dwx[0] = 0; dwy[0] = 0;
        return 1;
    }
    T x0 = floor(ix), y0 = floor(iy);
    T tx = ix - x0, ty = iy - y0, one = 1;
    T wxs[2] = {one - tx, tx}, wys[2] = {one - ty, ty};
    for (int k = 0; k < 4; k++) {
        int a = k >> 1, b = k & 1;
        T x = x0 + b, y = y0 + a;
        off[k] = (x >= 0 && x <= W - 1 && y >= 0 && y <= H - 1) ? (int64_t)y * W + (int64_t)x
                                                                 : -1;
        w[k] = wys[a] * wxs[b];
        dwx[k] = b ? wys[a] : -wys[a];
        dwy[k] = a ? wxs[b] : -wxs[b];
    }
    return 4;
}

template <class T>
SX_DEV void gs2d_fwd(const T *in, const T *gx, const T *gy, T *out, int64_t N, int64_t C,
                     int64_t H, int64_t W, int64_t P, int nearest) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < N * C * P; i += stride) {
        const int64_t nc = i / P, p = i - nc * P, n = nc / C;
        int64_t off[4];
        T w[4], dwx[4], dwy[4];
        int nk = gs_taps<T>(gx[n * P + p], gy[n * P + p], H, W, nearest, off, w, dwx, dwy);
        const T *plane = in + nc * H * W;
        T acc = 0;
        for (int k = 0; k < nk; k++) {
            T v = off[k] >= 0 ? plane[off[k]] : (T)0;
            T part = v * w[k];
            acc = k ? acc + part : part;
        }
        out[i] = acc;
    }
}

template <class T>
SX_DEV void gs2d_bwd_input(const T *gx, const T *gy, const T *g, T *ginp, int64_t N, int64_t C,
                           int64_t H, int64_t W, int64_t P, int nearest) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t nc = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; nc < N * C; nc += stride) {
        const int64_t n = nc / C;
        T *plane = ginp + nc * H * W;
        for (int64_t q = 0; q < H * W; q++) plane[q] = 0;
        for (int64_t p = 0; p < P; p++) {
            int64_t off[4];
            T w[4], dwx[4], dwy[4];
            int nk = gs_taps<T>(gx[n * P + p], gy[n * P + p], H, W, nearest, off, w, dwx, dwy);
            const T gv = g[nc * P + p];
            for (int k = 0; k < nk; k++)
                if (off[k] >= 0) plane[off[k]] += gv * w[k];
        }
    }
}

template <class T>
SX_DEV void gs2d_bwd_coords(const T *in, const T *gx, const T *gy, const T *g, T *gix, T *giy,
                            int64_t N, int64_t C, int64_t H, int64_t W, int64_t P, int nearest) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t np = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; np < N * P; np += stride) {
        const int64_t n = np / P, p = np - n * P;
        int64_t off[4];
        T w[4], dwx[4], dwy[4];
        int nk = gs_taps<T>(gx[np], gy[np], H, W, nearest, off, w, dwx, dwy);
        double sx = 0, sy = 0;
        if (!nearest) {
            for (int64_t c = 0; c < C; c++) {
                const T *plane = in + (n * C + c) * H * W;
                const double gv = (double)g[(n * C + c) * P + p];
                for (int k = 0; k < nk; k++) {
                    double v = off[k] >= 0 ? (double)plane[off[k]] : 0.0;
                    sx += gv * v * (double)dwx[k];
                    sy += gv * v * (double)dwy[k];
                }
            }
        }
        gix[np] = (T)sx; giy[np] = (T)sy;
    }
}

#endif
