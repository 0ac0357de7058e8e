/* One time step of an LSTM or GRU cell, forward and backward, for nn/_rnn_fused.py: the gate
 * activations, the state update and their derivatives in one pass over the step's rows,
 * instead of a dozen elementwise kernels (and their Python dispatch) per step.
 *
 * Every array is contiguous, `rows` rows of H (or a multiple of H) elements; gx and gh are the
 * step's gates from the input and from the hidden state (bias included), in torch's order
 * (LSTM: input, forget, cell, output; GRU: reset, update, new). The expressions round as the
 * op-by-op recording does (fp-contract off: a * b + c stays two roundings), with its sigmoid
 * and tanh (SX_SIGMOID, SX_TANH). The CUDA twin is cuda_src/nn_rnn.cuh. Elementwise, so the
 * result does not depend on the thread count. */
#include "common.h"

#pragma GCC optimize("fp-contract=off")

/* LSTM forward: acts (rows, 4H) = (sigmoid i, sigmoid f, tanh g, sigmoid o), c = f cp + i g,
 * h = o tanh(c). Each row runs as simple loops over restrict pointers, so they vectorise
 * (vm_sigmoidf / vm_tanhf are written for that). */
#define SX_LSTM_FWD(S)                                                                      \
void lstm_fwd_##S(intptr_t pgx, intptr_t pgh, intptr_t pcp, intptr_t pacts, intptr_t pc,     \
                  intptr_t ph, int64_t rows, int64_t H, int nthreads) {                     \
    int nt = (rows * H * 4 >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                   \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                \
    for (int64_t r = 0; r < rows; r++) {                                                    \
        const T_##S *restrict x = (const T_##S *)pgx + r * 4 * H;                           \
        const T_##S *restrict y = (const T_##S *)pgh + r * 4 * H;                           \
        const T_##S *restrict cp = (const T_##S *)pcp + r * H;                              \
        T_##S *restrict a = (T_##S *)pacts + r * 4 * H;                                     \
        T_##S *restrict c = (T_##S *)pc + r * H, *restrict h = (T_##S *)ph + r * H;         \
        for (int64_t j = 0; j < 4 * H; j++) a[j] = x[j] + y[j];                             \
        for (int64_t j = 0; j < 2 * H; j++) a[j] = SX_SIGMOID(a[j]);                        \
        for (int64_t j = 2 * H; j < 3 * H; j++) a[j] = SX_TANH(a[j]);                       \
        for (int64_t j = 3 * H; j < 4 * H; j++) a[j] = SX_SIGMOID(a[j]);                    \
        for (int64_t j = 0; j < H; j++) {                                                   \
            T_##S fc = a[H + j] * cp[j], ig = a[j] * a[2 * H + j];                          \
            c[j] = fc + ig;                                                                 \
        }                                                                                   \
        for (int64_t j = 0; j < H; j++) h[j] = a[3 * H + j] * SX_TANH(c[j]);               \
    }                                                                                       \
}

/* LSTM backward: from dh (the gradient of h = o tanh(c)) and dc (of c, from later steps),
 * dpre (rows, 4H) = the gradient of the gates' pre-activations and dcp = of the previous cell
 * state. */
#define SX_LSTM_BWD(S)                                                                      \
void lstm_bwd_##S(intptr_t pacts, intptr_t pcp, intptr_t pc, intptr_t pdh, intptr_t pdc,    \
                  intptr_t pdpre, intptr_t pdcp, int64_t rows, int64_t H, int nthreads) {   \
    const T_##S one = 1;                                                                    \
    int nt = (rows * H * 4 >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                   \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                \
    for (int64_t r = 0; r < rows; r++) {                                                    \
        const T_##S *restrict a = (const T_##S *)pacts + r * 4 * H;                         \
        const T_##S *restrict cp = (const T_##S *)pcp + r * H;                              \
        const T_##S *restrict c = (const T_##S *)pc + r * H;                                \
        const T_##S *restrict dh = (const T_##S *)pdh + r * H;                              \
        const T_##S *restrict dc = (const T_##S *)pdc + r * H;                              \
        T_##S *restrict d = (T_##S *)pdpre + r * 4 * H, *restrict dcp = (T_##S *)pdcp + r * H; \
        for (int64_t j = 0; j < H; j++) dcp[j] = SX_TANH(c[j]);  /* tanh(c), for now */   \
        for (int64_t j = 0; j < H; j++) {                                                   \
            T_##S i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j];               \
            T_##S tc = dcp[j], dhk = dh[j];                                                 \
            T_##S dcn = dc[j] + dhk * o * (one - tc * tc);                                  \
            d[j] = dcn * g * (i * (one - i));                                               \
            d[H + j] = dcn * cp[j] * (f * (one - f));                                       \
            d[2 * H + j] = dcn * i * (one - g * g);                                         \
            d[3 * H + j] = dhk * tc * (o * (one - o));                                      \
            dcp[j] = dcn * f;                                                               \
        }                                                                                   \
    }                                                                                       \
}

/* GRU forward: r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r hn),
 * h = n + z (hp - n); acts (rows, 4H) = (r, z, n, hn) for the backward. */
#define SX_GRU_FWD(S)                                                                       \
void gru_fwd_##S(intptr_t pgx, intptr_t pgh, intptr_t php, intptr_t pacts, intptr_t ph,     \
                 int64_t rows, int64_t H, int nthreads) {                                   \
    int nt = (rows * H * 4 >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                   \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                \
    for (int64_t r = 0; r < rows; r++) {                                                    \
        const T_##S *restrict x = (const T_##S *)pgx + r * 3 * H;                           \
        const T_##S *restrict y = (const T_##S *)pgh + r * 3 * H;                           \
        const T_##S *restrict hp = (const T_##S *)php + r * H;                              \
        T_##S *restrict a = (T_##S *)pacts + r * 4 * H, *restrict h = (T_##S *)ph + r * H;  \
        for (int64_t j = 0; j < 2 * H; j++) a[j] = SX_SIGMOID(x[j] + y[j]);                 \
        for (int64_t j = 0; j < H; j++) {                                                   \
            T_##S hn = y[2 * H + j], rh = a[j] * hn;                                        \
            a[3 * H + j] = hn;                                                              \
            a[2 * H + j] = SX_TANH(x[2 * H + j] + rh);                                      \
        }                                                                                   \
        for (int64_t j = 0; j < H; j++) {                                                   \
            T_##S n = a[2 * H + j], dif = hp[j] - n, zd = a[H + j] * dif;                   \
            h[j] = n + zd;                                                                  \
        }                                                                                   \
    }                                                                                       \
}

/* GRU backward: from dh, dgx (rows, 3H) and dgh (rows, 3H) = the gradients of the gates from
 * the input and from the hidden state (they differ in the new gate: r hn), dhp = dh z (the
 * direct part of the previous hidden state's gradient; the rest is dgh @ W_hh). */
#define SX_GRU_BWD(S)                                                                       \
void gru_bwd_##S(intptr_t pacts, intptr_t php, intptr_t pdh, intptr_t pdgx, intptr_t pdgh,  \
                 intptr_t pdhp, int64_t rows, int64_t H, int nthreads) {                    \
    const T_##S *acts = (const T_##S *)pacts, *hp = (const T_##S *)php,                     \
                *dh = (const T_##S *)pdh;                                                   \
    T_##S *dgx = (T_##S *)pdgx, *dgh = (T_##S *)pdgh, *dhp = (T_##S *)pdhp;                 \
    const T_##S one = 1;                                                                    \
    int nt = (rows * H * 4 >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                   \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                \
    for (int64_t r = 0; r < rows; r++) {                                                    \
        const T_##S *a = acts + r * 4 * H;                                                  \
        T_##S *dx = dgx + r * 3 * H, *dy = dgh + r * 3 * H;                                 \
        for (int64_t j = 0; j < H; j++) {                                                   \
            const int64_t k = r * H + j;                                                    \
            T_##S rg = a[j], z = a[H + j], n = a[2 * H + j], hn = a[3 * H + j], d = dh[k];  \
            T_##S dan = d * (one - z) * (one - n * n);                                      \
            T_##S dar = dan * hn * (rg * (one - rg));                                       \
            T_##S daz = d * (hp[k] - n) * (z * (one - z));                                  \
            dx[j] = dar; dx[H + j] = daz; dx[2 * H + j] = dan;                              \
            dy[j] = dar; dy[H + j] = daz; dy[2 * H + j] = dan * rg;                         \
            dhp[k] = d * z;                                                                 \
        }                                                                                   \
    }                                                                                       \
}
