/* Fused in-place optimizer updates (nn/optim.py): one pass over a contiguous parameter
 * reads p, its gradient and the optimizer's state buffers and writes them back, instead of
 * the 5-10 elementwise kernels (and temporaries) the update costs as tensor ops.
 *
 * The per-element updates and the flag word are shared with the CUDA kernels
 * (cuda_src/scalar/optim_step.h): PyTorch's single-tensor updates op by op, in the
 * parameter's precision, so results agree with torch.optim to the last bit or two and with
 * the CUDA kernels bit for bit. They must not be contracted: fp-contract is off from here
 * on, so `a * b + c` stays two roundings. Elementwise, so the result does not depend on the
 * thread count.
 *
 * Every kernel takes scalars (double, already combined on the host from the step count:
 * bias corrections, 1 - beta, -lr) and a flag word. The options are compile-time constants
 * in the loop: each kernel switches once over its flag combinations to a loop specialised
 * for them (a loop testing run-time flags per element does not vectorise well). */
#include "common.h"

#pragma GCC optimize("fp-contract=off")
#include "scalar/optim_step.h"
#include "scalar/multi_tensor.h"

/* One `case` per combination of the listed flag bits (2^k cases), each calling
 * CALL(S, flags) with the flags as a constant. */
#define SX_OPT_C(CALL, S, f) case (f): CALL(S, (f)); break;
#define SX_OPT_CASES1(CALL, S, b, x) SX_OPT_C(CALL, S, b) SX_OPT_C(CALL, S, (b) | (x))
#define SX_OPT_CASES2(CALL, S, b, x, y) \
    SX_OPT_CASES1(CALL, S, b, x) SX_OPT_CASES1(CALL, S, (b) | (y), x)
#define SX_OPT_CASES3(CALL, S, b, x, y, z) \
    SX_OPT_CASES2(CALL, S, b, x, y) SX_OPT_CASES2(CALL, S, (b) | (z), x, y)
#define SX_OPT_CASES4(CALL, S, b, x, y, z, w) \
    SX_OPT_CASES3(CALL, S, b, x, y, z) SX_OPT_CASES3(CALL, S, (b) | (w), x, y, z)
#define SX_OPT_CASES5(CALL, S, b, x, y, z, w, u) \
    SX_OPT_CASES4(CALL, S, b, x, y, z, w) SX_OPT_CASES4(CALL, S, (b) | (u), x, y, z, w)

/* Run BODY over this thread's slice [lo, hi) of n elements (one slice per thread). */
#define SX_OPT_PARALLEL(n, nthreads, BODY)                                               \
    int nt_ = ((n) >= SX_PAR_MIN && (nthreads) > 1) ? (nthreads) : 1;                    \
    _Pragma("omp parallel num_threads(nt_) if (nt_ > 1)")                                \
    {                                                                                    \
        int t_ = 0, T_ = 1;                                                              \
        SX_OPT_THREAD_IDS(t_, T_);                                                       \
        int64_t lo = (int64_t)((__int128)(n) * t_ / T_);                                 \
        int64_t hi = (int64_t)((__int128)(n) * (t_ + 1) / T_);                           \
        BODY                                                                             \
    }
#ifdef _OPENMP
#define SX_OPT_THREAD_IDS(t, T) do { t = omp_get_thread_num(); T = omp_get_num_threads(); } while (0)
#else
#define SX_OPT_THREAD_IDS(t, T) do { } while (0)
#endif

