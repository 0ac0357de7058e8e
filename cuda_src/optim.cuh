/* Fused in-place optimizer updates on CUDA (mirror tensor/cpu/csrc/optim.h): one grid-stride
 * pass over a contiguous parameter reads p, its gradient and the state buffers and writes them
 * back. Same formulas, argument conventions (scalars as doubles combined on the host, rounded
 * to the element type here; optional buffers as null pointers; the flag word) and rounding as
 * the CPU's, which follow PyTorch's single-tensor updates op by op: `add(x, alpha=a)` is
 * fma(x, a, self), addcmul fma(value * t1, t2, self), lerp PyTorch's two-sided fma form.
 *
 * No other contraction: NVRTC contracts a * b + c into an FMA by default (--fmad=true), so
 * every product and sum goes through the round-to-nearest intrinsics (__fmul_rn, __dadd_rn,
 * ...), which the compiler never fuses; division and sqrt are the IEEE ones. Under the CPU
 * emulator the plain operators are used with contraction turned off, as the CPU file does.
 * So a step agrees with the CPU's bit for bit (float32 and float64).
 *
 * The flags are uniform over the launch, so testing them per element costs only a predicted
 * branch (the CPU specialises its loops on them for vectorisation). */
#ifndef STRIDEX_OPTIM_CUH
#define STRIDEX_OPTIM_CUH
#include "common.cuh"

#define SO_BLOCK 256

#define SX_OPT_MAXIMIZE 1
#define SX_OPT_NESTEROV 2
#define SX_OPT_FIRST 4      /* SGD: the momentum buffer starts as the first gradient */
#define SX_OPT_MOMENTUM 8
#define SX_OPT_AMSGRAD 16
#define SX_OPT_DECOUPLED 32 /* AdamW: p *= 1 - lr * wd before the update */
#define SX_OPT_CENTERED 64
#define SX_OPT_WD 128

#ifdef SX_EMULATE
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
SX_DEV float so_mul(float a, float b) { return a * b; }
SX_DEV double so_mul(double a, double b) { return a * b; }
SX_DEV float so_add(float a, float b) { return a + b; }
SX_DEV double so_add(double a, double b) { return a + b; }
SX_DEV float so_sub(float a, float b) { return a - b; }
SX_DEV double so_sub(double a, double b) { return a - b; }
SX_DEV float so_div(float a, float b) { return a / b; }
SX_DEV double so_div(double a, double b) { return a / b; }
SX_DEV float so_sqrt(float a) { return sqrtf(a); }
SX_DEV double so_sqrt(double a) { return sqrt(a); }
#else
SX_DEV float so_mul(float a, float b) { return __fmul_rn(a, b); }
SX_DEV double so_mul(double a, double b) { return __dmul_rn(a, b); }
SX_DEV float so_add(float a, float b) { return __fadd_rn(a, b); }
SX_DEV double so_add(double a, double b) { return __dadd_rn(a, b); }
SX_DEV float so_sub(float a, float b) { return __fsub_rn(a, b); }
SX_DEV double so_sub(double a, double b) { return __dsub_rn(a, b); }
SX_DEV float so_div(float a, float b) { return __fdiv_rn(a, b); }
SX_DEV double so_div(double a, double b) { return __ddiv_rn(a, b); }
SX_DEV float so_sqrt(float a) { return __fsqrt_rn(a); }
SX_DEV double so_sqrt(double a) { return __dsqrt_rn(a); }
#endif
SX_DEV float so_fma(float a, float b, float c) { return fmaf(a, b, c); }
SX_DEV double so_fma(double a, double b, double c) { return fma(a, b, c); }

/* PyTorch's lerp: start + w * (end - start) for |w| < 0.5, else end - (1 - w) * (end - start) */
template <class T>
SX_DEV T so_lerp(T a, T b, T w, int small) {
    return small ? so_fma(w, so_sub(b, a), a) : so_fma(so_sub(w, (T)1), so_sub(b, a), b);
}

/* d = maximize ? -g : g;  d += wd * p  (L2 penalty folded into the gradient) */
template <class T>
SX_DEV T so_grad(T g, T p, T wd, int F) {
    T d = (F & SX_OPT_MAXIMIZE) ? -g : g;
    return (F & SX_OPT_WD) ? so_fma(p, wd, d) : d;
}

#define SO_LOOP(i, n)                                                                      \
    const int64_t step_ = (int64_t)blockDim.x * gridDim.x;                                 \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += step_)

