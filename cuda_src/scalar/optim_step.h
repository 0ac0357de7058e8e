/* The per-element updates of the fused optimizers (SGD, Adam/AdamW, RMSprop) and their flag
 * word, shared by the CPU's loops (tensor/cpu/csrc/optim.h) and the CUDA kernels
 * (cuda_src/optim.cuh), so a step agrees on both devices bit for bit (float32 and float64).
 *
 * The arithmetic follows PyTorch's single-tensor updates op by op, in the parameter's
 * precision: `add(x, alpha=a)` is fma(x, a, self), addcmul fma(value * t1, t2, self), lerp
 * PyTorch's two-sided fma form. No other contraction: every other product and sum must round
 * on its own. C: plain operators, and the includer turns fp-contract off before including
 * this file. CUDA: NVRTC would contract a * b + c (--fmad=true), so the operations go
 * through arch.cuh's sx_rn_* wrappers (round-to-nearest intrinsics the compiler never fuses).
 *
 * Scalars arrive already rounded to the element type. `F` is the flag word below; nn/optim.py
 * builds it (tensor.kernel_cache.header_defines reads these numbers). Each step takes the
 * parameter's value and returns its new value; the state buffers are read and written
 * through pointers (left alone when their flag is off). */
#ifndef STRIDEX_SCALAR_OPTIM_STEP_H
#define STRIDEX_SCALAR_OPTIM_STEP_H
#include "scalar/types.h"

#define SX_OPT_MAXIMIZE 1
#define SX_OPT_NESTEROV 2
#define SX_OPT_FIRST 4      /* SGD: the momentum buffer starts as the first gradient */
#define SX_OPT_MOMENTUM 8
#define SX_OPT_AMSGRAD 16
#define SX_OPT_DECOUPLED 32 /* AdamW: p *= 1 - lr * wd before the update */
#define SX_OPT_CENTERED 64
#define SX_OPT_WD 128

#ifdef __cplusplus
#define SX_OPT_MUL(a, b) sx_rn_mul(a, b)
#define SX_OPT_ADD(a, b) sx_rn_add(a, b)
#define SX_OPT_SUB(a, b) sx_rn_sub(a, b)
#define SX_OPT_DIV(a, b) sx_rn_div(a, b)
#define SX_OPT_SQRT(S, a) sx_rn_sqrt(a)
#else
#define SX_OPT_MUL(a, b) ((a) * (b))
#define SX_OPT_ADD(a, b) ((a) + (b))
#define SX_OPT_SUB(a, b) ((a) - (b))
#define SX_OPT_DIV(a, b) ((a) / (b))
#define SX_OPT_SQRT(S, a) SX_OPT_SQRT_##S(a)
#define SX_OPT_SQRT_f32 sqrtf
#define SX_OPT_SQRT_f64 sqrt
#endif
#define SX_OPT_FMA(S, a, b, c) SX_OPT_FMA_##S(a, b, c)
#define SX_OPT_FMA_f32 fmaf
#define SX_OPT_FMA_f64 fma

/* The flag words' normal forms: a flag that does not apply is cleared, so the loops can
 * specialise on fewer combinations. */
SX_SCALAR_FN int sx_sgd_flags(int F) {
    return (F & SX_OPT_MOMENTUM) ? F : (F & ~(SX_OPT_FIRST | SX_OPT_NESTEROV));
}
SX_SCALAR_FN int sx_adam_flags(int F) {
    /* decoupled decay replaces the L2 term; without decay there is nothing to decouple */
    if (!(F & SX_OPT_WD)) return F & ~SX_OPT_DECOUPLED;
    return (F & SX_OPT_DECOUPLED) ? (F & ~SX_OPT_WD) : F;
}
/* Which of PyTorch's two lerp forms a weight takes (the same for every element). */
SX_SCALAR_FN int sx_lerp_small(double w) { return fabs(w) < 0.5; }