/* ---- SGD (momentum, dampening, Nesterov) ---- */
#define SX_SGD_CALL(S, F) sgd_body_##S(p + lo, g + lo, buf + lo, hi - lo, neg_lr, mom, damp1, wd, F)
#define SX_SGD(S)                                                                        \
SX_INLINE void sgd_body_##S(T_##S *p, const T_##S *g, T_##S *buf, int64_t n, T_##S neg_lr, \
                            T_##S mom, T_##S damp1, T_##S wd, const int F) {             \
    for (int64_t i = 0; i < n; i++)                                                      \
        p[i] = sx_sgd_step_##S(p[i], g[i], &buf[i], neg_lr, mom, damp1, wd, F);          \
}                                                                                        \
void sgd_##S(intptr_t pp, intptr_t gp, intptr_t bp, int64_t n, double neg_lr_,           \
             double momentum_, double one_minus_damp_, double wd_, int flags, int nthreads) { \
    T_##S *p = (T_##S *)pp, *buf = (T_##S *)bp;                                          \
    const T_##S *g = (const T_##S *)gp;                                                  \
    const T_##S neg_lr = (T_##S)neg_lr_, mom = (T_##S)momentum_,                         \
                damp1 = (T_##S)one_minus_damp_, wd = (T_##S)wd_;                         \
    flags = sx_sgd_flags(flags);                                                         \
    if (!(flags & SX_OPT_MOMENTUM)) buf = p;                                             \
    SX_OPT_PARALLEL(n, nthreads,                                                         \
        switch (flags & 0x8f) {                                                          \
            SX_OPT_CASES5(SX_SGD_CALL, S, 0, SX_OPT_MAXIMIZE, SX_OPT_NESTEROV, SX_OPT_FIRST, \
                          SX_OPT_MOMENTUM, SX_OPT_WD)                                    \
        })                                                                               \
}

/* ---- Adam / AdamW (the scalars: scalar/optim_step.h) ---- */
#define SX_ADAM_CALL(S, F) adam_body_##S(p + lo, g + lo, m + lo, v + lo, vmax + lo, hi - lo,   \
                                         decay, wd, w1, w1_small, beta2, c2, bc2s, eps, neg_step, F)
#define SX_ADAM(S)                                                                       \
SX_INLINE void adam_body_##S(T_##S *p, const T_##S *g, T_##S *m, T_##S *v, T_##S *vmax,   \
                             int64_t n, T_##S decay, T_##S wd, T_##S w1, int w1_small,    \
                             T_##S beta2, T_##S c2, T_##S bc2s, T_##S eps, T_##S neg_step, \
                             const int F) {                                              \
    for (int64_t i = 0; i < n; i++)                                                      \
        p[i] = sx_adam_step_##S(p[i], g[i], &m[i], &v[i], &vmax[i], decay, wd, w1, w1_small, \
                                beta2, c2, bc2s, eps, neg_step, F);                      \
}                                                                                        \
void adam_##S(intptr_t pp, intptr_t gp, intptr_t mp, intptr_t vp, intptr_t vmaxp, int64_t n, \
              double decay_, double wd_, double w1_, double beta2_, double c2_, double bc2s_, \
              double eps_, double neg_step_, int flags, int nthreads) {                  \
    T_##S *p = (T_##S *)pp, *m = (T_##S *)mp, *v = (T_##S *)vp, *vmax = (T_##S *)vmaxp; \
    const T_##S *g = (const T_##S *)gp;                                                  \
    const T_##S decay = (T_##S)decay_, wd = (T_##S)wd_, w1 = (T_##S)w1_, beta2 = (T_##S)beta2_, \
                c2 = (T_##S)c2_, bc2s = (T_##S)bc2s_, eps = (T_##S)eps_, neg_step = (T_##S)neg_step_; \
    const int w1_small = sx_lerp_small((double)w1);                                      \
    flags = sx_adam_flags(flags);                                                        \
    if (!(flags & SX_OPT_AMSGRAD)) vmax = v;                                             \
    SX_OPT_PARALLEL(n, nthreads,                                                         \
        switch (flags & 0xb1) {                                                          \
            SX_OPT_CASES4(SX_ADAM_CALL, S, 0, SX_OPT_MAXIMIZE, SX_OPT_AMSGRAD,           \
                          SX_OPT_DECOUPLED, SX_OPT_WD)                                   \
        })                                                                               \
}

/* ---- RMSprop. c = 1 - alpha (also the grad_avg lerp weight) ---- */
#define SX_RMSPROP_CALL(S, F) rmsprop_body_##S(p + lo, g + lo, sq + lo, ga + lo, buf + lo,     \
                                               hi - lo, alpha, c, c_small, eps, neg_lr, mom, wd, F)