/* ---- SGD (momentum, dampening, Nesterov); buf may be null without SX_OPT_MOMENTUM ---- */
template <class T>
SX_DEV void so_sgd(T *p, const T *g, T *buf, int64_t n, double neg_lr_, double momentum_,
                   double one_minus_damp_, double wd_, int F) {
    const T neg_lr = (T)neg_lr_, mom = (T)momentum_, damp1 = (T)one_minus_damp_, wd = (T)wd_;
    if (!(F & SX_OPT_MOMENTUM)) { F &= ~(SX_OPT_FIRST | SX_OPT_NESTEROV); buf = p; }
    SO_LOOP(i, n) {
        T d = so_grad(g[i], p[i], wd, F);
        if (F & SX_OPT_MOMENTUM) {
            T b = (F & SX_OPT_FIRST) ? d : so_fma(d, damp1, so_mul(buf[i], mom));
            buf[i] = b;
            d = (F & SX_OPT_NESTEROV) ? so_fma(b, mom, d) : b;
        }
        p[i] = so_fma(d, neg_lr, p[i]);
    }
}

/* ---- Adam / AdamW. w1 = 1 - beta1, c2 = 1 - beta2, bc2s = sqrt(1 - beta2^t),
 * neg_step = -lr / (1 - beta1^t), decay = 1 - lr * wd (AdamW); vmax may be null ---- */
template <class T>
SX_DEV void so_adam(T *p, const T *g, T *m, T *v, T *vmax, int64_t n, double decay_, double wd_,
                    double w1_, double beta2_, double c2_, double bc2s_, double eps_,
                    double neg_step_, int F) {
    const T decay = (T)decay_, wd = (T)wd_, w1 = (T)w1_, beta2 = (T)beta2_, c2 = (T)c2_,
            bc2s = (T)bc2s_, eps = (T)eps_, neg_step = (T)neg_step_;
    const int w1_small = fabs((double)w1) < 0.5;
    /* decoupled decay replaces the L2 term; without decay there is nothing to decouple */
    if (!(F & SX_OPT_WD)) F &= ~SX_OPT_DECOUPLED;
    else if (F & SX_OPT_DECOUPLED) F &= ~SX_OPT_WD;
    if (!(F & SX_OPT_AMSGRAD)) vmax = v;
    SO_LOOP(i, n) {
        T pi = p[i];
        if (F & SX_OPT_DECOUPLED) pi = so_mul(pi, decay);
        T d = so_grad(g[i], pi, wd, F);
        T mi = so_lerp(m[i], d, w1, w1_small);
        T vi = so_fma(so_mul(c2, d), d, so_mul(v[i], beta2));
        m[i] = mi; v[i] = vi;
        if (F & SX_OPT_AMSGRAD) {
            T mx = vmax[i];
            mx = (vi > mx || vi != vi) ? vi : mx;
            vmax[i] = mx; vi = mx;
        }
        T denom = so_add(so_div(so_sqrt(vi), bc2s), eps);
        p[i] = so_add(pi, so_div(so_mul(neg_step, mi), denom));
    }
}

/* ---- RMSprop. c = 1 - alpha (also the grad_avg lerp weight); ga, buf may be null ---- */
template <class T>
SX_DEV void so_rmsprop(T *p, const T *g, T *sq, T *ga, T *buf, int64_t n, double alpha_,
                       double c_, double eps_, double neg_lr_, double momentum_, double wd_,
                       int F) {
    const T alpha = (T)alpha_, c = (T)c_, eps = (T)eps_, neg_lr = (T)neg_lr_,
            mom = (T)momentum_, wd = (T)wd_;
    const int c_small = fabs((double)c) < 0.5;
    if (!(F & SX_OPT_CENTERED)) ga = sq;
    if (!(F & SX_OPT_MOMENTUM)) buf = sq;
    SO_LOOP(i, n) {
        T d = so_grad(g[i], p[i], wd, F);
        T s = so_fma(so_mul(c, d), d, so_mul(sq[i], alpha));
        sq[i] = s;
        T avg;
        if (F & SX_OPT_CENTERED) {
            T a = so_lerp(ga[i], d, c, c_small);
            ga[i] = a;
            avg = so_sqrt(so_fma(-a, a, s));
        } else {
            avg = so_sqrt(s);
        }
        avg = so_add(avg, eps);
        if (F & SX_OPT_MOMENTUM) {
            T b = so_add(so_mul(buf[i], mom), so_div(d, avg));
            buf[i] = b;
            p[i] = so_fma(b, neg_lr, p[i]);
        } else {
            p[i] = so_add(p[i], so_div(so_mul(neg_lr, d), avg));
        }
    }
}

#endif
