/* Fused in-place optimizer updates on CUDA (the CPU's loops: tensor/cpu/csrc/optim.h): one
 * grid-stride pass over a contiguous parameter reads p, its gradient and the state buffers and
 * writes them back. The per-element updates are the CPU's own (scalar/optim_step.h), with
 * the same argument conventions (scalars as doubles combined on the host, rounded to the
 * element type here; optional buffers as null pointers; the flag word), so a step agrees with
 * the CPU's bit for bit (float32 and float64).
 *
 * The flags are uniform over the launch, so testing them per element costs only a predicted
 * branch (the CPU specialises its loops on them for vectorisation). */
#ifndef STRIDEX_OPTIM_CUH
#define STRIDEX_OPTIM_CUH
#include "common.cuh"
#include "arch.cuh"
SX_NO_CONTRACT   /* the emulator's g++ must not fuse what optim_step.h rounds separately */
#include "scalar/optim_step.h"
#include "scalar/multi_tensor.h"

#define SO_BLOCK 256

#define SO_LOOP(i, n)                                                                      \
    const int64_t step_ = (int64_t)blockDim.x * gridDim.x;                                 \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += step_)

/* ---- SGD (momentum, dampening, Nesterov); buf may be null without SX_OPT_MOMENTUM ---- */
template <class T>
SX_DEV void so_sgd(T *p, const T *g, T *buf, int64_t n, double neg_lr_, double momentum_,
                   double one_minus_damp_, double wd_, int F) {
    const T neg_lr = (T)neg_lr_, mom = (T)momentum_, damp1 = (T)one_minus_damp_, wd = (T)wd_;
    F = sx_sgd_flags(F);
    if (!(F & SX_OPT_MOMENTUM)) buf = p;
    SO_LOOP(i, n) p[i] = sx_sgd_step(p[i], g[i], &buf[i], neg_lr, mom, damp1, wd, F);
}

/* ---- Adam / AdamW (the scalars: scalar/optim_step.h); vmax may be null ---- */
template <class T>
SX_DEV void so_adam(T *p, const T *g, T *m, T *v, T *vmax, int64_t n, double decay_, double wd_,
                    double w1_, double beta2_, double c2_, double bc2s_, double eps_,
                    double neg_step_, int F) {
    const T decay = (T)decay_, wd = (T)wd_, w1 = (T)w1_, beta2 = (T)beta2_, c2 = (T)c2_,
            bc2s = (T)bc2s_, eps = (T)eps_, neg_step = (T)neg_step_;
    const int w1_small = sx_lerp_small((double)w1);
    F = sx_adam_flags(F);
    if (!(F & SX_OPT_AMSGRAD)) vmax = v;
    SO_LOOP(i, n) p[i] = sx_adam_step(p[i], g[i], &m[i], &v[i], &vmax[i], decay, wd, w1,
                                      w1_small, beta2, c2, bc2s, eps, neg_step, F);
}

/* ---- RMSprop. c = 1 - alpha (also the grad_avg lerp weight); ga, buf may be null ---- */
template <class T>
SX_DEV void so_rmsprop(T *p, const T *g, T *sq, T *ga, T *buf, int64_t n, double alpha_,
                       double c_, double eps_, double neg_lr_, double momentum_, double wd_,
                       int F) {
    const T alpha = (T)alpha_, c = (T)c_, eps = (T)eps_, neg_lr = (T)neg_lr_,
            mom = (T)momentum_, wd = (T)wd_;
    const int c_small = sx_lerp_small((double)c);
    if (!(F & SX_OPT_CENTERED)) ga = sq;
    if (!(F & SX_OPT_MOMENTUM)) buf = sq;
    SO_LOOP(i, n) p[i] = sx_rmsprop_step(p[i], g[i], &sq[i], &ga[i], &buf[i], alpha, c, c_small,
                                         eps, neg_lr, mom, wd, F);
}

/* ---- master weights: many 16-bit parameters in one launch (the CPU's: optim.h) ----
 * G: the parameters' storage traits (sx_f16, sx_bf16). table: k pointer columns of n addresses
 * (the 16-bit parameters, the float32 masters, the 16-bit gradients, the float32 state
 * buffers, 0 where absent), n sizes and n + 1 chunk starts. A block takes a chunk of `chunk`
 * elements at a time (grid-stride over the chunks), finds its tensor by binary search, and
 * its threads step the chunk's elements: the float32 step on the master, the gradient
 * widened, the parameter = the master rounded (bitwise the CPU's). */
