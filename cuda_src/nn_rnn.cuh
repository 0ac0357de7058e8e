/* One time step of an LSTM or GRU cell on CUDA, forward and backward (mirror
 * tensor/cpu/csrc/nn_rnn.h, whose comments give the formulas and layouts): grid-stride over
 * the step's rows * H elements, one thread per (row, unit); every array contiguous. Not an
 * exact family: its sigmoid / tanh are the device's, not the CPU's, so results agree with the
 * CPU's to rounding, not bit for bit (NVRTC may contract a * b + c). */
#ifndef STRIDEX_NN_RNN_CUH
#define STRIDEX_NN_RNN_CUH
#include "common.cuh"

#define RN_BLOCK 256

#define RN_LOOP(k, n)                                                                      \
    const int64_t step_ = (int64_t)blockDim.x * gridDim.x;                                 \
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < (n); k += step_)

template <class T>
SX_DEV void rn_lstm_fwd(const T *gx, const T *gh, const T *cp, T *acts, T *c, T *h,
                        int64_t rows, int64_t H) {
    RN_LOOP(k, rows * H) {
        const int64_t r = k / H, j = k - r * H;
        const T *x = gx + r * 4 * H, *y = gh + r * 4 * H;
        T *a = acts + r * 4 * H;
        T i = SX_SIGMOID(x[j] + y[j]), f = SX_SIGMOID(x[H + j] + y[H + j]);
        T g = SX_TANH(x[2 * H + j] + y[2 * H + j]);
        T o = SX_SIGMOID(x[3 * H + j] + y[3 * H + j]);
        a[j] = i; a[H + j] = f; a[2 * H + j] = g; a[3 * H + j] = o;
        T fc = f * cp[k], ig = i * g;
        T cn = fc + ig;
        c[k] = cn;
        h[k] = o * SX_TANH(cn);
    }
}

template <class T>
SX_DEV void rn_lstm_bwd(const T *acts, const T *cp, const T *c, const T *dh, const T *dc,
                        T *dpre, T *dcp, int64_t rows, int64_t H) {
    const T one = 1;
    RN_LOOP(k, rows * H) {
        const int64_t r = k / H, j = k - r * H;
        const T *a = acts + r * 4 * H;
        T *d = dpre + r * 4 * H;
        T i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j];
        T tc = SX_TANH(c[k]), dhk = dh[k];
        T dcn = dc[k] + dhk * o * (one - tc * tc);
        d[j] = dcn * g * (i * (one - i));
        d[H + j] = dcn * cp[k] * (f * (one - f));
        d[2 * H + j] = dcn * i * (one - g * g);
        d[3 * H + j] = dhk * tc * (o * (one - o));
        dcp[k] = dcn * f;
    }
}

template <class T>
SX_DEV void rn_gru_fwd(const T *gx, const T *gh, const T *hp, T *acts, T *h, int64_t rows,
                       int64_t H) {
    RN_LOOP(k, rows * H) {
        const int64_t r = k / H, j = k - r * H;
        const T *x = gx + r * 3 * H, *y = gh + r * 3 * H;
        T *a = acts + r * 4 * H;
        T rg = SX_SIGMOID(x[j] + y[j]), z = SX_SIGMOID(x[H + j] + y[H + j]);
        T hn = y[2 * H + j], rh = rg * hn;
        T n = SX_TANH(x[2 * H + j] + rh);
        a[j] = rg; a[H + j] = z; a[2 * H + j] = n; a[3 * H + j] = hn;
        T dif = hp[k] - n, zd = z * dif;
        h[k] = n + zd;
    }
}

template <class T>
SX_DEV void rn_gru_bwd(const T *acts, const T *hp, const T *dh, T *dgx, T *dgh, T *dhp,
                       int64_t rows, int64_t H) {
    const T one = 1;
    RN_LOOP(k, rows * H) {
        const int64_t r = k / H, j = k - r * H;
        const T *a = acts + r * 4 * H;
        T *dx = dgx + r * 3 * H, *dy = dgh + r * 3 * H;
        T rg = a[j], z = a[H + j], n = a[2 * H + j], hn = a[3 * H + j], d = dh[k];
        T dan = d * (one - z) * (one - n * n);
        T dar = dan * hn * (rg * (one - rg));
        T daz = d * (hp[k] - n) * (z * (one - z));
        dx[j] = dar; dx[H + j] = daz; dx[2 * H + j] = dan;
        dy[j] = dar; dy[H + j] = daz; dy[2 * H + j] = dan * rg;
        dhp[k] = d * z;
    }
}

#endif