#define SX_OPT_STEPS(S, T)                                                               \
/* PyTorch's lerp: a + w * (b - a) for |w| < 0.5, else b - (1 - w) * (b - a) */          \
SX_SCALAR_FN T SX_TNAME(sx_opt_lerp, S)(T a, T b, T w, int small) {                      \
    return small ? SX_OPT_FMA(S, w, SX_OPT_SUB(b, a), a)                                 \
                 : SX_OPT_FMA(S, SX_OPT_SUB(w, (T)1), SX_OPT_SUB(b, a), b);              \
}                                                                                        \
/* d = maximize ? -g : g;  d += wd * p  (L2 penalty folded into the gradient) */         \
SX_SCALAR_FN T SX_TNAME(sx_opt_grad, S)(T g, T p, T wd, int F) {                         \
    T d = (F & SX_OPT_MAXIMIZE) ? -g : g;                                                \
    return (F & SX_OPT_WD) ? SX_OPT_FMA(S, p, wd, d) : d;                                \
}                                                                                        \
/* SGD (momentum, dampening, Nesterov); damp1 = 1 - dampening */                        \
SX_SCALAR_FN T SX_TNAME(sx_sgd_step, S)(T p, T g, T *buf, T neg_lr, T mom, T damp1,      \
                                        T wd, int F) {                                   \
    T d = SX_TNAME(sx_opt_grad, S)(g, p, wd, F);                                         \
    if (F & SX_OPT_MOMENTUM) {                                                           \
        T b = (F & SX_OPT_FIRST) ? d : SX_OPT_FMA(S, d, damp1, SX_OPT_MUL(*buf, mom));   \
        *buf = b;                                                                        \
        d = (F & SX_OPT_NESTEROV) ? SX_OPT_FMA(S, b, mom, d) : b;                        \
    }                                                                                    \
    return SX_OPT_FMA(S, d, neg_lr, p);                                                  \
}                                                                                        \
/* Adam / AdamW. w1 = 1 - beta1, c2 = 1 - beta2, bc2s = sqrt(1 - beta2^t),               \
 * neg_step = -lr / (1 - beta1^t), decay = 1 - lr * wd (AdamW) */                        \
SX_SCALAR_FN T SX_TNAME(sx_adam_step, S)(T p, T g, T *m, T *v, T *vmax, T decay, T wd,   \
                                         T w1, int w1_small, T beta2, T c2, T bc2s,      \
                                         T eps, T neg_step, int F) {                     \
    if (F & SX_OPT_DECOUPLED) p = SX_OPT_MUL(p, decay);                                  \
    T d = SX_TNAME(sx_opt_grad, S)(g, p, wd, F);                                         \
    T mi = SX_TNAME(sx_opt_lerp, S)(*m, d, w1, w1_small);                                \
    T vi = SX_OPT_FMA(S, SX_OPT_MUL(c2, d), d, SX_OPT_MUL(*v, beta2));                   \
    *m = mi; *v = vi;                                                                    \
    if (F & SX_OPT_AMSGRAD) {                                                            \
        T mx = *vmax;                                                                    \
        mx = (vi > mx || vi != vi) ? vi : mx;                                            \
        *vmax = mx; vi = mx;                                                             \
    }                                                                                    \
    T denom = SX_OPT_ADD(SX_OPT_DIV(SX_OPT_SQRT(S, vi), bc2s), eps);                     \
    return SX_OPT_ADD(p, SX_OPT_DIV(SX_OPT_MUL(neg_step, mi), denom));                   \
}                                                                                        \
/* RMSprop. c = 1 - alpha (also the grad_avg lerp weight) */                             \
SX_SCALAR_FN T SX_TNAME(sx_rmsprop_step, S)(T p, T g, T *sq, T *ga, T *buf, T alpha, T c, \
                                            int c_small, T eps, T neg_lr, T mom, T wd,   \
                                            int F) {                                     \
    T d = SX_TNAME(sx_opt_grad, S)(g, p, wd, F);                                         \
    T s = SX_OPT_FMA(S, SX_OPT_MUL(c, d), d, SX_OPT_MUL(*sq, alpha));                    \
    *sq = s;                                                                             \
    T avg;                                                                               \
    if (F & SX_OPT_CENTERED) {                                                           \
        T a = SX_TNAME(sx_opt_lerp, S)(*ga, d, c, c_small);                              \
        *ga = a;                                                                         \
        avg = SX_OPT_SQRT(S, SX_OPT_FMA(S, -a, a, s));                                   \
    } else {                                                                             \
        avg = SX_OPT_SQRT(S, s);                                                         \
    }                                                                                    \
    avg = SX_OPT_ADD(avg, eps);                                                          \
    if (F & SX_OPT_MOMENTUM) {                                                           \
        T b = SX_OPT_ADD(SX_OPT_MUL(*buf, mom), SX_OPT_DIV(d, avg));                     \
        *buf = b;                                                                        \
        return SX_OPT_FMA(S, b, neg_lr, p);                                              \
    }                                                                                    \
    return SX_OPT_ADD(p, SX_OPT_DIV(SX_OPT_MUL(neg_lr, d), avg));                        \
}
SX_OPT_STEPS(f32, float)
SX_OPT_STEPS(f64, double)
#undef SX_OPT_STEPS

#endif