#define SO_MT_LOOP(K, ...)   /* ...: the body (commas and all) */                         \
    const int64_t *sizes = table + (K) * n, *start = sizes + n;                            \
    for (int64_t c_ = blockIdx.x; c_ < start[n]; c_ += gridDim.x) {                        \
        const int64_t t_ = sx_chunk_owner(start, n, c_);                                   \
        const int64_t lo = (c_ - start[t_]) * chunk;                                       \
        const int64_t hi = lo + chunk < sizes[t_] ? lo + chunk : sizes[t_];                \
        __VA_ARGS__                                                                        \
    }
#define SO_PTR(T, j) ((T *)table[(j) * n + t_])
/* The master-weight loop of every algorithm (the CPU's SX_MT_MASTER_LOOP): the 16-bit
 * parameters q (column 0), masters p (1), gradients g (2), the algorithm's STATE pointers
 * (columns 3...; declarations with ';' between, commas only inside parentheses), then per
 * element r = STEP (the float32 step on p[i], gradient gi), p[i] = r, q[i] = r rounded. */
#define SO_MASTER_LOOP(K, STATE, ...)   /* ...: STEP */                                     \
    typedef typename G::T T;                                                               \
    G s;                                                                                   \
    SO_MT_LOOP(K, {                                                                        \
        T *q = SO_PTR(T, 0);                                                               \
        float *p = SO_PTR(float, 1);                                                       \
        const T *g = SO_PTR(const T, 2);                                                   \
        STATE;                                                                             \
        for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {                      \
            const float gi = s.ld(g[i]);                                                   \
            float r = __VA_ARGS__;                                                         \
            p[i] = r;                                                                      \
            q[i] = s.st(r);                                                                \
        }                                                                                  \
    })

template <class G>
SX_DEV void so_sgd_master(const int64_t *table, int64_t n, int64_t chunk, double neg_lr_,
                          double momentum_, double one_minus_damp_, double wd_, int F) {
    const float neg_lr = (float)neg_lr_, mom = (float)momentum_, damp1 = (float)one_minus_damp_,
                wd = (float)wd_;
    F = sx_sgd_flags(F);
    SO_MASTER_LOOP(4,
        float *buf = (F & SX_OPT_MOMENTUM) ? SO_PTR(float, 3) : p,
        sx_sgd_step(p[i], gi, &buf[i], neg_lr, mom, damp1, wd, F))
}

template <class G>
SX_DEV void so_adam_master(const int64_t *table, int64_t n, int64_t chunk, double decay_,
                           double wd_, double w1_, double beta2_, double c2_, double bc2s_,
                           double eps_, double neg_step_, int F) {
    const float decay = (float)decay_, wd = (float)wd_, w1 = (float)w1_, beta2 = (float)beta2_,
                c2 = (float)c2_, bc2s = (float)bc2s_, eps = (float)eps_, neg_step = (float)neg_step_;
    const int w1_small = sx_lerp_small((double)w1);
    F = sx_adam_flags(F);
    SO_MASTER_LOOP(6,
        float *m = SO_PTR(float, 3); float *v = SO_PTR(float, 4);
        float *vmax = (F & SX_OPT_AMSGRAD) ? SO_PTR(float, 5) : v,
        sx_adam_step(p[i], gi, &m[i], &v[i], &vmax[i], decay, wd, w1, w1_small, beta2, c2,
                     bc2s, eps, neg_step, F))
}

template <class G>
SX_DEV void so_rmsprop_master(const int64_t *table, int64_t n, int64_t chunk, double alpha_,
                              double c_, double eps_, double neg_lr_, double momentum_,
                              double wd_, int F) {
    const float alpha = (float)alpha_, c = (float)c_, eps = (float)eps_, neg_lr = (float)neg_lr_,
                mom = (float)momentum_, wd = (float)wd_;
    const int c_small = sx_lerp_small((double)c);
    SO_MASTER_LOOP(6,
        float *sq = SO_PTR(float, 3);
        float *ga = (F & SX_OPT_CENTERED) ? SO_PTR(float, 4) : sq;
        float *buf = (F & SX_OPT_MOMENTUM) ? SO_PTR(float, 5) : sq,
        sx_rmsprop_step(p[i], gi, &sq[i], &ga[i], &buf[i], alpha, c, c_small, eps, neg_lr, mom,
                        wd, F))
}
#endif