#define SX_RMSPROP(S)                                                                    \
SX_INLINE void rmsprop_body_##S(T_##S *p, const T_##S *g, T_##S *sq, T_##S *ga, T_##S *buf, \
                                int64_t n, T_##S alpha, T_##S c, int c_small, T_##S eps,  \
                                T_##S neg_lr, T_##S mom, T_##S wd, const int F) {        \
    for (int64_t i = 0; i < n; i++)                                                      \
        p[i] = sx_rmsprop_step_##S(p[i], g[i], &sq[i], &ga[i], &buf[i], alpha, c, c_small, \
                                   eps, neg_lr, mom, wd, F);                             \
}                                                                                        \
void rmsprop_##S(intptr_t pp, intptr_t gp, intptr_t sqp, intptr_t gap, intptr_t bp, int64_t n, \
                 double alpha_, double c_, double eps_, double neg_lr_, double momentum_,  \
                 double wd_, int flags, int nthreads) {                                  \
    T_##S *p = (T_##S *)pp, *sq = (T_##S *)sqp, *ga = (T_##S *)gap, *buf = (T_##S *)bp;  \
    const T_##S *g = (const T_##S *)gp;                                                  \
    const T_##S alpha = (T_##S)alpha_, c = (T_##S)c_, eps = (T_##S)eps_,                 \
                neg_lr = (T_##S)neg_lr_, mom = (T_##S)momentum_, wd = (T_##S)wd_;        \
    const int c_small = sx_lerp_small((double)c);                                        \
    if (!(flags & SX_OPT_CENTERED)) ga = sq;                                             \
    if (!(flags & SX_OPT_MOMENTUM)) buf = sq;                                            \
    SX_OPT_PARALLEL(n, nthreads,                                                         \
        switch (flags & 0xc9) {                                                          \
            SX_OPT_CASES4(SX_RMSPROP_CALL, S, 0, SX_OPT_MAXIMIZE, SX_OPT_CENTERED,       \
                          SX_OPT_MOMENTUM, SX_OPT_WD)                                    \
        })                                                                               \
}

/* ---- master weights: many 16-bit parameters in one call (nn/optim/optimizer.py) ----
 * G: the parameters' dtype (f16, bf16). table_: k pointer columns of n addresses (the 16-bit
 * parameters, then what the per-parameter kernel takes: the float32 masters, the 16-bit
 * gradients, the float32 state buffers, 0 where absent), n sizes and n + 1 chunk starts
 * (chunks of `chunk` elements are the threads' work items). Each element takes the float32
 * step of the per-parameter kernel above on its master, the gradient widened (exactly), and
 * the parameter becomes the new master rounded: bitwise the per-parameter path with casts. */
#define SX_MT_SETUP(K)                                                                   \
    const int64_t *tb = (const int64_t *)table_, *sizes = tb + (K) * n, *start = sizes + n; \
    const int64_t total = start[n];                                                      \
    const int nt = (total > 1 && nthreads > 1) ? nthreads : 1;
#define SX_MT_PTR(T, j) ((T *)(intptr_t)tb[(j) * n + t_])
#define SX_MT_LOOP(...)   /* ...: the body (commas and all) */                          \
    _Pragma("omp parallel for schedule(dynamic) num_threads(nt) if (nt > 1)")            \
    for (int64_t c_ = 0; c_ < total; c_++) {                                             \
        int64_t t_ = sx_chunk_owner(start, n, c_);                                       \
        int64_t lo = (c_ - start[t_]) * chunk, hi = lo + chunk;                          \
        if (hi > sizes[t_]) hi = sizes[t_];                                              \
        __VA_ARGS__                                                                      \
    }
/* The master-weight loop of every algorithm: the 16-bit parameters q (column 0), their
 * masters p (1) and gradients g (2), the algorithm's STATE pointers (columns 3...), then per
 * element r = STEP (the float32 step on p[i], gradient gi), p[i] = r, q[i] = r rounded.
 * STATE: declarations, ';' between them (commas only inside parentheses). */
#define SX_MT_MASTER_LOOP(G, STATE, ...)   /* ...: STEP */                               \
    SX_MT_LOOP({                                                                         \
        T_##G *q = SX_MT_PTR(T_##G, 0);                                                  \
        float *p = SX_MT_PTR(float, 1);                                                  \
        const T_##G *g = SX_MT_PTR(const T_##G, 2);                                      \
        STATE;                                                                           \
        for (int64_t i = lo; i < hi; i++) {                                              \
            const float gi = LD_##G(g[i]);                                               \
            float r = __VA_ARGS__;                                                       \
            p[i] = r;                                                                    \
            q[i] = ST_##G(r);                                                            \
        }                                                                                \
    })

#define SX_SGD_MASTER(G)                                                                 \
void sgd_master_##G(intptr_t table_, int64_t n, int64_t chunk, double neg_lr_,            \
                    double momentum_, double one_minus_damp_, double wd_, int flags,      \
                    int nthreads) {                                                      \
    SX_MT_SETUP(4)                                                                       \
    const float neg_lr = (float)neg_lr_, mom = (float)momentum_,                         \
                damp1 = (float)one_minus_damp_, wd = (float)wd_;                         \
    flags = sx_sgd_flags(flags);                                                         \
    SX_MT_MASTER_LOOP(G,                                                                 \
        float *buf = (flags & SX_OPT_MOMENTUM) ? SX_MT_PTR(float, 3) : p,                 \
        sx_sgd_step_f32(p[i], gi, &buf[i], neg_lr, mom, damp1, wd, flags))               \
}

#define SX_ADAM_MASTER(G)                                                                \
void adam_master_##G(intptr_t table_, int64_t n, int64_t chunk, double decay_, double wd_, \
                     double w1_, double beta2_, double c2_, double bc2s_, double eps_,    \
                     double neg_step_, int flags, int nthreads) {                        \
    SX_MT_SETUP(6)                                                                       \
    const float decay = (float)decay_, wd = (float)wd_, w1 = (float)w1_,                 \
                beta2 = (float)beta2_, c2 = (float)c2_, bc2s = (float)bc2s_,             \
                eps = (float)eps_, neg_step = (float)neg_step_;                          \
    const int w1_small = sx_lerp_small((double)w1);                                      \
    flags = sx_adam_flags(flags);                                                        \
    SX_MT_MASTER_LOOP(G,                                                                 \
        float *m = SX_MT_PTR(float, 3); float *v = SX_MT_PTR(float, 4);                  \
        float *vmax = (flags & SX_OPT_AMSGRAD) ? SX_MT_PTR(float, 5) : v,                \
        sx_adam_step_f32(p[i], gi, &m[i], &v[i], &vmax[i], decay, wd, w1, w1_small, beta2, \
                         c2, bc2s, eps, neg_step, flags))                                \
}

#define SX_RMSPROP_MASTER(G)                                                             \
void rmsprop_master_##G(intptr_t table_, int64_t n, int64_t chunk, double alpha_, double c_, \
                        double eps_, double neg_lr_, double momentum_, double wd_, int flags, \
                        int nthreads) {                                                  \
    SX_MT_SETUP(6)                                                                       \
    const float alpha = (float)alpha_, c = (float)c_, eps = (float)eps_,                 \
                neg_lr = (float)neg_lr_, mom = (float)momentum_, wd = (float)wd_;        \
    const int c_small = sx_lerp_small((double)c);                                        \
    SX_MT_MASTER_LOOP(G,                                                                 \
        float *sq = SX_MT_PTR(float, 3);                                                 \
        float *ga = (flags & SX_OPT_CENTERED) ? SX_MT_PTR(float, 4) : sq;                \
        float *buf = (flags & SX_OPT_MOMENTUM) ? SX_MT_PTR(float, 5) : sq,               \
        sx_rmsprop_step_f32(p[i], gi, &sq[i], &ga[i], &buf[i], alpha, c, c_small, eps,   \
                            neg_lr, mom, wd, flags))                                     \
}
